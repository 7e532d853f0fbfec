"""The release ledger (issue 17): a private record of every release made on this computer.

Every export — the app, ``lmdk export`` and :func:`~lmdk_gui.core.publish.export.export_release` for any later
batch command — appends one JSON line *before* its files are renamed into place: the input's SHA-256 and
path, scheme, ε, UTC time, output path, the exact landmark sum, rows read and, when the export was made
with a key, the key and what is needed to make the very same release again (input columns, landmark rows,
settings, options). The ledger is private: owner-only (0600) in the user's application-data folder
(``$XDG_DATA_HOME/lmdk_gui/ledger.jsonl``, ``~/Library/Application Support/lmdk_gui`` on macOS,
``%APPDATA%\\lmdk_gui`` on Windows); ``LMDK_LEDGER`` names another file or folder. The sidecar never
contains it.

Why: releases of the same data compose. A holder of k releases of one input made with ε_1 … ε_k faces
ε_1 + … + ε_k (sequential composition); :func:`composition` says so before a new release of the same input
is written. A re-export (same key, same input) re-creates an existing release bit for bit and spends no new
ε: it is recorded with ``reexport_of`` and not counted again.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sys
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["ENV_VAR", "LedgerError", "clear", "composition", "composition_notice", "entries", "find",
           "ledger_path", "record_export", "reexport"]

ENV_VAR = "LMDK_LEDGER"
FILE_NAME = "ledger.jsonl"


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


def composition(sha256: str) -> tuple[int, float]:
    """(number of releases of this input, their total ε), re-exports not counted."""
    eps = [float(e["epsilon"]) for e in entries() if e.get("input_sha256") == sha256 and not e.get("reexport_of")]
    return len(eps), float(sum(eps))


def composition_notice(sha256: str | None, epsilon: float) -> str | None:
    """The warning shown before another release of an input that was released before (None otherwise)."""
    if not sha256:
        return None
    k, total = composition(sha256)
    if k == 0:
        return None
    return (f"this input has been released {k} time{'s' if k > 1 else ''} before (total ε = {total:g}); with "
            f"this release, anyone holding all {k + 1} faces ε = {total + float(epsilon):g} "
            "(sequential composition)")


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


def record_export(series, landmarks, settings, output, options, result, key: bytes | None, *,
                  rows: int) -> dict[str, Any]:
    """Append the entry of one export (called by ``export_release`` before the renames)."""
    from ..data.project import ColumnChoice

    src = series.source
    entry: dict[str, Any] = {
        "id": secrets.token_hex(6),
        "created": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "input_sha256": src.sha256 if src is not None else None,
        "input_path": os.path.abspath(src.path) if src is not None else None,
        "scheme": options.scheme,
        "epsilon": float(settings.epsilon),
        "output": os.path.abspath(output),
        "landmark_sum": float(result.worst),  # exact (the sidecar has it rounded up)
        "rows_read": int(rows),
        "key": key.hex() if key is not None else None,
        "reexport_of": options.reexport_of,
    }
    if key is not None and src is not None:
        entry["recipe"] = {
            "columns": ColumnChoice.from_series(series).to_dict(),
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
    _append(entry)
    return entry


def clear() -> int:
    """Delete the ledger; returns how many entries it had."""
    n = len(entries())
    with contextlib.suppress(FileNotFoundError):
        ledger_path().unlink()
    return n


def reexport(entry_id: str, output, *, force: bool = False, progress=None, should_cancel=None):
    """Make the release ``entry_id`` again, bit for bit, from its kept key (no new ε is spent): reads the
    same input (its SHA-256 must match), the same landmarks, settings and options."""
    from ..data.loader import load_series
    from ..kernel.dummies import DummySettings
    from ..kernel.settings import PrivacySettings
    from .export import ExportOptions, export_release

    e = find(entry_id)
    if not e.get("key") or not e.get("recipe"):
        raise LedgerError(f"release {e['id']} was made with fresh randomness (no kept key): it cannot be made "
                          "again; a new export would be a new release")
    r = e["recipe"]
    settings = PrivacySettings.from_dict(r["settings"])
    load = {k: v for k, v in r["columns"].items() if v is not None}
    if settings.categories is not None:
        load["categories"] = list(settings.categories)
    series = load_series(e["input_path"], **load)
    if series.source is None or series.source.sha256 != e["input_sha256"]:
        raise LedgerError(f"the input {e['input_path']} has changed since release {e['id']} (SHA-256 differs); "
                          "the same release cannot be made from it")
    o = dict(r["options"])
    dummies = DummySettings(**o.pop("dummies")) if o.get("dummies") else None
    o.pop("dummies", None)
    # Entries from before denoising existed wrote the raw release: make that again, bit for bit.
    o.setdefault("denoise", False)
    opts = ExportOptions(seed=bytes.fromhex(e["key"]), force=force, dummies=dummies, reexport_of=e["id"], **o)
    return export_release(series, np.asarray(r["landmarks"], dtype=np.int64), settings, output, opts,
                          progress=progress, should_cancel=should_cancel)
