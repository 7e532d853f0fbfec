"""Files that are not delimited text: Excel workbooks and GPX tracks are read as CSV text, others named.

A data steward's series often arrives as an Excel workbook. :func:`xlsx_to_csv` turns its first worksheet
holding a table (python-calamine: the values Excel last computed) into the UTF-8 CSV text the loader reads
anyway: one line per sheet row from row 1, so every message's "row N" is the sheet's row N, and every check
(times, numbers, repeats, missing cells) is the one a CSV gets. Cells become text as a CSV export writes
them: dates and times in ISO 8601, numbers in their shortest exact form, booleans as TRUE/FALSE.

A phone's or a watch's location track is often a GPX file: :func:`gpx_to_csv` writes its track points (else
its route points, else its waypoints) as ``time,lat,lon`` lines in file order, so "row N" is point N − 1.

Other formats a person might try (an old ``.xls``, OpenDocument, JSON such as a location-history export, a
PDF, a compressed file) are recognised by their first bytes and refused with one line that says what the
file is and how to save it as CSV, instead of a parser's complaint about NUL bytes or headers. Qt-free.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import math
import threading
import zipfile
from collections.abc import Callable
from typing import Any, TypeVar

#: What a non-CSV file is, by its first bytes (after leading whitespace for the text formats).
_REFUSED = {
    "xls": "an Excel 97–2003 workbook (.xls): save it as CSV UTF-8 or .xlsx (Excel: File › Save As)",
    "ods": "an OpenDocument spreadsheet: save the sheet as CSV (LibreOffice: File › Save As › Text CSV)",
    "zip": "a ZIP archive: extract the CSV file from it and open that",
    "gzip": "a gzip-compressed file: decompress it (gunzip) and open the CSV inside",
    "pdf": "a PDF document, not a table: export the data as CSV from where it came from",
    "json": "JSON, not a table (a location-history export?): convert it to CSV with a time column and the "
            "value columns",
    "xml": "XML, not a table: export the data as CSV",
}


def kind_of_bytes(data: bytes) -> str | None:
    """'xlsx', 'gpx', a key of the refusals, or None (delimited text, or Parquet, which the loader reads)."""
    if data.startswith(b"PK\x03\x04"):
        return _zip_kind(data)
    if data.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return "xls"
    if data.startswith(b"\x1f\x8b"):
        return "gzip"
    if data.startswith(b"%PDF"):
        return "pdf"
    head = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith((b"{", b"[{", b"[\n", b"[\r")):
        return "json"
    if head.startswith(b"<"):
        return "gpx" if b"<gpx" in data[:4096] else "xml"
    return None


def _zip_kind(data: bytes) -> str:
    try:
        names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
    except (zipfile.BadZipFile, ValueError, OSError):
        return "zip"
    if "xl/workbook.xml" in names:
        return "xlsx"
    if "content.xml" in names and "mimetype" in names:
        return "ods"
    return "zip"


def refusal(kind: str) -> str:
    return f"this is {_REFUSED[kind]}"


_T = TypeVar("_T")
_last: dict[bytes, Any] = {}  # the latest conversion, by the file's digest (see _remembered)
_lock = threading.Lock()


def _remembered(kind: str, data: bytes, convert: Callable[[bytes], _T]) -> _T:
    """``convert(data)``, kept for the next call with the same bytes: the import dialog previews a file,
    scans it and loads it, three reads of one workbook (≈ 1 s per 10^5 rows each)."""
    key = kind.encode() + hashlib.blake2b(data, digest_size=16).digest()
    with _lock:
        if key in _last:
            return _last[key]
    out = convert(data)
    with _lock:
        _last.clear()
        _last[key] = out
    return out


def xlsx_to_csv(data: bytes) -> tuple[bytes, str, int]:
    """(the first worksheet holding a table as UTF-8 CSV text, that sheet's name, the number of title rows
    above its header). A table has a row of two cells or more, its header, the first such row; the rows above
    it (a title, a blank line) are blank lines of the text, so the rows keep their numbers. Sheets before it
    (a cover page, notes in one column) are passed over. Raises ValueError with a short reason when the
    workbook cannot be read or no sheet holds a table."""
    return _remembered("xlsx", data, _xlsx_to_csv)


def _xlsx_to_csv(data: bytes) -> tuple[bytes, str, int]:
    from python_calamine import CalamineWorkbook  # deferred: only a workbook needs it

    try:
        book = CalamineWorkbook.from_filelike(io.BytesIO(data))
        for index in range(len(book.sheet_names)):
            sheet = book.get_sheet_by_index(index)
            # from cell A1 (the sheet's rows keep their numbers)
            grid = sheet.to_python(skip_empty_area=False)
            if any(sum(v not in ("", None) for v in row) >= 2 for row in grid):
                break
        else:
            names = ", ".join(f"'{n}'" for n in book.sheet_names) or "none"
            raise ValueError(f"no worksheet holds a table with a header row of two columns or more (sheets: {names})")
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the reader is bad content here
        raise ValueError(f"cannot read the Excel workbook ({type(exc).__name__}: {exc})") from None
    left = sheet.start[1] if sheet.start is not None else 0  # (not the empty columns left of the table)
    rows = [[_cell_text(v) for v in row[left:]] for row in grid]
    for cells in rows:
        while cells and cells[-1] == "":
            cells.pop()
    while rows and not rows[-1]:
        rows.pop()
    _midnights_as_times(rows, grid, left)
    titles = next((i for i, cells in enumerate(rows) if sum(c != "" for c in cells) >= 2), 0)
    width = max(len(cells) for cells in rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for i, cells in enumerate(rows):
        if i < titles or not cells:  # a title above the header, an empty row: a blank line, skipped as in any
            out.write("\n")         # CSV (the rows keep their numbers)
        else:  # as wide as the widest row: a short row has empty cells, not missing fields
            writer.writerow(cells + [""] * (width - len(cells)))
    return out.getvalue().encode("utf-8"), str(sheet.name), titles


def _midnights_as_times(rows: list[list[str]], grid: list[list[Any]], left: int) -> None:
    """The reader gives a date-time at midnight as a date: in a column that also holds date-times, write it
    as one ("2013-01-01 00:00:00", not "2013-01-01" among "2013-01-01 01:00:00")."""
    timed = {j for row in grid for j, v in enumerate(row[left:]) if isinstance(v, dt.datetime)}
    for i, row in enumerate(grid[:len(rows)]):
        for j, v in enumerate(row[left:]):
            if j in timed and type(v) is dt.date:
                rows[i][j] = f"{v.isoformat()} 00:00:00"


def _cell_text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, float):
        if v.is_integer() and math.isfinite(v) and abs(v) < 2**53:
            return str(int(v))  # 12.0 as Excel shows it: 12
        return repr(v)
    if isinstance(v, dt.timedelta):
        return str(v.total_seconds())
    return str(v)


def gpx_to_csv(data: bytes) -> bytes:
    """A GPX file's points as UTF-8 CSV text ``time,lat,lon``: its track points, else its route points,
    else its waypoints, in file order (an empty time where a point has none: the loader names those rows).
    Raises ValueError with a short reason for XML it cannot parse or a file without points."""
    return _remembered("gpx", data, _gpx_to_csv)


def _gpx_to_csv(data: bytes) -> bytes:
    import xml.etree.ElementTree as ET  # (expat bounds entity expansion; no external entity is fetched)

    points: dict[str, list[tuple[str, str, str]]] = {"trkpt": [], "rtept": [], "wpt": []}
    try:
        for _event, el in ET.iterparse(io.BytesIO(data)):
            name = el.tag.rsplit("}", 1)[-1]
            if name in points:
                when = next((c.text or "" for c in el if c.tag.rsplit("}", 1)[-1] == "time"), "")
                points[name].append((when.strip(), el.get("lat", ""), el.get("lon", "")))
                el.clear()
    except ET.ParseError as exc:
        raise ValueError(f"cannot read the GPX file ({exc})") from None
    found = points["trkpt"] or points["rtept"] or points["wpt"]
    if not found:
        raise ValueError("the GPX file holds no track, route or waypoint")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("time", "lat", "lon"))
    writer.writerows(found)
    return out.getvalue().encode("utf-8")
