"""Reading the window (issue 14): small-multiple preview rows with off-chart counts, per-row budget scales that
keep small budgets visible, steps that stay steps, hover refresh, View toggles, wheel zoom, Δ explained,
verdict wording and no jargon in what the window shows."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractButton, QApplication, QDockWidget, QGroupBox, QLabel, QTableWidget

from lmdk_gui.core.analysis.metrics import compact_count
from lmdk_gui.core.kernel.guarantee import allocatable
from lmdk_gui.core.kernel.settings import ALL_SCHEMES
from lmdk_gui.ui.views.multiples import bar_steps, column_bins, envelope, mark_positions, robust_range
from tests.conftest import SAMPLES

from .conftest import wait_denoised, wait_preview
from .helpers import event_point, fake_click

JARGON = ("thesis §", "L′", "L'", "ε_sel", "nats", "(1, L)-landmark", " 1 landmarks", "(ε = ")


# ------------------------------------------------------------------------------------------ reduction
def test_column_reduction_keeps_steps_and_only_the_values_present():
    """Skip's budgets are 0 or ε: after reducing 10^5 events to 700 columns every bar is still a flat step
    (pairs of equal y, x never decreasing) whose height is 0 or ε — no ramps, no in-between values."""
    rng = np.random.default_rng(3)
    n, eps = 100_000, 0.7
    b = np.full(n, eps)
    lm = np.sort(rng.choice(n, 300, replace=False))
    b[lm] = 0.0
    starts = column_bins(0, n - 1, 700)
    assert starts is not None and starts.size <= 700
    x, y = bar_steps(b, 0, n - 1, starts)
    assert np.all(np.diff(x) >= 0) and np.array_equal(y[0::2], y[1::2])
    assert set(np.unique(y)) <= {0.0, eps}
    # landmark marks: one per column holding a landmark, inside that column
    xm = mark_positions(lm, 0, n - 1, starts)
    k = int(starts[1] - starts[0])
    cols = np.unique(lm // k)
    assert xm.size == cols.size and np.all(np.abs(xm - (cols * k + (k - 1) / 2)) < 1e-9)
    # the envelope keeps each column's extremes
    v = rng.normal(size=n)
    _c, lo, hi = envelope(v, 0, n - 1, starts)
    assert lo[0] == v[:k].min() and hi[0] == v[:k].max()


@pytest.mark.parametrize("x,digits,text", [(99.7, 2, "100"), (104.0, 2, "100"), (9999.7, 4, "10,000"),
                                            (999.9, 3, "1000"), (-99.7, 2, "-100"), (8776.3, 4, "8776"),
                                            (428_552.0, 4, "428,552"), (0.9939, 4, "0.9939"), (9.99, 2, "10")])
def test_metrics_numbers_that_round_up_keep_their_digits(x, digits, text):
    """A spread of 99.7 kWh, two digits, read "8776 ± 1e+02" in the metrics table: a value that rounds up to
    the next power of ten is written as the others are."""
    from lmdk_gui.ui.panels.metrics_panel import fmt

    assert fmt(x, digits) == text


def test_robust_range_uses_bounds_else_percentiles():
    v = np.r_[np.linspace(0, 1, 1000), 1e6]  # one outlier must not stretch the range
    lo, hi = robust_range(v)
    assert -0.2 < lo < 0 and 1 < hi < 1.2
    assert robust_range(v, (0.0, 7.0)) == pytest.approx((-0.56, 7.56))


# ------------------------------------------------------------------------------------------ preview rows
def test_preview_rows_count_values_beyond_the_chart(qtbot, window):
    s = window.session
    s.add_range(100, 180)
    wait_preview(qtbot, window)
    pp = window.preview_plot
    assert pp.objectName() == "previewPlot"
    assert pp.shown() == [x for x in ALL_SCHEMES if x in s.visible_schemes]  # display order, Balanced too
    lo, hi = pp.yrange()
    orig = s.series.values
    assert lo < np.percentile(orig, 0.5) and hi > np.percentile(orig, 99.5) and hi < orig.max() + 1.0
    for scheme in pp.shown():
        v = s.preview[scheme].values
        above, below = int(np.sum(v > hi)), int(np.sum(v < lo))
        assert pp.offchart(scheme) == (above, below), scheme
        xa, xb = pp.offchart_marks(scheme)
        assert (len(xa) > 0) == (above > 0) and (len(xb) > 0) == (below > 0)  # one mark per ~4 px holding any
        ya = pp.rows[scheme]["above"].getData()[1]
        assert ya is None and above == 0 or (len(ya) == 3 * len(xa) and np.all(ya > hi - 0.07 * (hi - lo)))
        # every off-chart event lies under a mark (within half a mark bin)
        rows_above = np.flatnonzero(v > hi)
        if rows_above.size:
            gap = np.abs(rows_above[:, None] - xa[None, :]).min(axis=1)
            assert gap.max() <= (s.n / pp.rows[scheme]["plot"].getViewBox().width()) * 4 + 1
        if above + below:
            assert f"<b>{compact_count(above + below)}</b> of {compact_count(s.n)} beyond</span><br>the chart: " \
                in pp.note_text(scheme)
        else:
            assert "all values on the chart" in pp.note_text(scheme)
    # Uniform's noise is hundreds of kWh here: most of its values are off the chart, and it says so.
    assert sum(pp.offchart("uniform")) > s.n // 2
    # republished events are drawn apart (rings) from fresh ones (dots)
    rings = 0
    for scheme in ("skip", "adaptive"):
        p = s.preview[scheme]
        inside = (p.values >= lo) & (p.values <= hi)
        xr, _ = pp.rows[scheme]["rings"].getData()
        xd, _ = pp.rows[scheme]["dots"].getData()
        assert len(xr) == int(np.sum(p.approximated & inside))
        assert len(xd) == int(np.sum(~p.approximated & inside))
        rings += len(xr)
    assert rings > 0


def test_public_bounds_set_the_preview_range(qtbot, window):
    s = window.session
    s.set_settings(s.settings.with_(bounds=(0.0, 7.0)))
    wait_preview(qtbot, window)
    assert window.preview_plot.yrange() == pytest.approx((-0.56, 7.56))
    v = s.preview["uniform"].values
    assert window.preview_plot.offchart("uniform") == (int(np.sum(v > 7.56)), int(np.sum(v < -0.56)))


def test_scheme_toggle_adds_and_removes_rows(qtbot, window):
    s = window.session
    s.set_scheme_visible("event", True)
    wait_preview(qtbot, window)
    qtbot.waitUntil(lambda: "event" in window.preview_plot.shown())
    s.set_scheme_visible("skip", False)
    qtbot.waitUntil(lambda: "skip" not in window.preview_plot.shown())
    assert "skip" not in window.budget_plot.shown() and "event" not in window.budget_plot.shown()


# ------------------------------------------------------------------------------------------ budget rows
def test_uniform_budget_of_eps_over_300_draws_a_visible_bar(qtbot, window):
    s = window.session
    s.set_landmarks(np.arange(100, 399))  # 299 landmarks: Uniform gives every event ε_a / 300
    wait_preview(qtbot, window)
    eps_u = allocatable(s.epsilon, s.n) / 300
    assert s.preview["uniform"].budgets[0] == pytest.approx(eps_u)
    r = window.budget_plot.rows["uniform"]
    _x, y = r["regular"].getData()
    assert np.max(y) == pytest.approx(eps_u)
    (_, _), (y0, y1) = r["plot"].getViewBox().viewRange()  # in units of the row's scale
    top = r["regular"].mapToParent(QPointF(0.0, eps_u)).y()  # the bar's top in the view
    assert window.budget_plot.scale("uniform") == pytest.approx(eps_u) and top == pytest.approx(1.0)
    assert y1 <= 1.45 * top and y1 - y0 < 1.8 * top  # the bar fills most of its row
    bar_px = top / (y1 - y0) * r["plot"].getViewBox().height()
    assert bar_px >= 15
    assert "ε/300" in r["note"].text and f"{eps_u:.3g}" in r["note"].text
    # landmark events are marks under the zero line, one per landmark here
    xm, ym = r["lm_marks"].getData()
    assert len(xm) == 2 * 299 and np.all(ym < 0) and np.all(ym / eps_u > y0)  # one short vertical segment each
    # Skip's row is on its own scale: ε, with the dashed total-ε line shown
    sk = window.budget_plot.rows["skip"]
    assert sk["eps"].isVisible() and not r["eps"].isVisible()


def test_a_new_scale_moves_the_bars_not_the_row(qtbot, window, monkeypatch):
    """Issue 15: a click that changes a row's largest budget rescales its bars by their transform; the view,
    the axis ticks (and grid) and the status label's style stay, so the rows repaint once and cheaply."""
    s, bp = window.session, window.budget_plot
    s.set_landmarks(np.arange(100, 399))
    wait_preview(qtbot, window)
    r = bp.rows["uniform"]
    view = r["plot"].getViewBox().viewRange()
    calls = []
    monkeypatch.setattr(r["plot"].getAxis("left"), "setTicks", lambda *a: calls.append("ticks"))
    monkeypatch.setattr(window.status_guarantee, "setStyleSheet", lambda *a: calls.append("style"))
    s.set_landmarks(np.arange(100, 400))  # ε_a/300 → ε_a/301: the same two-digit tick label
    wait_preview(qtbot, window)
    eps_u = allocatable(s.epsilon, s.n) / 301
    assert bp.scale("uniform") == pytest.approx(eps_u)
    assert r["regular"].mapToParent(QPointF(0.0, eps_u)).y() == pytest.approx(1.0)  # the bar's top
    assert r["plot"].getViewBox().viewRange() == view and calls == []
    assert f"{eps_u:.3g}" in r["note"].text


def test_rows_are_laid_out_in_one_pass(qtbot, window, monkeypatch):
    """Issue 15: showing a set of rows activates the grid once (pyqtgraph's addItem activated it after each
    of 13 items, ≈ 40 ms when the first preview showed its rows), and the rows are placed at once."""
    from PySide6.QtWidgets import QGraphicsGridLayout

    wait_preview(qtbot, window)
    pp = window.preview_plot
    calls = []
    real = QGraphicsGridLayout.activate
    monkeypatch.setattr(QGraphicsGridLayout, "activate", lambda self: (calls.append(1), real(self))[1])
    shown = ["uniform", "adaptive", "event"]
    pp._layout(shown)
    assert calls == [1] and pp.shown() == shown
    tops = [pp.rows[k]["plot"].geometry().top() for k in shown]
    assert tops == sorted(tops) and all(pp.rows[k]["plot"].geometry().height() > 20 for k in shown)
    assert not pp.rows["skip"]["plot"].isVisible()


def test_dummy_rows_do_not_redraw_the_previous_budgets(qtbot, window, monkeypatch):
    """Issue 15's note: set_dummies used to redraw the last budgets; the preview that carries the dummies
    draws them, once."""
    bp = window.budget_plot
    calls = []
    monkeypatch.setattr(bp, "redraw", lambda: calls.append(1))
    bp.set_dummies(np.zeros(0, dtype=np.int64))
    bp.set_dummies(np.array([3, 5]))
    assert calls == []


# ------------------------------------------------------------------------------------------ interaction
def test_hover_box_refreshes_after_a_click_and_clears_on_a_new_file(qtbot, window):
    s = window.session
    window.series_plot.getPlotItem().vb.setXRange(150, 250, padding=0)
    qtbot.wait(20)
    row = 200
    scene = window.series_plot.mapToScene(event_point(window, row))
    window._on_hover((QPointF(scene),))
    info = window.series_plot.info
    assert info.isVisible() and f"event {row}" in info.toPlainText() and "landmark" not in info.toPlainText()
    with qtbot.waitSignal(s.previewChanged, timeout=10_000):
        fake_click(qtbot, window, row)
    wait_preview(qtbot, window)
    assert s.is_landmark(row)
    assert info.isVisible() and "landmark" in info.toPlainText()  # no mouse move needed
    with qtbot.waitSignal(s.previewChanged, timeout=30_000):
        assert window.open_series(SAMPLES / "gps_bus_limerick.csv")
    assert not info.isVisible() and window._hover_row is None


def test_the_event_a_click_would_mark_is_ringed_and_named(qtbot, window):
    """A click marks the event within a few pixels of the pointer and does nothing on empty space (issue 2);
    the hover shows which: a ring on that event, which the box names. Over empty space there is no ring (a
    click there marks nothing), and the box reads the event under the pointer's time."""
    s, plot = window.session, window.series_plot
    plot.getPlotItem().vb.setXRange(150, 250, padding=0)
    qtbot.wait(20)
    window._on_hover((QPointF(plot.mapToScene(event_point(window, 200))),))
    x, y = plot.target.getData()
    assert plot.target.isVisible() and x.tolist() == [200.0] and y.tolist() == [plot.y[200]]
    assert "event 200 " in plot.info.toPlainText()
    with qtbot.waitSignal(s.previewChanged, timeout=10_000):
        fake_click(qtbot, window, 200)
    assert s.landmarks.tolist() == [200]
    assert plot.target.isVisible() and "landmark" in plot.info.toPlainText()  # (refreshed after the click)
    # empty space above the event, inside the plot (since issue 44 the metrics table has a row for the constant
    # yardstick and the series plot is 7 px shorter: 60 px above was off its top)
    above = event_point(window, 200) + QPoint(0, -40)
    window._on_hover((QPointF(plot.mapToScene(above)),))
    assert not plot.target.isVisible()
    assert plot.info.isVisible() and "event 200 " in plot.info.toPlainText()
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=above)
    qtbot.wait(50)
    assert s.landmarks.tolist() == [200] and s.undo_stack.count() == 1
    window._on_hover((QPointF(-5.0, -5.0),))  # off the plot: neither
    assert not plot.target.isVisible() and not plot.info.isVisible()


def test_hover_box_is_read_whole_in_a_short_series_plot(qtbot, window):
    """At 1280×800 the series plot is short: the box (an event, its value and every shown scheme's budget)
    stays inside the plot's widget, raised over the title if need be, not clipped by the view."""
    window.resize(1280, 800)
    window.session.set_scheme_visible("event", True)
    window.session.set_scheme_visible("user", True)
    wait_preview(qtbot, window)
    qtbot.wait(20)
    window.series_plot.getPlotItem().vb.setXRange(150, 250, padding=0)
    scene = window.series_plot.mapToScene(event_point(window, 200))
    window._on_hover((QPointF(scene),))
    plot, info = window.series_plot, window.series_plot.info
    assert info.isVisible() and info.toPlainText().count("ε") >= 6
    box = info.geometry()  # (in the viewport's pixels, which are the scene's)
    assert box.height() > plot.vb.sceneBoundingRect().height()  # taller than the view it describes
    assert box.top() >= 0 and box.bottom() < plot.viewport().height()
    assert info.parentWidget() is plot.viewport()  # (not in the view box, which clips its children)


def _wheel(widget, pos: QPoint, mods=Qt.KeyboardModifier.NoModifier) -> None:
    ev = QWheelEvent(QPointF(pos), QPointF(widget.mapToGlobal(pos)), QPoint(0, 0), QPoint(0, 120),
                     Qt.MouseButton.NoButton, mods, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, ev)


def test_wheel_zooms_time_and_ctrl_wheel_the_values(qtbot, window):
    vb = window.series_plot.getPlotItem().vb
    vb.setRange(xRange=(100, 300), yRange=(0, 5), padding=0)
    qtbot.wait(10)
    vp = window.series_plot.viewport()
    pos = event_point(window, 200)
    (x0, x1), (y0, y1) = vb.viewRange()
    _wheel(vp, pos)
    (a0, a1), (b0, b1) = vb.viewRange()
    assert (a1 - a0) < (x1 - x0) and (b0, b1) == pytest.approx((y0, y1))
    _wheel(vp, pos, Qt.KeyboardModifier.ControlModifier)
    (c0, c1), (d0, d1) = vb.viewRange()
    assert (c0, c1) == pytest.approx((a0, a1)) and (d1 - d0) < (b1 - b0)


def test_view_menu_toggles_the_docks(qtbot, window):
    for action, dock in ((window.settings_toggle, window.settings_dock), (window.metrics_toggle, window.metrics_dock)):
        assert action.isCheckable() and action.isEnabled() and action.isChecked()
        action.trigger()
        assert not dock.isVisible() and not action.isChecked()
        action.trigger()
        assert dock.isVisible() and action.isChecked()
    names = [a.text() for a in window.view_menu.actions()]
    assert "Dummy landmarks" in names and not any("Hide landmarks" == t for t in names)


def test_apply_removes_the_proposal_highlight(qtbot, window):
    panel = window.extensions["landmarks_ui"].open_suggestions("threshold")
    panel.set_params(below=0.6, above=None)
    qtbot.waitUntil(panel.is_current, timeout=30_000)
    assert panel.overlay.shown
    assert panel.apply("replace")
    assert not panel.overlay.shown
    assert panel.overlay.band not in window.series_plot.getPlotItem().items
    wait_preview(qtbot, window)


def test_track_view_opens_at_a_readable_width(qtbot, window):
    from lmdk_gui.ui.window.main_window import TRACK_MIN_WIDTH

    with qtbot.waitSignal(window.session.previewChanged, timeout=30_000):
        assert window.open_series(SAMPLES / "gps_bus_limerick.csv")
    qtbot.waitUntil(lambda: window.track_plot.width() >= TRACK_MIN_WIDTH, timeout=5000)
    window.main_split.setSizes([600, 500])
    window._remember_split()
    with qtbot.waitSignal(window.session.previewChanged, timeout=30_000):
        assert window.open_series(SAMPLES / "energy_hue_2013_jan.csv")
    assert not window.track_plot.isVisible()
    with qtbot.waitSignal(window.session.previewChanged, timeout=30_000):
        assert window.open_series(SAMPLES / "gps_bus_limerick.csv")
    qtbot.waitUntil(lambda: window.track_plot.isVisible())
    assert window.main_split.sizes()[1] >= TRACK_MIN_WIDTH


def test_track_draws_the_denoised_releases_and_keeps_its_legend_off_the_map(qtbot, window):
    """Denoise on: each visible scheme's denoised track is a line (its data: the session's denoised values),
    its raw points faint; the legend sits under the map; Denoise off removes the lines."""
    with qtbot.waitSignal(window.session.previewChanged, timeout=30_000):
        assert window.open_series(SAMPLES / "gps_bus_limerick.csv")
    s, track = window.session, window.track_plot
    s.set_landmarks(np.arange(100, 180))
    qtbot.waitUntil(lambda: s.is_preview_current() and s.preview["skip"].denoised_values is not None
                    and track.tracks["skip"].isVisible(), timeout=30_000)
    x, y = track.tracks["skip"].getData()
    den = s.preview["skip"].denoised_values
    np.testing.assert_array_equal(x, den[:, 1])
    np.testing.assert_array_equal(y, den[:, 0])
    assert "denoised" in track.getPlotItem().titleLabel.text
    vb = track.getPlotItem().vb
    # (the layout places the legend on the event loop's next pass: a busy machine may not have run it yet)
    qtbot.waitUntil(lambda: track.legend.sceneBoundingRect().top() >= vb.sceneBoundingRect().bottom() > 0,
                    timeout=5000)
    s.set_denoise(False)
    qtbot.waitUntil(lambda: s.is_preview_current() and not track.tracks["skip"].isVisible(), timeout=30_000)
    assert track.curves["skip"].isVisible() and "denoised" not in track.getPlotItem().titleLabel.text


# ------------------------------------------------------------------------------------------ words
def test_delta_is_explained_and_the_bounds_width_proposed(qtbot, window):
    panel = window.settings_panel
    assert "change in one event's value that is protected" in panel.sens_spin.toolTip()
    assert "Protected change" in panel.sens_label.text()
    assert not panel.sens_warning.isVisible()
    panel.bounds_check.setChecked(True)
    panel.lo_spin.setValue(0.0)
    panel.hi_spin.setValue(7.0)
    assert panel.sens_warning.isVisible() and "smaller than the bounds' width 7" in panel.sens_warning.text()
    assert panel.sens_from_bounds.isVisible()
    qtbot.mouseClick(panel.sens_from_bounds, Qt.MouseButton.LeftButton)
    assert window.session.settings.sensitivity == pytest.approx(7.0)
    assert not panel.sens_warning.isVisible() and not panel.sens_from_bounds.isVisible()
    wait_preview(qtbot, window)


def test_verdicts_say_what_they_speak_of(qtbot, window):
    s = window.session
    s.add_range(100, 180)
    wait_preview(qtbot, window)
    assert "landmark privacy (independent events): holds" in window.status_guarantee.text()
    assert "independent events" in window.metrics_table.horizontalHeaderItem(2).text()
    tab = window.extensions["correlation_ui"]
    window.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(tab.is_current, timeout=30_000)
    assert "under the correlation model you chose" in tab.status_label.text()
    assert "loss" in tab.table.item(0, 2).text() and "·ε" in tab.table.item(0, 2).text()
    assert "Default: a 2-state chain" in tab.default_note.text()


def test_a_long_unit_takes_a_header_line_of_its_own(qtbot, window):
    """Categorical errors are a mismatch rate: after "this seed" the unit made the metrics headers wider than
    their columns at 1280×800 (cut at both ends). A short unit stays on the second line."""
    from lmdk_gui.app import SAMPLE_FILES

    t = window.metrics_table
    assert t.horizontalHeaderItem(9).text() == "MAE denoised\nthis seed (kWh)"  # the energy sample (column kwh)
    name, opts = SAMPLE_FILES["contacts"]
    with qtbot.waitSignal(window.session.previewChanged, timeout=30_000):
        assert window.open_series(SAMPLES / name, **opts)
    for c in (9, 10):
        assert t.horizontalHeaderItem(c).text().split("\n")[-1] == "(mismatch rate)"
    assert t.horizontalHeaderItem(5).text() == "MAE this seed\n(mismatch rate)"


@pytest.mark.parametrize("width", [1280, 1000])
def test_the_metrics_headers_are_read_whole(qtbot, window, width):
    """With equal (stretched) columns "Landmark privacy (independent events)" and "MAE avg of 20 runs" were cut
    at both ends at 1280×800: each column is now as wide as its header, the rest of the width shared. In a
    narrower window the columns shrink alike and still fill the table, without a scroll bar over the last row."""
    window.resize(width, 800)
    qtbot.waitUntil(lambda: window.session.average is not None, timeout=60_000)  # "avg of 20 runs" is said
    t = window.metrics_table
    h = t.horizontalHeader()
    shown = [c for c in range(t.columnCount()) if not t.isColumnHidden(c)]
    room = t.viewport().width()
    qtbot.waitUntil(lambda: sum(h.sectionSize(c) for c in shown) <= room)
    total = sum(h.sectionSize(c) for c in shown)
    assert total >= room - len(shown) and not t.horizontalScrollBar().isVisible()
    if width == 1280:
        for c in shown:
            assert h.sectionSize(c) >= h.sectionSizeFromContents(c).width(), t.horizontalHeaderItem(c).text()


@pytest.mark.parametrize("width", [1400, 1280, 1100])
def test_the_plot_headers_keep_their_keys_whole(qtbot, window, width):
    """The budget and preview headers end with the key of their marks. Cut at the right they lost it (at
    1280×800 the preview's "▲▼ beyond the chart · bands"): they wrap at their width, between keys, and the
    rows below make room for the second line."""
    window.resize(width, 800)
    window.session.add_range(100, 140)
    wait_preview(qtbot, window)
    for plot in (window.budget_plot, window.preview_plot):
        head = plot.header
        qtbot.waitUntil(lambda head=head: head.item.textWidth() == head.rect().width())
        assert head.itemRect().width() <= head.rect().width() + 0.5
        assert head.itemRect().height() <= head.rect().height() + 0.5, (plot.objectName(), width)
        doc = head.item.document()
        block = doc.begin()
        text_lines = [block.layout().lineAt(i) for i in range(block.layout().lineCount())]
        starts = [block.text()[ln.textStart():ln.textStart() + ln.textLength()] for ln in text_lines]
        for part in starts[1:]:  # a wrapped line starts with a key, never inside one
            assert not part.startswith(("landmarks", "landmark events", "original", "released", "republished", "beyond",
                                        "middle", "total ε")), starts
        if width == 1100 and plot is window.preview_plot:
            assert len(starts) == 2  # (the wrapping is exercised)


def test_beside_the_track_the_budget_header_keeps_one_line_and_every_row(qtbot, window):
    """A location series in a 1152×720 window (the track view takes its share of the width): the budget
    header's second line pushed Balanced's row out of the plot. The header is short enough for one line."""
    window.resize(1152, 720)
    with qtbot.waitSignal(window.session.previewChanged, timeout=30_000):
        assert window.open_series(SAMPLES / "gps_bus_limerick.csv")
    qtbot.waitUntil(lambda: window.track_plot.isVisible())
    head = window.budget_plot.header
    qtbot.waitUntil(lambda: head.item.textWidth() == head.rect().width())
    assert head.item.document().begin().layout().lineCount() == 1
    view = window.budget_plot
    last = view.rows["balanced"]["plot"]
    bottom = view.mapFromScene(last.mapToScene(last.boundingRect().bottomLeft())).y()
    assert bottom <= view.viewport().height() + 1


def test_the_correlation_status_is_read_whole_at_1280(qtbot, window):
    """The tab's status ("✔ up to date · under the correlation model you chose (…) · 62 landmarks · ε = 1") was
    one line cut at the right at 1280×800, the landmarks and ε lost: it wraps in the room it has."""
    from PySide6.QtCore import QRect

    window.resize(1280, 800)
    window.session.add_range(100, 140)
    tab = window.extensions["correlation_ui"]
    window.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(tab.is_current, timeout=30_000)
    lab = tab.status_label
    text = lab.text()
    assert "landmarks · ε = 1" in text
    qtbot.waitUntil(lambda: lab.fontMetrics().boundingRect(
        QRect(0, 0, lab.contentsRect().width(), 10_000), Qt.TextFlag.TextWordWrap, text).height() <= lab.height())


def test_no_jargon_in_what_the_window_shows(qtbot, window):
    s = window.session
    s.set_landmarks([5])
    wait_preview(qtbot, window)
    s.set_dummies_enabled(True)
    qtbot.waitUntil(lambda: s.dummy_selection is not None and s.is_preview_current(), timeout=30_000)
    texts = [window.status_guarantee.text(), window.status_landmarks.text()]
    for w in window.findChildren(QLabel):
        if w.isVisibleTo(window):
            texts.append(w.text())
    texts += [b.text() for b in window.findChildren(QAbstractButton)]
    texts += [g.title() for g in window.findChildren(QGroupBox)]
    texts += [d.windowTitle() for d in window.findChildren(QDockWidget)]
    for t in window.findChildren(QTableWidget):
        texts += [t.horizontalHeaderItem(c).text() for c in range(t.columnCount()) if t.horizontalHeaderItem(c)]
    texts += [window.budget_plot.header.text, window.preview_plot.header.text]
    found = [(j, t) for t in texts for j in JARGON if j in t]
    assert found == []
    assert "1 landmark " in window.status_landmarks.text() or window.status_landmarks.text().startswith("1 landmark")


def test_a_denoised_line_draws_over_faint_raw_points(qtbot, window):
    """The slot for denoised releases: a line per scheme, the raw noisy points fainter (the slot itself:
    with the session's Denoise off, so the window draws no line of its own)."""
    s = window.session
    s.set_denoise(False)
    wait_preview(qtbot, window)
    pp = window.preview_plot
    r = pp.rows["skip"]
    alpha_before = r["dots"].opacity()
    smooth = np.convolve(s.preview["skip"].values, np.ones(5) / 5, mode="same")
    pp.set_denoised({"skip": smooth})
    x, y = r["denoised"].getData()
    assert len(x) == s.n and np.allclose(y, smooth)
    assert r["dots"].opacity() < alpha_before
    pp.set_denoised({})
    assert r["denoised"].getData()[0] is None or len(r["denoised"].getData()[0]) == 0


def test_with_denoise_on_the_rows_draw_what_the_export_writes(qtbot, window):
    """The window hands each row its scheme's denoised preview (what the export writes); Denoise off
    removes the lines, on brings them back."""
    s = window.session
    assert s.settings.denoise
    s.add_range(100, 180)
    wait_denoised(qtbot, window)  # the lines are a later stage than the raw points (issue 15)
    pp = window.preview_plot
    for scheme in pp.shown():
        x, y = pp.rows[scheme]["denoised"].getData()
        assert len(x) == s.n and np.allclose(y, s.preview[scheme].denoised_values, equal_nan=True), scheme
    s.set_denoise(False)
    wait_preview(qtbot, window)
    for scheme in pp.shown():
        x = pp.rows[scheme]["denoised"].getData()[0]
        assert x is None or len(x) == 0, scheme
    s.set_denoise(True)
    wait_denoised(qtbot, window)
    x, y = pp.rows["skip"]["denoised"].getData()
    assert np.allclose(y, s.preview["skip"].denoised_values)


def _screen_x(view, widget, window) -> tuple[int, int]:
    r = view.sceneBoundingRect()
    a = widget.mapTo(window, widget.mapFromScene(r.topLeft())).x()
    b = widget.mapTo(window, widget.mapFromScene(r.bottomRight())).x()
    return a, b


@pytest.mark.parametrize("size", [(1280, 800), (1400, 900)])
def test_rows_line_up_with_the_series_plot(qtbot, window, size):
    """Every budget and preview row spans the same screen columns as the series plot, so an event sits at
    the same x in all of them (and no row hides the end of the series)."""
    window.resize(*size)
    window.session.add_range(10, 20)
    wait_preview(qtbot, window)
    qtbot.wait(50)
    ref = _screen_x(window.series_plot.vb, window.series_plot, window)
    for wid in (window.budget_plot, window.preview_plot):
        for scheme in wid.shown():
            got = _screen_x(wid.rows[scheme]["plot"].getViewBox(), wid, window)
            assert abs(got[0] - ref[0]) <= 2 and abs(got[1] - ref[1]) <= 2, (scheme, got, ref)


@pytest.mark.parametrize("kind", ["location", "numeric"])
@pytest.mark.parametrize("height", [110, 400])
def test_the_series_axis_label_fits_the_series_plot(qtbot, kind, height):
    """At 1280×800 the series plot is ≈ 110 px high: "distance from start (m)" (or a long column name) was cut
    at both ends, and so was "m from start". The longest label that fits the axis is shown (the whole name
    when there is room); the whole name is the axis's tooltip."""
    from PySide6.QtGui import QFontMetrics

    from lmdk_gui.core.data.series import Series
    from lmdk_gui.ui.views.plots import SeriesPlot

    plot = SeriesPlot()
    qtbot.addWidget(plot)
    plot.resize(600, 510 - height)  # set at the other height first: the label changes when the plot resizes
    plot.show()
    qtbot.waitExposed(plot)
    rng = np.random.default_rng(0)
    if kind == "location":
        series = Series.from_arrays(np.c_[52.6 + rng.random(50) / 100, -8.6 + rng.random(50) / 100])
        full = "distance from start (m)"
    else:
        series = Series.from_arrays(rng.random(50), name="s")
        object.__setattr__(series, "unit", "kWh per household")
        full = "value (kWh per household)"
    plot.set_series(series)
    axis = plot.getPlotItem().getAxis("left")
    before = plot.getPlotItem().vb.height()
    plot.resize(600, height)
    qtbot.waitUntil(lambda: plot.getPlotItem().vb.height() not in (0, before))
    room = plot.getPlotItem().vb.height()
    assert QFontMetrics(axis.label.font()).horizontalAdvance(axis.labelText) <= room, (axis.labelText, room)
    # where the axis paints it (rotated; the text item's margins are blank)
    margin = axis.label.document().documentMargin()
    drawn = axis.label.mapRectToParent(axis.label.boundingRect()).adjusted(0, margin, 0, -margin)
    assert -1 <= drawn.top() and drawn.bottom() <= axis.height() + 1, (drawn, axis.height())
    assert axis.toolTip() == full
    assert (axis.labelText == full) == (height == 400), axis.labelText


@pytest.mark.parametrize("column,unit,label", [("kwh", "", "kWh"), ("Verbrauch (kWh)", "", "Verbrauch (kWh)"),
                                               ("reading", "", "reading"), ("power_W", "", "power_W"),
                                               ("value", "kWh per household", "value (kWh per household)")])
def test_the_value_axis_names_the_unit_as_the_metrics_do(tmp_path, column, unit, label):
    """The preview's header said "(kwh)" where the metrics' headers said "(kWh)": both take the unit the
    column's name gives."""
    from lmdk_gui.core.data.loader import load_series
    from lmdk_gui.ui.views.plots import y_label

    path = tmp_path / "s.csv"
    path.write_text(f"timestamp,{column}\n2013-01-01 00:00:00,1\n2013-01-01 01:00:00,2\n", encoding="utf-8")
    series = load_series(path)
    if unit:
        object.__setattr__(series, "unit", unit)
    assert y_label(series) == label


def test_the_preview_header_names_what_is_shown_without_nested_parentheses(qtbot, window):
    """"Noisy preview (distance from start (m))" and "(Verbrauch (kWh))": the header says "of …"."""
    assert window.preview_plot.header.text.startswith("<b>Noisy preview</b> of kWh, ")  # the energy sample
    with qtbot.waitSignal(window.session.previewChanged, timeout=30_000):
        assert window.open_series(SAMPLES / "gps_bus_limerick.csv")
    assert window.preview_plot.header.text.startswith("<b>Noisy preview</b> of distance from start (m), ")


def test_a_short_series_plot_keeps_the_unit_of_a_long_column_name(qtbot, tmp_path):
    """A column "Verbrauch (kWh)" showed "Verbrau…" on the short axis: the unit its name gives is kept."""
    from lmdk_gui.core.data.loader import load_series
    from lmdk_gui.ui.views.plots import SeriesPlot

    path = tmp_path / "eu.csv"
    path.write_text("Zeit;Verbrauch (kWh)\n01.01.2013 00:00;0,5\n01.01.2013 01:00;1,5\n", encoding="utf-8")
    plot = SeriesPlot()
    qtbot.addWidget(plot)
    plot.resize(600, 110)
    plot.show()
    qtbot.waitExposed(plot)
    plot.set_series(load_series(path))
    axis = plot.getPlotItem().getAxis("left")
    qtbot.waitUntil(lambda: axis.labelText in ("kWh", "Verbrauch (kWh)"))
    assert axis.toolTip() == "Verbrauch (kWh)"
    plot.resize(600, 80)
    qtbot.waitUntil(lambda: axis.labelText == "kWh")  # (28 px of axis)


@pytest.mark.parametrize("width", [1100, 460, 330, 200])
def test_the_series_title_fits_and_keeps_its_start(qtbot, width):
    """Beside the track view at 1280×800 the centred gesture hint was cut at both ends ("– click: mark/unmark
    …"): the longest variant that fits is shown, starting with the plot's name; the whole hint is its tooltip."""
    from PySide6.QtGui import QFont, QFontMetrics

    from lmdk_gui.ui.views.plots import AXIS_W, LABEL_W, NOTE_W, SERIES_TITLES, SeriesPlot

    plot = SeriesPlot()
    qtbot.addWidget(plot)
    plot.resize(width, 150)
    plot.show()
    qtbot.waitExposed(plot)
    title = plot.getPlotItem().titleLabel
    font = QFont(plot.font())
    font.setPointSizeF(9.0)
    assert title.text in SERIES_TITLES and title.text.startswith("Series")
    room = width - abs(NOTE_W - (LABEL_W + AXIS_W)) - 12  # centred over the plot column, not the widget
    fits = [t for t in SERIES_TITLES if QFontMetrics(font).horizontalAdvance(t) <= room]
    assert title.text == (fits[0] if fits else SERIES_TITLES[-1])
    if width in (1100, 200):
        assert (title.text == SERIES_TITLES[0]) == (width == 1100)
    assert title.item.toolTip() == SERIES_TITLES[0]


@pytest.mark.parametrize("size", [(1280, 780), (1152, 720), (1600, 900)])
def test_the_series_title_is_drawn_whole_beside_the_suggest_panel(qtbot, window, size):
    """The Suggest panel widens the left dock: beside the track view the series plot's title ran past its left
    edge ("ies — click: mark/unmark …"), centred over the plot column, left of the widget's centre. The title
    chosen is drawn whole inside the plot."""
    with qtbot.waitSignal(window.session.previewChanged, timeout=30_000):
        assert window.open_series(SAMPLES / "gps_bus_limerick.csv")  # (with the track view beside the plots)
    window.resize(*size)
    window.extensions["landmarks_ui"].open_suggestions("stay")
    plot = window.series_plot
    title = plot.getPlotItem().titleLabel

    def drawn():
        return plot.mapFromScene(title.item.sceneBoundingRect()).boundingRect()
    qtbot.waitUntil(lambda: plot.getPlotItem().vb.width() > 0 and title.item.sceneBoundingRect().width() > 0)
    qtbot.wait(50)
    r = drawn()
    assert r.left() >= 0 and r.right() <= plot.width(), (title.text, r, plot.width())


def test_the_loaders_make_the_preview_rows_y_range_off_the_gui_thread():
    """``load_for_view`` (every loader job's body) leaves the rows' y range made, the same as the rows' own."""
    from lmdk_gui.ui.views import plots
    from lmdk_gui.ui.views.plots import display_values, load_for_view

    series = load_for_view(str(SAMPLES / "energy_hue_2013_jan.csv"), {})
    assert series in plots._RANGES
    assert plots.series_range(series) == robust_range(display_values(series, series.values))


def test_a_long_status_message_is_elided_in_the_middle_not_cut_under_the_counts(qtbot, window):
    """After Export all persons at 1152×720: "Released 3 of 3 persons into /tmp/s1" ran under the Person
    chooser and the counts, its end lost. A message too long for the room left of the permanent widgets is
    elided in its middle; the whole message is its tooltip and what currentMessage() returns."""
    window.resize(1152, 720)
    wait_preview(qtbot, window)
    sb = window.statusBar()
    full = "Released 3 of 3 persons into /home/steward/releases/2026/households-energy-autumn/release-final"
    sb.showMessage(full)
    qtbot.waitUntil(lambda: QApplication.instance() is not None and sb.isVisible())
    first = min(w.geometry().left() for w in (window.status_events, window.status_landmarks,
                                               window.status_guarantee) if w.isVisible())
    shown = super(type(sb), sb).currentMessage()
    assert shown != full and "…" in shown and shown.startswith("Released 3 of 3") and shown.endswith("release-final")
    assert sb.fontMetrics().horizontalAdvance(shown) <= first - sb.GAP
    assert sb.currentMessage() == full and sb.toolTip() == full
    window.export_progress.show()  # a permanent widget appears: less room, the message fitted again
    qtbot.waitUntil(lambda: super(type(sb), sb).currentMessage() != shown)
    narrower = super(type(sb), sb).currentMessage()
    assert sb.fontMetrics().horizontalAdvance(narrower) <= window.export_progress.geometry().left() - sb.GAP
    window.export_progress.hide()
    sb.showMessage(full)
    sb.clearMessage()  # no tooltip of a message no longer shown
    assert sb.currentMessage() == "" and sb.toolTip() == ""
    sb.showMessage("Opened a.csv")  # a short one is shown whole
    assert super(type(sb), sb).currentMessage() == "Opened a.csv" and sb.toolTip() == ""


def test_a_preview_note_is_three_lines_that_fit_the_notes_column(qtbot, window):
    """The rows' height is three lines of note (PreviewPlot.ROW_MIN): with a fourth, the last row ran below the
    edge of a maximized window on a 1280×800 screen. Counts of a million events still fit the column."""
    from lmdk_gui.ui.views.multiples import NOTE_W

    wait_denoised(qtbot, window)
    pp = window.preview_plot
    note = pp.rows["uniform"]["note"]
    for above, below, n in ((0, 0, 744), (29, 167, 744), (0, 5, 744), (412_345, 487_654, 1_000_000),
                              (4_123_456, 5_876_543, 10_000_000)):
        pp._note("uniform", above, below, n)
        assert len(note._text.lines) <= 3, note.text
        assert note._text.width <= NOTE_W, note.text
        assert note._text.height() <= pp.ROW_MIN


def test_the_preview_notes_and_the_advice_write_large_errors_as_the_metrics_do(qtbot, window):
    """GPS errors of thousands of metres read "error 4.42e+03 → 377 m" in the preview notes (and "4.42e+03 m"
    in the export advice and the What-ε tab) while the metrics table below wrote 4424: one formatter for all."""
    from lmdk_gui.core.analysis.advice import fmt as advice_fmt
    from lmdk_gui.core.analysis.metrics import readable_number

    w = window
    with qtbot.waitSignal(w.session.previewChanged, timeout=30_000):
        assert w.open_series(SAMPLES / "gps_bus_limerick.csv")
    w.session.set_epsilon(0.05)  # errors of thousands of metres
    wait_denoised(qtbot, w)
    notes = [w.preview_plot.note_text(s) for s in ("uniform", "skip", "adaptive", "balanced")]
    assert not any("e+" in t for t in notes), notes
    mae = w.session.preview["uniform"].mae
    assert mae >= 1000 and f"error {readable_number(mae, 3)} → " in notes[0]
    assert advice_fmt(4424.0, "m") == "4420 m" and advice_fmt(0.5512, "kWh") == "0.551 kWh"
