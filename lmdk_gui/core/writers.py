"""Release files (DESIGN §9): the protected CSV, written atomically, and its JSON sidecar.

The CSV is written to a hidden temporary file *in the target folder* (so the final rename is atomic on the
same file system), flushed and fsync'ed, and renamed over the target only when it is complete. Anything
that goes wrong — an exception, a cancel, a failed guarantee check — removes the temporary file, so the
target path either keeps its previous content or holds the complete new release, never a partial one.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .. import __version__

try:  # POSIX advisory locks: a live writer holds one on its temp file, so cleaners can tell it from debris
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

SIDECAR_FORMAT = "lmdk-release/1"
SIDECAR_KEYS = (
    "format", "tool_version", "input", "kind", "scheme", "epsilon", "epsilon_selection", "sensitivity",
    "radius_m", "bounds", "categories", "noise_backend", "seeded", "landmark_sum", "guarantee_holds",
    "columns", "post_processing",
)


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
    else becomes ``YYYY-MM-DD HH:MM:SS`` (with a fraction only when some timestamp has one)."""
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
    return np.char.replace(s, "T", " ") if s.size else s


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

    def __enter__(self):
        folder = self.target.parent if str(self.target.parent) else Path(".")
        remove_stale_parts(self.target)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.target.name}.", suffix=".part", dir=folder)
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
            mode = self.target.stat().st_mode & 0o7777
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
    """Delete temp files of earlier, killed writes to ``target`` (``.<name>.*.part`` in its folder).

    A killed export leaves a partial release behind: a second, independent noisy release of its first rows,
    which must not linger next to the next release. A live writer holds an exclusive lock on its temp file,
    so only files nobody holds are removed (without ``fcntl``, i.e. on Windows, nothing is removed)."""
    if fcntl is None:
        return []
    t = Path(target)
    removed = []
    pattern = os.path.join(glob.escape(str(t.parent if str(t.parent) else ".")), glob.escape(f".{t.name}.") + "*.part")
    for part in glob.glob(pattern):
        try:
            fd = os.open(part, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a live writer holds it
            os.close(fd)
            continue
        try:
            os.unlink(part)
            removed.append(Path(part))
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def build_sidecar(*, input_name: str | None, rows: int, kind: str, scheme: str, epsilon: float,
                  epsilon_selection: Any, sensitivity: float | None, radius_m: float | None,
                  bounds: Sequence[float] | None, categories: Sequence[str] | None, noise_backend: str,
                  seeded: bool, landmark_sum: float, guarantee_holds: bool,
                  columns: Sequence[str], post_processing: dict[str, Any] | None = None) -> dict[str, Any]:
    """The metadata that says exactly what was guaranteed — never the landmark positions.

    Nothing computed from the private input beyond what the release itself shows: no hash of the input (an
    adversary who knows all values but one recovers it by hashing candidates) and no input file name (it can
    be a person's name) unless the caller passes one because the user asked for it. ``post_processing``
    (issue 12): what was applied to the secure release before writing (``{"method": …, **params}``,
    computed from the released values, budgets and public settings only), or None for the raw release.
    """
    source: dict[str, Any] = {"rows": int(rows)}
    if input_name:
        source["name"] = input_name
    doc = {
        "format": SIDECAR_FORMAT,
        "tool_version": __version__,
        "input": source,
        "kind": kind,
        "scheme": scheme,
        "epsilon": float(epsilon),
        "epsilon_selection": epsilon_selection,
        "sensitivity": None if sensitivity is None else float(sensitivity),
        "radius_m": None if radius_m is None else float(radius_m),
        "bounds": None if bounds is None else [float(bounds[0]), float(bounds[1])],
        "categories": None if categories is None else [str(c) for c in categories],
        "noise_backend": noise_backend,
        "seeded": bool(seeded),
        "landmark_sum": float(landmark_sum),
        "guarantee_holds": bool(guarantee_holds),
        "columns": list(columns),
        "post_processing": None if post_processing is None else dict(post_processing),
    }
    assert tuple(doc) == SIDECAR_KEYS
    return doc


def sidecar_text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
