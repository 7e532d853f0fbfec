"""The "Temporal correlation" tab (issue 7): curves against the core, live updates, model controls."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from lmdk_gui.core.analysis.correlation import CorrelationModel, landmark_tpl, reversed_chain
from lmdk_gui.core.kernel.guarantee import landmark_sums
from lmdk_gui.ui.panels.correlation_ui import STALE_COLOR, CorrelationTab, s_to_slider, slider_to_s

from .conftest import wait_preview

LANDMARKS = [*range(10, 51), 200, 300, 301, 302, 600]


def tab_of(window) -> CorrelationTab:
    return window.extensions["correlation_ui"]


def show_tab(qtbot, window) -> CorrelationTab:
    tab = tab_of(window)
    window.tabs.setCurrentWidget(tab)
    wait_current(qtbot, window)
    return tab


def wait_current(qtbot, window) -> None:
    tab = tab_of(window)
    wait_preview(qtbot, window)
    qtbot.waitUntil(tab.is_current, timeout=30_000)


def expected(window, scheme: str, model: CorrelationModel) -> np.ndarray:
    rel = window.session.preview[scheme].release
    return landmark_tpl(rel.budgets, rel.landmarks, model)


def plotted(tab: CorrelationTab, scheme: str) -> np.ndarray:
    _x, y = tab.curves[scheme].getOriginalDataset()
    return np.asarray(y)


def test_tab_exists(window):
    tab = window.findChild(QWidget, "correlationTab")
    assert tab is not None and tab is tab_of(window)
    i = window.tabs.indexOf(tab)
    assert i >= 0 and window.tabs.tabText(i) == "Temporal correlation"
    for name in ("correlationPlot", "correlationTable", "correlationStatus", "correlationError", "sSpin", "sSlider",
                 "statesSpin", "sPreset_1", "sPreset_0_1", "sPreset_0_01", "customRadio", "forwardMatrixTable",
                 "backwardMatrixTable", "backwardMode", "loadMatrixButton"):
        assert tab.findChild(QWidget, name) is not None, name
    assert tab.time_axis.labelText == "time"
    assert "privacy loss at each event" in tab.plot.getPlotItem().getAxis("left").labelText


def test_maxima_equal_core_for_the_preview_budgets(qtbot, window):
    s = window.session
    s.set_landmarks(LANDMARKS)
    tab = show_tab(qtbot, window)
    model = tab.model
    assert model.description.startswith("smoothed 2-state") and np.allclose(model.forward, [[1.1 / 1.2, 0.1 / 1.2],
                                                                                          [0.1 / 1.2, 1.1 / 1.2]])
    assert set(tab.results()) == s.visible_schemes
    for r, scheme in enumerate(("uniform", "skip", "adaptive")):
        exp = expected(window, scheme, model)
        got = plotted(tab, scheme)
        np.testing.assert_allclose(got, exp, rtol=0, atol=1e-12)
        assert got.max() == pytest.approx(exp.max(), abs=1e-12)
        assert tab.results()[scheme].max_row == int(np.argmax(exp))
        assert tab.table.item(r, 1).text() == f"{exp.max():.4g}"
        assert not tab.table.isRowHidden(r)
        # the dot marks the maximum
        mx, my = tab.max_markers[scheme].getOriginalDataset()
        assert list(mx) == [float(np.argmax(exp))] and my[0] == pytest.approx(exp.max())
    # correlation makes every landmark scheme exceed ε here; the table says so
    assert "✘" in tab.table.item(0, 2).text()
    assert tab.table.isRowHidden(3) and tab.table.isRowHidden(4)  # baselines are not shown by default
    assert tab.status_label.text().startswith("✔ up to date")
    assert tab.eps_line.value() == pytest.approx(1.0)


def test_stronger_correlation_raises_the_maxima(qtbot, window):
    s = window.session
    s.set_landmarks(LANDMARKS)
    tab = show_tab(qtbot, window)
    qtbot.mouseClick(tab.preset_buttons[1.0], Qt.MouseButton.LeftButton)
    wait_current(qtbot, window)
    assert tab.s_spin.value() == 1.0 and tab.s_slider.value() == s_to_slider(1.0)
    weak = {k: v.max_tpl for k, v in tab.results().items()}
    with qtbot.waitSignal(tab.curvesUpdated, timeout=30_000):
        qtbot.mouseClick(tab.preset_buttons[0.01], Qt.MouseButton.LeftButton)
    assert tab.model.description == "smoothed 2-state matrix, s = 0.01"
    strong = {k: v.max_tpl for k, v in tab.results().items()}
    for k in weak:
        assert strong[k] > weak[k], k
        np.testing.assert_allclose(plotted(tab, k), expected(window, k, CorrelationModel.smoothed(0.01)), atol=1e-12)
    # the slider and the spin box agree; the spin box takes typed values
    tab.s_slider.setValue(s_to_slider(0.1))
    assert tab.s_spin.value() == pytest.approx(slider_to_s(s_to_slider(0.1)))
    tab.s_spin.setValue(0.5)
    assert tab.model.description == "smoothed 2-state matrix, s = 0.5"
    tab.states_spin.setValue(3)
    assert tab.model.states == 3
    wait_current(qtbot, window)
    np.testing.assert_allclose(plotted(tab, "skip"), expected(window, "skip", CorrelationModel.smoothed(0.5, 3)),
                               atol=1e-12)


def test_invalid_custom_matrix_shows_the_message_and_keeps_the_model(qtbot, window):
    s = window.session
    s.set_landmarks(LANDMARKS)
    tab = show_tab(qtbot, window)
    before = tab.model
    curves_before = {k: v.tpl.copy() for k, v in tab.results().items()}
    assert not tab.set_custom_matrix([[0.9, 0.2], [0.1, 0.9]])
    assert tab.error_label.isVisible()
    assert "row 0 sums to 1.1" in tab.error_label.text()
    assert "Still using: smoothed 2-state matrix, s = 0.1" in tab.error_label.text()
    assert tab.model is before
    qtbot.wait(50)
    assert tab.is_current()  # nothing to recompute: the model did not change
    for k, v in tab.results().items():
        np.testing.assert_array_equal(v.tpl, curves_before[k])
    # typing a non-number into the editor
    tab.forward_table.item(1, 0).setText("abc")
    assert "row 1, column 0: 'abc' is not a number" in tab.error_label.text()
    assert tab.model is before
    # a negative entry
    assert not tab.set_custom_matrix([[1.2, -0.2], [0.5, 0.5]])
    assert "negative entry" in tab.error_label.text() and tab.model is before
    # not square
    assert not tab.set_custom_matrix([[0.5, 0.5]])
    assert "square" in tab.error_label.text() and tab.model is before
    # fixing it uses the matrix and hides the message
    good = [[0.8, 0.2], [0.3, 0.7]]
    with qtbot.waitSignal(tab.curvesUpdated, timeout=30_000):
        assert tab.set_custom_matrix(good)
    assert not tab.error_label.isVisible()
    assert tab.custom_radio.isChecked()
    np.testing.assert_allclose(tab.model.forward, good)
    np.testing.assert_allclose(tab.model.backward, good)
    np.testing.assert_allclose(plotted(tab, "uniform"), expected(window, "uniform", CorrelationModel.from_matrix(good)),
                               atol=1e-12)
    # editing one cell live: an intermediate state with a bad row sum is reported, then fixed
    tab.forward_table.item(0, 0).setText("0.6")
    assert "row 0 sums to 0.8" in tab.error_label.text()
    tab.forward_table.item(0, 1).setText("0.4")
    assert not tab.error_label.isVisible()
    np.testing.assert_allclose(tab.model.forward, [[0.6, 0.4], [0.3, 0.7]])
    # "Normalise rows" fixes row sums
    tab.forward_table.item(1, 0).setText("3")
    tab.forward_table.item(1, 1).setText("1")
    assert tab.error_label.isVisible()
    tab.normalise_rows()
    np.testing.assert_allclose(tab.model.forward, [[0.6, 0.4], [0.75, 0.25]])
    # back to the smoothed chain
    tab.smoothed_radio.setChecked(True)
    assert tab.model.description == "smoothed 2-state matrix, s = 0.1"


def test_separate_backward_and_reversed_chain(qtbot, window):
    window.session.set_landmarks(LANDMARKS)
    tab = show_tab(qtbot, window)
    forward = [[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0.05, 0.05, 0.9]]
    assert tab.set_custom_matrix(forward, reversed_backward=True)
    assert tab.backward_combo.currentData() == "reversed"
    np.testing.assert_allclose(tab.model.backward, reversed_chain(forward), atol=1e-15)
    backward = [[0.5, 0.25, 0.25], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]]
    assert tab.set_custom_matrix(forward, backward)
    assert tab.backward_combo.currentData() == "own" and tab.backward_table.isVisible()
    np.testing.assert_allclose(tab.model.backward, backward)
    np.testing.assert_allclose(tab.model.forward, forward)
    wait_current(qtbot, window)
    model = CorrelationModel.from_matrices(backward, forward)
    np.testing.assert_allclose(plotted(tab, "adaptive"), expected(window, "adaptive", model), rtol=1e-12, atol=1e-12)
    # the combo switches back to one matrix for both directions
    tab.backward_combo.setCurrentIndex(0)
    np.testing.assert_allclose(tab.model.backward, forward)


def test_curve_updates_when_a_landmark_is_toggled(qtbot, window):
    s = window.session
    s.set_landmarks(LANDMARKS)
    tab = show_tab(qtbot, window)
    old = plotted(tab, "uniform").copy()
    s.toggle_landmark(400)
    qtbot.wait(1)  # one pass of the event loop: the tab notices before the new preview exists
    assert not tab.is_current()
    assert "updating" in tab.status_label.text()
    assert tab.curves["uniform"].opts["pen"].color().getRgb()[:3] == STALE_COLOR
    wait_current(qtbot, window)
    assert s.preview["uniform"].release.landmarks.tolist() == sorted([*LANDMARKS, 400])
    new = plotted(tab, "uniform")
    assert not np.array_equal(old, new)
    np.testing.assert_allclose(new, expected(window, "uniform", tab.model), atol=1e-12)
    assert tab.curves["uniform"].opts["pen"].color().getRgb()[:3] != STALE_COLOR
    assert tab.status_label.text().startswith("✔")
    # undo brings the old curve back
    s.undo_stack.undo()
    wait_current(qtbot, window)
    np.testing.assert_allclose(plotted(tab, "uniform"), old, atol=1e-12)


def test_no_correlation_curve_equals_landmark_sums(qtbot, window):
    s = window.session
    s.set_landmarks(LANDMARKS)
    for scheme in ("event", "user"):
        s.set_scheme_visible(scheme, True)
    tab = show_tab(qtbot, window)
    for r, scheme in enumerate(("uniform", "skip", "adaptive", "event", "user")):
        rel = s.preview[scheme].release
        _x, y = tab.nc_curves[scheme].getOriginalDataset()
        sums = landmark_sums(rel.budgets, rel.landmarks)
        np.testing.assert_allclose(y, sums, rtol=0, atol=1e-15)
        assert tab.table.item(r, 3).text() == f"{sums.max():.4g}"
        assert tab.nc_curves[scheme].isVisible()
    tab.nocorr_check.setChecked(False)
    assert not any(c.isVisible() for c in tab.nc_curves.values())


def test_hidden_tab_does_not_compute(qtbot, window):
    s = window.session
    tab = tab_of(window)
    assert window.tabs.currentWidget() is not tab
    s.set_landmarks(LANDMARKS)
    wait_preview(qtbot, window)
    qtbot.wait(50)
    assert tab.computations == 0 and not tab.results()
    window.tabs.setCurrentWidget(tab)
    wait_current(qtbot, window)
    assert tab.computations == 1
    window.tabs.setCurrentIndex(0)
    s.toggle_landmark(500)
    wait_preview(qtbot, window)
    qtbot.wait(50)
    assert tab.computations == 1 and not tab.is_current()
    window.tabs.setCurrentWidget(tab)
    wait_current(qtbot, window)
    assert tab.computations == 2
    np.testing.assert_allclose(plotted(tab, "skip"), expected(window, "skip", tab.model), atol=1e-12)
    # showing one more scheme computes only that one (cached curves are kept)
    with qtbot.waitSignal(tab.curvesUpdated, timeout=30_000):
        s.set_scheme_visible("event", True)
    assert tab.computations == 3 and tab.curves["event"].isVisible() and not tab.table.isRowHidden(3)
    s.set_scheme_visible("skip", False)
    qtbot.wait(10)
    assert not tab.curves["skip"].isVisible() and tab.table.isRowHidden(1) and tab.is_current()
    assert tab.computations == 3


def test_curves_use_the_release_landmark_set(qtbot, window):
    """With dummy landmarks the releases protect L' ⊇ L: the curve is Definition 10 on L'."""
    s = window.session
    s.set_landmarks([100, 200])
    tab = show_tab(qtbot, window)
    dummies = np.array([100, 150, 200, 250, 400], dtype=np.int64)
    s.preview = {k: dataclasses.replace(v, release=dataclasses.replace(v.release, landmarks=dummies))
                 for k, v in s.preview.items()}
    with qtbot.waitSignal(tab.curvesUpdated, timeout=30_000):
        s.previewChanged.emit()
    for scheme in ("uniform", "skip", "adaptive"):
        rel = s.preview[scheme].release
        np.testing.assert_allclose(plotted(tab, scheme), landmark_tpl(rel.budgets, dummies, tab.model), atol=1e-12)
        assert not np.allclose(plotted(tab, scheme), landmark_tpl(rel.budgets, s.landmarks, tab.model))
    assert "5 landmarks" in tab.status_label.text()


def test_load_matrix_files(qtbot, window, tmp_path):
    tab = show_tab(qtbot, window)
    before = tab.model
    csv = tmp_path / "chain.csv"
    csv.write_text("0.7,0.2,0.1\n0.1,0.8,0.1\n0.2,0.2,0.6\n")
    with qtbot.waitSignal(tab.curvesUpdated, timeout=30_000):
        assert tab.load_matrix_file(csv)
    assert tab.model.states == 3 and "chain.csv" in tab.model.description
    assert tab.forward_table.rowCount() == 3 and tab.custom_radio.isChecked()
    assert tab.backward_combo.currentData() == "same"
    js = tmp_path / "two.json"
    js.write_text(json.dumps({"backward": [[0.6, 0.4], [0.3, 0.7]], "forward": [[0.9, 0.1], [0.2, 0.8]]}))
    assert tab.load_matrix_file(js)
    np.testing.assert_allclose(tab.model.backward, [[0.6, 0.4], [0.3, 0.7]])
    assert tab.backward_combo.currentData() == "own"
    np.testing.assert_allclose(tab.backward_table.values("b"), [[0.6, 0.4], [0.3, 0.7]])
    loaded = tab.model
    bad = tmp_path / "bad.csv"
    bad.write_text("0.5,0.6\n0.5,0.5\n")
    assert not tab.load_matrix_file(bad)
    assert "bad.csv" in tab.error_label.text() and "row 0 sums to 1.1" in tab.error_label.text()
    assert tab.model is loaded
    assert not tab.load_matrix_file(tmp_path / "missing.json")
    assert "no such matrix file" in tab.error_label.text() and tab.model is loaded
    assert before is not loaded
    wait_current(qtbot, window)


def test_x_axis_follows_the_series_plot(qtbot, window):
    tab = show_tab(qtbot, window)
    window.series_plot.vb.setXRange(100, 200, padding=0)
    (x0, x1), _ = tab.vb.viewRange()
    assert (x0, x1) == pytest.approx((100, 200))
    tab.vb.setXRange(300, 350, padding=0)
    (a, b), _ = window.series_plot.vb.viewRange()
    assert (a, b) == pytest.approx((300, 350))
    # while hidden the tab catches up when shown
    window.tabs.setCurrentIndex(0)
    window.series_plot.vb.setXRange(10, 90, padding=0)
    window.tabs.setCurrentWidget(tab)
    (x0, x1), _ = tab.vb.viewRange()
    assert (x0, x1) == pytest.approx((10, 90))
    # the y range always includes ε and the visible curves
    _, (y0, y1) = tab.vb.viewRange()
    assert y0 <= 0 and y1 >= max(window.session.epsilon, max(plotted(tab, k)[10:91].max() for k in tab.results()))
    tab.follow_check.setChecked(False)
    window.series_plot.vb.setXRange(500, 600, padding=0)
    (x0, x1), _ = tab.vb.viewRange()
    assert (x0, x1) == pytest.approx((10, 90))


def test_epsilon_and_log_axis(qtbot, window):
    s = window.session
    s.invert_landmarks()  # every event is a landmark: Skip's budgets are all 0, its curve is 0 everywhere
    tab = show_tab(qtbot, window)
    assert tab.results()["skip"].max_tpl == 0.0
    assert "✔" in tab.table.item(1, 2).text()
    tab.log_check.setChecked(True)
    _, (y0, y1) = tab.vb.viewRange()
    assert np.isfinite(y0) and np.isfinite(y1) and y0 < 0 < y1  # log10 of (< 1, > 1)
    with qtbot.waitSignal(tab.curvesUpdated, timeout=30_000):
        s.set_epsilon(2.0)
    assert tab.eps_line.value() == pytest.approx(np.log10(2.0))
    tab.log_check.setChecked(False)
    assert tab.eps_line.value() == pytest.approx(2.0)


def test_state_round_trip(qtbot, window):
    tab = show_tab(qtbot, window)
    tab.set_custom_matrix([[0.8, 0.2], [0.4, 0.6]], [[0.7, 0.3], [0.2, 0.8]])
    tab.log_check.setChecked(True)
    tab.follow_check.setChecked(False)
    st = json.loads(json.dumps(tab.state()))
    model = tab.model
    tab.set_smoothing(1.0, 3)
    tab.log_check.setChecked(False)
    tab.restore(st)
    assert tab.custom_radio.isChecked() and tab.log_check.isChecked() and not tab.follow_check.isChecked()
    np.testing.assert_allclose(tab.model.forward, model.forward)
    np.testing.assert_allclose(tab.model.backward, model.backward)
    tab.restore({"mode": "smoothed", "s": 0.01, "m": 2})
    assert tab.model.description == "smoothed 2-state matrix, s = 0.01"
    tab.restore({"mode": "smoothed", "s": "nonsense", "m": -1})  # never raises
    assert tab.model.description == "smoothed 2-state matrix, s = 0.1"
    tab.restore("not a dict")
    wait_current(qtbot, window)


def test_worker_stops_when_the_window_closes(qtbot, window):
    tab = show_tab(qtbot, window)
    runner = tab._runner
    assert runner is not None and runner._thread.is_alive()
    window.close()
    qtbot.waitUntil(lambda: tab._runner is None, timeout=5000)
    assert not runner._thread.is_alive()
