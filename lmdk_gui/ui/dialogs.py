"""Dialog helpers: modal dialogs deleted once they are closed (:func:`deleted_after`), and the one look of a
warning beside a choice (:func:`warning_label`).

Modal dialogs are deleted once they are closed, not left to their parent window.
A closed dialog left to the window made the interpreter's exit crash in Qt's teardown (SIGSEGV or "shared
QObject was deleted directly", 5 runs of 8 after File › Export… then Cancel), and the import dialog kept the
series it had read alive. Export, Import and Export all persons run theirs inside :func:`deleted_after`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from PySide6.QtWidgets import QDialog, QLabel


@contextlib.contextmanager
def deleted_after(dialog: QDialog) -> Iterator[QDialog]:
    """``with deleted_after(dlg):`` — the dialog is deleted (later, by the event loop) when the block ends."""
    try:
        yield dialog
    finally:
        dialog.deleteLater()


def warning_label(text: str = "", name: str = "") -> QLabel:
    """A wrapped warning in the app's amber (what a choice gives away: landmark positions, a key, a rule's
    landmarks, categories from the data)."""
    label = QLabel(text)
    if name:
        label.setObjectName(name)
    label.setWordWrap(True)
    label.setStyleSheet("color: #a05a00;")
    return label
