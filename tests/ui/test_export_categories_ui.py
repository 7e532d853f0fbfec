"""The export dialog asks before publishing the data's own category list (issue 17, finding 5), the same
question as ``lmdk export --categories-from-data``, through a replaceable ``ask_categories_from_data`` hook."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QDialog

from lmdk_gui.ui.dialogs.export_dialog import ExportDialog
from tests.conftest import SAMPLES

from .conftest import wait_preview

CONTACTS = SAMPLES / "contacts_person1672_first.csv"


def _dialog(qtbot, window, tmp_path) -> ExportDialog:
    dlg = ExportDialog(window.session.snapshot(), "uniform", str(tmp_path), window)
    qtbot.addWidget(dlg)
    dlg.path_edit.setText(str(tmp_path / "r.csv"))
    return dlg


def test_categorical_export_asks_and_no_stops(qtbot, window, tmp_path):
    assert window.open_series(CONTACTS, kind="categorical")
    window.session.add_range(3, 5)
    wait_preview(qtbot, window)
    n_labels = len(window.session.series.categories)
    asked: list[str] = []
    dlg = _dialog(qtbot, window, tmp_path)
    dlg.ask_categories_from_data = lambda message: asked.append(message) or False
    dlg._accept()
    assert dlg.result() != QDialog.DialogCode.Accepted
    assert len(asked) == 1 and f"({n_labels} labels)" in asked[0] and "published whole" in asked[0]
    assert dlg.values()["categories_from_data"] is False
    dlg.ask_categories_from_data = lambda message: asked.append(message) or True
    dlg._accept()
    assert dlg.result() == QDialog.DialogCode.Accepted and len(asked) == 2
    assert dlg.values()["categories_from_data"] is True
    assert list(tmp_path.iterdir()) == []  # the dialog itself writes nothing


def test_numeric_export_does_not_ask(qtbot, window, tmp_path):
    dlg = _dialog(qtbot, window, tmp_path)
    dlg.ask_categories_from_data = lambda message: pytest.fail("asked for a numeric series")
    dlg._accept()
    assert dlg.result() == QDialog.DialogCode.Accepted
    assert dlg.values()["categories_from_data"] is False


# ------------------------------------------------- bounds taken "From data" (issue 42, finding 7)
def test_bounds_from_data_are_remembered_asked_about_and_restored_by_a_project(qtbot, window, tmp_path):
    panel = window.settings_panel
    panel.bounds_from_data.click()
    st = window.session.settings
    values = window.session.series.values
    assert st.bounds == (float(values.min()), float(values.max())) and st.bounds_from_data is True
    asked: list[str] = []
    dlg = _dialog(qtbot, window, tmp_path)
    dlg.ask_bounds_from_data = lambda message: asked.append(message) or False
    dlg._accept()
    assert dlg.result() != QDialog.DialogCode.Accepted
    assert len(asked) == 1 and "minimum and maximum" in asked[0]
    dlg.ask_bounds_from_data = lambda message: asked.append(message) or True
    dlg._accept()
    assert dlg.result() == QDialog.DialogCode.Accepted

    pui = window.extensions["project_ui"]
    project = tmp_path / "p.lmdk.json"
    assert pui.save_to(project)
    panel.hi_spin.setValue(panel.hi_spin.value() + 1.0)  # an edited bound is no longer the data's
    assert window.session.settings.bounds_from_data is False
    assert pui.open_project(project), window.last_error
    qtbot.waitUntil(lambda: window.session.settings.bounds_from_data is True, timeout=30_000)
    assert panel.bounds_derived


def test_typed_bounds_do_not_ask(qtbot, window, tmp_path):
    window.settings_panel.bounds_check.setChecked(True)
    assert window.session.settings.bounds is not None and window.session.settings.bounds_from_data is False
    dlg = _dialog(qtbot, window, tmp_path)
    dlg.ask_bounds_from_data = lambda message: pytest.fail("asked for typed bounds")
    dlg._accept()
    assert dlg.result() == QDialog.DialogCode.Accepted
