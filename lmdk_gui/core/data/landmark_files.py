"""Landmark list files (issue 2 `--landmarks FILE`, issue 5 import/export).

A landmark file is a CSV with a ``timestamp`` column whose values match the series' timestamps, or a ``row``
column of event numbers: 0-based positions in time order, the numbers the window's hover box shows (the column
keeps its name for compatibility; docs/importing.md, "Row and event numbers"). Importing refuses the whole file when any entry
does not match (it names how many and which), so a half-applied list never happens.

A list found by a suggestion rule on the values (the app's Suggest panel, ``lmdk landmarks``) is written with a
``rule`` column naming it, and read back with it (:func:`read_landmark_list`): a release shows where its
landmarks are, so an export of such a list says that they tell about the values, wherever the list was made.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from ..publish.guard import check_output
from ..publish.writers import AtomicFile, format_timestamps, neutralise_frame
from .series import LoadError, Series

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


#: without a series length, a row list may name at most this many rows (a typo such as 0-10000000000
#: would otherwise try to allocate the range)
MAX_SPEC_ROWS = 10_000_000


def row_spec_ranges(spec: str) -> list[tuple[int, int]]:
    """The inclusive ranges of ``"3,7,10-20"``, checked for syntax only (nothing is allocated). Raises
    ValueError naming the bad part."""
    ranges: list[tuple[int, int]] = []
    for part in spec.split(","):
        if not part.strip():
            continue
        m = _RANGE.match(part)
        if not m:
            raise ValueError(f"landmark rows: cannot read {part.strip()!r} (expected e.g. 3,7,10-20)")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else a
        if b < a:
            raise ValueError(f"landmark rows: the range {part.strip()!r} runs backwards")
        ranges.append((a, b))
    return ranges


def parse_row_spec(spec: str, n: int | None = None) -> np.ndarray:
    """``"3,7,10-20"`` → sorted distinct rows (ranges inclusive). Raises ValueError naming the bad part, a
    row past the last one (given ``n``) before allocating anything, or more than :data:`MAX_SPEC_ROWS`."""
    ranges = row_spec_ranges(spec)
    if not ranges:
        return np.zeros(0, dtype=np.int64)
    last = max(b for _, b in ranges)
    if n is not None and last >= n:
        raise ValueError(f"landmark rows: event {last} is past the last event ({n - 1}; events are numbered from 0 "
                         "in time order)")
    if n is None and sum(b - a + 1 for a, b in ranges) > MAX_SPEC_ROWS:
        raise ValueError(f"landmark rows: {spec.strip()[:40]!r} names more than {MAX_SPEC_ROWS:,} events")
    return np.unique(np.concatenate([np.arange(a, b + 1, dtype=np.int64) for a, b in ranges]))


def _examples(values, limit: int = 5) -> str:
    vals = [str(v) for v in values[:limit]]
    more = f" and {len(values) - limit} more" if len(values) > limit else ""
    return ", ".join(vals) + more


#: the column naming the suggestion rules a landmark list was found by ("; " between two)
RULE_COLUMN = "rule"


def read_landmark_file(path: str | os.PathLike, series: Series) -> np.ndarray:
    """Rows of the series named by a landmark file; raises :class:`LoadError` (adding nothing) otherwise."""
    return read_landmark_list(path, series)[0]


def read_landmark_list(path: str | os.PathLike, series: Series) -> tuple[np.ndarray, frozenset[str]]:
    """Rows of the series named by a landmark file, and the suggestion rules its ``rule`` column names (none
    when it has no such column); raises :class:`LoadError` (adding nothing) otherwise."""
    df = _read_table(path)
    rows = landmark_rows(df, series, Path(path).name, str(path)) if df is not None else np.zeros(0, dtype=np.int64)
    return rows, rules_named(df) if df is not None else frozenset()


def rules_named(df: pd.DataFrame) -> frozenset[str]:
    """The rules a landmark table's ``rule`` column names."""
    col = {c.strip().lower(): c for c in df.columns}.get(RULE_COLUMN)
    if col is None:
        return frozenset()
    return frozenset(r.strip() for cell in df[col].unique() for r in str(cell).split(";") if r.strip())


def _read_table(path: str | os.PathLike) -> pd.DataFrame | None:
    """A landmark file as text columns (None when it is empty)."""
    p = Path(path)
    name = p.name
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise LoadError(f"{name}: cannot read the landmark file ({e.strerror})", path=str(p)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise LoadError(f"{name}: not UTF-8 text (bad byte at offset {e.start})", path=str(p)) from None
    if not text.strip():
        return None
    try:
        # The sniffer picks a letter as the delimiter of a one-column file ("timestamp" → "t"), so only
        # sniff when the header has a delimiter at all.
        header = text.lstrip("\n").split("\n", 1)[0]
        sep = None if any(c in header for c in ",;\t|") else ","
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, sep=sep, engine="python")
    except Exception as e:  # noqa: BLE001 - pandas raises many types for malformed text
        raise LoadError(f"{name}: not a readable CSV ({e})", path=str(p)) from None
    return df


def landmark_rows(df: pd.DataFrame, series: Series, name: str, path: str | None = None) -> np.ndarray:
    """Rows of the series named by a landmark table of text columns (``row`` or ``timestamp``; other columns
    are ignored): the one matching rule for a landmark file and for one person's part of a batch's file."""
    p = path
    cols = {c.strip().lower(): c for c in df.columns}
    if "row" in cols:
        col = cols["row"]
        vals = df[col].str.strip()
        bad = ~vals.str.fullmatch(r"\d+")
        if bad.any():
            lines = (np.flatnonzero(bad.to_numpy()) + 2).tolist()
            raise LoadError(f"{name}, row {lines[0]}, column '{col}': expected an event number (from 0, in time order), got "
                            f"{vals[bad].iloc[0]!r}", path=p, rows=lines, column=col)
        rows = vals.astype(np.int64).to_numpy()
        outside = rows[(rows < 0) | (rows >= series.n)]
        if outside.size:
            raise LoadError(f"{name}: {outside.size} event number(s) are outside the series (events 0–{series.n - 1}): "
                            f"{_examples(outside.tolist())}; no landmarks were added", path=p, column=col)
        return np.unique(rows)
    if "timestamp" in cols:
        col = cols["timestamp"]
        vals = df[col].str.strip()
        times = _parse_times(vals, series)
        if times is None:
            raise LoadError(f"{name}, column '{col}': cannot read the timestamps (expected the same format as "
                            "the series, e.g. 2013-01-01 00:00:00 or epoch seconds)", path=p, column=col)
        pos = np.searchsorted(series.times, times)
        pos_c = np.minimum(pos, max(series.n - 1, 0))
        found = (series.n > 0) & (pos < series.n) & (series.times[pos_c] == times) if series.n else \
            np.zeros(len(times), dtype=bool)
        if not np.all(found):
            missing = vals[~found].tolist()
            raise LoadError(f"{name}: {len(missing)} timestamp(s) are not in the series: {_examples(missing)}; "
                            "no landmarks were added", path=p, column=col)
        return np.unique(pos)
    raise LoadError(f"{name}: a landmark file needs a 'timestamp' or a 'row' column; found "
                    f"{', '.join(map(str, df.columns))}", path=p)


def _parse_times(vals: pd.Series, series: Series) -> np.ndarray | None:
    """Timestamps written like the series' input: epoch seconds for epoch series, otherwise ISO-like text."""
    fmt = series.source.time_format if series.source is not None else "iso"
    try:
        if fmt == "epoch":
            if vals.str.fullmatch(r"-?\d+").all():
                return (vals.astype(np.int64).to_numpy() * 1_000_000_000).astype("datetime64[ns]")
            secs = vals.astype(float).to_numpy()
            return (secs * 1e9).round().astype(np.int64).astype("datetime64[ns]")
        t = pd.to_datetime(vals, format="ISO8601")
        if getattr(t.dt, "tz", None) is not None:
            t = t.dt.tz_convert("UTC").dt.tz_localize(None)
        return t.to_numpy().astype("datetime64[ns]")
    except (ValueError, TypeError, OverflowError):
        return None


def write_landmark_file(path: str | os.PathLike, series: Series, rows: np.ndarray, rules: Iterable[str] = (),
                        *, force: bool = True) -> None:
    """Write a landmark list (``timestamp`` and ``row`` columns, and a ``rule`` column when ``rules`` name the
    suggestion rules it was found by), atomically; a new file is owner-only. Never over the series' data
    file (through any link) nor a special file; an existing file only with ``force``
    (:class:`~lmdk_gui.core.publish.guard.OutputRefused`)."""
    check_output(path, (series.source.path if series.source is not None else None,), force=force,
                 what="landmark list", input_word="data file", overwrite_hint="choose another name")
    rows = np.asarray(rows, dtype=np.int64)
    fmt = series.source.time_format if series.source is not None else "iso"
    if fmt == "date+hour":
        fmt = "iso"
    df = pd.DataFrame({"timestamp": format_timestamps(series.times[rows], fmt), "row": rows})
    if rules:
        df[RULE_COLUMN] = "; ".join(sorted(rules))
    with AtomicFile(path, private=True) as af:
        # our own timestamps and row numbers: never a formula, but every text cell goes through one rule
        neutralise_frame(df).to_csv(af.file, index=False, lineterminator="\n")
        af.commit()
