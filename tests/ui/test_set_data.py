"""Rows hand pyqtgraph only data that changed (issue 15: a click at 10^5 events redrew some 45 items, most of
them with exactly what they already showed), and what they show is still what was asked for."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

from lmdk_gui.ui.views.multiples.curve import CurveItem
from lmdk_gui.ui.views.plots import set_data

from .conftest import wait_denoised


@pytest.fixture
def counted(monkeypatch):
    calls: list[object] = []
    for cls in (pg.PlotDataItem, pg.ScatterPlotItem, CurveItem):
        original = cls.setData

        def spy(self, *args, _original=original, **kwargs):
            calls.append(self)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "setData", spy)
    return calls


def test_same_data_is_not_handed_again(qtbot, monkeypatch):
    item = pg.PlotDataItem()
    counted: list[object] = []
    original = pg.PlotDataItem.setData
    monkeypatch.setattr(pg.PlotDataItem, "setData", lambda self, *a, **k: (counted.append(self), original(self, *a, **k)))
    y = np.array([1.0, np.nan, 3.0])
    set_data(item, np.arange(3.0), y, connect="finite")
    set_data(item, np.arange(3.0), y.copy(), connect="finite")  # equal, NaN included: nothing to do
    assert len(counted) == 1
    other_nan = y.copy()
    other_nan[1] = -np.nan  # another NaN's bits (x86's 0/0 has the sign set), and −0.0 for 0.0: the same drawing
    set_data(item, np.arange(3.0), other_nan, connect="finite")
    set_data(item, np.array([-0.0, 1.0, 2.0]), y, connect="finite")
    assert len(counted) == 1 and np.signbit(other_nan[1]) and other_nan.tobytes() != y.tobytes()
    set_data(item, np.arange(3.0), y, connect="all")  # another option is another drawing
    set_data(item, np.arange(3.0), np.array([1.0, 2.0, 3.0]))
    assert len(counted) == 3
    x, shown = item.getData()
    assert shown.tolist() == [1.0, 2.0, 3.0]
    set_data(item, [], [])
    set_data(item, np.zeros(0), np.zeros(0))
    assert len(counted) == 4 and not len(item.getData()[0] if item.getData()[0] is not None else [])


def test_a_view_is_copied_so_its_release_is_not_kept_alive(qtbot):
    item = pg.PlotDataItem()
    release = np.arange(1_000_000, dtype=np.float64)
    set_data(item, np.arange(10.0), release[500:510])
    shown = item.getData()[1]
    assert shown.tolist() == list(range(500, 510))
    assert shown.base is None or shown.base.size < 1_000  # not a view of the million values


def test_redrawing_an_unchanged_preview_hands_nothing_again(qtbot, window, counted):
    wait_denoised(qtbot, window)
    pp, bp = window.preview_plot, window.budget_plot
    pp.redraw()
    bp.redraw()
    counted.clear()
    pp.redraw()
    bp.redraw()
    assert counted == []
    # A new landmark changes what is drawn: the rows are redrawn with it, and still show the release.
    s = window.session
    s.set_landmarks([100])
    qtbot.waitUntil(lambda: s.is_preview_current() and len(counted) > 0, timeout=30_000)
    x, y = pp.rows["skip"]["dots"].getData()
    rel = s.preview["skip"]
    if len(x):
        rows = x.astype(int)
        assert np.array_equal(y, rel.values[rows]) and not rel.approximated[rows].any()


def test_opening_a_long_series_draws_its_line_once_per_view(qtbot, monkeypatch, tmp_path):
    """From the empty state, opening a series lays the plots out first and then draws the line (drawn
    first, each step of that layout pass drew it again: ≈ 25 ms at 10^7 events); a view already drawn is
    not drawn again; what is drawn is the envelope of the final view; the pyramid comes from the loader."""
    from lmdk_gui.ui.views import plots
    from lmdk_gui.ui.window.main_window import MainWindow, load_job

    n = 300_000
    path = tmp_path / "long.csv"
    t = np.datetime_as_string(np.datetime64("2020-01-01T00:00") + np.arange(n) * np.timedelta64(60, "s"))
    v = np.char.mod("%.3f", np.random.default_rng(3).random(n))
    path.write_text("time,v\n" + "\n".join(np.char.add(np.char.add(t, ","), v)) + "\n")
    series = load_job(str(path), {})
    assert plots._PYRAMIDS.get(series) is not None  # made on the loader's thread
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    drawn: list[tuple] = []
    real = plots.pixel_envelope
    monkeypatch.setattr(plots, "pixel_envelope", lambda y, *view: drawn.append(view[:4]) or real(y, *view))
    w.session.set_series(series)
    sp = w.series_plot
    assert len(drawn) == len(set(drawn)) <= 2, drawn
    sp._on_range()  # the same view again: nothing to do
    assert len(drawn) == len(set(drawn))
    x, y = sp.line.getData()
    want = real(sp.y, *sp._view(), sp._blocks)
    assert np.array_equal(x, want[0]) and np.array_equal(y, want[1], equal_nan=True)
    w.close()


def test_one_style_markers_look_up_their_symbol_once(qtbot, monkeypatch):
    """PassiveScatter's fast path: the same atlas coordinates, spot sizes and picture as pyqtgraph's own
    per-spot look-up, with one look-up for all the points (issue 15: 2,000 events in view)."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    from lmdk_gui.ui.views.plots import PassiveScatter

    rng = np.random.default_rng(0)
    x, y = np.arange(2000.0), rng.random(2000)
    ours = PassiveScatter(size=5, pen=pg.mkPen("k", width=1), brush=pg.mkBrush("r"))
    theirs = pg.ScatterPlotItem(size=5, pen=pg.mkPen("k", width=1), brush=pg.mkBrush("r"))
    lookups: list[int] = []
    atlas_get = type(ours.fragmentAtlas).__getitem__
    monkeypatch.setattr(type(ours.fragmentAtlas), "__getitem__",
                        lambda self, styles: (lookups.append(len(styles)), atlas_get(self, styles))[1])
    for item in (ours, theirs):
        item.setData(x, y)
        item.setData(x[:1500], y[:1500] + 1)  # again: new spots
    assert lookups[:2] == [1, 1] and lookups[2:] == [2000, 1500]
    assert np.array_equal(ours.data["sourceRect"], theirs.data["sourceRect"])
    assert ours._maxSpotPxWidth == theirs._maxSpotPxWidth and ours.boundingRect() == theirs.boundingRect()

    views = []  # a view's scene owns its items: kept until the end

    def picture(item) -> QImage:
        view = pg.GraphicsView()
        views.append(view)
        vb = pg.ViewBox()
        view.setCentralItem(vb)
        vb.addItem(item)
        vb.setRange(QRectF(0, 0, 1500, 2), padding=0)
        view.resize(400, 200)
        img = QImage(400, 200, QImage.Format.Format_ARGB32)
        img.fill(0)
        painter = QPainter(img)
        view.render(painter)
        painter.end()
        return img

    assert picture(ours) == picture(theirs) != picture(pg.ScatterPlotItem())
    # a spot styled on its own goes through pyqtgraph's general path
    ours.setData(spots=[{"pos": (0, 0), "brush": pg.mkBrush("b")}, {"pos": (1, 1)}])
    assert lookups[-1] == 2
