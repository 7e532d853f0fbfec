"""GUI test helpers: click and drag at *data* coordinates (in the spirit of mne-qt-browser's _fake_click)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from lmdk_gui.ui.views.plots import display_values


def data_to_viewport(plot, x: float, y: float) -> QPoint:
    """Viewport pixel of a data point in a pyqtgraph PlotWidget."""
    vb = plot.getPlotItem().vb
    scene = vb.mapViewToScene(QPointF(x, y))
    return plot.mapFromScene(scene)


def event_point(window, row: int) -> QPoint:
    s = window.session.series
    y = float(display_values(s, s.values[row:row + 1])[0])
    return data_to_viewport(window.series_plot, float(row), y)


def _send(widget, etype, pos: QPoint, button, buttons, mods) -> None:
    ev = QMouseEvent(etype, QPointF(pos), widget.mapToGlobal(QPointF(pos)), button, buttons, mods)
    QApplication.sendEvent(widget, ev)


def fake_click(qtbot, window, row: int, *, offset: QPoint | None = None) -> None:
    """Left-click on an event's marker in the series plot."""
    pos = event_point(window, row)
    if offset is not None:
        pos += offset
    qtbot.mouseClick(window.series_plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def fake_drag(window, x0: float, x1: float, modifiers=Qt.KeyboardModifier.ShiftModifier) -> None:
    """Press at row x0, move in steps, release at x1 (data x), with a keyboard modifier held."""
    plot = window.series_plot
    vb = plot.getPlotItem().vb
    (_, _), (ylo, yhi) = vb.viewRange()
    y = (ylo + yhi) / 2
    vp = plot.viewport()
    left = Qt.MouseButton.LeftButton
    p0 = data_to_viewport(plot, x0, y)
    p1 = data_to_viewport(plot, x1, y)
    _send(vp, QEvent.Type.MouseButtonPress, p0, left, left, modifiers)
    steps = 6
    for i in range(1, steps + 1):
        p = p0 + (p1 - p0) * (i / steps)
        _send(vp, QEvent.Type.MouseMove, p, Qt.MouseButton.NoButton, left, modifiers)
    _send(vp, QEvent.Type.MouseButtonRelease, p1, left, Qt.MouseButton.NoButton, modifiers)


def bars_per_event(item, n: int):
    """Height of a step-outline plot item (budget bars, landmark bands) over each event 0..n-1."""
    import numpy as np

    x, y = item.getOriginalDataset()
    if x is None or len(x) == 0:
        return np.zeros(n)
    k = np.searchsorted(x[0::2], np.arange(n), side="right") - 1
    return y[0::2][k]
