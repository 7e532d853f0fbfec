"""A batch's output folder (issue 16): claiming it for one run (fingerprint), the per-person markers that make ``--resume`` safe, and ``manifest.json`` written last from them."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from ... import __version__
from .batch_base import (
    _COLUMN_OPTIONS,
    _MANIFEST_COMMENT,
    MANIFEST,
    MANIFEST_FORMAT,
    STATE_DIR,
    BatchError,
    BatchOptions,
    BatchSummary,
    _Ctx,
    _key_id,
    resolve_inputs,
    safe_name,
)
from .writers import AtomicFile


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
        "columns": {"id_col": o.id_col, **{k: getattr(o.columns, k) for k in _COLUMN_OPTIONS}},
        "landmarks": lm,
        "dummies": asdict(o.dummies) if o.dummies is not None else None,
        "include_budget": o.include_budget,
        "include_flags": o.include_flags,
        "seeded": o.key is not None,
        "key_id": _key_id(o.key) if o.key is not None else None,
        "noise_backend": o.backend or "exact",
        "format": o.format,
        "categories_from_data": o.categories_from_data,
        "map_unlisted_to": o.map_unlisted_to,
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
            dash: str | None, lm_tables, categories: dict[str, Any] | None = None) -> BatchSummary:
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
        # a categorical table's one published category list and how it was chosen (null for other kinds)
        "categories": categories,
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
                        _composition_note(again, options.settings.epsilon), categories)


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
