"""The import dialog (issue 3): first rows, prefilled column choices and kind, loading with them."""

from __future__ import annotations

from lmdk_gui.core.loader import inspect_table
from lmdk_gui.ui.import_dialog import ImportDialog
from tests.conftest import DATA, SAMPLES


def test_prefilled_when_unambiguous(qtbot):
    dlg = ImportDialog(inspect_table(SAMPLES / "gps_bus_limerick.csv"))
    qtbot.addWidget(dlg)
    assert dlg.kind.currentText() == "location"
    assert dlg.time_col.currentText() == "timestamp"
    assert (dlg.lat_col.currentText(), dlg.lon_col.currentText()) == ("lat", "lon")
    table = dlg.findChild(object, "importPreviewTable")
    assert table.rowCount() == 20 and table.columnCount() == 3
    assert dlg.options() == {"time_col": "timestamp", "kind": "location", "duplicates": "error",
                             "lat_col": "lat", "lon_col": "lon"}


def test_ambiguous_file_shows_notes_and_takes_choices(qtbot):
    dlg = ImportDialog(inspect_table(DATA / "contacts_highschool2012_person1672.csv"))
    qtbot.addWidget(dlg)
    assert not dlg.notes.isHidden() and "i, j" in dlg.notes.text()
    dlg.kind.setCurrentText("categorical")
    dlg.value_col.setCurrentText("j")
    dlg.duplicates.setCurrentIndex(dlg.duplicates.findData("first"))
    assert dlg.options() == {"time_col": "timestamp", "kind": "categorical", "duplicates": "first",
                             "value_col": "j"}


def test_open_through_the_dialog_loads_in_the_background(qtbot, window, monkeypatch):
    def accept_with_choices(self):
        self.duplicates.setCurrentIndex(self.duplicates.findData("first"))
        return ImportDialog.DialogCode.Accepted

    monkeypatch.setattr(ImportDialog, "exec", accept_with_choices)
    with qtbot.waitSignal(window.seriesLoaded, timeout=30_000):
        window.import_with_dialog(str(DATA / "energy_hue_residential1_2013.csv"))
    assert window.session.n == 8759
    assert str(DATA / "energy_hue_residential1_2013.csv") in window.recent_files()
