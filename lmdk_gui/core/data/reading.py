"""Reading a table's bytes: encoding, delimiter, width checks and the chunked CSV/Parquet readers (the loader's first step)."""

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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import sheets
from .context import _Context
from .series import LoadError


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
