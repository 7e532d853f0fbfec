"""The series line hands pyqtgraph only one min/max pair per pixel column (issue 15), and draws exactly the
extremes a full draw shows in each pixel column; clicks at data coordinates still land on the right event."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lmdk_gui.ui.views.plots import BLOCK, block_extremes, column_extremes, pixel_envelope


def full_extremes(y: np.ndarray, a: int, b: int, x0: float, px_w: float) -> dict[int, tuple[float, float]]:
    """Per pixel column (index j of [x0 + j·px_w, x0 + (j+1)·px_w)): min and max of the finite values of rows
    a..b that fall in it, computed row by row."""
    out: dict[int, list[float]] = {}
    for r in range(a, b + 1):
        if np.isfinite(y[r]):
            out.setdefault(math.floor((r - x0) / px_w), []).append(float(y[r]))
    return {j: (min(v), max(v)) for j, v in out.items()}


def drawn_extremes(xs: np.ndarray, ys: np.ndarray, x0: float, px_w: float) -> dict[int, tuple[float, float]]:
    out: dict[int, list[float]] = {}
    for x, v in zip(xs, ys, strict=True):
        if np.isfinite(v):
            out.setdefault(math.floor((x - x0) / px_w), []).append(float(v))
    return {j: (min(v), max(v)) for j, v in out.items()}


@pytest.mark.parametrize("pyramid", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_envelope_has_each_pixel_columns_extremes(seed, pyramid):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5_000, 200_000))
    y = rng.standard_normal(n) * rng.choice([1.0, 100.0], n)
    y[rng.choice(n, n // 50, replace=False)] = np.nan
    y[rng.integers(0, n - 3000):][:2500] = np.nan  # an all-NaN stretch: gaps, not zeros
    a = int(rng.integers(0, n // 3))
    b = int(rng.integers(2 * n // 3, n))
    x0 = a - float(rng.random()) * 3
    px_w = (b - x0) / float(rng.integers(200, 1500))
    blocks = block_extremes(y) if pyramid else None
    xs, ys = pixel_envelope(y, a, b, x0, px_w, blocks)
    assert xs.size <= 2 * ((b - x0) / px_w + 2)  # about one pair per pixel column, never the rows
    assert np.all(np.diff(xs) >= 0)
    assert drawn_extremes(xs, ys, x0, px_w) == full_extremes(y, a, b, x0, px_w)


def test_pyramid_equals_direct_reduction():
    rng = np.random.default_rng(9)
    y = rng.standard_normal(300_000)
    y[rng.choice(y.size, 3000, replace=False)] = np.nan
    starts = np.unique(np.sort(rng.integers(1000, 290_000, 300)))
    starts = starts[np.append(np.diff(starts) >= 2 * BLOCK, True)]
    end = 295_000
    direct = column_extremes(y, starts, end)
    fast = column_extremes(y, starts, end, block_extremes(y))
    np.testing.assert_array_equal(direct[0], fast[0])
    np.testing.assert_array_equal(direct[1], fast[1])


def test_pyramid_equals_direct_reduction_at_block_borders_and_across_gaps():
    """Columns that start or end on a block border (no partial head or tail), and columns whose partial rows
    or whole blocks hold no value at all (NaN: a gap in the line)."""
    rng = np.random.default_rng(4)
    y = rng.standard_normal(200_000)
    y[10 * BLOCK + 7:14 * BLOCK + 3] = np.nan  # whole blocks and partial rows without a value
    y[50_000:50_300] = np.nan
    starts = np.array([0, 3 * BLOCK, 10 * BLOCK + 7, 14 * BLOCK + 3, 20 * BLOCK, 49_990, 52_000, 60_001])
    for end in (70_000, 260 * BLOCK - 1):
        direct = column_extremes(y, starts, end)
        fast = column_extremes(y, starts, end, block_extremes(y))
        np.testing.assert_array_equal(direct[0], fast[0])
        np.testing.assert_array_equal(direct[1], fast[1])
    assert np.isnan(direct[0][2])  # the gap's own column


def test_few_events_are_drawn_themselves():
    y = np.arange(100, dtype=np.float64)
    xs, ys = pixel_envelope(y, 10, 60, 9.5, 0.5)
    np.testing.assert_array_equal(xs, np.arange(10, 61))
    np.testing.assert_array_equal(ys, y[10:61])


def _open(qtbot, tmp_path, vals: np.ndarray):
    """A shown 1400×900 window with ``vals`` (one a minute) opened from a CSV."""
    import pandas as pd

    from lmdk_gui.ui import MainWindow

    t = np.datetime64("2020-01-01T00:00:00") + np.arange(vals.size) * np.timedelta64(60, "s")
    pd.DataFrame({"timestamp": np.datetime_as_string(t, unit="s"), "v": vals}).to_csv(tmp_path / "s.csv",
                                                                                    index=False)
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    assert w.open_series(tmp_path / "s.csv")
    return w


def test_long_series_line_holds_only_what_is_drawn_and_clicks_land(qtbot, tmp_path):
    """A 200,000-event series: zoomed out, the line item holds about two points per pixel column; zoomed in,
    the events in view; a click at an event's data coordinates toggles that event."""
    from .conftest import wait_preview
    from .helpers import fake_click

    n = 200_000
    vals = np.random.default_rng(4).standard_normal(n)
    w = _open(qtbot, tmp_path, vals)
    wait_preview(qtbot, w)
    plot = w.series_plot
    width = plot.vb.width()
    x, y = plot.line.getData()
    assert 0 < x.size <= 2 * (width + 4)
    assert np.nanmax(y) == vals.max() and np.nanmin(y) == vals.min()
    (vx0, vx1), (vy0, vy1) = plot.vb.viewRange()  # auto-range still covers the whole series
    assert vx0 <= 0 and vx1 >= n - 1 and vy0 <= vals.min() and vy1 >= vals.max()
    row = 123_457
    plot.vb.setXRange(row - 40, row + 40, padding=0)
    qtbot.waitUntil(lambda: plot.line.getData()[0].size < 200)
    x, y = plot.line.getData()
    np.testing.assert_array_equal(y, vals[x.astype(int)])  # the events themselves
    fake_click(qtbot, w, row)
    wait_preview(qtbot, w)
    assert list(w.session.landmarks) == [row]
    w.close()


def test_budget_bars_reduced_on_a_helper_thread_when_zoomed_out(qtbot, tmp_path, monkeypatch):
    """Above ASYNC_ROWS rows in view the budget rows are computed off the GUI thread; what arrives is what
    the synchronous path draws, and a stale result (an older view) is never drawn."""

    from lmdk_gui.ui.views import multiples
    from lmdk_gui.ui.views.multiples import grid as rows

    from .conftest import wait_preview

    monkeypatch.setattr(rows, "ASYNC_ROWS", 1000)
    n = 50_000
    w = _open(qtbot, tmp_path, np.random.default_rng(5).random(n))
    w.session.set_landmarks(np.sort(np.random.default_rng(6).choice(n, 3000, replace=False)))
    wait_preview(qtbot, w)
    bp = w.budget_plot
    a, b, width = bp._view_rows(n)
    want = multiples.bar_data(bp._split, bp._landmarks, bp._dummies if bp._dummies.size else None, bp._tops, a, b,
                              multiples.view_bins(a, b, width))
    scheme = next(iter(want))

    def drawn() -> bool:
        x, y = bp.rows[scheme]["landmark"].getOriginalDataset()
        return x is not None and x.size == want[scheme]["landmark"][0].size and \
            np.array_equal(x, want[scheme]["landmark"][0]) and np.array_equal(y, want[scheme]["landmark"][1])

    qtbot.waitUntil(drawn, timeout=10_000)
    gen = bp._generation
    bp._apply(gen - 1, {scheme: {"landmark": (np.zeros(2), np.ones(2))}})  # stale: ignored
    assert drawn()
    w.close()


def test_preview_rows_reduced_on_a_helper_thread_when_zoomed_out(qtbot, tmp_path, monkeypatch):
    """Above ASYNC_ROWS rows in view the preview rows (points, bands, rings, ▲/▼, denoised lines) are reduced
    off the GUI thread (they held it ≈ 0.2 s on opening 10^7 events): what arrives is what the synchronous
    path draws at the same view, its counts reach the notes, and a stale result is never drawn."""
    from lmdk_gui.ui.views import multiples
    from lmdk_gui.ui.views.multiples import grid as rows
    from lmdk_gui.ui.views.multiples import preview as preview_plot

    from .conftest import wait_denoised

    n = 50_000
    w = _open(qtbot, tmp_path, np.random.default_rng(5).random(n) * 4)
    w.session.set_landmarks(np.sort(np.random.default_rng(6).choice(n, 3000, replace=False)))
    wait_denoised(qtbot, w)
    pp = w.preview_plot
    keys = ("dense", "rings", "above", "denoised")

    def forget() -> None:  # so that only a new drawing can bring the items back
        for s in pp.shown():
            for k in keys:
                multiples.set_data(pp.rows[s][k], [], [])

    def drawn() -> dict:
        return {(s, k): pp.rows[s][k].getData() for s in pp.shown() for k in keys}

    view = pp._in_view()
    forget()
    pp.redraw()  # synchronous: 50,000 rows ≤ ASYNC_ROWS
    want, offchart = drawn(), {s: pp.offchart(s) for s in pp.shown()}
    assert all(x is not None and len(x) for (s, k), (x, _y) in want.items() if k != "rings")
    monkeypatch.setattr(rows, "ASYNC_ROWS", 1000)
    calls = []
    real = multiples.preview_rows
    monkeypatch.setattr(preview_plot, "preview_rows", lambda *a: (calls.append(a), real(*a))[1])
    forget()
    pp.redraw()

    def same() -> bool:
        got = drawn()
        return all(got[key][0] is not None and len(got[key][0]) == len(x) and np.array_equal(got[key][0], x)
                   and np.array_equal(got[key][1], y) for key, (x, y) in want.items() if x is not None)

    qtbot.waitUntil(same, timeout=10_000)
    assert len(calls) == 1 and pp._in_view()[:3] == view[:3]
    assert {s: pp.offchart(s) for s in pp.shown()} == offchart
    scheme = pp.shown()[0]
    pp._apply(pp._generation - 1, {None: 5, scheme: {"denoised": None, "offchart": (9, 9),
                                                      "offchart_x": (np.zeros(0), np.zeros(0))}})  # stale
    assert same() and pp.offchart(scheme) == offchart[scheme]
    w.close()


@pytest.mark.parametrize("dummies", [False, True])
def test_budget_bars_split_a_group_of_columns_at_a_time(monkeypatch, dummies):
    """Zoomed out, each column's highest regular / landmark / dummy bar is taken a group of whole columns at
    a time (no arrays the size of the view): the maxima of the whole split, NaN and zero budgets included."""
    from lmdk_gui.ui.views import multiples
    from lmdk_gui.ui.views.multiples import budget as budget_plot

    rng = np.random.default_rng(9)
    n = 50_000
    b = rng.random(n)
    b[rng.choice(n, 5000, replace=False)] = 0.0
    b[rng.choice(n, 50, replace=False)] = np.nan
    is_lm = rng.random(n) < 0.2
    is_dm = (rng.random(n) < 0.1) & ~is_lm if dummies else None
    local = multiples.column_bins(0, n - 1, 700)
    assert local is not None
    want = [None if x is None else np.maximum.reduceat(x, local) for x in multiples.split_bars(b, is_lm, is_dm)]
    monkeypatch.setattr(budget_plot, "SPLIT_ROWS", 1000)  # ≈ 14 columns per group
    got = multiples.bin_tops(b, is_lm, is_dm, local)
    for g, w in zip(got, want, strict=True):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_array_equal(g, w)


def test_a_stale_helper_job_is_dropped_before_it_starts(qtbot, tmp_path, monkeypatch):
    """A zoomed-out redraw replaced by a newer one while it waits for the helper thread never runs: it
    would only hold the older preview's arrays (80 MB each at 10^7 events) for a result nobody draws."""
    import threading

    from lmdk_gui.ui.views import multiples
    from lmdk_gui.ui.views.multiples import budget as budget_plot
    from lmdk_gui.ui.views.multiples import grid as rows

    from .conftest import wait_preview

    monkeypatch.setattr(rows, "ASYNC_ROWS", 1000)
    n = 50_000
    w = _open(qtbot, tmp_path, np.random.default_rng(5).random(n))
    w.session.set_landmarks(np.arange(0, n, 17))
    wait_preview(qtbot, w)
    bp = w.budget_plot
    bp._pool.submit(lambda: None).result()  # the helper is idle
    gate = threading.Event()
    bp._pool.submit(gate.wait)  # holds the helper while two redraws queue up
    calls = []
    real = multiples.bar_data
    monkeypatch.setattr(budget_plot, "bar_data", lambda *a: (calls.append(a[4:6]), real(*a))[1])
    bp.redraw()
    bp.redraw()
    gate.set()
    bp._pool.submit(lambda: None).result()
    assert len(calls) == 1
    w.close()


def test_time_labels_never_run_into_each_other(qtbot, window):
    """A timestamp label is ≈ 100 px wide and pyqtgraph spaces ticks by numbers alone: in a narrow or zoomed
    plot the labels ran together ("2013-01-11 10:002013-01-13 12:00"). The time axis keeps only as many
    ticks as their labels fit side by side, at every zoom."""
    from PySide6.QtGui import QFontMetrics

    axis = window.series_plot.time_axis
    for lo, hi in ((0, 743), (150, 300), (200, 215), (0, 100)):
        for size in (300.0, 510.0, 1000.0):
            levels = axis.tickValues(lo, hi, size)
            values = sorted(v for _s, vals in levels for v in vals)
            labels = axis.tickStrings(values, 1.0, 1.0)
            fm = QFontMetrics(axis.style.get("tickFont") or axis.font())
            px = [(v - lo) * size / (hi - lo) for v in values]
            widths = [fm.horizontalAdvance(t) for t in labels]
            assert values, (lo, hi, size)
            for a, b, wa, wb in zip(px, px[1:], widths, widths[1:], strict=False):
                assert b - a >= (wa + wb) / 2, (lo, hi, size, labels)
