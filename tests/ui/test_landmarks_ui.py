"""Landmarks menu (issue 5): suggestion panel (live count, preview highlight, apply/undo) and landmark lists."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from lmdk_gui.core.analysis import suggestions as sugg
from lmdk_gui.core.data.landmark_files import read_landmark_file
from tests.conftest import DATA, SAMPLES

from .conftest import wait_preview
from .helpers import bars_per_event

WAIT = 30_000


def _ui(window):
    return window.extensions["landmarks_ui"]


def _open(qtbot, window, rule: str, **params):
    panel = _ui(window).open_suggestions(rule)
    if params:
        panel.set_params(**params)
    qtbot.waitUntil(panel.is_current, timeout=WAIT)
    return panel


@pytest.fixture
def make_window(qtbot):
    """A shown window on one of the bundled samples (closed without prompts at the end)."""
    from lmdk_gui.ui import MainWindow

    made = []

    def make(name: str, **columns):
        w = MainWindow(load_default=False)
        qtbot.addWidget(w)
        assert w.open_series(SAMPLES / name, **columns), w.last_error
        w.resize(1400, 900)
        w.show()
        qtbot.waitExposed(w)
        made.append(w)
        return w

    yield make
    for w in made:
        w.extensions["project_ui"].ask_unsaved = lambda: "discard"
        w.close()


# ------------------------------------------------------------------------------------------ the menu
def test_menu_has_one_entry_per_rule_and_disables_the_others_with_a_reason(window, make_window):
    from PySide6.QtGui import QAction

    acts = {name: window.findChild(QAction, f"suggest{name.capitalize()}Action") for name in sugg.RULES}
    assert all(a is not None for a in acts.values())
    assert acts["threshold"].isEnabled() and acts["changepoints"].isEnabled()
    assert not acts["stay"].isEnabled() and not acts["category"].isEnabled()
    assert "location" in acts["stay"].toolTip() and "numeric" in acts["stay"].toolTip()
    assert window.landmarks_menu.toolTipsVisible()
    gps = make_window("gps_bus_limerick.csv")
    g = {name: gps.findChild(QAction, f"suggest{name.capitalize()}Action") for name in sugg.RULES}
    assert g["stay"].isEnabled() and not g["threshold"].isEnabled()
    assert window.findChild(QAction, "importLandmarksAction") is not None
    assert window.findChild(QAction, "exportLandmarksAction") is not None


def test_menu_entry_opens_the_panel_for_that_rule(qtbot, window):
    from PySide6.QtGui import QAction

    window.findChild(QAction, "suggestChangepointsAction").trigger()
    ui = _ui(window)
    assert ui.dock.isVisible() and ui.panel.rule.name == "changepoints"
    assert window.findChild(QWidget, "suggestParam_penalty") is not None
    # it said the proposals "stay private and are never published": a release shows where its landmarks are
    warning = window.findChild(QWidget, "suggestWarning")
    assert warning.isVisible() and "tell anyone which events passed it" in warning.text()
    qtbot.waitUntil(ui.panel.is_current, timeout=WAIT)
    k, _ = sugg.count(window.session.series, "changepoints", penalty=ui.panel.params()["penalty"])
    assert ui.panel.proposal.size == k


# ------------------------------------------------------------------------------------------ threshold
def test_threshold_live_count_highlight_apply_replace_add_and_undo(qtbot, window):
    s = window.session
    series = s.series
    s.set_landmarks([3, 4, 5, 600])
    before_steps = s.undo_stack.count()
    panel = _open(qtbot, window, "threshold", below=0.6, above=None)
    expected = sugg.threshold(series, below=0.6)
    k, pct = sugg.count(series, "threshold", below=0.6)
    assert np.array_equal(panel.proposal, expected) and panel.proposal.size == k
    text = panel.count_label.text()
    assert f"{k:,}" in text and f"{pct:.1f}%" in text
    # the proposal is highlighted (band and rings on the series plot) before anything is applied
    ov = panel.overlay
    assert ov.shown and ov.band in window.series_plot.getPlotItem().items
    band = bars_per_event(ov.band, s.n)
    assert np.count_nonzero(band > band.min()) == k
    assert s.landmarks.tolist() == [3, 4, 5, 600]
    # a live change of the parameter is recomputed (debounced, on the worker)
    panel.set_params(below=0.8)
    assert not panel.is_current()
    qtbot.waitUntil(panel.is_current, timeout=WAIT)
    assert np.array_equal(panel.proposal, sugg.threshold(series, below=0.8))
    # Apply (replace) by clicking: one undo step
    with qtbot.waitSignal(panel.applied, timeout=WAIT):
        qtbot.mouseClick(panel.apply_button, Qt.MouseButton.LeftButton)
    assert np.array_equal(s.landmarks, panel.proposal)
    assert s.undo_stack.count() == before_steps + 1
    assert s.undo_stack.undoText().startswith("Suggest: Value threshold")
    s.undo_stack.undo()
    assert s.landmarks.tolist() == [3, 4, 5, 600]
    # Add: union with the current set, again one step; undo restores
    panel.add_radio.setChecked(True)
    assert panel.apply()
    assert np.array_equal(s.landmarks, np.union1d([3, 4, 5, 600], panel.proposal))
    assert s.undo_stack.count() == before_steps + 1  # the undone step was replaced by this one
    s.undo_stack.undo()
    assert s.landmarks.tolist() == [3, 4, 5, 600]
    wait_preview(qtbot, window)


def test_threshold_with_no_side_ticked_says_so_and_cannot_apply(qtbot, window):
    panel = _open(qtbot, window, "threshold")
    with qtbot.waitSignal(panel.proposalFailed, timeout=WAIT) as sig:
        panel.set_params(below=None, above=None)
    assert "Below" in sig.args[0]
    assert not panel.apply_button.isEnabled() and not panel.apply()
    assert not panel.overlay.shown


def test_target_percentage_helper_uses_rule_for_percentage(qtbot, window):
    panel = _open(qtbot, window, "threshold")
    with qtbot.waitSignal(panel.targetFound, timeout=WAIT):
        panel.find_target(40.0)
    params, rows = sugg.rule_for_percentage(window.session.series, "threshold", 40.0, vary="below")
    assert panel.params()["below"] == pytest.approx(params["below"], abs=1e-4)
    qtbot.waitUntil(panel.is_current, timeout=WAIT)
    assert panel.proposal.size == pytest.approx(rows.size, abs=2)  # spin box rounding at 4 decimals
    assert "40 %" in panel.target_status.text()


def test_changepoints_default_penalty_matches_core(qtbot, window):
    panel = _open(qtbot, window, "changepoints")
    series = window.session.series
    assert panel.params()["penalty"] == pytest.approx(sugg.default_penalty(series.n), abs=0.01)
    assert np.array_equal(panel.proposal, sugg.change_points(series, penalty=panel.params()["penalty"]))


def test_closing_the_panel_removes_the_highlight_and_leaves_landmarks_alone(qtbot, window):
    window.resize(1280, 800)
    panel = _open(qtbot, window, "threshold", below=1.0)
    band, rings = panel.overlay.band, panel.overlay.rings
    assert band in window.series_plot.getPlotItem().items
    legend = window.series_plot.legend
    assert any(lab.text.startswith("proposed") for _item, lab in legend.items)
    # the entry is read whole: "proposed (not applied)" on one line ran past the window's edge at 1280×800
    qtbot.waitUntil(lambda: legend.sceneBoundingRect().right() <= window.series_plot.viewport().width())
    qtbot.mouseClick(panel.close_button, Qt.MouseButton.LeftButton)
    assert not _ui(window).dock.isVisible()
    assert band not in window.series_plot.getPlotItem().items
    assert rings not in window.series_plot.getPlotItem().items
    labels = [lab.text for _item, lab in window.series_plot.legend.items]
    assert not any(text.startswith("proposed") for text in labels)
    assert window.session.landmarks.size == 0 and window.session.undo_stack.count() == 0
    # reopening shows it again
    panel = _open(qtbot, window, "threshold")
    assert panel.overlay.shown


# ------------------------------------------------------------------------------------------ GPS stays
def test_stay_points_on_the_gps_track(qtbot, make_window):
    w = make_window("gps_bus_limerick.csv")
    s = w.session
    panel = _open(qtbot, w, "stay", distance_m=50.0, duration_min=1.0)
    k, pct = sugg.count(s.series, "stay", distance_m=50.0, duration_min=1.0)
    assert panel.proposal.size == k == 238
    assert f"{pct:.1f}%" in panel.count_label.text()
    # for a location series the proposal is also drawn on the track map
    assert panel.overlay.track_rings in w.track_plot.getPlotItem().items
    assert panel.apply("replace")
    assert np.array_equal(s.landmarks, sugg.stay_points(s.series, distance_m=50.0, duration_min=1.0))
    assert s.undo_stack.count() == 1 and "Distance Δl = 50 m" in s.undo_stack.undoText()
    s.undo_stack.undo()
    assert s.landmarks.size == 0
    rings = panel.overlay.track_rings
    _ui(w).close_suggestions()
    assert rings not in w.track_plot.getPlotItem().items


# ------------------------------------------------------------------------------------------ contacts
def test_category_rule_on_contacts(qtbot, make_window):
    w = make_window("contacts_person1672.csv", kind="categorical", duplicates="first")
    s = w.session
    panel = _open(qtbot, w, "category")
    assert panel.proposal.size == 0  # nothing ticked yet
    lst = panel.fields["values"].list
    assert lst.objectName() == "suggestCategories"
    # tick two devices as a user would (each tick is an edit; the burst is computed once, for both)
    for i in range(lst.count()):
        if lst.item(i).data(Qt.ItemDataRole.UserRole) in ("1170", "1164"):
            lst.item(i).setCheckState(Qt.CheckState.Checked)
    qtbot.waitUntil(panel.is_current, timeout=WAIT)
    assert sorted(panel.params()["values"]) == ["1164", "1170"]
    expected = sugg.category_membership(s.series, ["1170", "1164"])
    assert np.array_equal(panel.proposal, expected)
    assert sugg.count(s.series, "category", values=["1164", "1170"])[0] == panel.proposal.size == 1034
    s.toggle_landmark(0)
    panel.add_radio.setChecked(True)
    assert panel.apply()
    assert np.array_equal(s.landmarks, np.union1d([0], expected))
    assert s.undo_stack.count() == 2
    s.undo_stack.undo()
    assert s.landmarks.tolist() == [0]
    # the filter hides other labels; "None" unticks only what is shown
    panel.fields["values"].filter.setText("1170")
    shown = [lst.item(i) for i in range(lst.count()) if not lst.item(i).isHidden()]
    assert [it.data(Qt.ItemDataRole.UserRole) for it in shown] == ["1170"]


def test_category_target_percentage(qtbot, make_window):
    w = make_window("contacts_person1672.csv", kind="categorical", duplicates="first")
    panel = _open(qtbot, w, "category")
    with qtbot.waitSignal(panel.targetFound, timeout=WAIT):
        panel.find_target(40.0)
    params, rows = sugg.rule_for_percentage(w.session.series, "category", 40.0)
    qtbot.waitUntil(panel.is_current, timeout=WAIT)
    assert sorted(panel.params()["values"]) == sorted(params["values"])
    assert np.array_equal(panel.proposal, rows)


def test_panel_follows_a_new_series(qtbot, window):
    panel = _open(qtbot, window, "threshold", below=1.0)
    old = panel.series
    with qtbot.waitSignal(window.session.previewChanged, timeout=WAIT):
        window.open_series(DATA / "energy_hue_residential1_2013.csv", duplicates="first")
    assert panel.series is window.session.series is not old
    assert panel.rule.name == "threshold"
    # the new series starts from its own defaults and slider ranges
    series = window.session.series
    assert panel.params()["below"] == pytest.approx(sugg.defaults(series, "threshold")["below"], abs=1e-4)
    assert panel.fields["below"].spin.maximum() >= float(series.values.max())
    qtbot.waitUntil(panel.is_current, timeout=WAIT)
    assert panel.proposal.size == sugg.count(series, "threshold", below=panel.params()["below"])[0]


@pytest.mark.slow
def test_large_track_is_computed_off_the_gui_thread(qtbot, make_window, tmp_path):
    """10^5 fixes: editing the parameters returns at once; the count arrives later from the worker."""
    import time

    from lmdk_gui.core.data.series import Series

    rng = np.random.default_rng(3)
    n = 100_000
    steps = rng.normal(0, 2e-5, size=(n, 2)) * (rng.random((n, 1)) < 0.7)
    track = np.array([52.63, -8.66]) + np.cumsum(steps, axis=0)
    w = make_window("gps_bus_limerick.csv")
    times = np.datetime64("2019-02-18T07:00:00", "ns") + np.arange(n) * np.timedelta64(1, "s")
    big = Series("location", times, track, name="big")
    w.session.set_series(big)
    panel = _ui(w).open_suggestions("stay")
    t0 = time.perf_counter()
    panel.set_params(distance_m=30.0, duration_min=2.0)
    assert time.perf_counter() - t0 < 0.5
    assert not panel.is_current()
    qtbot.waitUntil(panel.is_current, timeout=60_000)
    assert panel.proposal.size == sugg.count(big, "stay", distance_m=30.0, duration_min=2.0)[0]


# ------------------------------------------------------------------------------------- landmark files
def test_landmark_list_export_import_round_trip_is_one_undo_step(qtbot, window, tmp_path):
    s = window.session
    s.set_landmarks([0, 5, 6, 7, 100, 743])
    ui = _ui(window)
    path = tmp_path / "lm.csv"
    assert ui.export_landmarks(path)
    assert path.read_text().splitlines()[0] == "timestamp,row"
    assert np.array_equal(read_landmark_file(path, s.series), s.landmarks)
    s.clear_landmarks()
    steps = s.undo_stack.count()
    with qtbot.waitSignal(ui.imported, timeout=WAIT):
        assert ui.import_landmarks(path)
    assert s.landmarks.tolist() == [0, 5, 6, 7, 100, 743]
    assert s.undo_stack.count() == steps + 1
    s.undo_stack.undo()
    assert s.landmarks.size == 0
    # a file with only a timestamp column (the documented format) works too
    ts = tmp_path / "ts.csv"
    ts.write_text("timestamp\n2013-01-01 05:00:00\n2013-01-02 00:00:00\n")
    assert ui.import_landmarks(ts)
    assert s.landmarks.tolist() == [5, 24]
    # ...and a row column
    rows = tmp_path / "rows.csv"
    rows.write_text("row\n1\n2\n")
    assert ui.import_landmarks(rows, mode="add")
    assert s.landmarks.tolist() == [1, 2, 5, 24]


def test_import_with_unknown_timestamps_reports_them_and_changes_nothing(qtbot, window, tmp_path):
    s = window.session
    s.set_landmarks([10, 11])
    steps = s.undo_stack.count()
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp\n2013-01-01 05:00:00\n2013-01-01 05:30:00\n2014-06-01 00:00:00\n")
    assert not _ui(window).import_landmarks(bad)
    msg = window.last_error
    assert "2 timestamp(s) are not in the series" in msg
    assert "2013-01-01 05:30:00" in msg and "2014-06-01 00:00:00" in msg and "no landmarks were added" in msg
    box = window.findChild(QWidget, "errorBox")
    assert box is not None and box.isVisible()
    box.close()
    assert s.landmarks.tolist() == [10, 11] and s.undo_stack.count() == steps


def test_import_and_export_through_the_menu_with_replaced_dialogs(qtbot, window, tmp_path):
    from PySide6.QtGui import QAction

    s = window.session
    ui = _ui(window)
    s.set_landmarks([1, 2, 3])
    path = tmp_path / "menu.csv"
    ui.get_export_path = lambda: str(path)
    window.findChild(QAction, "exportLandmarksAction").trigger()
    assert path.is_file()
    s.set_landmarks([50])
    asked = []
    ui.get_import_path = lambda: str(path)
    ui.ask_import_mode = lambda new, cur: asked.append((new, cur)) or "add"
    window.findChild(QAction, "importLandmarksAction").trigger()
    assert asked == [(3, 1)]
    assert s.landmarks.tolist() == [1, 2, 3, 50]
    ui.ask_import_mode = lambda new, cur: None  # Cancel
    s.set_landmarks([7])
    window.findChild(QAction, "importLandmarksAction").trigger()
    assert s.landmarks.tolist() == [7]


def test_suggestion_parameters_are_kept_as_extension_state(qtbot, window):
    panel = _open(qtbot, window, "threshold", below=0.9)
    state = _ui(window).state()
    assert state["suggest_params"]["threshold"]["below"] == pytest.approx(0.9)
    _ui(window).restore({"suggest_params": {"threshold": {"below": 1.25, "above": None}}})
    panel.set_rule("threshold")
    assert panel.params()["below"] == pytest.approx(1.25)


def test_panel_switches_rule_when_the_kind_changes(qtbot, window):
    panel = _open(qtbot, window, "threshold", below=1.0)
    with qtbot.waitSignal(window.session.previewChanged, timeout=WAIT):
        window.open_series(SAMPLES / "gps_bus_limerick.csv")
    assert panel.rule.name == "stay" and panel.series is window.session.series
    assert [panel.rule_combo.itemData(i) for i in range(panel.rule_combo.count())] == ["stay"]
    qtbot.waitUntil(panel.is_current, timeout=WAIT)
    assert panel.proposal.size == sugg.count(window.session.series, "stay")[0]


def test_landmarks_from_a_rule_are_said_so_in_the_export_and_follow_undo(qtbot, window, tmp_path):
    """A threshold rule's landmarks tell which hours passed it wherever a release shows where they are: the
    session keeps which rules its landmark set comes from (through undo and redo, clicks, an emptied set, a
    replacing landmark file); the export dialog warns, and the sidecar's statement names the rule."""
    from lmdk_gui.ui.dialogs.export_dialog import ExportDialog

    s = window.session
    s.set_landmarks([3, 4, 5])
    assert s.landmark_rules == frozenset()
    panel = _open(qtbot, window, "threshold", below=0.6, above=None)
    assert panel.apply("replace")
    assert s.landmark_rules == {"Value threshold"}
    s.toggle_landmark(7)  # a click keeps them: most of the set is still the rule's
    assert s.landmark_rules == {"Value threshold"}
    s.undo_stack.undo()
    s.undo_stack.undo()
    assert s.landmarks.tolist() == [3, 4, 5] and s.landmark_rules == frozenset()
    s.undo_stack.redo()
    assert s.landmark_rules == {"Value threshold"}
    wait_preview(qtbot, window)
    dlg = ExportDialog(s.snapshot(), "skip", str(tmp_path), window, landmark_rules=s.landmark_rules)
    qtbot.addWidget(dlg)
    assert not dlg.rule_warning.isHidden() and "(Value threshold)" in dlg.rule_warning.text()
    out = tmp_path / "rel.csv"
    job = window.export_release(out, "skip")
    qtbot.waitUntil(lambda: not job.is_running(), timeout=60_000)
    statement = json.loads((tmp_path / "rel.csv.json").read_text())["statement"]
    assert "the landmarks were found by a rule on these values (Value threshold)" in statement
    s.clear_landmarks()  # an emptied set starts again with none
    assert s.landmark_rules == frozenset()
    s.undo_stack.undo()
    lm_file = tmp_path / "lm.csv"
    lm_file.write_text("row\n10\n11\n")
    assert window.extensions["landmarks_ui"].import_landmarks(lm_file, mode="replace")
    assert s.landmarks.tolist() == [10, 11] and s.landmark_rules == frozenset()
    plain = ExportDialog(s.snapshot(), "skip", str(tmp_path), window, landmark_rules=s.landmark_rules)
    qtbot.addWidget(plain)
    assert plain.rule_warning.isHidden()


def test_a_landmark_list_keeps_the_rule_that_found_it(qtbot, window, tmp_path):
    """Export list writes the rules the set comes from; importing that file (replacing, or adding to a set
    whose rules are kept) brings them back, so the export still says so."""
    s = window.session
    ext = window.extensions["landmarks_ui"]
    panel = _open(qtbot, window, "threshold", below=0.6, above=None)
    assert panel.apply("replace")
    made = s.landmarks.copy()
    path = tmp_path / "lm.csv"
    assert ext.export_landmarks(path)
    s.clear_landmarks()
    assert s.landmark_rules == frozenset()
    assert ext.import_landmarks(path, mode="replace")
    assert np.array_equal(s.landmarks, made) and s.landmark_rules == {"Value threshold"}
    s.clear_landmarks()
    s.set_landmarks([1, 2])
    assert ext.import_landmarks(path, mode="add") and s.landmark_rules == {"Value threshold"}
