"""The plot items and view boxes the plots share, each lighter than pyqtgraph's own on the click path
(issue 15): a line holding only what is drawn, markers that let clicks through, views that take their
transform at once, ``set_data`` that skips unchanged data.

Importing this module sets pyqtgraph's global options (white background, no antialiasing), before any
plot widget is made.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, Signal

from .theme import (
    LANDMARK_COLOR,
    rgba,
)

pg.setConfigOptions(antialias=False, background="w", foreground="k")


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
