"""Timestamps as the loader reads them: ISO, US and dotted dates, epochs, Excel days, date + hour columns; all to UTC nanoseconds."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from .cells import _numbers
from .context import _DOT_RE, _ISO_RE, _US_RE, _Context, _is_numeric, _is_time_dtype, _Plan, _show
from .series import LoadError, TimeFormat

# datetime64[ns] covers 1677-09-21 .. 2262-04-11; keep a day of margin so that unit conversions never wrap.
_T_MIN = np.datetime64("1677-09-22T00:00:00")


_T_MAX = np.datetime64("2262-04-10T00:00:00")


_EPOCH_MIN_S = int(_T_MIN.astype("datetime64[s]").astype(np.int64))


_EPOCH_MAX_S = int(_T_MAX.astype("datetime64[s]").astype(np.int64))


_NS_PER_S = 1_000_000_000


_NS_PER_HOUR = 3600 * _NS_PER_S


_NS_PER_DAY = 24 * _NS_PER_HOUR


# A zone suffix after a time of day (a bare date "2013-01-01" must not count as "-01").
_TZ_SUFFIX = r"\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:Z|[+-]\d{2}(?::?\d{2})?)\s*$"


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


def _parse_text_times(s: pd.Series, ctx: _Context, column: str, date_order: str | None = None) -> np.ndarray:
    """Text timestamps -> int64 ns (naive; zone-aware values converted to UTC, then the zone dropped).

    Fast path (the only cost on good files): one vectorised ``pd.to_datetime``. For ISO-like text we use
    ``format="ISO8601"`` directly: it is pandas' strict ISO parser, and gives the same result as the exact
    detected format followed by the ISO fallback, only faster. d/d/yyyy dates use the exact format of
    ``date_order`` ("mdy" or "dmy"); without it, the one order every date fits (see :func:`_either_order`).
    Missing values, bad text and time-zone mixing are diagnosed only once something failed.
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
            if date_order is None:
                parsed, fmt = _either_order(s, fmt, ctx, column)
            else:
                fmt = fmt if date_order == "mdy" else fmt.replace("%m/%d", "%d/%m")
                parsed = _to_datetime(s, fmt)
        else:
            # One zone throughout comes back zone-aware; several offsets (DST) or naive mixed with zoned
            # raise ValueError and are sorted out below.
            parsed = _naive_utc(_to_datetime(s, "ISO8601"))
    except LoadError:
        raise  # (a ValueError too: the question of the date order)
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
        if fmt is not None and fmt.startswith(("%m/%d/%Y", "%d/%m/%Y")):
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
        example = {"%m/": "1/31/2013", "%d/": "31/01/2013", "%d.": "31.01.2013 00:00"}.get(
            (fmt or "")[:3], "2013-01-31 00:00:00")
        raise ctx.error(
            f"expected a timestamp like {example!r}, got {_show(s.iloc[bad[0]])}",
            positions=bad,
            column=column,
        )
    return _dt_to_ns(parsed.to_numpy(), ctx, column, s)


#: the remedy for dates that read either way (the loader's problem and error say it; option ``date_order``)
DATE_ORDER_CHOICE = ("choose the date order (--date-order dmy|mdy in the command, 'Date order' in the app)")


def date_order_problem(example: str) -> str:
    """What the preview and the loader say about a column of d/d/yyyy dates that read either way."""
    return f"dates like {example} read either way: {DATE_ORDER_CHOICE}"


def ambiguous_date(s: pd.Series, fmt: str) -> tuple[str | None, pd.Series, pd.Series | None]:
    """``(example, month_first, day_first)`` for d/d/yyyy text (``fmt`` month first): ``example`` is the first
    value that reads as two different dates when every date fits both orders, else None. ``day_first`` is
    None when every value fits month first (then it is not parsed: a date read month first also fits day
    first exactly when its day is at most 12)."""
    mdy = _to_datetime(s, fmt)
    present = s.notna().to_numpy()
    m_bad = mdy.isna().to_numpy() & present
    if not m_bad.any():
        day, month = mdy.dt.day.to_numpy(), mdy.dt.month.to_numpy()
        if not np.all((day <= 12) | ~present):
            return None, mdy, None
        differ = np.flatnonzero(present & (day != month))
        return (str(s.iloc[differ[0]]).strip() if len(differ) else None), mdy, None
    dmy = _to_datetime(s, fmt.replace("%m/%d", "%d/%m"))
    d_bad = dmy.isna().to_numpy() & present
    slashed = present & ~(m_bad & d_bad)  # (rows in another layout are judged on their own)
    if ((m_bad | d_bad) & slashed).any():
        return None, mdy, dmy
    differ = np.flatnonzero(slashed & (mdy.to_numpy() != dmy.to_numpy()))
    return (str(s.iloc[differ[0]]).strip() if len(differ) else None), mdy, dmy


def _either_order(s: pd.Series, fmt: str, ctx: _Context, column: str) -> tuple[pd.Series, str]:
    """d/d/yyyy dates without a chosen order: month first, or day first when every date fits day/month but
    some not month/day (a first field above 12). When every date fits both and some read differently
    (01/02/2013), there is no telling: a LoadError asks for the order (option ``date_order``)."""
    example, mdy, dmy = ambiguous_date(s, fmt)
    if example is not None:
        raise ctx.error(date_order_problem(example), column=column, option="date_order",
                        choices=("dmy", "mdy"))
    if dmy is not None and not (dmy.isna().to_numpy() & s.notna().to_numpy()).any():
        return dmy, fmt.replace("%m/%d", "%d/%m")  # every row fits day/month, some not month/day
    return mdy, fmt


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
            day_ns = _parse_text_times(s, ctx, col, plan.date_order)
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
    ns = _parse_text_times(s, ctx, col, plan.date_order)  # (one column never mixes zoned and naive times: refused there)
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
