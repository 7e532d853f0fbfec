"""Many persons' series in one job (issue 16): ``lmdk batch`` and the app's "Export all persons…".

:func:`run_batch` releases every person of one long table (an id column, a time column, the values) with
the same engine as a single export: each person's rows become a :class:`~.series.Series` through
:func:`~.loader.load_dataframe_series` and go through :func:`~.export.export_release` (checks, atomic files).
Work runs on Dask: a ``LocalCluster`` of processes on loopback by default, or an existing cluster.

How the table is split without ever holding it in one process:

1. The input (CSV/TSV/Parquet file, folder or glob) is read in partitions by ``dask.dataframe`` (every
   column as text, so a bad value fails only its person). A first pass counts each id's rows per partition.
2. A person whose rows all lie in one partition is released inside that partition's task. The rows of the
   persons that straddle partitions (all of them in an unsorted table) are shuffled: assigned to balanced
   buckets, ``set_index`` on the bucket with known divisions, one task per bucket. A task thus holds one
   partition or one bucket (≈ a partition's rows, or one person when a person is larger) at a time.
3. Per person: ``OUTDIR/<safe-id>.csv`` + ``.csv.json`` (``--format csv``), or
   ``OUTDIR/release/id=<safe-id>/`` with ``part-0.parquet`` + ``_release.json`` (a Hive-partitioned dataset
   rooted at ``release/``, which readers skip ``_`` files in), then a marker
   ``.lmdk-batch/done/<safe-id>.json`` (the run's fingerprint, counts, verdict or error). ``--resume`` skips
   persons whose marker has the run's fingerprint; a kill at any point leaves complete files only.
4. ``manifest.json``, written last and atomically from the markers: the steward's private record (input
   checksums, settings, per person rows, landmark count, landmark sum, verdict, status or error; never
   landmark positions). The public per-person sidecars carry no hash of the input (issue 17).

Seeds: with a master key (a secret the export accepts, :func:`~.keys.key_weakness`), person ``p`` gets
HMAC-SHA256(key, p) as its own seed (:func:`person_key`, adapted to what :class:`~.export.ExportOptions` takes
by :func:`export_seed`), so a release does not depend on how the table was split. The export binds that key
to the person's release (:mod:`.keys`: the loaded series, landmarks, settings): the same table and settings
give every person the same release again (no new ε), while next month's table, a corrected value or other
settings give that person independent noise. No run label is mixed in on purpose: it would make an unchanged
person's release in a repeated run a second, independent release that composes with the first. Without a key
every person gets fresh OS entropy.

Ledger: each person's release is one entry of the private ledger (:mod:`.ledger`) with the digest of the
person's loaded series, the table's file(s), the id column and the id; the summary's ``composition`` is the
note for persons of this run whose same data were released before.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import hmac
import io
import json
import math
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import __version__
from ..analysis.suggestions import RULES, apply_rule
from ..data.context import RowOrigin
from ..data.landmark_files import landmark_rows
from ..data.loader import load_dataframe_series
from ..data.periods import apply_resolution
from ..data.series import LoadError
from ..kernel.dummies import DummySettings
from ..kernel.guarantee import GuaranteeError
from ..kernel.settings import LANDMARK_SCHEMES, PrivacySettings
from . import keys
from .export import Cancelled, ExportError, ExportOptions, export_release
from .guard import check_output
from .ledger import BatchOrigin
from .writers import AtomicFile, file_sha256

__all__ = ["BatchError", "BatchOptions", "BatchProgress", "BatchSummary", "Cancelled", "check_outdir", "export_seed",
           "parse_key", "person_key", "run_batch", "safe_name"]

MANIFEST = "manifest.json"
STATE_DIR = ".lmdk-batch"
PARQUET_DIR = "release"  # the dataset's root: OUTDIR itself also holds manifest.json, which is no Parquet
MANIFEST_FORMAT = "lmdk-batch-manifest/1"
FORMATS = ("csv", "parquet")
MIN_KEY_BYTES = keys.KEY_HEX_DIGITS // 2  # a master key's bytes, at least
DEFAULT_BLOCKSIZE = 32 * 2**20
_CSV_SUFFIXES = (".csv", ".tsv", ".tab", ".txt")
_PARQUET_SUFFIXES = (".parquet", ".pq")
_SHEET_SUFFIXES = (".xlsx",)  # Excel workbooks: each one's first sheet holding a table (core/data/sheets.py)
_ORDER = "__lmdk_order"
_BUCKET = "__lmdk_bucket"
_PATH = "__lmdk_path"  # a CSV row's input file: errors name its line there, not a row number within the person
_MANIFEST_COMMENT = (
    "Private: the data steward's record of this batch run. It holds the SHA-256 of the input file(s) and of "
    "the landmark file (anyone who knows all of a person's values but one can confirm guesses against a "
    "hash) and each person's landmark count. Keep it, and the .lmdk-batch folder, with the input; publish "
    "only the per-person releases and their .json sidecars, which carry no input hash.")


class BatchError(RuntimeError):
    """A one-line reason why the run could not start or finish (no person was half-written)."""


# ------------------------------------------------------------------------------------------ options
@dataclass(frozen=True)
class BatchOptions:
    """Everything ``lmdk batch`` takes; the app's "Export all persons…" fills the same object."""

    id_col: str
    scheme: str
    settings: PrivacySettings
    # Column options, as for one series (see loader.load_series).
    time_col: str | None = None
    value_col: str | None = None
    lat_col: str | None = None
    lon_col: str | None = None
    hour_col: str | None = None
    kind: str | None = None
    duplicates: str = "error"
    date_order: str | None = None  # d/d/yyyy dates: "dmy", "mdy" or None (see loader.load_series)
    # Landmarks: a file with the id column and a 'row' or 'timestamp' column, or a suggestion rule run on each
    # person's series (rule name + its parameters); neither = no landmarks.
    landmarks_file: str | None = None
    rule: str | None = None
    rule_params: Mapping[str, Any] = field(default_factory=dict)
    dummies: DummySettings | None = None
    include_budget: bool = False
    include_flags: bool = False
    key: bytes | None = None  # master key (keys.key_weakness accepts it) for per-person seeds; None = OS entropy
    backend: str | None = None
    format: str = "csv"
    resume: bool = False
    force: bool = False
    workers: int | None = None  # LocalCluster processes (None = one per CPU); ignored with a client/scheduler
    scheduler: str | None = None  # address of an existing dask.distributed scheduler
    blocksize: int = DEFAULT_BLOCKSIZE  # bytes of CSV per input partition
    # A coarser release resolution (DESIGN §12): one value per period ("1D", "1W"…), each period's sum or mean
    resolution: str | None = None
    aggregate: str = "sum"

    def validate(self) -> None:
        if self.scheme not in LANDMARK_SCHEMES:
            raise BatchError(f"unknown scheme {self.scheme!r}; choose one of {', '.join(LANDMARK_SCHEMES)}")
        if self.format not in FORMATS:
            raise BatchError(f"unknown format {self.format!r}; choose csv or parquet")
        if self.landmarks_file and self.rule:
            raise BatchError("give either a landmark file or a rule, not both")
        if self.rule is not None and self.rule not in RULES:
            raise BatchError(f"unknown rule {self.rule!r}; choose one of {', '.join(RULES)}")
        if self.key is not None and (weak := keys.key_weakness(self.key)) is not None:
            raise BatchError(f"{weak.replace('the export key', 'the seed key')}; {_KEY_HELP}")
        if self.resume and self.force:
            raise BatchError("--resume and --force exclude each other")
        if self.workers is not None and self.workers < 1:
            raise BatchError(f"workers must be at least 1, got {self.workers}")
        if self.blocksize < 1024:
            raise BatchError(f"blocksize must be at least 1 KiB, got {self.blocksize}")
        try:
            self.settings.validate()
            if self.dummies is not None:
                self.dummies.validate()
        except ValueError as e:
            raise BatchError(str(e)) from None


@dataclass(frozen=True)
class BatchProgress:
    """One progress report. ``phase``: "starting", "checksums", "counting", "releasing", "manifest", "done"
    (the last one, with the summary's exact figures). Person counts include persons skipped by ``resume``
    and failed ones; ``rows_done`` counts rows released in this run."""

    phase: str
    persons_done: int = 0
    persons_total: int = 0
    failed: int = 0
    rows_done: int = 0
    elapsed_s: float = 0.0
    dashboard: str | None = None

    @property
    def rows_per_s(self) -> float:
        return self.rows_done / self.elapsed_s if self.elapsed_s > 0 else 0.0


@dataclass(frozen=True)
class BatchSummary:
    outdir: Path
    manifest: Path
    persons: int
    released: int  # released persons, including those already done before a resume
    failed: int
    resumed: int  # persons skipped because a previous run had released them
    rows: int  # rows released in this run
    seconds: float
    missing_id_rows: int
    input_partitions: int
    max_task_rows: int  # the most rows one release task held (a partition or a bucket)
    dashboard: str | None
    errors: tuple[tuple[str, str], ...]  # (id, message) of every failed person
    # The composition note for persons released in this run whose same data were released before (None: none).
    composition: str | None = None

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


# ---------------------------------------------------------------------------------- keys and names
_KEY_HELP = "a master key is 64 random hex digits: python -c 'import secrets; print(secrets.token_hex(32))'"


def parse_key(text: str) -> bytes:
    """A master key written as hex: a secret the export accepts (64 random hex digits, :mod:`.keys`)."""
    t = text.strip().lower().removeprefix("0x")
    try:
        key = bytes.fromhex(t)
    except ValueError:
        raise BatchError(f"the seed key must be hexadecimal digits (0-9, a-f); {_KEY_HELP}") from None
    weak = keys.key_weakness(key)
    if weak is not None:
        raise BatchError(f"{weak.replace('the export key', 'the seed key')}; {_KEY_HELP}")
    return key


def person_key(master: bytes, person_id: str) -> bytes:
    """The person's own 256-bit key: HMAC-SHA256(master, UTF-8 id); independent streams per person."""
    return hmac.new(master, str(person_id).encode("utf-8"), hashlib.sha256).digest()


def export_seed(key: bytes) -> str:
    """A person's key as ``ExportOptions.seed`` (and ``lmdk export --seed``) take it: 64 hex digits, a secret
    of 256 bits (issue 17: export seeds are keys, never small integers)."""
    return key.hex()


def _key_id(master: bytes) -> str:
    """Names the key in the fingerprint/manifest without revealing it."""
    return hmac.new(master, b"lmdk-batch key id", hashlib.sha256).hexdigest()[:16]


_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10))}
_MAX_NAME = 200  # bytes; leaves room for ".csv.json" and the temp-file prefix/suffix under 255


def safe_name(person_id: str) -> str:
    """A file-name-safe, collision-free spelling of an id: UTF-8 bytes outside ``[A-Za-z0-9._-]`` (and a
    leading dot, and Windows device names' first letter) percent-encoded, so ``unquote`` gives the id back."""
    out = "".join(chr(b) if chr(b) in _SAFE else f"%{b:02X}" for b in str(person_id).encode("utf-8"))
    if out.startswith(".") or out.split(".")[0].upper() in _RESERVED:
        out = f"%{ord(out[0]):02X}" + out[1:]
    if len(out) > _MAX_NAME:
        raise ValueError(f"id {str(person_id)[:40]!r}… is too long for a file name ({len(out)} > {_MAX_NAME})")
    return out


# ------------------------------------------------------------------------------------------ inputs
def resolve_inputs(spec: str | os.PathLike) -> list[Path]:
    """A file, a folder (its CSV/TSV/Parquet files) or a glob → sorted files of one type."""
    p = Path(spec)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith((".", "_"))
                       and f.suffix.lower() in _CSV_SUFFIXES + _PARQUET_SUFFIXES + _SHEET_SUFFIXES)
        where = f"the folder {p}"
    elif p.is_file():
        files = [p]
        where = str(p)
    else:
        files = sorted(Path(f) for f in glob.glob(str(spec)) if Path(f).is_file())
        where = f"the pattern {spec}"
    if not files:
        raise BatchError(f"{where}: no input file found (CSV, TSV, Parquet or Excel .xlsx)")
    kinds = {_input_type(f) for f in files}
    if len(kinds) > 1:
        raise BatchError(f"{where}: mixes {' and '.join(sorted(kinds))} files; give one type")
    return files


def _input_type(f: Path) -> str:
    suffix = f.suffix.lower()
    return "Parquet" if suffix in _PARQUET_SUFFIXES else "Excel" if suffix in _SHEET_SUFFIXES else "CSV"


def _is_parquet(files: list[Path]) -> bool:
    return _input_type(files[0]) == "Parquet"


def _delimiter(first: Path) -> str:
    from ..data.reading import _sniff_delimiter  # the single-file reader's rule, so both read a file alike

    with open(first, "rb") as f:
        header = f.readline().decode("utf-8-sig", errors="replace")
    return _sniff_delimiter(header, first.suffix.lower())


def _blocksize(files: list[Path], options: BatchOptions, workers: int) -> int:
    """The user's blocksize; by default no more than a quarter of the input per worker (at least 1 MiB), so
    a table smaller than 32 MB still splits into enough partitions to keep every worker busy (persons inside
    one partition are released by that partition's task; the releases do not depend on the split)."""
    if options.blocksize != DEFAULT_BLOCKSIZE:
        return options.blocksize
    total = sum(f.stat().st_size for f in files)
    return int(min(options.blocksize, max(2**20, total // (4 * max(workers, 1)) + 1)))


def _read(files: list[Path], options: BatchOptions, columns: list[str] | None = None, workers: int = 1):
    """The input as a dask DataFrame; CSV columns as text (the per-person loader types them)."""
    import dask.dataframe as dd

    paths = [str(f) for f in files]
    if _is_parquet(files):
        return dd.read_parquet(paths, columns=columns)
    if _input_type(files[0]) == "Excel":  # (at most 2^20 rows a sheet: read here, then split for the workers)
        frame = pd.concat([_sheet_rows(f, columns) for f in files], ignore_index=True)
        return dd.from_pandas(frame, npartitions=max(1, min(4 * max(workers, 1), len(frame) // 10_000 + 1)))
    return dd.read_csv(paths, sep=_delimiter(files[0]), dtype=str, blocksize=_blocksize(files, options, workers),
                       keep_default_na=False, na_values=[""], usecols=columns, engine="pyarrow",
                       encoding="utf-8", include_path_column=_PATH)


def _sheet_rows(path: Path, columns: list[str] | None) -> pd.DataFrame:
    """A workbook's table (core/data/sheets.py) as text columns, read as the single-file loader reads it (its CSV text)."""
    from ..data.sheets import xlsx_to_csv

    try:
        text, _sheet, _titles = xlsx_to_csv(path.read_bytes())
    except (OSError, ValueError) as e:
        raise BatchError(f"{path.name}: {e}") from None
    return pd.read_csv(io.BytesIO(text), dtype=str, keep_default_na=False, na_values=[""], usecols=columns)


# ---------------------------------------------------------------------------- worker-side context
@dataclass(frozen=True)
class _Ctx:
    """What every release task needs (sent once per run, shared by all tasks)."""

    outdir: str
    options: BatchOptions
    fingerprint: str
    topic: str
    split: frozenset[str]
    landmarks: Mapping[str, pd.DataFrame] | None
    landmarks_name: str
    delimiter: str = ","  # the CSV input's (its decimal commas are read as a single file's would be)
    sheet: bool = False  # Excel input (a numeric time column holds day numbers, as for a single workbook)
    inputs: tuple[str, ...] = ()  # the input file(s): for the private ledger; no release may replace one
    #: CSV input: per partition, (its input file's index in ``inputs``, the file's data rows before it); a
    #: row's line in its file is then offset + position in the partition + 2 (the header is line 1)
    parts: tuple[tuple[int, int], ...] | None = None

    @property
    def state(self) -> Path:
        return Path(self.outdir) / STATE_DIR

    def marker(self, safe: str) -> Path:
        return self.state / "done" / f"{safe}.json"

    def files(self, safe: str) -> tuple[str, str]:
        """(release, sidecar) paths relative to OUTDIR."""
        if self.options.format == "parquet":
            return f"{PARQUET_DIR}/id={safe}/part-0.parquet", f"{PARQUET_DIR}/id={safe}/_release.json"
        return f"{safe}.csv", f"{safe}.csv.json"


_COLUMN_OPTIONS = ("time_col", "value_col", "lat_col", "lon_col", "hour_col", "kind", "duplicates", "date_order")


def _typed(frame: pd.DataFrame, o: BatchOptions) -> pd.DataFrame:
    """Text columns as a CSV reader would type them (numbers where every present value is one, else text):
    what ``load_series`` sees for the same rows in a file of their own."""
    out = {}
    for c in frame.columns:
        s = frame[c]
        if pd.api.types.is_string_dtype(s.dtype) or s.dtype == object:
            s = pd.Series(s.to_numpy(dtype=object, na_value=np.nan), name=c)
            if not (o.kind == "categorical" and c == o.value_col) and _first_is_number(s):
                num = pd.to_numeric(s, errors="coerce")
                present = s.notna().to_numpy()
                if present.any() and not num.isna().to_numpy()[present].any():
                    s = num
        out[c] = s.reset_index(drop=True)
    return pd.DataFrame(out)


def _first_is_number(s: pd.Series) -> bool:
    """Cheap pre-test: a column whose first present value is no number is text (ISO times, labels), and
    ``to_numeric`` would try every row to find that out."""
    i = s.first_valid_index()
    if i is None:
        return False
    try:
        float(s[i])
    except (TypeError, ValueError):
        return False
    return True


def _landmarks_for(pid: str, series, ctx: _Ctx) -> np.ndarray:
    o = ctx.options
    if ctx.landmarks is not None:
        table = ctx.landmarks.get(pid)
        if table is None:
            return np.zeros(0, dtype=np.int64)
        return landmark_rows(table, series, f"{ctx.landmarks_name} (id {pid})")
    if o.rule is not None:
        rule = RULES[o.rule]
        if not rule.supports(series.kind):
            raise ValueError(f"--rule {o.rule} needs a {' or '.join(rule.kinds)} series; id {pid} was read as "
                             f"{series.kind}")
        return apply_rule(series, rule, **dict(o.rule_params))
    return np.zeros(0, dtype=np.int64)


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    with AtomicFile(path, private=True) as af:
        af.file.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        af.commit()


def _write_marker(path: Path, doc: dict[str, Any]) -> None:
    """Atomic (rename) but not fsync'ed: a marker lost in a power cut only makes --resume redo that person,
    and its fsync would cost as much as the release's own."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _done_before(ctx: _Ctx, safe: str) -> dict[str, Any] | None:
    m = ctx.marker(safe)
    try:
        rec = json.loads(m.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if rec.get("fingerprint") != ctx.fingerprint or rec.get("status") != "released":
        return None
    if not all((Path(ctx.outdir) / rec[k]).is_file() for k in ("file", "sidecar")):
        return None
    return rec


def _to_parquet(csv_path: Path, target: Path, series) -> None:
    """The release CSV as one typed Parquet file (pandas 3 reads floats back exactly)."""
    src = series.source
    dtype = {src.value_cols[0]: str} if series.kind == "categorical" else None
    df = pd.read_csv(csv_path, dtype=dtype, keep_default_na=False, na_values=[""])
    tcol = df.columns[0]
    if src.time_format != "epoch":
        df[tcol] = pd.to_datetime(df[tcol], format="ISO8601")
    with AtomicFile(target, mode="wb") as af:
        df.to_parquet(af.file, index=False)
        af.commit()


def _origin(ctx: _Ctx, part: np.ndarray, pos: np.ndarray) -> RowOrigin | None:
    """Each row's input file and line, from its partition and position there (CSV input; None otherwise)."""
    if ctx.parts is None:
        return None
    table = np.asarray(ctx.parts, dtype=np.int64).reshape(-1, 2)
    file_of, offset = table[part, 0], table[part, 1]
    used, files = np.unique(file_of, return_inverse=True)
    return RowOrigin(lines=offset + pos + 2, files=files, names=tuple(Path(ctx.inputs[i]).name for i in used))


def _release_person(pid: str, rows: pd.DataFrame, ctx: _Ctx, task_rows: int,
                    origin: RowOrigin | None = None) -> dict[str, Any]:
    """Release one person (or reuse a complete earlier release); never raises for the person's own data."""
    o = ctx.options
    rec: dict[str, Any] = {"id": pid, "input_rows": len(rows), "rows": None, "landmarks": None,
                           "landmark_sum": None, "verdict": None, "status": "failed", "error": None,
                           "file": None, "sidecar": None, "task_rows": task_rows, "fingerprint": ctx.fingerprint,
                           "run": ctx.topic}
    try:
        safe = safe_name(pid)
    except ValueError as e:
        rec["error"] = str(e)
        return rec
    if o.resume and (before := _done_before(ctx, safe)) is not None:
        return {**before, "status": "resumed"}
    out = Path(ctx.outdir)
    file, sidecar = ctx.files(safe)
    try:
        series = load_dataframe_series(_typed(rows, o), name=f"id {pid}",
                                       categories=o.settings.categories, delimiter=ctx.delimiter, sheet=ctx.sheet,
                                       origin=origin, **{k: getattr(o, k) for k in _COLUMN_OPTIONS})
        lm = _landmarks_for(pid, series, ctx)
        series, lm, settings = apply_resolution(series, lm, o.settings, o.resolution, o.aggregate)
        opts = ExportOptions(scheme=o.scheme, include_budget=o.include_budget, include_flags=o.include_flags,
                             seed=export_seed(person_key(o.key, pid)) if o.key is not None else None,
                             backend=o.backend, force=True, dummies=o.dummies, protect=ctx.inputs,
                             landmarks_rule=RULES[o.rule].label if o.rule is not None else None,
                             origin=BatchOrigin(ctx.inputs, o.id_col, pid))
        if o.format == "csv":
            res = export_release(series, lm, settings, out / file, opts)
        else:
            stage = ctx.state / "tmp" / f"{safe}.csv"
            res = export_release(series, lm, settings, stage, opts)
            (out / file).parent.mkdir(parents=True, exist_ok=True)
            for target in (out / file, out / sidecar):  # the one output guard, as the CSV's (issue 42)
                check_output(target, ctx.inputs, force=True, what="release")
            _to_parquet(stage, out / file, series)
            os.replace(res.sidecar, out / sidecar)
            stage.unlink()
        g = res.guarantee
        rec.update(rows=res.rows, landmarks=int(len(lm)), landmark_sum=float(g.worst),
                   verdict="holds" if g.holds else "violated", status="released", file=file, sidecar=sidecar,
                   prior_releases=list(res.prior_releases) if res.composition else None)
    except (LoadError, ExportError, GuaranteeError, ValueError, OSError) as e:
        rec["error"] = " ".join(str(e).split()) or type(e).__name__
    except Exception as e:  # noqa: BLE001 - an unforeseen failure still fails only this person, named
        rec["error"] = f"{type(e).__name__}: {' '.join(str(e).split())}"
    _write_marker(ctx.marker(safe), rec)
    return rec


def _report(ctx: _Ctx, rec: dict[str, Any]) -> None:
    """Tell the client about one finished person (progress only: the markers are the record)."""
    try:
        from distributed import get_worker

        w = get_worker()
    except (ImportError, ValueError):
        return
    w.log_event(ctx.topic, {"id": rec["id"], "status": rec["status"],
                            "rows": rec["rows"] if rec["status"] == "released" else 0})


def _cancelled(ctx: _Ctx) -> bool:
    """This run was cancelled (a file per run: a later --resume must not revive a cancelled run's tasks)."""
    return (ctx.state / f"cancel-{ctx.topic}").exists()


def _release_group_frame(df: pd.DataFrame, ctx: _Ctx, keep: Callable[[str], bool], ordered: bool,
                         part: int = 0) -> int:
    """Release each person of ``df``: one input partition's (number ``part``) own persons, or (``ordered``)
    the shuffled rows of persons cut by partition edges, put back in file order by ``_ORDER``."""
    idc = ctx.options.id_col
    drop = [c for c in (idc, _ORDER, _BUCKET, _PATH) if c in df.columns]
    for pid, rows in df.groupby(idc, sort=False, dropna=True):
        pid = str(pid)
        if not keep(pid):
            continue
        if _cancelled(ctx):
            break
        if ordered:
            rows = rows.sort_values(_ORDER, kind="stable")
            order = rows[_ORDER].to_numpy(dtype=np.int64)
            where, pos = order >> np.int64(32), order & np.int64(0xFFFFFFFF)
        else:  # (a partition's rows keep their position as index: each partition is read from 0)
            pos = rows.index.to_numpy(dtype=np.int64)
            where = np.full(pos.size, part, dtype=np.int64)
        _report(ctx, _release_person(pid, rows.drop(columns=drop), ctx, len(df), _origin(ctx, where, pos)))
    return len(df)


def _local_stage(df: pd.DataFrame, ctx: _Ctx, buckets: pd.Series | None, part: int) -> pd.DataFrame:
    """Release the persons wholly inside this input partition; return the rows of the others (tagged with
    their file order and bucket) for the shuffle."""
    idc = ctx.options.id_col
    df = df[df[idc].notna() & (df[idc].astype(str) != "")]
    ids = df[idc].astype(str)
    split = ids.isin(ctx.split).to_numpy() if ctx.split else np.zeros(len(df), dtype=bool)
    _release_group_frame(df, ctx, lambda pid: pid not in ctx.split, ordered=False, part=part)
    rest = df[split].copy()
    # the position in the partition as read (CSV: its index), so that a row's line can be found again
    at = df.index.to_numpy(dtype=np.int64) if ctx.parts is not None else np.arange(len(df), dtype=np.int64)
    rest[_ORDER] = (np.int64(part) << np.int64(32)) + at[split]
    rest[_BUCKET] = ids[split].map(buckets).astype(np.int64) if buckets is not None else np.int64(0)
    return rest


def _bucket_stage(df: pd.DataFrame, ctx: _Ctx) -> pd.DataFrame:
    n = _release_group_frame(df, ctx, lambda pid: True, ordered=True)
    return pd.DataFrame({"rows": [n]})


def _count_partition(df: pd.DataFrame, id_col: str, part: int) -> pd.DataFrame:
    ids = df[id_col]
    missing = int((ids.isna() | (ids.astype(str) == "")).sum())
    text = ids[ids.notna()].astype(str)
    counts = text[text != ""].value_counts(sort=False)
    path = str(df[_PATH].iloc[0]) if _PATH in df.columns and len(df) else None  # (a partition reads one file)
    out = pd.DataFrame({"id": counts.index.astype(object), "rows": counts.to_numpy(dtype=np.int64),
                        "part": part, "path": path})
    if missing:
        out = pd.concat([out, pd.DataFrame({"id": [None], "rows": [missing], "part": [part], "path": [path]})])
    return out


def _part_offsets(per_part: pd.DataFrame, files: list[Path], n_parts: int) -> tuple[tuple[int, int], ...] | None:
    """Per partition (file index, data rows of that file in earlier partitions); None without file paths."""
    if per_part["path"].isna().all():
        return None
    index = {str(Path(f).resolve()): i for i, f in enumerate(files)}
    rows = per_part.groupby("part")["rows"].sum()
    path = per_part.groupby("part")["path"].first()
    out: list[tuple[int, int]] = []
    seen: dict[int, int] = {}
    for p in range(n_parts):
        f = index.get(str(Path(str(path[p])).resolve()), 0) if p in path.index and path[p] is not None else 0
        out.append((f, seen.get(f, 0)))
        seen[f] = seen.get(f, 0) + int(rows.get(p, 0))
    return tuple(out)


# --------------------------------------------------------------------------------------- driver side
def _settings_doc(options: BatchOptions, files: list[Path], landmark_sha: str | None) -> dict[str, Any]:
    o = options
    lm: dict[str, Any] | None = None
    if o.landmarks_file:
        lm = {"file": Path(o.landmarks_file).name, "sha256": landmark_sha}
    elif o.rule:
        lm = {"rule": o.rule, "params": dict(o.rule_params)}
    doc = {
        "scheme": o.scheme,
        "privacy": o.settings.to_dict(),
        "columns": {"id_col": o.id_col, **{k: getattr(o, k) for k in _COLUMN_OPTIONS}},
        "landmarks": lm,
        "dummies": asdict(o.dummies) if o.dummies is not None else None,
        "include_budget": o.include_budget,
        "include_flags": o.include_flags,
        "seeded": o.key is not None,
        "key_id": _key_id(o.key) if o.key is not None else None,
        "noise_backend": o.backend or "exact",
        "format": o.format,
    }
    if o.resolution:  # (only then: the fingerprint of a batch without one is as before)
        doc["resolution"] = {"resolution": o.resolution, "aggregate": o.aggregate}
    return doc


def _fingerprint(settings: dict[str, Any], inputs: list[dict[str, str]]) -> str:
    text = json.dumps({"settings": settings, "inputs": inputs, "batch": MANIFEST_FORMAT}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _precheck_outdir(outdir: Path, options: BatchOptions, files: list[Path]) -> None:
    """Refuse to mix runs: a non-empty OUTDIR needs --resume or --force (checked before any cluster starts)."""
    if any(outdir.resolve() == f.resolve().parent for f in files):
        raise BatchError(f"the output folder {outdir} is the input's folder; choose another (the releases "
                         "would mix with the input files)")
    state = outdir / STATE_DIR
    run_file = state / "run.json"
    if outdir.exists() and not outdir.is_dir():
        raise BatchError(f"{outdir} is a file; the output must be a folder")
    entries = [e for e in outdir.iterdir()] if outdir.exists() else []
    if entries and not options.force:
        if not run_file.exists():
            raise BatchError(f"the output folder {outdir} is not empty and holds no batch run; choose an empty "
                             "folder, or pass --force to write into it")
        if not options.resume:
            raise BatchError(f"the output folder {outdir} holds a batch run; pass --resume to finish it or "
                             "--force to start over")


def check_outdir(input: str | os.PathLike, outdir: str | os.PathLike, options: BatchOptions) -> None:
    """What :func:`run_batch` checks before any worker starts (options, input files, OUTDIR not holding other
    files or another run), as one :class:`BatchError`: for the app's dialog to say it before the run."""
    options.validate()
    _precheck_outdir(Path(outdir), options, resolve_inputs(input))


def _claim_outdir(outdir: Path, options: BatchOptions, fingerprint: str) -> None:
    """--resume needs the same fingerprint; --force removes the earlier run; then the run's state is set up."""
    state = outdir / STATE_DIR
    run_file = state / "run.json"
    if options.resume and run_file.exists():
        try:
            before = json.loads(run_file.read_text(encoding="utf-8")).get("fingerprint")
        except (OSError, ValueError):
            before = None
        if before != fingerprint:
            raise BatchError(f"the run in {outdir} used other settings, another key or other input (its "
                             "fingerprint differs); --resume needs the same ones, or pass --force to start over")
    if options.force and state.exists():
        _remove_previous(outdir)
    try:
        (state / "done").mkdir(parents=True, exist_ok=True)
        (state / "tmp").mkdir(exist_ok=True)
    except OSError as e:
        raise BatchError(f"cannot create the output folder {outdir}: {e.strerror or e}") from None
    _write_json(run_file, {"format": MANIFEST_FORMAT, "fingerprint": fingerprint})


def _remove_previous(outdir: Path) -> None:
    """--force: delete the files an earlier run recorded (and its state); nothing else in OUTDIR."""
    for m in (outdir / STATE_DIR / "done").glob("*.json"):
        with contextlib.suppress(OSError, ValueError):
            rec = json.loads(m.read_text(encoding="utf-8"))
            for k in ("file", "sidecar"):
                if rec.get(k):
                    (outdir / rec[k]).unlink(missing_ok=True)
                    with contextlib.suppress(OSError):
                        (outdir / rec[k]).parent.rmdir() if (outdir / rec[k]).parent != outdir else None
    (outdir / MANIFEST).unlink(missing_ok=True)
    shutil.rmtree(outdir / STATE_DIR, ignore_errors=True)


def _case_insensitive(folder: Path) -> bool:
    probe = folder / STATE_DIR / "tmp" / "case-Probe"
    try:
        probe.touch()
        return (folder / STATE_DIR / "tmp" / "CASE-PROBE").exists()
    finally:
        probe.unlink(missing_ok=True)


def _read_landmark_table(path: str, id_col: str) -> dict[str, pd.DataFrame]:
    """A batch landmark file: the id column plus 'row' or 'timestamp' (read whole: it lists only landmarks)."""
    name = Path(path).name
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, sep=None, engine="python",
                         encoding="utf-8-sig")
    except OSError as e:
        raise BatchError(f"{name}: cannot read the landmark file ({e.strerror or e})") from None
    except Exception as e:  # noqa: BLE001 - pandas raises many types for malformed text
        raise BatchError(f"{name}: not a readable CSV ({e})") from None
    cols = {c.strip().lower(): c for c in df.columns}
    idc = cols.get(id_col.strip().lower())
    if idc is None:
        raise BatchError(f"{name}: the landmark file needs the id column {id_col!r}; found "
                         f"{', '.join(map(str, df.columns))}")
    if "row" not in cols and "timestamp" not in cols:
        raise BatchError(f"{name}: the landmark file needs a 'timestamp' or a 'row' column next to {idc!r}")
    return {str(k): g.drop(columns=[idc]).reset_index(drop=True) for k, g in df.groupby(idc, sort=False)}


def _balanced_buckets(counts: pd.Series, target_rows: int, min_buckets: int) -> pd.Series:
    """Greedy longest-first packing of persons (rows per id) into buckets of about ``target_rows``."""
    n_rows = int(counts.sum())
    k = max(1, min(len(counts), max(min_buckets, math.ceil(n_rows / max(1, target_rows)))))
    loads = np.zeros(k, dtype=np.int64)
    out = {}
    for pid, rows in counts.sort_values(ascending=False, kind="stable").items():
        b = int(np.argmin(loads))
        out[pid] = b
        loads[b] += int(rows)
    return pd.Series(out, dtype=np.int64)


class _Client:
    """The client to use, and whether we own (and must close) it and its cluster."""

    def __init__(self, client, options: BatchOptions) -> None:
        from distributed import Client, LocalCluster

        self.cluster = None
        self.own = client is None
        if client is not None:
            self.client = client
        elif options.scheduler:
            try:
                self.client = Client(options.scheduler, timeout="10s")
            except OSError as e:
                raise BatchError(f"cannot reach the scheduler at {options.scheduler}: {e}") from None
        else:
            import importlib.util

            # Loopback only, any free port; no dashboard without bokeh (distributed would warn).
            dash = "127.0.0.1:0" if importlib.util.find_spec("bokeh") is not None else None
            try:
                self.cluster = LocalCluster(n_workers=options.workers or os.cpu_count() or 1,
                                            threads_per_worker=1, processes=True, host="127.0.0.1",
                                            dashboard_address=dash)
            except Exception as e:  # noqa: BLE001 - whatever stops the workers, say so in one line
                raise BatchError(f"cannot start local Dask workers: {' '.join(str(e).split())}") from None
            self.client = Client(self.cluster)

    @property
    def dashboard(self) -> str | None:
        """The dashboard's link, or None when the scheduler runs none (the link alone would be made up)."""
        try:
            if "dashboard" not in self.client.scheduler_info().get("services", {}):
                return None
            return self.client.dashboard_link or None
        except Exception:  # noqa: BLE001 - no dashboard is not an error
            return None

    @property
    def n_workers(self) -> int:
        return max(1, len(self.client.scheduler_info().get("workers", {})))

    def close(self) -> None:
        if self.own:
            self.client.close()
            if self.cluster is not None:
                self.cluster.close()


def _wait(client, futures, should_cancel: Callable[[], bool], tick: Callable[[], None],
          on_cancel: Callable[[], None] = lambda: None) -> list[Any]:
    """Wait for ``futures`` while reporting progress and honouring cancel; task errors re-raise here."""
    from distributed import wait

    pending = list(futures)
    while pending:
        if should_cancel():
            on_cancel()  # running tasks stop after their current person
            client.cancel(futures)
            raise Cancelled("batch cancelled")
        with contextlib.suppress(TimeoutError):
            wait(pending, timeout=0.25, return_when="FIRST_COMPLETED")
        for f in pending:
            if f.status == "error":
                f.result()  # raises the task's exception
        pending = [f for f in pending if f.status != "finished"]
        tick()
    return client.gather(list(futures))


def run_batch(input: str | os.PathLike, outdir: str | os.PathLike, options: BatchOptions, *,
              progress: Callable[[BatchProgress], None] | None = None,
              should_cancel: Callable[[], bool] | None = None, client=None) -> BatchSummary:
    """Release every person of ``input`` into ``outdir``; see the module docstring.

    ``progress(BatchProgress)`` is called on the calling thread (a few times a second at most);
    ``should_cancel()`` is polled as often: when it returns True the running tasks stop after their current
    person, the call raises :class:`Cancelled`, and OUTDIR holds complete persons only (``resume`` finishes
    it). ``client``: an existing ``distributed.Client`` (not closed here); otherwise a ``LocalCluster`` of
    ``options.workers`` processes on loopback, or ``options.scheduler``, is used and closed at the end.
    Raises :class:`BatchError` when the run cannot start (bad options, input, OUTDIR); a person's bad data
    only fails that person (listed in the manifest and the summary).
    """
    options.validate()
    t0 = time.monotonic()
    cancelled = should_cancel or (lambda: False)
    report = progress or (lambda p: None)
    out = Path(outdir)
    files = resolve_inputs(input)
    if options.landmarks_file and not Path(options.landmarks_file).is_file():
        raise BatchError(f"the landmark file {options.landmarks_file} does not exist")
    lm_tables = _read_landmark_table(options.landmarks_file, options.id_col) if options.landmarks_file else None
    _precheck_outdir(out, options, files)
    report(BatchProgress("starting"))
    cl = _Client(client, options)
    dash = cl.dashboard
    state: dict[str, Any] = {"done": set(), "failed": 0, "rows": 0}
    lock = threading.Lock()
    total = 0

    def tick(phase: str = "releasing") -> None:
        with lock:
            report(BatchProgress(phase, len(state["done"]), total, state["failed"], state["rows"],
                                 time.monotonic() - t0, dash))

    topic = f"lmdk-batch-{os.getpid()}-{time.time_ns()}"

    def on_event(event) -> None:
        msg = event[1] if isinstance(event, tuple) else event
        with lock:
            if msg.get("id") in state["done"]:
                return
            state["done"].add(msg.get("id"))
            state["failed"] += msg.get("status") == "failed"
            state["rows"] += int(msg.get("rows") or 0)

    try:
        report(BatchProgress("checksums", elapsed_s=time.monotonic() - t0, dashboard=dash))
        try:
            sums = _wait(cl.client, [cl.client.submit(file_sha256, str(f), pure=False) for f in files],
                         cancelled, lambda: None)
        except OSError as e:
            raise BatchError(f"cannot read the input {e.filename}: {e.strerror or e}") from None
        inputs = [{"name": f.name, "sha256": s} for f, s in zip(files, sums, strict=True)]
        lm_sha = file_sha256(options.landmarks_file) if options.landmarks_file else None
        settings = _settings_doc(options, files, lm_sha)
        fingerprint = _fingerprint(settings, inputs + ([{"landmarks": lm_sha}] if lm_sha else []))
        _claim_outdir(out, options, fingerprint)

        report(BatchProgress("counting", elapsed_s=time.monotonic() - t0, dashboard=dash))
        try:
            ddf = _read(files, options, workers=cl.n_workers)
        except (ValueError, OSError) as e:
            raise BatchError(f"cannot read {files[0].name}: {e}") from None
        if options.id_col not in ddf.columns:
            raise BatchError(f"no column {options.id_col!r} (the id column) in {files[0].name}; it has "
                             f"{', '.join(str(c) for c in ddf.columns if c != _PATH)}")
        import dask
        import dask.dataframe as dd

        # Both passes run on these same partitions, numbered here: a projected read (the id column only)
        # may be partitioned differently (dask combines small Parquet files), so nothing is projected.
        parts = ddf.to_delayed()
        count = dask.delayed(_count_partition, pure=True)
        try:
            per_part = pd.concat(_wait(cl.client, cl.client.compute(
                [count(p, options.id_col, i) for i, p in enumerate(parts)]), cancelled, lambda: None))
        except Exception as e:  # noqa: BLE001 - a malformed file fails in the reader: one line
            raise BatchError(f"cannot read the input: {' '.join(str(e).split())[:300]}") from None
        missing_rows = int(per_part.loc[per_part["id"].isna(), "rows"].sum())
        n_parts = len(parts)
        offsets = _part_offsets(per_part, files, n_parts)
        per_part = per_part[per_part["id"].notna()]
        per_id = per_part.groupby("id", sort=False)["rows"].sum()
        parts_of = per_part.groupby("id", sort=False)["part"].nunique()
        split_ids = frozenset(parts_of.index[parts_of > 1].astype(str))
        total = len(per_id)
        _refuse_case_clashes(per_id.index, out)

        ctx = _Ctx(str(out), options, fingerprint, topic, split_ids, lm_tables,
                   Path(options.landmarks_file).name if options.landmarks_file else "",
                   _delimiter(files[0]) if _input_type(files[0]) == "CSV" else ",",
                   _input_type(files[0]) == "Excel", tuple(str(f.resolve()) for f in files), offsets)
        ctx_d = dask.delayed(ctx, pure=False)
        buckets = None
        shuffle_method = "tasks"
        if split_ids:
            counts = per_id[per_id.index.isin(split_ids)]
            per_part_rows = int(per_part.groupby("part")["rows"].sum().max())
            buckets = _balanced_buckets(counts, max(int(counts.max()), per_part_rows), 2 * cl.n_workers)
            # A grouped table only shuffles the few persons cut by partition edges: the task-based shuffle
            # starts faster (seconds less per run, measured). A scattered table shuffles everything: p2p,
            # which streams through disk with bounded memory.
            if int(counts.sum()) > 4 * per_part_rows:
                shuffle_method = "p2p"
        buckets_d = dask.delayed(buckets, pure=False)
        local = dask.delayed(_local_stage, pure=True)
        stage1 = [local(p, ctx_d, buckets_d, i) for i, p in enumerate(parts)]
        cl.client.subscribe_topic(topic, on_event)
        if buckets is not None:
            k = int(buckets.max()) + 1
            rest = dd.from_delayed(stage1, meta=_stage1_meta(ddf), verify_meta=False)
            shuffled = rest.set_index(_BUCKET, divisions=list(range(k)) + [k - 1], sort=True,
                                      shuffle_method=shuffle_method)
            final = shuffled.map_partitions(_bucket_stage, ctx_d, meta={"rows": np.int64}).to_delayed()
        else:
            final = stage1
        def stop_tasks() -> None:
            with contextlib.suppress(OSError):
                (out / STATE_DIR / f"cancel-{topic}").touch()

        _wait(cl.client, cl.client.compute(final), cancelled, tick, stop_tasks)
        time.sleep(0.05)  # let the last progress events arrive (the markers are the record anyway)
        tick()
    finally:
        with contextlib.suppress(Exception):
            cl.client.unsubscribe_topic(topic)
        cl.close()

    report(BatchProgress("manifest", len(state["done"]), total, state["failed"], state["rows"],
                         time.monotonic() - t0, dash))
    summary = _finish(out, options, settings, inputs, fingerprint, topic, per_id, missing_rows, n_parts, t0,
                      dash, lm_tables)
    # The final figures come from the markers (progress events can lag or, on a busy cluster, be dropped).
    report(BatchProgress("done", summary.persons, summary.persons, summary.failed, summary.rows,
                         summary.seconds, dash))
    return summary


def _stage1_meta(ddf) -> pd.DataFrame:
    meta = ddf._meta.copy()
    meta[_ORDER] = pd.Series(dtype=np.int64)
    meta[_BUCKET] = pd.Series(dtype=np.int64)
    return meta


def _refuse_case_clashes(ids: pd.Index, out: Path) -> None:
    """On a case-insensitive disk, two ids whose file names differ only by case would share files."""
    if not _case_insensitive(out):
        return
    seen: dict[str, str] = {}
    for pid in map(str, ids):
        with contextlib.suppress(ValueError):
            other = seen.setdefault(safe_name(pid).casefold(), pid)
            if other != pid:
                raise BatchError(f"ids {other!r} and {pid!r} differ only by upper/lower case, and this disk "
                                 "does not tell their file names apart; write OUTDIR on a case-sensitive disk "
                                 "or rename the ids")


def _finish(out: Path, options: BatchOptions, settings: dict[str, Any], inputs: list[dict[str, str]],
            fingerprint: str, run: str, per_id: pd.Series, missing_rows: int, n_parts: int, t0: float,
            dash: str | None, lm_tables) -> BatchSummary:
    """The manifest from the markers (the record of what exists on disk), written last and atomically."""
    persons = []
    errors = []
    released = resumed = rows = max_task = 0
    again: list[tuple[int, float]] = []  # earlier releases of the persons released in this run
    ctx = _Ctx(str(out), options, fingerprint, "", frozenset(), None, "")
    for pid, n_in in per_id.sort_index().items():
        pid = str(pid)
        try:
            rec = json.loads(ctx.marker(safe_name(pid)).read_text(encoding="utf-8"))
        except ValueError as e:  # the id cannot be a file name
            rec = {"id": pid, "input_rows": int(n_in), "status": "failed", "error": str(e)}
        except OSError:
            rec = {"id": pid, "input_rows": int(n_in), "status": "failed",
                   "error": "not released (the run stopped before this person)"}
        if rec.get("fingerprint") not in (None, fingerprint):
            rec = {"id": pid, "input_rows": int(n_in), "status": "failed", "error": "stale marker of another run"}
        max_task = max(max_task, int(rec.get("task_rows") or 0))
        if rec["status"] == "released":
            released += 1
            if rec.get("run") == run:
                rows += int(rec["rows"])
                k, eps = rec.get("prior_releases") or (0, 0.0)
                if k:
                    again.append((int(k), float(eps)))
            else:
                resumed += 1
        else:
            errors.append((pid, str(rec.get("error"))))
        persons.append({k: rec.get(k) for k in ("id", "file", "sidecar", "input_rows", "rows", "landmarks",
                                                  "landmark_sum", "verdict", "status", "error")})
    seconds = time.monotonic() - t0
    unknown = sorted(set(lm_tables) - {str(i) for i in per_id.index}) if lm_tables else []
    doc = {
        "format": MANIFEST_FORMAT,
        "private": True,
        "comment": _MANIFEST_COMMENT,
        "tool_version": __version__,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "inputs": inputs,
        "settings": settings,
        "fingerprint": fingerprint,
        "totals": {"persons": len(persons), "released": released, "failed": len(errors),
                   "rows_released": rows, "rows_without_id": missing_rows,
                   "landmark_ids_not_in_input": len(unknown)},
        "persons": persons,
    }
    _write_json(out / MANIFEST, doc)
    shutil.rmtree(out / STATE_DIR / "tmp", ignore_errors=True)
    for f in (out / STATE_DIR).glob("cancel-*"):  # earlier cancelled runs' tasks are long gone
        f.unlink(missing_ok=True)
    return BatchSummary(out, out / MANIFEST, len(persons), released, len(errors), resumed, rows, seconds,
                        missing_rows, n_parts, max_task, dash, tuple(errors),
                        _composition_note(again, options.settings.epsilon))


def _composition_note(again: list[tuple[int, float]], epsilon: float) -> str | None:
    """The ledger's composition note for the persons of this run released before (the worst of them)."""
    from .ledger import notice_text

    if not again:
        return None
    k, total = max(again, key=lambda a: (a[1], a[0]))
    if len(again) == 1:
        return f"one person of this run: {notice_text(k, total, epsilon)}"
    return (f"{len(again)} persons of this run were released before from the same data (up to {k} time"
            f"{'s' if k > 1 else ''}, total ε up to {total:g}); with this run, anyone holding all of a person's "
            f"releases faces up to ε = {total + float(epsilon):g} (sequential composition)")
