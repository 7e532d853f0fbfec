"""The series plot (click to mark landmarks), and the one place to import any of the plots' parts from.

Habits borrowed from pyqtgraph's examples and mne-qt-browser: items are created once and updated with
``setData``; the series line is handed to pyqtgraph only as what is drawn — the events in view, or, when
more events than pixel columns are in view, each pixel column's min and max (:func:`pixel_envelope`, redone
on every x-range change; at 10^7 events pyqtgraph never holds a series-sized copy); the other long items use
``setDownsampling(auto=True, method='peak')`` and ``setClipToView(True)``; a ViewBox subclass turns clicks
and modifier-drags into single calls on the session.

The x axis is the event's row (0..n-1) and its tick labels are the events' timestamps, so bars have equal
widths even when the sampling is uneven (the GPS track pauses for up to 138 s).

The parts, each in its own module of ``views`` and importable from here as well (their names were defined
here; other modules and the tests import them from ``views.plots``):

* ``envelopes`` — numpy only: step outlines, the pixel-column envelope of a long line, the landmark band;
* ``values`` — what the y axis shows for a series, its y range and label, what the loaders make off-thread;
* ``axes`` — the column grid (``LABEL_W``, ``AXIS_W``, ``NOTE_W``), the time and category axes;
* ``items`` — the shared plot items and view boxes, ``set_data`` (and pyqtgraph's global options);
* ``text`` — the notes' and the hover box's painted text;
* ``track`` — the location map (:class:`TrackPlot`).

The budget and preview rows under the series plot are ``views.multiples``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QFont, QFontMetrics

from ...core.data.series import Series
from ...core.publish.writers import value_units
from .axes import (
    AXIS_W,
    LABEL_W,
    NOTE_W,
    CategoryAxis,
    TimeAxis,
    _legend,
    _shrinkable,
    cache_axes,
    format_time,
)
from .envelopes import (
    BLOCK,
    EVENTS_PER_COLUMN,
    band_steps,
    band_view,
    block_extremes,
    column_extremes,
    pixel_columns,
    pixel_envelope,
    step_runs,
    step_x,
    step_y,
)
from .items import (
    EagerViewBox,
    EnvelopeCurve,
    EventViewBox,
    PassiveScatter,
    _fast_plot,
    set_data,
    still_release_no_rehover,
)
from .multiples.curve import DotsItem
from .text import InfoBox, Run, TextLines, markup_runs
from .theme import (
    DUMMY_COLOR,
    LANDMARK_COLOR,
    ORIGINAL_COLOR,
    darker,
    rgba,
)
from .track import TRACK_POINTS, TrackPlot
from .values import (
    _PYRAMIDS,
    _RANGES,
    display_values,
    load_for_view,
    robust_range,
    series_pyramid,
    series_range,
    y_label,
)

__all__ = [
    "AXIS_LABEL_MAX",
    "AXIS_W",
    "band_steps",
    "band_view",
    "BLOCK",
    "block_extremes",
    "cache_axes",
    "CategoryAxis",
    "column_extremes",
    "display_values",
    "EagerViewBox",
    "EnvelopeCurve",
    "EVENTS_PER_COLUMN",
    "EventViewBox",
    "format_time",
    "InfoBox",
    "LABEL_W",
    "load_for_view",
    "MARKER_LIMIT",
    "markup_runs",
    "NOTE_W",
    "PassiveScatter",
    "pixel_columns",
    "pixel_envelope",
    "_PYRAMIDS",
    "_RANGES",
    "robust_range",
    "Run",
    "series_pyramid",
    "series_range",
    "SERIES_TITLES",
    "SeriesPlot",
    "set_data",
    "step_runs",
    "step_x",
    "step_y",
    "still_release_no_rehover",
    "TextLines",
    "TimeAxis",
    "TRACK_POINTS",
    "TrackPlot",
    "y_label",
]

#: markers are drawn only when at most this many events are in view
MARKER_LIMIT = 1500


#: characters of the series plot's rotated y label that fit its height at 1280×800
AXIS_LABEL_MAX = 16


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
        self._add_items(pi)
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

    def _add_items(self, pi: pg.PlotItem) -> None:
        """The landmark and dummy bands, the line, its markers, the landmark and dummy points, the hover
        cursor, the ring on the event a click would mark, and the hover box."""
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
