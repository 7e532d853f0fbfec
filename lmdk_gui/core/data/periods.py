"""A coarser release resolution (DESIGN §12): events grouped into calendar periods (an hour, a day, a week).

Where an hourly value is lost in noise whatever the scheme, a day's total under the same protection (one
event changes by at most Δ) is released with noise of the same scale for a value many times larger.

:func:`to_periods` bins the events by their timestamps (only periods that hold events), aggregates each period
(``sum``, or ``mean``: the sum divided by the public count |P_j|) and marks a period holding a landmark as a
landmark period. Protection is unchanged: neighbouring inputs differ by at most Δ in one regular event and in
each landmark event. A regular period therefore changes by at most S_j = Δ, a landmark period by at most
S_j = Δ·|P_j| (a public bound: it does not say how many of its events are landmarks); for the mean both are
divided by |P_j|. With noise Lap(S_j/ε_j) the loss of any neighbouring pair is
Σ_j ε_j·|Δy_j|/S_j ≤ Σ_{landmark periods} ε_j + ε_{period of the regular event}: landmark privacy over the
periods, so the schemes and the independent landmark-sum check apply unchanged to the period budgets. The
mechanism reads S_j/Δ from :meth:`~.series.Periods.multipliers` of the plan's landmark set (with dummy
landmarks, dummy periods get the landmark periods' S_j: sound, and their noise does not tell them apart).

Public bounds clamp each event before aggregation. A period mean then lies in the same bounds; a period sum
lies in [lo·|P_j|, hi·|P_j|], which differ per period, so :func:`period_settings` drops the scalar bounds for
a sum (the events were clamped already).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..kernel.settings import PrivacySettings
from .series import Periods, Series

AGGREGATES = ("sum", "mean")

_WORDS = {"h": "hour", "min": "minute", "s": "second", "D": "day", "W": "week"}


@dataclass(frozen=True, eq=False)
class PeriodView:
    """The period series, its landmark periods and each period's sensitivity S_j (data units)."""

    series: Series
    landmarks: np.ndarray
    sensitivity: np.ndarray


def parse_resolution(text: str) -> tuple[str, str]:
    """``(canonical, label)`` for a resolution like ``"1D"``, ``"7D"``, ``"1W"``, ``"6h"``; ValueError
    (one line) for anything else. Weeks start on Monday; other lengths are fixed spans floored from
    1970-01-01."""
    t = str(text).strip()
    if t.upper() in ("W", "1W"):
        return "1W", "week"
    try:
        # (months, business days…: not one fixed length, refused by Timedelta)
        delta = pd.Timedelta(pd.tseries.frequencies.to_offset(t))  # type: ignore[arg-type]
    except (ValueError, TypeError):
        raise ValueError(f"resolution {text!r}: expected a period like 1h, 6h, 1D, 7D or 1W") from None
    if not delta > pd.Timedelta(0):
        raise ValueError(f"resolution {text!r}: the period must be longer than zero")
    label = _label(delta)
    return _canonical(delta), label


def _canonical(delta: pd.Timedelta) -> str:
    secs = int(delta.total_seconds())
    if delta != pd.Timedelta(seconds=secs):
        raise ValueError(f"resolution {delta}: use a whole number of seconds")
    for unit, size in (("D", 86400), ("h", 3600), ("min", 60)):
        if secs % size == 0:
            return f"{secs // size}{unit}"
    return f"{secs}s"


def _label(delta: pd.Timedelta) -> str:
    c = _canonical(delta)
    num = int("".join(ch for ch in c if ch.isdigit()))
    word = _WORDS[c.lstrip("0123456789")]
    if word == "day" and num == 7:
        return "7 days"
    return word if num == 1 else f"{num} {word}s"


def period_starts(times: np.ndarray, resolution: str) -> np.ndarray:
    """Each event's period start (datetime64[ns]), by the calendar bins of ``resolution``."""
    canon, _ = parse_resolution(resolution)
    idx = pd.DatetimeIndex(np.asarray(times).astype("datetime64[ns]"))
    if canon == "1W":
        return idx.to_period("W-SUN").start_time.to_numpy().astype("datetime64[ns]")
    return idx.floor(pd.Timedelta(canon)).to_numpy().astype("datetime64[ns]")


def to_periods(series: Series, landmarks, resolution: str, how: str = "sum", *, sensitivity: float = 1.0,
               bounds: tuple[float, float] | None = None, lower_bound: float | None = None) -> PeriodView:
    """The period view of a numeric series (see the module docstring). ``landmarks`` are event rows;
    ``sensitivity`` Δ, ``bounds`` and ``lower_bound`` (one-sided) the public per-event settings. Raises ValueError (one line) for a
    non-numeric series, an unknown aggregate or resolution."""
    if series.kind != "numeric":
        raise ValueError(f"a coarser resolution works on numeric series only; this series is {series.kind}")
    if how not in AGGREGATES:
        raise ValueError(f"aggregate {how!r}: choose sum or mean")
    if series.periods is not None:
        raise ValueError("this series is already a period series")
    canon, label = parse_resolution(resolution)
    starts = period_starts(series.times, canon)
    # times are sorted, so each period's events are one run: its first row and its count
    first = np.flatnonzero(np.r_[True, starts[1:] != starts[:-1]]) if series.n else np.zeros(0, np.int64)
    counts = np.diff(np.r_[first, series.n]).astype(np.int64)
    x = series.values if bounds is None else np.clip(series.values, bounds[0], bounds[1])
    if lower_bound is not None:
        x = np.maximum(x, float(lower_bound))
    sums = np.add.reduceat(x, first) if series.n else np.zeros(0)
    values = sums / counts if how == "mean" else sums
    period_of = np.repeat(np.arange(first.size), counts)
    lm = np.asarray(landmarks, dtype=np.int64)
    lm_periods = np.unique(period_of[lm]) if lm.size else np.zeros(0, np.int64)
    from ..analysis.metrics import unit_label  # (the value column's unit, e.g. "kwh" → kWh)

    unit = unit_label(series)
    periods = Periods(resolution=canon, label=label, aggregate=how, counts=counts,
                      bounds=None if bounds is None else (float(bounds[0]), float(bounds[1])))
    out = replace(series, times=starts[first], values=values.astype(np.float64), periods=periods,
                  unit=f"{unit}/{label}" if how == "sum" else unit, _cache={})
    return PeriodView(out, lm_periods, float(sensitivity) * periods.multipliers(lm_periods))


def period_settings(settings: PrivacySettings, how: str) -> PrivacySettings:
    """The settings the period series is released with: the same, without scalar bounds for a sum (each
    event was clamped before aggregation; the sums' bounds differ per period). A lower bound alone stays for
    a sum only when it is 0: a sum of non-negative values is non-negative, while lo·|P_j| differs per period."""
    if how != "sum":
        return settings
    return settings.with_(bounds=None, lower_bound=0.0 if settings.lower_bound == 0 else None)


def apply_resolution(series: Series, landmarks, settings: PrivacySettings, resolution: str | None,
                     how: str = "sum") -> tuple[Series, np.ndarray, PrivacySettings]:
    """(series, landmarks, settings) one value per period of ``resolution``; as given without one."""
    if not resolution:
        return series, np.asarray(landmarks, dtype=np.int64), settings
    view = to_periods(series, landmarks, resolution, how, sensitivity=settings.sensitivity, bounds=settings.bounds,
                      lower_bound=settings.lower_bound)
    return view.series, view.landmarks, period_settings(settings, how)


def describe(periods: Periods) -> str:
    """The sentence the release statement and the window use, e.g. "one value per day (the sum of its
    events)"."""
    what = "the sum of its events" if periods.aggregate == "sum" else "the mean of its events"
    return f"one value per {periods.label} ({what})"
