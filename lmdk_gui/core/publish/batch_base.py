"""What a batch run is (issue 16): its options, progress and summary, the per-person keys and file names, its inputs, and the context its tasks share."""

from __future__ import annotations

import glob
import hashlib
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis.suggestions import RULES
from ..data.series import ColumnChoice
from ..kernel.dummies import DummySettings
from ..kernel.settings import LANDMARK_SCHEMES, PrivacySettings
from . import keys

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
    # How each person's rows are read, as one series is (its fields in _COLUMN_OPTIONS; the person is id_col's)
    columns: ColumnChoice = field(default_factory=ColumnChoice)
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
    # Categorical tables (DESIGN §3): every person's sidecar publishes ONE category list. Without a public list
    # (settings.categories) the run is refused unless categories_from_data: then the list is the union of every
    # person's labels in the whole table, the same for all (never a person's own labels). With a public list,
    # a label some person holds that the list lacks refuses the whole run (leaving that person out would tell),
    # unless map_unlisted_to names a category (e.g. "other", added to the list) that such labels become.
    categories_from_data: bool = False
    map_unlisted_to: str | None = None

    def validate(self) -> None:
        other = [k for k in fields(ColumnChoice) if k.name not in _COLUMN_OPTIONS
                 and getattr(self.columns, k.name) != k.default]
        if other:
            raise BatchError(f"{', '.join(k.name for k in other)}: not a column option of a batch, which reads "
                             "each person's rows of a long table by its id column")
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
        if self.settings.bounds_from_data and self.settings.bounds is not None:
            # One person's minimum and maximum would be published in every person's release (and called
            # each person's own by the sidecar): a batch takes public bounds only.
            raise BatchError(BOUNDS_FROM_ONE_PERSON)
        if self.categories_from_data and self.settings.categories is not None:
            raise BatchError("--categories and --categories-from-data exclude each other; give one")
        if self.map_unlisted_to is not None:
            if self.settings.categories is None:
                raise BatchError("--map-unlisted-to applies to a public list: give --categories a,b,c too")
            if not self.map_unlisted_to.strip():
                raise BatchError("--map-unlisted-to needs a category name, e.g. other")
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
    # A categorical table: the manifest's "categories" record (choice, published list); None for other kinds.
    categories: dict[str, Any] | None = None

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


# ---------------------------------------------------------------------------------- keys and names
#: why a batch refuses bounds taken from the data ("From data" in the app), and what to do instead
BOUNDS_FROM_ONE_PERSON = ("the bounds were taken from one person's values (\"From data\"); a batch would publish "
                          "them in every person's release: give public bounds (--bounds LO HI)")
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
    # Categorical tables (see BatchOptions): the published list is options.settings.categories (resolved by the
    # driver); categories_from_data: that list is the table's union of labels (the sidecars say so);
    # unlisted_to: labels outside ``listed`` (the user's public list) become this category.
    categories_from_data: bool = False
    listed: frozenset[str] | None = None
    unlisted_to: str | None = None

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
