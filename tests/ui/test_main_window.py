"""The main window (issue 3): clicking, dragging, undo/redo, settings, bad files, rendering."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from lmdk_gui.core.kernel.guarantee import allocatable
from lmdk_gui.ui import MainWindow
from tests.conftest import DATA, SAMPLES

from .conftest import wait_preview
from .helpers import bars_per_event, fake_click, fake_drag


def test_object_names_and_actions(window):
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QWidget

    for name in ("seriesPlot", "budgetPlot", "previewPlot", "settingsDock", "metricsTable"):
        assert window.findChild(QWidget, name) is not None, name
    for name in ("openAction", "exportAction", "undoAction", "redoAction"):
        assert window.findChild(QAction, name) is not None, name
    assert window.session.series.n == 744


def test_click_toggles_exactly_that_event_and_updates_bars_and_metrics(qtbot, window):
    s = window.session
    assert s.landmarks.size == 0
    before_metric = window.metrics_table.item(0, 3).text()
    row = 200
    window.series_plot.getPlotItem().vb.setXRange(150, 250, padding=0)
    qtbot.wait(10)
    with qtbot.waitSignal(s.previewChanged, timeout=10_000):
        fake_click(qtbot, window, row)
    assert s.landmarks.tolist() == [row]
    eps_a = allocatable(1.0, s.n)
    assert np.all(s.preview["uniform"].budgets == eps_a / 2)
    assert s.preview["skip"].budgets[row] == 0.0
    # The budget bars show it: the Skip row's landmark curve has its bar at the row.
    bars = bars_per_event(window.budget_plot.rows["skip"]["regular"], s.n)
    assert bars[row] == 0.0 and bars[row - 1] == pytest.approx(eps_a) and bars[row + 1] == pytest.approx(eps_a)
    assert window.metrics_table.item(0, 3).text() != before_metric
    # Clicking it again unmarks it.
    with qtbot.waitSignal(s.previewChanged, timeout=10_000):
        fake_click(qtbot, window, row)
    assert s.landmarks.size == 0


def test_click_on_empty_space_does_nothing(qtbot, window):
    window.series_plot.getPlotItem().vb.setXRange(150, 250, padding=0)
    qtbot.wait(10)
    # Far above the data (the top of the view), between events: nothing within a few pixels.
    fake_click(qtbot, window, 200, offset=QPoint(0, -60))
    qtbot.wait(50)
    assert window.session.landmarks.size == 0
    assert window.session.undo_stack.count() == 0


def test_shift_drag_adds_a_range_and_ctrl_drag_removes(qtbot, window):
    s = window.session
    window.series_plot.getPlotItem().vb.setXRange(0, 100, padding=0)
    qtbot.wait(10)
    with qtbot.waitSignal(s.landmarksChanged, timeout=5000):
        fake_drag(window, 19.6, 40.4)
    assert s.landmarks.tolist() == list(range(20, 41))
    assert s.undo_stack.count() == 1  # one drag = one step
    with qtbot.waitSignal(s.landmarksChanged, timeout=5000):
        fake_drag(window, 24.6, 30.4, Qt.KeyboardModifier.ControlModifier)
    assert s.landmarks.tolist() == list(range(20, 25)) + list(range(31, 41))
    wait_preview(qtbot, window)


def test_undo_redo_restore_exact_sets(qtbot, window):
    s = window.session
    s.toggle_landmark(3)
    s.add_range(10, 20)
    s.toggle_landmark(15)
    sets = [[], [3], [3] + list(range(10, 21)), [3] + [r for r in range(10, 21) if r != 15]]
    assert s.landmarks.tolist() == sets[3]
    window.undo_action.trigger()
    assert s.landmarks.tolist() == sets[2]
    window.undo_action.trigger()
    assert s.landmarks.tolist() == sets[1]
    window.undo_action.trigger()
    assert s.landmarks.tolist() == sets[0]
    window.redo_action.trigger()
    window.redo_action.trigger()
    assert s.landmarks.tolist() == sets[2]
    assert window.undo_action.shortcut().toString() == "Ctrl+Z"
    assert "Ctrl+Shift+Z" in [k.toString() for k in window.redo_action.shortcuts()]
    wait_preview(qtbot, window)
    assert s.preview["uniform"].budgets[0] == pytest.approx(allocatable(1.0, s.n) / (len(sets[2]) + 1))


def test_clear_and_invert(qtbot, window):
    s = window.session
    s.add_range(0, 9)
    window.invert_action.trigger()
    assert s.landmarks.tolist() == list(range(10, s.n))
    window.clear_action.trigger()
    assert s.landmarks.size == 0
    window.undo_action.trigger()
    assert s.landmarks.size == s.n - 10


def test_epsilon_spin_box_changes_every_budget(qtbot, window):
    s = window.session
    s.set_landmarks([5, 6, 7])
    wait_preview(qtbot, window)
    old = {k: v.budgets.copy() for k, v in s.preview.items()}
    with qtbot.waitSignal(s.previewChanged, timeout=10_000):
        window.settings_panel.eps_spin.setValue(2.0)
    assert s.epsilon == 2.0
    for scheme, prev in old.items():
        new = s.preview[scheme].budgets
        nz = prev > 0
        assert np.allclose(new[nz] / prev[nz], 2.0, rtol=1e-9) or scheme == "adaptive", scheme
        assert not np.array_equal(new, prev), scheme
    assert window.settings_panel.eps_slider.value() > 0
    assert "2" in window.metrics_table.item(0, 1).text()


def test_epsilon_slider_is_logarithmic(window):
    panel = window.settings_panel
    panel.eps_slider.setValue(panel.eps_slider.maximum())
    assert window.session.epsilon == pytest.approx(10.0)
    panel.eps_slider.setValue(0)
    assert window.session.epsilon == pytest.approx(0.01)


def test_bad_file_leaves_session_unchanged_and_shows_error(qtbot, window, tmp_path):
    s = window.session
    s.set_landmarks([1, 2, 3])
    wait_preview(qtbot, window)
    series, lm, undo = s.series, s.landmarks.copy(), s.undo_stack.count()
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp,kwh\n2013-01-01 00:00:00,1.0\n2013-01-01 01:00:00,abc\n")
    assert not window.open_series(bad)
    assert s.series is series
    assert s.landmarks.tolist() == lm.tolist()
    assert s.undo_stack.count() == undo
    assert "bad.csv" in window.last_error and "kwh" in window.last_error and "3" in window.last_error
    box = window.findChild(type(window._error_box), "errorBox")
    assert box is not None and box.isVisible()
    box.close()


def test_async_open_failure_keeps_session(qtbot, window, tmp_path):
    s = window.session
    series = s.series
    bad = tmp_path / "empty.csv"
    bad.write_text("")
    with qtbot.waitSignal(window.loadFailed, timeout=10_000):
        window.open_series_async(str(bad), {})
    assert s.series is series
    assert "empty.csv" in window.last_error


def test_async_open_success(qtbot, window):
    with qtbot.waitSignal(window.seriesLoaded, timeout=20_000):
        window.open_series_async(str(SAMPLES / "gps_bus_limerick.csv"), {})
    assert window.session.series.kind == "location"
    assert str(SAMPLES / "gps_bus_limerick.csv") in window.recent_files()


def test_hover_shows_time_value_and_budgets(qtbot, window):
    s = window.session
    s.set_landmarks([10])
    wait_preview(qtbot, window)
    html = window.hover_html(10)
    assert "2013-01-01 10:00:00" in html and "landmark" in html
    assert "Uniform" in html and "Skip" in html and "Adaptive" in html


def test_status_bar(qtbot, window):
    s = window.session
    s.add_range(0, 73)
    wait_preview(qtbot, window)
    assert "744 events" in window.status_events.text()
    assert "74 landmarks (9.9%)" in window.status_landmarks.text()
    assert "holds" in window.status_guarantee.text()


@pytest.mark.parametrize(
    ("path", "opts"),
    [
        (SAMPLES / "energy_hue_2013_jan.csv", {}),
        (SAMPLES / "gps_bus_limerick.csv", {}),
        (SAMPLES / "contacts_person1672.csv", {"kind": "categorical", "duplicates": "first"}),
    ],
)
@pytest.mark.parametrize("size", [None, (1280, 800)])
def test_window_renders_each_kind(qtbot, tmp_path, path, opts, size):
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.session.previewChanged, timeout=30_000):
        assert w.open_series(path, **opts)
    w.session.add_range(w.session.n // 10, w.session.n // 5)
    if size:
        w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    wait_preview(qtbot, w)
    out = tmp_path / f"{path.stem}.png"
    assert w.grab().save(str(out))
    assert out.stat().st_size > 20_000
    assert w.track_plot.isVisible() == (w.session.series.kind == "location")
    w.close()


def test_full_hue_file_needs_a_duplicates_choice(qtbot, window):
    assert not window.open_series(DATA / "energy_hue_residential1_2013.csv")
    assert "2013-11-03 01:00" in window.last_error or "duplicate" in window.last_error.lower()
    window._error_box.close()
    with qtbot.waitSignal(window.session.previewChanged, timeout=30_000):
        assert window.open_series(DATA / "energy_hue_residential1_2013.csv", duplicates="first")
    assert window.session.n == 8759


def test_denoise_checkbox_changes_the_metrics_and_the_denoised_values(qtbot, window):
    """On by default: the preview carries raw values and their post-processing; unticking it drops the
    denoised values and hides the denoised columns; the raw release is the same either way."""
    from lmdk_gui.core.analysis.denoise import denoise
    from lmdk_gui.ui.panels.metrics_panel import DENOISED_COLUMNS

    s, table, check = window.session, window.metrics_table, window.settings_panel.denoise_check
    assert check.isChecked() and s.settings.denoise and "guarantee" in check.toolTip()
    with qtbot.waitSignal(s.denoisedChanged, timeout=10_000):  # a later stage than previewChanged (issue 15)
        s.set_landmarks([5, 6, 7, 300])
    qtbot.waitUntil(lambda: s.average is not None, timeout=30_000)
    p = s.preview["skip"]
    # the session's denoised values are core.denoise of the release alone (+ public settings)
    ref = denoise("numeric", p.values, p.budgets, p.approximated, sensitivity=s.settings.sensitivity,
                  bounds=s.settings.bounds)
    np.testing.assert_array_equal(p.denoised_values, ref.values)
    raw = p.values.copy()
    row = list(s.preview).index("skip")
    assert not any(table.isColumnHidden(c) for c in DENOISED_COLUMNS)
    assert table.item(row, 9).text() not in ("—", "") and "–" in table.item(row, 10).text()  # mean (p10–p90)
    assert p.mae_denoised < p.mae
    with qtbot.waitSignal(s.previewChanged, timeout=10_000):
        check.setChecked(False)
    assert not s.settings.denoise and s.preview["skip"].denoised_values is None
    np.testing.assert_array_equal(s.preview["skip"].values, raw)
    assert all(table.isColumnHidden(c) for c in DENOISED_COLUMNS) and table.item(row, 9).text() == "—"
    with qtbot.waitSignal(s.denoisedChanged, timeout=10_000):
        check.setChecked(True)
    np.testing.assert_array_equal(s.preview["skip"].denoised_values, ref.values)


def test_one_landmark_of_thousands_is_not_zero_percent(qtbot, window):
    """The status bar read "1 landmark (0.0%)" for one of 2,144 events: a share that rounds to 0 or 100 % but
    is not is written "<0.1%" / ">99.9%", there and in the suggestion and dummy counts."""
    from lmdk_gui.core.analysis.metrics import share

    s = window.session
    with qtbot.waitSignal(s.previewChanged, timeout=30_000):
        assert window.open_series(SAMPLES / "gps_bus_limerick.csv")  # 2,144 events
    s.set_landmarks([5])
    assert "1 landmark (<0.1%)" in window.status_landmarks.text()
    assert share(1, 2144) == "<0.1%" and share(2143, 2144) == ">99.9%" and share(0, 10) == "0.0%"
    assert share(10, 10) == "100.0%" and share(74, 744) == "9.9%"
