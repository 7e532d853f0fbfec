"""A light curve item for the budget and preview rows (issue 15: the click's GUI time).

The rows are handed data already reduced to the pixel columns in view (a few thousand points at most) and
never ask pyqtgraph to downsample, clip, log-scale or auto-range it, yet every ``PlotDataItem.setData``
ran that display pipeline and a ``PlotCurveItem`` under it (bounds, display data, line segments, fill path
lists): about half of a click's slot time at 10^5 events, and a third of the rows' paint. :class:`CurveItem`
keeps only what the rows draw: one path (joined, joined where finite, or in pairs), optionally filled down
to a level, with a cosmetic pen, as pyqtgraph draws them (``PlotCurveItem.paint``: fill, then stroke).
It answers ``getData``/``xData``/``yData``/``getOriginalDataset`` and ``dataBounds`` like a
``PlotDataItem``, so tests and the view's auto-range read it the same way.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainterPath, QPen


class CurveItem(pg.GraphicsObject):
    """One path through ``(x, y)``: ``connect`` "all", "finite" (broken at NaN) or "pairs" (segments);
    with a ``brush`` and a ``fillLevel`` the area down to that level is filled first."""

    def __init__(self, pen=None, brush=None, fillLevel=None, connect: str = "all") -> None:  # noqa: N803
        super().__init__()
        self._pen = pg.mkPen(pen) if pen is not None else QPen(Qt.PenStyle.NoPen)
        self._brush = pg.mkBrush(brush) if brush is not None else None
        self._defaults = {"connect": connect, "fillLevel": fillLevel}
        self.xData: np.ndarray | None = None
        self.yData: np.ndarray | None = None
        self._path = QPainterPath()
        self._fill: QPainterPath | None = None
        self._data_rect: QRectF | None = None  # None: no finite point
        self._rect: QRectF | None = None  # with the pen's padding, until the view's transform changes

    # ---------------------------------------------------------------------------------- data
    def setData(self, x, y, connect: str | None = None, fillLevel: float | None = None) -> None:  # noqa: N802, N803
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if x.shape != y.shape:
            raise ValueError(f"x and y differ in length ({x.size} and {y.size})")
        connect = connect or self._defaults["connect"]
        level = self._defaults["fillLevel"] if fillLevel is None else fillLevel
        self.prepareGeometryChange()
        self.xData, self.yData = x, y
        self._path = pg.arrayToQPath(x, y, connect=connect) if x.size else QPainterPath()
        self._fill = None
        if self._brush is not None and level is not None and x.size and connect != "pairs":
            self._fill = QPainterPath(self._path)
            self._fill.lineTo(float(x[-1]), level)
            self._fill.lineTo(float(x[0]), level)
            self._fill.closeSubpath()
        self._data_rect = _finite_rect(x, y, level if self._fill is not None else None)
        self._rect = None
        self.informViewBoundsChanged()
        self.update()

    def getData(self) -> tuple[np.ndarray | None, np.ndarray | None]:  # noqa: N802 - pyqtgraph naming
        return self.xData, self.yData

    getOriginalDataset = getData  # noqa: N815 - pyqtgraph naming (no display transform here)

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange=None):  # noqa: N802 - pyqtgraph naming
        """The finite extent along axis ``ax`` (``frac`` and ``orthoRange`` are ignored: nothing is culled)."""
        r = self._data_rect
        if r is None:
            return None, None
        return (r.left(), r.right()) if ax == 0 else (r.top(), r.bottom())

    # ---------------------------------------------------------------------------------- drawing
    def viewTransformChanged(self) -> None:  # noqa: N802 - pyqtgraph naming
        self.prepareGeometryChange()
        self._rect = None

    def itemChange(self, change, value):  # noqa: N802 - Qt naming
        if change == self.GraphicsItemChange.ItemTransformHasChanged:  # a budget row's new scale
            self._rect = None
        return super().itemChange(change, value)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        if self._rect is None:
            # The pen is cosmetic (in pixels): pad by its width in data units. The scene's units are the
            # view's pixels (pyqtgraph's views do not scale their scene), so the item's scene transform has
            # the scale; pyqtgraph's pixelVectors() took ≈ 50 µs a call, several times per item and click.
            t = self.sceneTransform()
            w = self._pen.widthF() + 1.0 if self._pen.style() != Qt.PenStyle.NoPen else 1.0
            dx = w / abs(t.m11()) if t.m11() else 0.0
            dy = w / abs(t.m22()) if t.m22() else 0.0
            self._rect = QRectF() if self._data_rect is None else self._data_rect.adjusted(-dx, -dy, dx, dy)
        return self._rect

    def paint(self, p, *args) -> None:
        if self._fill is not None:
            p.fillPath(self._fill, self._brush)
        if self._pen.style() != Qt.PenStyle.NoPen and not self._path.isEmpty():
            p.setPen(self._pen)
            p.drawPath(self._path)


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
