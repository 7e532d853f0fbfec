"""The import dialog (issue 3): first rows, prefilled column choices and kind, loading with them."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from lmdk_gui.core.data.loader import inspect_table, scan_table
from lmdk_gui.ui.dialogs.import_dialog import ImportDialog
from lmdk_gui.ui.window.main_window import MainWindow
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


# ---------------------------------------------------------------- issue 13: real data in one pass

PAIRS = DATA / "contact_pairs_synthetic.csv"


def scanned_dialog(qtbot, path) -> ImportDialog:
    dlg = ImportDialog(inspect_table(path))
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitUntil(lambda: dlg.scan is not None, timeout=30_000)
    return dlg


def press_open(qtbot, dlg: ImportDialog):
    with qtbot.waitSignal(dlg.loaded, timeout=30_000):
        qtbot.mouseClick(dlg.open_button, Qt.MouseButton.LeftButton)
    assert not dlg.isVisible() and dlg.result() == ImportDialog.DialogCode.Accepted
    return dlg.series


def mean_enabled(dlg: ImportDialog) -> bool:
    return dlg.duplicates.model().item(dlg.duplicates.findData("mean")).isEnabled()


def test_repeated_hours_numeric_in_one_pass(qtbot):
    dlg = scanned_dialog(qtbot, DATA / "energy_hue_residential1_2013.csv")
    assert dlg.repeated.isVisible()
    assert dlg.repeated.text() == "Repeated times: 1 (rows 7347, 7348) — choose what to keep"
    assert dlg.exact.isVisible() and "Exact duplicate rows: 1 (row 2163)" in dlg.exact.text()
    assert dlg.duplicates.currentData() == "first" and mean_enabled(dlg)
    # the rows themselves are shown under the first rows, coloured, with their file row numbers
    labels = [dlg.table.verticalHeaderItem(r).text() for r in range(dlg.table.rowCount())]
    assert labels[-4:] == ["⋮", "2163", "7347", "7348"]
    assert dlg.table.item(len(labels) - 1, 1).text() == "0.576"
    assert dlg.table.item(len(labels) - 1, 1).toolTip() == "repeated time"
    dlg.duplicates.setCurrentIndex(dlg.duplicates.findData("mean"))
    s = press_open(qtbot, dlg)
    assert s.n == 8759 and s.source.columns.duplicates == "mean"


def test_repeated_fix_location_mean_refused(qtbot, tmp_path):
    lines = (SAMPLES / "gps_bus_limerick.csv").read_text().splitlines()
    t = lines[5].split(",")[0]
    lines.insert(6, f"{t},52.6300000,-8.6600000")  # one repeated GPS fix at another position
    path = tmp_path / "track.csv"
    path.write_text("\n".join(lines) + "\n")
    dlg = scanned_dialog(qtbot, path)
    assert dlg.repeated.text() == "Repeated times: 1 (rows 6, 7) — choose what to keep"
    assert not mean_enabled(dlg) and "not possible" in dlg.duplicates.model().item(
        dlg.duplicates.findData("mean")).toolTip()
    assert dlg.table.item(4, 0).background().color().name() != dlg.table.item(3, 0).background().color().name()
    s = press_open(qtbot, dlg)
    kept = [float(v) for v in lines[5].split(",")[1:]]  # keep the first (file row 6), not the new fix
    assert s.kind == "location" and s.n == 2144 and s.values[4].tolist() == kept


def test_several_contacts_per_instant_categorical(qtbot):
    dlg = scanned_dialog(qtbot, SAMPLES / "contacts_person1672.csv")
    assert dlg.kind.currentText() == "categorical" and not mean_enabled(dlg)
    assert dlg.repeated.text().startswith("Repeated times: 462 (rows 7, 8, 31, …)")
    dlg.duplicates.setCurrentIndex(dlg.duplicates.findData("last"))
    dlg._policy_activated(0)
    s = press_open(qtbot, dlg)
    assert s.n == 2271 and s.source.columns.duplicates == "last"


def test_exact_duplicate_rows_dropped_with_a_note(qtbot, tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("timestamp,kwh\n2013-01-01 00:00:00,1\n2013-01-01 01:00:00,2\n2013-01-01 01:00:00,2\n"
                    "2013-01-01 02:00:00,3\n")
    dlg = scanned_dialog(qtbot, path)
    assert not dlg.repeated.isVisible() and dlg.exact.isVisible()
    assert dlg.exact.text().startswith("Exact duplicate rows: 1 (row 4)") and "dropped" in dlg.exact.text()
    assert dlg.duplicates.currentData() == "drop-exact"
    s = press_open(qtbot, dlg)
    assert s.values.tolist() == [1, 2, 3] and s.source.exact_duplicates_dropped == 1


def test_missing_values_skipped_on_request(qtbot, tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("timestamp,kwh\n2013-01-01 00:00:00,1\n2013-01-01 01:00:00,\n2013-01-01 02:00:00,3\n"
                    "2013-01-01 03:00:00,\n2013-01-01 04:00:00,5\n")
    dlg = scanned_dialog(qtbot, path)
    assert dlg.missing.text() == "Missing values: 2 rows (rows 3, 5; kwh: 2)"
    assert dlg.skip_missing.isVisible() and not dlg.skip_missing.isChecked()
    assert dlg.skip_missing.text() == "Skip rows with missing values (2 rows)"
    assert dlg.table.item(1, 1).toolTip() == "missing value"
    dlg.skip_missing.setChecked(True)
    s = press_open(qtbot, dlg)
    assert s.values.tolist() == [1, 3, 5] and s.source.missing_skipped == 2


def test_pair_style_contact_log(qtbot):
    dlg = scanned_dialog(qtbot, PAIRS)
    assert dlg.contacts.isChecked() and (dlg.pair_a.currentText(), dlg.pair_b.currentText()) == ("i", "j")
    qtbot.waitUntil(lambda: dlg.person.count() == 14)
    assert dlg.person.itemText(0) == "1005 — 179 rows" and dlg.person.current_id() == "1005"
    assert dlg.repeated.text().startswith("Repeated times: 45 (")
    dlg.person.select("1006")
    qtbot.waitUntil(lambda: dlg.scan.person == "1006", timeout=30_000)
    expected = scan_table(PAIRS, person="1006")
    assert dlg.scan.repeated_times == expected.repeated_times
    dlg.pair_value.setCurrentIndex(1)  # the other person's class
    assert dlg.options()["pair_class_cols"] == ("class_i", "class_j")
    dlg.pair_value.setCurrentIndex(0)
    s = press_open(qtbot, dlg)
    assert s.kind == "categorical" and s.source.columns.person == "1006" and "1006" not in s.categories


def test_error_keeps_the_dialog_open_with_the_choices(qtbot, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("timestamp,kwh,other\n2013-01-01 00:00:00,1,2\n2013-01-01 01:00:00,2,x\n")
    dlg = scanned_dialog(qtbot, path)
    dlg.value_col.setCurrentText("other")
    qtbot.waitUntil(lambda: dlg.error.isVisible(), timeout=30_000)  # said before Open
    before = dlg.options()
    with qtbot.waitSignal(dlg.loadFailed, timeout=30_000) as sig:
        qtbot.mouseClick(dlg.open_button, Qt.MouseButton.LeftButton)
    assert sig.args[0] == "bad.csv, row 3, column 'other': expected a number, got 'x'"
    assert dlg.isVisible() and dlg.error.text() == sig.args[0] and dlg.series is None
    assert dlg.options() == before and dlg.open_button.isEnabled()
    dlg.value_col.setCurrentText("kwh")  # fix the choice in place, Open again
    assert press_open(qtbot, dlg).values.tolist() == [1, 2]


def test_lmdk_gui_file_opens_the_dialog_for_an_ambiguous_file(qtbot, monkeypatch):
    from PySide6.QtWidgets import QApplication

    from lmdk_gui import app

    shown: list[ImportDialog] = []

    def answer(self, dlg: ImportDialog) -> bool:  # the user: look at the checks, press Open
        shown.append(dlg)
        dlg.show()
        qtbot.waitUntil(lambda: dlg.scan is not None and dlg.person.count() > 0, timeout=30_000)
        press_open(qtbot, dlg)
        return True

    monkeypatch.setattr(MainWindow, "_ask_import", answer)
    monkeypatch.setattr(QApplication, "exec", lambda *_a: 0)
    monkeypatch.setenv("LMDK_RUNTIME", "off")  # (in this test process: no process-wide tuning)
    assert app.main([str(PAIRS), "--epsilon", "0.5"]) == 0
    assert len(shown) == 1
    window = shown[0].parent()
    qtbot.addWidget(window)
    s = window.session.series
    assert s is not None and s.source.columns.person == "1005" and window.session.settings.epsilon == 0.5
    window.close()


def test_lmdk_gui_file_opens_a_clean_file_without_asking(qtbot):
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    w.ask_import = lambda dlg: pytest.fail("no dialog for a file the defaults read")
    assert w.open_path(SAMPLES / "gps_bus_limerick.csv") and w.session.n == 2144
    asked = []
    w.ask_import = lambda dlg: asked.append(dlg) or False  # the user cancels
    assert not w.open_path(DATA / "energy_hue_residential1_2013.csv") and len(asked) == 1
    assert w.session.n == 2144 and "repeated timestamps" in w.last_error


def test_an_excel_workbook_opens_through_the_dialog_with_its_sheet_named(qtbot, tmp_path):
    """A workbook whose sheet has a repeated hour: the dialog says which sheet it shows, the checks mark the
    sheet's rows, and Open with a policy loads it."""
    import datetime as dt

    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Zähler 7"
    ws.append(["timestamp", "kwh"])
    for i, h in enumerate((0, 1, 1, 2)):
        ws.append([dt.datetime(2013, 1, 1, h), 0.5 + i])
    wb.save(tmp_path / "meter.xlsx")
    dlg = scanned_dialog(qtbot, tmp_path / "meter.xlsx")
    from PySide6.QtWidgets import QLabel

    assert any("sheet 'Zähler 7' of the workbook" in lab.text() for lab in dlg.findChildren(QLabel))
    assert dlg.repeated.text() == "Repeated times: 1 (rows 3, 4) — choose what to keep"
    dlg.duplicates.setCurrentIndex(dlg.duplicates.findData("last"))
    s = press_open(qtbot, dlg)
    assert s is not None and s.values.tolist() == [0.5, 2.5, 3.5]


def test_lmdk_gui_file_that_cannot_be_read_says_so_in_the_window(qtbot, tmp_path):
    """``lmdk-gui old.xls`` from a file manager: the reason was printed on a terminal nobody sees and the
    window showed its empty state. It is said in the window, in the loader's words."""
    from PySide6.QtWidgets import QMessageBox

    path = tmp_path / "old.xls"
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64)
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    w.ask_import = lambda dlg: pytest.fail("nothing to choose in a file that cannot be read")
    assert not w.open_path(path)
    box = w.findChild(QMessageBox, "errorBox")
    assert box is not None and box.isVisible() and box.windowTitle() == "Cannot open the file"
    assert box.text() == w.last_error and "Excel 97–2003 workbook (.xls): save it as CSV" in box.text()
    assert w.session.series is None


def test_the_preview_rows_carry_the_files_row_numbers_under_a_title(qtbot, tmp_path):
    """A sheet with a title above its header: the preview's rows were numbered 2, 3, … and the repeated
    time's colour fell on the wrong row (the 8th data row for sheet row 9)."""
    import datetime as dt

    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Stromverbrauch Haushalt 7"])
    ws.append([])
    ws.append(["Zeit", "kWh"])
    t0 = dt.datetime(2013, 1, 1)
    for i in range(30):
        ws.append([t0 + dt.timedelta(hours=i), 0.5 + i])
    ws.append([t0 + dt.timedelta(hours=5), 99.0])  # row 34 repeats row 9's time
    wb.save(tmp_path / "t.xlsx")
    dlg = scanned_dialog(qtbot, tmp_path / "t.xlsx")
    assert dlg.repeated.text() == "Repeated times: 1 (rows 9, 34) — choose what to keep"
    labels = [dlg.table.verticalHeaderItem(r).text() for r in range(dlg.table.rowCount())]
    assert labels[:3] == ["4", "5", "6"] and labels[-1] == "34"
    row9 = labels.index("9")
    assert dlg.table.item(row9, 0).text() == "2013-01-01 05:00:00"
    assert dlg.table.item(row9, 0).toolTip() == "repeated time"
    assert dlg.table.item(row9 + 1, 0).toolTip() == ""


# ------------------------------------------------- issue 15: no frozen window while a file is first read

def test_which_files_are_read_on_a_worker_before_the_dialog(tmp_path, monkeypatch):
    """A large file is read whole (its encoding: 0.9 s for a 10^7-row CSV) and a workbook or a track converted
    whole before the import dialog can show it: those are read on a worker, a small CSV at once."""
    from lmdk_gui.core.data import loader

    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    wb.active.append(["timestamp", "kwh"])
    wb.save(tmp_path / "m.xlsx")
    (tmp_path / "t.gpx").write_text('<?xml version="1.0"?><gpx version="1.1"><trk></trk></gpx>')
    assert not loader.slow_to_inspect(SAMPLES / "energy_hue_2013_jan.csv")
    assert loader.slow_to_inspect(tmp_path / "m.xlsx") and loader.slow_to_inspect(tmp_path / "t.gpx")
    assert not loader.slow_to_inspect(tmp_path / "missing.csv")  # (inspect_table says so, at once)
    monkeypatch.setattr(loader, "INSPECT_INLINE_BYTES", 1000)
    assert loader.slow_to_inspect(SAMPLES / "energy_hue_2013_jan.csv")


def test_a_slow_first_read_keeps_the_window_painting_and_can_be_cancelled(qtbot, window, monkeypatch):
    """File › Open of a large file froze the window until it had been read (no repaint, no way back). It is
    read on a worker behind a busy dialog: the event loop keeps running (a 10 ms timer is never held up), the
    dialog that follows gets the same preview, and Cancel gives up without opening anything."""
    import threading
    import time

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QProgressDialog

    from lmdk_gui.ui.window import files_controller as mw

    read_on: list[threading.Thread] = []

    def slow_inspect(path, *a, **k):
        read_on.append(threading.current_thread())
        time.sleep(0.4)
        return inspect_table(path, *a, **k)

    monkeypatch.setattr(mw, "inspect_table", slow_inspect)
    monkeypatch.setattr(mw, "slow_to_inspect", lambda path: True)
    beats: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: beats.append(time.perf_counter()))
    timer.start()
    shown: list[ImportDialog] = []
    window.ask_import = lambda dlg: shown.append(dlg) or False
    assert not window.import_with_dialog(str(SAMPLES / "gps_bus_limerick.csv"), ask=False)
    timer.stop()
    assert read_on and read_on[0] is not threading.main_thread()
    assert len(shown) == 1 and shown[0].preview.columns == inspect_table(SAMPLES / "gps_bus_limerick.csv").columns
    gaps = [b - a for a, b in zip(beats, beats[1:], strict=False)]
    assert len(beats) > 10 and max(gaps) < 0.2, max(gaps)

    def cancel_when_shown() -> None:
        shown_now = [b for b in window.findChildren(QProgressDialog, "busyDialog") if b.isVisible()]
        if not shown_now:
            QTimer.singleShot(20, cancel_when_shown)
            return
        from PySide6.QtWidgets import QPushButton

        qtbot.mouseClick(shown_now[0].findChild(QPushButton), Qt.MouseButton.LeftButton)  # its Cancel

    QTimer.singleShot(20, cancel_when_shown)
    before = window.session.n
    assert not window.import_with_dialog(str(SAMPLES / "gps_bus_limerick.csv"), ask=False)
    assert len(shown) == 1 and window.session.n == before  # nothing asked, nothing opened


def test_a_large_file_given_at_launch_opens_after_the_window_shows(qtbot, monkeypatch):
    """``lmdk-gui FILE`` of 10^7 rows showed no window for 5 s (the file read and loaded first). The launch
    now shows the window and then opens the file as open_path would: loaded on the worker when the defaults
    read it; the import dialog when they cannot (repeated hours) or it has an id column."""
    from lmdk_gui.ui.window import files_controller as mw

    monkeypatch.setattr(mw, "slow_to_inspect", lambda path: True)  # (the busy dialog's path too)
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    w.show()
    asked: list[ImportDialog] = []
    w.ask_import = lambda dlg: asked.append(dlg) or False
    with qtbot.waitSignal(w.seriesLoaded, timeout=30_000):
        w.open_path_in_background(str(SAMPLES / "energy_hue_2013_jan.csv"))
    assert w.session.n == 744 and not asked
    w.open_path_in_background(str(DATA / "energy_hue_residential1_2013.csv"))  # a repeated hour
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=30_000)
    assert asked[0].preview.path.endswith("energy_hue_residential1_2013.csv") and w.session.n == 744
    w.close()


def test_the_empty_window_says_which_file_it_is_opening(qtbot, tmp_path):
    """While a file given at launch (or picked) loads in the background, the empty window's title said
    "Open a time series to begin" under the status bar's "Loading …"; it names the file being opened, and
    goes back when the load fails."""
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    w.show()
    title = w.empty_state.title
    assert "Open a time series to begin" in title.text()
    with qtbot.waitSignal(w.loadFailed, timeout=30_000):
        w.open_series_async(str(tmp_path / "gone.csv"))
        assert "Opening gone.csv…" in title.text()
    assert "Open a time series to begin" in title.text()
    with qtbot.waitSignal(w.seriesLoaded, timeout=30_000):
        w.open_series_async(str(SAMPLES / "energy_hue_2013_jan.csv"))
        assert "Opening energy_hue_2013_jan.csv…" in title.text()
    assert "Open a time series to begin" in title.text()
    w.close()


# ---------------------------------------------------------------- issue 44: dates that read either way, row order

def _write(tmp_path, name: str, text: str):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


AMBIGUOUS_DATES = "date,kwh\n" + "".join(f"{d:02d}/02/2013,{d}\n" for d in range(1, 11))


def test_dates_that_read_either_way_ask_for_the_order(qtbot, tmp_path):
    dlg = scanned_dialog(qtbot, _write(tmp_path, "d.csv", AMBIGUOUS_DATES))
    assert dlg.date_order.isVisible() and dlg.date_order.currentData() is None
    assert not dlg.open_button.isEnabled()  # the dialog stays open until the order is chosen
    assert dlg.error.text() == "Dates like 01/02/2013 read either way: choose the date order above."
    assert dlg.error.isVisible()
    items = [dlg.date_order.itemText(i) for i in range(dlg.date_order.count())]
    assert items[1:] == ["day/month/year: 01/02/2013 is 1 February 2013",
                         "month/day/year: 01/02/2013 is January 2, 2013"]
    with qtbot.waitSignal(dlg.scanned, timeout=30_000):
        dlg.date_order.setCurrentIndex(dlg.date_order.findData("dmy"))
    assert dlg.error.isHidden() and dlg.open_button.isEnabled()
    assert dlg.options()["date_order"] == "dmy"
    series = press_open(qtbot, dlg)
    assert str(series.times[0])[:10] == "2013-02-01" and series.source.columns.date_order == "dmy"


def test_unambiguous_dates_ask_nothing(qtbot, tmp_path):
    dlg = scanned_dialog(qtbot, _write(tmp_path, "d.csv", "date,kwh\n01/02/2013,1\n13/02/2013,2\n"))
    assert dlg.date_order.isHidden() and dlg.open_button.isEnabled() and "date_order" not in dlg.options()


def test_lmdk_gui_file_with_ambiguous_dates_goes_through_the_dialog(qtbot, tmp_path):
    path = _write(tmp_path, "d.csv", AMBIGUOUS_DATES)
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)

    def answer(dlg: ImportDialog) -> bool:
        dlg.show()
        qtbot.waitUntil(lambda: dlg.scan is not None, timeout=30_000)
        with qtbot.waitSignal(dlg.scanned, timeout=30_000):
            dlg.date_order.setCurrentIndex(dlg.date_order.findData("mdy"))
        press_open(qtbot, dlg)
        return True

    w.ask_import = answer
    assert w.open_path(path)
    assert str(w.session.series.times[0])[:10] == "2013-01-02"


def test_rows_out_of_time_order_are_said_for_the_whole_file(qtbot, tmp_path):
    rows = [f"2013-01-{d + 1:02d} 00:00,{d}" for d in range(25)]
    rows[21], rows[22] = rows[22], rows[21]  # below the first rows the dialog shows: only the scan sees it
    path = _write(tmp_path, "o.csv", "timestamp,kwh\n" + "\n".join(rows) + "\n")
    dlg = scanned_dialog(qtbot, path)
    assert "Rows are not in time order: they will be sorted by time (first out-of-order row: row 24)" \
        in dlg.notes.text() and dlg.notes.isVisible()
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    assert w.open_path(path)  # opened directly (no dialog): the status bar says it
    assert "not in time order" in w.statusBar().currentMessage()
