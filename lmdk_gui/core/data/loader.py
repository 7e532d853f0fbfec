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
  (the HUE original) use the exact format ``%m/%d/%Y`` (``%d/%m/%Y`` if every row fits only that); when every
  date fits both and they differ (01/02/2013) the ``date_order`` option decides, and without it loading asks
  (a LoadError). There is no ``dateutil``/"mixed" guessing: it is slow and silently ambiguous. pandas accepts ``now``/``today`` as
  timestamps; we refuse them.
* Zone-aware timestamps are converted to UTC and the zone dropped; a column mixing zoned and naive values
  is an error (no way to know what the naive ones meant).
"""

from __future__ import annotations

import csv
import dataclasses
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import sheets
from .cells import _values
from .columns import (
    _SAMPLE_ROWS,
    _decimal_mark,
    _detect,
    _is_numberish,
    _match_column,
    _plan_from,
    pair_columns,
    suggest_id_column,
)
from .context import CONTACT_COLUMN, ColumnGuess, RowOrigin, _Context, _is_numeric, _is_time_dtype, _Plan
from .duplicates import (
    _id_rows,
    _id_text,
    _merge_choices,
    _missing_rows,
    _pair_rows,
    _person_counts,
    _person_problem,
    _resolve_duplicates,
    _Scan,
)
from .reading import _prepare, _Raw, _raw_header, _read_csv, _read_parquet
from .series import KINDS, ColumnChoice, Kind, LoadError, Series, SourceInfo
from .timeparse import (
    _days_since_1899,
    _excel_days,
    _load_started_ns,
    _time_format_of,
    _times,
    _times_unchecked,
    ambiguous_date,
    date_order_problem,
)

__all__ = [
    "CONTACT_COLUMN",
    "ColumnChoice",
    "ColumnGuess",
    "DATE_ORDERS",
    "DUPLICATE_POLICIES",
    "LOAD_OPTIONS",
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
    request: ColumnChoice,
    categories: Sequence[str] | None,
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
        _check_mean(request.duplicates, plan, ctx)
    if plan.id_col is not None:
        df = _id_rows(df, plan, ctx, scan)
    if plan.pair_cols is not None:
        df = _pair_rows(df, plan, ctx, request.skip_missing, scan)
    df, n_missing = _missing_rows(df, plan, ctx, request.skip_missing, scan)
    times_text = text_of
    if text_of is not None and ctx._kept is not None:
        kept = ctx._kept
        times_text = lambda: text_of().iloc[kept].reset_index(drop=True)  # noqa: E731
    t, time_format = _times(df, plan, ctx, times_text, started_ns)
    values, cats = _values(df, plan, ctx, categories)
    positions: np.ndarray | None = None  # file-order position of each sorted row; None = identity
    n_late = 0  # rows whose time is earlier than the row above them: sorting moves them (said, not silent)
    if len(t) > 1 and not np.all(t[1:] >= t[:-1]):
        late = t[1:] < t[:-1]
        n_late = int(np.count_nonzero(late))
        if scan is not None:
            scan.out_of_order = n_late
            scan.out_of_order_line = ctx.lines([int(np.argmax(late)) + 1])[0]
        order = np.argsort(t, kind="stable")  # stable: equal times keep file order (first/last semantics)
        t, values, positions = t[order], values[order], order
    rows_read = len(t) + n_missing
    t, values, n_exact = _resolve_duplicates(t, values, positions, request.duplicates, plan, ctx, scan)
    if scan is not None:
        return None
    source = SourceInfo(
        path=path,
        sha256=sha256,
        value_cols=plan.value_cols,
        columns=_resolved(request, plan),
        time_format=time_format,
        delimiter=delimiter,
        exact_duplicates_dropped=n_exact,
        missing_skipped=n_missing,
        rows_read=rows_read,
        out_of_order=n_late,
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


def _resolved(request: ColumnChoice, plan: _Plan) -> ColumnChoice:
    """``request`` with the columns the loader used filled in (what reads the same series again)."""
    lat = lon = value = None
    if plan.kind == "location" and len(plan.value_cols) == 2:
        lat, lon = plan.value_cols
    elif plan.value_cols and plan.pair_cols is None:  # a contact log's value column is made, not read
        value = plan.value_cols[0]
    return replace(request, time_col=plan.time_col, value_col=value, lat_col=lat, lon_col=lon,
                   hour_col=plan.hour_col, kind=plan.kind, pair_cols=plan.pair_cols, person=plan.person,
                   pair_class_cols=plan.pair_class_cols, id_col=plan.id_col, person_id=plan.person_id,
                   date_order=plan.date_order)


#: How d/d/yyyy dates may be read (the ``date_order`` option): day first, month first.
DATE_ORDERS: tuple[str, ...] = ("dmy", "mdy")


def _check_options(request: ColumnChoice, ctx: _Context) -> None:
    if request.date_order is not None and request.date_order not in DATE_ORDERS:
        raise ctx.error(f"unknown date_order={request.date_order!r}; choose one of: " + ", ".join(DATE_ORDERS),
                        option="date_order", choices=DATE_ORDERS)
    if request.duplicates not in DUPLICATE_POLICIES:
        raise ctx.error(f"unknown duplicates={request.duplicates!r}; choose one of: "
                        + ", ".join(DUPLICATE_POLICIES), option="duplicates", choices=DUPLICATE_POLICIES[1:])
    if request.kind is not None and request.kind not in KINDS:
        raise ctx.error(f"unknown kind {request.kind!r}; choose one of: " + ", ".join(KINDS), option="kind")
    if request.person_id is not None and request.id_col is None:
        raise ctx.error("a person id needs the column holding the ids (id_col)", option="id_col")


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


def inspect_table(path: str | os.PathLike[str], nrows: int = 20, *, date_order: str | None = None) -> TablePreview:
    """Preview a file: delimiter, columns, the first ``nrows`` rows (as pandas reads them) and a guess.

    Never reads more than a sample of rows through pandas (the whole file is only scanned for its encoding).
    A malformed row inside the sample does not fail the preview: it is skipped and mentioned in ``notes``
    (loading will then report it). Raises LoadError for missing, empty, unreadable or undecodable files.
    A contact log (see :func:`pair_columns`) is ambiguous until a person is chosen: the ids and their row
    counts need the whole file, which :func:`scan_table` reads. A time column of d/d/yyyy dates that all fit
    both day/month and month/day is ambiguous until ``date_order`` is given (judged on the whole column: while
    the dates read so far fit both orders, more of that column is read). Rows of the sample out of time order are noted (loading sorts them).
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
    guess, more_notes, problems = _detect(sample, ctx, ColumnChoice(id_col=id_col),
                                          delimiter=None if raw.parquet else raw.delimiter)
    if id_col is not None:  # (not "1 id in the first 200 rows" beside the dialog's count of the whole file)
        more_notes.insert(0, f"'{id_col}' looks like a person id column: one person's rows are read at a time")
    if guess.pair_cols is not None:
        problems.append(_person_problem(guess.pair_cols, None))
    _time_notes(raw, ctx, sample, guess, date_order, notes, problems)
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


def order_note(first_line: int) -> str:
    """The note about a file whose rows are not in time order (``first_line``: the first row out of order)."""
    return f"rows are not in time order: they will be sorted by time (first out-of-order row: row {first_line})"


#: Rows of the time column the preview reads when the sample's dates all read both ways: enough for a day
#: above 12 to turn up in hourly or minute data; only a column still ambiguous then is read whole.
_SETTLE_ROWS = 20_000


def _date_question(raw: _Raw, ctx: _Context, s: pd.Series, fmt: str) -> tuple[str | None, str]:
    """``(example, order)`` of d/d/yyyy dates: the first date that reads either way when every date of the
    column does (else None), and the order they read in. Reads more of the column only while every date read
    so far fits both orders (the first ``_SETTLE_ROWS``, then all): cheap for the usual files."""
    example, mdy, dmy = ambiguous_date(s, fmt)
    asked = _SAMPLE_ROWS
    for nrows in (_SETTLE_ROWS, None):
        if example is None or raw.parquet or len(s) < asked:  # settled, or the whole column was read
            break
        try:
            s = _read_csv(raw, ctx, nrows=nrows, usecols=[s.name], dtype={s.name: object})[s.name]
        except LoadError:  # a malformed row further down (the preview notes it; loading names it)
            break
        example, mdy, dmy = ambiguous_date(s, fmt)
        asked = nrows or 0
    order = "dmy" if dmy is not None and dmy.isna().sum() < mdy.isna().sum() else "mdy"
    return example, order


def _time_notes(raw: _Raw, ctx: _Context, sample: pd.DataFrame, guess: ColumnGuess, date_order: str | None,
                notes: list[str], problems: list[str]) -> None:
    """The preview's word on the time column: d/d/yyyy dates that read either way (a problem until
    ``date_order`` is chosen; judged on the whole column, as loading judges it) and sample rows out of time
    order (a note). Not for a table of many persons, whose rows are in time order per person."""
    col = guess.time_col
    if col is None or col not in sample.columns:
        return
    present = sample[col].dropna()
    first = str(present.iloc[0]).strip() if len(present) and not _is_numeric(present) else ""
    fmt = _time_format_of(first)[0] if first else None
    order = date_order
    if fmt is not None and fmt.startswith("%m/%d/%Y") and date_order is None:
        example, order = _date_question(raw, ctx, sample[col], fmt)
        if example is not None:
            problems.append(date_order_problem(example))
            return
    if problems or guess.id_col is not None or len(sample) < 2:
        return
    try:
        plan = _plan_from(guess, [], ctx)
        plan.sheet, plan.date_order = bool(raw.sheet), order
        t, _ = _times_unchecked(sample, plan, ctx)
    except LoadError:
        return  # (loading names what is wrong)
    late = t[1:] < t[:-1]
    if late.any():
        notes.append(order_note(ctx.lines([int(np.argmax(late)) + 1])[0]))


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
    out_of_order: int = 0  # rows earlier in time than the row above them (loading sorts the rows by time)
    out_of_order_line: int | None = None  # the first of them
    error: str | None = None
    error_option: str | None = None
    #: the fields of the rows listed above, as written (file line -> fields in header order), so that the
    #: dialog can show the rows themselves; empty for Parquet
    examples: dict[int, tuple[str, ...]] = field(default_factory=dict)

    @property
    def order_note(self) -> str | None:
        """What loading does about rows out of time order (None when the file is in time order)."""
        return None if self.out_of_order_line is None else order_note(self.out_of_order_line)

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


def _load_file(path: str | os.PathLike[str], request: ColumnChoice, categories: Sequence[str] | None,
               scan: _Scan | None) -> tuple[Series | None, _Plan]:
    started_ns = _load_started_ns()
    raw = _prepare(path)
    if scan is not None:
        scan.raw = raw
    ctx = _Context(raw.display, raw.path, None if raw.parquet else raw.data)
    _check_options(request, ctx)
    if raw.parquet:
        df = _read_parquet(raw, ctx)
        df.columns = [str(c) for c in df.columns]
        guess, _, problems = _detect(df.head(_SAMPLE_ROWS), ctx, request)
        plan = _plan_from(guess, problems, ctx)
    else:
        header = _raw_header(raw)
        sample = _read_csv(raw, ctx, nrows=_SAMPLE_ROWS)
        if len(sample) == 0:
            raise ctx.error("no data rows (only a header)")
        guess, _, problems = _detect(sample, ctx, request)
        plan = _plan_from(guess, problems, ctx)
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
        request=request,
        categories=categories,
        text_of=text_of,
        started_ns=started_ns,
        scan=scan,
    )
    return series, plan


#: The keyword arguments :func:`load_series` takes besides the file: the fields of :class:`ColumnChoice` and the
#: public category list (what the app may remember between runs).
LOAD_OPTIONS: tuple[str, ...] = (*(f.name for f in dataclasses.fields(ColumnChoice)), "categories")


def load_series(path: str | os.PathLike[str], request: ColumnChoice | None = None, *,
                categories: Sequence[str] | None = None, **fields: Any) -> Series:
    """Read a CSV/TSV (or Parquet, if pyarrow is installed) file into a sorted :class:`Series`.

    ``request`` says how (see :class:`ColumnChoice`); its fields may also be given as keywords (they replace
    those of ``request``), e.g. ``load_series(path, time_col="t", duplicates="first")``. Columns not given
    are detected (see :func:`inspect_table`); if that is ambiguous a LoadError says which option to pass.
    Repeated timestamps are refused unless ``duplicates`` says what they become; with ``skip_missing``, rows
    with an empty field in a column the series needs are set aside. A contact log (``pair_cols``, detected
    when unambiguous) is read for one ``person``; a long table of many persons (``id_col``, see
    :func:`suggest_id_column`) for one ``person_id``: only the rows whose id (as written) equals it go through
    the steps above (row numbers stay the file's). Without ``date_order``, d/d/yyyy dates read in the one order
    every date fits, and a column whose dates all fit both (01/02/2013) is a LoadError asking for it.
    ``categories`` is an optional public category list; labels outside it are an error. Without it, the
    categories are the sorted distinct labels of the rows read (before duplicates are resolved, so the list
    does not change with the duplicate policy). ``source.path`` is the path as given; ``source.columns`` the
    request as resolved; ``source.out_of_order`` counts the rows that were not in time order (the series is
    sorted by time).
    """
    series, _ = _load_file(path, ColumnChoice.of(request, **fields), categories, None)
    assert series is not None
    return series


def scan_table(path: str | os.PathLike[str], request: ColumnChoice | None = None, *,
               categories: Sequence[str] | None = None, **fields: Any) -> TableScan:
    """Run the whole-file checks of :func:`load_series` (same options) and report, instead of stopping at,
    missing values and repeated timestamps; for contact logs and an ``id_col`` also list every id with its row
    count (and, until a person is chosen, check the one with most rows).

    For the import dialog: it shows these findings and the choices that resolve them before loading.
    Costs about one load. Never raises LoadError: any other problem is reported in ``error``.
    """
    # the scan meets every repeat and missing value instead of stopping at the first
    request = ColumnChoice.of(request, **{**fields, "duplicates": "first", "skip_missing": True})
    scan = _Scan()
    kind: Kind | None = None
    error: LoadError | None = None
    try:
        _, plan = _load_file(path, request, categories, scan)
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
        out_of_order=scan.out_of_order,
        out_of_order_line=scan.out_of_order_line,
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


def load_dataframe_series(df: pd.DataFrame, request: ColumnChoice | None = None, *, name: str = "<memory>",
                          categories: Sequence[str] | None = None, delimiter: str = ",", sheet: bool = False,
                          origin: RowOrigin | None = None, **fields: Any) -> Series:
    """Same as :func:`load_series` on an in-memory DataFrame (tests, GUI paste, Parquet): one person's rows
    (``id_col``/``person_id`` do not apply).

    Messages use ``name`` as the file name and number rows as if the frame were written to a CSV with one
    header line (row position 0 -> "row 2"). The frame's index is ignored (rows are taken in order).
    ``source.sha256`` is ``""`` (there are no file bytes). ``delimiter``: that of the text the frame was read
    from as text (``lmdk batch``), ``source.delimiter``; text numbers with decimal commas are read as a file
    with that delimiter would be (:func:`_decimal_mark`). ``sheet``: the rows come from an Excel sheet (a
    numeric time column holds day numbers, as :func:`load_series` reads them). ``origin``: the input file and
    line each row came from (``lmdk batch``); messages then name those instead of positions in the frame.
    """
    started_ns = _load_started_ns()
    request = ColumnChoice.of(request, **fields)
    ctx = _Context(name, name, origin=origin)
    if not isinstance(df, pd.DataFrame):
        raise ctx.error(f"expected a pandas DataFrame, got {type(df).__name__}")
    _check_options(request, ctx)
    if request.id_col is not None:
        raise ctx.error("a frame is read whole: choose one person's rows before reading them", option="id_col")
    frame = df.reset_index(drop=True)
    names = [str(c) for c in frame.columns]
    for c, k in Counter(names).items():
        if k > 1:
            raise ctx.error("this column name appears twice; rename one", column=c)
    frame.columns = names
    guess, _, problems = _detect(frame.head(_SAMPLE_ROWS), ctx, request)
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
        request=request,
        categories=categories,
        text_of=None if _is_time_dtype(frame[plan.time_col]) else (lambda: frame[plan.time_col]),
        started_ns=started_ns,
    )
    assert series is not None
    return series
