"""The session model: the single source of truth of the window (DESIGN §10).

Its state is :attr:`Session.state`, a Qt-free evented :class:`~lmdk_gui.core.engine.state.SessionState`: the setters
assign its fields, and the session answers each gesture's field events with its Qt signals and one preview.
Views never compute: they call one method here, and listen to the signals. Every state change schedules a
recomputation of the preview on a background thread (coalesced: a burst of edits yields one computation of
the newest state), and ``previewChanged`` fires when the preview *for the current state* is ready. The
slower MAE averaged over R runs is computed after it, on its own thread, and announced by
``metricsChanged``.

Dummy landmarks (issue 6, thesis §4.2). When they are on (:meth:`Session.set_dummies_enabled`), the preview
worker draws a selection ``L' ⊃ L`` with :func:`~lmdk_gui.core.kernel.dummies.select_for_release`, seeded from the
session seed and a *draw number* (:meth:`Session.redraw_dummies` changes only the latter), and then

* ``preview[scheme]`` is the release on ``L'`` with ``ε − ε_sel`` (its ``guarantee`` was checked against
  exactly those), so the automation contract ``preview[scheme].budgets / .values`` keeps meaning "what
  the export would publish";
* ``preview_plain[scheme]`` is the release on L with ε (the same object as ``preview`` when dummies are off);
* ``dummy_selection`` is the :class:`~lmdk_gui.core.kernel.dummies.DummySelection` (private: it holds L');
* ``average`` / ``average_plain`` are the MAE over R runs with / without dummies (each run a new selection
  and new noise), ``average_dummy_size`` the mean |L'| over those runs.

A generator that refuses (Optimal beyond its limit) is not an error of the preview: ``dummy_error`` holds
its message, ``dummiesFailed`` announces it, and the preview falls back to the releases without dummies.

Denoising (issue 12, ``settings.denoise``, :meth:`Session.set_denoise`): ``preview[scheme].values`` stays the
raw release; ``preview[scheme].denoised_values`` is its post-processing — what the export writes by default —
with ``mae_denoised``, and ``average[scheme].mean_denoised`` over the runs. It is a later stage (issue 15):
``previewChanged`` announces the raw releases (``denoised_values`` None), then
:func:`~lmdk_gui.core.engine.preview.denoise_preview` runs on its own thread and ``denoisedChanged`` announces
``preview``/``preview_plain`` replaced by the same releases with their denoised values
(:meth:`Session.is_denoised_current`). Up to ``DENOISE_INLINE_MAX`` events, once numba is imported, the
preview job runs that same function itself: ``previewChanged`` then already carries the denoised values and
``denoisedChanged`` follows at once. Denoise off: no stage, ``denoised_values`` stays None.

Memory (issue 43): :attr:`Session.memory`, a :class:`~lmdk_gui.core.engine.memory.MemoryPolicy` (``auto``,
``lean`` or ``full``; the window sets it from the user's preference), says whether the session keeps *lean* for
its series (:attr:`Session.lean`); the session never decides that by itself. What a lean session drops, and what
its jobs forget in the memos, is the Qt-free :class:`~lmdk_gui.core.engine.lean.LeanBook`'s call
(:attr:`Session.lean_book`): the session asks it at a landmark edit, a preview job's start, a scored preview, a
denoise stage and an export, runs the callables it returns on the jobs' threads, and emits ``valuesLetGo`` when
it let something go. A lean session: once scored, a hidden scheme's preview holds its release's summary
(:class:`~lmdk_gui.core.engine.release.ReleaseSummary`: check, landmarks, mean and largest budget) and its
errors, not the release (``SchemePreview.whole`` False, ``denoised`` None), until it is shown again, which makes
it anew; the shown rows' denoised values, and once denoised the raw values of the releases a landmark edit makes
anew whole, are kept at float32 to be drawn (``core.preview.compact_values``); a landmark edit drops at once the
landmark schemes' denoised values and the releases of ``REMADE_BY_EDIT`` (:meth:`.LeanBook.on_edit`); the
preview's unit noise is held only while a preview computes. A release is never emptied: the session drops its
reference to it, and ``valuesLetGo`` tells the views to drop theirs (they keep what they drew).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal, SignalInstance
from PySide6.QtGui import QUndoCommand, QUndoStack

from ... import runtime
from ...core.analysis.metrics import RunStats
from ...core.data.periods import PeriodView, parse_resolution, period_settings, to_periods
from ...core.data.series import Series
from ...core.engine.lean import LeanBook
from ...core.engine.memory import MemoryPolicy
from ...core.engine.preview import (
    INTERPRET_MAX,
    AverageResult,
    DenoiseMemo,
    NoiseCache,
    OptionsCache,
    PreviewResult,
    SchemePreview,
    Snapshot,
    compute_average,
    compute_preview,
    denoise_preview,
    scheme_previews,
)
from ...core.engine.release import normalize_landmarks
from ...core.engine.state import SessionState, frozen_rows, signal_group
from ...core.kernel.dummies import DummyOptions, DummySelection, DummySettings
from ...core.kernel.noise import UnitNoise
from ...core.kernel.settings import ALL_SCHEMES, PrivacySettings
from ...runtime.priority import BACKGROUND
from . import passes
from .runner import LatestOnlyRunner

# The preview and average computations live in the core (shared with ``lmdk compare``); these names stay
# importable from here.
_NoiseCache = NoiseCache
_OptionsCache = OptionsCache
_scheme_previews = scheme_previews


#: up to this many events the preview job denoises too (same ``denoise_preview``, a few ms); beyond it the
#: denoising is a later stage on its own thread, so that the raw points are drawn first
DENOISE_INLINE_MAX = 20_000

#: the state's fields (core/engine/state.py) whose change needs no new preview by itself, and those that make the
#: session's settings unsaved (the landmarks do through the undo stack)
_UNSCHEDULED = frozenset({"landmark_rules", "visible_schemes"})
_DUMMY_FIELDS = frozenset({"dummies_enabled", "dummy_settings", "dummy_draw"})
_DIRTYING = frozenset({"settings", "seed", "resolution"}) | _DUMMY_FIELDS

#: how long the R-run average waits after a preview arrived (edits in between restart the wait)
AVERAGE_DELAY_MS = 150


def _after_stopped(stages: tuple[LatestOnlyRunner, ...], before: Callable[[], None] | None,
                   after: Callable[[], None] | None, fn: Callable, *args, should_cancel, **kwargs):
    """``fn(*args, **kwargs)`` once the cancelled jobs of ``stages`` have returned, between ``before()`` (which
    may touch what they used) and ``after()``; None if cancelled first."""
    for runner in stages:
        runner.wait_stopped(should_cancel)
    if should_cancel():
        return None
    if before is not None:
        before()
    try:
        return fn(*args, should_cancel=should_cancel, **kwargs)
    finally:
        if after is not None:
            after()


def _without_preview_noise(noise: UnitNoise, fn: Callable, *args, should_cancel, **kwargs):
    """``fn(*args, **kwargs)`` with the preview's unit noise let go: the later stages do not read it (the R-run
    average draws its own), and at 10^7 events its Laplace draws were 80 MB of their peaks. The next preview
    draws them again (the same draws; ≈ 0.2 s of a click at 10^7 events)."""
    noise.forget_all()
    return fn(*args, should_cancel=should_cancel, **kwargs)


class _LandmarkEdit(QUndoCommand):
    """One landmark gesture, kept as the rows it adds and removes rather than two copies of the whole set: at
    10^6 events with 200,000 landmarks every click kept another 1.6 MB for undo (issue 15's RSS growth over
    clicks). The session's landmarks change only through this stack (a new series clears it), so undoing
    always starts from the set this command produced. It holds its session weakly: a strong reference
    from a command the stack owns in C++ back to the session made a cycle whose collection crashed."""

    def __init__(self, session: Session, after: np.ndarray, added: np.ndarray, removed: np.ndarray,
                 text: str, rules: tuple[frozenset[str], frozenset[str]]) -> None:
        super().__init__(text)
        self._session_ref = weakref.ref(session)
        self._added = added
        self._removed = removed
        self._first: np.ndarray | None = after  # the push's redo applies it as it is
        self._rules_before, self._rules_after = rules

    def redo(self) -> None:
        session = self._session_ref()
        after, self._first = self._first, None
        if session is None:
            return
        if after is None:
            after = apply_rows(session.landmarks, self._added, self._removed)
        session._apply_landmarks(after, self._rules_after)

    def undo(self) -> None:
        session = self._session_ref()
        if session is not None:
            before = apply_rows(session.landmarks, self._removed, self._added)
            session._apply_landmarks(before, self._rules_before)


def _own(lm: np.ndarray, given) -> np.ndarray:
    """``lm`` normalised from a caller's ``given``: a copy when it is the caller's own array (which
    :func:`~lmdk_gui.core.engine.state.frozen_rows` must not make read-only, nor the caller change under a
    preview)."""
    return lm.copy() if lm is given else lm


def apply_rows(current: np.ndarray, add: np.ndarray, remove: np.ndarray) -> np.ndarray:
    """``current`` (sorted, distinct) with the rows ``remove`` (all in it) taken out and ``add`` (sorted, none
    in it) put in: O(m + k log m), a click's undo costs one copy, not a sort of the whole set."""
    if remove.size:
        current = np.delete(current, np.searchsorted(current, remove))
    if add.size:
        current = np.insert(current, np.searchsorted(current, add), add)
    return current


class Session(QObject):
    seriesChanged = Signal()
    landmarksChanged = Signal()
    settingsChanged = Signal()
    previewChanged = Signal()
    metricsChanged = Signal()
    previewFailed = Signal(str)
    dirtyChanged = Signal(bool)
    dummiesChanged = Signal()  # the dummy settings (on/off, generator, share, utility, draw) changed
    dummySelectionChanged = Signal()  # a new selection (or error) arrived; emitted just before previewChanged
    dummiesFailed = Signal(str)  # the generator refused (e.g. Optimal beyond its limit)
    postChanged = Signal()  # the later stage (``post_stage``) of the current preview arrived
    denoisedChanged = Signal()  # ``preview``/``preview_plain`` now carry the current state's denoised values
    # a lean session dropped releases or denoised values from ``preview`` (before the preview replacing them is
    # started): views drop their references to them too, keeping what they drew
    valuesLetGo = Signal()
    resolutionChanged = Signal()  # the release resolution changed: the views show ``release_series``

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: the single source of truth of what is released and shown (core/engine/state.py): the setters below
        #: assign its fields, and the session answers its events (:meth:`_on_state`)
        self.state = SessionState()
        # field -> its value before the gesture under way (:meth:`_gesture`), until the session answers it
        self._pending: dict[str, object] = {}
        self._gesture_depth = 0
        self._undo_step = False  # the landmarks being assigned come from an undo step (_apply_landmarks)
        # A coarser release resolution (DESIGN §12, ``state.resolution``): the schemes, the preview, the metrics
        # and the export then work on the periods (release_series); the landmarks stay rows of the events, and
        # each period holding one is a landmark period.
        self._periods: tuple[Series, tuple[str, str], tuple | None, PeriodView] | None = None
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self._settings_dirty = False
        self.preview: dict[str, SchemePreview] = {}
        self.preview_plain: dict[str, SchemePreview] = {}
        self.average: dict[str, RunStats] | None = None
        self.average_plain: dict[str, RunStats] | None = None
        self.average_dummy_size: float | None = None
        self.dummy_selection: DummySelection | None = None
        self.dummy_error = ""
        self._dummy_options: DummyOptions | None = None
        self._preview_generation = -1
        self._noise_cache = NoiseCache()
        self._options_cache = OptionsCache()
        self._preview_runner = LatestOnlyRunner("preview", self)
        self._preview_runner.finished.connect(self._on_preview)
        self._preview_runner.failed.connect(self._on_preview_failed)
        self._average_runner = LatestOnlyRunner("average", self, nice=BACKGROUND)
        self._average_runner.finished.connect(self._on_average)
        # The R-run average starts once the window has drawn the preview (with Denoise on, its denoised
        # stage too) and the edits pause: run at once it competed with the repaint for the GIL (a 10^5 click
        # took 0.16 s instead of 0.06 s), with the denoising and with the next click's preview.
        self._average_job: tuple[Snapshot, DummyOptions | None] | None = None
        self._average_timer = QTimer(self)
        self._average_timer.setSingleShot(True)
        self._average_timer.setInterval(AVERAGE_DELAY_MS)
        self._average_timer.timeout.connect(self._submit_average)
        # A later stage of the preview (e.g. denoising each release, issue 12 part 2): the raw releases are
        # announced by previewChanged first and drawn at once; ``post_stage(snapshot, result, *,
        # should_cancel)`` then runs on its own thread and its result lands in ``post`` with postChanged.
        # None = no later stage.
        self.post_stage: Callable[..., object] | None = None
        self.post: object | None = None
        self._post_runner = LatestOnlyRunner("post", self, nice=BACKGROUND)
        self._post_runner.finished.connect(self._on_post)
        # Denoising (issue 12) is a later stage with its own signal, not a ``post_stage``: it replaces the
        # preview itself (what every view and the automation contract read), and the generic hook stays free.
        # The memo is used only on this runner's thread (one job at a time), and by a lean preview job once
        # this runner has stopped (_after_stopped).
        self._denoise_runner = LatestOnlyRunner("denoise", self, nice=BACKGROUND)
        self._denoise_runner.finished.connect(self._on_denoised)
        self._denoise_runner.failed.connect(self._on_denoise_failed)
        self._denoise_memo = DenoiseMemo()
        self._denoised_generation = -2  # the preview generation whose denoised values are in ``preview``
        #: the memory decisions (core/engine/lean.py): what a lean session drops and when; its policy is
        #: :attr:`memory` (:meth:`set_memory_policy`)
        self.lean_book = LeanBook(self.state, self._noise_cache, self._denoise_memo)
        self._inline_denoise_generation = -1  # the preview job that denoises in the same job (small series)
        # The later stages (denoising, ``post_stage``, the average) start once the views have drawn the raw
        # preview: started before, they competed with the paint for the GIL (same-run A/B, issue 15: a 10^5
        # click repainted in 48 ms instead of 36, 10^6 in 121 instead of 101, and the denoised values came no
        # later). ``after_draw(start)`` is the views' hook: call ``start`` once the new preview is on screen
        # (the window waits for its plots' paint); without views, at once.
        self.after_draw: Callable[[Callable[[], None]], None] = lambda start: start()
        #: The views' hook for a new series: ``before_first_preview(start)`` gets them ready for its first
        #: preview while nothing competes with them (the window lays out its rows) and calls ``start`` once
        #: they have painted; without views, at once.
        self.before_first_preview: Callable[[Callable[[], None]], None] = lambda start: start()
        self._state_version = 0
        self._closed = False
        #: each Qt signal of a state change and the fields it announces, in the order they are emitted
        self._field_signals: tuple[tuple[SignalInstance, frozenset[str]], ...] = (
            (self.resolutionChanged, frozenset({"resolution"})),
            (self.landmarksChanged, frozenset({"landmarks"})),
            (self.settingsChanged, frozenset({"settings", "seed", "runs", "visible_schemes"})),
            (self.dummiesChanged, _DUMMY_FIELDS))
        events = signal_group(self.state)
        for name in events:  # one connection per field
            events[name].connect(partial(self._on_state, name))

    # ------------------------------------------------------------------------------------- state
    @property
    def series(self) -> Series | None:
        return self.state.series

    @property
    def landmarks(self) -> np.ndarray:
        return self.state.landmarks

    @property
    def settings(self) -> PrivacySettings:
        return self.state.settings

    @property
    def epsilon(self) -> float:
        return self.state.settings.epsilon

    @property
    def seed(self) -> int:
        return self.state.seed

    @property
    def runs(self) -> int:
        return self.state.runs

    @property
    def n(self) -> int:
        return self.series.n if self.series is not None else 0

    @property
    def dummies_enabled(self) -> bool:
        return self.state.dummies_enabled

    @property
    def dummy_settings(self) -> DummySettings:
        """The dummy settings (kept while dummies are off)."""
        return self.state.dummy_settings

    @property
    def dummies(self) -> DummySettings | None:
        """The dummy settings in force: None when dummies are off."""
        return self.state.dummies

    @property
    def visible_schemes(self) -> frozenset[str]:
        """The schemes the views show (:meth:`set_scheme_visible`)."""
        return self.state.visible_schemes

    @property
    def dummy_draw(self) -> int:
        return self.state.dummy_draw

    def snapshot(self) -> Snapshot:
        assert self.series is not None
        if self.state.resolution is not None:  # the periods, their landmark periods, the settings they need
            state = self.state
            return Snapshot(self.release_series, self.release_landmarks, self.release_settings, state.seed,
                            state.runs, dummies=state.dummies, dummy_draw=state.dummy_draw)
        # the landmark set is read-only (frozen_rows) and replaced, never changed, by every edit: no copy needed
        return self.state.snapshot()

    # ------------------------------------------------------------------------------ state events
    @contextmanager
    def _gesture(self) -> Iterator[None]:
        """Fields assigned together (a new series, an undo step): the session answers once all are in — one
        set of signals, one preview — rather than to each field with the others not yet assigned."""
        self._gesture_depth += 1
        try:
            yield
        finally:
            self._gesture_depth -= 1
            if not self._gesture_depth and self._pending:
                self._react()

    def _on_state(self, name: str, _new: object, old: object) -> None:
        """A field of :attr:`state` changed (its event): answered at once, or at the end of the gesture."""
        self._pending.setdefault(name, old)
        if not self._gesture_depth:
            self._react()

    def _react(self) -> None:
        """The session's answer to the fields that changed: drop what they outdate, schedule one preview (submitted
        before the views react: the worker computes while they redraw), then the Qt signals the views listen to."""
        changed, self._pending = self._pending, {}
        if "series" in changed:
            self._new_series()
            return
        schedule = not changed.keys() <= _UNSCHEDULED
        if "resolution" in changed:
            self._clear_results()
        if "landmarks" in changed:
            self._let_go_of_replaced()
            if not self._undo_step:  # assigned to the state directly: the undo steps' rows no longer apply
                self.undo_stack.clear()
                self._settings_dirty = True
        shown = hidden = frozenset[str]()
        if "visible_schemes" in changed:
            old = changed["visible_schemes"]
            assert isinstance(old, frozenset)
            shown, hidden = self.visible_schemes - old, old - self.visible_schemes
            # a lean session dropped their releases while they were hidden: the next preview makes them again
            schedule = schedule or bool(self.lean_book.shown_again(shown, self.preview))
        if schedule:
            self._schedule()
        for signal, fields in self._field_signals:
            if not changed.keys().isdisjoint(fields):
                signal.emit()
        if not changed.keys().isdisjoint(_DIRTYING):
            self._settings_dirty = True
            if not self._closed:
                self.dirtyChanged.emit(self.is_dirty())
        if shown:
            self._denoise_shown()
        elif hidden:
            self._let_go_of_hidden_values()

    def _new_series(self) -> None:
        """A new series (with its landmarks, settings, seed): a new start — no undo history, nothing to save, no
        results; every view redraws."""
        assert self.series is not None
        runtime.series_set(self.lean)  # (the launcher's ``heap``: a lean session's freed arrays go back at once)
        self.undo_stack.clear()
        self._settings_dirty = False
        self._clear_results()
        self.seriesChanged.emit()
        self.landmarksChanged.emit()
        self.settingsChanged.emit()
        self.dirtyChanged.emit(False)
        # A small series' opening preview runs as Python in a few ms (core/engine/lazyjit.py): it overlaps the
        # window's first paint, which is what makes the cold start ≈ the bare imports.
        self._schedule(after_paint=self.series.n > INTERPRET_MAX, opening=True)

    # ------------------------------------------------------------------------------ resolution
    @property
    def resolution(self) -> tuple[str, str] | None:
        """(resolution, aggregate), e.g. ("1D", "sum"), or None: one value per event."""
        return self.state.resolution

    def set_resolution(self, resolution: str | None, aggregate: str = "sum") -> None:
        """Release one value per period of ``resolution`` (its events' ``aggregate``), or per event (None).
        ValueError for an unknown resolution or a series that is not numeric."""
        value = None if not resolution else (parse_resolution(resolution)[0], aggregate)
        if value is not None and aggregate not in ("sum", "mean"):
            raise ValueError(f"aggregate {aggregate!r}: choose sum or mean")
        if value is not None and self.series is not None and self.series.kind != "numeric":
            raise ValueError(f"a coarser resolution works on numeric series only; this series is {self.series.kind}")
        self.state.resolution = value

    def _period_view(self) -> PeriodView | None:
        """The periods of the series at the resolution (made once per series, resolution and bounds: their
        values do not depend on the landmarks)."""
        resolution, settings = self.state.resolution, self.state.settings
        if resolution is None or self.series is None:
            return None
        key = (self.series, resolution, settings.bounds)
        if self._periods is None or self._periods[:3] != key:
            view = to_periods(self.series, np.zeros(0, np.int64), resolution[0], resolution[1],
                              sensitivity=settings.sensitivity, bounds=settings.bounds)
            self._periods = (*key, view)
        return self._periods[3]

    @property
    def release_series(self) -> Series | None:
        """What the schemes release: the series, or its periods at the release resolution."""
        view = self._period_view()
        return self.series if view is None else view.series

    @property
    def release_landmarks(self) -> np.ndarray:
        """The landmarks of :attr:`release_series`: the rows, or the periods that hold one."""
        view = self._period_view()
        if view is None:
            return self.state.landmarks
        assert view.series.periods is not None
        period_of = np.repeat(np.arange(view.series.n), view.series.periods.counts)
        return np.unique(period_of[self.state.landmarks])

    def release_row(self, row: int) -> int:
        """The row of :attr:`release_series` that holds event ``row`` (its period, or itself)."""
        view = self._period_view()
        if view is None:
            return row
        assert view.series.periods is not None
        return int(np.searchsorted(np.cumsum(view.series.periods.counts), row, side="right"))

    @property
    def release_settings(self) -> PrivacySettings:
        """The settings :attr:`release_series` is released with (a sum has no scalar bounds: the events
        were clamped before summing)."""
        settings, resolution = self.state.settings, self.state.resolution
        return settings if resolution is None else period_settings(settings, resolution[1])

    def is_landmark(self, row: int) -> bool:
        lm = self.state.landmarks
        i = int(np.searchsorted(lm, row))
        return i < lm.size and int(lm[i]) == row

    @property
    def preview_generation(self) -> int:
        """Which preview the session holds: a new number each time it takes one, before ``previewChanged``."""
        return self._preview_generation

    def is_preview_current(self) -> bool:
        return self._preview_generation == self._preview_runner.generation and bool(self.preview)

    def is_denoised_current(self) -> bool:
        """The preview is current and, with Denoise on, carries its denoised values (what automation waits
        for; with Denoise off the same as :meth:`is_preview_current`)."""
        return self.is_preview_current() and (not self.state.settings.denoise
                                              or self._denoised_generation == self._preview_generation)

    def is_dirty(self) -> bool:
        return self.series is not None and (not self.undo_stack.isClean() or self._settings_dirty)

    def _on_clean_changed(self, _clean: bool) -> None:
        if not self._closed:
            self.dirtyChanged.emit(self.is_dirty())

    def mark_clean(self) -> None:
        self.undo_stack.setClean()
        self._settings_dirty = False
        self.dirtyChanged.emit(False)

    # ---------------------------------------------------------------------------------- series
    def set_series(self, series: Series, *, landmarks=None, settings: PrivacySettings | None = None,
                   seed: int | None = None, landmark_rules: frozenset[str] = frozenset()) -> None:
        """Replace the series (and optionally landmarks/settings/seed, and the rules those landmarks come from:
        :attr:`landmark_rules`) in one step; clears undo history."""
        if settings is not None:
            settings.validate()
        lm = _own(normalize_landmarks(landmarks, series.n), landmarks) if landmarks is not None else \
            np.zeros(0, np.int64)
        state = self.state
        new = settings if settings is not None else state.settings
        if series.kind != "categorical" and settings is None and new.categories is not None:
            new = new.with_(categories=None)
        if series.kind == "categorical" and new.categories is not None \
                and set(series.categories or ()) - set(new.categories):
            new = new.with_(categories=None)
        with self._gesture():  # one answer (_new_series) once every field is in
            if series is state.series:  # opened again: still a new start
                self._pending.setdefault("series", series)
            state.series = series
            state.landmarks = frozen_rows(lm)
            state.landmark_rules = landmark_rules
            state.settings = new
            if seed is not None:
                state.seed = int(seed)
            if series.kind != "numeric":
                state.resolution = None

    # ------------------------------------------------------------------------------- landmarks
    def _apply_landmarks(self, rows: np.ndarray, rules: frozenset[str]) -> None:
        """An undo step's landmarks and their rules: one gesture (the rules alone announce nothing)."""
        self._undo_step = True
        try:
            with self._gesture():
                self.state.landmark_rules = rules
                self.state.landmarks = frozen_rows(rows)
        finally:
            self._undo_step = False

    def _let_go_of_replaced(self) -> None:
        """A landmark edit: a lean session drops at once what its preview replaces (:meth:`.LeanBook.on_edit`),
        and the views drop their references to it (they keep what they drew)."""
        dropped = self.lean_book.on_edit(self.preview, self.preview_plain)
        if dropped is not None:
            self.preview, self.preview_plain = dropped
            self.valuesLetGo.emit()

    @property
    def landmark_rules(self) -> frozenset[str]:
        """The labels of the suggestion rules whose proposals are in the landmark set (applied, or added to,
        and not replaced since): landmarks found from the values tell about them wherever a release shows
        where they are, which the export says (``ExportOptions.landmarks_rule``). Follows undo and redo; an
        emptied set, a new series and a replacing landmark file start again with none."""
        return self.state.landmark_rules

    def _edit(self, after: np.ndarray, text: str, diff: tuple[np.ndarray, np.ndarray] | None = None,
              rules: frozenset[str] | None = None) -> bool:
        """Push one undo step from the current landmarks to ``after``; ``diff`` = (added, removed) when the
        caller knows it (a toggle), else it is computed here; ``rules``: the set's rules afterwards (None: the
        same ones, none for an empty set)."""
        if self.series is None:
            return False
        before = self.state.landmarks
        if after.shape == before.shape and np.array_equal(after, before):
            return False
        if diff is None:
            diff = (np.setdiff1d(after, before, assume_unique=True), np.setdiff1d(before, after, assume_unique=True))
        if rules is None:
            rules = self.state.landmark_rules if after.size else frozenset()
        self.undo_stack.push(_LandmarkEdit(self, after, *diff, text, (self.state.landmark_rules, rules)))
        return True

    def toggle_landmark(self, row: int) -> bool:
        """Mark or unmark one event. Returns whether it is a landmark afterwards."""
        if self.series is None:
            raise RuntimeError("no series is open")
        row = int(row)
        if not 0 <= row < self.series.n:
            raise ValueError(f"event {row} is outside the series (events 0–{self.series.n - 1})")
        lm = self.state.landmarks
        i = int(np.searchsorted(lm, row))
        one, none = np.array([row], dtype=np.int64), np.zeros(0, dtype=np.int64)
        if i < lm.size and int(lm[i]) == row:
            self._edit(np.delete(lm, i), f"Unmark event {row}", (none, one))
            return False
        self._edit(np.insert(lm, i, row), f"Mark event {row}", (one, none))
        return True

    def set_landmarks(self, rows, text: str = "Set landmarks", rules: frozenset[str] | None = None) -> None:
        """``rules``: the suggestion rules the new set comes from (:attr:`landmark_rules`; None: unchanged)."""
        if self.series is None:
            raise RuntimeError("no series is open")
        self._edit(_own(normalize_landmarks(rows, self.series.n), rows), text, rules=rules)

    def add_range(self, first: int, last: int) -> None:
        """Mark every event in rows first..last (inclusive) — one undo step."""
        a, b = self._clip_range(first, last)
        if a > b:
            return
        self._edit(np.union1d(self.state.landmarks, np.arange(a, b + 1)), f"Mark events {a}–{b}")

    def remove_range(self, first: int, last: int) -> None:
        a, b = self._clip_range(first, last)
        if a > b:
            return
        lm = self.state.landmarks
        keep = (lm < a) | (lm > b)
        self._edit(lm[keep], f"Unmark events {a}–{b}")

    def clear_landmarks(self) -> None:
        self._edit(np.zeros(0, dtype=np.int64), "Clear landmarks")

    def invert_landmarks(self) -> None:
        if self.series is None:
            return
        mask = np.ones(self.series.n, dtype=bool)
        mask[self.state.landmarks] = False
        self._edit(np.flatnonzero(mask).astype(np.int64), "Invert landmarks")

    def _clip_range(self, first: int, last: int) -> tuple[int, int]:
        if self.series is None:
            return 0, -1
        a, b = sorted((int(first), int(last)))
        return max(a, 0), min(b, self.series.n - 1)

    # -------------------------------------------------------------------------------- settings
    def set_settings(self, settings: PrivacySettings) -> None:
        settings.validate()
        self.state.settings = settings

    def set_denoise(self, on: bool) -> None:
        """Post-processing on/off (issue 12): the preview's ``denoised_values`` and the metrics' denoised
        errors; a session setting (snapshot, project file) like the others."""
        self.set_settings(self.state.settings.with_(denoise=bool(on)))

    def set_epsilon(self, epsilon: float) -> None:
        self.set_settings(self.state.settings.with_(epsilon=float(epsilon)))

    def set_seed(self, seed: int) -> None:
        self.state.seed = int(seed)

    def reroll(self) -> int:
        """A new seed for the preview noise (never the export's: that uses fresh OS entropy)."""
        self.set_seed(int(np.random.default_rng().integers(1, 2**31 - 1)))
        return self.state.seed

    def set_runs(self, runs: int) -> None:
        self.state.runs = max(1, int(runs))

    # ---------------------------------------------------------------------------- dummy landmarks
    def set_dummies_enabled(self, enabled: bool) -> None:
        """Hide the landmarks among dummies (thesis §4.2) in the preview, the metrics and the export."""
        self.state.dummies_enabled = bool(enabled)

    def set_dummy_settings(self, settings: DummySettings | None = None, **changes) -> None:
        """Replace the dummy settings, or change some fields: ``set_dummy_settings(generator="heuristic")``."""
        new = settings if settings is not None else self.state.dummy_settings
        if changes:
            new = replace(new, **changes)
        new.validate()
        self.state.dummy_settings = new

    def set_dummy_draw(self, draw: int) -> None:
        self.state.dummy_draw = int(draw)

    def redraw_dummies(self) -> int:
        """A new draw of the preview's selection (same options, new exponential-mechanism pick and rows)."""
        draw = self.state.dummy_draw
        rng = np.random.default_rng()
        while draw == self.state.dummy_draw:
            draw = int(rng.integers(1, 2**31 - 1))
        self.set_dummy_draw(draw)
        return self.state.dummy_draw

    def set_scheme_visible(self, scheme: str, visible: bool) -> None:
        if scheme not in ALL_SCHEMES:
            raise ValueError(scheme)
        shown = self.state.visible_schemes
        self.state.visible_schemes = shown | {scheme} if visible else shown - {scheme}

    # ------------------------------------------------------------------------------ computation
    def _schedule(self, *, after_paint: bool = False, opening: bool = False) -> None:
        """Invalidate the results and compute the new state's preview: at once, or with ``after_paint`` (a new
        series) once the views have painted it and made ready for its preview (``before_first_preview``).
        The first preview of a large series draws its unit noise and loads the compiled kernels: started with
        the series' first paint or the rows' layout, it took a core and the GIL from them (at 10^7 events
        stalls of 70-140 ms, half of them waiting); the preview is only as much later as those paints."""
        if self.series is None:
            return
        self._state_version += 1
        # Invalidate now, so nobody mistakes the old preview for the new state's.
        self._preview_runner.cancel()
        self._average_runner.cancel()
        self._average_timer.stop()
        self._average_job = None
        self._post_runner.cancel()
        self._denoise_runner.cancel()
        if after_paint:
            version = self._state_version

            def current() -> bool:
                return version == self._state_version and not self._closed

            passes.after_paint(self, lambda: current() and self.before_first_preview(
                lambda: current() and self._submit(opening)))
            return
        # Submit now rather than after the event loop's next pass (which paints first, ~20 ms at 10^5): the
        # worker computes while the GUI thread repaints. Bursts still coalesce: the runner keeps only the
        # newest pending job and tells a running one to stop.
        self._submit(opening)

    def _submit(self, opening: bool = False) -> None:
        if self.series is None:
            return
        snap = self.snapshot()
        # Large series: raw only, the window draws it at once and denoising follows (_on_preview). Small ones:
        # the same denoise_preview in the same job (a few ms): as a later stage the lines vanished for the
        # ≈ 30 ms of the raw redraw on every click. Not the opening preview: it runs interpreted and needs no
        # compiler (core/engine/lazyjit.py); its denoise stage loads numba, off this thread.
        inline = self.state.settings.denoise and snap.series.n <= DENOISE_INLINE_MAX and not opening
        book = self.lean_book
        lean = book.lean
        stages = (self._average_runner, self._denoise_runner, self._post_runner) if lean else ()
        before = book.before_preview(snap) if lean else None
        after = book.after_preview(snap) if lean else None
        gen = self._preview_runner.submit(_after_stopped, stages, before, after, compute_preview, snap,
                                          self._noise_cache, self._options_cache, denoise=inline, interpret=opening)
        self._inline_denoise_generation = gen if inline else -1

    def _let_go_of_hidden_values(self) -> None:
        """A lean session drops the releases of its hidden schemes once they are scored, while no preview or
        denoise job runs (:meth:`.LeanBook.drop_hidden`), and the views drop their references to them."""
        dropped = self.lean_book.drop_hidden(
            self.preview, self.preview_plain, scored=self.is_denoised_current(),
            idle=self._preview_runner.is_idle() and self._denoise_runner.is_idle())
        if dropped is not None:
            self.preview, self.preview_plain = dropped
            self.valuesLetGo.emit()

    def _denoise_shown(self) -> None:
        """Denoise again, once the current preview's stage is in, when a shown scheme has its denoised error but
        not its values (a lean stage let them go while it was hidden): the others come from the memo, and
        denoisedChanged draws it."""
        if self._denoised_generation != self._preview_generation or not self.is_preview_current():
            return
        missing = [s for s in self.visible_schemes
                   if (p := self.preview.get(s)) is not None and p.denoised is None and p.denoised_scored]
        if missing:
            snap = self.snapshot()
            result = PreviewResult(self.preview, self.preview_plain, self.dummy_selection, self._dummy_options,
                                   self.dummy_error)
            self._submit_denoise(snap, result)

    @property
    def memory(self) -> MemoryPolicy:
        """Whether the session keeps lean for its series (:meth:`set_memory_policy`)."""
        return self.lean_book.policy

    @property
    def lean(self) -> bool:
        """The memory policy keeps this series lean (:attr:`memory`, :attr:`.LeanBook.lean`): a hidden scheme's
        release and denoised values, and those a landmark edit replaces, are dropped (views draw what they drew
        until the new ones arrive)."""
        return self.lean_book.lean

    def _clear_results(self) -> None:
        self.preview = {}
        self.post = None
        self.preview_plain = {}
        self.average = None
        self.average_plain = None
        self.average_dummy_size = None
        self.dummy_selection = None
        self.dummy_error = ""
        self._dummy_options = None

    def _on_preview(self, generation: int, result: PreviewResult | None) -> None:
        if not self._preview_runner.is_current(generation) or not result:
            return
        snap = self.snapshot()
        inline = generation == self._inline_denoise_generation
        old_error = self.dummy_error
        self.preview = result.preview
        self.preview_plain = result.plain
        self.lean_book.preview_arrived()
        self.dummy_selection = result.selection
        self.dummy_error = result.dummy_error
        self._dummy_options = result.options
        self._preview_generation = generation
        self.average = None
        self.average_plain = None
        self.average_dummy_size = None
        self.dummySelectionChanged.emit()
        if self.dummy_error and not old_error:  # once per episode, not on every edit while it lasts
            self.dummiesFailed.emit(self.dummy_error)
        self.post = None
        if inline:  # the denoised values came with the raw ones: one redraw draws both
            self._denoised_generation = generation
        self.previewChanged.emit()
        if inline and self.is_preview_current():  # (a previewChanged slot may have edited the state)
            self.denoisedChanged.emit()
        if not self.state.settings.denoise:
            self._let_go_of_hidden_values()
        if self.is_preview_current():
            self.after_draw(lambda: self._later_stages(generation, snap, result, inline))

    def _later_stages(self, generation: int, snap: Snapshot, result: PreviewResult, inline: bool) -> None:
        """Denoising, ``post_stage`` and the average of the preview ``generation``, unless the state has
        changed since (or the session closed) while the views drew it."""
        if self._closed or generation != self._preview_generation or not self.is_preview_current():
            return
        if self.state.settings.denoise and not inline:
            self._submit_denoise(snap, result)
        if self.post_stage is not None:
            self._post_runner.submit(self.post_stage, snap, result)
        if self.dummy_error:  # no selection: the average is the plain one
            snap = Snapshot(snap.series, snap.landmarks, snap.settings, snap.seed, snap.runs)
        self._average_job = (snap, self._dummy_options)
        if not self.state.settings.denoise or inline:  # else once the denoised stage is in (_on_denoised)
            self._average_timer.start()

    def _on_preview_failed(self, generation: int, message: str) -> None:
        if self._preview_runner.is_current(generation):
            self.previewFailed.emit(message)

    def _on_average(self, generation: int, result: AverageResult | None) -> None:
        if result is None or not self._average_runner.is_current(generation):
            return
        self.average = result.average
        self.average_plain = result.plain
        self.average_dummy_size = result.dummy_size
        self.metricsChanged.emit()

    def _submit_average(self) -> None:
        job, self._average_job = self._average_job, None
        if job is None or self._closed:
            return
        self._submit_later(self._average_runner, job[0], compute_average, *job)

    def _submit_denoise(self, snap: Snapshot, result: PreviewResult) -> None:
        self._submit_later(self._denoise_runner, snap, denoise_preview, snap, result, memo=self._denoise_memo,
                           keep=self.lean_book.keep(), compact=self.lean, compact_raw=self.lean_book.compact_raw())

    def _submit_later(self, runner: LatestOnlyRunner, snap: Snapshot, fn: Callable, *args, **kwargs) -> None:
        """A later stage's job (the preview is current: no preview job runs); in a lean session, without the
        preview's unit noise (:func:`_without_preview_noise`: a lean preview job waits for it to stop, nothing else
        uses that noise meanwhile)."""
        noise = self.lean_book.stage_noise(snap)
        if noise is None:
            runner.submit(fn, *args, **kwargs)
        else:
            runner.submit(_without_preview_noise, noise, fn, *args, **kwargs)

    def set_memory_policy(self, policy: MemoryPolicy) -> None:
        """Keep lean as ``policy`` says from now on (the user's preference, ``lmdk-gui --memory``). A preview in
        hand stays as it is: what a lean session dropped is made again when it is shown or edited."""
        self.lean_book.policy = policy
        if self.series is not None:
            runtime.series_set(self.lean)

    def let_go_of_preview_noise(self) -> None:
        """A lean session lets go of its preview's unit noise while no preview job runs (an export draws its
        own: 80 MB at 10^7 events); the next preview draws it again."""
        self.lean_book.let_go_of_preview_noise(idle=self._preview_runner.is_idle())

    def _on_denoised(self, generation: int, result: PreviewResult | None) -> None:
        if result is None or not self._denoise_runner.is_current(generation) or not self.is_preview_current():
            return
        self.preview = result.preview
        self.preview_plain = result.plain
        self._denoised_generation = self._preview_generation
        self._let_go_of_hidden_values()
        self.denoisedChanged.emit()
        self._average_timer.start()
        self._denoise_shown()  # a scheme shown while this stage ran (with the visible schemes of its start)

    def _on_denoise_failed(self, generation: int, message: str) -> None:
        if self._denoise_runner.is_current(generation):
            self.previewFailed.emit(f"denoising failed: {message}")
            self._average_timer.start()

    def _on_post(self, generation: int, result: object) -> None:
        if result is None or not self._post_runner.is_current(generation):
            return
        self.post = result
        self.postChanged.emit()

    def shutdown(self) -> None:
        self._closed = True
        self._average_timer.stop()
        self._preview_runner.shutdown()
        self._average_runner.shutdown()
        self._post_runner.shutdown()
        self._denoise_runner.shutdown()
