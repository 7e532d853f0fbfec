"""The plots' axes and their column grid: timestamps on the x axis (:class:`TimeAxis`), category names on
the y axis (:class:`CategoryAxis`), cached axis pictures, legends and titles that may be cut.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QGraphicsItem

#: the column grid shared by the series plot and the rows below it (px): rotated scheme name, left axis,
#: notes on the right (the series plot's legend sits there)
LABEL_W, AXIS_W, NOTE_W = 22, 50, 160


def format_time(t: np.datetime64, span_seconds: float) -> str:
    s = str(np.datetime_as_string(t, unit="s")).replace("T", " ")
    if span_seconds < 2 * 86400:
        return s[5:] if span_seconds > 3600 * 6 else s[11:]
    return s[:16]


class TimeAxis(pg.AxisItem):
    """Bottom axis labelling row positions with the events' timestamps."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._times: np.ndarray | None = None
        self.setLabel("time")

    def set_times(self, times: np.ndarray | None) -> None:
        self._times = times
        self.picture = None
        self.update()

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - Qt naming
        t = self._times
        if t is None or t.size == 0:
            return [f"{v:g}" for v in values]
        span = (t[-1] - t[0]) / np.timedelta64(1, "s") if t.size > 1 else 0.0
        out = []
        for v in values:
            i = int(round(v))
            out.append(format_time(t[i], float(span)) if 0 <= i < t.size and abs(v - i) < 1e-6 else "")
        return out

    def tickValues(self, minVal, maxVal, size):  # noqa: N802, N803 - Qt naming
        # Ticks only on whole rows (labels are timestamps of events).
        levels = super().tickValues(minVal, maxVal, size)
        out = []
        for spacing, values in levels:
            if spacing < 1:
                continue
            vals = [v for v in values if abs(v - round(v)) < 1e-9]
            out.append((spacing, vals))
        out = out or [(1.0, [float(v) for v in range(int(math.ceil(minVal)), int(maxVal) + 1)][:10])]
        return self._fitting(out, size)

    def _fitting(self, levels: list, size: float) -> list:
        """The levels whose labels fit side by side in ``size`` pixels: a timestamp label is ≈ 100 px wide
        ("2013-01-15 14:00"), and pyqtgraph spaces ticks by numbers alone, so labels ran into each other in a
        narrow or zoomed plot. When not even the first level fits, every k-th of its ticks."""
        t = self._times
        if t is None or t.size == 0 or not levels:
            return levels
        span = (t[-1] - t[0]) / np.timedelta64(1, "s") if t.size > 1 else 0.0
        width = QFontMetrics(self.style.get("tickFont") or self.font()).horizontalAdvance(
            format_time(t[0], float(span))) + 16
        room = max(1, int(size // width))
        kept, used = [], 0
        for spacing, vals in levels:
            if used + len(vals) > room:
                break
            kept.append((spacing, vals))
            used += len(vals)
        if not kept:
            spacing, vals = levels[0]
            step = -(-len(vals) // room)
            kept = [(spacing * step, vals[::step])]
        return kept


class CategoryAxis(pg.AxisItem):
    """Left axis labelling category codes with their names."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._labels: tuple[str, ...] | None = None

    def set_labels(self, labels: tuple[str, ...] | None) -> None:
        self._labels = labels
        self.picture = None
        self.update()

    def tickValues(self, minVal, maxVal, size):  # noqa: N802, N803 - Qt naming
        levels = super().tickValues(minVal, maxVal, size)
        if self._labels is None:
            return levels
        # Whole codes only, at the axis' own spacing (≥ 1), so labels never pile up.
        out = []
        for spacing, values in levels:
            if spacing < 1:
                continue
            out.append((spacing, [v for v in values if abs(v - round(v)) < 1e-9 and 0 <= v < len(self._labels)]))
        return out or [(1.0, [float(i) for i in range(len(self._labels))])]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - Qt naming
        if self._labels is None:
            return super().tickStrings(values, scale, spacing)
        out = []
        for v in values:
            i = int(round(v))
            out.append(self._labels[i][:14] if 0 <= i < len(self._labels) else "")
        return out


def _shrinkable(label: pg.LabelItem) -> None:
    """Let a label be cut at the right instead of forcing its layout as wide as its text (LabelItem sets its
    minimum width from the text on every setText)."""
    update = label.updateMin

    def update_min() -> None:
        update()
        label.setMinimumWidth(0)

    label.updateMin = update_min  # type: ignore[method-assign]


def _legend(plot: pg.PlotItem, offset=(-10, 5)) -> pg.LegendItem:
    legend = plot.addLegend(offset=offset, labelTextSize="8pt", verSpacing=-6)
    legend.setBrush(pg.mkBrush(255, 255, 255, 210))
    legend.setPen(pg.mkPen(200, 200, 200))
    return legend


def cache_axes(plot: pg.PlotItem) -> None:
    """Paint each axis (its ticks, labels and grid) from a pixmap until the axis itself changes: a click
    repaints the rows but rarely their axes, and replaying the axis pictures was ≈ 20 ms of a 10^5 click
    (issue 15). pyqtgraph calls ``update()`` on an axis whenever its range, ticks or label change, which
    invalidates the cache."""
    for name in ("left", "bottom", "right", "top"):
        plot.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
