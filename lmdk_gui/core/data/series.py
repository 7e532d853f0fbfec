"""The time series the whole tool works on, and the one error type for bad input.

A :class:`Series` holds ``n`` events in time order (row ``t = 0..n-1`` after sorting by time), each with a
value of one *kind* (DESIGN §2):

* ``numeric``      ``values`` is ``float64`` of shape ``(n,)`` (e.g. kWh);
* ``location``     ``values`` is ``float64`` of shape ``(n, 2)``, columns ``[lat, lon]`` in degrees;
* ``categorical``  ``values`` is ``int64`` codes of shape ``(n,)`` into ``categories`` (labels as text).

Rows are identified by their position; landmarks are sorted arrays of row positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

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
class SourceInfo:
    """Where a series came from (recorded in the sidecar and project files)."""

    path: str
    sha256: str
    time_col: str
    value_cols: tuple[str, ...]
    time_format: TimeFormat = "iso"
    hour_col: str | None = None
    duplicates: str = "error"
    delimiter: str = ","
    skip_missing: bool = False
    #: contact logs read as "the contacts of one person": the two id columns, the person followed and the
    #: optional class columns (then the value is the other person's class instead of their id)
    pair_cols: tuple[str, str] | None = None
    person: str | None = None
    pair_class_cols: tuple[str, str] | None = None
    #: a long table of many persons read for one: the id column and the person's id (issue 16)
    id_col: str | None = None
    person_id: str | None = None
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
    #: how dates written d/d/yyyy were read: "dmy" (day first), "mdy" (month first), or None (as detected:
    #: only dates that fit one order, or no such dates)
    date_order: str | None = None


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
