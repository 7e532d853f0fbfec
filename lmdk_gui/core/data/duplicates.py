"""Repeated timestamps and missing values: finding them, reporting them by file row, and the duplicate policies."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .cells import _label_text
from .context import CONTACT_COLUMN, _Context, _fmt_rows, _Plan
from .reading import _Raw
from .series import LoadError


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


def _person_problem(pair: tuple[str, ...], counts: list[tuple[str, int]] | None) -> str:
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
    out_of_order: int = 0
    out_of_order_line: int | None = None
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
