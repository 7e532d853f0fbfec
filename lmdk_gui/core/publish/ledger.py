"""The release ledger (issue 17): a private record of every release made on this computer.

Every export — the app, ``lmdk export`` and :func:`~lmdk_gui.core.publish.export.export_release` for any later
batch command — appends one JSON line *before* its files are renamed into place: the input's identity
(``input_digest``, :func:`~.keys.series_digest`), its file's SHA-256 and path (a batch person's: the table's
file(s), the id column and the id), scheme, ε, UTC time, output path, the exact landmark sum, rows read and,
when the export was made with a key, the key and what is needed to make the very same release again (input
columns, landmark rows, settings, options). The ledger is private: owner-only (0600) in the user's application-data folder
(``$XDG_DATA_HOME/lmdk_gui/ledger.jsonl``, ``~/Library/Application Support/lmdk_gui`` on macOS,
``%APPDATA%\\lmdk_gui`` on Windows); ``LMDK_LEDGER`` names another file or folder. The sidecar never
contains it.

Why: releases of the same data compose. A holder of k releases of one input made with ε_1 … ε_k faces
ε_1 + … + ε_k (sequential composition); :func:`composition` counts them and every surface shows the note
(:func:`notice_text`) once a new release of the same input is written (the window also asks before). An
input is identified by the canonical digest of its *loaded* series (times and values after the duplicate
policy, category labels), not by the file's bytes: the same data with other line endings, quoting or row
order, or a batch person's rows, is the same input; another column, another duplicate policy or a
corrected value is another series (entries written before issue 42 have only the file's SHA-256 and are
matched on that). A re-export (same key, same input) re-creates an existing release bit for bit and spends
no new ε: it is recorded with ``reexport_of`` and not counted again — and so is a keyed export that makes a
release already in the ledger (same key, data, landmarks and settings: ``release_id``), e.g. a repeated
keyed batch run. It works for entries whose key was bound
to the release (``key_binding``, issue 42), batch persons included when their table is one file.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sys
import threading
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["ENV_VAR", "BatchOrigin", "LedgerError", "clear", "composition", "composition_notice", "entries",
           "find", "ledger_path", "notice_text", "Prior", "record_export"]

ENV_VAR = "LMDK_LEDGER"
FILE_NAME = "ledger.jsonl"
#: entries whose noise came from the key bound to the release digest (keys.py); older keys cannot re-export
KEY_BINDING = "release-digest-v2"


@dataclass(frozen=True)
class BatchOrigin:
    """Where a batch person's series came from, for the ledger: the table's file(s), its id column and the
    person's id (the series itself is built from a frame and names no file)."""

    paths: tuple[str, ...]
    id_col: str
    person_id: str


class LedgerError(ValueError):
    """A ledger entry that cannot be used (one line, names the entry)."""


def ledger_path() -> Path:
    """Where the ledger lives: ``$LMDK_LEDGER`` (a ``.jsonl`` file, or a folder that gets ``ledger.jsonl``),
    else the platform's application-data folder."""
    env = os.environ.get(ENV_VAR)
    if env:
        p = Path(env).expanduser()
        return p if p.suffix == ".jsonl" else p / FILE_NAME
    if sys.platform == "win32":  # pragma: no cover - Windows
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":  # pragma: no cover - macOS
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "lmdk_gui" / FILE_NAME


def entries() -> list[dict[str, Any]]:
    """All entries, oldest first (a torn last line from a crash is skipped)."""
    p = ledger_path()
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            d = json.loads(line)
            if isinstance(d, dict) and "id" in d:
                out.append(d)
    return out


def find(entry_id: str) -> dict[str, Any]:
    matches = [e for e in entries() if str(e.get("id", "")).startswith(entry_id)] if entry_id else []
    if not matches:
        raise LedgerError(f"no release {entry_id!r} in the ledger {ledger_path()}; see `lmdk ledger list`")
    if len(matches) > 1:
        raise LedgerError(f"{entry_id!r} matches {len(matches)} releases; give more of the id")
    return matches[0]


class _Index:
    """What the ledger's lookups need, per input and per keyed release, read incrementally: each export asks
    before it records (a batch: every person), and reading the whole ledger each time grew with its length
    squared. Only the bytes appended since the last look are read; a ledger cleared or replaced is read again."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._reset(None)

    def _reset(self, where: tuple[Any, ...] | None) -> None:
        self.where = where  # (path, device, inode, the first bytes)
        self.offset = 0
        self.inputs: dict[str, list[float]] = {}  # input_digest → [count, total ε]
        self.legacy: dict[str, list[float]] = {}  # input_sha256 of entries from before issue 42 → [count, ε]
        self.releases: dict[str, str] = {}  # release_id → the first entry's id

    def _add(self, e: dict[str, Any]) -> None:
        if e.get("release_id"):
            self.releases.setdefault(str(e["release_id"]), str(e["id"]))
        if e.get("reexport_of"):
            return
        table, ident = (self.inputs, e.get("input_digest")) if e.get("input_digest") else \
            (self.legacy, e.get("input_sha256"))
        if ident:
            acc = table.setdefault(str(ident), [0, 0.0])
            acc[0] += 1
            acc[1] += float(e.get("epsilon") or 0.0)

    def refresh(self) -> _Index:
        p = ledger_path()
        try:
            with open(p, "rb") as f:
                st = os.fstat(f.fileno())
                where = (str(p), st.st_dev, st.st_ino, f.read(256))
                if where != self.where or st.st_size < self.offset:
                    self._reset(where)
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            self._reset(None)
            return self
        end = data.rfind(b"\n") + 1  # complete lines only (an export may be appending the next one)
        for line in data[:end].splitlines():
            with contextlib.suppress(ValueError):
                d = json.loads(line)
                if isinstance(d, dict) and "id" in d:
                    self._add(d)
        self.offset += end
        return self


_INDEX = _Index()


def composition(digest: str, file_sha256: str | None = None) -> tuple[int, float]:
    """(number of releases of the input whose series digest is ``digest``, their total ε), re-exports not
    counted; ``file_sha256`` also matches old entries that only have their file's SHA-256."""
    with _INDEX.lock:
        idx = _INDEX.refresh()
        k, eps = idx.inputs.get(digest, (0, 0.0))
        if file_sha256:
            k2, eps2 = idx.legacy.get(file_sha256, (0, 0.0))
            k, eps = k + k2, eps + eps2
    return int(k), float(eps)


def _first_release(release_id: str) -> str | None:
    """The id of the first entry that is the keyed release ``release_id`` (None: not in the ledger)."""
    with _INDEX.lock:
        return _INDEX.refresh().releases.get(release_id)


def notice_text(k: int, total: float, epsilon: float) -> str | None:
    """The composition note for a release of ε ``epsilon`` of an input released ``k`` times before with total
    ε ``total`` (None when ``k`` is 0)."""
    if k == 0:
        return None
    return (f"this input has been released {k} time{'s' if k > 1 else ''} before (total ε = {total:g}); with "
            f"this release, anyone holding all {k + 1} faces ε = {total + float(epsilon):g} "
            "(sequential composition)")


def composition_notice(series, epsilon: float) -> str | None:
    """The warning for another release of ``series`` (a :class:`~.series.Series`) if it was released before
    (None otherwise): what the window asks about before an export."""
    from .keys import series_digest

    if series is None:
        return None
    src = series.source
    return notice_text(*composition(series_digest(series), src.sha256 if src is not None else None), epsilon)


def _append(entry: dict[str, Any]) -> None:
    p = ledger_path()
    p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        if hasattr(os, "fchmod"):  # an existing ledger made readable by others is made private again
            os.fchmod(fd, 0o600)
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Prior:
    """What the ledger held about a release's input just before it was recorded."""

    count: int  # earlier releases of the same input (re-exports not counted)
    epsilon: float  # their total ε
    same_release_as: str | None = None  # an earlier entry that is this very release (same key and digest)


def _release_id(key: bytes, digest: bytes) -> str:
    """Names a keyed release (its release key hashed once more): two entries with the same id are the same
    release, bit for bit, whatever they were written as. ``digest``: the export's release digest."""
    import hashlib

    from .keys import release_key

    return hashlib.sha256(b"lmdk release id v1\x00" + release_key(key, digest)).hexdigest()


def record_export(series, landmarks, settings, output, options, result, key: bytes | None, *,
                  rows: int, bound_to: bytes = b"") -> Prior:
    """Append the entry of one export (called by ``export_release`` before the renames); returns the earlier
    releases of the same input as the ledger had them just before. A keyed release made before (same key,
    data, landmarks and settings) is recorded as a re-export of it: the same release spends no new ε.
    ``bound_to``: the release digest a keyed export's words are bound to (:func:`.keys.release_digest`)."""
    from ..data.project import ColumnChoice
    from .keys import series_digest

    src = series.source
    origin: BatchOrigin | None = options.origin
    digest = series_digest(series)
    k, total = composition(digest, src.sha256 if src is not None else None)
    rid = _release_id(key, bound_to) if key is not None else None
    same = None if rid is None or options.reexport_of else _first_release(rid)
    if origin is not None:
        paths = [os.path.abspath(p) for p in origin.paths]
        where: dict[str, Any] = {"input_sha256": None, "input_path": paths[0] if len(paths) == 1 else None,
                                 "input_paths": paths, "id_col": origin.id_col, "person_id": origin.person_id}
    else:
        where = {"input_sha256": src.sha256 if src is not None else None,
                 "input_path": os.path.abspath(src.path) if src is not None else None}
    entry: dict[str, Any] = {
        "id": secrets.token_hex(6),
        "created": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "input_digest": digest,
        **where,
        "scheme": options.scheme,
        "epsilon": float(settings.epsilon),
        "output": os.path.abspath(output),
        "landmark_sum": float(result.worst),  # exact (the sidecar has it rounded up)
        # rows read from the file (dropped duplicates and skipped rows included), and the events released:
        # the difference is private, so only this ledger holds it (the sidecar has the released count only)
        "rows_read": int(src.rows_read) if src is not None and src.rows_read else int(rows),
        "rows_released": int(rows),
        "key": key.hex() if key is not None else None,
        "key_binding": KEY_BINDING if key is not None else None,
        "release_id": rid,
        "reexport_of": options.reexport_of or same,
    }
    if key is not None and src is not None:
        columns = ColumnChoice.from_series(series).to_dict()
        if origin is not None:  # read again as one person of the table (load_series' id_col/person_id)
            columns.update(id_col=origin.id_col, person_id=origin.person_id)
        entry["recipe"] = {
            "columns": columns,
            "landmarks": [int(r) for r in np.asarray(landmarks)],
            "settings": settings.to_dict(),
            "options": {
                "scheme": options.scheme, "include_budget": options.include_budget,
                "include_flags": options.include_flags, "backend": options.backend,
                "chunk_rows": int(options.chunk_rows), "include_input_name": options.include_input_name,
                "verbatim_labels": options.verbatim_labels, "categories_from_data": options.categories_from_data,
                "dummies": asdict(options.dummies) if options.dummies is not None else None,
                "denoise": options.denoise,
            },
        }
        per = series.periods
        if per is not None:  # a period release (DESIGN §12): made again from the events read again
            entry["recipe"]["resolution"] = {"resolution": per.resolution, "aggregate": per.aggregate,
                                             "bounds": list(per.bounds) if per.bounds is not None else None}
    _append(entry)
    return Prior(k, total, same)


def clear() -> int:
    """Delete the ledger; returns how many entries it had."""
    n = len(entries())
    with contextlib.suppress(FileNotFoundError):
        ledger_path().unlink()
    return n
