"""The values a plot shows for a series (display values, y range, y label) and what the loaders make of
them off the GUI thread (:func:`load_for_view`).
"""

from __future__ import annotations

import weakref

import numpy as np

from ...core.data.loader import load_series
from ...core.data.series import Series
from ...core.kernel import mechanisms
from ...core.publish.writers import value_units
from .envelopes import BLOCK, block_extremes


def display_values(series: Series, values: np.ndarray) -> np.ndarray:
    """What the y axis shows for one kind: numeric values; distance in metres from the series' first
    point (location); category codes (categorical, −1 → gap)."""
    if series.kind == "numeric":  # (a large window's denoised lines are float32: core.preview.compact_denoised)
        return values if values.dtype == np.float32 else np.asarray(values, dtype=np.float64)
    if series.kind == "location":
        if series.n == 0:
            return np.zeros(0)
        start = np.broadcast_to(series.values[0], values.shape)
        return mechanisms.haversine(start, values)
    v = np.asarray(values, dtype=np.float64)
    return np.where(v < 0, np.nan, v)


def robust_range(values: np.ndarray, bounds: tuple[float, float] | None = None) -> tuple[float, float]:
    """The preview rows' y range: the public bounds when set, else the 0.5–99.5 percentiles of the
    original; padded by 8 % so the off-chart marks sit outside the data."""
    if bounds is not None:
        lo, hi = float(bounds[0]), float(bounds[1])
    else:
        # A regular subsample is plenty for two percentiles; taken before dropping the gaps, so that no
        # series-sized copy is made (the copy held the GUI thread ≈ 60 ms on opening 10^7 events).
        sub = values[::max(1, values.size // 200_000)]
        v = sub[np.isfinite(sub)]
        if v.size == 0:
            return 0.0, 1.0
        lo, hi = (float(q) for q in np.percentile(v, [0.5, 99.5]))
        if v.size <= 200:  # few events: the whole original
            lo, hi = float(v.min()), float(v.max())
    span = hi - lo
    if not span > 0:
        span = abs(hi) or 1.0
    pad = 0.08 * span
    return lo - pad, hi + pad


_RANGES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Series → robust_range of its line


def series_range(series: Series) -> tuple[float, float]:
    """:func:`robust_range` of the series line without public bounds, made once per series: the loaders call
    this on their thread (with the line's pyramid, :func:`load_for_view`), so that opening 10^7 events does not
    take its subsample and percentiles on the GUI thread."""
    got = _RANGES.get(series)
    if got is None:
        got = _RANGES[series] = robust_range(display_values(series, series.values))
    return got


def y_label(series: Series) -> str:
    """The value axis's name: a numeric series' column and its unit ("kwh" → "kWh", "Verbrauch (kWh)" as it is,
    "power" of a series in W → "power (W)"), as the metrics' headers name the errors' unit."""
    if series.kind == "numeric":
        col = series.value_columns[0] if series.value_columns else "value"
        unit = series.unit or value_units(series)
        if not unit or unit in col:
            return col
        return unit if col.lower() == unit.lower() else f"{col} ({unit})"
    if series.kind == "location":
        return "distance from start (m)"
    return "category"


_PYRAMIDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Series → block_extremes of its line


def series_pyramid(series: Series, y: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """The min/max pyramid of the series line ``y`` (its display values, computed when not given; None for
    short series), made once per series; the loaders call this on their thread so that opening 10^7 events
    does not compute it on the GUI thread (≈ 14 ms)."""
    if series.n <= 2 * BLOCK:
        return None
    got = _PYRAMIDS.get(series)
    if got is None:
        got = _PYRAMIDS[series] = block_extremes(display_values(series, series.values) if y is None else y)
    return got


def load_for_view(path: str, options: dict) -> Series:
    """``load_series`` plus what drawing the series needs that can be made off the GUI thread (its line's
    pyramid, the preview rows' y range): the body of every loader job of the window (File › Open, the import
    dialog, projects, persons)."""
    series = load_series(path, **options)
    series_pyramid(series)
    series_range(series)
    return series
