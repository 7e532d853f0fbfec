"""The "Dummy landmarks" panel (issue 6): dummies in the preview, the plots, the metrics and the export."""

from __future__ import annotations

import gc
import json

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLabel, QPushButton

from lmdk_gui.core.kernel.dummies import DummySettings, selection_rng, split_budget
from lmdk_gui.core.kernel.guarantee import check_guarantee
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, LANDMARK_SCHEMES
from lmdk_gui.ui.dialogs.export_dialog import ExportDialog, exportable_schemes
from lmdk_gui.ui.panels.metrics_panel import avg_text, fmt

from .conftest import wait_preview
from .helpers import bars_per_event


@pytest.fixture(autouse=True)
def _collect_in_the_gui_thread():
    """Collect the closed windows' reference cycles here, in the GUI thread, after each test. Left to
    chance, the cyclic GC may run in a worker thread of a later test and destroy a Python-owned QMenu
    (pyqtgraph's) there, which can deadlock PySide 6.11 against the GUI thread."""
    yield
    gc.collect()


def panel(window):
    from lmdk_gui.ui.panels.dummies_ui import HideLandmarksPanel

    p = window.findChild(HideLandmarksPanel, "hideLandmarksPanel")
    assert p is not None
    return p


def wait_selection(qtbot, window):
    wait_preview(qtbot, window)
    qtbot.waitUntil(lambda: window.session.dummy_selection is not None or bool(window.session.dummy_error),
                    timeout=30_000)


def wait_average(qtbot, window):
    qtbot.waitUntil(lambda: window.session.is_preview_current() and window.session.average is not None,
                    timeout=60_000)


def switch_on(qtbot, window, landmarks=(range(10, 60), range(300, 320))):
    s = window.session
    s.set_landmarks(np.concatenate([np.arange(r.start, r.stop) for r in landmarks]))
    wait_preview(qtbot, window)
    p = panel(window)
    p.enabled.click()  # the user's click
    assert s.dummies_enabled
    wait_selection(qtbot, window)
    return p


def test_panel_widgets_and_defaults(window):
    p = panel(window)
    assert window.findChild(QCheckBox, "dummiesEnabled") is p.enabled and not p.enabled.isChecked()
    gen = window.findChild(QComboBox, "dummyGenerator")
    assert [gen.itemData(i) for i in range(gen.count())] == ["partitioned", "heuristic", "optimal"]
    assert gen.currentData() == "partitioned" and "≤ 11" in gen.itemText(2)
    assert window.findChild(QDoubleSpinBox, "dummyShare").value() == pytest.approx(1.0)
    ut = window.findChild(QComboBox, "dummyUtility")
    assert [ut.itemData(i) for i in range(ut.count())] == ["count", "distance"]
    assert "fewer dummies" in p.utility_note.text()
    ut.setCurrentIndex(1)
    assert "close in time" in p.utility_note.text()
    assert window.session.dummy_settings.utility == "distance"
    assert not window.findChild(QPushButton, "dummyRedraw").isEnabled()
    assert "Off." in window.findChild(QLabel, "dummyReadout").text()
    assert window.findChild(type(window.settings_dock), "hideLandmarksDock") is not None
    # Off: the automation contract is unchanged.
    s = window.session
    assert s.dummies is None and s.preview_plain is s.preview and s.dummy_selection is None
    assert all(window.metrics_table.isColumnHidden(c) for c in (7, 8))


def test_toggle_on_draws_dummies_and_previews_on_lprime(qtbot, window):
    s = window.session
    switch_on(qtbot, window)
    sel = s.dummy_selection
    lm = s.landmarks
    assert sel is not None and sel.dummies.size > 0
    assert np.all(np.isin(lm, sel.landmarks)) and not np.any(np.isin(sel.dummies, lm))
    eps_sel, eps_rem = split_budget(1.0, 0.01)
    assert sel.epsilon_selection == eps_sel and sel.epsilon_remaining == eps_rem
    # Each scheme's preview release ran on L' and ε − ε_sel; its guarantee was checked against those.
    for scheme in ALL_SCHEMES:
        rel = s.preview[scheme].release
        assert np.array_equal(rel.landmarks, sel.landmarks) and rel.epsilon == eps_rem
        assert rel.guarantee.epsilon == eps_rem
        plain = s.preview_plain[scheme].release
        assert np.array_equal(plain.landmarks, lm) and plain.epsilon == 1.0
    for scheme in LANDMARK_SCHEMES:
        b = s.preview[scheme].budgets
        assert s.preview[scheme].guarantee.holds
        assert check_guarantee(b, sel.landmarks, eps_rem).holds
    assert np.array_equal(np.flatnonzero(s.preview["skip"].budgets == 0), sel.landmarks)
    # Seeded from the session seed and the draw number.
    assert s.dummy_draw == 0 and selection_rng(s.seed, 0).random() == selection_rng(1, 0).random()
    # Drawn in their own colour: series plot, budget plot, status bar, read-out.
    assert np.array_equal(window.series_plot._dummies, sel.dummies)
    assert window.series_plot.dummy_band.isVisible()
    x, _ = window.series_plot.dummy_points.getData()
    assert set(x.astype(int)) <= set(sel.dummies) and len(x) > 0
    bars = bars_per_event(window.budget_plot.rows["adaptive"]["dummy"], s.n)
    assert np.any(bars > 0)
    assert np.all(bars[np.isin(np.arange(s.n), sel.dummies, invert=True)] == 0)
    assert "dummies violet" in window.budget_plot.header.text
    status = window.findChild(QLabel, "dummyStatus")
    assert status.isVisible() and f"+{sel.dummies.size:,} dummies" in status.text()
    text = panel(window).readout.text()
    assert f"<b>{sel.dummies.size:,}</b> dummies added" in text and f"{sel.landmarks.size:,}" in text
    assert "choosing the dummies: <b>0.01</b>" in text and "left for the release: <b>0.99</b>" in text


def test_metrics_show_each_scheme_with_and_without(qtbot, window):
    s = window.session
    switch_on(qtbot, window)
    wait_average(qtbot, window)
    t = window.metrics_table
    assert not t.isColumnHidden(7) and not t.isColumnHidden(8)
    assert "with dummies" in t.horizontalHeaderItem(5).text()
    assert "with dummies" in t.horizontalHeaderItem(6).text()
    assert "without dummies" in t.horizontalHeaderItem(7).text()
    # Plain words in the header (issue 14), the precise terms in its tooltip.
    assert "with dummies" in t.horizontalHeaderItem(1).text() and "ε_sel" not in t.horizontalHeaderItem(1).text()
    assert "L'" in t.horizontalHeaderItem(1).toolTip() and "ε − ε_sel" in t.horizontalHeaderItem(1).toolTip()
    for r, scheme in enumerate(ALL_SCHEMES):
        assert t.item(r, 5).text() == fmt(s.preview[scheme].mae)
        assert t.item(r, 7).text() == fmt(s.preview_plain[scheme].mae)
        assert t.item(r, 6).text() == avg_text(s.average[scheme].mean, s.average[scheme].p10, s.average[scheme].p90)
        q = s.average_plain[scheme]
        assert t.item(r, 8).text() == avg_text(q.mean, q.p10, q.p90)
    assert "one draw" in t.horizontalHeaderItem(5).text() and "draws its own" in t.horizontalHeaderItem(5).toolTip()
    assert t.item(0, 1).text().endswith("≤ 0.99")
    assert "dummies" in t.item(0, 2).toolTip() and "L'" in t.item(0, 2).toolTip()
    # Uniform with dummies spreads ε − ε_sel over more landmarks: a different, larger error.
    assert s.average["uniform"].mean != s.average_plain["uniform"].mean
    assert s.average_dummy_size is not None and s.average_dummy_size > s.landmarks.size
    assert "on average over 20 runs" in panel(window).readout.text()


def test_redraw_changes_the_dummies_only(qtbot, window):
    s = window.session
    p = switch_on(qtbot, window)
    first = s.dummy_selection.dummies.copy()
    plain = s.preview_plain["adaptive"].values.copy()
    seed = s.seed
    with qtbot.waitSignal(s.dummySelectionChanged, timeout=30_000):
        qtbot.mouseClick(p.redraw, Qt.MouseButton.LeftButton)
    wait_selection(qtbot, window)
    assert s.dummy_draw != 0 and s.seed == seed
    assert not np.array_equal(first, s.dummy_selection.dummies)
    assert np.array_equal(window.series_plot._dummies, s.dummy_selection.dummies)
    np.testing.assert_array_equal(s.preview_plain["adaptive"].values, plain)  # same noise


def test_optimal_refusal_is_a_message_not_a_crash(qtbot, window):
    s = window.session
    p = switch_on(qtbot, window)
    with qtbot.waitSignal(s.dummiesFailed, timeout=30_000) as blocker:
        p.generator.setCurrentIndex(2)  # Optimal, on 744 events
    assert "Optimal" in blocker.args[0] and "limited to 11" in blocker.args[0]
    wait_preview(qtbot, window)
    assert s.dummy_selection is None and "Optimal" in s.dummy_error
    assert "Optimal" in window.last_error  # the message box
    assert window._error_box is not None and window._error_box.isVisible()
    window._error_box.close()
    assert p.error.isVisible() and "without dummies" in p.error.text()
    # The preview falls back to the releases without dummies; nothing is marked as a dummy.
    assert s.preview and s.preview is s.preview_plain
    assert np.array_equal(s.preview["uniform"].release.landmarks, s.landmarks)
    assert window.series_plot._dummies.size == 0
    assert window.metrics_table.isColumnHidden(7)
    # Another edit while Optimal stays refused does not pop up the message again.
    window.last_error = None
    s.toggle_landmark(600)
    wait_preview(qtbot, window)
    assert window.last_error is None and s.dummy_error
    # Back to Partitioned: dummies again.
    p.generator.setCurrentIndex(0)
    wait_selection(qtbot, window)
    assert s.dummy_selection is not None and not s.dummy_error and not p.error.isVisible()


def test_optimal_works_on_a_tiny_series(qtbot, window, tmp_path):
    src = tmp_path / "tiny.csv"
    src.write_text("timestamp,value\n" + "".join(f"2020-01-01 00:{i:02d}:00,{i % 3}\n" for i in range(12)))
    with qtbot.waitSignal(window.session.previewChanged, timeout=30_000):
        assert window.open_series(src)
    s = window.session
    s.set_landmarks([2, 7])
    s.set_dummy_settings(generator="optimal")
    s.set_dummies_enabled(True)
    wait_selection(qtbot, window)
    assert s.dummy_selection is not None and s.dummy_selection.generator == "optimal" and not s.dummy_error


def test_switching_off_restores_the_plain_view(qtbot, window):
    s = window.session
    switch_on(qtbot, window)
    window.extensions["dummies_ui"].action.trigger()  # Landmarks › Hide landmarks among dummies
    assert not s.dummies_enabled and not panel(window).enabled.isChecked()
    wait_preview(qtbot, window)
    assert s.dummy_selection is None and s.preview is s.preview_plain
    assert window.series_plot._dummies.size == 0 and not window.series_plot.dummy_band.isVisible()
    assert window.metrics_table.isColumnHidden(7) and window.metrics_table.isColumnHidden(8)
    assert not window.findChild(QLabel, "dummyStatus").isVisible()
    bx = window.budget_plot.rows["skip"]["dummy"].xData
    assert bx is None or len(bx) == 0


def test_export_from_the_window_draws_its_own_selection(qtbot, window, tmp_path):
    s = window.session
    switch_on(qtbot, window)
    preview_lprime = s.dummy_selection.landmarks.copy()
    out = tmp_path / "r.csv"
    job = window.export_release(out, "skip", include_budget=True)
    assert job.options.dummies == DummySettings()
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    b = pd.read_csv(out)["epsilon"].to_numpy()
    lprime = np.flatnonzero(b == 0)
    assert np.all(np.isin(s.landmarks, lprime)) and lprime.size > s.landmarks.size
    assert not np.array_equal(lprime, preview_lprime)  # fresh randomness, not the preview's draw
    eps_sel, eps_rem = split_budget(1.0, 0.01)
    assert check_guarantee(b, lprime, eps_rem).holds
    side = json.loads((tmp_path / "r.csv.json").read_text())
    assert side["epsilon"] == 1.0 and side["epsilon_selection"]["epsilon"] == eps_sel
    assert side["epsilon_selection"]["generator"] == "partitioned"
    assert side["landmark_sum"] <= eps_rem


def test_export_dialog_summarises_the_dummies(qtbot, window, tmp_path):
    s = window.session
    s.set_landmarks([])
    wait_preview(qtbot, window)
    assert exportable_schemes(s.snapshot())["event"] == ""
    s.set_dummies_enabled(True)
    wait_selection(qtbot, window)
    snap = s.snapshot()
    assert "once dummies are added" in exportable_schemes(snap)["event"]
    dlg = ExportDialog(snap, "uniform", str(tmp_path), window)
    qtbot.addWidget(dlg)
    text = dlg.summary.text()
    assert "Dummy landmarks:</b> on (Partitioned, fewer dummies, 1% of ε)" in text
    assert "fresh randomness" in text and "remaining ε = 0.99" in text and "new</i> choice" in text  # plain words (issue 14)
    dlg.use_seed.setChecked(True)
    assert "derived from the export key" in dlg.summary.text()


def test_state_restore_round_trip(qtbot, window):
    ext = window.extensions["dummies_ui"]
    s = window.session
    assert ext.state() == {"enabled": False, "generator": "partitioned", "share": 0.01, "utility": "count",
                           "draw": 0}
    ext.restore({"enabled": True, "generator": "heuristic", "share": 0.05, "utility": "distance", "draw": 7})
    assert s.dummies == DummySettings("heuristic", 0.05, "distance") and s.dummy_draw == 7
    p = panel(window)
    assert p.enabled.isChecked() and p.generator.currentData() == "heuristic"
    assert p.share.value() == pytest.approx(5.0) and p.utility.currentData() == "distance"
    assert ext.state()["draw"] == 7 and ext.state()["enabled"] is True
    json.dumps(ext.state())
    wait_selection(qtbot, window)
    assert s.dummy_selection.generator == "heuristic"


def test_gps_track_shows_the_dummies(qtbot, window):
    from tests.conftest import SAMPLES

    with qtbot.waitSignal(window.session.previewChanged, timeout=30_000):
        assert window.open_series(SAMPLES / "gps_bus_limerick.csv")
    s = window.session
    s.set_landmarks(np.arange(100, 300))
    s.set_dummies_enabled(True)
    wait_selection(qtbot, window)
    x, _ = window.track_plot.dummies.getData()
    assert len(x) == s.dummy_selection.dummies.size
    legend = [label.text for _sample, label in window.track_plot.legend.items]
    assert "dummy landmarks" in legend
