"""The rows' light items (issue 15) draw what pyqtgraph's items draw for the same data and style — CurveItem
as a PlotDataItem (pen, fill, joining), DotsItem as a ScatterPlotItem (filled dots, rings) — read back like
them, and their bounding rectangles hold every pixel they paint (a smaller one leaves stale pixels behind
when the item changes)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor, QImage

from lmdk_gui.ui.views.multiples.curve import CurveItem, DotsItem

W, H = 320, 200


def _render(qtbot, item, xr=(-1.0, 11.0), yr=(-3.0, 12.0)) -> tuple[pg.PlotWidget, QImage]:
    w = pg.PlotWidget(background="w")
    qtbot.addWidget(w)
    w.resize(W, H)
    pi = w.getPlotItem()
    pi.hideAxis("left")
    pi.hideAxis("bottom")
    pi.addItem(item)
    pi.vb.setRange(xRange=xr, yRange=yr, padding=0)
    w.show()
    qtbot.waitExposed(w)
    return w, w.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def _ink(img: QImage) -> np.ndarray:
    """Where anything but the white background was painted."""
    ptr = img.constBits()
    a = np.frombuffer(ptr, dtype=np.uint8, count=img.sizeInBytes()).reshape(img.height(), img.bytesPerLine())
    px = a[:, : img.width() * 4].reshape(img.height(), img.width(), 4)[..., :3]
    return (px != 255).any(axis=2)


X = np.arange(11.0)
Y = np.array([0.0, 3.0, 3.0, 7.5, 2.0, 2.0, 9.0, 4.0, 1.0, 6.0, 0.5])
CASES = {
    "line": ({"pen": pg.mkPen("b")}, {}, Y),
    "wide line": ({"pen": pg.mkPen("r", width=2)}, {}, Y),
    "filled bars": ({"pen": pg.mkPen("k"), "fillLevel": 0.0, "brush": pg.mkBrush(QColor(0, 120, 0, 150))}, {}, Y),
    "fill only": ({"pen": None, "brush": pg.mkBrush("m")}, {"fillLevel": 1.0}, Y),
    "pairs": ({"pen": pg.mkPen("g", width=2), "connect": "pairs"}, {}, Y),
    "finite": ({"pen": pg.mkPen("b")}, {"connect": "finite"}, np.where(np.arange(11) == 5, np.nan, Y)),
}


DOTS = {
    "dots": {"size": 4, "pen": None, "brush": pg.mkBrush("b")},
    "rings": {"size": 5, "pen": pg.mkPen(QColor(0, 90, 0), width=1), "brush": None},
    "big rings": {"size": 11, "pen": pg.mkPen("r", width=2), "brush": None},
}


def _pair(case: str) -> tuple[pg.GraphicsObject, pg.GraphicsObject]:
    """(ours, pyqtgraph's) for one case, with their data."""
    if case in DOTS:
        y = np.where(np.arange(11) == 4, np.nan, Y)  # (a NaN point is not drawn)
        ours, theirs = DotsItem(**DOTS[case]), pg.ScatterPlotItem(**DOTS[case])
        ours.setData(X, y)
        theirs.setData(X[np.isfinite(y)], y[np.isfinite(y)])
        return ours, theirs
    opts, kw, y = CASES[case]
    ours = CurveItem(**opts)
    ours.setData(X, y, **kw)
    curve = pg.PlotDataItem(**{**opts, **kw})
    curve.setData(X, y)
    return ours, curve


@pytest.mark.parametrize("case", [*CASES, *DOTS])
def test_draws_what_pyqtgraph_draws(qtbot, case):
    ours, theirs = _pair(case)
    _w1, a = _render(qtbot, ours)
    _w2, b = _render(qtbot, theirs)
    ink_a, ink_b = _ink(a), _ink(b)
    assert 40 < ink_a.sum() < 0.5 * W * H and ink_b.sum() > 40  # something was drawn, on white
    differ = np.count_nonzero(np.asarray(a.bits()).reshape(-1) != np.asarray(b.bits()).reshape(-1))
    assert differ == 0, (case, differ)  # the same Qt calls (paths, segments, fragments): the same pixels


@pytest.mark.parametrize("case", [*CASES, *DOTS])
def test_bounds_hold_every_painted_pixel(qtbot, case):
    item, _ = _pair(case)
    w, img = _render(qtbot, item, xr=(-5.0, 15.0), yr=(-5.0, 15.0))
    view = w.viewport()
    rect = w.mapFromScene(item.sceneBoundingRect()).boundingRect()
    assert view.width() == img.width()
    rows, cols = np.nonzero(_ink(img))
    assert rows.size
    assert rect.left() <= cols.min() and cols.max() <= rect.right() + 1
    assert rect.top() <= rows.min() and rows.max() <= rect.bottom() + 1


def test_reads_back_like_a_plot_data_item_and_follows_its_scale(qtbot):
    item = CurveItem(pen=pg.mkPen("k"), fillLevel=0.0, brush=pg.mkBrush("y"))
    assert item.getData() == (None, None)
    item.setData([1, 2, 3], [4.0, np.nan, 6.0])
    x, y = item.getData()
    assert x.dtype == np.float64 and x.tolist() == [1.0, 2.0, 3.0] and np.isnan(y[1])
    assert item.xData is x and item.getOriginalDataset()[1] is y
    assert item.dataBounds(0) == (1.0, 3.0)
    assert item.dataBounds(1) == (0.0, 6.0)  # down to the fill level
    with pytest.raises(ValueError, match="differ in length"):
        item.setData([1, 2], [1.0])
    w, _img = _render(qtbot, item)
    before = item.boundingRect()
    item.setTransform(pg.QtGui.QTransform.fromScale(1.0, 0.5))  # a budget row's new scale
    after = item.boundingRect()
    assert after.height() > before.height()  # the pen's pixel is taller in the item's halved units
    item.setData(np.zeros(0), np.zeros(0))
    assert item.getData()[0].size == 0 and item.dataBounds(0) == (None, None)


def test_a_wide_line_of_thousands_of_points_paints_fast(qtbot):
    """A zoomed-out denoised line (width 2) is a zig-zag of two points per pixel column: stroked as one path,
    Qt filled its outline (≈ 5 s per paint for 4,000 points here: a window frozen for seconds); as segments,
    as pyqtgraph draws a wide pen, milliseconds."""
    import time

    x = np.repeat(np.arange(2000.0), 2)
    y = np.tile([0.0, 1.0], 2000) + np.random.default_rng(0).random(4000) * 0.1
    item = CurveItem(pen=pg.mkPen("b", width=2))
    item.setData(x, y, connect="finite")
    w = pg.PlotWidget(background="w")
    qtbot.addWidget(w)
    w.resize(1000, 300)
    w.addItem(item)
    w.show()
    qtbot.waitExposed(w)
    t = time.perf_counter()
    img = w.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    assert time.perf_counter() - t < 0.5
    assert _ink(img).sum() > 1000
