"""The release report (issue 45): one self-contained HTML page a data steward can hand on.

``lmdk report RELEASE.csv -o report.html`` and the app's File › Save release report… read the release and
its sidecar (:func:`read_release`) and write a page (:func:`.report_html.render_report`) that a non-specialist reads in
two minutes: the sidecar's statement in plain words, the numbers behind it, a figure of the released series
with the noise band the public settings justify, and how to read it. Nothing else goes into the public
report — no true value, no landmark position, no input file name — so it can be published with the release.

The *private* section (:class:`PrivateFacts`, only when asked: ``--private INPUT``, the app by default) is
computed from the original data as well: the error of this release against the true series, the error of
the constant yardstick (the series' median at every event), the landmark count and rule, and the ledger's
composed ε for this input. It is marked "private — do not publish".

Sidecar fields are read with ``.get``: a field a later format adds or drops shows up or is left out.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import report_svg
from .writers import FORMULA_STARTS, AtomicFile, neutralise_cell, sidecar_path

__all__ = ["PrivateFacts", "PublicRelease", "ReportError", "private_facts", "read_release", "write_report"]

#: Laplace noise of scale b stays within ±b·ln 10 nine times in ten.
LAPLACE_Q90 = math.log(10.0)


class ReportError(ValueError):
    """A release (or input) that cannot be reported on: one line naming the file and what was expected."""


@dataclass(frozen=True)
class PublicRelease:
    """What the public files say: the sidecar, and the release's timestamps (epoch seconds), values
    (numeric ``(n,)``, location ``(n, 2)`` lat/lon, categorical codes into ``labels``) and the optional
    per-event budgets (the ``epsilon`` column)."""

    path: Path
    sidecar: dict[str, Any]
    kind: str
    first_last: tuple[str, str] | None  # the first and last timestamp, as written
    seconds: np.ndarray
    values: np.ndarray
    labels: tuple[str, ...] | None = None
    budgets: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.seconds.size)

    @property
    def raw(self) -> bool:
        """True when the values are the raw noisy release (no post-processing recorded)."""
        return not self.sidecar.get("post_processing")


# ------------------------------------------------------------------------------------------ reading
def read_release(path: str | os.PathLike) -> PublicRelease:
    """The release CSV and its sidecar (``PATH.json``), read and checked against each other."""
    p = Path(path)
    side = sidecar_path(p)
    try:
        doc = json.loads(side.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"{side}: no sidecar next to the release (a report needs RELEASE.csv and "
                          "RELEASE.csv.json, as lmdk export writes them)") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise ReportError(f"{side}: not a release sidecar (JSON expected: {e})") from None
    if not isinstance(doc, dict) or "epsilon" not in doc:
        raise ReportError(f"{side}: not a release sidecar (no 'epsilon' field)")
    kind = str(doc.get("kind") or "numeric")
    n_values = 2 if kind == "location" else 1
    try:
        cols = [str(c) for c in pd.read_csv(p, nrows=0).columns]
        if len(cols) < 1 + n_values:
            raise ReportError(f"{p}: expected a timestamp column and {n_values} value column(s) for a {kind} "
                              f"release, found {len(cols)} column(s)")
        # Timestamps and labels as text; numbers parsed by pandas (a damaged cell falls back to _floats,
        # which names it). Only an empty cell is missing: "NA" is a category label like any other.
        text = {cols[0]: str, **({cols[1]: str} if kind == "categorical" else {})}
        df = pd.read_csv(p, dtype=text, keep_default_na=False, na_values={c: [""] for c in cols if c not in text})
    except FileNotFoundError:
        raise ReportError(f"{p}: no such file") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise ReportError(f"{p}: not a release CSV ({str(e).splitlines()[0]})") from None
    seconds = _seconds(p, cols[0], df[cols[0]])
    first_last = (str(df[cols[0]].iloc[0]), str(df[cols[0]].iloc[-1])) if len(df) else None
    labels = None
    if kind == "categorical":
        values, labels = _codes(df[cols[1]].to_numpy(dtype=object), doc)
    elif kind == "location":
        values = np.column_stack([_floats(p, c, df[c].to_numpy()) for c in cols[1:3]])
    else:
        values = _floats(p, cols[1], df[cols[1]].to_numpy())
    rest = cols[1 + n_values:]
    budgets = _floats(p, "epsilon", df["epsilon"].to_numpy()) if "epsilon" in rest else None
    return PublicRelease(p, doc, kind, first_last, seconds, values, labels, budgets)


def _floats(path: Path, column: str, cells: np.ndarray) -> np.ndarray:
    if cells.dtype.kind in "fiu":  # parsed by read_csv already
        return cells.astype(np.float64)
    out = pd.to_numeric(pd.Series(cells), errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(np.isnan(out) & (pd.Series(cells).str.strip() != "").to_numpy())
    if bad.size:
        i = int(bad[0])
        raise ReportError(f"{path}: row {i + 2}, column {column!r}: expected a number, got {str(cells[i])[:40]!r}")
    return out


def _seconds(path: Path, column: str, cells: pd.Series) -> np.ndarray:
    """Epoch seconds of the release's timestamps (epoch numbers, or ``YYYY-MM-DD HH:MM:SS[Z]``)."""
    if not cells.size:
        return np.zeros(0)
    s = cells.str.strip()
    if re.fullmatch(r"-?\d+(\.\d*)?", str(s.iloc[0])):  # epoch seconds (the writer never mixes the two)
        nums = pd.to_numeric(s, errors="coerce")
        if not nums.isna().any():
            return nums.to_numpy(dtype=np.float64)
    t = pd.to_datetime(s.str.removesuffix("Z"), errors="coerce", format="ISO8601")
    bad = np.flatnonzero(t.isna().to_numpy())
    if bad.size:
        i = int(bad[0])
        raise ReportError(f"{path}: row {i + 2}, column {column!r}: expected a timestamp "
                          f"(epoch seconds or YYYY-MM-DD HH:MM:SS), got {str(cells.iloc[i])[:40]!r}")
    return t.to_numpy(dtype="datetime64[ns]").astype(np.int64) / 1e9


def _codes(cells: np.ndarray, doc: dict[str, Any]) -> tuple[np.ndarray, tuple[str, ...]]:
    """Category codes of the released labels, in the sidecar's category order (labels it does not list
    are added after). A neutralised cell (``'=x``) is read back as the label it stands for."""
    neutral = doc.get("formula_cells", "neutralised") != "verbatim"
    labels = [str(c) for c in (doc.get("categories") or [])]
    index = {c: i for i, c in enumerate(labels)}
    codes = np.empty(cells.size, dtype=np.int64)
    for i, cell in enumerate(cells):
        text = str(cell)
        if neutral and text.startswith("'") and text[1:].startswith(FORMULA_STARTS) and \
                neutralise_cell(text[1:]) == text:
            text = text[1:]
        if text == "":
            codes[i] = -1
            continue
        if text not in index:
            index[text] = len(labels)
            labels.append(text)
        codes[i] = index[text]
    return codes, tuple(labels)


# ------------------------------------------------------------------------------ what the noise means
def release_epsilon(doc: dict[str, Any]) -> float:
    """The ε the release itself spent (ε minus the dummy selection's share, when there was one)."""
    eps = float(doc.get("epsilon") or 0.0)
    sel = doc.get("epsilon_selection")
    if isinstance(sel, dict) and sel.get("epsilon_release") is not None:
        return float(sel["epsilon_release"])
    if isinstance(sel, dict) and sel.get("epsilon") is not None:
        return eps - float(sel["epsilon"])
    return eps


def noise_half_width(rel: PublicRelease) -> np.ndarray | float | None:
    """Half the width of the 90% band of one event's raw noise, in the data's units (numeric) or metres
    (location): per event from the ``epsilon`` column when the release has one, else at the largest budget
    an event can have (the release's ε): the narrowest band, since events with less budget get more noise."""
    doc = rel.sidecar
    scale = doc.get("sensitivity") if rel.kind == "numeric" else doc.get("radius_m")
    if rel.kind == "categorical" or scale is None:
        return None
    q = LAPLACE_Q90 if rel.kind == "numeric" else report_svg.GAMMA2_Q90
    if rel.budgets is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            hw = q * float(scale) / rel.budgets
        hw[~np.isfinite(hw)] = np.nan  # events without fresh noise (republished) have no band of their own
        return hw
    eps = release_epsilon(doc)
    return q * float(scale) / eps if eps > 0 else None


def narrowest(half_width: np.ndarray | float | None) -> float | None:
    """The smallest finite band half-width (None when there is none)."""
    if half_width is None:
        return None
    a = np.asarray(half_width, dtype=float)
    a = a[np.isfinite(a)]
    return float(a.min()) if a.size else None


def keep_probability(rel: PublicRelease) -> float | None:
    """Randomized response: the largest probability that a released category is the true one."""
    k = len(rel.sidecar.get("categories") or rel.labels or ())
    eps = release_epsilon(rel.sidecar)
    if k < 2 or eps <= 0:
        return None
    return 1.0 / (1.0 + (k - 1) * math.exp(-eps))


def figure(rel: PublicRelease) -> str:
    """The inline SVG figure of the release."""
    if rel.kind == "location":
        return report_svg.location_figure(rel.values, raw=rel.raw, radius90_m=narrowest(noise_half_width(rel)))
    if rel.kind == "categorical":
        return report_svg.categorical_figure(rel.seconds, rel.values, rel.labels or (), raw=rel.raw)
    b = rel.sidecar.get("bounds")
    bounds = (float(b[0]), float(b[1])) if isinstance(b, list | tuple) and len(b) == 2 else None
    return report_svg.numeric_figure(rel.seconds, rel.values, raw=rel.raw, half_width=noise_half_width(rel),
                                     bounds=bounds, units=rel.sidecar.get("units"))


# ---------------------------------------------------------------------------------------- private
@dataclass(frozen=True)
class PrivateFacts:
    """What only the data holder can know: the release's error against the true series and the rest of
    the report's private section."""

    input_name: str
    unit: str  # the error's unit: the data's units, "m", or "share of events"
    mae: float
    median: float
    p90: float
    yardstick: float
    landmarks: int | None  # None: not given
    rule: str | None
    releases: int | None = None  # releases of this input in the ledger, and their total ε
    composed_epsilon: float | None = None


def private_facts(rel: PublicRelease, series, landmarks, *, rule: str | None = None) -> PrivateFacts:
    """The private section's facts for ``rel`` made from ``series`` (a loaded :class:`Series`) with
    ``landmarks`` (row indices; None when not known). Refuses an input whose events are not the release's."""
    from ..analysis.metrics import constant_error
    from ..engine.pipeline import KINDS
    from . import ledger
    from .keys import series_digest

    name = Path(series.source.path).name if series.source is not None else series.name
    if series.kind != rel.kind or series.n != rel.n:
        raise ReportError(f"{name}: {series.n:,} {series.kind} events, the release {rel.n:,} {rel.kind} "
                          "events: not the input of this release")
    truth_s = series.times.astype("datetime64[ns]").astype(np.int64) / 1e9
    off = np.flatnonzero(np.abs(truth_s - rel.seconds) > 1e-3)
    if off.size:
        raise ReportError(f"{name}: row {int(off[0])}'s timestamp differs from the release's: not the input "
                          "of this release")
    if rel.kind == "categorical":
        cats = np.asarray(series.categories, dtype=object)
        truth = cats[series.values]
        released = np.asarray(rel.labels or (), dtype=object)[np.maximum(rel.values, 0)]
        err = (truth != released).astype(np.float64)
        err[rel.values < 0] = np.nan
        unit = "share of events"
    elif rel.kind == "location":
        err = KINDS["location"].error(series.values, rel.values)
        unit = "m"
    else:
        err = np.abs(rel.values - series.values)
        unit = str(rel.sidecar.get("units") or series.unit or "")
    ok = err[np.isfinite(err)]
    mae, med_e, p90 = (float(np.mean(ok)), *map(float, np.percentile(ok, [50, 90]))) if ok.size else (math.nan,) * 3
    yard = constant_error(series)  # the yardstick every other surface shows (analysis.metrics)
    src = series.source
    found, eps = ledger.composition(series_digest(series), src.sha256 if src is not None else None)
    k, total = (found, eps) if found else (None, None)
    count = None if landmarks is None else int(np.asarray(landmarks).size)
    return PrivateFacts(name, unit, mae, med_e, p90, float(yard), count, rule, k, total)


# ------------------------------------------------------------------------------------------ writing
def write_report(path: str | os.PathLike, html_text: str) -> Path:
    """Write the page atomically (a reader never sees half a report)."""
    with AtomicFile(path) as f:
        f.file.write(html_text)
        f.commit()
    return Path(path)
