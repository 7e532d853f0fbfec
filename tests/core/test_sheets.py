"""Inputs that are not delimited text (core/data/sheets.py): an Excel workbook's table is read as its CSV
text would be, with the sheet's row numbers; other formats are named in one line saying what to do."""

from __future__ import annotations

import datetime as dt
import gzip
import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from lmdk_gui.core.data.loader import inspect_table, load_series
from lmdk_gui.core.data.series import LoadError

openpyxl = pytest.importorskip("openpyxl")


def _book(path: Path, rows: list[list], title: str = "Sheet1", second: bool = False) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = title
    for r in rows:
        ws.append(r)
    if second:
        wb.create_sheet("notes").append(["not this one"])
    wb.save(path)
    return path


def test_a_workbook_reads_as_its_csv(tmp_path):
    """Dates, floats, whole numbers and text ids: the series is the one its CSV export gives, bit for bit."""
    t0 = dt.datetime(2013, 1, 1)
    rng = np.random.default_rng(0)
    vals = [round(float(v), 3) for v in rng.random(50) * 3] + [2.0, 1e-7, 123456.789]
    rows = [["timestamp", "kwh"]] + [[t0 + dt.timedelta(hours=i), v] for i, v in enumerate(vals)]
    book = load_series(_book(tmp_path / "e.xlsx", rows, second=True))
    csv = tmp_path / "e.csv"
    csv.write_text("timestamp,kwh\n" + "".join(f"{r[0]:%Y-%m-%d %H:%M:%S},{r[1]!r}\n" for r in rows[1:]))
    text = load_series(csv)
    assert book.values.tobytes() == text.values.tobytes() and np.array_equal(book.times, text.times)
    assert book.source is not None and book.source.value_cols == ("kwh",)
    p = inspect_table(tmp_path / "e.xlsx")
    assert p.sheet == "Sheet1" and p.guess.time_col == "timestamp" and p.guess.value_col == "kwh"
    loc = load_series(_book(tmp_path / "l.xlsx", [["time", "lat", "lon"], [t0, 52.66, -8.63],
                                                   [t0 + dt.timedelta(seconds=5), 52.6612, -8.6301]]))
    assert loc.kind == "location" and loc.values.tolist() == [[52.66, -8.63], [52.6612, -8.6301]]


def test_a_title_above_the_header_is_not_read(tmp_path):
    """A sheet with a title and a blank row above its header: the header is the first row of two cells or
    more, the dialog says so, and messages still name the sheet's rows."""
    t0 = dt.datetime(2013, 1, 1)
    rows = [["Stromverbrauch Haushalt 7, 2013"], [], ["Zeit", "kWh"], [t0, 0.5], [t0 + dt.timedelta(hours=1), 1.5],
            [t0 + dt.timedelta(hours=2), "x"]]
    path = _book(tmp_path / "titled.xlsx", rows)
    p = inspect_table(path)
    assert p.guess.time_col == "Zeit" and p.guess.value_col == "kWh"
    assert "sheet 'Sheet1': the header is row 3; rows 1–2 above it are not read" in p.notes
    with pytest.raises(LoadError) as info:
        load_series(path)
    assert str(info.value) == "titled.xlsx, row 6, column 'kWh': expected a number, got 'x'"
    rows[5][1] = 2.5
    assert load_series(_book(tmp_path / "ok.xlsx", rows)).values.tolist() == [0.5, 1.5, 2.5]


def test_a_table_that_starts_right_of_column_a_and_below_row_1(tmp_path):
    """Data from C3 on: the empty columns on its left are not read, the rows keep the sheet's numbers, and a
    date-time at midnight stays a date-time among the others."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["C3"], ws["D3"] = "time", "v"
    for i, h in enumerate((0, 1, 2)):
        ws.cell(4 + i, 3, dt.datetime(2013, 1, 1, h))
        ws.cell(4 + i, 4, 1.5 + i)
    ws["D7"] = "x"
    ws["C7"] = dt.datetime(2013, 1, 2, 0)
    wb.save(tmp_path / "c3.xlsx")
    p = inspect_table(tmp_path / "c3.xlsx")
    assert p.columns == ["time", "v"] and p.head_lines == [4, 5, 6, 7]
    with pytest.raises(LoadError) as info:
        load_series(tmp_path / "c3.xlsx")
    assert str(info.value) == "c3.xlsx, row 7, column 'v': expected a number, got 'x'"
    ws["D7"] = 4.5
    wb.save(tmp_path / "c3.xlsx")
    s = load_series(tmp_path / "c3.xlsx")
    assert [str(t)[:16] for t in s.times] == ["2013-01-01T00:00", "2013-01-01T01:00", "2013-01-01T02:00",
                                              "2013-01-02T00:00"]


def test_messages_name_the_sheets_rows(tmp_path):
    t0 = dt.datetime(2013, 1, 1)
    rows = [["Zeit", "Verbrauch (kWh)"], [t0, 1.5], [t0 + dt.timedelta(hours=1), "n/a"], [None, None],
            [t0 + dt.timedelta(hours=3), 2]]
    with pytest.raises(LoadError) as info:
        load_series(_book(tmp_path / "bad.xlsx", rows))
    assert str(info.value) == "bad.xlsx, row 3, column 'Verbrauch (kWh)': expected a number, got 'n/a'"
    rows[2][1] = 1.0
    rows.append([t0 + dt.timedelta(hours=3), 4.0])  # row 6 repeats row 5's time
    with pytest.raises(LoadError) as info:
        load_series(_book(tmp_path / "rep.xlsx", rows))
    assert info.value.rows == [5, 6]
    with pytest.raises(LoadError, match=r"^empty\.xlsx: no worksheet holds a table with a header row of two "
                                        r"columns or more \(sheets: 'Data'\)$"):
        load_series(_book(tmp_path / "empty.xlsx", [], title="Data"))


def test_a_cover_sheet_before_the_table_is_passed_over(tmp_path):
    """A workbook whose first sheet is a cover page (one column of notes): the table on the next sheet is
    read, and the dialog names that sheet."""
    t0 = dt.datetime(2013, 1, 1)
    wb = openpyxl.Workbook()
    wb.active.title = "Info"
    for line in ("Household 7", "Metered by the utility", "Contact: …"):
        wb.active.append([line])
    data = wb.create_sheet("Daten")
    data.append(["Zeit", "kWh"])
    data.append([t0, 1.5])
    data.append([t0 + dt.timedelta(hours=1), 2.5])
    wb.save(tmp_path / "book.xlsx")
    assert load_series(tmp_path / "book.xlsx").values.tolist() == [1.5, 2.5]
    assert inspect_table(tmp_path / "book.xlsx").sheet == "Daten"


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


@pytest.mark.parametrize("name,data,says", [
    ("old.xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64, "an Excel 97–2003 workbook (.xls): save it as CSV"),
    ("s.ods", _zip({"mimetype": b"application/vnd.oasis.opendocument.spreadsheet", "content.xml": b"<x/>"}),
     "an OpenDocument spreadsheet"),
    ("a.zip", _zip({"data.csv": b"timestamp,kwh\n"}), "a ZIP archive: extract the CSV file"),
    ("a.csv.gz", gzip.compress(b"timestamp,kwh\n2013-01-01,1\n"), "gzip-compressed"),
    ("r.pdf", b"%PDF-1.7\n", "a PDF document"),
    ("Records.json", b'{"locations": [{"latitudeE7": 526000000}]}', "JSON, not a table"),
    ("x.csv", b"<html><body>Not found</body></html>", "XML, not a table"),
])
def test_other_formats_are_named_with_what_to_do(tmp_path, name, data, says):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(LoadError) as info:
        load_series(path)
    assert str(info.value).startswith(f"{name}: this is ") and says in str(info.value)
    with pytest.raises(LoadError):
        inspect_table(path)


GPX = """<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="a watch" xmlns="http://www.topografix.com/GPX/1/1">
 <wpt lat="1" lon="2"><name>home</name></wpt>
 <trk><name>ride</name><trkseg>
  <trkpt lat="52.66" lon="-8.63"><ele>10</ele><time>2019-02-18T08:00:00Z</time></trkpt>
  <trkpt lat="52.6605" lon="-8.6302"><time>2019-02-18T09:00:05+01:00</time></trkpt>
 </trkseg><trkseg>
  <trkpt lat="52.6611" lon="-8.6305"><time>2019-02-18T08:00:10Z</time></trkpt>
 </trkseg></trk>
</gpx>
"""


def test_a_gpx_track_reads_as_a_location_series(tmp_path):
    """Its track points in file order (segments one after the other, the waypoint left out), times in UTC."""
    path = tmp_path / "ride.gpx"
    path.write_text(GPX, encoding="utf-8")
    s = load_series(path)
    assert s.kind == "location" and s.values.tolist() == [[52.66, -8.63], [52.6605, -8.6302], [52.6611, -8.6305]]
    assert [str(t)[:19] for t in s.times] == ["2019-02-18T08:00:00", "2019-02-18T08:00:05", "2019-02-18T08:00:10"]
    no_time = GPX.replace("<time>2019-02-18T09:00:05+01:00</time>", "")
    path.write_text(no_time, encoding="utf-8")
    with pytest.raises(LoadError) as info:  # row 3 = the second point
        load_series(path)
    assert str(info.value) == "ride.gpx, row 3, column 'time': missing timestamp (empty field)"
    assert load_series(path, skip_missing=True).n == 2
    route = '<gpx><rte><rtept lat="1.5" lon="2"><time>2020-01-01T00:00:00Z</time></rtept></rte></gpx>'
    path.write_text(route, encoding="utf-8")
    assert load_series(path).values.tolist() == [[1.5, 2.0]]


@pytest.mark.parametrize("text,says", [
    ("<gpx><metadata/></gpx>", "the GPX file holds no track, route or waypoint"),
    ("<gpx><trk><trkpt lat='1' lon='2'></trk></gpx>", "cannot read the GPX file (mismatched tag"),
    ('<?xml version="1.0"?><!DOCTYPE gpx [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
     '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">'
     '<!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">'
     '<!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;"><!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">]>'
     '<gpx><wpt lat="1" lon="2"><time>&h;</time></wpt></gpx>', "cannot read the GPX file"),
])
def test_a_gpx_file_that_cannot_be_read_is_named(tmp_path, text, says):
    """Broken XML, no points, or entities that expand a thousand-fold (expat refuses them: the file is never
    expanded into memory)."""
    path = tmp_path / "t.gpx"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LoadError) as info:
        load_series(path)
    assert str(info.value).startswith(f"t.gpx: {says}")


def test_a_workbook_is_converted_once_for_preview_scan_and_load(tmp_path, monkeypatch):
    """The import dialog previews, scans and loads one file: the workbook is read once for the three (the same
    bytes give the same CSV text), and again once its bytes change."""
    from lmdk_gui.core.data import sheets
    from lmdk_gui.core.data.loader import scan_table

    calls = []
    real = sheets._xlsx_to_csv
    monkeypatch.setattr(sheets, "_xlsx_to_csv", lambda data: calls.append(1) or real(data))
    t0 = dt.datetime(2013, 1, 1)
    path = _book(tmp_path / "m.xlsx", [["timestamp", "kwh"], [t0, 1.0], [t0 + dt.timedelta(hours=1), 2.0]])
    inspect_table(path)
    scan_table(path)
    assert load_series(path).values.tolist() == [1.0, 2.0] and len(calls) == 1
    _book(path, [["timestamp", "kwh"], [t0, 3.0], [t0 + dt.timedelta(hours=1), 2.0]])
    assert load_series(path).values.tolist() == [3.0, 2.0] and len(calls) == 2


def test_excel_day_numbers_in_the_time_column_are_dates(tmp_path):
    """A date column not formatted as dates holds Excel's day numbers (41275.5 = 2013-01-01 12:00): they were
    read as UNIX seconds, every event in the first hours of 1970. A German header names the time column."""
    wb = openpyxl.Workbook()
    wb.active.append(["Datum", "Verbrauch"])
    for i in range(4):
        wb.active.append([41275 + i / 24, 0.5 + i])
    wb.save(tmp_path / "days.xlsx")
    s = load_series(tmp_path / "days.xlsx")
    assert [str(t)[:16] for t in s.times] == ["2013-01-01T00:00", "2013-01-01T01:00", "2013-01-01T02:00",
                                              "2013-01-01T03:00"]
    assert s.source is not None and s.source.time_format == "iso"
    p = inspect_table(tmp_path / "days.xlsx")
    assert "'Datum' holds Excel day numbers (dates not formatted as dates): read as dates, 41275 = 2013-01-01 " \
           "00:00" in p.notes
    csv = tmp_path / "secs.csv"  # the same numbers in a CSV stay what a CSV means by them: UNIX seconds
    csv.write_text("Datum,Verbrauch\n41275,1\n41276,2\n")
    assert str(load_series(csv).times[0]).startswith("1970-01-01T11:27:55")
