"""A lean session's memory decisions (issue 43), Qt-free: what to drop, when, and what the memos forget.

:class:`LeanBook` reads the session's :class:`~lmdk_gui.core.engine.state.SessionState` (its series, seed and
visible schemes) and its :class:`~lmdk_gui.core.engine.memory.MemoryPolicy`, and is handed the preview dicts
(``preview`` and ``preview_plain``, one object when dummies are off). It answers, at the moments the session
asks:

* a landmark edit (:meth:`LeanBook.on_edit`): the preview without the landmark schemes' denoised values and
  without the releases of ``REMADE_BY_EDIT`` (their summaries and errors stay), dropped before the new preview
  is made, not when it arrives;
* a preview job (:meth:`LeanBook.before_preview`, :meth:`LeanBook.after_preview`): what it forgets in the memos
  first, once the stages it waits for have stopped, and the noise it lets go of after; both run on its thread;
* the scored preview (:meth:`LeanBook.drop_hidden`): the preview without the hidden schemes' releases;
* the denoise stage: the schemes whose denoised values it keeps (:meth:`LeanBook.keep`), whether at float32
  (:attr:`LeanBook.lean`), and whose raw values it keeps at float32 (:meth:`LeanBook.compact_raw`);
* the later stages and an export: the preview's unit noise they run without (:meth:`LeanBook.stage_noise`,
  :meth:`LeanBook.let_go_of_preview_noise`).

A full session (the policy not lean for the series) drops nothing. The book never empties a release: it drops
its references (the summary is another object), and the session tells the views to drop theirs. Which jobs run
is the session's to say (its runners are Qt): the book is told whether the preview is scored and the jobs idle.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace

from ..kernel.noise import UnitNoise
from ..kernel.schemes import REMADE_BY_EDIT
from ..kernel.settings import ALL_SCHEMES, LANDMARK_SCHEMES
from .memory import MemoryPolicy
from .preview import (
    DenoiseMemo,
    NoiseCache,
    SchemePreview,
    Snapshot,
    drop_releases,
    forget_releases,
    forget_replaced,
)
from .state import SessionState

Previews = dict[str, SchemePreview]


class LeanBook:
    """The memory bookkeeping of one session: ``state`` is the session's state, ``noise`` and ``denoise_memo``
    the caches its preview and denoise jobs use (the book makes them forget, on the jobs' threads or while no
    job runs), ``policy`` whether the series is kept lean."""

    def __init__(self, state: SessionState, noise: NoiseCache, denoise_memo: DenoiseMemo,
                 policy: MemoryPolicy | None = None) -> None:
        self.state = state
        self.policy = policy if policy is not None else MemoryPolicy()
        self._noise = noise
        self._denoise_memo = denoise_memo
        #: the schemes whose denoised values an edit let go of since the last preview
        self.stale_denoised: frozenset[str] = frozenset()
        #: the schemes whose raw values an edit let go of since the last preview
        self.stale_values: frozenset[str] = frozenset()
        #: the schemes shown again after their values were let go of, since the last preview
        self.refill: frozenset[str] = frozenset()

    @property
    def lean(self) -> bool:
        """The policy keeps the state's series lean: a hidden scheme's release and denoised values, and those a
        landmark edit replaces, are dropped (views draw what they drew until the new ones arrive)."""
        series = self.state.series
        return series is not None and self.policy.resolve(series.n)

    def on_edit(self, preview: Previews, plain: Previews) -> tuple[Previews, Previews] | None:
        """What a landmark edit drops at once (None: nothing, the session is not lean): ``(preview, plain)``
        without the landmark schemes' denoised values and the releases of ``REMADE_BY_EDIT`` (all their budgets
        change; Skip's release is the next one's patch source). At 10^7 events they were ≈ 0.6 GB of the click's
        peak, held while the new releases were made. Their errors and release summaries stay; the next preview
        job forgets them in the memos (:meth:`before_preview`)."""
        if not self.lean:
            return None

        def strip(pv: Previews) -> Previews:
            pv = {k: replace(p, denoised=None) if k in LANDMARK_SCHEMES and p.denoised is not None else p
                  for k, p in pv.items()}
            return drop_releases(pv, REMADE_BY_EDIT, None, None, "")
        same = preview is plain
        preview = strip(preview)
        plain = preview if same else strip(plain)
        self.stale_denoised = frozenset(LANDMARK_SCHEMES)
        self.stale_values = REMADE_BY_EDIT
        return preview, plain

    def shown_again(self, shown: Collection[str], preview: Previews) -> frozenset[str]:
        """Of the schemes just ``shown``, those whose releases were dropped while hidden: the next preview makes
        them again (they are remembered until it arrives)."""
        refill = frozenset(x for x in shown if (p := preview.get(x)) is not None and not p.whole)
        self.refill |= refill
        return refill

    def preview_arrived(self) -> None:
        """A new preview is in: what was let go of before it is made again."""
        self.stale_denoised = self.stale_values = self.refill = frozenset()

    def before_preview(self, snap: Snapshot) -> Callable[[], None] | None:
        """What a lean preview job of ``snap`` does first, on its thread once the stages it waits for have
        stopped (they use the memos): forget the denoised values an edit let go of, and the releases let go of
        (:meth:`drop_hidden`, :meth:`on_edit`) of the schemes shown again or remade. None: nothing to forget."""
        denoised, values = self.stale_denoised | self.refill, self.stale_values | self.refill
        if not denoised and not values:
            return None
        denoise_memo, noise = self._denoise_memo, self._noise

        def before() -> None:
            denoise_memo.forget_schemes(denoised)
            forget_releases(noise.existing_memo(snap.series, snap.seed), values)
        return before

    def after_preview(self, snap: Snapshot) -> Callable[[], None]:
        """What a lean preview job of ``snap`` does last, on its thread: let go of Adaptive's uniforms (80 MB at
        10^7 events), drawn again by the next preview (≈ 50 ms, beside the other schemes) rather than held while
        the average and the export run."""
        noise = self._noise
        return lambda: noise.get(snap.series, snap.seed).forget("sample")

    def drop_hidden(self, preview: Previews, plain: Previews, *, scored: bool,
                    idle: bool) -> tuple[Previews, Previews] | None:
        """``(preview, plain)`` without the releases of the hidden schemes once they are ``scored`` (the
        preview is current and its denoise stage in, or there is none) and no preview or denoise job runs
        (``idle``: they use the memos this updates); None when a full session, or not yet. 80 MB of values each
        at 10^7 events, Event's and User's by default. Their errors and release summaries stay, and a click
        reuses Event's and User's as they are (their budgets do not depend on the landmarks); showing one makes
        it again (:meth:`shown_again`). The preview memo also forgets its float64 copies of the releases the
        stage kept at float32 (:meth:`compact_raw`)."""
        series = self.state.series
        if not self.lean or series is None or not scored or not idle:
            return None
        hidden = [x for x in ALL_SCHEMES if x not in self.state.visible_schemes]
        memo = self._noise.existing_memo(series, self.state.seed)
        with_dummies = memo.get("with dummies") if memo is not None else None
        same = preview is plain
        plain = drop_releases(plain, hidden, memo, self._denoise_memo, "plain")
        preview = plain if same else drop_releases(preview, hidden, with_dummies, self._denoise_memo, "dummies")
        forget_replaced(memo, plain, REMADE_BY_EDIT)  # (the stage's compact_raw)
        forget_replaced(with_dummies, preview, REMADE_BY_EDIT)
        return preview, plain

    def keep(self) -> frozenset[str] | None:
        """The schemes whose denoised values the denoise stage keeps (None: all)."""
        return frozenset(self.state.visible_schemes) if self.lean else None

    def compact_raw(self) -> frozenset[str]:
        """The schemes whose raw values the denoise stage keeps at float32 once scored (lean: only drawn until
        the next edit replaces them; Skip's, Event's and User's are the memo's, reused as they are)."""
        return REMADE_BY_EDIT if self.lean else frozenset()

    def stage_noise(self, snap: Snapshot) -> UnitNoise | None:
        """The preview's unit noise a later stage of ``snap`` lets go of when it starts (None: keep it; a lean
        preview job waits for the stage to stop, nothing else uses that noise meanwhile)."""
        return self._noise.existing(snap.series, snap.seed) if self.lean else None

    def let_go_of_preview_noise(self, *, idle: bool) -> None:
        """A lean session lets go of its preview's unit noise while no preview job runs (``idle``; an export
        draws its own: 80 MB at 10^7 events); the next preview draws it again."""
        series = self.state.series
        noise = self._noise.existing(series, self.state.seed) if series is not None and self.lean else None
        if noise is not None and idle:
            noise.forget_all()
