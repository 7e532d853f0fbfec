"""Release files (DESIGN §9): the protected CSV, written atomically, and its JSON sidecar.

The CSV is written to a hidden temporary file *in the target folder* (so the final rename is atomic on the
same file system), flushed and fsync'ed, and renamed over the target only when it is complete. Anything
that goes wrong — an exception, a cancel, a failed guarantee check — removes the temporary file, so the
target path either keeps its previous content or holds the complete new release, never a partial one.

Temporary names are short (``.lmdk-XXXXXXXX.part``: a legal 255-byte target name stays legal) and locked
(``flock``) while their writer lives, so any later write into the folder removes a killed writer's debris
and never a live one's. :class:`PairLock` serialises the commit of a CSV/sidecar pair within a folder.
Text cells a spreadsheet would run as formulas are neutralised by :func:`neutralise_cells`.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import math
import os
import re
import stat
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from decimal import ROUND_CEILING, Decimal
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ... import __version__
from ..kernel.schemes import SCHEMES

try:  # POSIX advisory locks: a live writer holds one on its temp file, so cleaners can tell it from debris
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

SIDECAR_FORMAT = "lmdk-release/1"
SIDECAR_KEYS = (
    "format", "tool_version", "created", "statement", "input", "rows_released", "kind", "scheme", "epsilon",
    "epsilon_selection", "sensitivity", "radius_m", "units", "bounds", "bounds_from_data", "lower_bound",
    "categories",
    "categories_from_data",
    "duplicates", "noise_backend", "seeded", "landmark_sum", "guarantee_holds", "columns", "precision",
    "formula_cells", "post_processing", "resolution", "aggregate",
)
#: Temporary files of :class:`AtomicFile`: ``.lmdk-XXXXXXXX.part`` in the target's folder.
PART_PREFIX = ".lmdk-"
PART_SUFFIX = ".part"
#: A text cell starting with one of these is a formula to a spreadsheet (OWASP CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _default_mode() -> int:
    """The permissions a plain ``open(path, "w")`` would give (mkstemp's own are 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_DEFAULT_MODE = _default_mode()


def sidecar_path(output: str | os.PathLike) -> Path:
    """``release.csv`` → ``release.csv.json``."""
    p = Path(output)
    return p.with_name(p.name + ".json")


def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def format_timestamps(times: np.ndarray, time_format: str) -> np.ndarray:
    """Timestamps written back the way the input wrote them: epoch seconds stay epoch seconds, everything
    else becomes ``YYYY-MM-DD HH:MM:SS`` (with a fraction only when some timestamp has one), followed by ``Z``
    for times the input gave with a zone (``iso-utc``: converted to UTC, which the Z says)."""
    t = np.asarray(times).astype("datetime64[ns]")
    if time_format == "epoch":
        ns = t.astype(np.int64)
        if np.all(ns % 1_000_000_000 == 0):
            return ns // 1_000_000_000
        return ns / 1e9
    ns = t.astype(np.int64)
    unit: Literal["s", "ms", "us"] = (
        "s" if np.all(ns % 1_000_000_000 == 0) else "ms" if np.all(ns % 1_000_000 == 0) else "us")
    s = np.datetime_as_string(t, unit=unit)
    if not s.size:
        return s
    s = np.char.replace(s, "T", " ")
    return np.char.add(s, "Z") if time_format == "iso-utc" else s


class AtomicFile:
    """``with AtomicFile(target) as af: af.file.write(...); af.commit()`` writes to a temp file in the target's
    folder and renames it onto ``target`` only in :meth:`commit`; leaving the block without committing (or
    with an exception) deletes the temp file."""

    def __init__(self, target: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8", *,
                 private: bool = False) -> None:
        """``private=True`` gives a *new* file owner-only permissions (0600) — for files that hold landmark
        positions (projects, landmark lists). A replaced file always keeps its own permissions. The mode is
        set on the temporary file before the rename, so the complete file is never readable by others."""
        self.target = Path(target)
        self.private = private
        self.mode = mode
        self.encoding = encoding if "b" not in mode else None
        self.tmp_path: Path | None = None
        self._f: Any = None
        self.committed = False
        #: the permissions to give the file when the one it replaces was moved away first (commit_pair)
        self.keep_mode: int | None = None

    def __enter__(self):
        folder = self.target.parent if str(self.target.parent) else Path(".")
        # Under the folder lock: another writer's cleaner must never find our part between its creation and
        # its flock (it would take it for a dead writer's debris and delete it under us).
        with PairLock(self.target):
            remove_stale_parts(self.target)
            fd, tmp = tempfile.mkstemp(prefix=PART_PREFIX, suffix=PART_SUFFIX, dir=folder)
            self.tmp_path = Path(tmp)
            try:
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._f = os.fdopen(fd, self.mode, encoding=self.encoding, newline="" if self.encoding else None)
            except BaseException:
                os.close(fd)
                self.discard()
                raise
        return self

    @property
    def file(self) -> Any:
        return self._f

    def finish(self) -> None:
        """Flush and fsync the temp file (the caller then decides to :meth:`commit`)."""
        self._f.flush()
        os.fsync(self._f.fileno())

    def commit(self) -> None:
        self.finish()
        assert self.tmp_path is not None
        try:  # keep the permissions of the file we replace, or give a new file the usual ones
            mode = self.keep_mode if self.keep_mode is not None else self.target.stat().st_mode & 0o7777
        except OSError:
            mode = 0o600 if self.private else _DEFAULT_MODE
        os.chmod(self.tmp_path, mode)
        # Renamed while still open (and locked), so no cleaner can take it for debris in between.
        os.replace(self.tmp_path, self.target)
        self.committed = True
        self._f.close()

    def discard(self) -> None:
        if self._f is not None and not self._f.closed:
            with contextlib.suppress(OSError):
                self._f.close()
        if self.tmp_path is not None and not self.committed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.tmp_path)

    def __exit__(self, exc_type, exc, tb) -> None:
        if not self.committed:
            self.discard()


def remove_stale_parts(target: str | os.PathLike) -> list[Path]:
    """Delete temp files of earlier, killed writes into ``target``'s folder (``.lmdk-*.part``, and the
    older ``.<name>.*.part`` of ``target``).

    A killed export leaves a partial release behind: a second, independent noisy release of its first rows,
    which must not linger next to the next release. A live writer holds an exclusive lock on its temp file,
    so only files nobody holds are removed (without ``fcntl``, i.e. on Windows, nothing is removed)."""
    if fcntl is None:
        return []
    t = Path(target)
    folder = glob.escape(str(t.parent if str(t.parent) else "."))
    removed = []
    patterns = (os.path.join(folder, glob.escape(PART_PREFIX) + "*" + PART_SUFFIX),
                os.path.join(folder, glob.escape(f".{t.name}.") + "*.part"))
    for part in sorted({p for pattern in patterns for p in glob.glob(pattern)}):
        try:
            fd = os.open(part, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            continue
        try:
            if not stat_is_regular(fd):
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a live writer holds it
            continue
        else:
            try:
                os.unlink(part)
                removed.append(Path(part))
            except OSError:
                pass
        finally:
            os.close(fd)
    return removed


def stat_is_regular(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


class PairLock:
    """An exclusive ``flock`` on the target's folder while a CSV/sidecar pair is committed, so two exports
    to one name never interleave their renames (a sidecar describing the other CSV). No-op without fcntl."""

    def __init__(self, target: str | os.PathLike) -> None:
        t = Path(target)
        self.folder = t.parent if str(t.parent) else Path(".")
        self.fd: int | None = None

    def __enter__(self) -> PairLock:
        if fcntl is not None:
            try:
                self.fd = os.open(self.folder, os.O_RDONLY)
            except OSError:  # an unreadable folder cannot be locked: each rename is still atomic
                return self
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(self.fd)
                self.fd = None
                raise
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def _no_fault(step: str) -> None:
    """The default :data:`between_renames` hook: nothing."""


#: Called with the step just done in :func:`commit_pair` ("start": both files complete, nothing renamed;
#: "old-csv-moved", "sidecar-renamed", "csv-renamed"); the crash tests replace it to kill the process there.
between_renames: Callable[[str], None] = _no_fault

#: The old CSV is moved to such a name first; remove_stale_parts deletes it (it is never locked).
TRASH_PREFIX = PART_PREFIX + "old-"


def commit_pair(csv_file: AtomicFile, side_file: AtomicFile) -> None:
    """Rename a finished CSV and its sidecar into place so that a crash at any instant never leaves a CSV
    without the sidecar that describes it (issue 42, finding 8). Call it holding :class:`PairLock`.

    1. an old CSV at the target is moved aside to a part name (``.lmdk-old-…part``): from here on there is
       no CSV, at most a sidecar without one;
    2. the new sidecar replaces the old one (a sidecar without a CSV is harmless);
    3. the new CSV is renamed into place: the pair is complete;
    4. the old CSV is deleted. Had the process died before, the next write into the folder deletes it
       (:func:`remove_stale_parts`), as it deletes the part files of a killed writer."""
    target = csv_file.target
    trash: Path | None = None
    between_renames("start")
    if target.exists() or target.is_symlink():
        folder = target.parent if str(target.parent) else Path(".")
        trash = folder / f"{TRASH_PREFIX}{os.urandom(6).hex()}{PART_SUFFIX}"
        with contextlib.suppress(OSError):
            csv_file.keep_mode = target.stat().st_mode & 0o7777
        os.replace(target, trash)
        _fsync_folder(folder)
        between_renames("old-csv-moved")
    side_file.commit()
    _fsync_folder(target.parent if str(target.parent) else Path("."))
    between_renames("sidecar-renamed")
    csv_file.commit()
    between_renames("csv-renamed")
    if trash is not None:
        with contextlib.suppress(OSError):
            os.unlink(trash)


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable before the next one (no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def neutralise_cell(text: str) -> str:
    """``'`` + text when a spreadsheet would read ``text`` as a formula: it starts with = + - @ tab or CR
    and is not a plain number (numbers such as ``-1.5`` are never altered)."""
    if not text.startswith(FORMULA_STARTS):
        return text
    try:
        float(text)
    except ValueError:
        return "'" + text
    return text if text.strip() == text else "'" + text


def neutralise_cells(cells: Sequence[str]) -> list[str]:
    return [neutralise_cell(str(c)) for c in cells]


def neutralise_frame(df, *, verbatim: bool = False):
    """A copy of a DataFrame with its text cells and header neutralised (numbers untouched)."""
    if verbatim:
        return df
    out = df.copy()
    out.columns = neutralise_cells([str(c) for c in df.columns])
    for c in out.columns:
        if out[c].dtype == object or str(out[c].dtype).startswith("string"):
            out[c] = out[c].map(lambda v: neutralise_cell(v) if isinstance(v, str) else v)
    return out


def round_up_significant(x: float, digits: int) -> float:
    """``x`` rounded towards +∞ to ``digits`` significant digits (a float ≥ ``x``)."""
    if not np.isfinite(x) or x == 0:
        return float(x)
    d = Decimal(repr(float(x)))
    exp = d.adjusted() - digits + 1
    return float(d.quantize(Decimal(1).scaleb(exp), rounding=ROUND_CEILING))


_UNIT_WORDS = {"kwh": "kWh", "wh": "Wh", "kw": "kW", "w": "W", "mw": "MW", "v": "V", "a": "A", "c": "°C",
               "degc": "°C", "f": "°F", "m": "m", "km": "km", "kg": "kg", "g": "g", "l": "l", "bpm": "bpm",
               "steps": "steps", "mmhg": "mmHg", "pct": "%", "percent": "%", "s": "s", "min": "min",
               "h": "h", "ppm": "ppm", "lux": "lux", "db": "dB", "hz": "Hz", "mg/dl": "mg/dL", "mmol/l": "mmol/L"}


def value_units(series) -> str | None:
    """The units of the released values: numeric from the value column's name (``kwh``, ``power_W``,
    ``temperature (°C)``, ``load [kW]``) or None; location: degrees; categorical: None."""
    if series.kind == "location":
        return "degrees (latitude, longitude); radius r in metres"
    if series.kind != "numeric":
        return None
    name = series.value_columns[0] if series.value_columns else ""
    m = re.search(r"[(\[]\s*([^()\[\]]+?)\s*[)\]]\s*$", name)
    if m:
        return m.group(1)
    low = name.strip().lower()
    if low in _UNIT_WORDS:
        return _UNIT_WORDS[low]
    tail = re.split(r"[_\s.-]+", low)[-1] if low else ""
    return _UNIT_WORDS.get(tail) if tail != low else None


def release_statement(*, kind: str, scheme: str, epsilon: float, sensitivity: float, radius_m: float,
                      units: str | None, dummies: bool, budget_columns: bool, denoised: bool = False,
                      landmarks_rule: str | None = None, bounds_from_data: bool = False,
                      resolution: str | None = None) -> str:
    """The sidecar's ``statement``: one plain paragraph on what is protected and what is not.
    ``landmarks_rule``: the suggestion rule that found the landmarks on these very values (its label);
    ``bounds_from_data``: the public bounds are the data's own minimum and maximum; ``resolution``: a period
    release's sentence (:func:`~lmdk_gui.core.data.periods.describe`)."""
    eps = f"{float(epsilon):g}"
    if kind == "numeric":
        unit = f" {units}" if units else " (in the data's units)"
        change = f"a change of up to Δ = {float(sensitivity):g}{unit} in one event's value"
    elif kind == "location":
        change = f"a move of one event's position by up to r = {float(radius_m):g} metres"
    else:
        change = "a change of one event's category to any other"
    scheme_name = SCHEMES[scheme].prose_name if scheme in SCHEMES else scheme
    not_protected = ["the timestamps are published exactly (when each event happened, and how many there are)"]
    if dummies:
        not_protected.append("the landmarks are hidden among dummy landmarks chosen at random, but their count "
                             "and place are only as hidden as that random choice makes them")
    else:
        not_protected.append("which events are landmarks is not hidden (no dummy landmarks were added)")
    if landmarks_rule:
        not_protected.append(f"the landmarks were found by a rule on these values ({landmarks_rule}), so whatever "
                             "shows where they are also shows which events passed that rule")
    if bounds_from_data:
        not_protected.append("the public bounds are the data's own minimum and maximum, so they reveal those "
                             "two values exactly")
    if scheme in SCHEMES and SCHEMES[scheme].republishes:
        skipped = " (every landmark)" if scheme == "skip" else ""
        not_protected.append(f"the {scheme_name} scheme repeats the previous value exactly at events it skips"
                             f"{skipped}, so repeated values can show where the landmarks are")
        if denoised:
            # The smoother bridges each skipped stretch with a line between released values: the repeats are
            # gone from the file, but the interpolated runs mark the same events (issue 42, finding 9).
            not_protected.append(
                "in the smoothed values written here those events become straight-line stretches (interpolated "
                "runs), which show where the landmarks are just as well"
                + ("; only the dummy landmarks, skipped alike, hide them" if dummies
                   else " unless dummy landmarks hide them"))
    if budget_columns:
        not_protected.append("the epsilon/approximated columns show where the landmarks are")
    not_protected.append("dependence between events over time (temporal correlation) can leak more than ε")
    return (f"This file is a differentially private release of one time series, made with the {scheme_name} "
            f"scheme of landmark privacy at ε = {eps}. Protected: {change}, and the same change made at once "
            f"to that event and to every event the data holder marked as a landmark, alters the probability of "
            f"any content of this file by at most a factor e^ε{_approx_factor(float(epsilon))}. Not protected: "
            + "; ".join(not_protected) + "."
            + (" The values were then smoothed (denoised) using only the noisy release, its per-event budgets and "
               "the public settings, so the smoothing changes no guarantee; anyone can repeat it on this file "
               "(see post_processing)." if denoised else "")
            + (f" The file holds {resolution}, each row timestamped with the period's start; the protection "
               "above is that of the events, and a period holding a landmark counts as a landmark."
               if resolution else ""))


def _approx_factor(epsilon: float) -> str:
    """" (≈ 2.72)" for e^ε, or nothing where e^ε is beyond a float (ε > 709)."""
    return f" (≈ {math.exp(epsilon):.3g})" if epsilon < 709.0 else ""


def build_sidecar(*, input_name: str | None, rows: int, kind: str, scheme: str, epsilon: float,
                  epsilon_selection: Any, sensitivity: float | None, radius_m: float | None,
                  bounds: Sequence[float] | None, categories: Sequence[str] | None, noise_backend: str,
                  seeded: bool, landmark_sum: float, guarantee_holds: bool,
                  columns: Sequence[str], statement: str = "", units: str | None = None,
                  duplicates: str | None = None, categories_from_data: bool = False,
                  precision: float | None = None, formula_cells: str = "neutralised",
                  created: str | None = None,
                  post_processing: dict[str, Any] | None = None,
                  bounds_from_data: bool = False, resolution: str | None = None,
                  aggregate: str | None = None, lower_bound: float | None = None) -> dict[str, Any]:
    """The metadata that says exactly what was guaranteed — never the landmark positions.

    Nothing computed from the private input beyond what the release itself shows: no hash of the input (an
    adversary who knows all values but one recovers it by hashing candidates) and no input file name (it can
    be a person's name) unless the caller passes one because the user asked for it. ``post_processing``
    (issue 12): what was applied to the secure release before writing (``{"method": …, **params}``,
    computed from the released values, budgets and public settings only), or None for the raw release.
    ``resolution``/``aggregate``: a period release (DESIGN §12), e.g. ``"1D"`` and ``"sum"``; None for one
    row per event. ``lower_bound``: a public lower bound alone the user asserted (e.g. 0, values cannot be
    negative); never derived from the data, so ``bounds_from_data`` does not concern it.
    """
    # Only the release's own row count. The rows read from the file (with exact duplicates dropped, repeats
    # merged, rows skipped for missing values) are not published: they would tell how many the private file
    # had, which no release protects; the private ledger keeps that count (issue 44).
    source: dict[str, Any] = {"rows": int(rows)}
    if input_name:
        source["name"] = input_name
    doc = {
        "format": SIDECAR_FORMAT,
        "tool_version": __version__,
        "created": created or datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "statement": statement,
        "input": source,
        "rows_released": int(rows),
        "kind": kind,
        "scheme": scheme,
        "epsilon": float(epsilon),
        "epsilon_selection": epsilon_selection,
        "sensitivity": None if sensitivity is None else float(sensitivity),
        "radius_m": None if radius_m is None else float(radius_m),
        "units": units,
        "bounds": None if bounds is None else [float(bounds[0]), float(bounds[1])],
        "bounds_from_data": bool(bounds_from_data) and bounds is not None,
        "lower_bound": None if lower_bound is None else float(lower_bound),
        "categories": None if categories is None else [str(c) for c in categories],
        "categories_from_data": bool(categories_from_data),
        "duplicates": duplicates,
        "noise_backend": noise_backend,
        "seeded": bool(seeded),
        # The public bound the release was checked against (ε, or ε − ε_sel with dummies), never the sum
        # itself: any figure of it is a function of |L| (issue 42, finding 5). The exact sum is in the ledger.
        "landmark_sum": float(landmark_sum),
        "guarantee_holds": bool(guarantee_holds),
        "columns": list(columns),
        "precision": precision,
        "formula_cells": formula_cells,
        "post_processing": None if post_processing is None else dict(post_processing),
        "resolution": resolution,
        "aggregate": aggregate,
    }
    assert tuple(doc) == SIDECAR_KEYS
    return doc


def sidecar_text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
