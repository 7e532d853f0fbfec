"""Which column holds what: time, value(s), location pair, person id — guessed from names and contents (the loader's detection)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from .cells import _comma_numbers
from .context import (
    _COMMA_NUMBER_RE,
    _DOT_RE,
    _ISO_RE,
    _US_RE,
    CONTACT_COLUMN,
    ColumnGuess,
    _Context,
    _is_numeric,
    _is_time_dtype,
    _norm,
    _Plan,
)
from .series import KINDS, ColumnChoice

#: Rows read to guess column types (the full read then checks every row).
_SAMPLE_ROWS = 200


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
    return _decimal_of(sample, plan.kind, plan.value_cols, delimiter)


def _decimal_of(sample: pd.DataFrame, kind: str | None, value_cols: Sequence[str], delimiter: str) -> str:
    """:func:`_decimal_mark` for a kind and value columns (also before a plan exists: the preview's notes)."""
    if delimiter == "," or kind == "categorical":
        return "."
    comma = False
    for c in value_cols:
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


def _number_notes(sample: pd.DataFrame, kind: str, cols: Sequence[str], delimiter: str | None) -> list[str]:
    """The preview's word on value columns written as text, as loading will read them: numbers with a
    decimal comma (:func:`_decimal_of`), or text that loading will report. ``delimiter`` None: no text file
    (Parquet, a frame), where only a decimal point is read."""
    decimal = "." if delimiter is None else _decimal_of(sample, kind, cols, delimiter)
    notes = []
    for c in cols:
        if _is_numeric(sample[c]):
            continue
        text = sample[c].dropna().astype(str).str.strip()
        readable = pd.to_numeric(text if decimal == "." else _comma_numbers(text), errors="coerce").notna()
        if decimal == ",":
            with_comma = text[text.str.contains(",", regex=False) & readable]
            if len(with_comma):
                shown = with_comma.iloc[0]
                notes.append(f"'{c}' uses a decimal comma: {shown} is read as {_comma_numbers(with_comma).iloc[0]}")
        if not readable.all():
            notes.append(f"'{c}' has non-numeric text in the first rows: loading will report it")
    return notes


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


def _detect(sample: pd.DataFrame, ctx: _Context, request: ColumnChoice, *,
            delimiter: str | None = None) -> tuple[ColumnGuess, list[str], list[str]]:
    """Guess the column roles, honouring any explicit choice of ``request``.

    Returns ``(guess, notes, problems)``: ``guess`` is ``request`` with the columns found filled in,
    ``notes`` are informative, ``problems`` say what is still ambiguous or missing and which option resolves
    it (load_series raises them; inspect_table shows them). Explicitly named columns that do not exist raise
    LoadError right away. ``delimiter``: that of the text file the sample comes from (decimal commas are read
    only there, see :func:`_decimal_mark`).
    """
    kind: str | None = request.kind
    columns = [str(c) for c in sample.columns]
    notes: list[str] = []
    problems: list[str] = []
    if kind is not None and kind not in KINDS:
        raise ctx.error(f"unknown kind {kind!r}; choose one of: " + ", ".join(KINDS))

    def find(opt_value: str | None, opt_name: str) -> str | None:
        return None if opt_value is None else _match_column(opt_value, columns, ctx, opt_name)

    time_col = find(request.time_col, "time_col")
    value_col = find(request.value_col, "value_col")
    lat_col = find(request.lat_col, "lat_col")
    lon_col = find(request.lon_col, "lon_col")
    hour_col = find(request.hour_col, "hour_col")
    id_col = find(request.id_col, "id_col")
    if id_col is not None and id_col in (time_col, value_col, lat_col, lon_col, hour_col):
        raise ctx.error("the person id column cannot also be the time or a value", column=id_col, option="id_col")
    by_norm: dict[str, list[str]] = {}
    for c in columns:
        if c != id_col:
            by_norm.setdefault(_norm(c), []).append(c)

    time_col, hour_col = _guess_time(sample, columns, by_norm, ctx, notes, problems, time_col=time_col,
                                     hour_col=hour_col, taken=(value_col, lat_col, lon_col, id_col))
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
    pair_guess = _guess_pair(sample, columns, rest, ctx, notes, request, value_col=value_col, lat_col=lat_col,
                             lon_col=lon_col, time_col=time_col, hour_col=hour_col, id_col=id_col,
                             located=bool(lats and lons))
    if pair_guess is not None:
        return pair_guess, notes, problems
    # --- kind and value column(s)
    kind, value_col, lat_col, lon_col = _guess_value(sample, rest, ctx, problems, kind=kind, value_col=value_col,
                                                     lat_col=lat_col, lon_col=lon_col, lats=lats, lons=lons,
                                                     numeric=numeric, text=text)
    if kind == "categorical" and value_col in idlike:
        notes.append(f"'{value_col}' holds whole numbers named like ids: read as labels (categorical); "
                     "choose the kind numeric if they are quantities")
    if kind in ("numeric", "categorical") and value_col is not None:
        ignored = [c for c in rest if c != value_col]
        if ignored:
            notes.append(f"column(s) not used: {', '.join(ignored)}")
    if kind == "numeric" and value_col is not None:
        notes += _number_notes(sample, kind, [value_col], delimiter)
    elif kind == "location" and lat_col is not None and lon_col is not None:
        notes += _number_notes(sample, kind, [lat_col, lon_col], delimiter)

    guess = replace(request, time_col=time_col, value_col=value_col, lat_col=lat_col, lon_col=lon_col,
                    hour_col=hour_col, kind=kind, id_col=id_col, person=None)  # type: ignore[arg-type]
    return guess, notes, problems


def _guess_time(sample: pd.DataFrame, columns: list[str], by_norm: dict[str, list[str]], ctx: _Context,
                notes: list[str], problems: list[str], *, time_col: str | None, hour_col: str | None,
                taken: tuple[str | None, ...]) -> tuple[str | None, str | None]:
    """The time column (and the hour column of a date + hour layout): named, or the only one holding dates."""
    value_col, lat_col, lon_col, id_col = taken
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
    return time_col, hour_col


def _guess_pair(sample: pd.DataFrame, columns: list[str], rest: list[str], ctx: _Context, notes: list[str],
                request: ColumnChoice, *, value_col: str | None, lat_col: str | None, lon_col: str | None,
                time_col: str | None, hour_col: str | None, id_col: str | None,
                located: bool) -> ColumnGuess | None:
    """A contact log's guess (two id columns, the person followed may be in either), or None. ``request``
    gives the kind, pair and class columns and person asked for; the other columns are those already found."""
    kind, person = request.kind, request.person
    pair = _two_columns(request.pair_cols, "pair_cols", columns, ctx)
    if pair is None and kind in (None, "categorical") and value_col is None \
            and lat_col is None and lon_col is None and not (kind is None and located):
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
        classes = _two_columns(request.pair_class_cols, "pair_class_cols", columns, ctx)
        notes.append(f"contact log: person ids in columns {pair[0]}, {pair[1]}; the value is the other "
                     "person of each contact" + (f" (their class, from {classes[0]}, {classes[1]})"
                                                 if classes else ""))
        return replace(request, time_col=time_col, value_col=None, lat_col=None, lon_col=None, hour_col=hour_col,
                       kind="categorical", pair_cols=pair, pair_class_cols=classes,
                       person=None if person is None else person.strip(), id_col=id_col)
    if request.pair_class_cols is not None:
        raise ctx.error("class columns need the two id columns of a contact log (pair_cols)",
                        option="pair_cols")

    return None


def _guess_value(sample: pd.DataFrame, rest: list[str], ctx: _Context, problems: list[str], *, kind: str | None,
                 value_col: str | None, lat_col: str | None, lon_col: str | None, lats: list[str],
                 lons: list[str], numeric: list[str], text: list[str],
                 ) -> tuple[str | None, str | None, str | None, str | None]:
    """The kind and the value column(s): a location pair, a numeric column, or a text column of labels."""
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
    return kind, value_col, lat_col, lon_col


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
                     guess.pair_class_cols, guess.person, guess.id_col, guess.person_id, date_order=guess.date_order)
    if guess.kind == "location":
        assert guess.lat_col is not None and guess.lon_col is not None
        values: tuple[str, ...] = (guess.lat_col, guess.lon_col)
    else:
        assert guess.value_col is not None
        values = (guess.value_col,)
    return _Plan(guess.time_col, guess.hour_col, guess.kind, values, id_col=guess.id_col, person_id=guess.person_id,
                 date_order=guess.date_order)
