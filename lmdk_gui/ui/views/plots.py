"""The plots: series (click to mark landmarks), per-scheme budget bars, noisy previews, location track.

Habits borrowed from pyqtgraph's examples and mne-qt-browser: items are created once and updated with
``setData``; the series line is handed to pyqtgraph only as what is drawn — the events in view, or, when
more events than pixel columns are in view, each pixel column's min and max (:func:`pixel_envelope`, redone
on every x-range change; at 10^7 events pyqtgraph never holds a series-sized copy); the other long items use
``setDownsampling(auto=True, method='peak')`` and ``setClipToView(True)``; a ViewBox subclass turns clicks
and modifier-drags into single calls on the session.

The x axis is the event's row (0..n-1) and its tick labels are the events' timestamps, so bars have equal
widths even when the sampling is uneven (the GPS track pauses for up to 138 s).
"""

from __future__ import annotations

import html
import math
import re
import warnings
import weakref

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QFontMetricsF, QPainter, QStaticText
from PySide6.QtWidgets import QGraphicsItem, QWidget

from ...core.data.loader import load_series
from ...core.data.series import Series
from ...core.kernel import mechanisms
from ...core.kernel.settings import SCHEME_LABELS
from ...core.publish.writers import value_units
from .curve import DotsItem
from .theme import (
    DUMMY_COLOR,
    LANDMARK_COLOR,
    ORIGINAL_COLOR,
    ORIGINAL_PREVIEW_COLOR,
    SCHEME_COLORS,
    darker,
    rgba,
)

pg.setConfigOptions(antialias=False, background="w", foreground="k")

#: markers are drawn only when at most this many events are in view
MARKER_LIMIT = 1500
#: noisy points drawn per scheme in the track view
TRACK_POINTS = 50_000
#: the column grid shared by the series plot and the rows below it (px): rotated scheme name, left axis,
#: notes on the right (the series plot's legend sits there)
LABEL_W, AXIS_W, NOTE_W = 22, 50, 160


# ------------------------------------------------------------------------------------ data helpers
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


#: characters of the series plot's rotated y label that fit its height at 1280×800
AXIS_LABEL_MAX = 16


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


def step_x(n: int) -> np.ndarray:
    """x of a step outline with one flat top per event: (-.5, .5, .5, 1.5, 1.5, …, n-.5)."""
    edges = np.arange(n + 1, dtype=np.float64) - 0.5
    return np.repeat(edges, 2)[1:-1]


def step_y(values: np.ndarray) -> np.ndarray:
    return np.repeat(np.asarray(values, dtype=np.float64), 2)


def step_runs(values: np.ndarray, edges: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The same step outline as ``(step_x(n), step_y(values))`` with one flat top per *run* of equal values:
    Uniform's budgets are one run, Skip's and a landmark band one run per landmark cluster. Far fewer points
    to downsample and bound on every update (x stays non-decreasing, as clip-to-view requires).
    ``edges`` (n + 1 values) gives each value's left edge and the last right edge (default: i ± 0.5)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return np.zeros(0), np.zeros(0)
    change = np.flatnonzero(v[1:] != v[:-1]) + 1
    starts = np.concatenate(([0], change))
    ends = np.concatenate((change, [v.size]))
    x = np.empty(2 * starts.size)
    if edges is None:
        x[0::2] = starts - 0.5
        x[1::2] = ends - 0.5
    else:
        x[0::2] = edges[starts]
        x[1::2] = edges[ends]
    return x, np.repeat(v[starts], 2)


def band_steps(rows: np.ndarray, n: int, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """``step_runs`` of n values that are ``hi`` at the sorted distinct ``rows`` and ``lo`` elsewhere, from the
    rows alone (O(|rows|), not O(n): at 10^6 events the click's band costs no series-sized array)."""
    r = np.asarray(rows, dtype=np.int64)
    if n == 0:
        return np.zeros(0), np.zeros(0)
    if r.size == 0:
        return np.array([-0.5, n - 0.5]), np.array([lo, lo], dtype=np.float64)
    brk = np.flatnonzero(np.diff(r) != 1) + 1
    s = r[np.concatenate(([0], brk))]  # first row of each run of consecutive rows
    e = r[np.concatenate((brk - 1, [r.size - 1]))] + 1  # one past its last row
    starts = np.empty(2 * s.size, dtype=np.int64)
    starts[0::2], starts[1::2] = s, e
    vals = np.empty(2 * s.size)
    vals[0::2], vals[1::2] = hi, lo
    if s[0] > 0:
        starts, vals = np.concatenate(([0], starts)), np.concatenate(([lo], vals))
    if e[-1] == n:
        starts, vals = starts[:-1], vals[:-1]
    x = np.empty(2 * starts.size)
    x[0::2] = starts - 0.5
    x[1::2] = np.append(starts[1:], n) - 0.5
    return x, np.repeat(vals, 2)


#: the series line is drawn event by event up to this many events per pixel column; beyond, as an envelope
EVENTS_PER_COLUMN = 2.0


#: rows per block of the min/max pyramid a long series line keeps (two arrays of n / 256 values)
BLOCK = 256


def block_extremes(y: np.ndarray, block: int = BLOCK) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of each ``block`` rows of ``y`` (NaN-ignoring), each followed by one NaN (so a reduceat
    index may point one past the last block)."""
    idx = np.arange(0, y.size, block)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = np.fmin.reduceat(y, idx) if y.size else np.zeros(0)
        hi = np.fmax.reduceat(y, idx) if y.size else np.zeros(0)
    return np.append(lo, np.nan), np.append(hi, np.nan)


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


def column_extremes(y: np.ndarray, starts: np.ndarray, end: int,
                    blocks: tuple[np.ndarray, np.ndarray] | None = None,
                    block: int = BLOCK) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of ``y`` over each column ``starts[i] .. starts[i+1]-1`` (the last ends at ``end``),
    NaN-ignoring. With ``blocks`` (:func:`block_extremes`) and columns of at least two blocks, the whole
    blocks inside a column come from the pyramid and only its partial head and tail (< ``block`` rows each)
    from ``y``: O(columns · block) instead of O(rows)."""
    ends = np.append(starts[1:], end + 1)
    if blocks is None or starts.size == 0 or int(np.min(ends - starts)) < 2 * block:
        seg = y[starts[0]:end + 1] if starts.size else y[:0]
        with np.errstate(invalid="ignore"):
            return np.fmin.reduceat(seg, starts - starts[0]), np.fmax.reduceat(seg, starts - starts[0])
    fb = -(-starts // block)  # first whole block of each column
    lb = ends // block  # one past its last whole block (fb < lb: each column spans ≥ 2 blocks)
    idx = np.empty(2 * starts.size, dtype=np.int64)
    idx[0::2], idx[1::2] = fb, lb
    blo, bhi = blocks
    with np.errstate(invalid="ignore"):
        lo = np.fmin.reduceat(blo, idx)[0::2]
        hi = np.fmax.reduceat(bhi, idx)[0::2]
    for first, stop in ((starts, fb * block), (lb * block, ends)):  # partial head and tail of each column
        part_lo, part_hi = _segment_extremes(y, first, stop)
        lo, hi = np.fmin(lo, part_lo), np.fmax(hi, part_hi)
    return lo, hi


def _segment_extremes(y: np.ndarray, first: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """NaN-ignoring min and max of each ``y[first[i]:stop[i]]`` (NaN when empty): one gather of those rows,
    reduced in place (a column's partial blocks padded to a full block each and reduced as a 2-D array took
    ≈ 4 ms of a full draw at 10^7 events)."""
    lens = np.maximum(stop - first, 0)
    lo, hi = np.full(first.size, np.nan), np.full(first.size, np.nan)
    total = int(lens.sum())
    if total == 0:
        return lo, hi
    offs = np.cumsum(lens) - lens  # where each segment starts among the gathered rows
    g = y[np.repeat(first - offs, lens) + np.arange(total)]
    some = lens > 0  # (the non-empty segments lie end to end in g)
    with np.errstate(invalid="ignore"):
        lo[some] = np.fmin.reduceat(g, offs[some])
        hi[some] = np.fmax.reduceat(g, offs[some])
    return lo, hi


def pixel_envelope(y: np.ndarray, a: int, b: int, x0: float, px_w: float,
                   blocks: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The line of rows ``a..b`` of ``y`` as a full draw would show it with one pixel column ``px_w`` rows
    wide starting at view x ``x0``: the rows themselves while at most :data:`EVENTS_PER_COLUMN` share a
    column, else per column its lowest value at the column's first row and its highest at its last
    (:func:`column_extremes`; NaN where a column holds no finite value, a gap with ``connect='finite'``).
    Column borders are the pixel borders, so each column's drawn extremes are the data's extremes in that
    column exactly."""
    if b < a:
        return np.zeros(0), np.zeros(0)
    if px_w <= EVENTS_PER_COLUMN or b - a + 1 <= 2 * EVENTS_PER_COLUMN:
        return np.arange(a, b + 1, dtype=np.float64), np.asarray(y[a:b + 1], dtype=np.float64)
    starts = pixel_columns(a, b, x0, px_w)
    lo, hi = column_extremes(y, starts, b, blocks)
    xs = np.empty(2 * starts.size)
    xs[0::2] = starts
    xs[1::2] = np.append(starts[1:] - 1, b)
    ys = np.empty(2 * starts.size)
    ys[0::2], ys[1::2] = lo, hi
    return xs, ys


def pixel_columns(a: int, b: int, x0: float, px_w: float) -> np.ndarray:
    """First row of each pixel column [x0 + j·px_w, x0 + (j+1)·px_w) that holds rows of ``a..b``."""
    j0 = max(0, math.floor((a - x0) / px_w))
    j1 = math.floor((b - x0) / px_w)
    starts = np.ceil(x0 + np.arange(j0, j1 + 1) * px_w).astype(np.int64)
    starts = np.unique(np.clip(starts, a, b + 1))
    starts = starts[starts <= b]
    if starts.size == 0 or starts[0] != a:
        starts = np.concatenate(([a], starts))
    return starts


def band_view(rows: np.ndarray, a: int, b: int, x0: float, px_w: float, lo: float,
              hi: float) -> tuple[np.ndarray, np.ndarray]:
    """The band of sorted ``rows`` (``hi`` there, ``lo`` elsewhere) over rows ``a..b`` as drawn: event by
    event while few events share a pixel column (:func:`band_steps` of the rows in view), else ``hi`` over
    each pixel column holding a row (what peak downsampling of the full band shows), from ``searchsorted``
    alone: O(columns · log |rows|), so a click at 10^7 events with 2·10^6 landmarks costs no O(|L|) pass."""
    if b < a:
        return np.zeros(0), np.zeros(0)
    if px_w <= EVENTS_PER_COLUMN:
        i0, i1 = np.searchsorted(rows, [a, b + 1])
        x, y = band_steps(np.asarray(rows[i0:i1]) - a, b - a + 1, lo, hi)
        return x + a, y
    starts = pixel_columns(a, b, x0, px_w)
    has = np.diff(np.searchsorted(rows, np.append(starts, b + 1))) > 0
    return step_runs(np.where(has, hi, lo), np.append(starts, b + 1).astype(np.float64) - 0.5)


class EnvelopeCurve(pg.PlotDataItem):
    """A line that holds only what is drawn (:func:`pixel_envelope`); its data bounds are those of the whole
    series (``set_bounds``), so auto-range behaves as if every event were handed over. pyqtgraph's own
    downsampling and clip-to-view are not applied: there is nothing left to reduce."""

    full_bounds: tuple[tuple[float, float], tuple[float, float]] | None = None

    def set_bounds(self, x: tuple[float, float], y: tuple[float, float]) -> None:
        self.full_bounds = (x, y)
        self.informViewBoundsChanged()

    def dataBounds(self, ax, frac=1.0, orthoRange=None):  # noqa: N802, N803 - pyqtgraph naming
        if self.full_bounds is None:
            return super().dataBounds(ax, frac, orthoRange)
        return self.full_bounds[ax]

    def setDownsampling(self, *args, **kwargs):  # noqa: N802 - pyqtgraph naming
        pass

    def setClipToView(self, *args, **kwargs):  # noqa: N802 - pyqtgraph naming
        pass


def _fast_plot(plot: pg.PlotItem) -> None:
    """Peak downsampling + clip-to-view for every curve of a plot. PlotItem.addItem re-applies the plot's own
    (context-menu) modes to each item it adds, so setting them only on the items is silently undone."""
    plot.setDownsampling(auto=True, mode="peak")
    plot.setClipToView(True)


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


class EagerViewBox(pg.ViewBox):
    """A view that takes its new transform as soon as its range changes. pyqtgraph sets it in the paint
    (``prepareForPaint``), and a transform set there marks every item dirty again: each zoom painted the
    series, budget and preview scenes twice (issue 15: their paints 35 → 16 ms per zoom at 10^6, same-run
    A/B). Several range changes before a paint cost one transform each, a few floats."""

    def updateViewRange(self, forceX=False, forceY=False):  # noqa: N802, N803 - pyqtgraph naming
        super().updateViewRange(forceX, forceY)
        self.updateMatrix()


class EventViewBox(EagerViewBox):
    """Left click → ``clicked(scenePos)``; Shift-drag → add range; Ctrl/Alt-drag → remove range.

    Plain drags pan; the wheel zooms time only (Ctrl+wheel zooms the values), so scrolling through a long
    series never squashes it vertically by accident.
    """

    clicked = Signal(object)
    rangeDragged = Signal(float, float, str)

    def __init__(self, *args, editable: bool = True, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.editable = editable
        self._region = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(rgba(LANDMARK_COLOR, 50)))
        self._region.setZValue(100)
        self._region.hide()
        self.addItem(self._region, ignoreBounds=True)

    @staticmethod
    def _mode(mods) -> str | None:
        if mods & Qt.KeyboardModifier.ShiftModifier:
            return "add"
        if mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier):
            return "remove"
        return None

    def mouseClickEvent(self, ev):  # noqa: N802 - Qt naming
        if self.editable and ev.button() == Qt.MouseButton.LeftButton and self._mode(ev.modifiers()) is None:
            ev.accept()
            self.clicked.emit(ev.scenePos())
            return
        super().mouseClickEvent(ev)

    def wheelEvent(self, ev, axis=None):  # noqa: N802 - Qt naming
        ctrl = bool(ev.modifiers() & Qt.KeyboardModifier.ControlModifier)
        super().wheelEvent(ev, axis=1 if ctrl else 0)

    def mouseDragEvent(self, ev, axis=None):  # noqa: N802 - Qt naming
        mode = self._mode(ev.modifiers()) if self.editable else None
        if ev.button() != Qt.MouseButton.LeftButton or mode is None:
            self._region.hide()
            super().mouseDragEvent(ev, axis)
            return
        ev.accept()
        x0 = self.mapSceneToView(ev.buttonDownScenePos()).x()
        x1 = self.mapSceneToView(ev.scenePos()).x()
        color = LANDMARK_COLOR if mode == "add" else (90, 90, 90)
        self._region.setBrush(pg.mkBrush(rgba(color, 50)))
        self._region.setRegion(sorted((x0, x1)))
        self._region.show()
        if ev.isFinish():
            self._region.hide()
            self.rangeDragged.emit(min(x0, x1), max(x0, x1), mode)


class PassiveScatter(pg.ScatterPlotItem):
    """Markers that let clicks through to the view (which picks the nearest event itself)."""

    _rect: QRectF | None = None

    def mouseClickEvent(self, ev):  # noqa: N802 - Qt naming
        ev.ignore()

    # The bounding rectangle, kept until the data bounds or the view's transform change, as PlotCurveItem
    # keeps its own: pyqtgraph's scatter works it out again from its pixel size on every call, and the scene
    # asks some 80 times a click (its index, the paint, the items under the pointer): ≈ 5 ms at 10^5. Every
    # change of data, size or transform resets ``bounds`` (pyqtgraph's data-bounds cache), and so this.
    @property
    def bounds(self):
        return self._bounds

    @bounds.setter
    def bounds(self, value) -> None:
        self._bounds = value
        self._rect = None

    def boundingRect(self):  # noqa: N802 - Qt naming
        if self._rect is None:
            self._rect = super().boundingRect()
        return QRectF(self._rect)  # (a copy: a caller may adjust what it gets)

    # PlotItem.setDownsampling / setClipToView call these on every item it holds; markers are drawn only for
    # the events in view (at most MARKER_LIMIT), so there is nothing to reduce.
    def setDownsampling(self, *args, **kwargs):  # noqa: N802 - pyqtgraph naming
        pass

    def setClipToView(self, *args, **kwargs):  # noqa: N802 - pyqtgraph naming
        pass

    def updateSpots(self, dataSet=None):  # noqa: N802, N803 - pyqtgraph naming
        """pyqtgraph looks every new spot's symbol up in its atlas by a Python loop over the spots (≈ 2 ms per
        1,000 points; a click at 2,000 events in view redrew eight scatters: 15-35 ms of the GUI thread).
        Our markers are set as x and y only, all in the item's one style: one look-up serves them all."""
        data = self.data if dataSet is None else dataSet
        if not (self.opts["pxMode"] and self.opts["useCache"]) or len(data) < 2 or not _one_style(data):
            super().updateSpots(dataSet)
            return
        new = data["sourceRect"]["w"] == 0
        if new.any():
            first = np.flatnonzero(new)[:1]
            style = next(zip(*self._style(["symbol", "size", "pen", "brush"], data=data, idx=first), strict=True))
            data["sourceRect"][new] = self.fragmentAtlas[[style]][0]
            self._maybeRebuildAtlas()
            self._updateMaxSpotSizes(data=data)
            self.invalidate()
        else:
            self._maybeRebuildAtlas()
            self._updateMaxSpotSizes(data=data)


def _one_style(data: np.ndarray) -> bool:
    """Every spot uses the item's own symbol, size, pen and brush (none was set per spot)."""
    return bool((data["size"] == -1).all() and all((data[k] == None).all() for k in ("symbol", "pen", "brush")))  # noqa: E711


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


#: the markup of notes and the hover box: line breaks, bold, subscript, and colour (of a bold run or a span);
#: anything else is text
_MARKUP = re.compile(r"<br>|<b(?: style='color:([^']*)')?>|</b>|<span style='color:([^']*)'>|</span>|<sub>|</sub>")
_CLOSE = ("</b>", "</span>", "</sub>")

Run = tuple[str, str | None, bool, bool]  # text, colour (None: black), bold, subscript


def markup_runs(markup: str) -> list[list[Run]]:
    """The lines of a markup text as runs of (text, colour, bold, subscript)."""
    lines: list[list[Run]] = [[]]
    style: list[tuple[str | None, bool, bool]] = [(None, False, False)]
    pos = 0
    for m in _MARKUP.finditer(markup):
        if m.start() > pos:
            lines[-1].append((html.unescape(markup[pos:m.start()]), *style[-1]))
        tag, color = m.group(0), m.group(1) or m.group(2)
        c, bold, sub = style[-1]
        if tag == "<br>":
            lines.append([])
        elif tag in _CLOSE:
            if len(style) > 1:
                style.pop()
        else:
            style.append((color or c, bold or tag.startswith("<b"), sub or tag == "<sub>"))
        pos = m.end()
    if pos < len(markup):
        lines[-1].append((html.unescape(markup[pos:]), *style[-1]))
    return lines if markup else []


class TextLines:
    """A few lines of short text runs (:func:`markup_runs`), each laid out once per text (QStaticText, at its
    first paint) and painted with the painter: what the rows' notes and the hover box show. pyqtgraph's
    LabelItem and TextItem are QGraphicsTextItems that parse and lay out their HTML on every new text,
    ≈ 0.35 ms each and several a click (issue 15). A run's layout and width are kept per text, font and size
    for every instance (:attr:`_laid`): a click gives the hover box and the eight row notes new texts, most of
    whose runs ("Uniform: ε", " of 101 beyond") they showed before."""

    #: (text, bold, subscript, point size) → (its QStaticText, its width); cleared when it grows past LAID_MAX
    _laid: dict[tuple[str, bool, bool, float], tuple[QStaticText, float]] = {}
    LAID_MAX = 2048

    def __init__(self, point_size: float = 8.0, margin: float = 4.0) -> None:
        self._size = point_size
        font = QFont()
        font.setPointSizeF(point_size)
        bold = QFont(font)
        bold.setBold(True)
        self._fonts = {(b, sub): QFont(f) for b, f in ((False, font), (True, bold)) for sub in (False, True)}
        for b in (False, True):
            self._fonts[(b, True)].setPointSizeF(point_size * 0.75)
        self._widths = {key: QFontMetricsF(f).horizontalAdvance for key, f in self._fonts.items()}
        metrics = QFontMetricsF(font)
        self._step, self._drop = metrics.lineSpacing(), metrics.ascent() * 0.45
        self.margin = margin
        self.markup = ""
        #: per line, its runs: laid-out text, font, pen, x and y offset
        self.lines: list[list[tuple[QStaticText, QFont, QColor, float, float]]] = []
        self.width = 0.0

    def set(self, markup: str) -> bool:
        """Show ``markup``; False when it already did."""
        if markup == self.markup:
            return False
        self.markup = markup
        laid = [self._layout(runs) for runs in markup_runs(markup)]
        self.lines = [runs for runs, _ in laid]
        self.width = max((end + self.margin for _, end in laid), default=0.0)
        return True

    def _layout(self, runs: list[Run]) -> tuple[list[tuple[QStaticText, QFont, QColor, float, float]], float]:
        out, x = [], self.margin
        for text, color, bold, sub in runs:
            st, width = self._run(text, bold, sub)
            out.append((st, self._fonts[(bold, sub)], QColor(color) if color else QColor(0, 0, 0), x,
                        self._drop if sub else 0.0))
            x += width
        return out, x

    def _run(self, text: str, bold: bool, sub: bool) -> tuple[QStaticText, float]:
        key = (text, bold, sub, self._size)
        hit = self._laid.get(key)
        if hit is None:
            if len(self._laid) >= self.LAID_MAX:
                self._laid.clear()
            st = QStaticText(text)  # (laid out at its first paint, then kept)
            st.setTextFormat(Qt.TextFormat.PlainText)
            hit = self._laid[key] = (st, self._widths[(bold, sub)](text))
        return hit

    def height(self) -> float:
        return 2 * self.margin + self._step * len(self.lines) if self.lines else 0.0

    def plain(self) -> str:
        return "\n".join("".join(st.text() for st, *_ in runs) for runs in self.lines)

    def paint(self, p) -> None:
        for i, runs in enumerate(self.lines):
            y = self.margin + i * self._step
            for st, font, color, x, dy in runs:
                p.setFont(font)  # (the painter's font is the one drawn: the text was laid out for it)
                p.setPen(color)
                p.drawStaticText(QPointF(x, y + dy), st)


class InfoBox(QWidget):
    """The series plot's hover box: :class:`TextLines` on a pale opaque box, a child widget over the plot's
    viewport (in its pixels, which are the scene's). Opaque, it is repainted alone when its text changes: as
    an item on the scene, each click's two new texts repainted the plot's line and markers under it as well
    (≈ 2.5 ms of the click at 10^5, issue 15), and the plot's own repaints skip the area it covers. Mouse
    events go through to the plot (a click under the box marks the event there)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("hoverBox")
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)  # (it paints every pixel it covers)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self._text = TextLines()
        self._fill = QColor(255, 255, 250)
        self._border = QColor(180, 180, 180)

    def setHtml(self, markup: str) -> None:  # noqa: N802 - pyqtgraph's TextItem's name
        if self._text.set(markup):
            self.resize(math.ceil(self._text.width), math.ceil(self._text.height()))
            self.update()

    def toPlainText(self) -> str:  # noqa: N802 - Qt naming
        return self._text.plain()

    def paintEvent(self, ev) -> None:  # noqa: N802 - Qt naming
        p = QPainter(self)
        p.fillRect(self.rect(), self._fill)
        p.setPen(self._border)
        p.drawRect(self.rect().adjusted(0, 0, -1, -1))
        self._text.paint(p)
        p.end()


def still_release_no_rehover(scene: pg.GraphicsScene) -> None:
    """Skip pyqtgraph's hover pass after a mouse release where the pointer still is where the last one ran.

    pyqtgraph re-sends hover events after every release (two look-ups of the items near the pointer, which ask
    every marker scatter for its bounds: ≈ 3.7 ms of a click at 10^5, before the click's preview can be shown).
    A pointer that has not moved is over the same items, and the pass at that place already ran when it got
    there (or at the press). Nothing of ours reacts to hover events (the read-out follows ``sigMouseMoved``);
    a drag that starts there finds its item by pyqtgraph's own search near the press."""
    send = scene.sendHoverEvents

    def send_hover(ev, exitOnly=False):  # noqa: N803 - pyqtgraph naming
        last = scene.lastHoverEvent
        if not exitOnly and ev.type() == QEvent.Type.GraphicsSceneMouseRelease and last is not None \
                and last.scenePos() == ev.scenePos():
            return
        send(ev, exitOnly)

    scene.sendHoverEvents = send_hover  # type: ignore[method-assign]


def set_data(item, *args, **kwargs) -> None:
    """``item.setData(*args, **kwargs)`` unless the item already shows exactly that data. pyqtgraph redoes an
    item's bounds, display data and path on every call (≈ 0.3 ms each even for a few points), and a click
    redraws some 45 items of which most show the same thing as before (the original, empty marks, a scheme
    whose release did not change): issue 15's click at 10^5."""
    # Views are copied (they are what is drawn: a few thousand points at most): a kept view would keep its
    # whole release alive after the next preview replaced it.
    args = tuple(a.copy() if isinstance(a, np.ndarray) and a.base is not None else a for a in args)
    last = getattr(item, "_lmdk_shown", None)
    if last is not None and _same_data(last, (args, kwargs)):
        return
    item.setData(*args, **kwargs)
    item._lmdk_shown = (args, kwargs)


def _same_data(old: tuple, new: tuple) -> bool:
    (oargs, okw), (nargs, nkw) = old, new
    if len(oargs) != len(nargs) or okw.keys() != nkw.keys():
        return False
    for a, b in zip((*oargs, *okw.values()), (*nargs, *nkw.values()), strict=True):
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) or isinstance(a, list) or isinstance(b, list):
            if not _same_array(np.asarray(a), np.asarray(b)):
                return False
        elif a != b:
            return False
    return True


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shape, type and values, NaN equal to NaN. The bytes are compared first (equal bytes, equal data;
    ≈ 1 µs against ≈ 8 µs for ``np.array_equal`` of a row's few hundred points, some 70 a click at 10^5):
    only arrays whose bytes differ are compared as numbers (a NaN of another sign, −0.0 and 0.0)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return a.tobytes() == b.tobytes() or (a.dtype.kind == "f" and bool(np.array_equal(a, b, equal_nan=True)))


# --------------------------------------------------------------------------------------- the plots
#: the series plot's title from the whole gesture hint down to its name, the longest that fits is shown (the
#: whole hint is its tooltip)
SERIES_TITLES = ("Series — click: mark/unmark · Shift-drag: mark range · Ctrl/Alt-drag: unmark",
                 "Series — click: mark/unmark · Shift-drag: mark range", "Series — click: mark/unmark", "Series")


class SeriesPlot(pg.PlotWidget):
    """The events as a line with a marker per event; landmarks shaded and marked; click to toggle."""

    def __init__(self, parent=None) -> None:
        self.time_axis = TimeAxis(orientation="bottom")
        self.cat_axis = CategoryAxis(orientation="left")
        self.vb = EventViewBox()
        super().__init__(parent, viewBox=self.vb, axisItems={"bottom": self.time_axis, "left": self.cat_axis})
        self.setObjectName("seriesPlot")
        self.setToolTip("")
        pi = self.getPlotItem()
        pi.showGrid(x=True, y=True, alpha=0.15)
        cache_axes(pi)
        _shrinkable(pi.titleLabel)  # a long title must not widen the plot past the rows below it
        pi.titleLabel.item.setToolTip(SERIES_TITLES[0])
        self._fit_title()
        # The same column grid as the budget and preview rows below (so x lines up): a left axis as wide as
        # their name + axis columns and, on the right, a margin as wide as their notes holding the legend.
        self.cat_axis.setWidth(LABEL_W + AXIS_W)
        pi.showAxis("right")
        right = pi.getAxis("right")
        right.setStyle(showValues=False, tickLength=0)
        right.setPen(pg.mkPen(None))
        right.setWidth(NOTE_W)
        self.legend = _legend(pi)
        self.legend.setParentItem(pi)  # not the view box, which clips what lies outside the data area
        self.legend.anchor(itemPos=(0, 0), parentPos=(1, 0), offset=(6 - NOTE_W, 24))
        self.time_axis.showLabel(False)
        # the bands, like the line, hold only what is drawn, with the whole band's bounds
        self.band = EnvelopeCurve(pen=None, fillLevel=0.0, brush=pg.mkBrush(rgba(LANDMARK_COLOR, 45)))
        self.dummy_band = EnvelopeCurve(pen=None, fillLevel=0.0, brush=pg.mkBrush(rgba(DUMMY_COLOR, 60)))
        self.line = EnvelopeCurve(pen=pg.mkPen(ORIGINAL_COLOR, width=1), name="events")
        self.markers = DotsItem(size=5, pen=None, brush=pg.mkBrush(ORIGINAL_COLOR))  # (repainted every click)
        self.lm_points = PassiveScatter(size=9, pen=pg.mkPen(darker(LANDMARK_COLOR), width=1),
                                            brush=pg.mkBrush(LANDMARK_COLOR), name="landmarks")
        self.dummy_points = PassiveScatter(size=8, pen=pg.mkPen(darker(DUMMY_COLOR)),
                                               brush=pg.mkBrush(DUMMY_COLOR), symbol="d", name="dummies")
        for item in (self.band, self.dummy_band, self.line, self.markers, self.lm_points, self.dummy_points):
            pi.addItem(item)
        _fast_plot(pi)
        self.legend.removeItem(self.dummy_points)
        self.band.setZValue(-10)
        self.dummy_band.setZValue(-9)
        self.lm_points.setZValue(10)
        self.dummy_points.setZValue(9)
        self.cursor = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen((150, 150, 150), style=Qt.PenStyle.DashLine))
        self.cursor.hide()
        pi.addItem(self.cursor, ignoreBounds=True)
        # The event a click would mark or unmark (nearest_event), ringed while the pointer is within reach: a
        # click on empty space does nothing (issue 2), and the hover box alone named an event there too.
        self.target = PassiveScatter(size=15, pen=pg.mkPen(darker(LANDMARK_COLOR), width=2), brush=None)
        self.target.setZValue(11)
        self.target.hide()
        pi.addItem(self.target, ignoreBounds=True)
        # The hover box lies over the whole viewport, not in the view box, which clipped it to the plot's
        # height: at 1280×800 a box of five schemes' budgets lost its last lines under the time axis.
        self.info = InfoBox(self.viewport())
        self.info.hide()
        self.series: Series | None = None
        self.y: np.ndarray = np.zeros(0)
        self._blocks: tuple[np.ndarray, np.ndarray] | None = None
        self._line_view: tuple | None = None  # (y, a, b, x0, px_w) the line was last drawn for
        self._landmarks = np.zeros(0, dtype=np.int64)
        self._dummies = np.zeros(0, dtype=np.int64)
        self._y_labels: tuple[str, ...] = ()  # the y label's candidates, longest first (set_series)
        self.vb.sigXRangeChanged.connect(self._on_range)
        self.vb.sigResized.connect(self._on_range)
        self.vb.sigResized.connect(lambda _vb: self._fit_y_label())
        still_release_no_rehover(self.scene())  # the click surface (issue 15)

    def resizeEvent(self, ev) -> None:  # noqa: N802 - Qt naming
        super().resizeEvent(ev)
        self._fit_title()

    def _fit_y_label(self) -> None:
        """The longest y label (:func:`y_label`, shortened, the unit; else the shortest elided) that fits the
        plot's height: the plot is short (≈ 60 px of axis at 1280×800), and a longer rotated label was cut at
        both ends ("m from st"). The full one is in the axis tooltip and the preview's header."""
        labels = self._y_labels
        if not labels:
            return
        axis = self.getPlotItem().getAxis("left")
        room = self.getPlotItem().vb.height()
        fm = QFontMetrics(axis.label.font())
        label = next((t for t in labels if fm.horizontalAdvance(t) <= room), None) \
            or fm.elidedText(labels[-1], Qt.TextElideMode.ElideRight, int(room))
        if axis.labelText != label:
            self.getPlotItem().setLabel("left", label)
            axis.resizeEvent()  # pyqtgraph centres the label there only: kept at the old one's, "m" was off the axis

    def _fit_title(self) -> None:
        """The longest of :data:`SERIES_TITLES` that fits the plot's width: the title is centred, so a cut
        one lost its start ("– click: mark/unmark …" beside the track view at 1280×800)."""
        pi = getattr(self, "plotItem", None)
        if pi is None:  # (PlotWidget's own constructor resizes it)
            return
        font = QFont(self.font())
        font.setPointSizeF(9.0)
        # The title is centred over the plot column, left of the widget's centre (the legend's column on the
        # right is wider than the axis on the left): it fits when it fits twice the way to the nearer edge.
        room = self.width() - abs(NOTE_W - (LABEL_W + AXIS_W)) - 12
        fm = QFontMetrics(font)
        title = next((t for t in SERIES_TITLES if fm.horizontalAdvance(t) <= room), SERIES_TITLES[-1])
        if getattr(pi.titleLabel, "text", None) != title:
            pi.setTitle(title, size="9pt")

    # --------------------------------------------------------------------------------- data
    def set_series(self, series: Series) -> None:
        self.series = series
        self.y = display_values(series, series.values)
        self.time_axis.set_times(series.times)
        self.cat_axis.set_labels(series.categories if series.kind == "categorical" else None)
        full = y_label(series)
        short = "m from start" if series.kind == "location" else \
            (full if len(full) <= AXIS_LABEL_MAX else full[:AXIS_LABEL_MAX - 1] + "…")
        # the unit alone when nothing longer fits ("kWh", not "Verbrau…" for "Verbrauch (kWh)")
        unit = "m" if series.kind == "location" else (series.unit or value_units(series) or "") \
            if series.kind == "numeric" else ""
        self._y_labels = tuple(sorted({t for t in (full, short, unit) if t}, key=len, reverse=True))
        self.getPlotItem().getAxis("left").setToolTip(full)
        self._fit_y_label()
        self._blocks = series_pyramid(series, self.y)
        # the finite range from the pyramid (no series-sized copy of the finite values)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN
            lo, hi = (float(np.nanmin(self._blocks[0])), float(np.nanmax(self._blocks[1]))) if self._blocks \
                else (float(np.nanmin(self.y, initial=np.inf)), float(np.nanmax(self.y, initial=-np.inf)))
        if not (np.isfinite(lo) and np.isfinite(hi)):
            lo, hi = 0.0, 1.0
        pad = 0.05 * (hi - lo or 1.0)
        self._band_lo, self._band_hi = lo - pad, hi + pad
        self.line.set_bounds((0.0, float(max(series.n - 1, 0))), (lo, hi))
        self.band.setFillLevel(self._band_lo)
        self.dummy_band.setFillLevel(self._band_lo)
        self.set_landmarks(np.zeros(0, dtype=np.int64))
        self.set_dummies(np.zeros(0, dtype=np.int64))
        self.show_info(None)  # the hover box described the old file
        self.getPlotItem().enableAutoRange()
        self.getPlotItem().autoRange()
        self._on_range()

    def _view(self) -> tuple[int, int, float, float]:
        """Rows in view (one beyond each edge, so lines run to the border), view x0 and rows per pixel."""
        (x0, x1), _ = self.vb.viewRange()
        width = self.vb.width()
        a, b = self.visible_rows()
        n = self.series.n if self.series else 0
        return max(0, a - 1), min(n - 1, b + 1), x0, (x1 - x0) / width if width > 0 else 1.0

    def _band(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a, b, x0, px_w = self._view()
        return band_view(rows, a, b, x0, px_w, self._band_lo, self._band_hi)

    def _draw_bands(self) -> None:
        self.band.setData(*self._band(self._landmarks), skipFiniteCheck=True)
        if self._dummies.size:
            self.dummy_band.setData(*self._band(self._dummies), skipFiniteCheck=True)

    def _band_bounds(self, item: EnvelopeCurve, rows: np.ndarray) -> None:
        n = self.series.n if self.series else 0
        item.set_bounds((-0.5, n - 0.5), (self._band_lo, self._band_hi if rows.size else self._band_lo))

    def set_landmarks(self, rows: np.ndarray) -> None:
        if self.series is None:
            return
        self._landmarks = rows
        self._band_bounds(self.band, rows)
        self.band.setData(*self._band(rows), skipFiniteCheck=True)
        self._update_points()

    def set_dummies(self, rows: np.ndarray) -> None:
        if self.series is None:
            return
        if rows.shape == self._dummies.shape and np.array_equal(rows, self._dummies):
            # every preview announces its selection, mostly the same one (or none, dummies off): redrawn, the
            # markers dirtied the scene and the series plot painted twice per click (issue 15)
            return
        self._dummies = rows
        self.legend.removeItem(self.dummy_points)
        if rows.size:
            self._band_bounds(self.dummy_band, rows)
            self.dummy_band.setData(*self._band(rows), skipFiniteCheck=True)
            self.dummy_band.show()
            self.legend.addItem(self.dummy_points, "dummy landmarks")
        else:
            self.dummy_band.hide()
        self._update_points()

    def visible_rows(self) -> tuple[int, int]:
        (x0, x1), _ = self.vb.viewRange()
        n = self.series.n if self.series else 0
        return max(0, int(math.floor(x0))), min(n - 1, int(math.ceil(x1)))

    def _update_points(self) -> None:
        a, b = self.visible_rows()
        for rows, item in ((self._landmarks, self.lm_points), (self._dummies, self.dummy_points)):
            # (set_data: without dummies, their empty markers were handed again and repainted at every click)
            if rows.size == 0:
                set_data(item, [], [])
                continue
            i0, i1 = np.searchsorted(rows, [a, b + 1])
            vis = rows[i0:i1]
            if vis.size > 4 * MARKER_LIMIT:  # too many to draw individually; the band shows them
                set_data(item, [], [])
            else:
                set_data(item, vis.astype(np.float64), self.y[vis])

    def _draw_line(self) -> None:
        """The series line for the current x range: one envelope pair per pixel column (or the events); not
        again for the view it already shows (a layout pass resizes the view several times, often to the same
        width: each envelope is ≈ 3 ms at 10^7 events)."""
        view = self._view()
        if self._line_view is not None and self._line_view[0] is self.y and self._line_view[1:] == view:
            return
        self._line_view = (self.y, *view)
        self.line.setData(*pixel_envelope(self.y, *view, self._blocks), connect="finite")

    def _on_range(self, *_args) -> None:
        if self.series is None:
            return
        self._draw_line()
        self._draw_bands()
        a, b = self.visible_rows()
        if b - a <= MARKER_LIMIT and b >= a:
            rows = np.arange(a, b + 1)
            set_data(self.markers, rows.astype(np.float64), self.y[rows])
        else:
            set_data(self.markers, [], [])
        self._update_points()

    # ------------------------------------------------------------------------------ picking
    def nearest_event(self, scene_pos: QPointF, tol_px: float = 8.0) -> int | None:
        """The event whose marker is nearest to a scene position, if within ``tol_px`` pixels."""
        if self.series is None or self.series.n == 0:
            return None
        p = self.vb.mapSceneToView(scene_pos)
        px_w, px_h = self.vb.viewPixelSize()
        if not (px_w > 0 and px_h > 0):
            return None
        lo = max(0, int(math.floor(p.x() - tol_px * px_w)))
        hi = min(self.series.n - 1, int(math.ceil(p.x() + tol_px * px_w)))
        if lo > hi:
            return None
        if hi - lo > 200_000:  # zoomed far out: only x is meaningful
            return None
        rows = np.arange(lo, hi + 1)
        dx = (rows - p.x()) / px_w
        dy = (self.y[rows] - p.y()) / px_h
        d = np.hypot(dx, np.where(np.isfinite(dy), dy, np.inf))
        j = int(np.argmin(d))
        return int(rows[j]) if d[j] <= tol_px else None

    def row_at(self, scene_pos: QPointF) -> int | None:
        if self.series is None or self.series.n == 0:
            return None
        x = self.vb.mapSceneToView(scene_pos).x()
        i = int(round(x))
        return i if 0 <= i < self.series.n else None

    def show_info(self, row: int | None, html: str = "", target: int | None = None) -> None:
        """The hover read-out of ``row`` (None: hide it), and the ring on ``target``, the event a click marks
        (None: no event within reach)."""
        if target is None or self.series is None:
            self.target.hide()
        else:
            set_data(self.target, [float(target)], [float(self.y[target])])
            self.target.show()
        if row is None or self.series is None:
            self.info.hide()
            self.cursor.hide()
            return
        self.cursor.setPos(row)
        self.cursor.show()
        self.info.setHtml(html)
        # at the view's top-left corner — top-right when the pointer is under that corner, so that the box never
        # covers the event just marked — raised as far as needed (over the title) to be read whole (the scene's
        # units are the viewport's pixels: pyqtgraph's views neither scroll nor scale their scene)
        view = self.vb.sceneBoundingRect()
        room = self.viewport().height() - self.info.height()
        x_event = self.vb.mapViewToScene(QPointF(float(row), 0.0)).x()
        left = round(view.left())
        if x_event <= view.left() + self.info.width() + 12:
            left = max(left, round(view.right()) - self.info.width())
        self.info.move(left, max(0, min(round(view.top()), room)))
        self.info.show()

    def leaveEvent(self, ev) -> None:  # noqa: N802 - Qt naming
        """The pointer left the plot: the hover box and the ring go (they stayed and covered the plot)."""
        super().leaveEvent(ev)
        self.show_info(None)


class TrackPlot(pg.PlotWidget):
    """Location series: the original track and each visible scheme's release in lon/lat — its noisy points,
    and with Denoise on its denoised track (what the export writes) as a line over them. The legend sits
    under the map, never over the data."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("trackPlot")
        pi = self.getPlotItem()
        pi.setLabel("bottom", "longitude (°)")
        pi.setLabel("left", "latitude (°)")
        pi.showGrid(x=True, y=True, alpha=0.15)
        cache_axes(pi)
        pi.setTitle("Track", size="9pt")
        # A legend in the plot's layout, one row under the bottom axis: on a map every corner holds data.
        self.legend = pg.LegendItem(colCount=2, labelTextSize="8pt", verSpacing=-6, horSpacing=12)
        pi.layout.addItem(self.legend, 4, 1)
        # The original in the preview rows' grey, dashed: in the series plot's near-black it could not be told
        # from Balanced's black track.
        self.original = pg.PlotDataItem(pen=pg.mkPen(ORIGINAL_PREVIEW_COLOR, width=2, style=Qt.PenStyle.DashLine),
                                        name="original")
        self.landmarks = PassiveScatter(size=7, pen=None, brush=pg.mkBrush(LANDMARK_COLOR), name="landmarks")
        pi.addItem(self.original)
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.tracks: dict[str, pg.PlotDataItem] = {}  # denoised tracks
        for scheme, color in SCHEME_COLORS.items():
            c = pg.PlotDataItem(pen=None, symbol="o", symbolSize=3, symbolPen=None,
                                symbolBrush=pg.mkBrush(QColor(*color, 140)), name=SCHEME_LABELS[scheme])
            pi.addItem(c)
            self.curves[scheme] = c
            line = pg.PlotDataItem(pen=pg.mkPen(QColor(*color), width=2.5))
            line.setZValue(6)
            pi.addItem(line)
            self.tracks[scheme] = line
        self.dummies = PassiveScatter(size=7, pen=pg.mkPen(darker(DUMMY_COLOR)), brush=pg.mkBrush(DUMMY_COLOR),
                                      symbol="d")
        self.dummies.setZValue(9)
        pi.addItem(self.dummies)
        pi.addItem(self.landmarks)
        self.landmarks.setZValue(10)
        self.original.setZValue(5)
        self.series: Series | None = None
        self._preview: dict = {}
        self._visible: set[str] = set()
        self._denoised: dict[str, np.ndarray] = {}

    def set_series(self, series: Series) -> None:
        self.series = series
        lat, lon = series.values[:, 0], series.values[:, 1]
        self.original.setData(lon, lat)
        mid = float(np.nanmean(lat)) if series.n else 0.0
        self.getPlotItem().getViewBox().setAspectLocked(True, ratio=1.0 / max(math.cos(math.radians(mid)), 1e-3))
        self.landmarks.setData([], [])
        self.dummies.setData([], [])
        self._preview, self._denoised = {}, {}
        for c in (*self.curves.values(), *self.tracks.values()):
            c.setData([], [])
        # Frame the original track; noisy points far outside stay reachable by zooming out.
        vb = self.getPlotItem().getViewBox()
        vb.disableAutoRange()
        if series.n:
            pad_lat = max(float(np.ptp(lat)) * 0.08, 1e-4)
            pad_lon = max(float(np.ptp(lon)) * 0.08, 1e-4)
            vb.setRange(xRange=(float(lon.min()) - pad_lon, float(lon.max()) + pad_lon),
                        yRange=(float(lat.min()) - pad_lat, float(lat.max()) + pad_lat), padding=0)

    def set_landmarks(self, rows: np.ndarray) -> None:
        if self.series is None:
            return
        pts = self.series.values[rows]
        self.landmarks.setData(pts[:, 1], pts[:, 0])

    def set_dummies(self, rows: np.ndarray) -> None:
        """The dummy landmarks of the preview's selection (violet diamonds); none = hidden."""
        if self.series is None:
            return
        pts = self.series.values[np.asarray(rows, dtype=np.int64)]
        self.dummies.setData(pts[:, 1], pts[:, 0])
        self._relabel()  # the releases are redrawn when their preview arrives (just after)

    def set_preview(self, preview: dict, visible: set[str]) -> None:
        """The raw releases; denoised tracks of another state are dropped until :meth:`set_denoised`."""
        self._preview, self._visible = preview, set(visible)
        self._denoised = {s: v for s, v in self._denoised.items()
                          if (p := preview.get(s)) is not None and p.denoised_values is v}
        self._redraw()

    def set_denoised(self, denoised: dict[str, np.ndarray | None]) -> None:
        """Each scheme's denoised release (lat, lon): its track is drawn as a line, its raw points faint."""
        self._denoised = {s: v for s, v in denoised.items() if v is not None}
        self._redraw()

    def let_go(self, preview: dict) -> None:
        """The session let go of values (Session.valuesLetGo): hold its new preview, drop the denoised tracks it
        no longer has; the curves stay as drawn until the new preview."""
        self._preview = preview
        self._denoised = {k: v for k, v in self._denoised.items()
                          if (p := preview.get(k)) is not None and p.denoised is not None}

    def _shown(self) -> list[str]:
        return [s for s in self.curves if s in self._visible and s in self._preview]

    def _redraw(self) -> None:
        if self.series is None:
            return
        shown = self._shown()
        for scheme, curve in self.curves.items():
            line = self.tracks[scheme]
            if scheme not in shown:
                curve.hide()
                line.hide()
                continue
            if not self._preview[scheme].release.values_kept:
                continue  # let go of by a lean session: as drawn (or hidden) until its new preview
            den = self._denoised.get(scheme)
            curve.setSymbolBrush(pg.mkBrush(QColor(*SCHEME_COLORS[scheme], 60 if den is not None else 140)))
            curve.setData(*_lonlat(self._preview[scheme].values))
            curve.show()
            if den is not None:
                line.setData(*_lonlat(den))
            line.setVisible(den is not None)
        self._relabel()

    def _relabel(self) -> None:
        """The legend and the title for what is drawn: a scheme's entry is its line when denoised."""
        self.legend.clear()
        self.legend.addItem(self.original, "original")
        self.legend.addItem(self.landmarks, "landmarks")
        dummies = bool(len(self.dummies.data))
        if dummies:
            self.legend.addItem(self.dummies, "dummy landmarks")
        for scheme in self._shown():
            item = self.tracks[scheme] if scheme in self._denoised else self.curves[scheme]
            self.legend.addItem(item, SCHEME_LABELS[scheme])
        # short: a title wider than the view would widen the plot past its widget (the legend names colours)
        self.getPlotItem().setTitle("Track (lines: denoised)" if self._denoised else "Track", size="9pt")


def _lonlat(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x = longitude, y = latitude; display only: a regular subsample beyond TRACK_POINTS keeps the picture."""
    if v.shape[0] > TRACK_POINTS:
        v = v[:: v.shape[0] // TRACK_POINTS + 1]
    return v[:, 1], v[:, 0]
