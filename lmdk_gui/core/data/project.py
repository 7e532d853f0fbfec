"""Project files (``.lmdk.json``, DESIGN §9): a working session saved to disk and opened again.

A project records where the data came from (absolute path, path relative to the project file, SHA-256 of
the bytes), how it was read (column choices, kind, duplicate policy), the landmarks (as row positions *and*
as timestamps, so that an edited or reordered data file is detected rather than silently shifting them),
every privacy setting, the preview seed, and the GUI's view state as an opaque JSON object.

**A project file is private**: it contains the landmark positions, the very thing the landmark-privacy
schemes protect (DESIGN §2, thesis §4.2). The file says so twice (``"private": true`` and a ``"comment"``),
and it is written atomically (:class:`~lmdk_gui.core.publish.writers.AtomicFile`) with owner-only permissions for a
new file (0600 on POSIX; a replaced file keeps its own).

Public API: :class:`Project`, :class:`ColumnChoice`, :func:`save_project`, :func:`load_project`,
:func:`resolve_data_path`, :func:`check_data`, :func:`landmarks_by_time`, :class:`ProjectError` (a
:class:`~lmdk_gui.core.data.series.LoadError`, so callers that already catch bad input catch this too).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ... import __version__
from ..kernel.settings import PrivacySettings
from ..publish.guard import check_output
from ..publish.writers import AtomicFile
from .series import KINDS, ColumnChoice, LoadError, Series

__all__ = [
    "ColumnChoice",
    "PRIVATE_COMMENT",
    "PROJECT_FORMAT",
    "PROJECT_SUFFIX",
    "PROJECT_VERSION",
    "Project",
    "ProjectError",
    "check_data",
    "landmarks_by_time",
    "load_project",
    "resolve_data_path",
    "save_project",
]

PROJECT_FORMAT = "lmdk-project"
PROJECT_VERSION = 1
PROJECT_SUFFIX = ".lmdk.json"
PRIVATE_COMMENT = (
    "PRIVATE: this project file contains the positions of your landmarks (the events you chose to protect) "
    "and the path to your raw data. Keep it to yourself; never publish or share it with a release."
)
_DUPLICATES = ("error", "first", "last", "mean", "drop-exact")


class ProjectError(LoadError):
    """A project file that cannot be used; the message names the file and the offending key."""


# ------------------------------------------------------------------------------------------ the model
@dataclass(eq=False)
class Project:
    """Everything needed to reopen a session. ``landmarks`` are sorted distinct int64 rows and
    ``landmark_times`` their timestamps (``datetime64[ns]``, same length)."""

    input_path: str  # absolute path of the data file when the project was saved
    input_sha256: str = ""
    columns: ColumnChoice = field(default_factory=ColumnChoice)
    landmarks: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    landmark_times: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype="datetime64[ns]"))
    settings: PrivacySettings = field(default_factory=PrivacySettings)
    seed: int | None = None
    view: dict[str, Any] = field(default_factory=dict)  # GUI state (shown schemes, zoom, …), opaque here
    # the labels of the suggestion rules the landmarks come from (Session.landmark_rules: said by exports)
    landmark_rules: tuple[str, ...] = ()
    rows: int | None = None  # number of events of the series when saved
    #: the release resolution (DESIGN §12: "1D", "1W"…; None = one value per event) and its aggregate
    resolution: str | None = None
    aggregate: str = "sum"
    input_relpath: str | None = None  # path relative to the project file's folder, as read from the file
    tool_version: str = __version__

    @classmethod
    def from_series(cls, series: Series, landmarks: Any, settings: PrivacySettings, *, seed: int | None = None,
                    view: dict[str, Any] | None = None, columns: ColumnChoice | None = None,
                    landmark_rules: Iterable[str] = ()) -> Project:
        """A project for the current session (``series`` must come from a file: it needs ``source``)."""
        from ..engine.release import normalize_landmarks

        if series.source is None:
            raise ValueError("this series was not read from a file; a project needs a data file")
        rows = normalize_landmarks(landmarks, series.n)
        return cls(
            input_path=os.path.abspath(series.source.path),
            input_sha256=series.source.sha256,
            columns=columns if columns is not None else ColumnChoice.from_series(series),
            landmarks=rows,
            landmark_times=np.asarray(series.times[rows]).astype("datetime64[ns]"),
            settings=settings,
            seed=seed,
            view=dict(view or {}),
            rows=series.n,
            landmark_rules=tuple(sorted(landmark_rules)),
        )

    def load_options(self) -> dict[str, Any]:
        """Keyword arguments for :func:`lmdk_gui.core.data.loader.load_series` to read the data as saved
        (the public category list comes from the privacy settings)."""
        opts = {k: v for k, v in self.columns.to_dict().items() if v is not None}
        if self.settings.categories is not None:
            opts["categories"] = list(self.settings.categories)
        return opts

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Project):
            return NotImplemented
        return (self.input_path == other.input_path and self.input_sha256 == other.input_sha256
                and self.columns == other.columns and np.array_equal(self.landmarks, other.landmarks)
                and np.array_equal(self.landmark_times, other.landmark_times)
                and self.settings == other.settings and self.seed == other.seed and self.view == other.view
                and self.rows == other.rows and self.landmark_rules == other.landmark_rules
                and self.resolution == other.resolution and self.aggregate == other.aggregate)


# ------------------------------------------------------------------------------------------- writing
def _time_strings(times: np.ndarray) -> list[str]:
    """ISO 8601 text with the fewest fraction digits that keep every timestamp exact."""
    t = np.asarray(times).astype("datetime64[ns]")
    if t.size == 0:
        return []
    ns = t.astype(np.int64)
    units: tuple[tuple[Literal["s", "ms", "us", "ns"], int], ...] = (
        ("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1))
    unit = next(u for u, q in units if np.all(ns % q == 0))
    return np.datetime_as_string(t, unit=unit).tolist()


def _relpath(target: str, start: Path) -> str | None:
    try:
        return Path(os.path.relpath(target, start)).as_posix()
    except ValueError:  # e.g. another drive on Windows
        return None


def save_project(path: str | os.PathLike, project: Project, *, force: bool = True) -> None:
    """Write ``project`` to ``path`` (conventionally ``*.lmdk.json``) atomically.

    Never over the data file itself (through any link) nor over a special file; an existing file only with
    ``force`` (the window's save dialog has asked): :class:`~lmdk_gui.core.publish.guard.OutputRefused`.

    The data path is stored as given (made absolute) and relative to the project file's folder, so the
    pair can be moved together. Raises ValueError when the view state is not JSON, OSError on I/O errors
    (the previous file, if any, is then left unchanged).
    """
    from ..engine.release import normalize_landmarks

    p = check_output(path, (project.input_path,), force=force, what="project", input_word="data file",
                     overwrite_hint="choose another name")
    folder = Path(os.path.abspath(p)).parent
    input_abs = os.path.abspath(project.input_path)
    rows = normalize_landmarks(project.landmarks, np.iinfo(np.int64).max)
    times = np.asarray(project.landmark_times).astype("datetime64[ns]")
    if times.shape != rows.shape:
        raise ValueError(f"the project has {rows.size} landmark rows but {times.size} landmark timestamps")
    if project.seed is not None and (isinstance(project.seed, bool) or int(project.seed) < 0):
        raise ValueError(f"seed must be a non-negative integer or None, got {project.seed!r}")
    token = uuid.uuid4().hex
    doc = {
        "format": PROJECT_FORMAT,
        "version": PROJECT_VERSION,
        "private": True,
        "comment": PRIVATE_COMMENT,
        "tool_version": __version__,
        "input": {
            "path": input_abs,
            "relative_path": _relpath(input_abs, folder),
            "sha256": project.input_sha256,
            "rows": None if project.rows is None else int(project.rows),
        },
        "columns": project.columns.to_dict(),
        "landmarks": {"count": int(rows.size), "rows": f"@rows-{token}", "timestamps": f"@times-{token}",
                      "rules": list(project.landmark_rules)},
        "settings": project.settings.to_dict(),
        "seed": None if project.seed is None else int(project.seed),
        "view": project.view,
        "resolution": None if project.resolution is None else {"resolution": project.resolution,
                                                               "aggregate": project.aggregate},
    }
    try:
        text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError(f"cannot save the project: the view state is not plain JSON ({e})") from None
    # landmark lists on one line each (a 10^5-landmark project stays readable and small)
    text = text.replace(f'"@rows-{token}"', json.dumps(rows.tolist()))
    text = text.replace(f'"@times-{token}"', json.dumps(_time_strings(times)))
    with AtomicFile(p, private=True) as af:
        af.file.write(text + "\n")
        af.commit()


# ------------------------------------------------------------------------------------------- reading
class _Reader:
    """Typed access to the JSON document with messages that name the file and the key."""

    def __init__(self, name: str, path: str) -> None:
        self.name = name
        self.path = path

    def error(self, key: str | None, message: str) -> ProjectError:
        where = f"{self.name}, key '{key}'" if key else self.name
        return ProjectError(f"{where}: {message}", path=self.path, column=key)

    def get(self, obj: dict, key: str, prefix: str, types: tuple[type, ...], *, required: bool = True,
            default: Any = None, what: str) -> Any:
        full = f"{prefix}{key}"
        if key not in obj:
            if required:
                raise self.error(full, f"missing (expected {what})")
            return default
        v = obj[key]
        if v is None and type(None) in types:
            return None
        if isinstance(v, bool) and bool not in types:
            raise self.error(full, f"expected {what}, got {json.dumps(v)}")
        if not isinstance(v, types):
            raise self.error(full, f"expected {what}, got {_json_type(v)}")
        return v


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true/false"
    if isinstance(v, int | float):
        return f"the number {v!r}"
    if isinstance(v, str):
        return f"the text {v!r}" if len(v) <= 40 else "a text"
    if isinstance(v, list):
        return "a list"
    return "an object"


def load_project(path: str | os.PathLike) -> Project:
    """Read and validate a project file. Raises :class:`ProjectError` naming the file and key otherwise."""
    p = Path(path)
    r = _Reader(p.name, str(p))
    doc = _document(r, p)
    input_path, relpath, sha, nrows = _input(r, doc)
    columns = _columns(r, r.get(doc, "columns", "", (dict,), what="an object"))
    rows, times, rules = _landmarks(r, r.get(doc, "landmarks", "", (dict,), what="an object"), nrows)
    sdict = r.get(doc, "settings", "", (dict,), what="an object")
    try:
        settings = PrivacySettings.from_dict(sdict)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
        raise r.error("settings", f"invalid privacy settings ({e})") from None
    seed = r.get(doc, "seed", "", (int, type(None)), required=False, what="a non-negative integer or null")
    if seed is not None and seed < 0:
        raise r.error("seed", f"expected a non-negative integer or null, got {seed}")
    view = r.get(doc, "view", "", (dict,), required=False, default={}, what="an object")
    resolution, aggregate = _resolution(r, doc)
    tool = doc.get("tool_version", "")
    return Project(input_path=input_path, input_sha256=sha.lower(), columns=columns, landmarks=rows,
                   landmark_times=times, settings=settings, seed=seed, view=view, rows=nrows,
                   input_relpath=relpath, tool_version=str(tool), landmark_rules=tuple(rules),
                   resolution=resolution, aggregate=aggregate)


def _document(r: _Reader, p: Path) -> dict:
    """The file's JSON object, after checking that it is a project of a version this lmdk reads."""
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise r.error(None, f"cannot read the project file ({e.strerror or e})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise r.error(None, f"not a project file (not UTF-8 text: bad byte at offset {e.start})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise r.error(None, f"not a project file (invalid JSON at line {e.lineno}, column {e.colno}: "
                            f"{e.msg})") from None
    if not isinstance(doc, dict):
        raise r.error(None, f"not a project file (expected a JSON object, got {_json_type(doc)})")
    fmt = r.get(doc, "format", "", (str,), what=f"'{PROJECT_FORMAT}'")
    if fmt != PROJECT_FORMAT:
        raise r.error("format", f"not an lmdk project file (expected '{PROJECT_FORMAT}', got {fmt!r})")
    version = r.get(doc, "version", "", (int,), what="a format version number")
    if version > PROJECT_VERSION or version < 1:
        raise r.error("version", f"format version {version} is not supported (this lmdk reads version "
                                 f"{PROJECT_VERSION}{'; it was written by a newer lmdk' if version > 1 else ''})")
    return doc


def _input(r: _Reader, doc: dict) -> tuple[str, str | None, str, int | None]:
    """The ``input`` object: the data file's path, its path relative to the project, SHA-256 and rows."""
    inp = r.get(doc, "input", "", (dict,), what="an object")
    input_path = r.get(inp, "path", "input.", (str,), what="the data file's path")
    if not input_path:
        raise r.error("input.path", "is empty")
    relpath = r.get(inp, "relative_path", "input.", (str, type(None)), required=False, what="a path or null")
    sha = r.get(inp, "sha256", "input.", (str,), required=False, default="", what="a SHA-256 hex digest")
    if sha and (len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha.lower())):
        raise r.error("input.sha256", f"expected 64 hexadecimal digits, got {sha!r}")
    nrows = r.get(inp, "rows", "input.", (int, type(None)), required=False, what="a row count or null")
    if nrows is not None and nrows < 0:
        raise r.error("input.rows", f"expected a row count, got {nrows}")
    return input_path, relpath, sha, nrows


def _columns(r: _Reader, cols: dict) -> ColumnChoice:
    """The ``columns`` object (keys absent in projects of earlier versions take their defaults)."""
    args: dict[str, Any] = {}
    for key in ("time_col", "value_col", "lat_col", "lon_col", "hour_col"):
        args[key] = r.get(cols, key, "columns.", (str, type(None)), required=False, what="a column name or null")
    args["kind"] = r.get(cols, "kind", "columns.", (str, type(None)), required=False, what="a kind or null")
    if args["kind"] is not None and args["kind"] not in KINDS:
        raise r.error("columns.kind", f"expected one of {', '.join(KINDS)} or null, got {args['kind']!r}")
    args["duplicates"] = r.get(cols, "duplicates", "columns.", (str,), required=False, default="error",
                               what="a duplicate policy")
    if args["duplicates"] not in _DUPLICATES:
        raise r.error("columns.duplicates", f"expected one of {', '.join(_DUPLICATES)}, got {args['duplicates']!r}")
    args["skip_missing"] = r.get(cols, "skip_missing", "columns.", (bool,), required=False, default=False,
                                 what="true or false")
    for key in ("pair_cols", "pair_class_cols"):
        v = r.get(cols, key, "columns.", (list, type(None)), required=False, what="two column names or null")
        if v is not None and (len(v) != 2 or not all(isinstance(c, str) for c in v)):
            raise r.error(f"columns.{key}", f"expected two column names, got {json.dumps(v)}")
        args[key] = None if v is None else (v[0], v[1])
    args["person"] = r.get(cols, "person", "columns.", (str, type(None)), required=False,
                           what="a person id or null")
    for key in ("id_col", "person_id"):
        args[key] = r.get(cols, key, "columns.", (str, type(None)), required=False, what="text or null")
    args["date_order"] = r.get(cols, "date_order", "columns.", (str, type(None)), required=False,
                               what="dmy, mdy or null")
    if args["date_order"] not in (None, "dmy", "mdy"):
        raise r.error("columns.date_order", f"expected dmy, mdy or null, got {args['date_order']!r}")
    return ColumnChoice(**args)


def _landmarks(r: _Reader, lmk: dict, nrows: int | None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The ``landmarks`` object: rows and timestamps (paired, sorted by row) and the rules they come from."""
    rows = _rows_array(r, r.get(lmk, "rows", "landmarks.", (list,), what="a list of row numbers"))
    times = _times_array(r, r.get(lmk, "timestamps", "landmarks.", (list,), what="a list of timestamps"))
    if rows.size != times.size:
        raise r.error("landmarks", f"{rows.size} rows but {times.size} timestamps (they must pair up)")
    if "count" in lmk and lmk["count"] != rows.size:
        raise r.error("landmarks.count", f"says {lmk['count']!r} but the file lists {rows.size} landmarks")
    order = np.argsort(rows, kind="stable")
    rows, times = rows[order], times[order]
    if rows.size > 1 and np.any(rows[1:] == rows[:-1]):
        dup_row = int(rows[1:][rows[1:] == rows[:-1]][0])
        raise r.error("landmarks.rows", f"row {dup_row} is listed twice")
    if nrows is not None and rows.size and rows[-1] >= nrows:
        raise r.error("landmarks.rows", f"row {int(rows[-1])} is past the last row ({nrows - 1})")
    rules = r.get(lmk, "rules", "landmarks.", (list,), required=False, default=[], what="a list of rule names")
    if not all(isinstance(x, str) for x in rules):
        raise r.error("landmarks.rules", f"expected rule names, got {json.dumps(rules)}")
    return rows, times, rules


def _resolution(r: _Reader, doc: dict) -> tuple[str | None, str]:
    """The project's release resolution (absent in projects saved before it existed: per event)."""
    from .periods import AGGREGATES, parse_resolution

    res = r.get(doc, "resolution", "", (dict, type(None)), required=False, default=None,
                what="an object or null")
    if res is None:
        return None, "sum"
    how = res.get("aggregate", "sum")
    if how not in AGGREGATES:
        raise r.error("resolution.aggregate", f"expected sum or mean, got {json.dumps(how)}")
    try:
        return parse_resolution(str(res.get("resolution", "")))[0], how
    except ValueError as e:
        raise r.error("resolution.resolution", str(e)) from None


def _rows_array(r: _Reader, values: list) -> np.ndarray:
    if not values:
        return np.zeros(0, dtype=np.int64)
    bad = next((i for i, v in enumerate(values) if isinstance(v, bool) or not isinstance(v, int) or v < 0),
               None)
    if bad is not None:
        raise r.error("landmarks.rows", f"entry {bad} is {_json_type(values[bad])}; expected a 0-based row "
                                        "number")
    try:
        return np.asarray(values, dtype=np.int64)
    except OverflowError:
        raise r.error("landmarks.rows", "a row number is too large") from None


def _times_array(r: _Reader, values: list) -> np.ndarray:
    if not values:
        return np.zeros(0, dtype="datetime64[ns]")
    bad = next((i for i, v in enumerate(values) if not isinstance(v, str)), None)
    if bad is not None:
        raise r.error("landmarks.timestamps", f"entry {bad} is {_json_type(values[bad])}; expected an ISO "
                                              "timestamp such as 2013-01-01T00:00:00")
    try:
        return np.asarray(values, dtype="datetime64[ns]")
    except (ValueError, OverflowError):
        for i, v in enumerate(values):
            try:
                np.datetime64(v, "ns")
            except (ValueError, OverflowError):
                raise r.error("landmarks.timestamps", f"entry {i} ({v!r}) is not an ISO timestamp") from None
        raise r.error("landmarks.timestamps", "cannot read the timestamps") from None


# ------------------------------------------------------------------------------------ data and checks
def resolve_data_path(project: Project, project_path: str | os.PathLike) -> Path | None:
    """The data file to open: the saved absolute path if it exists, else the saved relative path taken from
    the project file's folder (project and data moved together), else ``None`` (the GUI then asks the user
    where the file went; :func:`check_data` will verify whatever they pick)."""
    first = Path(project.input_path)
    if first.is_absolute() and first.is_file():
        return first
    if project.input_relpath:
        folder = Path(os.path.abspath(project_path)).parent
        second = Path(os.path.normpath(folder / project.input_relpath))
        if second.is_file():
            return second
    return None


def landmarks_by_time(project: Project, series: Series) -> tuple[np.ndarray, int]:
    """Rows of ``series`` at the project's landmark *timestamps* (to re-attach landmarks after rows moved),
    and how many of those timestamps are not in the series."""
    times = np.asarray(project.landmark_times).astype("datetime64[ns]")
    st = np.asarray(series.times).astype("datetime64[ns]")
    if times.size == 0 or st.size == 0:
        return np.zeros(0, dtype=np.int64), int(times.size)
    pos = np.searchsorted(st, times)
    ok = pos < st.size
    ok[ok] = st[pos[ok]] == times[ok]
    return np.unique(pos[ok]).astype(np.int64), int(np.count_nonzero(~ok))


def check_data(project: Project, series: Series) -> list[str]:
    """Warnings (empty list = all is well) when ``series`` is not the data the project was saved with:
    different bytes (SHA-256), row count, kind or columns, or landmarks whose timestamps no longer match
    their rows. Each warning is one sentence for a message box."""
    out: list[str] = []
    src = series.source
    if project.input_sha256 and src is not None and src.sha256 and src.sha256.lower() != project.input_sha256:
        out.append(f"The data file has changed since the project was saved (its SHA-256 is now "
                   f"{src.sha256[:12]}…, was {project.input_sha256[:12]}…).")
    if project.rows is not None and series.n != project.rows:
        out.append(f"The data now has {series.n} events; the project was saved with {project.rows}.")
    cc = project.columns
    if cc.kind is not None and cc.kind != series.kind:
        out.append(f"The data was read as {series.kind}; the project was saved as {cc.kind}.")
    if src is not None:
        now = ColumnChoice.from_series(series)
        diffs = [f"{k} {getattr(now, k)!r} (was {getattr(cc, k)!r})"
                 for k in ("time_col", "value_col", "lat_col", "lon_col", "hour_col", "duplicates", "pair_cols",
                           "person", "pair_class_cols", "id_col", "person_id", "date_order")
                 if getattr(cc, k) is not None and getattr(now, k) != getattr(cc, k)]
        if diffs:
            out.append("The data was read with different column choices: " + ", ".join(diffs) + ".")
    rows = np.asarray(project.landmarks, dtype=np.int64)
    times = np.asarray(project.landmark_times).astype("datetime64[ns]")
    if rows.size:
        inside = rows < series.n
        n_out = int(np.count_nonzero(~inside))
        st = np.asarray(series.times).astype("datetime64[ns]")
        moved = int(np.count_nonzero(st[rows[inside]] != times[inside]))
        if n_out or moved:
            parts = []
            if n_out:
                parts.append(f"{n_out} landmark row(s) are past the end of the data")
            if moved:
                parts.append(f"{moved} landmark(s) no longer fall on their saved timestamps")
            _, missing = landmarks_by_time(project, series)
            found = int(times.size - missing)
            out.append("; ".join(parts).capitalize() + f" ({found} of {times.size} saved timestamps are still in "
                       "the data and can be matched by time).")
    return out
