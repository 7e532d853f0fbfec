"""What every step of the loader shares: the reading context (file, row numbering, messages), the column plan, and the patterns of numbers and dates."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from .series import ColumnChoice, Kind, LoadError

#: How many row numbers a message lists before saying "and N more".
_MAX_LISTED_ROWS = 5


#: Name of the value column of a contact log read for one person (the other person's id or class).
CONTACT_COLUMN = "contact"


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


# A number as a spreadsheet writes it where the comma is the decimal mark: "0,931", "1.234,5", "12", "1.234".
_COMMA_NUMBER_RE = re.compile(r"^\s*[+-]?(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d+)?\s*$")


#: What the detection found: the request with every column it settled filled in (``None`` where unknown
#: or not applicable), so that the plan and the resolved :class:`~.series.SourceInfo` carry the rest along.
ColumnGuess = ColumnChoice


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


@dataclass(frozen=True)
class RowOrigin:
    """Where each row of an in-memory frame came from (``lmdk batch``: one person's rows of a long table):
    ``lines[i]`` is row i's 1-based line in input file ``names[files[i]]`` (the header is line 1)."""

    lines: np.ndarray
    files: np.ndarray
    names: tuple[str, ...]  # only the files these rows come from


class _Context:
    """Names the file in messages and maps row positions (0-based, in file order) to file line numbers."""

    def __init__(self, display: str, path: str | None, data: bytes | None = None,
                 origin: RowOrigin | None = None) -> None:
        self.display = display
        self.path = path
        self._data = data
        self._origin = origin
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
        if self._origin is not None:
            return self._origin.lines[pos].tolist()
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

    def _rows_by_file(self, positions: np.ndarray | Sequence[int]) -> str:
        """``row 7 of b.csv`` / ``rows 3 and 9 of a.csv, row 4 of b.csv``: rows named in their own input file."""
        assert self._origin is not None
        pos = np.asarray(positions, dtype=np.int64)
        if self._kept is not None:
            pos = self._kept[pos]
        o = self._origin
        files = o.files[pos]
        return ", ".join(f"{_fmt_rows(o.lines[pos[files == f]])} of {o.names[f]}"
                         for f in dict.fromkeys(files.tolist()))

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
        if lines and self._origin is not None:
            # rows named by their line in the input file(s); lines alone (a message built from ctx.lines)
            # name the file when the rows come from one, else the files they may be in
            o = self._origin
            parts.append(self._rows_by_file(positions) if positions is not None and len(positions) else
                         f"{_fmt_rows(lines)} of {' or '.join(o.names)}")
        elif lines:
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


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]", "", str(name).lower())


def _is_numeric(s: pd.Series) -> bool:
    return bool(ptypes.is_numeric_dtype(s.dtype)) and not ptypes.is_bool_dtype(s.dtype)


def _is_time_dtype(s: pd.Series) -> bool:
    return bool(ptypes.is_datetime64_any_dtype(s.dtype))


@dataclass
class _Plan:
    time_col: str
    hour_col: str | None
    kind: Kind
    value_cols: tuple[str, ...]
    pair_cols: tuple[str, ...] | None = None
    pair_class_cols: tuple[str, ...] | None = None
    person: str | None = None
    id_col: str | None = None
    person_id: str | None = None
    decimal: str = "."  # the values' decimal mark (_decimal_mark)
    sheet: bool = False  # read from an Excel sheet: a numeric time column holds day numbers (_excel_days)
    date_order: str | None = None  # d/d/yyyy dates: "dmy", "mdy" or None (detect; ask when both fit)

    def file_columns(self) -> list[str]:
        """The columns read from the file (a contact log's value column is made from its id columns)."""
        cols = [self.time_col, *([self.hour_col] if self.hour_col else []), *([self.id_col] if self.id_col else [])]
        if self.pair_cols is None:
            return cols + list(self.value_cols)
        return cols + list(self.pair_cols) + list(self.pair_class_cols or ())
