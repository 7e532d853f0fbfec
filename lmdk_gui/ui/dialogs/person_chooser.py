"""The searchable "pick one person" list (the import dialog's, and the status bar's Person chooser).

Its own module, light to import: the window builds a Person chooser at start (batch_ui), and superqt, whose
package imports all its widgets (≈ 45 ms of a cold start), is imported on first use.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QCompleter, QWidget


def signals_blocked(obj):
    """superqt's ``signals_blocked``, imported on first use (see the module's docstring)."""
    from superqt.utils import signals_blocked as blocked

    return blocked(obj)


class PersonChooser(QComboBox):
    """A searchable list of ids with their row counts ("1672 — 2,785 rows"); type to filter.

    Used for a contact log's person; meant to serve any "pick one person" choice (e.g. a person-id column).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("personChooser")
        self.setEditable(True)
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.completer().setFilterMode(Qt.MatchFlag.MatchContains)
        self.completer().setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self._ids: list[str] = []

    def set_ids(self, counts: tuple[tuple[str, int], ...], current: str | None) -> None:
        ids = [pid for pid, _ in counts]
        if ids == self._ids and (current is None or current == self.current_id()):
            return
        with signals_blocked(self):
            self.clear()
            for pid, n in counts:
                self.addItem(f"{pid} — {n:,} rows", pid)
            self._ids = ids
            if current is not None and current in ids:
                self.setCurrentIndex(ids.index(current))
        self.currentIndexChanged.emit(self.currentIndex())

    def current_id(self) -> str | None:
        data = self.currentData()
        if data is not None and self.currentText() == self.itemText(self.currentIndex()):
            return str(data)
        text = self.currentText().split(" — ", 1)[0].strip()  # typed by hand
        return text or None

    def select(self, pid: str) -> None:
        i = self.findData(pid)
        if i >= 0:
            self.setCurrentIndex(i)
