"""Which scheme to publish, and whether the release tells more than one number (issues 14 and 44).

One rule, shared by the export dialog and ``lmdk compare``: among the schemes that pass the landmark-sum check
and are *informative*, the one with the lowest *expected* error — the R-run average the preview already
computed, never a new computation. Equal errors go to a landmark-private scheme before a baseline (then display
order). None is advised when no passing scheme is informative.

The yardstick (issue 44) is :func:`~.metrics.constant_error`: the error of publishing one constant (the
series' median, geometric median or mode) at every event. A scheme is informative when its expected error is
at most :data:`INFORMATIVE_RATIO` × that error (:func:`informative`); otherwise the release carries no more
information than that one number, whatever its ε.

The error field is a parameter (``error_field="mae"``; a denoised release adds ``"mae_denoised"``), so the
advice does not change when another error is the one the user cares about.

:func:`noise_warning` says so when the expected error is not clearly below the yardstick. It only warns; the
export is not blocked (the release is private either way). :func:`data_range` (the public bounds' width or the
data's min–max, a track's extent, a random guess's mismatch rate) stays the scale of a target given in percent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ..data.series import Series
from ..kernel.mechanisms import haversine
from ..kernel.settings import ALL_SCHEMES, LANDMARK_SCHEMES, SCHEME_LABELS, PrivacySettings
from .metrics import RunStats, constant_error, mae_over_runs, readable_number

#: Errors within this relative distance count as equal (the same release computed twice, Uniform = Balanced
#: without landmarks): then a landmark-private scheme wins over a baseline.
TIE_TOLERANCE = 1e-9


def passes(verdict: bool | str | None) -> bool:
    """A verdict as the pipeline gives it: ``export_verdicts``' reason ('' = passes) or a bool."""
    return verdict is True or verdict == ""


def errors_of(entries: Mapping[str, object], error_field: str = "mae") -> dict[str, float]:
    """Scheme → expected error from per-scheme entries: dicts (``lmdk compare``'s rows) or objects holding
    ``error_field`` (a number or a :class:`~.metrics.RunStats`), or a :class:`~.metrics.RunStats` itself (the
    session's R-run average: ``mean`` for ``"mae"``, ``mean_denoised`` for ``"mae_denoised"``). A missing field is NaN (never advised),
    so a denoised error is never silently replaced by the raw one."""
    out = {}
    for s, e in entries.items():
        v = e.get(error_field) if isinstance(e, Mapping) else getattr(e, error_field, None)
        if v is None and error_field == "mae" and isinstance(e, RunStats):
            v = e
        elif v is None and error_field == "mae_denoised" and isinstance(e, RunStats):
            v = e.mean_denoised  # NaN when the average was computed without denoising
        if isinstance(v, RunStats):
            v = v.mean
        out[s] = float(v) if v is not None else math.nan  # type: ignore[arg-type]
    return out


#: A scheme is informative when its expected error is at most this share of the constant yardstick: "clearly
#: below" it, not within the runs' scatter of it (an expected error of 0.95 × the yardstick is a release whose
#: single draw is as likely as not to be worse than the constant).
INFORMATIVE_RATIO = 0.9

#: What every surface says when no scheme (or the chosen one) beats the yardstick.
UNINFORMATIVE_HELP = "larger ε, a smaller Δ, public bounds or a coarser resolution would help"


def informative(error: float, yardstick: float | None) -> bool:
    """Whether an expected ``error`` is clearly below the constant ``yardstick`` (:data:`INFORMATIVE_RATIO`).
    A NaN error is not; an unknown (None or NaN) yardstick judges nothing (True); a yardstick of 0 (a constant
    series) is met by the constant itself, so nothing is informative."""
    if not math.isfinite(error):
        return False
    if yardstick is None or not math.isfinite(yardstick):
        return True
    return yardstick > 0 and error <= INFORMATIVE_RATIO * yardstick


def spreads_of(entries: Mapping[str, object], error_field: str = "mae") -> dict[str, tuple[float, float]]:
    """Scheme → (10th, 90th percentile) of the runs' errors behind :func:`errors_of`'s mean: from a
    :class:`~.metrics.RunStats` (``p10``/``p90``, or ``p10_denoised``/``p90_denoised`` for ``"mae_denoised"``)
    or a dict with ``<error_field>_p10``/``_p90`` (``lmdk compare``'s rows); (NaN, NaN) when unknown."""
    out = {}
    for s, e in entries.items():
        if isinstance(e, RunStats):
            den = error_field == "mae_denoised"
            out[s] = (e.p10_denoised, e.p90_denoised) if den else (e.p10, e.p90)
        elif isinstance(e, Mapping):
            lo, hi = e.get(f"{error_field}_p10"), e.get(f"{error_field}_p90")
            out[s] = (math.nan if lo is None else float(lo), math.nan if hi is None else float(hi))
        else:
            out[s] = (math.nan, math.nan)
    return out


def _rank(scheme: str) -> tuple[int, int]:
    return (0 if scheme in LANDMARK_SCHEMES else 1, ALL_SCHEMES.index(scheme) if scheme in ALL_SCHEMES else 99)


def best_scheme(verdicts: Mapping[str, bool | str | None], errors: Mapping[str, float],
                yardstick: float | None = None) -> str | None:
    """The passing, informative (against ``yardstick``, when given) scheme with the lowest finite expected
    error; ties → landmark-private over baselines. None when no scheme passes, none is informative or no
    passing scheme has an error yet."""
    cands = [s for s, v in verdicts.items() if passes(v) and math.isfinite(errors.get(s, math.nan))
             and informative(errors[s], yardstick)]
    if not cands:
        return None
    low = min(errors[s] for s in cands)
    tied = [s for s in cands if errors[s] <= low + TIE_TOLERANCE * max(abs(low), 1e-300)]
    return min(tied, key=_rank)


def data_range(series: Series, settings: PrivacySettings) -> float | None:
    """The scale the expected error is compared with: the public bounds' width, else the data's min–max
    (numeric); the track's bounding-box diagonal in metres (location); the mismatch rate of a uniform random
    guess, 1 − 1/k (categorical). None for an empty series."""
    if series.n == 0:
        return None
    if series.kind == "numeric":
        if settings.bounds is not None:
            return float(settings.bounds[1] - settings.bounds[0])
        v = series.values[np.isfinite(series.values)]
        return float(np.ptp(v)) if v.size else None
    if series.kind == "location":
        lo = np.nanmin(series.values, axis=0)
        hi = np.nanmax(series.values, axis=0)
        return float(haversine(lo.reshape(1, 2), hi.reshape(1, 2))[0])
    k = len(settings.categories or series.categories or ())
    return 1.0 - 1.0 / k if k > 1 else None


def range_label(series: Series) -> str:
    return {"numeric": "a data range", "location": "a track extent",
            "categorical": "a random guess's mismatch rate"}[series.kind]


def fmt(value: float, unit: str) -> str:
    """A number for people: 3 significant digits and the unit (no unit for a rate)."""
    if not math.isfinite(value):
        return "—"
    u = "" if unit in ("", "share", "mismatch rate") else f" {unit}"
    return f"{readable_number(value, 3)}{u}"


CONSTANT_LABEL = {"numeric": "the series' median", "location": "the track's geometric median",
                  "categorical": "the most frequent category"}


def constant_sentence(series: Series, yardstick: float, unit: str) -> str:
    """What the yardstick is, for people: "0.152 kWh, publishing the series' median at every event"."""
    return f"{fmt(yardstick, unit)}, publishing {CONSTANT_LABEL[series.kind]} at every event"


def noise_warning(error: float, series: Series, settings: PrivacySettings, unit: str,
                  scheme: str | None = None) -> str:
    """'' or one sentence when the expected ``error`` is not clearly below the constant yardstick
    (:func:`informative`, :func:`~.metrics.constant_error`): the release is no better than publishing a
    constant. ``settings`` is kept for the callers (the yardstick depends on the true series only)."""
    yardstick = constant_error(series)
    if not math.isfinite(error) or informative(error, yardstick):
        return ""
    who = f" ({SCHEME_LABELS.get(scheme, scheme)})" if scheme else ""
    return (f"this release{who} is no better than publishing a constant: expected error {fmt(error, unit)} vs "
            f"{constant_sentence(series, yardstick, unit)} — {UNINFORMATIVE_HELP}")


def none_informative(series: Series, unit: str) -> str:
    """The sentence shown when no passing scheme is informative (nothing is advised)."""
    return (f"No scheme is informative: every expected error is no better than publishing one constant "
            f"({constant_sentence(series, constant_error(series), unit)}) — {UNINFORMATIVE_HELP}.")


#: Runs of :func:`release_estimate` (``lmdk export``'s check): enough to tell a release far from the yardstick
#: from one at it, cheap next to the export itself.
ESTIMATE_RUNS = 5


def release_estimate(series: Series, landmarks, settings: PrivacySettings, scheme: str, *, dummies=None,
                     runs: int = ESTIMATE_RUNS, seed: int = 0) -> float:
    """The expected error of what an export of ``scheme`` publishes (denoised when ``settings.denoise``):
    the mean over ``runs`` simulated releases of :func:`~.metrics.mae_over_runs` (with ``dummies``, each run
    draws its own selection, as the export does: :func:`~..kernel.dummies.mae_runs_with_dummies`). Guidance
    on the true data, never published."""
    if dummies is not None and series.n > np.asarray(landmarks).size:
        from ..kernel.dummies import mae_runs_with_dummies

        try:
            stats = mae_runs_with_dummies(series, landmarks, settings, dummies, runs=runs, seed=seed,
                                          schemes=(scheme,), denoise=settings.denoise)[1][scheme]
        except ValueError:  # the generator refuses (Optimal beyond its limit): the export says so itself
            return math.nan
    else:
        stats = mae_over_runs(series, landmarks, settings, runs=runs, seed=seed, schemes=(scheme,),
                              denoise=settings.denoise)[scheme]
    return stats.mean_denoised if settings.denoise and math.isfinite(stats.mean_denoised) else stats.mean
