"""Issue 13: starting on any profile, a window that fits the screen, the empty state, Open Recent, Help."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QRect, QSettings, QSize, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDockWidget, QPushButton, QWidget

from lmdk_gui import __version__
from lmdk_gui.app import SAMPLE_FILES, build_parser
from lmdk_gui.core.kernel.settings import LANDMARK_SCHEMES, SCHEME_LABELS
from lmdk_gui.ui import MainWindow
from lmdk_gui.ui.dialogs.help import SCHEME_HELP
from lmdk_gui.ui.window.startup import (
    ROOMY_HEIGHT,
    fitted_geometry,
    memory_preference,
    read_setting,
    show_window,
    starts_maximized,
)
from tests.conftest import ROOT, SAMPLES

#: Every key the app reads from its settings file.
KEYS = ("lastFile", "lastOptions", "recentFiles", "lastExportDir", "windowGeometry", "windowState",
        "recentProjects", "lastProjectDir", "memoryPolicy")
#: Values no version of the app wrote: a variant Qt cannot decode, a rectangle, raw bytes, a number, text
#: where binary data belongs, an invalid variant, a list of numbers.
JUNK = (r"@Variant(\0\0\0\x7f\0\0\0\x5junk)", "@Rect(1 2 3 4)", "@ByteArray(\\xff\\0garbage)", "42",
        "not a geometry", "@Invalid()", "1, 2, 3", "@Variant(", '"{\\"kind\\": ')


def _ini(lines: dict[str, str]) -> Path:
    """Write the test's settings file (the isolated one tests/ui/conftest.py points the app at)."""
    path = Path(os.environ["LMDK_GUI_SETTINGS"])
    path.write_text("[General]\n" + "".join(f"{k}={v}\n" for k, v in lines.items()), encoding="utf-8")
    return path


def _new_window(qtbot, **kw) -> MainWindow:
    w = MainWindow(**kw)
    qtbot.addWidget(w)
    w.extensions["project_ui"].ask_unsaved = lambda: "discard"
    return w


# ---------------------------------------------------------------------------------------- settings
@pytest.mark.parametrize("junk", JUNK)
def test_junk_in_every_setting_starts_on_the_empty_state(qtbot, tmp_path, caplog, junk):
    _ini(dict.fromkeys(KEYS, junk))
    with caplog.at_level(logging.WARNING, logger="lmdk_gui.settings"):
        w = _new_window(qtbot)  # load_default=True: the path `lmdk-gui` with no argument takes
        w.show()
        qtbot.waitExposed(w)
        w.recent_menu.aboutToShow.emit()
        w.extensions["project_ui"].recent_menu.aboutToShow.emit()
    assert w.session.series is None and w.empty_state.isVisible()
    avail = w.screen().availableGeometry()
    assert w.width() <= avail.width() and w.height() <= avail.height()
    # one line per broken value, naming the key (the junk that happens to be valid text is used as text)
    assert all(r.getMessage().startswith("settings: ignoring ") for r in caplog.records)
    assert any("windowGeometry" in r.getMessage() for r in caplog.records)


def test_junk_settings_through_the_real_entry_point(tmp_path):
    """``lmdk-gui`` with no argument on a broken profile (the original crash was here, in app.main)."""
    ini = tmp_path / "junk.ini"
    ini.write_text("[General]\n" + "".join(f"{k}={JUNK[0]}\n" for k in KEYS), encoding="utf-8")
    env = {**os.environ, "LMDK_GUI_SETTINGS": str(ini), "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-m", "lmdk_gui", "--smoke-test"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    assert "empty state" in out.stdout
    assert "settings: ignoring lastFile" in out.stderr and "settings: ignoring windowGeometry" in out.stderr


def test_old_format_options_reopen_the_last_file(qtbot, tmp_path, caplog):
    """Versions ≤ 0.1 stored lastOptions as a Qt map; an option this version lacks is dropped with a log line."""
    path = _ini({})
    old = QSettings(str(path), QSettings.Format.IniFormat)
    old.setValue("lastFile", str(SAMPLES / "contacts_person1672.csv"))
    old.setValue("lastOptions", {"kind": "categorical", "duplicates": "first", "delimiter": ";"})
    old.setValue("recentFiles", str(SAMPLES / "contacts_person1672.csv"))  # a one-element list, as .ini has it
    old.sync()
    with caplog.at_level(logging.WARNING, logger="lmdk_gui.settings"):
        w = _new_window(qtbot)
    assert w.session.series is not None and w.session.series.kind == "categorical"
    assert w.session.series.n == 2271
    assert w.recent_files() == [str(SAMPLES / "contacts_person1672.csv")]
    assert [r.getMessage() for r in caplog.records] == [
        "settings: ignoring lastOptions['delimiter']=';' (not an option of this version)"]


def test_last_options_that_no_longer_load_leave_the_empty_state(qtbot, tmp_path):
    path = _ini({})
    s = QSettings(str(path), QSettings.Format.IniFormat)
    s.setValue("lastFile", str(SAMPLES / "energy_hue_2013_jan.csv"))
    s.setValue("lastOptions", '{"duplicates": "sometimes"}')
    s.sync()
    w = _new_window(qtbot)
    assert w.session.series is None
    assert "sometimes" in w.statusBar().currentMessage()
    # the reason first (it names the file): after a long path, the status bar had cut it off
    assert w.statusBar().currentMessage().startswith("Could not reopen the last file: ")


def test_read_setting_types(tmp_path):
    s = QSettings(str(tmp_path / "t.ini"), QSettings.Format.IniFormat)
    s.setValue("text", "a")
    s.setValue("one", ["only"])
    s.setValue("many", ["a", "b"])
    s.setValue("map", {"k": "v"})
    assert read_setting(s, "text", "", str) == "a"
    assert read_setting(s, "text", [], list) == ["a"]
    assert read_setting(s, "one", [], list) == ["only"]
    assert read_setting(s, "many", [], list) == ["a", "b"]
    assert read_setting(s, "many", "d", str) == "d"
    assert read_setting(s, "map", {}, dict) == {"k": "v"}
    assert read_setting(s, "missing", "d", str) == "d"
    assert read_setting(s, "text", None, bytes) is None


def test_the_memory_policy_preference_and_flag(tmp_path, caplog):
    s = QSettings(str(tmp_path / "m.ini"), QSettings.Format.IniFormat)
    assert memory_preference(s).mode == "auto"  # unset
    s.setValue("memoryPolicy", "full")
    assert memory_preference(s).mode == "full"
    s.setValue("memoryPolicy", "small please")
    with caplog.at_level(logging.WARNING, logger="lmdk_gui.settings"):
        assert memory_preference(s).mode == "auto"
    assert "memoryPolicy" in caplog.text and "small please" in caplog.text
    assert build_parser().parse_args(["--memory", "lean"]).memory == "lean"
    assert build_parser().parse_args([]).memory is None  # (the preference decides)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--memory", "small"])


# ---------------------------------------------------------------------------------------- geometry
@pytest.mark.parametrize(("avail", "size"), [
    (QRect(0, 0, 1280, 800), QSize(1152, 720)),         # 90 %
    (QRect(0, 0, 1280, 770), QSize(1152, 693)),         # a 2560×1600 screen at 2× scaling, minus a panel
    (QRect(0, 0, 1024, 600), QSize(921, 540)),          # a small laptop
    (QRect(0, 0, 3840, 2160), QSize(1400, 900)),        # capped
    (QRect(1920, 30, 1280, 1024), QSize(1152, 900)),    # a second monitor, below a top panel
])
def test_window_size_fits_the_available_screen(avail, size):
    g = fitted_geometry(avail)
    assert g.size() == size
    assert avail.contains(g)
    assert g.center() == avail.center()


@pytest.mark.parametrize(("avail", "maximized"), [
    (QRect(0, 0, 1280, 800), True),      # at 1152×720 the last preview rows ran below the edge
    (QRect(0, 28, 1366, 740), True),     # a 1366×768 laptop under a panel
    (QRect(0, 0, 1440, 870), True),
    (QRect(0, 0, 1280, 1024), False),    # 1152×900: room enough
    (QRect(0, 30, 1920, 1050), False),
])
def test_a_first_launch_on_a_laptop_screen_opens_maximized(avail, maximized):
    assert starts_maximized(avail) == maximized


def test_the_launch_shows_a_new_window_maximized_on_a_short_screen(qtbot):
    """The offscreen screen is 800 px high: a first launch (no saved geometry) shows the window maximized;
    once its geometry is saved, it comes back as it was left."""
    w = _new_window(qtbot, load_default=False)
    assert w.start_maximized == starts_maximized(w.screen().availableGeometry())
    assert w.start_maximized and w.screen().availableGeometry().height() * 0.9 < ROOMY_HEIGHT
    show_window(w)
    qtbot.waitExposed(w)
    assert w.windowState() & Qt.WindowState.WindowMaximized
    w.showNormal()
    w.close()  # (saves the geometry)
    again = _new_window(qtbot, load_default=False)
    assert not again.start_maximized


@pytest.mark.parametrize("name", ["energy_hue_2013_jan.csv", "gps_bus_limerick.csv"])
def test_the_rows_fit_a_maximized_1280x800_window_without_scrolling(qtbot, name):
    """Series, four budget rows, four preview rows and the metrics in a 1280×800 screen's window under a thin
    title bar: the tab shows every row without a scroll bar (each preview row's note is three lines)."""
    from PySide6.QtWidgets import QScrollArea

    w = _new_window(qtbot, load_default=False)
    with qtbot.waitSignal(w.session.previewChanged, timeout=30_000):
        assert w.open_series(SAMPLES / name)
    w.resize(1280, 780)
    w.show()
    qtbot.waitExposed(w)
    qtbot.waitUntil(w.session.is_denoised_current, timeout=30_000)
    scroll = w.findChild(QScrollArea, "centralScroll")
    qtbot.waitUntil(lambda: len(w.preview_plot.shown()) == 4)
    assert scroll.verticalScrollBar().maximum() == 0


@pytest.mark.parametrize("name", ["energy_hue_2013_jan.csv", "gps_bus_limerick.csv"])
def test_window_can_shrink_to_a_small_screen(qtbot, name):
    """A 1024×600 netbook minus a panel: the tabs scroll rather than push the window off the screen."""
    w = _new_window(qtbot, load_default=False)
    assert w.open_series(SAMPLES / name)
    w.show()
    qtbot.waitExposed(w)
    small = QSize(1024, 560)
    assert w.minimumSizeHint().width() <= small.width() and w.minimumSizeHint().height() <= small.height()


def test_geometry_is_restored(qtbot):
    w = _new_window(qtbot, load_default=False)
    w.show()
    qtbot.waitExposed(w)
    w.setGeometry(50, 60, 700, 500)
    w.close()
    w2 = _new_window(qtbot, load_default=False)
    assert w2.geometry() == QRect(50, 60, 700, 500)


def test_dock_layout_is_restored_but_not_the_empty_states(qtbot):
    w = _new_window(qtbot, load_default=False)
    w.open_series(SAMPLES / "energy_hue_2013_jan.csv")
    w.show()
    qtbot.waitExposed(w)
    w.metrics_dock.hide()
    w.close()
    w2 = _new_window(qtbot, load_default=False)
    w2.close()  # closed while empty (every dock hidden): the saved layout stays the one above
    w3 = _new_window(qtbot, load_default=False)
    w3.open_series(SAMPLES / "energy_hue_2013_jan.csv")
    assert not w3.metrics_dock.isVisibleTo(w3) and w3.settings_dock.isVisibleTo(w3)


def test_saved_geometry_larger_than_the_screen_is_not_restored(qtbot):
    w = _new_window(qtbot, load_default=False)
    w.show()
    qtbot.waitExposed(w)
    w.setGeometry(-3000, -2000, 4000, 3000)
    w.close()
    w2 = _new_window(qtbot, load_default=False)
    assert w2.screen().availableGeometry().contains(w2.geometry())


# ------------------------------------------------------------------------------------- empty state
@pytest.fixture
def empty_window(qtbot):
    w = _new_window(qtbot, load_default=False)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


def test_empty_state_instead_of_empty_axes(empty_window):
    w = empty_window
    assert w.findChild(QWidget, "emptyState").isVisible()
    assert not w.series_plot.isVisible() and not w.preview_plot.isVisible()
    assert not any(d.isVisible() for d in w.findChildren(QDockWidget))


@pytest.mark.parametrize("name", sorted(SAMPLE_FILES))
def test_sample_buttons_open_the_samples_and_show_the_plots(qtbot, empty_window, name):
    w = empty_window
    button = w.findChild(QPushButton, f"sample_{name}Button")
    with qtbot.waitSignal(w.seriesLoaded, timeout=30_000):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    file, options = SAMPLE_FILES[name]
    series = w.session.series
    assert series.source.path == str(SAMPLES / file)
    assert series.kind == {"energy": "numeric", "gps": "location", "contacts": "categorical"}[name]
    assert options.get("kind", series.kind) == series.kind
    qtbot.waitUntil(w.series_plot.isVisible)
    assert not w.empty_state.isVisible() and w.preview_plot.isVisible()
    assert w.settings_dock.isVisible() and w.metrics_dock.isVisible()


def test_open_button_triggers_file_open(qtbot, empty_window, monkeypatch):
    from lmdk_gui.ui.window import files_controller

    asked = []
    monkeypatch.setattr(files_controller.QFileDialog, "getOpenFileName", lambda *a, **k: asked.append(a) or ("", ""))
    with qtbot.waitSignal(empty_window.open_action.triggered, timeout=1000):
        qtbot.mouseClick(empty_window.findChild(QPushButton, "emptyOpenButton"), Qt.MouseButton.LeftButton)
    assert len(asked) == 1


# ------------------------------------------------------------------------------------- open recent
def test_open_recent_drops_missing_files_and_clear_list(qtbot, empty_window, tmp_path):
    w = empty_window
    kept, gone = tmp_path / "kept.csv", tmp_path / "gone.csv"
    for p in (kept, gone):
        shutil.copy(SAMPLES / "energy_hue_2013_jan.csv", p)
        assert w.open_series(p)
    gone.unlink()
    w.recent_menu.aboutToShow.emit()
    texts = [a.text() for a in w.recent_menu.actions() if not a.isSeparator()]
    assert texts == [str(kept.resolve()), "Clear list"]
    assert w.recent_files() == [str(kept.resolve())]
    clear = w.recent_menu.findChild(QAction, "clearRecentAction") or next(
        a for a in w.recent_menu.actions() if a.objectName() == "clearRecentAction")
    clear.trigger()
    assert w.recent_files() == []
    w.recent_menu.aboutToShow.emit()
    actions = [a for a in w.recent_menu.actions() if not a.isSeparator()]
    assert [a.text() for a in actions] == ["(no recent files)", "Clear list"]
    assert not any(a.isEnabled() for a in actions)


# --------------------------------------------------------------------------------------------- help
def test_f1_opens_the_guide_with_every_scheme(qtbot, empty_window):
    w = empty_window
    assert w.findChild(QAction, "helpAction").shortcut() == QKeySequence(QKeySequence.StandardKey.HelpContents)
    qtbot.keyClick(w, Qt.Key.Key_F1)
    guide = w.findChild(QDialog, "helpGuide")
    qtbot.waitUntil(guide.isVisible)
    assert guide.tabs.currentWidget() is guide.guide
    text = guide.guide.toPlainText()
    for scheme in LANDMARK_SCHEMES:
        assert SCHEME_LABELS[scheme] in text
    for word in ("ε", "Δ", "r (radius)", "Landmarks", "Example:"):
        assert word in text
    assert text.count("Example:") == 4 + len(SCHEME_HELP)


def test_every_landmark_scheme_is_explained():
    assert set(LANDMARK_SCHEMES) <= set(SCHEME_HELP)


def test_shortcut_list_comes_from_the_actions(empty_window):
    w = empty_window
    w.findChild(QAction, "shortcutsAction").trigger()
    table = w.help_dialog.shortcuts
    rows = {table.item(i, 0).text(): table.item(i, 1).text() for i in range(table.rowCount())}
    native = QKeySequence.SequenceFormat.NativeText
    assert rows["File › Open series…"] == w.open_action.shortcut().toString(native)
    assert rows["Help › Guide"] == QKeySequence(QKeySequence.StandardKey.HelpContents).toString(native)
    assert "Ctrl+Shift+Z" in rows["Edit › Redo"]
    with_keys = {a.shortcut().toString(native) for a in w.findChildren(QAction) if a.shortcuts() and a.text()}
    listed = {k.split(" or ")[0] for where, k in rows.items() if not where.startswith("Series plot ›")}
    assert with_keys == listed  # every action's shortcut, nothing else


def test_about_shows_version_and_licences(empty_window):
    w = empty_window
    w.findChild(QAction, "aboutAction").trigger()
    d = w.help_dialog
    assert d.isVisible() and d.tabs.currentWidget() is d.about
    text = d.about.toPlainText()
    assert f"lmdk_gui {__version__}" in text
    for needle in ("PySide6", "LGPL-3.0", "pyqtgraph", "MIT", "NumPy", "pandas", "Numba", "OpenDP", "superqt",
                   "CC BY-NC-SA", "Usage restrictions: None", "HUE"):
        assert needle in text, needle


def test_deferred_tabs_install_after_the_first_paint_in_order(qtbot):
    """``lmdk-gui`` builds the window with ``defer_tabs``: the tabs the first paint does not show install
    after it (cold start, issue 15), ending in the same tabs, menus and extensions as an eager window; a
    series opened before they install reaches them; reading ``extensions`` installs them at once."""
    from lmdk_gui.ui.window.main_window import DEFERRED_TABS

    eager = MainWindow(load_default=False)
    qtbot.addWidget(eager)
    assert eager.open_series(SAMPLES / SAMPLE_FILES["energy"][0])
    want_tabs = [eager.tabs.tabText(i) for i in range(eager.tabs.count())]
    w = MainWindow(load_default=False, defer_tabs=True)
    qtbot.addWidget(w)
    assert w.extensions.pending() == list(DEFERRED_TABS) and w.tabs.count() == len(want_tabs) - len(DEFERRED_TABS)
    assert w.open_series(SAMPLES / SAMPLE_FILES["energy"][0])
    w.show()
    qtbot.waitUntil(lambda: not w.extensions.pending(), timeout=10_000)
    assert [w.tabs.tabText(i) for i in range(w.tabs.count())] == want_tabs
    assert set(w.extensions) == set(eager.extensions)
    assert w.findChild(QAction, "accuracyAction") is not None

    def sources(win) -> list:
        combo = win.extensions["evaluation_ui"].source_combo
        return [combo.itemData(i)[0] for i in range(combo.count())]

    assert sources(w) == sources(eager)  # installed after the series was opened: it still knows its kind
    later = MainWindow(load_default=False, defer_tabs=True)
    qtbot.addWidget(later)
    assert later.extensions["accuracy_ui"] is not None and not later.extensions.pending()
    assert [later.tabs.tabText(i) for i in range(later.tabs.count())] == want_tabs
    for win in (eager, w, later):
        win.close()
