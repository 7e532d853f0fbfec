"""Landmarks › Import / Export landmark list… (DESIGN §8): a CSV of ``timestamp`` (or ``row``) entries read
into the landmarks in one undoable step, or the landmarks written as a private file. The file choosers and
the replace-or-add question are replaceable hooks (tests, scripts) on :class:`LandmarksUI`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox

from ....core.data.landmark_files import read_landmark_list, write_landmark_file
from ....core.data.series import LoadError

if TYPE_CHECKING:
    from ...window.main_window import MainWindow
    from ...window.session import Session


class LandmarkListFiles:
    """Landmark list import/export of :class:`~.feature.LandmarksUI` (a mixin: it needs ``window``,
    ``session`` and the ``imported`` signal of the class it is mixed into)."""

    window: MainWindow
    session: Session
    imported: Signal
    get_import_path: Callable[[], str | None]
    get_export_path: Callable[[], str | None]
    ask_import_mode: Callable[[int, int], str | None]

    def _ask_import_path(self) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Import landmark list", self._start_dir(),
                                              "Landmark lists (*.csv *.tsv *.txt);;All files (*)")
        return path or None

    def _ask_export_path(self) -> str | None:
        s = self.session.series
        stem = Path(s.source.path).stem if s is not None and s.source is not None else "series"
        start = os.path.join(self._start_dir(), f"{stem}_landmarks.csv")
        path, _ = QFileDialog.getSaveFileName(self.window, "Export landmark list (private)", start,
                                              "Landmark lists (*.csv);;All files (*)")
        return path or None

    def _start_dir(self) -> str:
        s = self.session.series
        if s is not None and s.source is not None:
            return str(Path(s.source.path).resolve().parent)
        return str(Path.home())

    def _ask_import_mode(self, new: int, current: int) -> str | None:
        box = QMessageBox(QMessageBox.Icon.Question, "Import landmark list",
                          f"The file lists {new:,} landmarks; {current:,} events are landmarks now.",
                          QMessageBox.StandardButton.NoButton, self.window)
        box.setObjectName("importModeBox")
        replace = box.addButton("Replace", QMessageBox.ButtonRole.AcceptRole)
        add = box.addButton("Add to them", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(replace)
        box.exec()
        clicked = box.clickedButton()
        return "replace" if clicked is replace else "add" if clicked is add else None

    def _with_path(self, title: str, get_path: Callable[[], str | None], act: Callable[[str], object]) -> None:
        """A menu entry's steps: a series must be open, then ``get_path()`` (a replaceable hook; "" or None
        cancels), then ``act(path)``."""
        if self.session.series is None:
            self.window.show_error(title, "Open a series first.")
            return
        path = get_path()
        if path:
            act(path)

    def import_dialog(self) -> None:
        """Landmarks › Import landmark list…"""
        self._with_path("Import landmark list", self.get_import_path, lambda p: self.import_landmarks(p, mode=None))

    def import_landmarks(self, path: str | os.PathLike, mode: str | None = "replace") -> bool:
        """Read a landmark file and make it the landmarks (``mode="replace"``) or add it (``"add"``) in one
        undoable step. ``mode=None`` asks (through :attr:`ask_import_mode`) when landmarks are set already.
        A file with entries that are not in the series changes nothing and shows which (an error box).
        """
        s = self.session
        if s.series is None:
            raise RuntimeError("no series is open")
        try:
            rows, rules = read_landmark_list(path, s.series)
        except LoadError as e:
            self.window.show_error("Cannot import the landmark list", str(e))
            return False
        if mode is None:
            mode = "replace" if s.landmarks.size == 0 else self.ask_import_mode(int(rows.size),
                                                                                int(s.landmarks.size))
            if mode is None:
                return False
        if mode not in ("replace", "add"):
            raise ValueError(f"mode must be 'replace' or 'add', got {mode!r}")
        target = rows if mode == "replace" else np.union1d(s.landmarks, rows)
        # (a file says which rules found its landmarks in its 'rule' column; without one, none is said of them)
        s.set_landmarks(target, text=f"Import {Path(path).name} ({mode})",
                        rules=rules if mode == "replace" else s.landmark_rules | rules)
        found = f" (found by a rule: {', '.join(sorted(rules))}; the export says so)" if rules else ""
        self.window.statusBar().showMessage(f"Imported {rows.size:,} landmarks from {path}{found}", 8000)
        self.imported.emit(int(s.landmarks.size))
        return True

    def export_dialog(self) -> None:
        """Landmarks › Export landmark list…"""
        self._with_path("Export landmark list", self.get_export_path, self.export_landmarks)

    def export_landmarks(self, path: str | os.PathLike) -> bool:
        """Write the landmarks (``timestamp`` and ``row`` columns; atomically; a new file is owner-only)."""
        s = self.session
        if s.series is None:
            raise RuntimeError("no series is open")
        try:
            write_landmark_file(path, s.series, s.landmarks, s.landmark_rules)
        except OSError as e:
            self.window.show_error("Cannot export the landmark list", f"{path}: {e.strerror or e}")
            return False
        except ValueError as e:  # the output guard: never over the data file, nor a special file
            self.window.show_error("Cannot export the landmark list", str(e))
            return False
        self.window.statusBar().showMessage(
            f"Wrote {s.landmarks.size:,} landmarks to {path} (private: it reveals which events you protect)",
            10000)
        return True

