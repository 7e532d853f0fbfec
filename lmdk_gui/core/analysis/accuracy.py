"""Accuracy first: "what ε do I need?" (issue 14).

The user names the error they can live with (in the data's units, or a share of the data's range) and gets,
per scheme, the smallest ε on a log grid whose error *averaged over R runs* meets it.

:func:`error_curves` computes each scheme's mean error at every grid ε. It reuses the common random numbers
of the preview (one :class:`~.noise.UnitNoise` per run, seeds ``seed+1 …`` like the R-run average of
:func:`~.metrics.mae_over_runs`) and the pipeline's preview runner (:func:`~.pipeline.plan` then
:func:`~.pipeline.run_preview`), so the sweep draws no new noise per ε and the curve at the current ε is the
Metrics table's number. The curves do not depend on the target: changing the target only re-reads them
(:func:`smallest_epsilon`). :func:`epsilon_for_error` does both.

Computed on the true data, the answer is *not itself private*: choosing ε from it can reveal something
about the data. :func:`map_landmarks` carries the landmark rule over to another (public or similar) file so
the user can plan there instead.

The target is "informative" by default (issue 44): :func:`informative_target`, :data:`~.advice.INFORMATIVE_RATIO`
× the error of publishing one constant (:func:`~.metrics.constant_error`). A target the constant already meets
is no target: :func:`planner_target` lowers any requested target to the informative one.

``error_field`` names the error: ``"mae"`` (the raw release) or ``"mae_denoised"`` (the kind's
post-processing, :func:`~.pipeline.denoised_values`; refused when the kind has none).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..data.series import Series
from ..engine.pipeline import denoised_values, kind_of, plan, run_preview
from ..engine.release import Release, normalize_landmarks
from ..kernel.noise import UnitNoise
from ..kernel.settings import LANDMARK_SCHEMES, PrivacySettings
from .advice import INFORMATIVE_RATIO
from .metrics import constant_error, error_per_event

#: ``parse_target``'s word for :func:`informative_target`
INFORMATIVE = "informative"

ERROR_FIELDS = ("mae", "mae_denoised")


def log_grid(lo: float = 0.01, hi: float = 100.0, points: int = 24) -> np.ndarray:
    """``points`` values of ε evenly spaced on a log scale from ``lo`` to ``hi`` (both included)."""
    if not (0 < lo < hi) or points < 2:
        raise ValueError(f"the ε grid needs 0 < lo < hi and at least 2 points, got {lo}, {hi}, {points}")
    return np.geomspace(lo, hi, int(points))


DEFAULT_GRID = log_grid()


@dataclass(frozen=True)
class ErrorCurves:
    """Each scheme's mean error over ``runs`` runs at every ε of ``grid`` (NaN where it was not computed)."""

    grid: np.ndarray
    errors: dict[str, np.ndarray]
    runs: int
    error_field: str = "mae"


@dataclass(frozen=True)
class EpsilonAdvice:
    """The curves, the target they were read against, and scheme → smallest grid ε meeting it (None: not
    reached up to the grid's largest ε)."""

    curves: ErrorCurves
    target: float
    smallest: dict[str, float | None]


def _error(series: Series, release: Release, settings: PrivacySettings, error_field: str) -> float:
    if error_field == "mae_denoised":
        den = denoised_values(release, settings)
        if den is None:
            raise ValueError(f"no denoiser for {series.kind} series: choose error_field='mae'")
        release = Release(**{**release.__dict__, "values": den.values})
    err = error_per_event(series, release, settings)
    return float(np.nanmean(err)) if err.size and not np.all(np.isnan(err)) else math.nan


def error_curves(series: Series, landmarks, settings: PrivacySettings, *,
                 schemes: Iterable[str] = LANDMARK_SCHEMES, runs: int = 20, grid: Sequence[float] | None = None,
                 seed: int = 0, error_field: str = "mae", should_cancel: Callable[[], bool] | None = None,
                 progress: Callable[[int, int], None] | None = None) -> ErrorCurves | None:
    """Mean error of each scheme at each grid ε over ``runs`` runs (common random numbers); None when
    cancelled. ``settings.epsilon`` is ignored (the grid replaces it)."""
    if error_field not in ERROR_FIELDS:
        raise ValueError(f"unknown error field {error_field!r}; choose one of {', '.join(ERROR_FIELDS)}")
    if runs < 1:
        raise ValueError("runs must be at least 1")
    g = np.asarray(DEFAULT_GRID if grid is None else grid, dtype=np.float64)
    schemes = tuple(schemes)
    lm = normalize_landmarks(landmarks, series.n)
    inp = kind_of(series).prepare(series, settings)  # the protected input does not depend on ε
    sums = {s: np.zeros(g.size) for s in schemes}
    counts = {s: np.zeros(g.size) for s in schemes}
    total, done = runs * g.size, 0
    for r in range(runs):
        noise = UnitNoise(series.n, seed + 1 + r)
        for j, eps in enumerate(g):
            if should_cancel is not None and should_cancel():
                return None
            st = settings.with_(epsilon=float(eps))
            for s in schemes:
                e = _error(series, run_preview(plan(series, lm, st, s, inp=inp), noise), st, error_field)
                if math.isfinite(e):
                    sums[s][j] += e
                    counts[s][j] += 1
            done += 1
            if progress is not None:
                progress(done, total)
    with np.errstate(invalid="ignore"):
        errors = {s: np.where(counts[s] > 0, sums[s] / np.maximum(counts[s], 1), np.nan) for s in schemes}
    return ErrorCurves(g, errors, runs, error_field)


def smallest_epsilon(curves: ErrorCurves, target: float) -> dict[str, float | None]:
    """Scheme → the smallest grid ε from which on the mean error stays ≤ ``target`` (so a curve that dips
    below the target once and comes back above is not trusted there); None when not reached."""
    if not (math.isfinite(target) and target > 0):
        raise ValueError(f"the target error must be a positive number, got {target}")
    out: dict[str, float | None] = {}
    for s, err in curves.errors.items():
        ok = np.isfinite(err) & (err <= target)
        # from the largest ε down, the run of grid points that all meet the target
        bad = np.flatnonzero(~ok)
        first = 0 if bad.size == 0 else int(bad[-1]) + 1
        out[s] = float(curves.grid[first]) if first < curves.grid.size else None
    return out


def epsilon_for_error(series: Series, landmarks, settings: PrivacySettings, target: float, *,
                      schemes: Iterable[str] = LANDMARK_SCHEMES, runs: int = 20,
                      grid: Sequence[float] | None = None, seed: int = 0, error_field: str = "mae",
                      should_cancel: Callable[[], bool] | None = None,
                      progress: Callable[[int, int], None] | None = None) -> EpsilonAdvice | None:
    """Per scheme, the smallest ε on ``grid`` (default 24 points 0.01…100) whose error averaged over ``runs``
    runs is at most ``target`` (in the data's units). None when cancelled."""
    if not (math.isfinite(target) and target > 0):
        raise ValueError(f"the target error must be a positive number, got {target}")
    curves = error_curves(series, landmarks, settings, schemes=schemes, runs=runs, grid=grid, seed=seed,
                          error_field=error_field, should_cancel=should_cancel, progress=progress)
    if curves is None:
        return None
    return EpsilonAdvice(curves, float(target), smallest_epsilon(curves, target))


def informative_target(series: Series) -> float | None:
    """The largest expected error still clearly below publishing one constant: ``INFORMATIVE_RATIO ×``
    :func:`~.metrics.constant_error` (None when the series has no yardstick: empty or constant)."""
    y = constant_error(series)
    return INFORMATIVE_RATIO * y if math.isfinite(y) and y > 0 else None


def planner_target(requested: float | None, series: Series) -> tuple[float | None, bool]:
    """(the target to plan for, whether ``requested`` was lowered): ``requested`` (None: the informative
    target itself), but never above :func:`informative_target`, which a constant meets."""
    inf = informative_target(series)
    if requested is None:
        return inf, False
    if inf is not None and requested > inf:
        return inf, True
    return requested, False


def parse_target(text: str | float, scale: float | None, informative: float | None = None) -> float:
    """A target error: a number in the data's units, ``"5%"`` of ``scale`` (the data's range), or
    ``"informative"`` (``informative``, :func:`informative_target`)."""
    s = str(text).strip()
    if s.lower() == INFORMATIVE:
        if informative is None:
            raise ValueError("the data has no constant's error to stay below (empty or constant series); "
                             "give the error in its units")
        return informative
    try:
        if s.endswith("%"):
            if scale is None or not scale > 0:
                raise ValueError("the data has no range to take a percentage of; give the error in its units")
            value = float(s[:-1]) / 100.0 * scale
        else:
            value = float(s)
    except ValueError as e:
        if "range" in str(e):
            raise
        raise ValueError(f"target error {s!r} is not a number or a percentage such as 5%") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"the target error must be positive, got {s!r}")
    return value


def map_landmarks(landmarks, n_from: int, n_to: int) -> np.ndarray:
    """The landmarks of a series of ``n_from`` events carried to one of ``n_to`` events, for planning ε on
    another file: the landmark mask resampled by nearest neighbour (row ``j`` of the new file is a landmark
    when the original row at the same relative position, ``⌊(j + ½)·n_from/n_to⌋``, is one). Shares and
    positions carry over; blocks stay blocks."""
    lm = normalize_landmarks(landmarks, n_from)
    if n_to <= 0 or n_from <= 0 or lm.size == 0:
        return np.zeros(0, dtype=np.int64)
    mask = np.zeros(n_from, dtype=bool)
    mask[lm] = True
    src = np.minimum(((np.arange(n_to) + 0.5) * (n_from / n_to)).astype(np.int64), n_from - 1)
    return np.flatnonzero(mask[src]).astype(np.int64)
