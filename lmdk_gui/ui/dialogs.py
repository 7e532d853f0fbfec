"""Modal dialogs deleted once they are closed, not left to their parent window.

A closed dialog left to the window made the interpreter's exit crash in Qt's teardown (SIGSEGV or "shared
QObject was deleted directly", 5 runs of 8 after File › Export… then Cancel), and the import dialog kept the
series it had read alive. Export, Import and Export all persons run theirs inside :func:`deleted_after`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from PySide6.QtWidgets import QDialog


@contextlib.contextmanager
def deleted_after(dialog: QDialog) -> Iterator[QDialog]:
    """``with deleted_after(dlg):`` — the dialog is deleted (later, by the event loop) when the block ends."""
    try:
        yield dialog
    finally:
        dialog.deleteLater()
