"""Previews and R-run averages of every scheme (DESIGN §5, §10), shared by the window and ``lmdk compare``.

The window's session model (:mod:`lmdk_gui.ui.window.session`) runs these on its worker threads; the command calls
them directly. A :class:`Snapshot` is an immutable copy of what a computation works on.
:func:`compute_preview` gives each scheme's release on common random numbers (with dummies on, also the
selection ``L' ⊃ L`` drawn from the seed and the draw number, and the releases on ``L'`` with ``ε − ε_sel``);
:func:`compute_average` the MAE over ``runs`` runs (with dummies: with and without them). Each release is
:func:`~.pipeline.plan` then :func:`~.pipeline.run_preview`, as in :func:`~.pipeline.compute_release`.
Denoising is a later stage, :func:`denoise_preview` (post-processing of those releases): ``compute_preview``
runs it at once by default (``lmdk compare``), the window's session on its own thread after drawing the raw
releases.
A dummy generator that refuses (Optimal beyond its limit) is not an error of the preview: the result carries
its message in ``dummy_error`` and the releases without dummies.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np

from ..analysis.denoise import Denoised
from ..analysis.metrics import RunStats, constant_error, denoised_error, mae_and_sums, mae_over_runs
from ..data.series import Series
from ..kernel.dummies import (
    DummyOptions,
    DummySelection,
    DummySettings,
    generate_options,
    mae_runs_with_dummies,
    select_for_release,
    selection_rng,
)
from ..kernel.noise import UnitNoise
from ..kernel.schemes import SCHEMES
from ..kernel.settings import ALL_SCHEMES, PrivacySettings
from . import release as release_mod
from .lazyjit import interpreted
from .pipeline import denoised_values, kind_of, plan, run_preview_patched
from .release import Release, ReleaseSummary, normalize_landmarks


@dataclass(frozen=True)
class SchemePreview:
    """A scheme's preview release plus its error for this seed; with ``settings.denoise``, also its
    post-processing (``denoised``: released values, budgets, flags and public settings only) and that
    error. ``values`` stays the raw release (the automation contract); ``denoised_values`` is None when
    denoising is off. ``release`` is the whole release, or its :class:`~.release.ReleaseSummary` where a lean
    session dropped it (a hidden scheme, or one a landmark edit replaces: ``whole`` False, and reading
    ``values``, ``budgets`` or ``approximated`` raises LookupError until the session makes it again)."""

    release: Release | ReleaseSummary
    mae: float
    relative: float | None
    denoised: Denoised | None = None
    mae_denoised: float = float("nan")
    relative_denoised: float | None = None

    @property
    def whole(self) -> bool:
        """It holds the whole release (not a lean session's summary of it)."""
        return isinstance(self.release, Release)

    @property
    def whole_release(self) -> Release:
        """The release; LookupError where a lean session kept only its summary."""
        if not isinstance(self.release, Release):
            raise LookupError(f"the {self.release.scheme} preview holds its summary only (a lean session dropped "
                              "the release); show the scheme to make it again")
        return self.release

    @property
    def denoised_values(self) -> np.ndarray | None:
        return None if self.denoised is None else self.denoised.values

    @property
    def denoised_scored(self) -> bool:
        """Its denoised error is known: denoised, whether or not the values were kept (``denoise_preview``'s
        ``keep``); False with Denoise off or for a kind without a denoiser."""
        return self.denoised is not None or not np.isnan(self.mae_denoised)

    # The automation contract: preview[scheme].budgets / .values
    @property
    def budgets(self) -> np.ndarray:
        return self.whole_release.budgets

    @property
    def values(self) -> np.ndarray:
        return self.whole_release.values

    @property
    def approximated(self) -> np.ndarray:
        return self.whole_release.approximated

    @property
    def guarantee(self):
        return self.release.guarantee


@dataclass(frozen=True)
class Snapshot:
    """An immutable copy of what a computation or an export works on."""

    series: Series
    landmarks: np.ndarray
    settings: PrivacySettings
    seed: int
    runs: int = 20
    extra: dict = field(default_factory=dict)
    dummies: DummySettings | None = None  # None = no dummy landmarks
    dummy_draw: int = 0


class NoiseCache:
    """Unit noise per (series, seed), kept for the latest few (drawn on the worker thread).

    Each entry holds its series: keyed by ``id(series)`` alone, a series freed after a new file was opened could
    hand its id to the next one and the cache would return noise of the wrong length.
    """

    def __init__(self) -> None:
        self._items: dict[tuple[int, int], tuple[Series, UnitNoise, dict]] = {}

    def _entry(self, series: Series, seed: int) -> tuple[Series, UnitNoise, dict]:
        key = (id(series), seed)
        hit = self._items.get(key)
        if hit is None or hit[0] is not series:
            if len(self._items) > 4:
                self._items.clear()
            for other in self._items.values():  # memos hold releases: only the newest entry keeps one
                other[2].clear()
            hit = (series, UnitNoise(series.n, seed), {})
            self._items[key] = hit
        return hit

    def get(self, series: Series, seed: int) -> UnitNoise:
        return self._entry(series, seed)[1]

    def memo(self, series: Series, seed: int) -> dict:
        """The :func:`scheme_previews` memo of this (series, seed): releases worth reusing on its noise."""
        return self._entry(series, seed)[2]

    def _existing(self, series: Series, seed: int) -> tuple[Series, UnitNoise, dict] | None:
        hit = self._items.get((id(series), seed))
        return hit if hit is not None and hit[0] is series else None

    def existing_memo(self, series: Series, seed: int) -> dict | None:
        """That memo if there is one (nothing drawn nor cleared)."""
        hit = self._existing(series, seed)
        return None if hit is None else hit[2]

    def existing(self, series: Series, seed: int) -> UnitNoise | None:
        """That noise if there is one (nothing drawn nor cleared)."""
        hit = self._existing(series, seed)
        return None if hit is None else hit[1]


class OptionsCache:
    """The dummy generator's options per (n, L, generator): they are deterministic, so Re-draw and re-rolls
    only redo the exponential mechanism and the within-bin draw. Used on the preview thread only."""

    def __init__(self) -> None:
        self._items: dict[tuple, DummyOptions] = {}

    def get(self, n: int, landmarks: np.ndarray, generator: str) -> DummyOptions:
        key = (n, generator, landmarks.size, hash(landmarks.tobytes()))
        opts = self._items.get(key)
        if opts is None or not np.array_equal(opts.landmarks, landmarks):
            if len(self._items) > 4:
                self._items.clear()
            opts = generate_options(n, landmarks, generator)  # may refuse (Optimal): ValueError
            self._items[key] = opts
        return opts


@dataclass(frozen=True)
class PreviewResult:
    """What the preview worker hands back (immutable; crosses threads under the runner's lock)."""

    preview: dict[str, SchemePreview]  # with dummies when they are on and the selection succeeded
    plain: dict[str, SchemePreview]  # without dummies
    selection: DummySelection | None = None
    options: DummyOptions | None = None
    dummy_error: str = ""


@dataclass(frozen=True)
class AverageResult:
    average: dict[str, RunStats]  # matches PreviewResult.preview
    plain: dict[str, RunStats]
    dummy_size: float | None = None  # mean |L'| over the runs


#: from this many events on, the data-dependent schemes (Adaptive: one compiled pass that leaves the GIL)
#: run on a second thread while this one computes the others (Adaptive's loop is a large share of a click)
PARALLEL_MIN = 50_000
#: Series up to this many events get their opening raw preview (``compute_preview(interpret=True)``) with
#: numba's kernels run as Python (core/engine/lazyjit.py): it waits for no compiler, and up to this size the
#: kernels run as Python in a fraction of numba's loading time. Every later preview runs compiled (as Python
#: a click at this size would cost ≈ 20 ms instead of 1), and so does the denoise stage: its iterative
#: kernels (the categorical HMM's EM) would be far too slow as Python.
INTERPRET_MAX = 3_000

#: Up to this many events the preview job also computes the yardstick (:func:`yardstick`); beyond, the later
#: stages do (the denoise stage, the average), off the first preview's path: the median of 10^7 values and
#: their errors took half a second of opening such a series.
YARDSTICK_INLINE_MAX = 50_000

_side = ThreadPoolExecutor(1, thread_name_prefix="lmdk-preview-side")


def yardstick(snap: Snapshot) -> float:
    """The error every expected error is shown against (``metrics.constant_error``, cached on the series),
    computed on the calling worker thread: the views only read it (``metrics.known_constant_error``) and never
    compute it, nor load the compiler for it, on the GUI thread."""
    return constant_error(snap.series)


def scheme_previews(snap: Snapshot, landmarks: np.ndarray, settings: PrivacySettings, noise: UnitNoise,
                    should_cancel=None, memo: dict | None = None) -> dict[str, SchemePreview] | None:
    """Every scheme's raw preview release on ``landmarks`` with ``settings`` and its error for this seed
    (``denoised`` None: :func:`denoise_preview` is the later stage); None when cancelled.

    ``memo`` (one per series and seed, see :meth:`NoiseCache.memo`) holds each fixed scheme's last release:
    its values are a function of the series, the noise, the settings and the budgets only, so with the same
    settings :func:`~.pipeline.run_preview` reuses it when no budget changed (Event and User on a click, with
    their error) and patches it where few did (Skip). Its landmarks and its check are always new. A reused
    release keeps the same ``values``/``budgets``/``approximated`` arrays, which is what lets
    :class:`DenoiseMemo` reuse its denoised values in turn. Each scheme is :func:`_scheme_preview`, on this
    thread or (large series, data-dependent budgets) on a second one: the same function either way."""
    series = snap.series
    lm = normalize_landmarks(landmarks, series.n)
    # one input for every scheme: with public bounds (or categories) each plan would hold its own clamped
    # (or remapped) copy of the series, six at once
    settings.validate()  # (before preparing, as plan does: bad settings are reported as such)
    inp = kind_of(series).prepare(series, settings)
    plans, side = {}, {}
    # Adaptive is planned first and a data-dependent scheme (no budgets before drawing) goes to the second
    # thread at once: planning Skip and Balanced (their budgets and pre-checks) first delayed it,
    # and it ended as late as the others. (The release module's allocation is looked up now, as
    # compute_release does: the audits replace it.)
    for scheme in sorted(ALL_SCHEMES, key=lambda s: s != "adaptive"):
        p = plans[scheme] = plan(series, lm, settings, scheme, budgets_fn=release_mod.fixed_budgets,
                                 allocatable_fn=release_mod.allocatable, inp=inp)
        if p.budgets is None and series.n >= PARALLEL_MIN:
            side[scheme] = _side.submit(_scheme_preview, series, p, settings, noise, memo)
    done: dict[str, tuple] = {}
    for scheme, p in plans.items():
        if should_cancel is not None and should_cancel():
            for f in side.values():
                f.cancel()
            return None
        if scheme not in side:
            done[scheme] = _scheme_preview(series, p, settings, noise, memo)
    done.update({scheme: f.result() for scheme, f in side.items()})
    denom = _mean_abs(series, memo)
    out: dict[str, SchemePreview] = {}
    for scheme in ALL_SCHEMES:
        rel, err, remember = done[scheme]
        if memo is not None and remember is not None:
            memo[scheme], memo[("error_sums", scheme)] = remember
        # relative_error is MAE / mean |x|: the mean is the same for every scheme, and the MAE is the one just
        # computed (numeric MAE does not depend on settings), so each release's error is computed once.
        out[scheme] = SchemePreview(rel, err, err / denom if denom != 0.0 else None)
    return out


def _scheme_preview(series: Series, p, settings: PrivacySettings, noise: UnitNoise,
                    memo: dict | None) -> tuple[Release | ReleaseSummary, float, tuple | None]:
    """One scheme's preview release and its error; the memo entries to store (or None), which the caller
    writes (only reads happen here, so this may run on another thread). Where a lean session left the memo a
    release's summary only (:func:`drop_releases`), a scheme whose budgets ignore the landmarks (the registry's
    ``uses_landmarks``: Event, User) gets that summary back with the new landmarks and check (with the same
    settings its release is the same); any other scheme's release is made whole again."""
    key = settings.with_(denoise=False)  # the raw release does not depend on it: a toggle reuses them all
    hit = memo.get(p.scheme) if memo is not None and p.budgets is not None else None
    prev = hit[1] if hit is not None and hit[0] == key else None
    if isinstance(prev, ReleaseSummary):
        if not SCHEMES[p.scheme].uses_landmarks and p.precheck is not None:
            return replace(prev, landmarks=p.landmarks, guarantee=p.precheck), hit[2], None  # type: ignore[index]
        prev = None
    rel, span = run_preview_patched(p, noise, prev)  # patches prev where budgets changed (Skip), reuses it if none did
    remember = None
    if prev is not None and rel.values is prev.values:
        err = hit[2]  # type: ignore[index]
    else:
        # prev's error sums, patched where the release was (a release made whole is scored whole)
        sums = memo.get(("error_sums", p.scheme)) if memo is not None else None
        patch = None if sums is None or span is None else (sums, span)
        err, sums = mae_and_sums(series, rel, settings, patch)
        # (the block sums: one number per block of events.) Adaptive is never reused (its budgets depend on
        # the noise): a memo entry would only keep its release alive (series-sized arrays).
        if p.budgets is not None:
            remember = ((key, rel, err), sums)
    _summarise(rel, prev)
    return rel, err, remember


def _summarise(rel: Release, prev: Release | None) -> None:
    """The release's mean and largest budget and approximated share, computed here on the worker (the metrics
    table and the budget rows read them on the GUI thread: 16 whole-array passes per click, a visible delay on
    a large series) or taken from an unchanged release."""
    if prev is not None and rel.budgets is prev.budgets and rel.approximated is prev.approximated:
        prev.carry_summaries(rel)  # (same arrays, same values)
    rel.mean_budget, rel.max_budget, rel.approximated_share  # noqa: B018 - fills the caches


class DenoiseMemo:
    """Each scheme's latest denoised results, for :func:`denoise_preview` to reuse when a release did not
    change (Event and User on a click: :func:`scheme_previews` hands back the same arrays).

    The denoiser and its error read only the series, the settings and the release's values, budgets and
    flags, so an entry is reused when those are the very same objects (and equal settings). Entries hold
    those objects: an ``id()`` of a freed array could be handed to a new one. One thread uses a memo (the
    session's denoise stage runs one job at a time on its own thread). One entry per scheme and role (the
    releases without and with dummies): a second one per role would keep the previous click's arrays alive
    (several series-sized arrays per scheme) for nothing, as a changed release is never seen again."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], tuple] = {}
        self._mean_abs: tuple[Series, float] | None = None

    def get(self, role: str, series: Series, settings: PrivacySettings, rel: Release | ReleaseSummary,
            values: bool = True) -> tuple[Denoised | None, float] | None:
        """The entry of this very release (or of the release a summary stands for), if any; with ``values``,
        not one that kept only the error."""
        e = self._items.get((role, rel.scheme))
        i = _ident(rel)
        if e is not None and e[0] is series and e[2] is i[0] and e[3] is i[1] and e[4] is i[2] and e[1] == settings \
                and not (values and e[5] is None and not np.isnan(e[6])):
            return e[5], e[6]
        return None

    def put(self, role: str, series: Series, settings: PrivacySettings, rel: Release | ReleaseSummary,
            den: Denoised | None, err: float) -> None:
        self._items[(role, rel.scheme)] = (series, settings, *_ident(rel), den, err)

    def forget(self, role: str, scheme: str) -> None:
        self._items.pop((role, scheme), None)

    def rehome(self, role: str, old: Release, new: Release | ReleaseSummary, *, keep_denoised: bool = False) -> None:
        """The entry of ``old`` now describes ``new``: the same release kept another way (its summary:
        :func:`drop_releases`, and then without its denoised values; or at float32); its error stays."""
        e = self._items.get((role, old.scheme))
        if e is not None and all(x is y for x, y in zip(e[2:5], _ident(old), strict=True)):
            self._items[(role, old.scheme)] = (*e[:2], *_ident(new), e[5] if keep_denoised else None, e[6])

    def forget_schemes(self, schemes: Collection[str]) -> None:
        """Forget these schemes' entries in every role (their releases are about to be replaced)."""
        for role, scheme in [k for k in self._items if k[1] in schemes]:
            self.forget(role, scheme)

    def mean_abs(self, series: Series) -> float:
        if self._mean_abs is None or self._mean_abs[0] is not series:
            self._mean_abs = (series, _mean_abs(series, None))
        return self._mean_abs[1]


def _ident(rel: Release | ReleaseSummary) -> tuple:
    """What a :class:`DenoiseMemo` entry is keyed on: a release's arrays (a reused release keeps them), or the
    token of the release a summary stands for."""
    if isinstance(rel, Release):
        return rel.values, rel.budgets, rel.approximated
    return rel.token, None, None


def denoise_preview(snap: Snapshot, result: PreviewResult, *, should_cancel=None, memo: DenoiseMemo | None = None,
                    keep: frozenset[str] | None = None, compact: bool = False,
                    compact_raw: frozenset[str] = frozenset()) -> PreviewResult | None:
    """The preview's later stage: ``result`` (raw, from :func:`compute_preview` of ``snap``) with every
    release's post-processing and its error filled in (``denoised``, ``mae_denoised``,
    ``relative_denoised``); ``result`` itself when ``snap.settings.denoise`` is off; None when cancelled.
    ``preview`` and ``plain`` stay one object when they were one. ``keep``: the schemes whose denoised values
    are kept (None: all); the others get their error only (``denoised`` None, ``denoised_scored`` True).
    ``compact``: the kept values are only drawn (a large window): :func:`compact_denoised`; ``compact_raw``:
    the (kept) schemes whose raw values are only drawn once denoised and scored: :func:`compact_values`."""
    yardstick(snap)  # (a large series' preview left it to this stage)
    if not snap.settings.denoise:
        return result
    memo = memo if memo is not None else DenoiseMemo()
    plain = _denoise_all(snap, result.plain, snap.settings, should_cancel, memo, "plain", keep, compact, compact_raw)
    if plain is None:
        return None
    if result.preview is result.plain:
        return replace(result, preview=plain, plain=plain)
    assert result.selection is not None  # releases on L' were made with the ε left after the selection
    st = snap.settings.with_(epsilon=result.selection.epsilon_remaining)
    withd = _denoise_all(snap, result.preview, st, should_cancel, memo, "dummies", keep, compact, compact_raw)
    return None if withd is None else replace(result, preview=withd, plain=plain)


def _denoise_all(snap: Snapshot, previews: dict[str, SchemePreview], settings: PrivacySettings, should_cancel,
                 memo: DenoiseMemo, role: str, keep: frozenset[str] | None, compact: bool = False,
                 compact_raw: frozenset[str] = frozenset()) -> dict[str, SchemePreview] | None:
    series = snap.series
    denom = memo.mean_abs(series)
    wanted = {scheme: keep is None or scheme in keep for scheme in previews}
    hits = {scheme: memo.get(role, series, settings, p.release, wanted[scheme]) for scheme, p in previews.items()}
    for scheme, hit in hits.items():
        if hit is None:  # every stale entry at once: their arrays are not kept alive while the new ones are made
            memo.forget(role, scheme)
    out: dict[str, SchemePreview] = {}
    made: list[str] = []
    for scheme, p in previews.items():
        hit = hits[scheme]
        if hit is None and not _stopped(should_cancel):
            hit = _denoised_mae(series, p.release, settings, should_cancel)
            if hit is not None:
                made.append(scheme)
        if hit is not None and hit[0] is not None and not wanted[scheme]:
            hit = (None, hit[1])  # a hidden row's denoised values are let go (series-sized), memo too
        elif compact and hit is not None and hit[0] is not None:
            hit = (compact_denoised(hit[0]), hit[1])  # (its error is in: computed from the float64 values)
        if hit is not None and hit is not hits[scheme]:
            memo.put(role, series, settings, p.release, *hit)
        if hit is None or _stopped(should_cancel):
            # A new state is coming. What this job made belongs to releases a click changes: kept until the
            # next job starts, it overlapped that state's preview (a series-sized array per scheme).
            for m in made:
                memo.forget(role, m)
            return None
        den, err_d = hit
        scored = den is not None or not np.isnan(err_d)
        out[scheme] = replace(p, denoised=den, mae_denoised=err_d,
                              relative_denoised=err_d / denom if denom != 0.0 and scored else None)
    # once every scheme is denoised (each copy made during the stage would sit beside its denoising's arrays)
    for scheme in compact_raw if compact else ():
        q = out.get(scheme)
        if q is not None and q.denoised is not None and isinstance(rel := q.release, Release) \
                and (v := compact_values(rel.values)) is not rel.values:
            out[scheme] = replace(q, release=rel.with_values(v))
            memo.rehome(role, rel, out[scheme].release, keep_denoised=True)
    return out


def drop_releases(previews: dict[str, SchemePreview], schemes: Collection[str], memo: dict | None,
                  denoise_memo: DenoiseMemo | None, role: str) -> dict[str, SchemePreview]:
    """``previews`` with the releases of ``schemes`` replaced by their summaries (:meth:`.Release.summary`) and
    their denoised values dropped: a lean session's hidden schemes once scored, or those a landmark edit
    replaces. Their errors stay. In the :func:`scheme_previews` memo too (``memo``; Event's and User's summaries
    are reused on a click) and in the denoise memo (``role``'s entry keeps its error). Only when no job uses
    either memo. A release is never emptied: the summary is another object, and the release goes once nobody
    else (a view) holds it."""
    out = dict(previews)
    for scheme in schemes:
        p = previews.get(scheme)
        if p is None or not isinstance(rel := p.release, Release):
            continue
        summary = rel.summary()
        out[scheme] = replace(p, release=summary, denoised=None)  # (its error stays)
        hit = memo.get(scheme) if memo is not None else None
        if hit is not None and hit[1] is rel:
            memo[scheme] = (hit[0], summary, hit[2])  # type: ignore[index]
        if denoise_memo is not None:
            denoise_memo.rehome(role, rel, summary)
    return out


def forget_replaced(memo: dict | None, previews: dict[str, SchemePreview], schemes: Collection[str]) -> None:
    """Forget the memo's releases of ``schemes`` that ``previews`` holds another way (``compact_raw``): a
    float64 copy kept for a reuse that a landmark edit never makes (their budgets all change)."""
    for scheme in schemes if memo is not None else ():
        hit = memo.get(scheme)  # type: ignore[union-attr]
        if hit is not None and (p := previews.get(scheme)) is not None and hit[1] is not p.release:
            del memo[scheme]  # type: ignore[union-attr]


def forget_releases(memo: dict | None, schemes: Collection[str]) -> None:
    """Forget the :func:`scheme_previews` memo's releases of ``schemes`` (in the releases with and without
    dummies): the next preview makes them whole."""
    for m in (memo, memo.get("with dummies") if memo is not None else None):
        for scheme in schemes if m is not None else ():
            m.pop(scheme, None)  # type: ignore[union-attr]


#: a line is drawn from float32 values when they are within this share of its range of the float64 ones
COMPACT_TOLERANCE = 1e-4


def compact_values(v: np.ndarray) -> np.ndarray:
    """Numeric values that are only drawn (a large window keeps its rows': half the memory per array) as
    float32 when that is within ``COMPACT_TOLERANCE`` of their range (a fraction of a pixel), else
    ``v`` itself. Whatever is computed from them is computed before, from the float64."""
    if v.dtype != np.float64 or v.ndim != 1 or not v.size:
        return v
    lo, hi = float(np.fmin.reduce(v)), float(np.fmax.reduce(v))  # (NaNs skipped; all NaN: NaN)
    # float32 rounds to within 2^-24 of a value's magnitude
    if not (math.isfinite(lo) and math.isfinite(hi) and max(-lo, hi) * 2.0**-24 <= (hi - lo) * COMPACT_TOLERANCE):
        return v
    return v.astype(np.float32)


def compact_denoised(den: Denoised) -> Denoised:
    """The denoised release with :func:`compact_values` (a large window draws it)."""
    v = compact_values(den.values)
    return den if v is den.values else replace(den, values=v)


def _stopped(should_cancel) -> bool:
    return should_cancel is not None and bool(should_cancel())


def _denoised_mae(series: Series, rel: Release | ReleaseSummary, settings: PrivacySettings,
                  should_cancel) -> tuple[Denoised | None, float] | None:
    """:func:`~.metrics.denoised_mae`, or None when cancelled between the denoising and its error (on a large
    series each is a long step, and the denoised values are let go at once)."""
    if not isinstance(rel, Release):
        raise ValueError(f"the {rel.scheme} preview holds its release's summary only: it cannot be denoised again")
    den = denoised_values(rel, settings)
    if den is None:
        return None, float("nan")
    return None if _stopped(should_cancel) else (den, denoised_error(series, rel, settings, den))


def _mean_abs(series: Series, memo: dict | None) -> float:
    if series.kind != "numeric" or not series.n:
        return 0.0
    if memo is not None and "mean_abs" in memo:
        return memo["mean_abs"]
    v = float(np.mean(np.abs(series.values)))
    if memo is not None:
        memo["mean_abs"] = v
    return v


def compute_preview(snap: Snapshot, noise_cache: NoiseCache, options_cache: OptionsCache | None = None, *,
                    should_cancel=None, denoise: bool = True, interpret: bool = False) -> PreviewResult | None:
    """Every scheme's preview release; with dummies on, also the selection and the releases on L'. With
    ``denoise`` (and ``snap.settings.denoise``) also their post-processing, by :func:`denoise_preview` (the
    session asks for the raw releases and runs that stage on its own thread afterwards). With ``interpret``
    (a series' opening preview) and at most :data:`INTERPRET_MAX` events, the raw releases are computed by
    the kernels run as Python; the bits are the same."""
    noise = noise_cache.get(snap.series, snap.seed)
    memo = noise_cache.memo(snap.series, snap.seed)
    with interpreted(interpret and snap.series.n <= INTERPRET_MAX):
        raw = _raw_preview(snap, noise, memo, options_cache, should_cancel)
        if snap.series.n <= YARDSTICK_INLINE_MAX:
            yardstick(snap)
    if raw is None or not denoise:
        return raw
    # the one-shot path's denoise memo lives with the noise memo: used by whichever thread calls this
    return denoise_preview(snap, raw, should_cancel=should_cancel, memo=memo.setdefault("denoise", DenoiseMemo()))


def _raw_preview(snap: Snapshot, noise: UnitNoise, memo: dict, options_cache: OptionsCache | None,
                 should_cancel) -> PreviewResult | None:
    plain = scheme_previews(snap, snap.landmarks, snap.settings, noise, should_cancel, memo)
    if plain is None:
        return None
    if snap.dummies is None:
        return PreviewResult(plain, plain)
    try:
        opts = None
        if snap.series.n > snap.landmarks.size:
            opts = (options_cache or OptionsCache()).get(snap.series.n, snap.landmarks, snap.dummies.generator)
        sel = select_for_release(snap.series.n, snap.landmarks, snap.settings.epsilon, snap.dummies,
                                 rng=selection_rng(snap.seed, snap.dummy_draw), options=opts)
    except ValueError as e:  # the generator refuses (Optimal beyond its limit)
        return PreviewResult(plain, plain, dummy_error=str(e))
    # Releases on L' have their own memo: sharing the plain one, each click would replace one by the other.
    withd = scheme_previews(snap, sel.landmarks, snap.settings.with_(epsilon=sel.epsilon_remaining), noise,
                             should_cancel, memo.setdefault("with dummies", {}))
    if withd is None:
        return None
    return PreviewResult(withd, plain, sel, opts)


def compute_average(snap: Snapshot, options: DummyOptions | None = None, *,
                    should_cancel=None) -> AverageResult | None:
    """MAE over ``snap.runs`` runs (raw, and denoised when ``snap.settings.denoise``); with dummies (and
    ``options`` from the preview, generated here when not given), with and without. A generator that refuses
    (Optimal beyond its limit) gives the average without dummies, as the preview does."""
    yardstick(snap)  # (with Denoise off, a large series' preview left it to this stage)
    if snap.dummies is not None and options is None and snap.series.n > snap.landmarks.size:
        try:
            options = OptionsCache().get(snap.series.n, snap.landmarks, snap.dummies.generator)
        except ValueError:
            snap = replace(snap, dummies=None)
    if snap.dummies is not None and (options is not None or snap.series.n <= snap.landmarks.size):
        plain, withd, size = mae_runs_with_dummies(
            snap.series, snap.landmarks, snap.settings, snap.dummies, runs=snap.runs, seed=snap.seed,
            draw=snap.dummy_draw, options=options, should_cancel=should_cancel, denoise=snap.settings.denoise)
        if should_cancel is not None and should_cancel():
            return None
        return AverageResult(withd, plain, size)
    stats = mae_over_runs(snap.series, snap.landmarks, snap.settings, runs=snap.runs, seed=snap.seed,
                          should_cancel=should_cancel, denoise=snap.settings.denoise)
    if should_cancel is not None and should_cancel():
        return None
    return AverageResult(stats, stats)
