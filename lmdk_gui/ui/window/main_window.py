"""The main window: plots in the middle, settings on the left, metrics below (DESIGN §10).

Automation contract (tests and scripting rely on it):
``MainWindow(path=None)``; ``window.open_series(path, **columns)``; ``window.session``; object names
``seriesPlot``, ``budgetPlot``, ``previewPlot``, ``settingsDock``, ``metricsTable``; actions ``openAction``,
``exportAction``, ``undoAction``, ``redoAction``. Until a series opens the plots and docks give way to
``emptyState`` (ui/views/empty_state.py); ``window.open_sample(name)`` opens a bundled sample; Help › Guide (F1,
``helpAction``) and About (``aboutAction``) open the ``helpGuide`` dialog (ui/dialogs/help.py). Preferences are read
through ``ui.startup.read_setting`` (never a crash on a broken value).

The window builds its layout and menus and hands each feature to a controller of its own, keeping a thin
method here for every name of the contract: ``files`` (opening, the import dialog, recent files, drops;
files_controller.py), ``export`` (export and release report; export_controller.py), ``interaction`` (clicks,
drags and the hover box on the series plot; plot_interaction.py), ``views`` (session → views; plot_sync.py) and
``status`` (the counts and the guarantee's verdict; statusbar.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ... import runtime
from ...samples import SAMPLES
from ..dialogs.common import ask_yes_no
from ..dialogs.help import HelpDialog, install_help_menu
from ..panels.metrics_panel import MetricsTable
from ..panels.settings_panel import SettingsPanel
from ..views.empty_state import EmptyState
from ..views.multiples import BudgetPlot, PreviewPlot
from ..views.plots import SeriesPlot, TrackPlot, display_values
from .docks import add_dock, new_dock
from .export_controller import ExportController
from .extensions import Extensions
from .files_controller import MAX_RECENT, FilesController, load_job, sample_files
from .plot_interaction import OFF_LINE_HINT, PlotInteraction
from .plot_sync import STALE_AFTER_MS, TRACK_MIN_WIDTH, PlotSync
from .session import Session
from .startup import memory_preference, restore_window, save_window
from .statusbar import ElidingStatusBar, StatusReadouts

if TYPE_CHECKING:  # imported where first used: the first paint needs neither dialog (cold start, issue 15)
    from ...core.data.loader import TablePreview
    from ...core.data.series import Series
    from ..dialogs.export_dialog import ExportJob
    from ..dialogs.import_dialog import ImportDialog

__all__ = ["DEFERRED_TABS", "EXTENSIONS", "MAX_RECENT", "OFF_LINE_HINT", "SAMPLES", "STALE_AFTER_MS",
           "TRACK_MIN_WIDTH", "MainWindow", "app_settings", "display_rows_for_test", "load_job", "sample_files"]

#: Feature modules (ui/window/extensions.py FEATURES); each has ``install(window)`` adding its menus, docks or tabs.
EXTENSIONS = ("landmarks_ui", "project_ui", "dummies_ui", "correlation_ui", "evaluation_ui", "accuracy_ui",
              "batch_ui")
#: the tabs of their own, which ``MainWindow(defer_tabs=True)`` (``lmdk-gui``) installs after its first paint:
#: ≈ 0.1 s of a cold start (imports, superqt, their plots), ui/window/extensions.py
DEFERRED_TABS = ("correlation_ui", "evaluation_ui", "accuracy_ui")


def app_settings() -> QSettings:
    """Persistent preferences (recent files). ``LMDK_GUI_SETTINGS`` points them at an .ini file (tests)."""
    path = os.environ.get("LMDK_GUI_SETTINGS")
    if path:
        return QSettings(path, QSettings.Format.IniFormat)
    return QSettings("lmdk", "lmdk_gui")


class MainWindow(QMainWindow):
    seriesLoaded = Signal(str)  # path
    loadFailed = Signal(str)  # message

    def __init__(self, path: str | os.PathLike | None = None, *, load_default: bool = True,
                 defer_tabs: bool = False) -> None:
        super().__init__()
        runtime.window_built()  # (the launcher's collector settings; nothing elsewhere)
        self.setObjectName("mainWindow")
        self.session = Session(self)
        self.last_error: str | None = None
        self._error_box: QMessageBox | None = None
        self._settings = app_settings()
        self.session.set_memory_policy(memory_preference(self._settings))  # (lmdk-gui --memory overrides)
        self.files = FilesController(self)
        #: Asks where to save the release report and whether it carries the private section: (path, private)
        #: or None. Replaceable (tests, scripts) like the other ask_* hooks.
        self.ask_report_path: Callable[[str, bool], tuple[str, bool] | None] = self._ask_report_path
        #: Callables asked before the window closes / before a user action replaces the series; each returns
        #: True to go on (e.g. "save unsaved changes?"). Scripted ``open_series`` does not ask.
        self.close_guards: list[Callable[[], bool]] = []
        self.replace_guards: list[Callable[[], bool]] = []
        #: Runs the import dialog; True when it opened the file. Replaceable (tests, scripts) like the ask_* hooks.
        self.ask_import: Callable[[ImportDialog], bool] = self._ask_import
        self.setAcceptDrops(True)
        self._build_views()
        self._build_docks()
        self._build_actions()
        self._build_status()
        self._connect_session()
        self.extensions = Extensions(self, EXTENSIONS, DEFERRED_TABS if defer_tabs else ())
        self._install_startup()
        self._update_title()
        if path is not None:
            self.open_series(path)
        elif load_default:
            self.files.reopen_last_file()

    # ----------------------------------------------------------------------------------- layout
    def _build_views(self) -> None:
        self.series_plot = SeriesPlot()
        self.budget_plot = BudgetPlot()
        self.preview_plot = PreviewPlot()
        self.preview_plot.prepare(self.session.visible_schemes)  # the rest are built when first shown
        self._track_plot: TrackPlot | None = None  # built when first needed (the track_plot property)
        self.budget_plot.link_x(self.series_plot.vb)
        self.preview_plot.link_x(self.series_plot.vb)

        # Series on top, then the small multiples: a thin budget row and a taller preview row per scheme.
        plots = QSplitter(Qt.Orientation.Vertical)
        plots.setObjectName("plotSplitter")
        plots.addWidget(self.series_plot)
        plots.addWidget(self.budget_plot)
        plots.addWidget(self.preview_plot)
        plots.setStretchFactor(0, 5)
        plots.setStretchFactor(1, 4)
        plots.setStretchFactor(2, 8)
        plots.setSizes([230, 150, 420])
        for i in range(3):
            plots.setCollapsible(i, False)
        self.series_plot.setMinimumHeight(110)  # the rows below set their own minimum (per shown scheme)
        self.plot_split = plots
        self.main_split = QSplitter(Qt.Orientation.Horizontal)
        self.main_split.setObjectName("mainSplitter")
        self.main_split.addWidget(plots)
        self.main_split.setStretchFactor(0, 1)  # the plots take what the window gains
        self.main_split.splitterMoved.connect(self._remember_split)

        self.tabs = QTabWidget()
        self.tabs.setObjectName("mainTabs")
        release_tab = QWidget()
        lay = QVBoxLayout(release_tab)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.main_split)
        self.tabs.addTab(release_tab, "Landmarks && release")
        self.setCentralWidget(self.tabs)

    @property
    def track_plot(self) -> TrackPlot:
        """The GPS track view beside the plots, built the first time it is needed (a location series opens,
        or a caller asks): hidden for other series, it was ≈ 15 ms of every cold start (issue 15)."""
        if self._track_plot is None:
            track = TrackPlot()
            track.setMinimumWidth(TRACK_MIN_WIDTH)
            track.hide()
            self.main_split.addWidget(track)
            # the track keeps the width it was given (or dragged to)
            self.main_split.setStretchFactor(1, 0)
            self.main_split.setCollapsible(1, False)
            self._track_plot = track
        return self._track_plot

    def _track_shown(self) -> bool:
        """Whether the track view is shown (without building it)."""
        return self._track_plot is not None and self._track_plot.isVisible()

    def _build_docks(self) -> None:
        self.settings_panel = SettingsPanel(self.session)
        self.settings_dock = add_dock(self, new_dock(self, "Settings", "settingsDock", self.settings_panel),
                                      Qt.DockWidgetArea.LeftDockWidgetArea)
        self.metrics_table = MetricsTable(self.session)
        self.metrics_dock = add_dock(self, new_dock(self, "Metrics", "metricsDock", self.metrics_table),
                                     Qt.DockWidgetArea.BottomDockWidgetArea)

    def _action(self, text: str, name: str, slot=None, shortcut=None, tip: str = "") -> QAction:
        a = QAction(text, self)
        a.setObjectName(name)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        if tip:
            a.setStatusTip(tip)
        if slot is not None:
            a.triggered.connect(slot)
        self.addAction(a)
        return a


    def _build_actions(self) -> None:
        mb = self.menuBar()
        self.file_menu = mb.addMenu("&File")
        self._build_file_menu()
        self.edit_menu = mb.addMenu("&Edit")
        self._build_edit_menu()
        self.landmarks_menu = mb.addMenu("&Landmarks")
        self.landmarks_menu.setObjectName("landmarksMenu")
        self.landmarks_menu.addAction(self.clear_action)
        self.landmarks_menu.addAction(self.invert_action)

        self.view_menu = mb.addMenu("&View")
        self.reset_zoom_action = self._action("&Reset zoom", "resetZoomAction", self.reset_zoom, "Ctrl+0")
        self.view_menu.addAction(self.reset_zoom_action)
        self.settings_toggle = self.settings_dock.toggleViewAction()
        self.settings_toggle.setObjectName("toggleSettingsAction")
        self.metrics_toggle = self.metrics_dock.toggleViewAction()
        self.metrics_toggle.setObjectName("toggleMetricsAction")
        self.view_menu.addAction(self.settings_toggle)
        self.view_menu.addAction(self.metrics_toggle)

        self.help_menu = mb.addMenu("&Help")  # filled by _install_startup (ui/dialogs/help.py)

    def _build_file_menu(self) -> None:
        self.open_action = self._action("&Open series…", "openAction", self.open_dialog, QKeySequence.StandardKey.Open,
                                        "Open a CSV/TSV time series")
        self.file_menu.addAction(self.open_action)
        self.recent_menu = self.file_menu.addMenu("Open &Recent")
        self.recent_menu.setObjectName("recentMenu")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self.file_menu.addSeparator()
        self.export_action = self._action("&Export protected CSV…", "exportAction", self.export_dialog, "Ctrl+E",
                                          "Write the protected release and its metadata sidecar")
        self.file_menu.addAction(self.export_action)
        self.report_action = self._action("Save release &report…", "saveReportAction", self.save_release_report,
                                          tip="A page on the last export for a board, a committee or the data "
                                          "subjects (HTML or PDF)")
        self.report_action.setEnabled(False)  # until an export has finished
        self.file_menu.addAction(self.report_action)
        self.file_menu.addSeparator()
        self.quit_action = self._action("&Quit", "quitAction", self.close, QKeySequence.StandardKey.Quit)
        self.file_menu.addAction(self.quit_action)

    def _build_edit_menu(self) -> None:
        self.undo_action = self.session.undo_stack.createUndoAction(self, "&Undo")
        self.undo_action.setObjectName("undoAction")
        self.undo_action.setShortcut(QKeySequence("Ctrl+Z"))
        self.redo_action = self.session.undo_stack.createRedoAction(self, "&Redo")
        self.redo_action.setObjectName("redoAction")
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.addAction(self.undo_action)
        self.addAction(self.redo_action)
        self.edit_menu.addAction(self.undo_action)
        self.edit_menu.addAction(self.redo_action)
        self.edit_menu.addSeparator()
        self.clear_action = self._action("&Clear landmarks", "clearLandmarksAction", self.session.clear_landmarks)
        self.invert_action = self._action("&Invert landmarks", "invertLandmarksAction",
                                          self.session.invert_landmarks)
        self.edit_menu.addAction(self.clear_action)
        self.edit_menu.addAction(self.invert_action)

    # ------------------------------------------------------------- startup, empty state, help (issue 13)
    def _install_startup(self) -> None:
        """The empty state in front of the plots, the Help menu, and the saved (or screen-fitted) geometry."""
        self.empty_state = EmptyState({k: SAMPLES / f for k, (f, _o) in sample_files().items()})
        self.empty_state.openRequested.connect(self.open_action.trigger)
        self.empty_state.sampleRequested.connect(self.open_sample)
        self.central_stack = QStackedWidget()
        self.central_stack.setObjectName("centralStack")
        self.central_stack.addWidget(self.empty_state)
        # Scrollable, so the tabs' minimum sizes never make the window taller or wider than a small screen;
        # on an ordinary screen the tabs fill the area and no scroll bar shows.
        scroll = QScrollArea()
        scroll.setObjectName("centralScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.takeCentralWidget())
        self.central_stack.addWidget(scroll)
        self.setCentralWidget(self.central_stack)
        self._help_dialog: HelpDialog | None = None
        install_help_menu(self, self.help_menu)
        #: whether the launch shows the window maximized (a first launch on a short screen: startup.show_window)
        self.start_maximized = restore_window(self, self._settings)
        self._docks_hidden_while_empty: list[QDockWidget] = []
        self._show_plots_or_empty()

    @property
    def help_dialog(self) -> HelpDialog:
        """The Help dialog (``helpGuide``), built the first time it is needed (cold start, issue 15)."""
        if self._help_dialog is None:
            self._help_dialog = HelpDialog(self)
        return self._help_dialog

    def _show_plots_or_empty(self) -> None:
        """With no series only the empty state shows (no empty axes, no empty settings or metrics docks);
        the docks that were open come back with the first series."""
        if self.session.series is not None:
            self._show_plots()
            return
        self.central_stack.setCurrentIndex(0)
        docks = [d for d in self.findChildren(QDockWidget) if d.parent() is self and not d.isHidden()]
        self._docks_hidden_while_empty += docks
        for d in docks:
            d.hide()

    def _show_plots(self) -> None:
        # The docks first, laid out at once, then the plots: each plot is resized from the hidden page's old
        # layout to its final size (the other way round, the plots took the whole width first and shrank when
        # the docks came back: 4-5 resizes each, every one updating the pyqtgraph views' ranges and axes)
        self._show_docks()
        self._show_plot_page()

    def _show_docks(self) -> None:
        for d in self._docks_hidden_while_empty:
            d.show()
        if self.settings_dock in self._docks_hidden_while_empty:
            self.settings_dock.raise_()  # showing tabbed docks raises the last one shown
        self._docks_hidden_while_empty = []
        self.layout().activate()

    def _show_plot_page(self) -> None:
        self.central_stack.setCurrentIndex(1)

    def _guards_allow(self, guards: list[Callable[[], bool]]) -> bool:
        return all(g() for g in list(guards))

    def _build_status(self) -> None:
        sb = ElidingStatusBar(self)
        self.setStatusBar(sb)
        self.export = ExportController(self)
        self.export_progress = self.export.progress
        self.export_cancel = self.export.cancel_button
        self.export.add_to(sb)
        self.status = StatusReadouts(sb, self.session)
        self.status_events = self.status.events
        self.status_landmarks = self.status.landmarks
        self.status_guarantee = self.status.guarantee
        self.status.add_to(sb)

    def _connect_session(self) -> None:
        self.views = PlotSync(self)
        self._stale_readouts = self.views.stale_readouts
        self._preview_drawn = self.views.preview_drawn
        self.session.previewFailed.connect(lambda msg: self.show_error("Preview failed", msg))
        self.session.dirtyChanged.connect(lambda _d: self._update_title())
        self.interaction = PlotInteraction(self)

    # ------------------------------------------------------------------ opening (files_controller.py)
    def open_series(self, path: str | os.PathLike, *, report: bool = True, **columns) -> bool:
        """Load ``path`` now (blocking; the scripting API) and make it the session's series.

        On failure the session stays exactly as it was, ``last_error`` holds the message, and (unless
        ``report=False``) a message box shows it. Returns whether the file was opened.
        """
        return self.files.open_series(path, report=report, **columns)

    def open_series_async(self, path: str, options: dict | None = None, *,
                          dialog_if_refused: TablePreview | None = None) -> None:
        """Load on a worker thread (File › Open, drops, recent files): the window stays responsive.
        ``dialog_if_refused``: the file's preview, for the import dialog when the options cannot read it."""
        self.files.open_series_async(path, options, dialog_if_refused=dialog_if_refused)

    def open_sample(self, name: str) -> None:
        """Open a bundled sample (as ``lmdk-gui --sample NAME`` does) in the background."""
        self.files.open_sample(name)

    def is_loading(self) -> bool:
        """Whether a file is being loaded in the background."""
        return self.files.is_loading()

    def _apply_loaded(self, series: Series, path: str, options: dict, *, settings=None) -> None:
        self.files.apply_loaded(series, path, options, settings=settings)

    def open_dialog(self) -> None:
        """File › Open series…"""
        self.files.open_dialog()

    def import_with_dialog(self, path: str, *, ask: bool = True) -> bool:
        """Show the import dialog for ``path``; it loads the file itself (a failure keeps it open with the
        message), and the series it loaded becomes the session's. Returns whether a file was opened (or, for a
        dialog accepted without loading, e.g. by a script, is being loaded in the background)."""
        return self.files.import_with_dialog(path, ask=ask)

    def _ask_import(self, dialog: ImportDialog) -> bool:
        """Default ``ask_import``: run the dialog modally; True when the user opened the file."""
        return self.files.ask_import(dialog)

    def open_path(self, path: str | os.PathLike) -> bool:
        """``lmdk-gui FILE``: open FILE directly when the defaults read it; when they cannot (columns to choose,
        repeated times, missing values, a contact log's person) show the import dialog instead of failing.
        A file that cannot be read at all is reported as by :meth:`open_series`. A table of many persons (an id
        column) always goes through the dialog: its rows read as one series would mix the persons."""
        return self.files.open_path(path)

    def open_path_in_background(self, path: str) -> None:
        """:meth:`open_path` with the window already shown, for a file that takes a while to read
        (``loader.slow_to_inspect``): ``lmdk-gui FILE`` of 10^7 rows showed no window for 5 s. The file is
        looked at behind a busy dialog, loaded on the loader's worker, and the import dialog comes when it
        has an id column or the defaults cannot read it, as with open_path."""
        self.files.open_path_in_background(path)

    def recent_files(self) -> list[str]:
        return self.files.recent_files()

    def clear_recent(self) -> None:
        self.files.clear_recent()

    def _fill_recent(self) -> None:
        self.files.fill_recent(self.recent_menu)

    def dragEnterEvent(self, ev):  # noqa: N802 - Qt naming
        if ev.mimeData().hasUrls() and any(u.isLocalFile() for u in ev.mimeData().urls()):
            ev.acceptProposedAction()

    def dropEvent(self, ev):  # noqa: N802 - Qt naming
        paths = [u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile()]
        if paths:
            ev.acceptProposedAction()
            # After the drop returns: the import dialog is modal and must not run inside the drag's event.
            QTimer.singleShot(0, lambda: self.import_with_dialog(paths[0]))

    # ------------------------------------------------------------------ session → views (plot_sync.py)
    def _on_settings(self) -> None:
        self.views.on_settings()

    def _remember_split(self, *_args) -> None:
        self.views.remember_split()

    def _update_title(self) -> None:
        s = self.session.series
        name = (Path(s.source.path).name if s is not None and s.source is not None else s.name) if s else "no series"
        self.setWindowTitle(f"{name}[*] — lmdk_gui")
        self.setWindowModified(self.session.is_dirty())

    def _update_status(self) -> None:
        self.status.refresh()

    # ------------------------------------------------------------- interaction (plot_interaction.py)
    @property
    def _hover_row(self) -> int | None:
        """The event the hover box describes (None: no box)."""
        return self.interaction.hover_row

    def _on_click(self, scene_pos) -> None:
        self.interaction.on_click(scene_pos)

    def _on_drag(self, x0: float, x1: float, mode: str) -> None:
        self.interaction.on_drag(x0, x1, mode)

    def hover_html(self, row: int) -> str:
        """The hover box's text for event ``row``: its time, value, landmark or not, and each shown scheme's
        budget there."""
        return self.interaction.hover_html(row)

    def _on_hover(self, evt) -> None:
        self.interaction.on_hover(evt)

    def _refresh_hover(self) -> None:
        self.interaction.refresh_hover()

    def reset_zoom(self) -> None:
        self.series_plot.getPlotItem().enableAutoRange()

    # ------------------------------------------------------------------- export (export_controller.py)
    @property
    def export_job(self) -> ExportJob | None:
        """The export started last (running or not)."""
        return self.export.export_job

    @property
    def last_export(self) -> ExportJob | None:
        """The last export that finished: File › Save release report… reports on it."""
        return self.export.last_export

    def export_dialog(self) -> None:
        """File › Export protected CSV…"""
        self.export.export_dialog()

    def export_release(self, path: str | os.PathLike, scheme: str, include_budget: bool = False,
                       include_flags: bool = False, seed: bytes | str | None = None, *, backend: str | None = None,
                       force: bool = False, include_input_name: bool = False,
                       verbatim_labels: bool = False, denoise: bool | None = None,
                       categories_from_data: bool = False) -> ExportJob:
        """Start an export without dialogs (the automation API); returns the running :class:`ExportJob`.
        ``denoise`` None follows the session's setting (issue 12: on by default). ``categories_from_data``:
        a categorical series without a public category list is released (its own list published whole) only
        when True, the answer to the export dialog's question; otherwise the job fails with the core's reason.

        It works on a snapshot of the session taken now; later edits do not change what is written.
        """
        return self.export.export_release(path, scheme, include_budget, include_flags, seed, backend=backend,
                                          force=force, include_input_name=include_input_name,
                                          verbatim_labels=verbatim_labels, denoise=denoise,
                                          categories_from_data=categories_from_data)

    def cancel_export(self) -> None:
        self.export.cancel_export()

    def _export_message(self, path: str) -> None:
        self.export.export_message(path)

    def save_release_report(self) -> bool:
        """File › Save release report…: the report on the last finished export, as HTML or PDF (by the file's
        extension), with the private section unless the person leaves it out. True when a file was written."""
        return self.export.save_release_report()

    def _ask_report_path(self, start: str, private_available: bool) -> tuple[str, bool] | None:
        return self.export.ask_report_path(start, private_available)

    # -------------------------------------------------------------------------------- messages
    def show_error(self, title: str, message: str, *, clear_status: bool = False) -> None:
        """Show one message box (window-modal, non-blocking) and remember the message. ``clear_status``: the
        status bar said what was under way (loading, exporting) and that has ended, so its message goes."""
        if clear_status:
            self.statusBar().clearMessage()
        self.last_error = message
        if self._error_box is not None:
            self._error_box.close()
        box = QMessageBox(QMessageBox.Icon.Warning, title, message, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("errorBox")
        box.setWindowModality(Qt.WindowModality.WindowModal)
        self._error_box = box
        box.open()

    # ------------------------------------------------------------------------------------- close
    def confirm_cancel_export(self) -> bool:
        """Asked when the window closes during an export (tests replace it)."""
        return ask_yes_no(self, "Export running", "An export is still running. Cancel it and close the window?")

    def paintEvent(self, ev):  # noqa: N802 - Qt naming
        super().paintEvent(ev)
        ext = getattr(self, "extensions", None)  # (None while the window is still being built)
        if ext is not None:
            ext.first_painted()  # the deferred tabs, if any, install now (once)

    def closeEvent(self, ev):  # noqa: N802 - Qt naming
        if not self._guards_allow(self.close_guards) or not self.export.stop_for_close():
            ev.ignore()
            return
        # With no series the docks may be hidden by nothing but the empty state: keep the last real layout.
        save_window(self, self._settings, with_state=self.session.series is not None)
        self.session.shutdown()
        self.files.shutdown()
        super().closeEvent(ev)


def display_rows_for_test(window: MainWindow, row: int) -> tuple[float, float]:
    """Data coordinates of an event's marker in the series plot (for tests and scripting)."""
    s = window.session.series
    assert s is not None
    return float(row), float(display_values(s, s.values[row:row + 1])[0])
