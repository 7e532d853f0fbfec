"""Project files in the window (issue 5): save / open / recent, moved and changed data, unsaved prompts."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from PySide6.QtGui import QAction, QKeySequence

from lmdk_gui.core.kernel.settings import AdaptiveParams, PrivacySettings
from tests.conftest import SAMPLES

WAIT = 30_000


@pytest.fixture
def data_copy(tmp_path):
    """The energy sample copied to a folder of its own (tests move and edit it)."""
    folder = tmp_path / "data"
    folder.mkdir()
    dst = folder / "energy.csv"
    shutil.copy(SAMPLES / "energy_hue_2013_jan.csv", dst)
    return dst


@pytest.fixture
def new_window(qtbot):
    from lmdk_gui.ui import MainWindow

    made = []

    def make(path=None, **columns):
        w = MainWindow(load_default=False)
        qtbot.addWidget(w)
        if path is not None:
            with qtbot.waitSignal(w.session.previewChanged, timeout=WAIT):
                assert w.open_series(path, **columns), w.last_error
        w.resize(1400, 900)
        w.show()
        qtbot.waitExposed(w)
        made.append(w)
        return w

    yield make
    for w in made:
        w.extensions["project_ui"].ask_unsaved = lambda: "discard"
        w.close()


def _pui(window):
    return window.extensions["project_ui"]


class _FakeExtension:
    def __init__(self, state=None):
        self._state = state
        self.restored = None

    def state(self):
        return self._state

    def restore(self, d):
        self.restored = d


def _edit_session(window):
    s = window.session
    s.set_landmarks([2, 3, 50, 51, 52, 700])
    s.set_settings(PrivacySettings(epsilon=0.5, sensitivity=2.0, bounds=(0.0, 6.0),
                                   adaptive=AdaptiveParams(0.2, 0.05, 0.2)))
    s.set_seed(77)
    s.set_scheme_visible("skip", False)
    s.set_scheme_visible("event", True)
    s.set_runs(7)


# ---------------------------------------------------------------------------------- save and reopen
def test_save_then_open_in_a_new_window_restores_everything(qtbot, new_window, data_copy, tmp_path):
    w1 = new_window(data_copy)
    _edit_session(w1)
    w1.extensions["fake"] = _FakeExtension({"zoom": [1, 2], "name": "x"})
    w1.series_plot.vb.setXRange(100, 200, padding=0)
    assert _pui(w1).has_unsaved_changes() and w1.isWindowModified()
    path = tmp_path / "jan.lmdk.json"
    with qtbot.waitSignal(_pui(w1).projectSaved, timeout=WAIT):
        assert _pui(w1).save_to(path)
    assert not w1.session.is_dirty() and not w1.isWindowModified()
    assert w1.windowTitle().startswith("jan (energy.csv)")
    doc = json.loads(path.read_text())
    assert doc["private"] is True and doc["view"]["extensions"]["fake"] == {"zoom": [1, 2], "name": "x"}
    # Balanced (issue 12) is a landmark-private scheme: shown by default like Uniform, Skip and Adaptive
    assert doc["view"]["visible_schemes"] == ["uniform", "adaptive", "event", "balanced"]

    w2 = new_window()
    w2.extensions["fake"] = fake2 = _FakeExtension()
    with qtbot.waitSignal(w2.session.previewChanged, timeout=WAIT):
        assert _pui(w2).open_project(path)
    s1, s2 = w1.session, w2.session
    assert np.array_equal(s2.landmarks, s1.landmarks)
    assert s2.settings == s1.settings and s2.seed == 77 and s2.runs == 7
    assert s2.visible_schemes == {"uniform", "adaptive", "event", "balanced"}
    assert fake2.restored == {"zoom": [1, 2], "name": "x"}
    assert not s2.is_dirty() and not w2.isWindowModified()
    assert _pui(w2).path == path.resolve()
    assert "jan" in w2.windowTitle()
    # the settings dock shows the restored values
    assert w2.settings_panel.scheme_checks["skip"].isChecked() is False
    assert w2.settings_panel.eps_spin.value() == pytest.approx(0.5)
    # the same preview (same seed, landmarks and settings)
    qtbot.waitUntil(s1.is_preview_current, timeout=WAIT)
    qtbot.waitUntil(s2.is_preview_current, timeout=WAIT)
    assert np.array_equal(s1.preview["adaptive"].values, s2.preview["adaptive"].values)
    (x0, x1), _ = w2.series_plot.vb.viewRange()
    assert (x0, x1) == pytest.approx((100, 200), abs=0.5)  # the zoom came back too
    assert w2.extensions["project_ui"].recent_projects()[0] == str(path.resolve())


def test_open_project_from_the_menu_loads_on_a_worker(qtbot, new_window, data_copy, tmp_path):
    w1 = new_window(data_copy)
    w1.session.set_landmarks([5, 6])
    path = tmp_path / "a.lmdk.json"
    assert _pui(w1).save_to(path)
    w2 = new_window(SAMPLES / "gps_bus_limerick.csv")
    ui = _pui(w2)
    ui.get_open_path = lambda: str(path)
    with qtbot.waitSignal(ui.projectOpened, timeout=WAIT):
        w2.findChild(QAction, "openProjectAction").trigger()
    assert w2.session.series.kind == "numeric" and w2.session.landmarks.tolist() == [5, 6]
    # Open Recent Project lists it
    menu = ui.recent_menu
    menu.aboutToShow.emit()
    assert [a.text() for a in menu.actions()][0] == str(path.resolve())


def test_save_action_has_ctrl_s_and_asks_for_a_name_the_first_time(qtbot, new_window, data_copy, tmp_path):
    w = new_window(data_copy)
    ui = _pui(w)
    save = w.findChild(QAction, "saveProjectAction")
    assert save.shortcut() == QKeySequence(QKeySequence.StandardKey.Save)
    assert w.findChild(QAction, "saveProjectAsAction") is not None
    asked = []
    target = tmp_path / "named.lmdk.json"
    ui.get_save_path = lambda: asked.append(1) or str(target)
    w.session.toggle_landmark(9)
    save.trigger()
    assert asked == [1] and target.is_file() and not w.isWindowModified()
    w.session.toggle_landmark(10)
    assert w.isWindowModified() and "[*]" in w.windowTitle()
    save.trigger()  # the second time it saves to the same file
    assert asked == [1]
    assert json.loads(target.read_text())["landmarks"]["rows"] == [9, 10]
    # Save As with a cancelled dialog changes nothing
    ui.get_save_path = lambda: None
    w.findChild(QAction, "saveProjectAsAction").trigger()
    assert ui.path == target.resolve()


def test_file_menu_order(new_window):
    w = new_window(SAMPLES / "energy_hue_2013_jan.csv")
    names = [a.objectName() or a.text() for a in w.file_menu.actions() if not a.isSeparator()]
    i = names.index("openProjectAction")
    assert names[i - 1] in ("Open &Recent", "recentMenu") or "Recent" in names[i - 1]
    assert names[i + 2:i + 4] == ["saveProjectAction", "saveProjectAsAction"]
    assert names.index("exportAction") > i


# -------------------------------------------------------------------------------- moved / changed data
def test_moved_data_file_asks_where_it_is_and_loads(qtbot, new_window, data_copy, tmp_path):
    w1 = new_window(data_copy)
    w1.session.set_landmarks([1, 2, 3])
    proj_dir = tmp_path / "projects"
    proj_dir.mkdir()
    path = proj_dir / "p.lmdk.json"
    assert _pui(w1).save_to(path)
    elsewhere = tmp_path / "moved"
    elsewhere.mkdir()
    new_data = elsewhere / "renamed.csv"
    shutil.move(data_copy, new_data)

    w2 = new_window()
    ui = _pui(w2)
    asked = []
    ui.locate_data = lambda project, project_path: asked.append((project.input_path, project_path)) or str(new_data)
    assert ui.open_project(path)
    assert asked and asked[0][0] == str(data_copy)
    assert w2.session.landmarks.tolist() == [1, 2, 3]
    assert w2.session.series.source.path == str(new_data)
    # the new place is not in the project file yet: unsaved, until saved again
    assert ui.has_unsaved_changes() and w2.isWindowModified()
    assert ui.save()
    assert json.loads(path.read_text())["input"]["path"] == str(new_data)
    assert not w2.isWindowModified()


def test_moved_data_file_cancelled_leaves_the_window_as_it_was(qtbot, new_window, data_copy, tmp_path):
    w1 = new_window(data_copy)
    path = tmp_path / "p.lmdk.json"
    assert _pui(w1).save_to(path)
    data_copy.unlink()
    w2 = new_window(SAMPLES / "gps_bus_limerick.csv")
    w2.session.toggle_landmark(4)
    ui = _pui(w2)
    ui.locate_data = lambda project, project_path: None
    assert not ui.open_project(path)
    assert w2.session.series.kind == "location" and w2.session.landmarks.tolist() == [4]


def test_data_next_to_a_moved_project_is_found_without_asking(qtbot, new_window, data_copy, tmp_path):
    w1 = new_window(data_copy)
    w1.session.set_landmarks([7])
    path = data_copy.parent / "p.lmdk.json"
    assert _pui(w1).save_to(path)
    moved = tmp_path / "bundle"
    shutil.move(data_copy.parent, moved)
    w2 = new_window()
    ui = _pui(w2)
    ui.locate_data = lambda *a: pytest.fail("should not ask")
    assert ui.open_project(moved / "p.lmdk.json")
    assert w2.session.landmarks.tolist() == [7]


def test_changed_data_file_warns_before_applying_landmarks(qtbot, new_window, data_copy, tmp_path):
    w1 = new_window(data_copy)
    w1.session.set_landmarks([10, 20, 30])
    path = tmp_path / "p.lmdk.json"
    assert _pui(w1).save_to(path)
    # drop the first data row: same timestamps for the landmarks, but every row number shifts by one
    lines = data_copy.read_text().splitlines(keepends=True)
    data_copy.write_text(lines[0] + "".join(lines[2:]))

    w2 = new_window()
    ui = _pui(w2)
    seen = []

    def ask(warnings, matched, saved, rows_ok):
        seen.append((warnings, matched, saved, rows_ok))
        return "by_time"

    ui.ask_data_changed = ask
    assert ui.open_project(path)
    warnings, matched, saved, rows_ok = seen[0]
    assert any("SHA-256" in x for x in warnings) and any("743 events" in x for x in warnings)
    assert (matched, saved, rows_ok) == (3, 3, True)
    assert w2.session.landmarks.tolist() == [9, 19, 29]  # re-attached by timestamp
    series = w2.session.series
    assert [str(t)[:13] for t in series.times[[9, 19, 29]]] == \
        [str(t)[:13] for t in w1.session.series.times[[10, 20, 30]]]
    assert w2.isWindowModified()  # the project should be saved again to record the new data

    # "keep rows" and "none", and Cancel leaves the window untouched
    ui.ask_data_changed = lambda *a: "rows"
    assert ui.open_project(path) and w2.session.landmarks.tolist() == [10, 20, 30]
    ui.ask_data_changed = lambda *a: "none"
    assert ui.open_project(path) and w2.session.landmarks.size == 0
    w2.session.toggle_landmark(1)
    ui.ask_data_changed = lambda *a: "cancel"
    assert not ui.open_project(path) and w2.session.landmarks.tolist() == [1]


def test_unchanged_data_does_not_warn(qtbot, new_window, data_copy, tmp_path):
    w1 = new_window(data_copy)
    path = tmp_path / "p.lmdk.json"
    assert _pui(w1).save_to(path)
    w2 = new_window()
    _pui(w2).ask_data_changed = lambda *a: pytest.fail("should not warn")
    assert _pui(w2).open_project(path)


def test_a_broken_project_file_is_reported(qtbot, new_window, tmp_path):
    w = new_window(SAMPLES / "energy_hue_2013_jan.csv")
    bad = tmp_path / "bad.lmdk.json"
    bad.write_text('{"format": "lmdk-project", "version": 1}')
    with qtbot.waitSignal(_pui(w).projectFailed, timeout=WAIT):
        assert not _pui(w).open_project(bad)
    assert "bad.lmdk.json" in w.last_error and "input" in w.last_error
    assert w.session.series.n == 744


# ---------------------------------------------------------------------------------- unsaved prompts
def test_unsaved_prompt_on_close_cancel_keeps_the_window_discard_closes(qtbot, new_window):
    w = new_window(SAMPLES / "energy_hue_2013_jan.csv")
    ui = _pui(w)
    assert not ui.has_unsaved_changes()
    w.session.toggle_landmark(3)
    asked = []
    ui.ask_unsaved = lambda: asked.append("q") or "cancel"
    assert not w.close()
    assert w.isVisible() and asked == ["q"]
    ui.ask_unsaved = lambda: asked.append("q") or "discard"
    assert w.close()
    assert not w.isVisible() and len(asked) == 2


def test_unsaved_prompt_save_saves_then_closes(qtbot, new_window, data_copy, tmp_path):
    w = new_window(data_copy)
    ui = _pui(w)
    w.session.set_landmarks([4, 5])
    target = tmp_path / "on_close.lmdk.json"
    ui.ask_unsaved = lambda: "save"
    ui.get_save_path = lambda: str(target)
    assert w.close()
    assert json.loads(target.read_text())["landmarks"]["rows"] == [4, 5]


def test_unsaved_prompt_save_cancelled_keeps_the_window(qtbot, new_window):
    w = new_window(SAMPLES / "energy_hue_2013_jan.csv")
    ui = _pui(w)
    w.session.toggle_landmark(3)
    ui.ask_unsaved = lambda: "save"
    ui.get_save_path = lambda: None  # the user cancels the file dialog
    assert not w.close() and w.isVisible()


def test_clean_window_closes_without_asking(qtbot, new_window):
    w = new_window(SAMPLES / "energy_hue_2013_jan.csv")
    _pui(w).ask_unsaved = lambda: pytest.fail("should not ask")
    assert w.close()


def test_prompt_before_opening_another_project_or_series(qtbot, new_window, data_copy, tmp_path):
    w = new_window(data_copy)
    ui = _pui(w)
    path = tmp_path / "p.lmdk.json"
    assert ui.save_to(path)
    w.session.toggle_landmark(8)
    ui.ask_unsaved = lambda: "cancel"
    ui.get_open_path = lambda: pytest.fail("the file dialog must not open after Cancel")
    w.findChild(QAction, "openProjectAction").trigger()
    assert w.session.landmarks.tolist() == [8]
    # the main window's own Open asks the same guard
    assert w.replace_guards and not all(g() for g in w.replace_guards)
    # Discard goes on
    ui.ask_unsaved = lambda: "discard"
    ui.get_open_path = lambda: str(path)
    with qtbot.waitSignal(ui.projectOpened, timeout=WAIT):
        w.findChild(QAction, "openProjectAction").trigger()
    assert w.session.landmarks.size == 0


def test_opening_a_plain_series_leaves_the_project(qtbot, new_window, data_copy, tmp_path):
    w = new_window(data_copy)
    ui = _pui(w)
    assert ui.save_to(tmp_path / "p.lmdk.json")
    assert ui.path is not None and w.windowTitle().startswith("p (")
    with qtbot.waitSignal(w.session.previewChanged, timeout=WAIT):
        w.open_series(SAMPLES / "gps_bus_limerick.csv")
    assert ui.path is None and w.windowTitle().startswith("gps_bus_limerick.csv")


def test_headless_default_prompt_never_blocks(qtbot, new_window):
    """On the offscreen platform nobody can answer: the default prompt discards (lmdk-gui --screenshot)."""
    w = new_window(SAMPLES / "energy_hue_2013_jan.csv")
    w.session.toggle_landmark(3)
    assert _pui(w).ask_unsaved() == "discard"
    assert w.close()


def test_seed_change_marks_the_title(qtbot, new_window):
    w = new_window(SAMPLES / "energy_hue_2013_jan.csv")
    assert not w.isWindowModified()
    w.session.set_seed(12345)
    assert w.isWindowModified()


def test_dropping_a_project_file_opens_it(qtbot, new_window, data_copy, tmp_path):
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    w1 = new_window(data_copy)
    w1.session.set_landmarks([11, 12])
    path = tmp_path / "drop.lmdk.json"
    assert _pui(w1).save_to(path)
    w2 = new_window(SAMPLES / "gps_bus_limerick.csv")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    ev = QDropEvent(QPointF(200, 200), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier)
    # Qt delivers a synthetic Drop only inside a real drag; hand it to the window's event filter directly
    with qtbot.waitSignal(_pui(w2).projectOpened, timeout=WAIT):
        assert _pui(w2).eventFilter(w2, ev) is True
    assert w2.session.landmarks.tolist() == [11, 12]


def test_an_extension_state_that_is_not_json_is_left_out(qtbot, new_window, data_copy, tmp_path):
    w = new_window(data_copy)
    w.extensions["bad"] = _FakeExtension({"x": object()})
    w.extensions["good"] = _FakeExtension({"y": 1})
    path = tmp_path / "p.lmdk.json"
    assert _pui(w).save_to(path)
    exts = json.loads(path.read_text())["view"]["extensions"]
    assert "bad" not in exts and exts["good"] == {"y": 1}


def test_the_rules_the_landmarks_come_from_are_saved_and_reopened(qtbot, new_window, data_copy, tmp_path):
    """A project of landmarks a rule found reopens with that said (its exports name the rule); the file keeps
    the rule's label only, as private as the landmarks beside it."""
    w1 = new_window(data_copy)
    w1.session.set_landmarks([5, 6], rules=frozenset({"Value threshold"}))
    path = tmp_path / "r.lmdk.json"
    assert _pui(w1).save_to(path)
    assert json.loads(path.read_text())["landmarks"]["rules"] == ["Value threshold"]
    w2 = new_window()
    with qtbot.waitSignal(w2.session.previewChanged, timeout=WAIT):
        assert _pui(w2).open_project(path)
    assert w2.session.landmarks.tolist() == [5, 6] and w2.session.landmark_rules == {"Value threshold"}
