"""Value cells as the loader reads them: numbers (also with a decimal comma), category labels, the value columns of each kind."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from .context import _COMMA_NUMBER_RE, _Context, _is_numeric, _is_time_dtype, _Plan, _show


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
