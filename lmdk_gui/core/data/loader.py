"""Read a personal time series from a CSV/TSV (or Parquet) file into a :class:`~lmdk_gui.core.data.series.Series`.

Qt-free. An Excel workbook or a GPX track is first turned into the CSV text read here (:mod:`.sheets`), so it
gets every check below; other formats people try are named there. Public API:

* :func:`inspect_table`          cheap preview of a file and a guess of which column is what (for the GUI's
  column chooser);
* :func:`scan_table`             what loading the whole file would meet (repeated timestamps, missing
  values, a contact log's ids with row counts), for the import dialog to show before loading;
* :func:`load_series`            read, validate and convert a whole file;
* :func:`load_dataframe_series`  the same logic on an in-memory :class:`pandas.DataFrame`.

Every problem with the *content* or *options* is reported as one :class:`LoadError` whose message names the
file, the row(s) and the column, e.g. ``energy.csv, row 57, column 'kwh': expected a number, got 'abc'``.
Rows are 1-based line numbers of the file (header = line 1, first data row = line 2; blank lines counted,
as a text editor shows them). Limitation: a quoted field that spans several lines shifts the numbers of
the rows after it.

Design choices (the non-obvious ones):

* The file is read **once** into memory: the bytes are hashed (SHA-256 for the sidecar/project), checked
  for encoding, and parsed by pandas' C parser from an in-memory buffer.
* Encoding: UTF-8 (with or without BOM) or UTF-16 with BOM. Anything else is an error naming the byte
  offset and row; there is deliberately no silent latin-1 fallback, which would turn the bytes into
  plausible-looking wrong labels.
* ``keep_default_na=False, na_values=[""]``: only an empty field is "missing". pandas' default would also
  swallow labels such as ``NA`` (Namibia) or ``None`` in categorical columns; in numeric columns such
  text now reaches our check and is reported as ``expected a number, got 'NA'``. (It is also faster.)
* Column types are guessed from a sample of the first rows (a mostly-numeric column with a typo still
  counts as numeric, so that the typo is reported rather than the column silently becoming labels). The
  full read then converts only the chosen columns, asks for float64 directly, reads a categorical column
  as text (ids like ``007`` keep their spelling), and every check is vectorised: nothing runs per row in
  Python, and row numbers are only computed once something is wrong.
* Timestamps: the layout is detected from the first value. ISO-like text (``YYYY-MM-DD[ T]HH:MM[:SS[.f]]``,
  optional zone) is converted by the C parser during the read (``parse_dates`` with
  ``date_format="ISO8601"``, strict ISO, no guessing), which makes loading faster than a plain
  ``read_csv``. If any value does not parse, pandas leaves the column as text and we diagnose it with
  ``pd.to_datetime`` (exact format / ISO 8601, ``errors="coerce"``) to name the bad rows. M/D/YYYY dates
  (the HUE original) use the exact format ``%m/%d/%Y`` (``%d/%m/%Y`` only if every row needs it). There is
  no ``dateutil``/"mixed" guessing: it is slow and silently ambiguous. pandas accepts ``now``/``today`` as
  timestamps; we refuse them.
* Zone-aware timestamps are converted to UTC and the zone dropped; a column mixing zoned and naive values
  is an error (no way to know what the naive ones meant).
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import importlib.util
import io
import os
import re
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from lmdk_gui.core.data import sheets
from lmdk_gui.core.data.series import KINDS, Kind, LoadError, Series, SourceInfo, TimeFormat

__all__ = [
    "CONTACT_COLUMN",
    "ColumnGuess",
    "DUPLICATE_POLICIES",
    "TablePreview",
    "TableScan",
    "inspect_table",
    "load_dataframe_series",
    "load_series",
    "pair_columns",
    "person_ids",
    "scan_table",
    "slow_to_inspect",
    "suggest_id_column",
]

#: What repeated timestamps become. ``drop-exact`` drops rows that repeat an earlier row's time *and* value
#: (a logger writing the same record twice) and refuses any other repeat; ``first``/``last``/``mean`` drop
#: those exact copies too (so that a mean is not weighted by them), then merge what is left.
DUPLICATE_POLICIES: tuple[str, ...] = ("error", "first", "last", "mean", "drop-exact")

#: Rows read to guess column types (the full read then checks every row).
_SAMPLE_ROWS = 200
#: How many row numbers a message lists before saying "and N more".
_MAX_LISTED_ROWS = 5

# (and as spreadsheets in other languages name them; not "data", which names values in English)
_TIME_NAMES = {"timestamp", "time", "date", "datetime", "zeit", "datum", "zeitstempel", "fecha", "horodatage",
               "tijd", "tijdstip", "tid"}
_LAT_NAMES = {"lat", "latitude"}
_LON_NAMES = {"lon", "lng", "long", "longitude"}
_DATE_NAME = "date"
_HOUR_NAME = "hour"
# Whole numbers in a column named like this are ids (labels), not quantities.
_ID_NAMES = {"id", "contact", "person", "user", "node", "device", "peer", "partner", "other", "category",
             "label", "class", "state", "activity", "mode", "zone", "cell", "station"}
# Two id columns of a contact log: names equal but for these endings (i/j, id1/id2, …) or these pairs.
_PAIR_ENDINGS = {("i", "j"), ("1", "2"), ("a", "b"), ("u", "v")}
_PAIR_NAMES = {("source", "target"), ("src", "dst"), ("from", "to"), ("sender", "receiver")}
# A column named like this (a word of its name) holding few distinct values in the sample is suggested as
# the person/household id of a long table holding many persons' series (issue 16).
_PERSON_ID_WORDS = {"id", "household", "person", "user", "meter", "participant"}
#: Name of the value column of a contact log read for one person (the other person's id or class).
CONTACT_COLUMN = "contact"

# datetime64[ns] covers 1677-09-21 .. 2262-04-11; keep a day of margin so that unit conversions never wrap.
_T_MIN = np.datetime64("1677-09-22T00:00:00")
_T_MAX = np.datetime64("2262-04-10T00:00:00")
_EPOCH_MIN_S = int(_T_MIN.astype("datetime64[s]").astype(np.int64))
_EPOCH_MAX_S = int(_T_MAX.astype("datetime64[s]").astype(np.int64))
_NS_PER_S = 1_000_000_000
_NS_PER_HOUR = 3600 * _NS_PER_S
_NS_PER_DAY = 24 * _NS_PER_HOUR

# ISO-like timestamps: date, optional time (T or space), optional fraction, optional zone. No nested
# quantifiers, so matching is linear even on hostile input; it is only applied to a few sample values.
_ISO_RE = re.compile(
    r"^\d{4}-\d{2}-\d{2}"
    r"(?:(?P<sep>[T ])\d{2}:\d{2}(?P<sec>:\d{2}(?P<frac>\.\d{1,9})?)?)?"
    r"\s*(?P<tz>Z|[+-]\d{2}(?::?\d{2})?)?$"
)
_US_RE = re.compile(r"^\d{1,2}/\d{1,2}/\d{4}(?: \d{1,2}:\d{2}(?P<sec>:\d{2})?(?P<ampm> ?[AaPp][Mm])?)?$")
# D.M.YYYY (German, Russian, … spreadsheets): with dots the day always comes first.
_DOT_RE = re.compile(r"^\d{1,2}\.\d{1,2}\.\d{4}(?: \d{1,2}:\d{2}(?P<sec>:\d{2})?)?$")
# A zone suffix after a time of day (a bare date "2013-01-01" must not count as "-01").
_TZ_SUFFIX = r"\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:Z|[+-]\d{2}(?::?\d{2})?)\s*$"
# A number as a spreadsheet writes it where the comma is the decimal mark: "0,931", "1.234,5", "12", "1.234".
_COMMA_NUMBER_RE = re.compile(r"^\s*[+-]?(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d+)?\s*$")


# ----------------------------------------------------------------------------------------------- results


@dataclass
class ColumnGuess:
    """Which column plays which role (``None`` where unknown or not applicable)."""

    time_col: str | None = None
    value_col: str | None = None
    lat_col: str | None = None
    lon_col: str | None = None
    hour_col: str | None = None
    kind: Kind | None = None
    #: contact logs (one row per contact between the persons in two id columns)
    pair_cols: tuple[str, str] | None = None
    pair_class_cols: tuple[str, str] | None = None
    person: str | None = None
    #: long tables of many persons: the column naming the person (one person's rows are read)
    id_col: str | None = None


@dataclass
class TablePreview:
    """What :func:`inspect_table` found: enough for a column chooser, without reading the whole file."""

    path: str
    delimiter: str
    columns: list[str]
    head: pd.DataFrame
    guess: ColumnGuess
    ambiguous: bool
    notes: list[str] = field(default_factory=list)  # informative notes, then the problems
    problems: list[str] = field(default_factory=list)  # what must still be chosen (also in notes)
    sheet: str = ""  # an Excel workbook's worksheet that is read ("" for text and Parquet files)
    head_lines: list[int] = field(default_factory=list)  # the file row of each row of ``head``


# ----------------------------------------------------------------------------------------- error context


def _fmt_rows(lines: Sequence[int]) -> str:
    """``row 5`` / ``rows 5 and 9`` / ``rows 5, 9 and 12`` / ``rows 5, 9, 12, 14, 20 and 40 more``."""
    lines = [int(x) for x in lines]
    if len(lines) == 1:
        return f"row {lines[0]}"
    if len(lines) <= _MAX_LISTED_ROWS:
        return "rows " + ", ".join(map(str, lines[:-1])) + f" and {lines[-1]}"
    shown = ", ".join(map(str, lines[:_MAX_LISTED_ROWS]))
    return f"rows {shown} and {len(lines) - _MAX_LISTED_ROWS} more"


def _show(value: Any, limit: int = 40) -> str:
    """A raw cell value for a message: quoted, shortened, control characters escaped."""
    text = str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return repr(text)


class _Context:
    """Names the file in messages and maps row positions (0-based, in file order) to file line numbers."""

    def __init__(self, display: str, path: str | None, data: bytes | None = None) -> None:
        self.display = display
        self.path = path
        self._data = data
        self._line_table: np.ndarray | None = None
        #: file-order positions of the rows still in play, once some were set aside (one person's rows of a
        #: contact log, rows skipped for missing values); None = every row. Positions given to ``lines`` and
        #: ``error`` are in the reduced frame, so every later message still names the file's own rows.
        self._kept: np.ndarray | None = None

    def keep(self, kept: np.ndarray) -> None:
        """Continue with a subset of the current rows (``kept``: positions in the current frame)."""
        kept = np.asarray(kept, dtype=np.int64)
        self._kept = kept if self._kept is None else self._kept[kept]

    def lines(self, positions: np.ndarray | Sequence[int]) -> list[int]:
        """File line numbers (1-based) of data rows given by their 0-based position in file order."""
        pos = np.asarray(positions, dtype=np.int64)
        if self._kept is not None:
            pos = self._kept[pos]
        data = self._data
        # Fast path: without blank lines, data row i is on line i + 2. pandas skips blank lines, so when
        # there are any, build (once, vectorised, only on the error path) the table of non-blank lines.
        if data is None or not (b"\n\n" in data or b"\n\r\n" in data or data.startswith((b"\n", b"\r\n"))):
            return (pos + 2).tolist()
        if self._line_table is None:
            buf = np.frombuffer(data, dtype=np.uint8)
            newlines = np.flatnonzero(buf == 10)
            starts = np.concatenate(([0], newlines + 1))
            length = np.concatenate((newlines, [len(buf)])) - starts
            first_byte = np.append(buf, np.uint8(0))[starts]  # the sentinel covers a start at len(buf)
            blank = (length == 0) | ((length == 1) & (first_byte == 13))
            self._line_table = (np.flatnonzero(~blank) + 1)[1:]  # the first non-blank line is the header
        table = self._line_table
        inside = pos < len(table)
        out = pos + 2
        out[inside] = table[pos[inside]]
        return out.tolist()

    def error(
        self,
        what: str,
        *,
        positions: np.ndarray | Sequence[int] | None = None,
        lines: Sequence[int] | None = None,
        column: str | None = None,
        option: str | None = None,
        choices: tuple[str, ...] = (),
    ) -> LoadError:
        if lines is None and positions is not None and len(positions):
            lines = self.lines(positions)
        parts = [self.display]
        if lines:
            parts.append(_fmt_rows(lines))
        if column is not None:
            parts.append(f"column '{column}'")
        return LoadError(
            ", ".join(parts) + f": {what}",
            path=self.path,
            rows=list(lines or []),
            column=column,
            option=option,
            choices=choices,
        )


# ------------------------------------------------------------------------------------------ reading bytes


class _Sha256:
    """SHA-256 of the file bytes, computed in a background thread while pandas parses.

    hashlib releases the GIL on large buffers and so does pandas' tokenizer, so on a multi-core machine the
    hash (~20 ms per 25 MB) costs no wall time. ``value`` waits for it.
    """

    def __init__(self, data: bytes) -> None:
        self._result: list[str] = []
        if len(data) < 1 << 20:
            self._result.append(hashlib.sha256(data).hexdigest())
            self._thread: threading.Thread | None = None
        else:
            self._thread = threading.Thread(
                target=lambda: self._result.append(hashlib.sha256(data).hexdigest()), daemon=True
            )
            self._thread.start()

    @property
    def value(self) -> str:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        return self._result[0]


@dataclass
class _Raw:
    """A file read into memory and made parseable."""

    path: str
    display: str
    sha: _Sha256  # of the bytes as read from disk (before BOM removal or re-encoding)
    data: bytes  # UTF-8 without BOM (UTF-16 input re-encoded), or the Parquet file bytes
    delimiter: str
    parquet: bool = False
    sheet: str = ""  # an Excel workbook's: the worksheet read (``data`` is its CSV text, see sheets.py)
    title_rows: int = 0  # the sheet's rows above its header (blank lines of ``data``)


def _read_bytes(path: str | os.PathLike[str]) -> tuple[str, str, bytes]:
    p = Path(path)
    display = p.name or str(p)
    spath = os.fspath(path)
    try:
        if p.is_dir():
            raise LoadError(f"{display}: is a folder, not a file", path=spath)
        data = p.read_bytes()
    except LoadError:
        raise
    except FileNotFoundError:
        raise LoadError(f"{display}: file not found ({spath})", path=spath) from None
    except PermissionError:
        raise LoadError(f"{display}: permission denied, cannot read the file", path=spath) from None
    except OSError as exc:
        raise LoadError(f"{display}: cannot read the file ({exc.strerror or exc})", path=spath) from None
    return spath, display, data


def _sniff_delimiter(header: str, suffix: str) -> str:
    """Pick comma, tab or semicolon: whichever occurs most often in the header line (ties: the extension)."""
    counts = {d: header.count(d) for d in (",", "\t", ";")}
    best = max(counts.values())
    if best == 0:
        return "\t" if suffix in (".tsv", ".tab") else ","
    preferred = "\t" if suffix in (".tsv", ".tab") else ","
    if counts.get(preferred, 0) == best:
        return preferred
    return max(counts, key=lambda d: counts[d])


def _prepare(path: str | os.PathLike[str]) -> _Raw:
    spath, display, data = _read_bytes(path)
    ctx = _Context(display, spath)
    suffix = Path(spath).suffix.lower()
    if not data:
        raise ctx.error("the file is empty (0 bytes)")
    sha = _Sha256(data)
    if data.startswith(b"PAR1") or suffix in (".parquet", ".pq"):
        return _Raw(spath, display, sha, data, ",", parquet=True)
    sheet, titles = "", 0
    other = sheets.kind_of_bytes(data)
    if other == "xlsx":
        try:
            data, sheet, titles = sheets.xlsx_to_csv(data)  # then read as any CSV: the same checks and rows
        except ValueError as exc:
            raise ctx.error(str(exc)) from None
    elif other == "gpx":
        try:
            data = sheets.gpx_to_csv(data)  # time,lat,lon: a location series, rows = the points in order
        except ValueError as exc:
            raise ctx.error(str(exc)) from None
    elif other is not None:
        raise ctx.error(sheets.refusal(other))

    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError as exc:
            raise ctx.error(f"not valid UTF-16 text (bad bytes at offset {exc.start})") from None

    # The scans of the whole file run without the GIL (numpy's reductions) or a slice at a time: bytes.find
    # and isascii hold it, ≈ 30 and 55 ms at 10^7 rows, and the window could not paint meanwhile (issue 15).
    buf = np.frombuffer(data, dtype=np.uint8)
    nul = data.find(b"\x00") if int(buf.min(initial=1)) == 0 else -1
    if nul >= 0:
        row = data.count(b"\n", 0, nul) + 1
        raise ctx.error(
            f"contains a NUL byte at offset {nul}: this is not a UTF-8 text file "
            "(a binary file, or UTF-16 without byte-order mark?)",
            lines=[row],
        )

    header_bytes = _header_line(data)
    delimiter = _sniff_delimiter(header_bytes.decode("utf-8", errors="replace"), suffix)
    _check_width(data, delimiter, ctx)

    off = _utf8_error_offset(data) if int(buf.max(initial=0)) >= 0x80 else -1
    if off >= 0:
        row = data.count(b"\n", 0, off) + 1
        line_start = data.rfind(b"\n", 0, off) + 1
        column = None
        if row > 1:
            field_no = data[line_start:off].count(delimiter.encode())
            names = header_bytes.decode("utf-8", errors="replace").rstrip("\r").split(delimiter)
            if field_no < len(names):
                column = names[field_no].strip().strip('"')
        raise ctx.error(
            f"not valid UTF-8 text (byte 0x{data[off]:02x} at offset {off}); "
            "save the file as UTF-8 (spreadsheets: 'CSV UTF-8')",
            lines=[row],
            column=column,
        )
    return _Raw(spath, display, sha, data, delimiter, sheet=sheet, title_rows=titles)


def _utf8_error_offset(data: bytes, step: int = 1 << 23) -> int:
    """The offset of the first byte of ``data`` that is not UTF-8, or -1: decoded a slice of whole lines at a
    time (a line break is never inside a multi-byte character), so the GIL is let go between slices (one
    decode of a 300 MB file held it ≈ 0.1 s)."""
    view, start, n = memoryview(data), 0, len(data)
    while start < n:
        end = data.find(b"\n", start + step)
        end = n if end < 0 else end + 1
        try:
            codecs.utf_8_decode(view[start:end], "strict", True)
        except UnicodeDecodeError as exc:
            return start + exc.start
        start = end
    return -1


#: A time series needs a handful of columns; refusing absurdly wide input up front keeps hostile files from
#: costing seconds to hours inside pandas (its duplicate-name mangling is quadratic in the column count).
MAX_FIELDS = 1000


def _check_width(data: bytes, delimiter: str, ctx: _Context) -> None:
    """Refuse lines with more than MAX_FIELDS fields (delimiters inside quotes are counted too, which only
    matters for text holding a thousand delimiters). A line of fewer than MAX_FIELDS bytes cannot hold that
    many delimiters, so the exact per-line count runs only when some line is that long; the line lengths are
    found in 16 MB slices (at 10^7 rows a whole-buffer pass allocated ≈ 0.5 GB of temporaries)."""
    if len(data) < MAX_FIELDS:
        return
    buf = np.frombuffer(data, dtype=np.uint8)
    prev, longest, step = -1, 0, 1 << 24
    for off in range(0, buf.size, step):
        nl = np.flatnonzero(buf[off:off + step] == 10)
        if nl.size:
            longest = max(longest, int(nl[0] + off - prev), int(np.max(np.diff(nl), initial=0)))
            prev = int(nl[-1]) + off
    longest = max(longest, buf.size - prev)
    if longest <= MAX_FIELDS:
        return
    delims = np.flatnonzero(buf == ord(delimiter))
    breaks = np.flatnonzero(buf == 10)
    per_line = np.bincount(np.searchsorted(breaks, delims), minlength=breaks.size + 1)
    worst = int(np.argmax(per_line))
    if per_line[worst] + 1 > MAX_FIELDS:
        raise ctx.error(
            f"has {int(per_line[worst]) + 1} fields on one line (at most {MAX_FIELDS} are read); is the "
            f"delimiter {delimiter!r} right?",
            lines=[worst + 1],
        )


#: files larger than this are parsed in chunks of CHUNK_ROWS rows (each holds the GIL for ≈ 20 ms)
CHUNKED_BYTES = 8 << 20
CHUNK_ROWS = 131_072


def _read_csv(raw: _Raw, ctx: _Context, *, float_cols: Sequence[str] = (), **kwargs: Any) -> pd.DataFrame:
    """pandas' C parser on the in-memory bytes; every pandas failure becomes a LoadError.

    ``float_cols`` are asked for as float64 up front (a little faster than type inference); if one of them
    holds text, pandas refuses and we read again with inference so that our checks can name the rows.
    """
    if float_cols:
        dtype = dict(kwargs.pop("dtype", None) or {})
        dtype.update({c: np.float64 for c in float_cols})
        try:
            return _read_csv(raw, ctx, dtype=dtype, **kwargs)
        except LoadError as exc:
            if not getattr(exc, "_dtype_refused", False):
                raise
            dtype = {c: t for c, t in dtype.items() if c not in float_cols}
            return _read_csv(raw, ctx, dtype=dtype or None, **kwargs)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.DtypeWarning)
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            warnings.simplefilter("ignore", UserWarning)  # "could not infer format" when parse_dates fails
            opts: dict[str, Any] = dict(sep=raw.delimiter, engine="c", encoding="utf-8", index_col=False,
                                        keep_default_na=False, na_values=[""], **kwargs)
            if "nrows" in kwargs or len(raw.data) <= CHUNKED_BYTES:
                return pd.read_csv(io.BytesIO(raw.data), **opts)
            # pandas' parser holds the GIL for a whole read (≈ 1.3 s at 10^7 rows: the window froze while
            # the loader thread parsed); between chunks the GUI thread gets it back. Per-chunk type inference
            # and the concatenation are what pandas' own low_memory chunks do.
            frames = list(pd.read_csv(io.BytesIO(raw.data), chunksize=CHUNK_ROWS, **opts))
            return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    except pd.errors.EmptyDataError:
        raise ctx.error("the file has no header row and no data (only blank lines)") from None
    except pd.errors.ParserError as exc:
        text = str(exc).strip()
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", text)
        if m:
            expected, line, saw = (int(g) for g in m.groups())
            raise ctx.error(
                f"expected {expected} fields (as in the header), found {saw}; "
                f"is the delimiter {raw.delimiter!r} right, or is a field missing its quotes?",
                lines=[line],
            ) from None
        raise ctx.error(f"cannot parse the file as delimited text: {text}") from None
    except UnicodeDecodeError as exc:  # pragma: no cover - the bytes were validated before
        raise ctx.error(f"not valid UTF-8 text ({exc.reason})") from None
    except (ValueError, TypeError, OverflowError, MemoryError) as exc:
        err = ctx.error(f"cannot parse the file: {exc}")
        err._dtype_refused = "dtype" in kwargs  # type: ignore[attr-defined]
        raise err from None


def _read_parquet(raw: _Raw, ctx: _Context, columns: list[str] | None = None) -> pd.DataFrame:
    if importlib.util.find_spec("pyarrow") is None:
        raise ctx.error("reading Parquet files needs the optional package pyarrow (pip install pyarrow)")
    try:
        return pd.read_parquet(io.BytesIO(raw.data), columns=columns)
    except Exception as exc:  # noqa: BLE001 - any pyarrow failure is bad content here
        raise ctx.error(f"cannot read as Parquet: {exc}") from None


_NOT_NEWLINE = re.compile(rb"[^\r\n]")


def _header_line(data: bytes) -> bytes:
    """The first non-blank line (pandas skips leading blank lines too), without its line break."""
    m = _NOT_NEWLINE.search(data)
    if m is None:
        return b""
    end = data.find(b"\n", m.start())
    return (data[m.start() :] if end < 0 else data[m.start() : end]).rstrip(b"\r")


def _raw_header(raw: _Raw) -> list[str]:
    """Header names as written (pandas would rename duplicates to ``x.1``)."""
    line = _header_line(raw.data).decode("utf-8")
    try:
        return next(csv.reader([line], delimiter=raw.delimiter))
    except (csv.Error, StopIteration):
        return line.split(raw.delimiter)


# -------------------------------------------------------------------------------------- column detection


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]", "", str(name).lower())


def _is_numeric(s: pd.Series) -> bool:
    return bool(ptypes.is_numeric_dtype(s.dtype)) and not ptypes.is_bool_dtype(s.dtype)


def _is_numberish(s: pd.Series) -> bool:
    """Numeric dtype, or text of which at least half of the non-empty sample values are numbers.

    The second case matters: a numeric column with typos in the sample (even one bad value out of two rows)
    must still be offered (and loaded) as numeric, so that loading reports the typos instead of silently
    treating the column as labels. Labels that look like numbers need ``kind="categorical"`` anyway.
    """
    if _is_numeric(s):
        return True
    if ptypes.is_bool_dtype(s.dtype) or _is_time_dtype(s):
        return False
    vals = s.dropna()
    if len(vals) == 0:
        return False
    text = vals.astype(str).str.strip()
    ok = pd.to_numeric(text, errors="coerce").notna().to_numpy()
    ok = ok | text.str.lower().isin(["nan", "inf", "+inf", "-inf", "infinity", "-infinity"]).to_numpy()
    # "1,5", "1.234,5": numbers with a decimal comma. Counted as numeric: they are read (_decimal_mark) or
    # loading says what is wrong, instead of the column quietly becoming hundreds of categories.
    ok = ok | text.str.match(_COMMA_NUMBER_RE.pattern).fillna(False).to_numpy(dtype=bool)
    return bool(ok.mean() >= 0.5)


def _decimal_mark(sample: pd.DataFrame, plan: _Plan, delimiter: str) -> str:
    """"," for a file whose fields are not separated by commas (a spreadsheet saved with ';' in a locale that
    writes 0,931 and 1.234,5) when its sample values write decimal commas and every point among them
    separates thousands; else ".". There a comma cannot separate fields, so it can only be the decimal mark.
    A value that does not fit (a decimal point among decimal commas) is named by :func:`_numbers`."""
    if delimiter == "," or plan.kind == "categorical":
        return "."
    comma = False
    for c in plan.value_cols:
        col = sample[c].dropna()
        if _is_numeric(col):
            if bool((col != np.round(col)).any()):
                return "."  # read as numbers with a point
            continue
        text = col.astype(str).str.strip()
        dotted = text.str.contains(".", regex=False)
        if (dotted & ~text.str.match(_COMMA_NUMBER_RE.pattern).fillna(False)).any():
            return "."  # a point that is no thousands separator: the decimal mark
        comma |= bool(text.str.contains(",", regex=False).any())
    return "," if comma else "."


def _is_time_dtype(s: pd.Series) -> bool:
    return bool(ptypes.is_datetime64_any_dtype(s.dtype))


def _looks_like_dates(s: pd.Series) -> bool:
    """True if every non-empty sample value of a text column is an ISO, M/D/YYYY or D.M.YYYY timestamp."""
    if _is_time_dtype(s):
        return True
    if _is_numeric(s):
        return False
    vals = s.dropna()
    if len(vals) == 0:
        return False
    for v in vals.iloc[:_SAMPLE_ROWS]:
        t = str(v).strip()
        if not (_ISO_RE.match(t) or _US_RE.match(t) or _DOT_RE.match(t)):
            return False
    return True


def _match_column(name: str, columns: list[str], ctx: _Context, option: str) -> str:
    """Exact name, else a unique case-/space-insensitive match; otherwise a LoadError listing the columns."""
    if name in columns:
        return name
    loose = [c for c in columns if c.strip().lower() == str(name).strip().lower()]
    if len(loose) == 1:
        return loose[0]
    raise ctx.error(
        f"no such column (requested by {option}={name!r}); the file has columns: "
        + ", ".join(map(repr, columns)),
        column=str(name),
    )


@dataclass
class _Plan:
    time_col: str
    hour_col: str | None
    kind: Kind
    value_cols: tuple[str, ...]
    pair_cols: tuple[str, str] | None = None
    pair_class_cols: tuple[str, str] | None = None
    person: str | None = None
    id_col: str | None = None
    person_id: str | None = None
    decimal: str = "."  # the values' decimal mark (_decimal_mark)
    sheet: bool = False  # read from an Excel sheet: a numeric time column holds day numbers (_excel_days)

    def file_columns(self) -> list[str]:
        """The columns read from the file (a contact log's value column is made from its id columns)."""
        cols = [self.time_col, *([self.hour_col] if self.hour_col else []), *([self.id_col] if self.id_col else [])]
        if self.pair_cols is None:
            return cols + list(self.value_cols)
        return cols + list(self.pair_cols) + list(self.pair_class_cols or ())


def _detect(
    sample: pd.DataFrame,
    ctx: _Context,
    *,
    time_col: str | None = None,
    value_col: str | None = None,
    lat_col: str | None = None,
    lon_col: str | None = None,
    hour_col: str | None = None,
    kind: str | None = None,
    pair_cols: Sequence[str] | str | None = None,
    pair_class_cols: Sequence[str] | str | None = None,
    person: str | None = None,
    id_col: str | None = None,
) -> tuple[ColumnGuess, list[str], list[str]]:
    """Guess the column roles, honouring any explicit choice.

    Returns ``(guess, notes, problems)``: ``notes`` are informative, ``problems`` say what is still
    ambiguous or missing and which option resolves it (load_series raises them; inspect_table shows them).
    Explicitly named columns that do not exist raise LoadError right away.
    """
    columns = [str(c) for c in sample.columns]
    notes: list[str] = []
    problems: list[str] = []
    if kind is not None and kind not in KINDS:
        raise ctx.error(f"unknown kind {kind!r}; choose one of: " + ", ".join(KINDS))

    def find(opt_value: str | None, opt_name: str) -> str | None:
        return None if opt_value is None else _match_column(opt_value, columns, ctx, opt_name)

    time_col = find(time_col, "time_col")
    value_col = find(value_col, "value_col")
    lat_col = find(lat_col, "lat_col")
    lon_col = find(lon_col, "lon_col")
    hour_col = find(hour_col, "hour_col")
    id_col = find(id_col, "id_col")
    if id_col is not None and id_col in (time_col, value_col, lat_col, lon_col, hour_col):
        raise ctx.error("the person id column cannot also be the time or a value", column=id_col, option="id_col")
    by_norm: dict[str, list[str]] = {}
    for c in columns:
        if c != id_col:
            by_norm.setdefault(_norm(c), []).append(c)

    # --- time
    if time_col is None:
        dates, hours = by_norm.get(_DATE_NAME, []), by_norm.get(_HOUR_NAME, [])
        if len(dates) == 1 and (hour_col is not None or len(hours) == 1):
            time_col = dates[0]
            hour_col = hour_col or hours[0]
            notes.append(f"date + hour layout: dates in '{time_col}', hours 0–23 in '{hour_col}'")
        else:
            named = [
                c
                for c in columns
                if _norm(c) in _TIME_NAMES or _norm(c).startswith(("timestamp", "datetime"))
            ]
            named = [c for c in named if c not in (value_col, lat_col, lon_col, hour_col, id_col)]
            if len(named) == 1:
                time_col = named[0]
            elif len(named) > 1:
                problems.append(
                    f"{len(named)} possible time columns ({', '.join(named)}): choose the time column (--time-col in the command, 'Time column' in the app)"
                )
            else:
                parseable = [c for c in columns if c != id_col and _looks_like_dates(sample[c])]
                if len(parseable) == 1:
                    time_col = parseable[0]
                    notes.append(f"time column '{time_col}' chosen because it is the only one holding dates")
                elif len(parseable) > 1:
                    problems.append(
                        f"{len(parseable)} columns hold dates ({', '.join(parseable)}): "
                        "choose the time column (--time-col in the command, 'Time column' in the app)"
                    )
                else:
                    problems.append(
                        "no time column found (none is named timestamp/time/date/datetime or holds dates): "
                        "choose it (--time-col in the command, 'Time column' in the app)"
                    )
    elif hour_col is None and _norm(time_col) == _DATE_NAME and len(by_norm.get(_HOUR_NAME, [])) == 1:
        hour_col = by_norm[_HOUR_NAME][0]
        notes.append(f"date + hour layout: dates in '{time_col}', hours 0–23 in '{hour_col}'")
    if time_col is not None and time_col in (value_col, lat_col, lon_col):
        raise ctx.error("the same column cannot be both the time and a value", column=time_col)

    used = {time_col, hour_col, id_col}
    rest = [c for c in columns if c not in used]
    numeric = [c for c in rest if _is_numberish(sample[c])]
    idlike = [c for c in numeric if _looks_like_ids(c, sample[c])]
    if kind != "numeric" and idlike:
        # Whole numbers in a column named contact/id/…: labels. Offered as the category column instead of
        # becoming a "quantity" that noise would be added to.
        numeric = [c for c in numeric if c not in idlike]
    text = [c for c in rest if c not in numeric and not _is_time_dtype(sample[c])]

    def pick_named(names: set[str]) -> list[str]:
        return [c for c in rest if _norm(c) in names]

    lats, lons = pick_named(_LAT_NAMES), pick_named(_LON_NAMES)
    # --- contact logs: two id columns, the person followed may be in either
    pair = _two_columns(pair_cols, "pair_cols", columns, ctx)
    if pair is None and kind in (None, "categorical") and value_col is None \
            and lat_col is None and lon_col is None and not (kind is None and lats and lons):
        found = pair_columns([c for c in rest if _is_integerish(sample[c])])
        pair = found[0] if len(found) == 1 else None
    if pair is not None:
        if kind not in (None, "categorical"):
            raise ctx.error(f"a contact log (pair columns {pair[0]}, {pair[1]}) is read as categories, not "
                            f"kind={kind!r}", option="kind")
        if value_col is not None:
            raise ctx.error("choose either a value column or the two id columns of a contact log, not both",
                            column=value_col, option="value_col")
        if time_col in pair:
            raise ctx.error("the same column cannot be both the time and a person id", column=time_col)
        classes = _two_columns(pair_class_cols, "pair_class_cols", columns, ctx)
        notes.append(f"contact log: person ids in columns {pair[0]}, {pair[1]}; the value is the other "
                     "person of each contact" + (f" (their class, from {classes[0]}, {classes[1]})"
                                                 if classes else ""))
        guess = ColumnGuess(time_col=time_col, hour_col=hour_col, kind="categorical", pair_cols=pair,
                            pair_class_cols=classes, person=None if person is None else str(person).strip(),
                            id_col=id_col)
        return guess, notes, problems
    if pair_class_cols is not None:
        raise ctx.error("class columns need the two id columns of a contact log (pair_cols)",
                        option="pair_cols")

    # --- kind and value column(s)
    if (
        lat_col is not None
        or lon_col is not None
        or kind == "location"
        or (kind is None and value_col is None and lats and lons)
    ):
        if kind not in (None, "location"):
            raise ctx.error(f"lat_col/lon_col only make sense for kind='location', not kind={kind!r}")
        kind = "location"
        if lat_col is None:
            lat_col = _one(lats, "latitude", "lat_col", problems)
        if lon_col is None:
            lon_col = _one(lons, "longitude", "lon_col", problems)
        if lat_col is not None and lat_col == lon_col:
            raise ctx.error("the same column cannot be both latitude and longitude", column=lat_col)
        value_col = None
    elif value_col is not None:
        if kind is None:
            numberish = _is_numberish(sample[value_col]) and not _looks_like_ids(value_col, sample[value_col])
            kind = "numeric" if numberish else "categorical"
    elif kind == "numeric" or (kind is None and numeric):
        cands = numeric or (rest if len(rest) == 1 else [])
        kind = "numeric"
        if len(cands) == 1:
            value_col = cands[0]
        elif cands:
            problems.append(
                f"{len(cands)} numeric columns ({', '.join(cands)}): choose the value column (--value-col in the command, 'Value column' in the app)"
            )
        else:
            problems.append("no numeric column found: choose the value column (--value-col in the command, 'Value column' in the app)")
    elif kind == "categorical":
        cands = text if len(text) == 1 else rest
        if len(cands) == 1:
            value_col = cands[0]
        else:
            problems.append(
                f"{len(cands)} possible category columns ({', '.join(cands)}): choose the value column (--value-col in the command, 'Value column' in the app)"
            )
    elif len(text) == 1:  # kind not given and no numeric column
        value_col, kind = text[0], "categorical"
    elif text:
        problems.append(
            f"{len(text)} text columns ({', '.join(text)}): choose the value column (--value-col in the command, 'Value column' in the app)"
        )
    else:
        problems.append("no value column found next to the time column: choose it (--value-col in the command, 'Value column' in the app)")
    if kind == "categorical" and value_col in idlike:
        notes.append(f"'{value_col}' holds whole numbers named like ids: read as labels (categorical); "
                     "choose the kind numeric if they are quantities")
    if kind in ("numeric", "categorical") and value_col is not None:
        ignored = [c for c in rest if c != value_col]
        if ignored:
            notes.append(f"column(s) not used: {', '.join(ignored)}")
        if kind == "numeric" and not _is_numeric(sample[value_col]):
            notes.append(f"'{value_col}' has non-numeric text in the first rows: loading will report it")

    guess = ColumnGuess(
        time_col=time_col,
        value_col=value_col,
        lat_col=lat_col,
        lon_col=lon_col,
        hour_col=hour_col,
        kind=kind,  # type: ignore[arg-type]
        id_col=id_col,
    )
    return guess, notes, problems


def _names_a_person(name: str) -> bool:
    """``id``, ``household``, ``meter_id``, ``participantId``, ``User ID``: one of the words, alone or with
    ``id``/``no``; not ``user_activity`` (a value that merely mentions a person)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(name)).lower()
    words = {w[:-2] if len(w) > 2 and w.endswith("id") and w[:-2] in _PERSON_ID_WORDS else w
             for w in re.findall(r"[a-z]+", spaced)}
    words = {w for w in words if w not in ("id", "no", "nr", "number")} or {"id"} & words
    return bool(words) and words <= _PERSON_ID_WORDS


def suggest_id_column(sample: pd.DataFrame) -> str | None:
    """The column that looks like a person/household id in a long table of many persons: named like one
    (``id``, ``household``, ``person``, ``user``, ``meter``, ``participant``, alone or with ``id``) and
    holding repeated values (at most half as many distinct values as rows in the sample); never a column of
    a contact-log pair or of times. None when no column fits (a one-person file)."""
    columns = [str(c) for c in sample.columns]
    paired = {c for pair in pair_columns(columns) for c in pair}
    for c in columns:
        if c in paired or not _names_a_person(c) or _norm(c) in _TIME_NAMES:
            continue
        vals = sample[c].dropna()
        if len(vals) >= 4 and not _is_time_dtype(vals) and vals.nunique() * 2 <= len(vals):
            return c
    return None


def _looks_like_ids(name: str, s: pd.Series) -> bool:
    """Whole numbers in a column named like an id (``contact``, ``user_id``, ``personId``, …)."""
    low = str(name).strip().lower()
    named = _norm(name) in _ID_NAMES or re.search(r"(^|[_\s\-])id$", low) is not None or str(name).endswith("Id")
    return named and _is_integerish(s)


def _is_integerish(s: pd.Series) -> bool:
    """Every non-empty sample value is a whole number (ids in a numeric-looking column)."""
    if ptypes.is_bool_dtype(s.dtype) or _is_time_dtype(s):
        return False
    vals = s.dropna()
    if len(vals) == 0:
        return False
    if ptypes.is_integer_dtype(vals.dtype):
        return True
    if _is_numeric(vals):
        arr = vals.to_numpy(dtype=np.float64)
        return bool(np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)))
    return bool(vals.astype(str).str.strip().str.fullmatch(r"[+-]?\d+").all())


def pair_columns(columns: Sequence[str]) -> list[tuple[str, str]]:
    """Pairs of columns named like the two sides of a contact (``i``/``j``, ``id1``/``id2``,
    ``class_i``/``class_j``, ``source``/``target``, …), in file order. The rule the loader detects contact
    logs by (among whole-number columns), and the one the app uses to offer class columns."""
    cols = [str(c) for c in columns]
    found = []
    for x, a in enumerate(cols):
        for b in cols[x + 1 :]:
            na, nb = _norm(a), _norm(b)
            if (na, nb) in _PAIR_NAMES or (
                len(na) == len(nb) and na[:-1] == nb[:-1] and (na[-1:], nb[-1:]) in _PAIR_ENDINGS
            ):
                found.append((a, b))
    return found


def _two_columns(
    value: Sequence[str] | str | None, option: str, columns: list[str], ctx: _Context
) -> tuple[str, str] | None:
    """``"i,j"`` or ``("i", "j")`` -> the two matching column names (two different existing columns)."""
    if value is None:
        return None
    names = [v.strip() for v in value.split(",")] if isinstance(value, str) else [str(v) for v in value]
    if len(names) != 2:
        raise ctx.error(f"{option} needs two column names, got {len(names)}", option=option)
    a, b = (_match_column(n, columns, ctx, option) for n in names)
    if a == b:
        raise ctx.error(f"{option} needs two different columns", column=a, option=option)
    return a, b


def _one(cands: list[str], role: str, option: str, problems: list[str]) -> str | None:
    if len(cands) == 1:
        return cands[0]
    flag = "--" + option.replace("_", "-")
    if cands:
        problems.append(f"{len(cands)} {role} columns ({', '.join(cands)}): choose one ({flag} in the command)")
    else:
        problems.append(f"no {role} column found (named like lat/lon): choose it ({flag} in the command)")
    return None


def _plan_from(guess: ColumnGuess, problems: list[str], ctx: _Context) -> _Plan:
    if problems:
        raise ctx.error("; ".join(problems))
    assert guess.time_col is not None and guess.kind is not None
    if guess.pair_cols is not None:
        return _Plan(guess.time_col, guess.hour_col, "categorical", (CONTACT_COLUMN,), guess.pair_cols,
                     guess.pair_class_cols, guess.person, guess.id_col)
    if guess.kind == "location":
        assert guess.lat_col is not None and guess.lon_col is not None
        values: tuple[str, ...] = (guess.lat_col, guess.lon_col)
    else:
        assert guess.value_col is not None
        values = (guess.value_col,)
    return _Plan(guess.time_col, guess.hour_col, guess.kind, values, id_col=guess.id_col)


# ------------------------------------------------------------------------------------------- conversion


def _time_format_of(first: str) -> tuple[str | None, bool]:
    """``(strftime format or None, has_time_zone)`` for one sample value."""
    m = _ISO_RE.match(first)
    if m:
        if m.group("tz"):
            return None, True
        fmt = "%Y-%m-%d"
        if m.group("sep"):
            fmt += ("T" if m.group("sep") == "T" else " ") + "%H:%M"
            if m.group("sec"):
                fmt += ":%S"
                if m.group("frac"):
                    fmt += ".%f"
        return fmt, False
    for regex, fmt in ((_US_RE, "%m/%d/%Y"), (_DOT_RE, "%d.%m.%Y")):
        m = regex.match(first)
        if m:
            if " " in first:
                twelve = m.groupdict().get("ampm")  # "1/31/2013 1:00 PM": a 12-hour clock
                fmt += (" %I:%M" if twelve else " %H:%M") + (":%S" if m.group("sec") else "")
                fmt += (" %p" if twelve.startswith(" ") else "%p") if twelve else ""
            return fmt, False
    return None, False


def _to_datetime(s: pd.Series, fmt: str, *, utc: bool = False) -> pd.Series:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pd.to_datetime(s, format=fmt, errors="coerce", utc=utc)


def _dt_to_ns(
    arr: np.ndarray, ctx: _Context, column: str, raw: pd.Series, index: np.ndarray | None = None
) -> np.ndarray:
    """datetime64 (any unit, no NaT) -> int64 nanoseconds, refusing values that would wrap around.

    ``index`` maps positions in ``arr`` to row positions (when ``arr`` is a subset), for messages.
    """
    if arr.dtype == np.dtype("datetime64[ns]"):
        return arr.view(np.int64)
    unit = np.datetime_data(arr.dtype)[0]
    lo, hi = _T_MIN.astype(f"datetime64[{unit}]"), _T_MAX.astype(f"datetime64[{unit}]")
    if len(arr) and (arr.min() < lo or arr.max() > hi):
        bad = np.flatnonzero((arr < lo) | (arr > hi))
        rows = bad if index is None else index[bad]
        raise ctx.error(
            f"timestamp out of the supported range 1677-09-22 .. 2262-04-10, got {_show(raw.iloc[rows[0]])}",
            positions=rows,
            column=column,
        )
    return arr.astype("datetime64[ns]").view(np.int64)


def _naive_utc(parsed: pd.Series) -> pd.Series:
    if isinstance(parsed.dtype, pd.DatetimeTZDtype):
        return parsed.dt.tz_convert("UTC").dt.tz_localize(None)
    return parsed


def _parse_text_times(s: pd.Series, ctx: _Context, column: str) -> np.ndarray:
    """Text timestamps -> int64 ns (naive; zone-aware values converted to UTC, then the zone dropped).

    Fast path (the only cost on good files): one vectorised ``pd.to_datetime``. For ISO-like text we use
    ``format="ISO8601"`` directly: it is pandas' strict ISO parser, and gives the same result as the exact
    detected format followed by the ISO fallback, only faster. M/D/YYYY dates use the exact format. Missing
    values, bad text and time-zone mixing are diagnosed only once something failed.
    """
    first_pos = 0
    if pd.isna(s.iloc[0]):  # rare: find the first value without scanning the whole column on good files
        present = np.flatnonzero(s.notna().to_numpy())
        if len(present) == 0:
            raise ctx.error("missing timestamp (empty field)", positions=np.arange(len(s)), column=column)
        first_pos = int(present[0])
    first = str(s.iloc[first_pos]).strip()
    fmt, has_tz = _time_format_of(first)

    parsed: pd.Series | None = None
    try:
        if fmt is not None and fmt.startswith("%d.%m.%Y"):
            parsed = _to_datetime(s, fmt)
        elif fmt is not None and fmt.startswith("%m/%d/%Y"):
            parsed = _to_datetime(s, fmt)
            if parsed.isna().any():
                alt = _to_datetime(s, fmt.replace("%m/%d", "%d/%m"))
                if not alt.isna().any():  # every row fits day/month/year but not month/day/year
                    parsed = alt
        else:
            # One zone throughout comes back zone-aware; several offsets (DST) or naive mixed with zoned
            # raise ValueError and are sorted out below.
            parsed = _naive_utc(_to_datetime(s, "ISO8601"))
    except ValueError:
        parsed = None
    if parsed is None or isinstance(parsed.dtype, pd.DatetimeTZDtype):
        parsed = _zoned_times(s, ctx, column, first_pos)

    nat = parsed.isna().to_numpy()
    if nat.any():
        idx = np.flatnonzero(nat)
        missing = s.iloc[idx].isna().to_numpy()
        if missing.any():
            raise ctx.error("missing timestamp (empty field)", positions=idx[missing], column=column)
        if fmt is not None and fmt.startswith("%m/%d/%Y"):
            # M/D/YYYY file with some rows in another layout: give ISO 8601 a chance for those rows.
            try:
                retry = _to_datetime(s.iloc[idx], "ISO8601")
            except ValueError:  # zones among them: not a layout we mix with M/D/YYYY
                retry = pd.Series(pd.NaT, index=s.index[idx])
            if not isinstance(retry.dtype, pd.DatetimeTZDtype) and retry.notna().all():
                out = np.empty(len(s), dtype=np.int64)
                good = np.flatnonzero(~nat)
                out[good] = _dt_to_ns(parsed.to_numpy()[good], ctx, column, s, good)
                out[idx] = _dt_to_ns(retry.to_numpy(), ctx, column, s, idx)
                return out
        bad = idx
        example = {"%m": "1/31/2013", "%d": "31.01.2013 00:00"}.get((fmt or "")[:2], "2013-01-31 00:00:00")
        raise ctx.error(
            f"expected a timestamp like {example!r}, got {_show(s.iloc[bad[0]])}",
            positions=bad,
            column=column,
        )
    return _dt_to_ns(parsed.to_numpy(), ctx, column, s)


def _zoned_times(s: pd.Series, ctx: _Context, column: str, first_pos: int) -> pd.Series:
    """Timestamps of which some carry a zone: all must (else ambiguous); convert all to naive UTC."""
    text = s.astype("str")
    zoned = text.str.contains(_TZ_SUFFIX, regex=True).fillna(False).to_numpy(dtype=bool)
    present = s.notna().to_numpy()
    naive = np.flatnonzero(present & ~zoned)
    if zoned.any() and len(naive):
        z = int(np.argmax(zoned))
        line = ctx.lines([z])[0]
        raise ctx.error(
            f"timestamp without time zone ({_show(s.iloc[naive[0]])}), but row {line} has one "
            f"({_show(s.iloc[z])}); mixing them is ambiguous",
            positions=naive,
            column=column,
        )
    try:
        return _naive_utc(_to_datetime(s, "ISO8601", utc=True))
    except ValueError as exc:  # pragma: no cover - coerce + utc should not raise; belt and braces
        raise ctx.error(f"cannot read the timestamps: {exc}", column=column) from None


def _epoch_times(s: pd.Series, ctx: _Context, column: str) -> np.ndarray:
    """Epoch seconds (integer or float) -> int64 ns."""
    missing = s.isna().to_numpy()
    if missing.any():
        raise ctx.error("missing timestamp (empty field)", positions=np.flatnonzero(missing), column=column)
    arr = s.to_numpy(dtype=np.int64 if ptypes.is_integer_dtype(s.dtype) else np.float64)
    with np.errstate(invalid="ignore"):
        bad = ~((arr >= _EPOCH_MIN_S) & (arr <= _EPOCH_MAX_S))
    if bad.any():
        idx = np.flatnonzero(bad)
        v = arr[idx[0]]
        hint = " (these look like milliseconds; epoch seconds are expected)" if abs(v) > 1e11 else ""
        raise ctx.error(
            f"epoch seconds out of the supported range (1677..2262), got {_show(v)}{hint}",
            positions=idx,
            column=column,
        )
    if arr.dtype.kind == "f":
        whole = np.floor(arr)
        return whole.astype(np.int64) * _NS_PER_S + np.round((arr - whole) * _NS_PER_S).astype(np.int64)
    return arr.astype(np.int64) * _NS_PER_S


def _relative_word_check(
    ns: np.ndarray, ctx: _Context, column: str, text_of: Callable[[], pd.Series] | None, started_ns: int
) -> None:
    """Refuse ``now``/``today``: pandas' parsers accept them, which would make a release depend on when
    the file was opened. Such values come out at or after the moment loading started, so only rows with
    such times (none in a normal file; all in a file of future times) have their text looked at.
    """
    if text_of is None or not len(ns) or ns.max() < started_ns:
        return
    late = np.flatnonzero(ns >= started_ns)
    text = text_of()
    words = text.iloc[late].astype(str).str.strip().str.lower()
    hit = late[words.isin(["now", "today"]).to_numpy()]
    if len(hit):
        raise ctx.error(
            f"expected a timestamp, got {_show(text.iloc[hit[0]])} (relative times are not accepted)",
            positions=hit,
            column=column,
        )


def _load_started_ns() -> int:
    """The earlier of local and UTC wall-clock time, minus a second (see _relative_word_check)."""
    local = pd.Timestamp.now().as_unit("ns").value
    utc = pd.Timestamp.now("UTC").tz_localize(None).as_unit("ns").value
    return min(local, utc) - _NS_PER_S


def _times(
    df: pd.DataFrame, plan: _Plan, ctx: _Context, text_of: Callable[[], pd.Series] | None, started_ns: int
) -> tuple[np.ndarray, TimeFormat]:
    """Timestamps as int64 ns in row order, and how they were written.

    ``text_of`` returns the time column as written (text), when the input had text: for the check that
    ``now``/``today`` were not used. ``None`` for in-memory frames whose column is already datetimes.
    """
    ns, fmt = _times_unchecked(df, plan, ctx)
    _relative_word_check(ns, ctx, plan.time_col, text_of, started_ns)
    return ns, fmt


def _times_unchecked(df: pd.DataFrame, plan: _Plan, ctx: _Context) -> tuple[np.ndarray, TimeFormat]:
    col = plan.time_col
    s = df[col]
    if plan.hour_col is not None:
        if _is_time_dtype(s):
            day_ns = _aware_or_naive_ns(s, ctx, col)
        elif _is_numeric(s):
            raise ctx.error(
                f"expected dates like '1/31/2013' or '2013-01-31' for the date + hour layout, got {_show(s.iloc[0])}",
                positions=[0],
                column=col,
            )
        else:
            day_ns = _parse_text_times(s, ctx, col)
        off = np.flatnonzero(day_ns % _NS_PER_DAY != 0)
        if len(off):
            raise ctx.error(
                "expected a date without time of day (the hour is in column "
                f"'{plan.hour_col}'), got {_show(s.iloc[off[0]])}",
                positions=off,
                column=col,
            )
        hours = _hours(df[plan.hour_col], ctx, plan.hour_col)
        return day_ns + hours * _NS_PER_HOUR, "date+hour"
    if _is_time_dtype(s):
        return _aware_or_naive_ns(s, ctx, col), "iso-utc" if isinstance(s.dtype, pd.DatetimeTZDtype) else "iso"
    if _is_numeric(s):
        if plan.sheet and _excel_days(s):
            return _days_since_1899(s), "iso"
        return _epoch_times(s, ctx, col), "epoch"
    ns = _parse_text_times(s, ctx, col)  # (one column never mixes zoned and naive times: refused there)
    first = s.iloc[int(np.argmax(s.notna().to_numpy()))]
    return ns, "iso-utc" if _time_format_of(str(first).strip())[1] else "iso"


#: Excel's day numbers: days since 1899-12-30 (so that 1900-03-01 is 61, as Excel counts) up to 9999-12-31.
_EXCEL_EPOCH_NS = int(np.datetime64("1899-12-30T00:00:00", "ns").astype(np.int64))
_EXCEL_MAX_DAY = 2_958_466


def _excel_days(s: pd.Series) -> bool:
    """A sheet's time column of numbers, all below 10^6 and none negative: Excel day numbers (a date column not
    formatted as dates), not UNIX seconds, which would all fall in the first 12 days of 1970."""
    v = s.to_numpy(dtype=np.float64, na_value=np.nan)
    return bool(v.size and np.all(np.isfinite(v)) and v.min() >= 0 and v.max() < min(1e6, _EXCEL_MAX_DAY))


def _days_since_1899(s: pd.Series) -> np.ndarray:
    """Excel day numbers (a fraction is the time of day) → int64 ns, rounded to the millisecond (a day's
    fraction carries binary noise below it)."""
    ms = np.round(s.to_numpy(dtype=np.float64) * 86_400_000).astype(np.int64)
    return _EXCEL_EPOCH_NS + ms * 1_000_000


def _aware_or_naive_ns(s: pd.Series, ctx: _Context, column: str) -> np.ndarray:
    """An already-typed datetime column (DataFrame/Parquet input) -> int64 ns, zone-aware ones in UTC."""
    if getattr(s.dt, "tz", None) is not None:
        s = s.dt.tz_convert("UTC").dt.tz_localize(None)
    missing = s.isna().to_numpy()
    if missing.any():
        raise ctx.error("missing timestamp (empty field)", positions=np.flatnonzero(missing), column=column)
    return _dt_to_ns(s.to_numpy(), ctx, column, s)


def _hours(s: pd.Series, ctx: _Context, column: str) -> np.ndarray:
    vals = _numbers(s, ctx, column)
    bad = np.flatnonzero((vals != np.round(vals)) | (vals < 0) | (vals > 23))
    if len(bad):
        raise ctx.error(
            f"expected a whole hour 0–23, got {_show(s.iloc[bad[0]])}", positions=bad, column=column
        )
    return vals.astype(np.int64)


def _numbers(s: pd.Series, ctx: _Context, column: str, decimal: str = ".") -> np.ndarray:
    """A column that must hold finite numbers -> float64, with row-precise errors. ``decimal``: the file's
    decimal mark (:func:`_decimal_mark`; the read has converted its numbers, text reaches here only when
    some value is not one)."""
    if _is_numeric(s):
        vals = s.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        present = s.notna().to_numpy()
        if ptypes.is_bool_dtype(s.dtype) or _is_time_dtype(s):
            vals = np.full(len(s), np.nan)  # True/False or dates are not quantities
        else:
            vals = pd.to_numeric(s if decimal == "." else _comma_numbers(s), errors="coerce").to_numpy(
                dtype=np.float64, na_value=np.nan)
        bad = np.flatnonzero(present & np.isnan(vals))
        if len(bad):
            example = s.iloc[bad[0]]
            if decimal == "," and "." in str(example):
                hint = " (the file writes decimal commas, as in 0,931: a point only separates thousands, 1.234,5)"
            elif decimal == "." and "," in str(example) and _COMMA_NUMBER_RE.match(str(example)):
                hint = (" (decimal commas are read only from a file separated by ';' or tabs that writes no "
                        "decimal points: write 1.5, not 1,5)")
            else:
                hint = ""
            raise ctx.error(f"expected a number, got {_show(example)}{hint}", positions=bad, column=column)
    nan = np.isnan(vals)
    if nan.any():
        raise ctx.error("missing value (empty field)", positions=np.flatnonzero(nan), column=column)
    inf = np.flatnonzero(~np.isfinite(vals))
    if len(inf):
        raise ctx.error(
            f"expected a finite number, got {_show(s.iloc[inf[0]])}", positions=inf, column=column
        )
    return vals


def _comma_numbers(s: pd.Series) -> pd.Series:
    """Text numbers with a decimal comma ("1.234,5", "0,931", "12") as Python reads them ("1234.5"); other
    text (a decimal point among them: "2.25") becomes NaN, for :func:`_numbers` to name its row."""
    text = s.astype(str).str.strip()
    fits = text.str.match(_COMMA_NUMBER_RE.pattern).fillna(False).to_numpy(dtype=bool)
    out = text.str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
    return out.where(fits & s.notna().to_numpy(), np.nan)


def _labels(s: pd.Series, ctx: _Context, column: str) -> np.ndarray:
    missing = s.isna().to_numpy()
    if missing.any():
        raise ctx.error("missing value (empty field)", positions=np.flatnonzero(missing), column=column)
    return _label_text(s)


def _label_text(s: pd.Series) -> np.ndarray:
    """Labels as text (object array), for a column without missing values."""
    if _is_numeric(s) and s.dtype.kind == "f":
        # In-memory floats that are whole numbers (ids that went through a NaN-capable column): "3", not "3.0".
        arr = s.to_numpy()
        if np.all(arr == np.round(arr)) and np.all(np.abs(arr) < 2**53):
            return arr.astype(np.int64).astype(str).astype(object)
    return s.astype(str).to_numpy(dtype=object)


def _values(
    df: pd.DataFrame, plan: _Plan, ctx: _Context, categories: Sequence[str] | None
) -> tuple[np.ndarray, tuple[str, ...] | None]:
    if plan.kind == "numeric":
        return _numbers(df[plan.value_cols[0]], ctx, plan.value_cols[0], plan.decimal), None
    if plan.kind == "location":
        lat_name, lon_name = plan.value_cols
        lat = _numbers(df[lat_name], ctx, lat_name, plan.decimal)
        lon = _numbers(df[lon_name], ctx, lon_name, plan.decimal)
        for vals, name, limit, what in ((lat, lat_name, 90, "latitude"), (lon, lon_name, 180, "longitude")):
            bad = np.flatnonzero(np.abs(vals) > limit)
            if len(bad):
                raise ctx.error(
                    f"{what} must be within [-{limit}, {limit}] degrees, got {_show(df[name].iloc[bad[0]])}",
                    positions=bad,
                    column=name,
                )
        return np.column_stack((lat, lon)), None
    name = plan.value_cols[0]
    labels = _labels(df[name], ctx, name)
    if categories is None:
        codes, uniques = pd.factorize(labels, sort=True)
        return codes.astype(np.int64), tuple(str(u) for u in uniques)
    if isinstance(categories, str):
        raise ctx.error("categories must be a list of labels, not one string")
    cats = tuple(str(c) for c in categories)
    dup = pd.Index(cats)[pd.Index(cats).duplicated()]
    if len(dup):
        raise ctx.error(f"the public category list names {_show(dup[0])} twice")
    if not cats:
        raise ctx.error("the public category list is empty")
    codes = pd.Index(cats).get_indexer(pd.Index(labels)).astype(np.int64)
    unknown = np.flatnonzero(codes < 0)
    if len(unknown):
        shown = ", ".join(map(_show, pd.unique(labels[unknown])[:5]))
        listed = ", ".join(map(_show, cats[:10])) + (", …" if len(cats) > 10 else "")
        raise ctx.error(
            f"label(s) {shown} not in the public category list ({listed}); add them to the list or fix the data",
            positions=unknown,
            column=name,
        )
    return codes, cats


# ------------------------------------------------------------------------ contact logs, missing values


def _id_text(s: pd.Series) -> np.ndarray:
    """Ids as text (object array), ``None`` where the field is empty."""
    out = np.full(len(s), None, dtype=object)
    present = s.notna().to_numpy()
    if present.any():
        out[present] = _label_text(s[present])
    return out


def _person_counts(ida: np.ndarray, idb: np.ndarray) -> list[tuple[str, int]]:
    """Every id of a contact log with its number of rows (a row naming it on both sides counts once), most
    rows first, ties by id."""
    both = np.concatenate((ida, idb[ida != idb]))
    vc = pd.Series(both, dtype=object).dropna().value_counts()
    vc = vc.sort_index(kind="stable").sort_values(ascending=False, kind="stable")
    return [(str(k), int(v)) for k, v in vc.items()]


def _most_rows(counts: list[tuple[str, int]], k: int = 5) -> str:
    return ", ".join(f"{pid} ({n:,} rows)" for pid, n in counts[:k]) + (", …" if len(counts) > k else "")


def _person_problem(pair: tuple[str, str], counts: list[tuple[str, int]] | None) -> str:
    top = f"; ids with most rows: {_most_rows(counts)}" if counts else ""
    return (
        f"2 numeric columns ({pair[0]}, {pair[1]}) look like a contact log: choose the person to follow "
        f"(--person ID in the command, 'Person' in the app{top}) or one value column (--value-col in the "
        "command, 'Value column' in the app)"
    )


@dataclass
class _Scan:
    """What :func:`scan_table` collects while running the loader's own steps (see :class:`TableScan`)."""

    person_counts: list[tuple[str, int]] = field(default_factory=list)
    person: str | None = None
    id_counts: list[tuple[str, int]] = field(default_factory=list)
    person_id: str | None = None
    missing_lines: list[int] = field(default_factory=list)
    missing_by_column: dict[str, int] = field(default_factory=dict)
    repeated_times: int = 0
    repeated_lines: list[int] = field(default_factory=list)
    exact_lines: list[int] = field(default_factory=list)
    raw: _Raw | None = None


def _pair_rows(df: pd.DataFrame, plan: _Plan, ctx: _Context, skip: bool, scan: _Scan | None) -> pd.DataFrame:
    """The rows of one person of a contact log, as a frame ``time[, hour], contact`` (the other person's id,
    or their class when class columns are chosen). ``ctx`` then maps row positions back to the file."""
    assert plan.pair_cols is not None
    a, b = plan.pair_cols
    ida, idb = _id_text(df[a]), _id_text(df[b])
    counts = _person_counts(ida, idb) if scan is not None or plan.person is None else []
    person = plan.person
    if scan is not None:
        scan.person_counts = counts
        if person is None and counts:
            person = counts[0][0]  # the scan follows the person with most rows until one is chosen
        scan.person = person
    if person is None:
        raise ctx.error(_person_problem(plan.pair_cols, counts), option="person")
    in_a, in_b = ida == person, idb == person
    both = np.flatnonzero(in_a & in_b)
    if len(both):
        raise ctx.error(f"person {person!r} is on both sides of a contact", positions=both, column=a)
    keep = np.flatnonzero(in_a | in_b)
    if not len(keep):
        listed = _most_rows(counts or _person_counts(ida, idb))
        raise ctx.error(f"person {person!r} is not in column {a} or {b}; ids with most rows: {listed}",
                        option="person")
    side_a = in_a[keep]
    if plan.pair_class_cols is not None:
        ca, cb = plan.pair_class_cols
        other = np.where(side_a, _id_text(df[cb])[keep], _id_text(df[ca])[keep])
        other_col = np.where(side_a, cb, ca)
    else:
        other = np.where(side_a, idb[keep], ida[keep])
        other_col = np.where(side_a, b, a)
    frame = pd.DataFrame({c: df[c].iloc[keep].reset_index(drop=True)
                          for c in (plan.time_col, plan.hour_col) if c is not None})
    frame[CONTACT_COLUMN] = pd.Series(other, dtype=object)
    ctx.keep(keep)
    gap = np.flatnonzero(pd.isna(other))
    if len(gap) and scan is None and not skip:
        raise ctx.error("missing value (empty field)", positions=gap, column=str(other_col[gap[0]]),
                        option="skip_missing")
    return frame


def _id_rows(df: pd.DataFrame, plan: _Plan, ctx: _Context, scan: _Scan | None) -> pd.DataFrame:
    """One person's rows of a long table (``plan.id_col`` = ``plan.person_id``), taken before every other
    step so that the checks (missing values, repeated times) are that person's; ``ctx`` keeps file rows."""
    assert plan.id_col is not None
    col = plan.id_col
    person = plan.person_id
    # ids as text only when they are counted (a scan, no person yet): a load compares the column directly
    ids = _id_text(df[col]) if scan is not None or person is None else None
    # the counts of one column are a contact log's counts with the same column on both sides
    counts = _person_counts(ids, ids) if ids is not None else []
    if scan is not None:
        scan.id_counts = counts
        person = person if person is not None else (counts[0][0] if counts else None)
        scan.person_id = person
    if person is None:
        raise ctx.error(f"{len(counts):,} persons in this column: choose one ('Person' in the app; "
                        f"ids with most rows: {_most_rows(counts)})", column=col,
                        option="person_id")
    keep = np.flatnonzero(_ids_equal(df[col], ids, person))
    if not len(keep):
        ids = _id_text(df[col]) if ids is None else ids
        listed = _most_rows(counts or _person_counts(ids, ids))
        raise ctx.error(f"no rows of person {person!r}; ids with most rows: {listed}", column=col,
                        option="person_id")
    ctx.keep(keep)
    return df.iloc[keep].reset_index(drop=True)


def _ids_equal(column: pd.Series, ids: np.ndarray | None, person: str) -> np.ndarray:
    """Which rows are ``person``'s: text columns (a CSV's ids as written) are compared where they are, about
    ten times faster than making Python strings; other columns (Parquet numbers) as :func:`_id_text`."""
    if ids is None and isinstance(column.dtype, pd.StringDtype):
        return (column == person).fillna(False).to_numpy(dtype=bool)
    return (_id_text(column) if ids is None else ids) == person


def _missing_rows(
    df: pd.DataFrame, plan: _Plan, ctx: _Context, skip: bool, scan: _Scan | None
) -> tuple[pd.DataFrame, int]:
    """Rows with an empty field in a column the series needs: an error, or set aside (``skip``/scan)."""
    needed = [plan.time_col, *([plan.hour_col] if plan.hour_col else []), *plan.value_cols]
    masks = {c: df[c].isna().to_numpy() for c in needed}
    gaps = np.logical_or.reduce(list(masks.values()))
    if not gaps.any():
        return df, 0
    if scan is None and not skip:
        for c in needed:
            if masks[c].any():
                what = "missing timestamp (empty field)" if c == plan.time_col else "missing value (empty field)"
                raise ctx.error(what, positions=np.flatnonzero(masks[c]), column=c, option="skip_missing")
    drop = np.flatnonzero(gaps)
    if scan is not None:
        scan.missing_lines = ctx.lines(drop)
        names = {CONTACT_COLUMN: "/".join(plan.pair_class_cols or plan.pair_cols or ())} if plan.pair_cols else {}
        scan.missing_by_column = {names.get(c, c): int(m.sum()) for c, m in masks.items() if m.any()}
    keep = np.flatnonzero(~gaps)
    if not len(keep):
        raise ctx.error(f"no rows left: all {len(drop):,} rows have a missing value", option="skip_missing")
    ctx.keep(keep)
    return df.iloc[keep].reset_index(drop=True), len(drop)


# --------------------------------------------------------------------------------- repeated timestamps


def _exact_copies(t: np.ndarray, values: np.ndarray, same: np.ndarray) -> np.ndarray:
    """Rows (sorted order, stable) repeating the time *and* value(s) of an earlier row of the same time."""
    in_dup = np.concatenate((same, [False])) | np.concatenate(([False], same))
    idx = np.flatnonzero(in_dup)
    cols: dict[str, np.ndarray] = {"t": t[idx]}
    if values.ndim == 2:
        cols.update(lat=values[idx, 0], lon=values[idx, 1])
    else:
        cols["v"] = values[idx]
    out = np.zeros(len(t), dtype=bool)
    out[idx[pd.DataFrame(cols).duplicated(keep="first").to_numpy()]] = True
    return out


def _merge_choices(kind: str) -> tuple[str, ...]:
    return ("first", "last", "mean") if kind == "numeric" else ("first", "last")


def _repeat_error(t: np.ndarray, pos: np.ndarray, plan: _Plan, ctx: _Context) -> LoadError:
    """The message for repeated timestamps with different values (``t`` sorted, ``pos`` file positions)."""
    same = t[1:] == t[:-1]
    in_dup = np.concatenate((same, [False])) | np.concatenate(([False], same))
    dup_idx = np.flatnonzero(in_dup)
    lines_sorted = ctx.lines(pos[dup_idx])
    lines = sorted(lines_sorted)
    # Group the duplicate rows by timestamp for the message (first few groups).
    group_of = np.cumsum(np.concatenate(([True], ~same)))[dup_idx]
    groups = np.unique(group_of)
    details = []
    for g in groups[:3]:
        members = sorted(lines_sorted[i] for i in np.flatnonzero(group_of == g))
        stamp = pd.Timestamp(int(t[dup_idx[np.argmax(group_of == g)]]))
        details.append(f"{stamp} on {_fmt_rows(members)}")
    more = f"; {len(groups) - 3} more repeated timestamps" if len(groups) > 3 else ""
    choices = _merge_choices(plan.kind)
    words = " / ".join("keep " + c if c != "mean" else c for c in choices)
    return ctx.error(
        f"repeated timestamp{'s' if len(groups) > 1 else ''}: " + "; ".join(details) + more + f"; choose {words}",
        lines=lines,
        column=plan.time_col,
        option="duplicates",
        choices=choices,
    )


def _resolve_duplicates(
    t: np.ndarray,
    values: np.ndarray,
    positions: np.ndarray | None,
    policy: str,
    plan: _Plan,
    ctx: _Context,
    scan: _Scan | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """``t`` sorted (stable) ascending; drop/merge repeated timestamps according to ``policy``.

    Returns the times, the values and how many exact copies were dropped."""
    same = t[1:] == t[:-1]
    if not same.any():
        return t, values, 0
    pos = np.arange(len(t)) if positions is None else positions
    exact = _exact_copies(t, values, same)
    n_exact = int(exact.sum())
    rest = ~exact
    t2, v2, pos2 = (t[rest], values[rest], pos[rest]) if n_exact else (t, values, pos)
    same2 = t2[1:] == t2[:-1]
    if scan is not None:
        scan.exact_lines = sorted(ctx.lines(pos[exact]))
        in_dup = np.concatenate((same2, [False])) | np.concatenate(([False], same2))
        scan.repeated_lines = sorted(ctx.lines(pos2[in_dup]))
        scan.repeated_times = int(np.count_nonzero(same2 & ~np.concatenate(([False], same2[:-1]))))
        return t, values, n_exact
    if policy == "error" and not same2.any():
        lines = sorted(ctx.lines(pos[exact]))
        raise ctx.error(
            f"{n_exact} exact duplicate row{'s' if n_exact > 1 else ''} (same time and value as an earlier "
            "row): drop them",
            lines=lines,
            column=plan.time_col,
            option="duplicates",
            choices=("drop-exact", *_merge_choices(plan.kind)),
        )
    if policy == "error":
        raise _repeat_error(t, pos, plan, ctx)
    t, values = t2, v2
    if not same2.any():
        return t, values, n_exact
    if policy == "drop-exact":
        raise _repeat_error(t2, pos2, plan, ctx)
    starts = np.flatnonzero(np.concatenate(([True], ~same2)))
    if policy == "first":
        return t[starts], values[starts], n_exact
    if policy == "last":
        ends = np.concatenate((starts[1:], [len(t)])) - 1
        return t[ends], values[ends], n_exact
    counts = np.diff(np.concatenate((starts, [len(t)])))
    sums = np.add.reduceat(values, starts, axis=0)
    return t[starts], sums / counts, n_exact


# ---------------------------------------------------------------------------------------- the pipeline


@dataclass(frozen=True)
class _Options:
    duplicates: str = "error"
    skip_missing: bool = False
    categories: Sequence[str] | None = None


def _check_mean(duplicates: str, plan: _Plan, ctx: _Context) -> None:
    if duplicates == "mean" and plan.kind != "numeric":
        what = "categories" if plan.kind == "categorical" else "locations (a mean of positions is a place " \
            "nobody was)"
        raise ctx.error(f"mean is not possible for {what}; keep the first or the last of the repeated times",
                        column=plan.time_col, option="duplicates", choices=("first", "last", "drop-exact"))


def _build(
    df: pd.DataFrame,
    plan: _Plan,
    ctx: _Context,
    *,
    name: str,
    path: str,
    sha256: str,
    delimiter: str,
    opts: _Options,
    text_of: Callable[[], pd.Series] | None,
    started_ns: int,
    scan: _Scan | None = None,
) -> Series | None:
    """Run the loader's steps on a read frame: one person's rows (contact logs), missing values, times,
    values, sorting, repeated timestamps. With ``scan`` the steps record what they find instead of
    refusing it (and no series is made)."""
    if len(df) == 0:
        raise ctx.error("no data rows (only a header)")
    if scan is None:
        _check_mean(opts.duplicates, plan, ctx)
    if plan.id_col is not None:
        df = _id_rows(df, plan, ctx, scan)
    if plan.pair_cols is not None:
        df = _pair_rows(df, plan, ctx, opts.skip_missing, scan)
    df, n_missing = _missing_rows(df, plan, ctx, opts.skip_missing, scan)
    times_text = text_of
    if text_of is not None and ctx._kept is not None:
        kept = ctx._kept
        times_text = lambda: text_of().iloc[kept].reset_index(drop=True)  # noqa: E731
    t, time_format = _times(df, plan, ctx, times_text, started_ns)
    values, cats = _values(df, plan, ctx, opts.categories)
    positions: np.ndarray | None = None  # file-order position of each sorted row; None = identity
    if len(t) > 1 and not np.all(t[1:] >= t[:-1]):
        order = np.argsort(t, kind="stable")  # stable: equal times keep file order (first/last semantics)
        t, values, positions = t[order], values[order], order
    t, values, n_exact = _resolve_duplicates(t, values, positions, opts.duplicates, plan, ctx, scan)
    if scan is not None:
        return None
    source = SourceInfo(
        path=path,
        sha256=sha256,
        time_col=plan.time_col,
        value_cols=plan.value_cols,
        time_format=time_format,
        hour_col=plan.hour_col,
        duplicates=opts.duplicates,
        delimiter=delimiter,
        skip_missing=opts.skip_missing,
        pair_cols=plan.pair_cols,
        person=plan.person,
        pair_class_cols=plan.pair_class_cols,
        id_col=plan.id_col,
        person_id=plan.person_id,
        exact_duplicates_dropped=n_exact,
        missing_skipped=n_missing,
    )
    return Series(
        kind=plan.kind,
        times=np.ascontiguousarray(t).view("datetime64[ns]"),
        values=np.ascontiguousarray(values),
        categories=cats,
        source=source,
        name=name if plan.id_col is None else f"{name} ({plan.id_col} {plan.person_id})",
        unit="deg" if plan.kind == "location" else "",
    )


def _check_options(duplicates: str, kind: str | None, ctx: _Context) -> None:
    if duplicates not in DUPLICATE_POLICIES:
        raise ctx.error(f"unknown duplicates={duplicates!r}; choose one of: " + ", ".join(DUPLICATE_POLICIES),
                        option="duplicates", choices=DUPLICATE_POLICIES[1:])
    if kind is not None and kind not in KINDS:
        raise ctx.error(f"unknown kind {kind!r}; choose one of: " + ", ".join(KINDS), option="kind")


# ------------------------------------------------------------------------------------------------ public


#: a file larger than this is read by :func:`inspect_table` for more than a moment (its encoding is checked over
#: the whole file: ≈ 30 ms here, 0.9 s for a 10^7-row CSV of 260 MB)
INSPECT_INLINE_BYTES = 8 << 20


def slow_to_inspect(path: str | os.PathLike[str]) -> bool:
    """Whether :func:`inspect_table` takes more than a moment on ``path``: a large file, or a workbook or a
    track (converted whole first: ≈ 1 s for a 10^5-row workbook). The window reads those on a worker."""
    try:
        p = Path(path)
        if p.stat().st_size > INSPECT_INLINE_BYTES:
            return True
        with p.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False  # inspect_table says what is wrong, at once
    return sheets.kind_of_bytes(head) in ("xlsx", "gpx", "zip")


def inspect_table(path: str | os.PathLike[str], nrows: int = 20) -> TablePreview:
    """Preview a file: delimiter, columns, the first ``nrows`` rows (as pandas reads them) and a guess.

    Never reads more than a sample of rows through pandas (the whole file is only scanned for its encoding).
    A malformed row inside the sample does not fail the preview: it is skipped and mentioned in ``notes``
    (loading will then report it). Raises LoadError for missing, empty, unreadable or undecodable files.
    A contact log (see :func:`pair_columns`) is ambiguous until a person is chosen: the ids and their row
    counts need the whole file, which :func:`scan_table` reads.
    """
    raw = _prepare(path)
    ctx = _Context(raw.display, raw.path, None if raw.parquet else raw.data)
    notes: list[str] = []
    if raw.title_rows:
        rows = "row 1" if raw.title_rows == 1 else f"rows 1–{raw.title_rows}"
        notes.append(f"sheet '{raw.sheet}': the header is row {raw.title_rows + 1}; {rows} above it are not read")
    if raw.parquet:
        sample = _read_parquet(raw, ctx).head(max(nrows, _SAMPLE_ROWS))
    else:
        header = _raw_header(raw)
        twice = sorted(c for c, k in Counter(header).items() if k > 1)
        if twice:
            notes.append(
                f"column name(s) used twice in the header: {', '.join(twice)} (pandas calls the second 'x.1')"
            )
        try:
            sample = _read_csv(raw, ctx, nrows=max(nrows, _SAMPLE_ROWS))
        except LoadError as exc:
            if not exc.rows:
                raise
            notes.append(
                str(exc).split(": ", 1)[-1] + f" (row {exc.rows[0]}); loading will fail until it is fixed"
            )
            sample = _read_csv(raw, ctx, nrows=max(nrows, _SAMPLE_ROWS), on_bad_lines="skip")
    columns = [str(c) for c in sample.columns]
    sample.columns = columns
    if not raw.parquet and len(sample) == 0:
        notes.append("the file has a header but no data rows")
    id_col = suggest_id_column(sample)
    guess, more_notes, problems = _detect(sample, ctx, id_col=id_col)
    if id_col is not None:  # (not "1 id in the first 200 rows" beside the dialog's count of the whole file)
        more_notes.insert(0, f"'{id_col}' looks like a person id column: one person's rows are read at a time")
    if guess.pair_cols is not None:
        problems.append(_person_problem(guess.pair_cols, None))
    t = sample[guess.time_col] if raw.sheet and guess.time_col in sample.columns else None
    if t is not None and _is_numeric(t) and _excel_days(t.dropna()) and t.notna().any():
        first = t.dropna().iloc[:1]
        when = np.datetime_as_string(_days_since_1899(first).astype("datetime64[ns]"), unit="m")[0]
        notes.append(f"'{guess.time_col}' holds Excel day numbers (dates not formatted as dates): read as dates, "
                     f"{first.iloc[0]:g} = {when.replace('T', ' ')}")
    return TablePreview(
        path=raw.path,
        delimiter=raw.delimiter,
        columns=columns,
        head=sample.head(nrows).copy(),
        head_lines=ctx.lines(np.arange(min(nrows, len(sample)))),  # (blank lines, a sheet's title rows)
        guess=guess,
        ambiguous=bool(problems),
        notes=notes + more_notes + problems,
        problems=problems,
        sheet=raw.sheet,
    )


#: How many row numbers a :class:`TableScan` keeps per finding (the counts are always complete).
SCAN_LINES = 20


@dataclass(frozen=True)
class TableScan:
    """What loading a whole file with given columns would meet, found by the loader's own steps.

    Row numbers are file lines as in error messages (the first ``SCAN_LINES`` of each finding, ascending).
    ``error`` is the one-line message of any other problem loading would stop at (``error_option`` names the
    loader option that resolves it, if one does); it is None when loading with ``skip_missing`` (if there are
    missing values) and a duplicates policy (if there are repeats) will succeed.
    """

    kind: Kind | None = None
    person_counts: tuple[tuple[str, int], ...] = ()  # contact logs: every id with its rows, most first
    person: str | None = None  # the person the scan followed (the chosen one, else the one with most rows)
    id_counts: tuple[tuple[str, int], ...] = ()  # with an id column: every id with its rows, most first
    person_id: str | None = None  # with an id column: the person scanned (chosen, else the one with most rows)
    missing_rows: int = 0
    missing_lines: tuple[int, ...] = ()
    missing_by_column: tuple[tuple[str, int], ...] = ()
    repeated_times: int = 0  # distinct timestamps that repeat with different values
    repeated_rows: int = 0  # the rows holding them
    repeated_lines: tuple[int, ...] = ()
    exact_rows: int = 0  # copies of an earlier row's time and value (dropped by every policy but "error")
    exact_lines: tuple[int, ...] = ()
    error: str | None = None
    error_option: str | None = None
    #: the fields of the rows listed above, as written (file line -> fields in header order), so that the
    #: dialog can show the rows themselves; empty for Parquet
    examples: dict[int, tuple[str, ...]] = field(default_factory=dict)

    @property
    def duplicate_choices(self) -> tuple[str, ...]:
        """The policies that can resolve this file's repeats (``mean`` only for numbers)."""
        return _merge_choices(self.kind or "numeric")

    @property
    def suggested_duplicates(self) -> str:
        """``first`` when times repeat with different values, ``drop-exact`` when only exact copies repeat,
        else ``error`` (nothing to resolve)."""
        if self.repeated_times:
            return "first"
        return "drop-exact" if self.exact_rows else "error"


_COLUMN_OPTIONS = ("time_col", "value_col", "lat_col", "lon_col", "hour_col", "kind", "pair_cols",
                   "pair_class_cols", "person", "id_col", "person_id")


def _load_file(path: str | os.PathLike[str], cols: dict[str, Any], opts: _Options,
               scan: _Scan | None) -> tuple[Series | None, _Plan]:
    started_ns = _load_started_ns()
    raw = _prepare(path)
    if scan is not None:
        scan.raw = raw
    ctx = _Context(raw.display, raw.path, None if raw.parquet else raw.data)
    _check_options(opts.duplicates, cols.get("kind"), ctx)
    cols = dict(cols)
    person_id = cols.pop("person_id", None)
    if person_id is not None and cols.get("id_col") is None:
        raise ctx.error("a person id needs the column holding the ids (id_col)", option="id_col")
    if raw.parquet:
        df = _read_parquet(raw, ctx)
        df.columns = [str(c) for c in df.columns]
        guess, _, problems = _detect(df.head(_SAMPLE_ROWS), ctx, **cols)
        plan = _plan_from(guess, problems, ctx)
        plan.person_id = person_id
    else:
        header = _raw_header(raw)
        sample = _read_csv(raw, ctx, nrows=_SAMPLE_ROWS)
        if len(sample) == 0:
            raise ctx.error("no data rows (only a header)")
        guess, _, problems = _detect(sample, ctx, **cols)
        plan = _plan_from(guess, problems, ctx)
        plan.person_id = person_id
        plan.sheet = bool(raw.sheet)
        needed = plan.file_columns()
        for c in needed:
            if header.count(c) > 1:
                raise ctx.error(
                    "this column name appears twice in the header; rename one", lines=[1], column=c
                )
        dtype: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        if plan.kind == "categorical":
            # labels and ids exactly as written ("007" stays "007")
            dtype.update({c: str for c in needed if c not in (plan.time_col, plan.hour_col)})
        if plan.id_col is not None:
            dtype[plan.id_col] = str  # person ids exactly as written, whatever the kind
        time_sample = sample[plan.time_col]
        if plan.hour_col is None and not _is_numberish(time_sample) and not _is_time_dtype(time_sample):
            present = time_sample.dropna()
            fmt, has_tz = _time_format_of(str(present.iloc[0]).strip()) if len(present) else (None, False)
            if has_tz or (fmt is not None and fmt.startswith("%Y")):
                # ISO-like: let the C parser convert while reading. With format ISO8601 pandas parses the
                # field text directly, several times faster than building strings and parsing those
                # (a 10^6-row file then loads faster than a plain read_csv). If any value does not parse,
                # pandas leaves the column as text and _parse_text_times diagnoses it.
                extra = {"parse_dates": [plan.time_col], "date_format": "ISO8601"}
            else:
                dtype[plan.time_col] = object  # plain str objects: skips building a pandas string array
        float_cols = plan.value_cols if plan.kind != "categorical" else ()
        plan.decimal = _decimal_mark(sample, plan, raw.delimiter)
        if plan.decimal != ".":
            extra["decimal"] = plan.decimal
        # usecols saves converting unused columns but costs ~10 % when every column is used anyway.
        usecols = needed if len(header) > len(needed) else None
        df = _read_csv(raw, ctx, usecols=usecols, dtype=dtype or None, float_cols=float_cols, **extra)

    def text_of() -> pd.Series:
        col = df[plan.time_col]
        if not _is_time_dtype(col) or raw.parquet:
            return col
        return _read_csv(raw, ctx, usecols=[plan.time_col], dtype={plan.time_col: object})[plan.time_col]

    series = _build(
        df,
        plan,
        ctx,
        name=Path(raw.path).stem,
        path=raw.path,
        sha256="" if scan is not None else raw.sha.value,
        delimiter=raw.delimiter,
        opts=opts,
        text_of=text_of,
        started_ns=started_ns,
        scan=scan,
    )
    return series, plan


def load_series(
    path: str | os.PathLike[str],
    *,
    time_col: str | None = None,
    value_col: str | None = None,
    lat_col: str | None = None,
    lon_col: str | None = None,
    hour_col: str | None = None,
    kind: Kind | None = None,
    duplicates: str = "error",
    skip_missing: bool = False,
    pair_cols: Sequence[str] | str | None = None,
    person: str | int | None = None,
    pair_class_cols: Sequence[str] | str | None = None,
    categories: Sequence[str] | None = None,
    id_col: str | None = None,
    person_id: str | int | None = None,
) -> Series:
    """Read a CSV/TSV (or Parquet, if pyarrow is installed) file into a sorted :class:`Series`.

    Columns not given are detected (see :func:`inspect_table`); if that is ambiguous a LoadError says
    which option to pass. ``kind`` forces the kind (e.g. numeric-looking ids as ``"categorical"``).
    ``duplicates`` decides what repeated timestamps become (see :data:`DUPLICATE_POLICIES`): ``"error"``
    (default), ``"drop-exact"`` (drop exact copies, refuse other repeats), ``"first"``/``"last"`` (in file
    order) or ``"mean"`` (numeric only). ``skip_missing`` sets aside rows with an empty field in a column
    the series needs (instead of refusing them). A contact log (``pair_cols``: two id columns, detected when
    unambiguous) is read for one ``person``: the value is the *other* id of each of their rows, or the other
    person's class with ``pair_class_cols``. ``categories`` is an optional public category list; labels
    outside it are an error. Without it, the categories are the sorted distinct labels of the rows read
    (before duplicates are resolved, so the list does not change with the duplicate policy).
    A long table of many persons (``id_col``, see :func:`suggest_id_column`) is read for one ``person_id``:
    only the rows whose id (as written) equals it go through the steps above (row numbers stay the file's).
    ``source.path`` is the path as given.
    """
    cols = dict(time_col=time_col, value_col=value_col, lat_col=lat_col, lon_col=lon_col, hour_col=hour_col,
                kind=kind, pair_cols=pair_cols, pair_class_cols=pair_class_cols,
                person=None if person is None else str(person), id_col=id_col,
                person_id=None if person_id is None else str(person_id))
    series, _ = _load_file(path, cols, _Options(duplicates, bool(skip_missing), categories), None)
    assert series is not None
    return series


def scan_table(path: str | os.PathLike[str], **options: Any) -> TableScan:
    """Run the whole-file checks of :func:`load_series` (same options) and report, instead of stopping at,
    missing values and repeated timestamps; for contact logs and an ``id_col`` also list every id with its row
    count (and, until a person is chosen, check the one with most rows).

    For the import dialog: it shows these findings and the choices that resolve them before loading.
    Costs about one load. Never raises LoadError: any other problem is reported in ``error``.
    """
    cols = {k: options.get(k) for k in _COLUMN_OPTIONS}
    for k in ("person", "person_id"):
        if cols[k] is not None:
            cols[k] = str(cols[k])
    scan = _Scan()
    kind: Kind | None = None
    error: LoadError | None = None
    try:
        _, plan = _load_file(path, cols, _Options("first", True, options.get("categories")), scan)
        kind = plan.kind
    except LoadError as exc:
        error = exc
    return TableScan(
        kind=kind,
        person_counts=tuple(scan.person_counts),
        person=scan.person,
        id_counts=tuple(scan.id_counts),
        person_id=scan.person_id,
        missing_rows=len(scan.missing_lines),
        missing_lines=tuple(scan.missing_lines[:SCAN_LINES]),
        missing_by_column=tuple(scan.missing_by_column.items()),
        repeated_times=scan.repeated_times,
        repeated_rows=len(scan.repeated_lines),
        repeated_lines=tuple(scan.repeated_lines[:SCAN_LINES]),
        exact_rows=len(scan.exact_lines),
        exact_lines=tuple(scan.exact_lines[:SCAN_LINES]),
        error=None if error is None else str(error),
        error_option=None if error is None else error.option,
        examples=_rows_as_written(scan.raw, [*scan.repeated_lines[:SCAN_LINES], *scan.exact_lines[:SCAN_LINES],
                                             *scan.missing_lines[:SCAN_LINES]]),
    )


def person_ids(path: str | os.PathLike[str], id_col: str) -> tuple[tuple[str, int], ...]:
    """Every id of ``id_col`` with its number of rows, most rows first (ties by id), as :func:`scan_table`
    lists them, but reading only that column: the app's person chooser after a person was opened."""
    raw = _prepare(path)
    ctx = _Context(raw.display, raw.path, None if raw.parquet else raw.data)
    if raw.parquet:
        df = _read_parquet(raw, ctx)
    else:
        header = _raw_header(raw)
        col = _match_column(id_col, header, ctx, "id_col")
        df = _read_csv(raw, ctx, usecols=[col], dtype={col: str})
    df.columns = [str(c) for c in df.columns]
    ids = _id_text(df[_match_column(id_col, list(df.columns), ctx, "id_col")])
    return tuple(_person_counts(ids, ids))


def _rows_as_written(raw: _Raw | None, lines: list[int]) -> dict[int, tuple[str, ...]]:
    """Fields of the given file lines (1-based, as in messages), split like the header."""
    if raw is None or raw.parquet or not lines:
        return {}
    buf = np.frombuffer(raw.data, dtype=np.uint8)
    starts = np.concatenate(([0], np.flatnonzero(buf == 10) + 1))
    out = {}
    for line in sorted(set(lines)):
        if line - 1 >= len(starts):
            continue
        a = int(starts[line - 1])
        b = int(starts[line]) - 1 if line < len(starts) else len(raw.data)
        text = raw.data[a:b].decode("utf-8", errors="replace").rstrip("\r")
        out[line] = tuple(next(csv.reader([text], delimiter=raw.delimiter), []))
    return out


def load_dataframe_series(
    df: pd.DataFrame,
    *,
    name: str = "<memory>",
    time_col: str | None = None,
    value_col: str | None = None,
    lat_col: str | None = None,
    lon_col: str | None = None,
    hour_col: str | None = None,
    kind: Kind | None = None,
    duplicates: str = "error",
    skip_missing: bool = False,
    pair_cols: Sequence[str] | str | None = None,
    person: str | int | None = None,
    pair_class_cols: Sequence[str] | str | None = None,
    categories: Sequence[str] | None = None,
    delimiter: str = ",",
    sheet: bool = False,
) -> Series:
    """Same as :func:`load_series` on an in-memory DataFrame (tests, GUI paste, Parquet).

    Messages use ``name`` as the file name and number rows as if the frame were written to a CSV with one
    header line (row position 0 -> "row 2"). The frame's index is ignored (rows are taken in order).
    ``source.sha256`` is ``""`` (there are no file bytes). ``delimiter``: that of the text the frame was read
    from as text (``lmdk batch``), ``source.delimiter``; text numbers with decimal commas are read as a file
    with that delimiter would be (:func:`_decimal_mark`). ``sheet``: the rows come from an Excel sheet (a
    numeric time column holds day numbers, as :func:`load_series` reads them).
    """
    started_ns = _load_started_ns()
    ctx = _Context(name, name)
    if not isinstance(df, pd.DataFrame):
        raise ctx.error(f"expected a pandas DataFrame, got {type(df).__name__}")
    _check_options(duplicates, kind, ctx)
    frame = df.reset_index(drop=True)
    names = [str(c) for c in frame.columns]
    for c, k in Counter(names).items():
        if k > 1:
            raise ctx.error("this column name appears twice; rename one", column=c)
    frame.columns = names
    guess, _, problems = _detect(
        frame.head(_SAMPLE_ROWS),
        ctx,
        time_col=time_col,
        value_col=value_col,
        lat_col=lat_col,
        lon_col=lon_col,
        hour_col=hour_col,
        kind=kind,
        pair_cols=pair_cols,
        pair_class_cols=pair_class_cols,
        person=None if person is None else str(person),
    )
    plan = _plan_from(guess, problems, ctx)
    plan.decimal = _decimal_mark(frame.head(_SAMPLE_ROWS), plan, delimiter)
    plan.sheet = sheet
    series = _build(
        frame,
        plan,
        ctx,
        name=name,
        path=name,
        sha256="",
        delimiter=delimiter,
        opts=_Options(duplicates, bool(skip_missing), categories),
        text_of=None if _is_time_dtype(frame[plan.time_col]) else (lambda: frame[plan.time_col]),
        started_ns=started_ns,
    )
    assert series is not None
    return series
