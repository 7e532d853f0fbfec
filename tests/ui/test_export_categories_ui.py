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
