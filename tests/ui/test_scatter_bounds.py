"""The markers keep their bounding rectangle until their data or their view's transform changes (issue 15),
and it is always the one pyqtgraph works out afresh."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from lmdk_gui.ui.views.plots import PassiveScatter


def test_kept_bounds_follow_data_zoom_and_resize(qtbot):
    w = pg.PlotWidget()
    qtbot.addWidget(w)
    w.resize(400, 300)
    w.show()
    item = PassiveScatter(size=6, pen=None, brush=pg.mkBrush("r"))
    w.addItem(item)

    def fresh() -> pg.QtCore.QRectF:
        return pg.ScatterPlotItem.boundingRect(item)

    item.setData(np.arange(10.0), np.arange(10.0) ** 2)
    qtbot.waitExposed(w)
    assert item.boundingRect() == fresh()
    item.setData(np.arange(5.0), -np.arange(5.0))
    assert item.boundingRect() == fresh()
    kept = item.boundingRect()
    w.getPlotItem().vb.setXRange(0, 2, padding=0)
    qtbot.waitUntil(lambda: item.boundingRect() != kept)  # a pixel is another width in data units now
    assert item.boundingRect() == fresh()
    w.resize(200, 150)
    qtbot.waitUntil(lambda: item.boundingRect() == fresh())
    item.clear()
    assert item.boundingRect() == fresh()
    item.boundingRect().adjust(0, 0, 5, 5)  # what a caller does to its copy stays there
    assert item.boundingRect() == fresh()
