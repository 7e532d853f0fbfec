"""Light items for the budget and preview rows (issue 15: the click's GUI time).

The rows are handed data already reduced to the pixel columns in view (a few thousand points at most) and
never ask pyqtgraph to downsample, clip, log-scale, cull or auto-range it, yet every ``PlotDataItem`` and
``ScatterPlotItem`` ran that pipeline at each ``setData`` and paint (bounds, display data, line segments,
fill path lists, spot records, view masks): about half of a click's slot time at 10^5 events, and a third
of the rows' paint. These keep only what the rows draw, drawn as pyqtgraph draws it:

* :class:`CurveItem` — one path (joined, joined where finite, or in pairs), optionally filled down to a
  level, with a cosmetic pen (``PlotCurveItem.paint``: fill, then stroke; a wide opaque pen strokes line
  segments, as pyqtgraph does: Qt strokes a wide path by filling its outline, seconds for a zoomed-out
  denoised line of a few thousand points);
* :class:`DotsItem` — one symbol per point, of a fixed size in pixels, stamped from one pre-rendered image
  (``ScatterPlotItem.paint``: ``drawPixmapFragments`` at the points' device positions).

Both answer ``getData``/``xData``/``yData``/``getOriginalDataset`` and ``dataBounds`` like pyqtgraph's
items, so tests and the view's auto-range read them the same way; tests compare their pixels with them.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from pyqtgraph.graphicsItems.PlotCurveItem import arrayToLineSegments
from pyqtgraph.graphicsItems.ScatterPlotItem import renderSymbol
from pyqtgraph.Qt import internals
from PySide6.QtCore import QLineF, QRectF, Qt
from PySide6.QtGui import QPainter, QPainterPath, QPen, QPixmap


class _RowItem(pg.GraphicsObject):
    """Points ``(x, y)`` in data units, drawn with a margin of ``pad_px`` pixels around them."""

    def __init__(self, pad_px: float) -> None:
        super().__init__()
        self._pad_px = pad_px
        self.xData: np.ndarray | None = None
        self.yData: np.ndarray | None = None
        self._data_rect: QRectF | None = None  # None: no finite point
        self._rect: QRectF | None = None  # with the margin, until the view's transform changes

    def _set_xy(self, x, y, level: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if x.shape != y.shape:
            raise ValueError(f"x and y differ in length ({x.size} and {y.size})")
        self.prepareGeometryChange()
        self.xData, self.yData = x, y
        self._data_rect = _finite_rect(x, y, level)
        self._rect = None
        self.informViewBoundsChanged()
        self.update()
        return x, y

    def getData(self) -> tuple[np.ndarray | None, np.ndarray | None]:  # noqa: N802 - pyqtgraph naming
        return self.xData, self.yData

    getOriginalDataset = getData  # noqa: N815 - pyqtgraph naming (no display transform here)

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange=None):  # noqa: N802 - pyqtgraph naming
        """The finite extent along axis ``ax`` (``frac`` and ``orthoRange`` are ignored: nothing is culled)."""
        r = self._data_rect
        if r is None:
            return None, None
        return (r.left(), r.right()) if ax == 0 else (r.top(), r.bottom())

    def viewTransformChanged(self) -> None:  # noqa: N802 - pyqtgraph naming
        self.prepareGeometryChange()
        self._rect = None

    def itemChange(self, change, value):  # noqa: N802 - Qt naming
        if change == self.GraphicsItemChange.ItemTransformHasChanged:  # a budget row's new scale
            self._rect = None
        return super().itemChange(change, value)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        if self._rect is None:
            # The margin is in pixels: in data units at the current transform. The scene's units are the
            # view's pixels (pyqtgraph's views do not scale their scene), so the item's scene transform has
            # the scale; pyqtgraph's pixelVectors() took ≈ 50 µs a call, several times per item and click.
            t = self.sceneTransform()
            dx = self._pad_px / abs(t.m11()) if t.m11() else 0.0
            dy = self._pad_px / abs(t.m22()) if t.m22() else 0.0
            self._rect = QRectF() if self._data_rect is None else self._data_rect.adjusted(-dx, -dy, dx, dy)
        return self._rect


class CurveItem(_RowItem):
    """One path through ``(x, y)``: ``connect`` "all", "finite" (broken at NaN) or "pairs" (segments);
    with a ``brush`` and a ``fillLevel`` the area down to that level is filled first."""

    def __init__(self, pen=None, brush=None, fillLevel=None, connect: str = "all") -> None:  # noqa: N803
        pen = pg.mkPen(pen) if pen is not None else QPen(Qt.PenStyle.NoPen)
        super().__init__(pen.widthF() + 1.0 if pen.style() != Qt.PenStyle.NoPen else 1.0)
        self._pen = pen
        self._brush = pg.mkBrush(brush) if brush is not None else None
        self._defaults = {"connect": connect, "fillLevel": fillLevel}
        self._path = QPainterPath()
        self._fill: QPainterPath | None = None
        # PlotCurveItem._shouldUseDrawLineSegments: wide, solid and opaque (rows are not antialiased)
        self._segments = internals.PrimitiveArray(QLineF, 4) if (
            pen.widthF() > 1.0 and pen.style() == Qt.PenStyle.SolidLine and pen.isSolid()
            and pen.color().alphaF() == 1.0) else None

    def setData(self, x, y, connect: str | None = None, fillLevel: float | None = None) -> None:  # noqa: N802, N803
        connect = connect or self._defaults["connect"]
        level = self._defaults["fillLevel"] if fillLevel is None else fillLevel
        filled = self._brush is not None and level is not None and connect != "pairs"
        x, y = self._set_xy(x, y, level if filled else None)
        self._path = pg.arrayToQPath(x, y, connect=connect) if x.size else QPainterPath()
        if self._segments is not None:
            arrayToLineSegments(x, y, connect=connect, finiteCheck=True, out=self._segments)
        self._fill = None
        if filled and x.size:
            self._fill = QPainterPath(self._path)
            self._fill.lineTo(float(x[-1]), level)
            self._fill.lineTo(float(x[0]), level)
            self._fill.closeSubpath()

    def paint(self, p, *args) -> None:
        if self._fill is not None:
            p.fillPath(self._fill, self._brush)
        if self._pen.style() != Qt.PenStyle.NoPen and not self._path.isEmpty():
            p.setPen(self._pen)
            if self._segments is not None:
                p.drawLines(*self._segments.drawargs())
            else:
                p.drawPath(self._path)


class DotsItem(_RowItem):
    """A circle of ``size`` pixels at each point (outlined by ``pen``, filled by ``brush``), as a
    ``ScatterPlotItem`` of one style draws it. Clicks go through to the view (it picks events itself)."""

    def __init__(self, size: float, pen=None, brush=None) -> None:
        pen = pg.mkPen(pen) if pen is not None else QPen(Qt.PenStyle.NoPen)
        brush = pg.mkBrush(brush) if brush is not None else pg.mkBrush(None)
        super().__init__(size / 2.0 + max(pen.widthF(), 1.0))
        self._style = (size, pen, brush)
        self._stamp: tuple[float, QPixmap] | None = None  # (device pixel ratio, the rendered symbol)
        self._fragments = internals.PrimitiveArray(QPainter.PixmapFragment, 10)

    def setData(self, x, y) -> None:  # noqa: N802 - pyqtgraph naming
        self._set_xy(x, y)

    def mouseClickEvent(self, ev):  # noqa: N802 - Qt naming
        ev.ignore()

    def _symbol(self, dpr: float) -> QPixmap:
        if self._stamp is None or self._stamp[0] != dpr:
            size, pen, brush = self._style
            pixmap = QPixmap.fromImage(renderSymbol("o", size, pen, brush, dpr=dpr))
            pixmap.setDevicePixelRatio(1.0)  # the fragments address it in device pixels, scaled by 1 / dpr
            self._stamp = (dpr, pixmap)
        return self._stamp[1]

    def paint(self, p, option, widget=None) -> None:
        x, y = self.xData, self.yData
        if x is None or not x.size:
            return
        dpr = widget.devicePixelRatioF() if widget is not None else 1.0
        pixmap = self._symbol(dpr)
        t = p.transform()  # (no rotation or shear in a row: a scale and a shift)
        ok = np.isfinite(x) & np.isfinite(y)
        px = np.clip(x[ok] * t.m11() + t.dx(), -2.0**30, 2.0**30)
        py = np.clip(y[ok] * t.m22() + t.dy(), -2.0**30, 2.0**30)
        p.resetTransform()
        self._fragments.resize(px.size)
        frags = self._fragments.ndarray()
        frags[:, 0], frags[:, 1] = px, py  # the centres
        frags[:, 2:6] = (0.0, 0.0, pixmap.width(), pixmap.height())  # the source: the whole symbol
        frags[:, 6:10] = (1 / dpr, 1 / dpr, 0.0, 1.0)  # scale x, y, rotation, opacity
        p.drawPixmapFragments(*self._fragments.drawargs(), pixmap)


def _finite_rect(x: np.ndarray, y: np.ndarray, level: float | None) -> QRectF | None:
    """The rectangle holding every finite point (and the fill level), or None when there is none."""
    ok = np.isfinite(x) & np.isfinite(y)
    if not ok.any():
        return None
    xs, ys = x[ok], y[ok]
    x0, x1 = float(xs.min()), float(xs.max())
    y0, y1 = float(ys.min()), float(ys.max())
    if level is not None:
        y0, y1 = min(y0, level), max(y1, level)
    return QRectF(x0, y0, x1 - x0, y1 - y0)
