"""The one output guard (issue 42, finding 3): every file lmdk writes passes :func:`check_output` first.

A writer must never replace the private input it read — not through its own path, not through a symbolic or
hard link to it — and never a special file (a folder, a fifo, a device, a symbolic link: a rename would
replace the link, not what it points to, and a fifo would block). An existing regular file is replaced only
with ``force``; ``force`` never makes the input itself writable.

The messages are one line; ``overwrite_hint`` says how the surface lets the user allow overwriting (the
command's ``--force``, a dialog's own question), so the words are the surface's.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

__all__ = ["OutputRefused", "check_output", "same_file"]


class OutputRefused(ValueError):
    """Why a file was not written (one line; nothing was written)."""


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when ``a`` and ``b`` are one file (same path, a symbolic link to it, or a hard link)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a fifo"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_output(target: str | os.PathLike, inputs: Iterable[str | os.PathLike | None] = (), *,
                 force: bool = False, what: str = "file", input_word: str = "input file",
                 overwrite_hint: str = "pass --force to overwrite it") -> Path:
    """Refuse to write ``target`` (raise :class:`OutputRefused`) when it is one of ``inputs`` (by path or
    through any link), is not a regular file, or exists and ``force`` is false. Returns ``target`` as a Path.

    ``what`` names the file in the message ("release", "project", "landmark list", …); ``input_word`` the
    thing it must not replace ("input file", "data file"); ``overwrite_hint`` how to allow overwriting."""
    t = Path(target)
    for src in inputs:
        if src is None or not str(src):
            continue
        if same_file(t, src) or os.path.abspath(t) == os.path.abspath(src):
            raise OutputRefused(f"refusing to write the {what} over its own {input_word} {t}; choose another name")
    try:
        st = os.lstat(t)
    except FileNotFoundError:
        parent = t.parent if str(t.parent) else Path(".")
        if not parent.is_dir():
            raise OutputRefused(f"the folder {parent} does not exist; cannot write the {what} {t}") from None
        return t
    except OSError as e:
        raise OutputRefused(f"cannot check {t}: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise OutputRefused(f"{t} is {_kind(st.st_mode)}; the {what} only replaces regular files, "
                            "choose another name")
    if not force:
        raise OutputRefused(f"{t} already exists; {overwrite_hint}")
    return t
