"""Opening a series in the window (DESIGN §10): File › Open (the import dialog), Open Recent, drops, the
bundled samples, ``lmdk-gui FILE`` and the last file reopened at launch; blocking (``open_series``, the
scripting API) or on the loader's worker thread (``open_series_async``). The import dialog loads on first use
(cold start, issue 15)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMenu

from ...core.data.loader import TablePreview, inspect_table, load_series, slow_to_inspect
from ...core.data.series import LoadError, Series
from ...samples import SAMPLE_FILES, SAMPLES
from ..dialogs.common import busy_call, deleted_after
from ..views.plots import load_for_view
from .extensions import WindowPart
from .passes import after_paint
from .runner import LatestOnlyRunner
from .startup import clean_load_options, read_setting, write_options

if TYPE_CHECKING:
    from ..dialogs.import_dialog import ImportDialog

MAX_RECENT = 8
log = logging.getLogger(__name__)


def sample_files() -> dict[str, tuple[str, dict]]:
    """The bundled samples (file name, load options), the same table ``lmdk-gui --sample`` uses."""
    return SAMPLE_FILES


def load_job(path: str, options: dict, *, should_cancel=None) -> Series:
    """A loader job of the window and of projects (on the loader's thread, with the series line's pyramid)."""
    return load_for_view(path, options)


class FilesController(WindowPart):
    """Owns the loader thread, the load in flight and the recent-files list (in the window's settings)."""

    def __init__(self, window) -> None:  # window: the MainWindow that builds this controller
        super().__init__(window)
        self._loader = LatestOnlyRunner("loader", window, finished=self._on_loaded, failed=self._on_load_failed)
        self._pending_load: tuple[str, dict] | None = None
        self._dialog_if_refused: TablePreview | None = None  # (open_series_async)

    def is_loading(self) -> bool:
        return self._pending_load is not None

    def shutdown(self) -> None:
        self._loader.shutdown()

    def _replace_allowed(self) -> bool:
        return self.window._guards_allow(self.window.replace_guards)

    # ----------------------------------------------------------------------------------- loading
    def open_series(self, path: str | os.PathLike, *, report: bool = True, **columns) -> bool:
        """:meth:`MainWindow.open_series`."""
        try:
            series = load_series(path, **columns)
        except LoadError as e:
            if report:
                self.window.show_error("Cannot open the file", str(e))
            else:
                self.window.last_error = str(e)
            return False
        self.apply_loaded(series, str(path), columns)
        return True

    def open_series_async(self, path: str, options: dict | None = None, *,
                          dialog_if_refused: TablePreview | None = None) -> None:
        """:meth:`MainWindow.open_series_async`."""
        w = self.window
        options = dict(options or {})
        self._pending_load = (path, options)
        self._dialog_if_refused = dialog_if_refused
        w.statusBar().showMessage(f"Loading {path}…")
        w.empty_state.show_loading(Path(path).name)
        w.setCursor(Qt.CursorShape.BusyCursor)
        self._loader.submit(load_job, path, options)

    def _on_loaded(self, _generation: int, series: Series) -> None:
        w = self.window
        w.unsetCursor()
        self._dialog_if_refused = None
        w.empty_state.show_loading(None)
        if self._pending_load is None:
            return
        path, options = self._pending_load
        self._pending_load = None
        if self.session.series is None and w.central_stack.currentIndex() == 0:
            # The first series, in three steps that each paint before the next (ui/window/passes.py): the docks
            # come back beside the empty state, the plots take its place, the series is drawn. At 10^7 events
            # the plots' first paint with the series was one 140 ms stall, and with the docks one of 70-80.
            w._show_docks()
            after_paint(w, lambda: (w._show_plot_page(), after_paint(
                w, lambda: self.apply_loaded(series, path, options))))
            return
        self.apply_loaded(series, path, options)

    def _on_load_failed(self, _generation: int, message: str) -> None:
        w = self.window
        w.unsetCursor()
        w.empty_state.show_loading(None)
        self._pending_load = None
        w.statusBar().clearMessage()
        preview, self._dialog_if_refused = self._dialog_if_refused, None
        if preview is not None and message.startswith("LoadError: "):  # the defaults cannot read it: choose
            self.import_dialog(preview.path, preview)
            return
        msg = message.split(": ", 1)[1] if message.startswith("LoadError: ") else message
        w.show_error("Cannot open the file", msg)
        w.loadFailed.emit(msg)

    def apply_loaded(self, series: Series, path: str, options: dict, *, settings=None) -> None:
        """``series`` (read from ``path`` with ``options``) becomes the session's and the last file."""
        w = self.window
        self.session.set_series(series, settings=settings)
        w.last_error = None
        self.remember(path, options)
        late = series.source.out_of_order if series.source is not None else 0
        if late:  # (the import dialog notes it before Open; a file opened directly is said here)
            w.statusBar().showMessage(f"Opened {path}: its rows were not in time order and are sorted by time "
                                      f"({late:,} row{'s' if late > 1 else ''} earlier than the row above)", 15000)
        else:
            w.statusBar().showMessage(f"Opened {path}", 5000)
        w.seriesLoaded.emit(path)

    def open_sample(self, name: str) -> None:
        """:meth:`MainWindow.open_sample`."""
        if not self._replace_allowed():
            return
        file, options = sample_files()[name]
        self.open_series_async(str(SAMPLES / file), dict(options))

    def reopen_last_file(self) -> None:
        """``lmdk-gui`` with no argument: the last file with its options if it still opens, else the empty
        state. A previous version's options that no longer apply are dropped with a log line."""
        w = self.window
        last = read_setting(w._settings, "lastFile", "", str)
        if not last or not Path(last).is_file():
            return
        opts = clean_load_options(read_setting(w._settings, "lastOptions", {}, dict))
        try:
            if not w.open_series(last, report=False, **opts):
                # (the message names the file: a whole path before it left the reason past the bar's end)
                w.statusBar().showMessage(f"Could not reopen the last file: {w.last_error}", 15000)
        except Exception as e:  # noqa: BLE001 - a stale preference must never stop the app from starting
            log.warning("could not reopen %s with %s: %s: %s", last, opts, type(e).__name__, e)

    # ------------------------------------------------------------------------------- import dialog
    def open_dialog(self) -> None:
        """File › Open series…: a file chooser, then the import dialog."""
        w = self.window
        if not self._replace_allowed():
            return
        last = read_setting(w._settings, "lastFile", "", str)
        start = str(Path(last).parent) if last else str(SAMPLES)
        path, _ = QFileDialog.getOpenFileName(w, "Open time series", start,
                                              "Time series (*.csv *.tsv *.txt *.xlsx *.gpx *.parquet);;All files (*)")
        if path:
            w.import_with_dialog(path, ask=False)

    def import_with_dialog(self, path: str, *, ask: bool = True) -> bool:
        """:meth:`MainWindow.import_with_dialog`."""
        if ask and not self._replace_allowed():
            return False
        try:
            preview = self.inspect(path)
        except LoadError as e:
            self.window.show_error("Cannot open the file", str(e))
            return False
        if preview is None:  # cancelled while the file was read
            return False
        return self.import_dialog(path, preview)

    def import_dialog(self, path: str, preview: TablePreview) -> bool:
        """The import dialog on ``preview`` (asked through the window's ``ask_import``); the series it loaded
        (or it loads in the background) is opened."""
        from ..dialogs.import_dialog import (
            ImportDialog,  # superqt and the dialog load on first use (cold start)
        )

        with deleted_after(ImportDialog(preview, self.window)) as dlg:
            if not self.window.ask_import(dlg):
                return False
            if dlg.series is not None:
                self.apply_loaded(dlg.series, path, dlg.options())
            else:
                self.open_series_async(path, dlg.options())
            return True

    def inspect(self, path: str) -> TablePreview | None:
        """The import dialog's first look at ``path``: on a worker behind a busy dialog when it takes more than a
        moment (a large file is read whole for its encoding, a workbook converted: 0.9 s for a 10^7-row CSV,
        ≈ 1 s for a 10^5-row workbook, with the window frozen; issue 15), else here. None: cancelled."""
        if not slow_to_inspect(path):
            return inspect_table(path)
        done, preview = busy_call(self.window, "Open time series", f"Reading {Path(path).name}…",
                                  lambda: inspect_table(path))
        return preview if done else None

    @staticmethod
    def ask_import(dialog: ImportDialog) -> bool:
        """The default ``ask_import``: run the dialog modally; True when the user opened the file."""
        return bool(dialog.exec() == dialog.DialogCode.Accepted)

    def open_path(self, path: str | os.PathLike) -> bool:
        """:meth:`MainWindow.open_path`."""
        # (one look at the file serves the id check and the dialog: it reads a large file whole)
        preview: TablePreview | None = None
        try:
            preview = inspect_table(path)
        except LoadError as bad:
            unreadable = bad  # reported below if load_series cannot read it either
        if preview is not None and preview.guess.id_col is not None:
            return self.import_dialog(str(path), preview)
        try:
            series = load_series(path)
        except LoadError as e:
            if preview is None:  # a file that is unreadable as such (missing, not text) has no choice to offer
                # said in the window: started from a file manager, nobody reads the terminal
                self.window.show_error("Cannot open the file", str(unreadable))
                return False
            opened = self.import_dialog(str(path), preview)
            if not opened:
                self.window.last_error = str(e)
            return opened
        self.apply_loaded(series, str(path), {})
        return True

    def open_path_in_background(self, path: str) -> None:
        """:meth:`MainWindow.open_path_in_background`."""
        try:
            preview = self.inspect(path)
        except LoadError as e:
            self.window.last_error = str(e)
            self.window.show_error("Cannot open the file", str(e))
            return
        if preview is None:
            return
        if preview.guess.id_col is not None:
            self.import_dialog(path, preview)
            return
        self.open_series_async(path, {}, dialog_if_refused=preview)

    # ------------------------------------------------------------------------------- recent files
    def remember(self, path: str, options: dict) -> None:
        settings = self.window._settings
        p = str(Path(path).resolve())
        recent = [r for r in self.recent_files() if r != p]
        settings.setValue("recentFiles", [p, *recent][:MAX_RECENT])
        settings.setValue("lastFile", p)
        write_options(settings, "lastOptions", options)

    def recent_files(self) -> list[str]:
        return read_setting(self.window._settings, "recentFiles", [], list)

    def clear_recent(self) -> None:
        self.window._settings.setValue("recentFiles", [])

    def fill_recent(self, menu: QMenu) -> None:
        """Rebuilt each time the menu opens: files that no longer exist are dropped from the list."""
        w = self.window
        menu.clear()
        files = self.recent_files()
        existing = [f for f in files if Path(f).is_file()]
        if existing != files:
            w._settings.setValue("recentFiles", existing)
        if not existing:
            a = menu.addAction("(no recent files)")
            a.setEnabled(False)
        for f in existing:
            a = menu.addAction(f)
            a.triggered.connect(lambda _=False, f=f: w.import_with_dialog(f))
        menu.addSeparator()
        clear = menu.addAction("Clear list")
        clear.setObjectName("clearRecentAction")
        clear.setEnabled(bool(existing))
        clear.triggered.connect(w.clear_recent)
