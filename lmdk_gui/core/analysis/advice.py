"""Which scheme to publish, and whether the release will be mostly noise (issue 14, "Guidance").

One rule, shared by the export dialog and ``lmdk compare``: among the schemes that pass the landmark-sum check,
the one with the lowest *expected* error — the R-run average the preview already computed, never a new
computation. Equal errors go to a landmark-private scheme before a baseline (then display order).

The error field is a parameter (``error_field="mae"``; a denoised release adds ``"mae_denoised"``), so the
advice does not change when another error is the one the user cares about.

:func:`noise_warning` compares the expected error with the data's range: numeric values against the public
bounds' width (or the data's min–max), locations against the track's extent, categories against a random
guess. It only warns; the export is not blocked (the release is private either way).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ..data.series import Series
from ..kernel.mechanisms import haversine
from ..kernel.settings import ALL_SCHEMES, LANDMARK_SCHEMES, SCHEME_LABELS, PrivacySettings
from .metrics import RunStats, readable_number

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


def _rank(scheme: str) -> tuple[int, int]:
    return (0 if scheme in LANDMARK_SCHEMES else 1, ALL_SCHEMES.index(scheme) if scheme in ALL_SCHEMES else 99)


def best_scheme(verdicts: Mapping[str, bool | str | None], errors: Mapping[str, float]) -> str | None:
    """The passing scheme with the lowest finite expected error; ties → landmark-private over baselines.
    None when no scheme passes or no passing scheme has an error yet."""
    cands = [s for s, v in verdicts.items() if passes(v) and math.isfinite(errors.get(s, math.nan))]
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


def noise_warning(error: float, series: Series, settings: PrivacySettings, unit: str,
                  scheme: str | None = None) -> str:
    """'' or one sentence when the expected ``error`` exceeds the data's range (:func:`data_range`)."""
    rng = data_range(series, settings)
    if rng is None or not math.isfinite(error) or error <= rng:
        return ""
    who = f" ({SCHEME_LABELS.get(scheme, scheme)})" if scheme else ""
    return (f"this release{who} will be mostly noise: expected error {fmt(error, unit)} vs "
            f"{range_label(series)} of {fmt(rng, unit)}")
