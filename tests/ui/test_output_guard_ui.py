"""Issue 42, finding 3 in the window: File › Save Project and Landmarks › Export list never write over the
data file (by its path or through a link), even after the save dialog's own overwrite question; the refusal
is a message box and the session stays as it was."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from tests.conftest import SAMPLES


@pytest.fixture
def data(tmp_path):
    dst = tmp_path / "in" / "energy.csv"
    dst.parent.mkdir()
    shutil.copy(SAMPLES / "energy_hue_2013_jan.csv", dst)
    return dst


@pytest.fixture
def win(qtbot, data):
    from lmdk_gui.ui import MainWindow

    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.session.previewChanged, timeout=30_000):
        assert w.open_series(data), w.last_error
    w.session.set_landmarks(np.array([3, 9, 20]))
    yield w
    w.extensions["project_ui"].ask_unsaved = lambda: "discard"
    w.close()


def _target(data, tmp_path, alias):
    if alias == "same":
        return data
    link = tmp_path / f"{alias}.csv"
    if alias == "symlink":
        link.symlink_to(data)
    else:
        os.link(data, link)
    return link


@pytest.mark.parametrize("alias", ["same", "symlink", "hardlink"])
def test_save_project_over_the_data_file_is_refused(win, data, tmp_path, alias):
    before = data.read_bytes()
    pui = win.extensions["project_ui"]
    pui.get_save_path = lambda: str(_target(data, tmp_path, alias))  # the dialog has asked about overwriting
    assert pui.save_as() is False
    assert data.read_bytes() == before
    assert "data file" in win.last_error or "symbolic link" in win.last_error
    assert win.session.series is not None and list(win.session.landmarks) == [3, 9, 20]
    assert pui.path is None


@pytest.mark.parametrize("alias", ["same", "symlink", "hardlink"])
def test_landmark_list_export_over_the_data_file_is_refused(win, data, tmp_path, alias):
    before = data.read_bytes()
    ui = win.extensions["landmarks_ui"]
    ui.get_export_path = lambda: str(_target(data, tmp_path, alias))
    ui.export_dialog()
    assert data.read_bytes() == before
    assert "data file" in win.last_error or "symbolic link" in win.last_error
    assert list(win.session.landmarks) == [3, 9, 20]
    # an ordinary file the dialog asked about is still replaced
    other = tmp_path / "list.csv"
    other.write_text("old")
    assert ui.export_landmarks(other)
    assert other.read_text().startswith("timestamp,row")


@pytest.mark.parametrize("alias", ["same", "hardlink"])
def test_window_export_over_the_data_file_is_refused_even_after_replace(qtbot, win, data, tmp_path, alias):
    """The export dialog's "Replace?" gives force=True; the input is still refused, in a message box."""
    before = data.read_bytes()
    job = win.export_release(_target(data, tmp_path, alias), "uniform", force=True)
    with qtbot.waitSignal(job.failed, timeout=30_000) as blocker:
        pass
    assert "own input file" in blocker.args[0] and "own input file" in win.last_error
    assert data.read_bytes() == before and win.session.series is not None
    win._error_box.close()


def test_compare_tab_saves_never_replace_the_data_file(qtbot, win, data, tmp_path):
    tab = win.extensions["evaluation_ui"]
    tab.percentages_edit.setText("0,50")
    tab.runs_spin.setValue(1)
    with qtbot.waitSignal(tab.evaluationFinished, timeout=60_000):
        tab.run()
    before = data.read_bytes()
    link = _target(data, tmp_path, "hardlink")
    for what, target in (("png", data), ("csv", link)):
        tab.ask_save_path = lambda w, suggested, target=target: str(target)
        tab._save_dialog(what)
        assert "data file" in win.last_error
    assert data.read_bytes() == before


def test_release_report_never_replaces_the_data_file(qtbot, win, data, tmp_path):
    job = win.export_release(tmp_path / "r.csv", "uniform")
    with qtbot.waitSignal(job.finished, timeout=60_000):
        pass
    before = data.read_bytes()
    win.ask_report_path = lambda start, private: (str(_target(data, tmp_path, "hardlink")), True)
    assert not win.save_release_report()
    assert "data file" in win.last_error and data.read_bytes() == before
