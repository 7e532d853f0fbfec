"""The time series the whole tool works on, and the one error type for bad input.

A :class:`Series` holds ``n`` events in time order (row ``t = 0..n-1`` after sorting by time), each with a
value of one *kind* (DESIGN §2):

* ``numeric``      ``values`` is ``float64`` of shape ``(n,)`` (e.g. kWh);
* ``location``     ``values`` is ``float64`` of shape ``(n, 2)``, columns ``[lat, lon]`` in degrees;
* ``categorical``  ``values`` is ``int64`` codes of shape ``(n,)`` into ``categories`` (labels as text).

Rows are identified by their position; landmarks are sorted arrays of row positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

Kind = Literal["numeric", "location", "categorical"]
KINDS: tuple[Kind, ...] = ("numeric", "location", "categorical")

# How timestamps were written in the input; the release CSV writes them back the same way ("iso-utc": with
# a zone in the input, converted to UTC: written with a Z).
TimeFormat = Literal["iso", "iso-utc", "epoch", "date+hour"]


class LoadError(ValueError):
    """Bad input. The message names the file, the row(s) and the column, and what was expected.

    ``rows`` are 1-based line numbers of the data rows in the file (the header is line 1, so the first data
    row is line 2), ``column`` is the column's name as written in the file. ``option`` names the loader
    option that resolves the problem (e.g. ``"duplicates"``, ``"skip_missing"``, ``"person"``) and
    ``choices`` its values that would work, so that each surface can word the remedy itself (the command's
    flag, the dialog's chooser) instead of the message carrying API words.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        rows: list[int] | None = None,
        column: str | None = None,
        option: str | None = None,
        choices: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.path = path
        self.rows = list(rows) if rows else []
        self.column = column
        self.option = option
        self.choices = tuple(choices)


@dataclass(frozen=True)
class ColumnChoice:
    """How a table is to be read: which column plays which role, and what to do with rows that do not fit.

    The one request that :func:`~lmdk_gui.core.data.loader.load_series` takes (or builds from its keyword
    arguments), that a project saves (``columns``), that :class:`SourceInfo` records as resolved (every
    detected column filled in) and that ``lmdk batch`` applies to each person. ``None`` means "detect it" for
    a column and "as detected" for ``kind`` and ``date_order``. The public category list is not part of it: it
    is a privacy setting (``PrivacySettings.categories``), passed to the loader beside the request.

    * ``time_col``: the timestamps (with ``hour_col``: the dates, and ``hour_col`` their hours 0–23);
    * ``value_col``: the values of a numeric or categorical series; ``lat_col``/``lon_col``: a location's;
    * ``kind``: ``"numeric"``, ``"location"`` or ``"categorical"`` (e.g. numeric-looking ids as categories);
    * ``duplicates``: what repeated timestamps become (``error``, ``drop-exact``, ``first``, ``last``,
      ``mean``; see ``loader.DUPLICATE_POLICIES``); ``skip_missing``: set aside rows with an empty field in a
      needed column instead of refusing them;
    * ``pair_cols``: a contact log's two person-id columns, read for one ``person`` (the value is the other
      id of each contact, or the other person's class from ``pair_class_cols``);
    * ``id_col``: a long table's person-id column, read for one ``person_id`` (ids as written);
    * ``date_order``: how d/d/yyyy dates read, ``"dmy"`` or ``"mdy"``.

    Ids are kept as text and column pairs as tuples (``"i,j"`` and lists are accepted and converted), so
    that requests compare equal however they were spelled.
    """

    time_col: str | None = None
    value_col: str | None = None
    lat_col: str | None = None
    lon_col: str | None = None
    hour_col: str | None = None
    kind: Kind | None = None
    duplicates: str = "error"
    skip_missing: bool = False
    pair_cols: tuple[str, ...] | None = None
    person: str | None = None
    pair_class_cols: tuple[str, ...] | None = None
    id_col: str | None = None
    person_id: str | None = None
    date_order: str | None = None

    def __post_init__(self) -> None:
        # Keyword callers (the command line, settings saved by the app) pass ids as numbers and column
        # pairs as "i,j" or lists; the loader checks the names against the file.
        for name in ("pair_cols", "pair_class_cols"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, tuple):
                names = v.split(",") if isinstance(v, str) else v
                object.__setattr__(self, name, tuple(str(c).strip() for c in names))
        for name in ("person", "person_id"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, str):
                object.__setattr__(self, name, str(v))
        object.__setattr__(self, "skip_missing", bool(self.skip_missing))

    @classmethod
    def of(cls, request: ColumnChoice | None = None, **fields: Any) -> ColumnChoice:
        """``request`` (default: detect everything) with the given fields replaced; an unknown field name is
        a TypeError, as an unknown keyword argument was."""
        return replace(request if request is not None else cls(), **fields)

    @classmethod
    def from_series(cls, series: Series) -> ColumnChoice:
        """The request that reads ``series`` again (its source's, with every detected column filled in)."""
        return series.source.columns if series.source is not None else cls(kind=series.kind)

    def to_dict(self) -> dict[str, Any]:
        """The project file's ``columns`` object (DESIGN §9)."""
        d: dict[str, Any] = {"time_col": self.time_col, "value_col": self.value_col, "lat_col": self.lat_col,
                             "lon_col": self.lon_col, "hour_col": self.hour_col, "kind": self.kind,
                             "duplicates": self.duplicates}
        # Written only when used, so that projects without them read the same in earlier versions.
        if self.skip_missing:
            d["skip_missing"] = True
        if self.pair_cols is not None:
            d.update(pair_cols=list(self.pair_cols), person=self.person,
                     pair_class_cols=None if self.pair_class_cols is None else list(self.pair_class_cols))
        if self.id_col is not None:
            d.update(id_col=self.id_col, person_id=self.person_id)
        if self.date_order is not None:
            d["date_order"] = self.date_order
        return d


@dataclass(frozen=True)
class SourceInfo:
    """Where a series came from (recorded in the sidecar and project files) and how it was read."""

    path: str
    sha256: str
    #: the columns the values were read from (a contact log's value column is made, not read)
    value_cols: tuple[str, ...]
    #: the request as resolved: every detected column filled in (``columns.time_col`` is never None)
    columns: ColumnChoice
    time_format: TimeFormat = "iso"
    delimiter: str = ","
    #: what loading dropped: exact duplicate rows (same time and value) and rows skipped for missing values
    exact_duplicates_dropped: int = 0
    missing_skipped: int = 0
    #: data rows read from the file for this series (its person's, for a long table or contact log),
    #: counting those dropped as exact duplicates, merged as repeats or skipped for missing values. Private:
    #: how many rows were dropped is a fact about the data that no release protects (kept in the ledger).
    rows_read: int = 0
    #: rows whose time is earlier than that of the row above them in the file: the rows were sorted by time
    #: (0 = the file was in time order)
    out_of_order: int = 0

    @property
    def time_col(self) -> str:
        """The time column read (with ``columns.hour_col``: the dates)."""
        assert self.columns.time_col is not None
        return self.columns.time_col


@dataclass(frozen=True, eq=False)
class Periods:
    """A series of periods made from a series of events (DESIGN §12, :mod:`.periods`): what its mechanism
    needs to know, all public. ``counts[j]`` is |P_j|, the number of events in period j; ``aggregate`` is
    ``"sum"`` or ``"mean"``; ``resolution`` the period length as given (e.g. ``"1D"``), ``label`` in words
    (e.g. ``"day"``)."""

    resolution: str
    label: str
    aggregate: str
    counts: np.ndarray
    #: the public bounds each event was clamped to before aggregation (None: not clamped)
    bounds: tuple[float, float] | None = None

    def multipliers(self, landmarks: np.ndarray) -> np.ndarray:
        """S_j/Δ for every period when ``landmarks`` are the landmark periods: a landmark period changes by
        at most Δ·|P_j| (sum), a regular one by Δ (only the one regular event can fall in it); divided by
        |P_j| for the mean."""
        c = self.counts.astype(np.float64)
        m = np.ones_like(c)
        lm = np.asarray(landmarks, dtype=np.int64)
        m[lm] = c[lm]
        return m / c if self.aggregate == "mean" else m


@dataclass(frozen=True, eq=False)
class Series:
    kind: Kind
    times: np.ndarray  # datetime64[ns], sorted ascending, unique
    values: np.ndarray  # see module docstring
    categories: tuple[str, ...] | None = None  # categorical only: label of each code
    source: SourceInfo | None = None
    name: str = "series"
    unit: str = ""  # e.g. "kWh"; "deg" for location
    #: a period series (a coarser release resolution): the periods' public counts and aggregate
    periods: Periods | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind {self.kind!r}")
        n = len(self.times)
        if self.kind == "location":
            if self.values.shape != (n, 2):
                raise ValueError("location values must have shape (n, 2)")
        elif self.values.shape != (n,):
            raise ValueError(f"{self.kind} values must have shape (n,)")
        if self.kind == "categorical" and self.categories is None:
            raise ValueError("categorical series need categories")

    def __len__(self) -> int:
        return len(self.times)

    @property
    def n(self) -> int:
        return len(self.times)

    @property
    def value_columns(self) -> tuple[str, ...]:
        if self.source is not None:
            return self.source.value_cols
        return ("lat", "lon") if self.kind == "location" else ("value",)

    @classmethod
    def from_arrays(
        cls,
        values: np.ndarray | list,
        *,
        kind: Kind | None = None,
        times: np.ndarray | None = None,
        categories: tuple[str, ...] | list[str] | None = None,
        name: str = "series",
    ) -> Series:
        """Build a series in memory (tests, synthetic data). Times default to one per hour from 2000-01-01."""
        arr = np.asarray(values)
        if kind is None:
            kind = "location" if arr.ndim == 2 else ("numeric" if arr.dtype.kind in "fiu" else "categorical")
        n = arr.shape[0]
        if times is None:
            times = np.datetime64("2000-01-01T00:00:00", "ns") + np.arange(n) * np.timedelta64(3600, "s")
        times = np.asarray(times).astype("datetime64[ns]")
        if kind == "categorical":
            if categories is None:
                labels, codes = np.unique(arr.astype(str), return_inverse=True)
                categories = tuple(str(x) for x in labels)
                arr = codes.astype(np.int64)
            else:
                arr = arr.astype(np.int64)
            return cls(kind, times, arr, tuple(categories), name=name)
        return cls(kind, times, arr.astype(np.float64), None, name=name)
