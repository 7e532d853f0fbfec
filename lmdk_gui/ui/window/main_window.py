"""The main window: plots in the middle, settings on the left, metrics below (DESIGN §10).

Automation contract (tests and scripting rely on it):
``MainWindow(path=None)``; ``window.open_series(path, **columns)``; ``window.session``; object names
``seriesPlot``, ``budgetPlot``, ``previewPlot``, ``settingsDock``, ``metricsTable``; actions ``openAction``,
``exportAction``, ``undoAction``, ``redoAction``. Until a series opens the plots and docks give way to
``emptyState`` (ui/views/empty_state.py); ``window.open_sample(name)`` opens a bundled sample; Help › Guide (F1,
``helpAction``) and About (``aboutAction``) open the ``helpGuide`` dialog (ui/dialogs/help.py). Preferences are read
through ``ui.startup.read_setting`` (never a crash on a broken value).
"""

from __future__ import annotations

import html
import logging
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QFrame,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ... import runtime
from ...core.analysis.metrics import share
from ...core.data.loader import TablePreview, inspect_table, load_series, slow_to_inspect
from ...core.data.series import LoadError, Series
from ...core.kernel.settings import ALL_SCHEMES, LANDMARK_SCHEMES, SCHEME_LABELS
from ...samples import SAMPLE_FILES, SAMPLES
from ..dialogs.common import busy_call, deleted_after
from ..dialogs.help import HelpDialog, install_help_menu
from ..panels.metrics_panel import MetricsTable
from ..panels.settings_panel import SettingsPanel
from ..views.empty_state import EmptyState
from ..views.multiples import AfterPaint, BudgetPlot, PreviewPlot
from ..views.plots import SeriesPlot, TrackPlot, display_values, load_for_view
from ..views.theme import count_noun
from .extensions import Extensions
from .passes import after_paint
from .runner import LatestOnlyRunner
from .session import Session
from .startup import (
    clean_load_options,
    memory_preference,
    read_setting,
    restore_window,
    save_window,
    write_options,
)
from .statusbar import ElidingStatusBar

if TYPE_CHECKING:  # imported where first used: the first paint needs neither dialog (cold start, issue 15)
    from ..dialogs.export_dialog import ExportJob
    from ..dialogs.import_dialog import ImportDialog

#: Feature modules (ui/window/extensions.py FEATURES); each has ``install(window)`` adding its menus, docks or tabs.
EXTENSIONS = ("landmarks_ui", "project_ui", "dummies_ui", "correlation_ui", "evaluation_ui", "accuracy_ui",
              "batch_ui")
#: the tabs of their own, which ``MainWindow(defer_tabs=True)`` (``lmdk-gui``) installs after its first paint:
#: ≈ 0.1 s of a cold start (imports, superqt, their plots), ui/window/extensions.py
DEFERRED_TABS = ("correlation_ui", "evaluation_ui", "accuracy_ui")
#: said when a click on the series plot is not within reach of an event (nothing changes)
OFF_LINE_HINT = ("No event there: click on the line or a dot (the ring shows which event a click marks); "
                 "Shift-drag marks a time range")
#: an edit's hover box and "computing…" wait this long for its preview, which says both (ms)
STALE_AFTER_MS = 100
#: the GPS track view never opens narrower than this (px)
TRACK_MIN_WIDTH = 280
MAX_RECENT = 8
log = logging.getLogger(__name__)


def sample_files() -> dict[str, tuple[str, dict]]:
    """The bundled samples (file name, load options), the same table ``lmdk-gui --sample`` uses."""
    return SAMPLE_FILES


def app_settings() -> QSettings:
    """Persistent preferences (recent files). ``LMDK_GUI_SETTINGS`` points them at an .ini file (tests)."""
    path = os.environ.get("LMDK_GUI_SETTINGS")
    if path:
        return QSettings(path, QSettings.Format.IniFormat)
    return QSettings("lmdk", "lmdk_gui")


def load_job(path: str, options: dict, *, should_cancel=None) -> Series:
    """A loader job of the window and of projects (on the loader's thread, with the series line's pyramid)."""
    return load_for_view(path, options)


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
        self._loader = LatestOnlyRunner("loader", self)
        self._loader.finished.connect(self._on_loaded)
        self._loader.failed.connect(self._on_load_failed)
        self._pending_load: tuple[str, dict] | None = None
        self._dialog_if_refused: TablePreview | None = None  # (open_series_async)
        self.export_job: ExportJob | None = None
        #: The last export that finished: File › Save release report… reports on it (its snapshot has the data).
        self.last_export: ExportJob | None = None
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
            self._reopen_last_file()

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

        self._hover_row: int | None = None
        self._hover_target: int | None = None  # the event a click there would mark (None: out of reach)
        self._hover = pg.SignalProxy(self.series_plot.scene().sigMouseMoved, rateLimit=30, slot=self._on_hover)

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
        self.settings_dock = QDockWidget("Settings", self)
        self.settings_dock.setObjectName("settingsDock")
        self.settings_dock.setWidget(self.settings_panel)
        # Closable: a dock's toggleViewAction (View menu) is disabled for docks that cannot be closed.
        self.settings_dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                                       | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                                       | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.settings_dock)

        self.metrics_table = MetricsTable(self.session)
        self.metrics_dock = QDockWidget("Metrics", self)
        self.metrics_dock.setObjectName("metricsDock")
        self.metrics_dock.setWidget(self.metrics_table)
        self.metrics_dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                                      | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                                      | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.metrics_dock)

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

        self.edit_menu = mb.addMenu("&Edit")
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

    def _reopen_last_file(self) -> None:
        """``lmdk-gui`` with no argument: the last file with its options if it still opens, else the empty
        state. A previous version's options that no longer apply are dropped with a log line."""
        last = read_setting(self._settings, "lastFile", "", str)
        if not last or not Path(last).is_file():
            return
        opts = clean_load_options(read_setting(self._settings, "lastOptions", {}, dict))
        try:
            if not self.open_series(last, report=False, **opts):
                # (the message names the file: a whole path before it left the reason past the bar's end)
                self.statusBar().showMessage(f"Could not reopen the last file: {self.last_error}", 15000)
        except Exception as e:  # noqa: BLE001 - a stale preference must never stop the app from starting
            log.warning("could not reopen %s with %s: %s: %s", last, opts, type(e).__name__, e)

    def is_loading(self) -> bool:
        """Whether a file is being loaded in the background."""
        return self._pending_load is not None

    def open_sample(self, name: str) -> None:
        """Open a bundled sample (as ``lmdk-gui --sample NAME`` does) in the background."""
        if not self._guards_allow(self.replace_guards):
            return
        file, options = sample_files()[name]
        self.open_series_async(str(SAMPLES / file), dict(options))

    def _guards_allow(self, guards: list[Callable[[], bool]]) -> bool:
        return all(g() for g in list(guards))

    def _build_status(self) -> None:
        sb = ElidingStatusBar(self)
        self.setStatusBar(sb)
        self.status_events = QLabel()
        self.status_landmarks = QLabel()
        self.status_guarantee = QLabel()
        self.export_progress = QProgressBar()
        self.export_progress.setObjectName("exportProgress")
        self.export_progress.setMaximumWidth(220)
        self.export_progress.setFormat("export %p%")
        self.export_cancel = QPushButton("Cancel export")
        self.export_cancel.setObjectName("exportCancel")
        self.export_cancel.clicked.connect(self.cancel_export)
        for w in (self.export_progress, self.export_cancel):
            w.hide()
            sb.addPermanentWidget(w)
        for w in (self.status_events, self.status_landmarks, self.status_guarantee):
            sb.addPermanentWidget(w)
        self.status_guarantee.setObjectName("guaranteeStatus")

    def _connect_session(self) -> None:
        s = self.session
        # The plots first get their place (the empty state gives way), then draw the series once at their size
        # (drawn first, the series was drawn again at each step of that layout pass: ≈ 25 ms at 10^7 events).
        s.seriesChanged.connect(self._show_plots_or_empty)
        s.seriesChanged.connect(self._on_series)
        # (a timer of the window's own, not superqt's qdebounced: superqt is ≈ 0.1 s of the cold start)
        self._stale_readouts = QTimer(self, singleShot=True, interval=STALE_AFTER_MS)
        self._stale_readouts.timeout.connect(self._say_computing)
        s.landmarksChanged.connect(self._on_landmarks)
        s.previewChanged.connect(self._on_preview)
        s.valuesLetGo.connect(self._on_values_let_go)
        self._preview_drawn = AfterPaint([self.budget_plot, self.preview_plot], self)
        # (a view that has already painted the new preview, in _on_preview, is not waited for)
        s.after_draw = lambda start: self._preview_drawn(start, [v for v in (self.budget_plot, self.preview_plot)
                                                                 if not v.has_painted_latest()])
        self._rows_painted = AfterPaint([self.budget_plot, self.preview_plot], self)
        s.before_first_preview = self._lay_out_rows
        self._lines_drawn_for: dict | None = None  # the preview whose denoised lines _on_preview drew
        s.denoisedChanged.connect(self._on_denoised)
        s.settingsChanged.connect(self._on_settings)
        s.resolutionChanged.connect(self._on_resolution)
        s.previewFailed.connect(lambda msg: self.show_error("Preview failed", msg))
        s.dirtyChanged.connect(lambda _d: self._update_title())
        self.series_plot.vb.clicked.connect(self._on_click)
        self.series_plot.vb.rangeDragged.connect(self._on_drag)

    # ----------------------------------------------------------------------------------- opening
    def open_series(self, path: str | os.PathLike, *, report: bool = True, **columns) -> bool:
        """Load ``path`` now (blocking; the scripting API) and make it the session's series.

        On failure the session stays exactly as it was, ``last_error`` holds the message, and (unless
        ``report=False``) a message box shows it. Returns whether the file was opened.
        """
        try:
            series = load_series(path, **columns)
        except LoadError as e:
            if report:
                self.show_error("Cannot open the file", str(e))
            else:
                self.last_error = str(e)
            return False
        self._apply_loaded(series, str(path), columns)
        return True

    def open_series_async(self, path: str, options: dict | None = None, *,
                          dialog_if_refused: TablePreview | None = None) -> None:
        """Load on a worker thread (File › Open, drops, recent files): the window stays responsive.
        ``dialog_if_refused``: the file's preview, for the import dialog when the options cannot read it."""
        options = dict(options or {})
        self._pending_load = (path, options)
        self._dialog_if_refused = dialog_if_refused
        self.statusBar().showMessage(f"Loading {path}…")
        self.empty_state.show_loading(Path(path).name)
        self.setCursor(Qt.CursorShape.BusyCursor)
        self._loader.submit(load_job, path, options)

    def _on_loaded(self, _generation: int, series: Series) -> None:
        self.unsetCursor()
        self._dialog_if_refused = None
        self.empty_state.show_loading(None)
        if self._pending_load is None:
            return
        path, options = self._pending_load
        self._pending_load = None
        if self.session.series is None and self.central_stack.currentIndex() == 0:
            # The first series, in three steps that each paint before the next (ui/window/passes.py): the docks come
            # back beside the empty state, the plots take its place, the series is drawn. At 10^7 events
            # the plots' first paint with the series was one 140 ms stall, and with the docks one of 70-80.
            self._show_docks()
            after_paint(self, lambda: (self._show_plot_page(), after_paint(
                self, lambda: self._apply_loaded(series, path, options))))
            return
        self._apply_loaded(series, path, options)

    def _on_load_failed(self, _generation: int, message: str) -> None:
        self.unsetCursor()
        self.empty_state.show_loading(None)
        self._pending_load = None
        self.statusBar().clearMessage()
        preview, self._dialog_if_refused = self._dialog_if_refused, None
        if preview is not None and message.startswith("LoadError: "):  # the defaults cannot read it: choose
            self._import_dialog(preview.path, preview)
            return
        msg = message.split(": ", 1)[1] if message.startswith("LoadError: ") else message
        self.show_error("Cannot open the file", msg)
        self.loadFailed.emit(msg)

    def _apply_loaded(self, series: Series, path: str, options: dict, *, settings=None) -> None:
        self.session.set_series(series, settings=settings)
        self.last_error = None
        self._remember(path, options)
        late = series.source.out_of_order if series.source is not None else 0
        if late:  # (the import dialog notes it before Open; a file opened directly is said here)
            self.statusBar().showMessage(f"Opened {path}: its rows were not in time order and are sorted by time "
                                         f"({late:,} row{'s' if late > 1 else ''} earlier than the row above)",
                                         15000)
        else:
            self.statusBar().showMessage(f"Opened {path}", 5000)
        self.seriesLoaded.emit(path)

    def open_dialog(self) -> None:
        if not self._guards_allow(self.replace_guards):
            return
        last = read_setting(self._settings, "lastFile", "", str)
        start = str(Path(last).parent) if last else str(SAMPLES)
        path, _ = QFileDialog.getOpenFileName(self, "Open time series", start,
                                              "Time series (*.csv *.tsv *.txt *.xlsx *.gpx *.parquet);;All files (*)")
        if path:
            self.import_with_dialog(path, ask=False)

    def import_with_dialog(self, path: str, *, ask: bool = True) -> bool:
        """Show the import dialog for ``path``; it loads the file itself (a failure keeps it open with the
        message), and the series it loaded becomes the session's. Returns whether a file was opened (or, for a
        dialog accepted without loading, e.g. by a script, is being loaded in the background)."""
        if ask and not self._guards_allow(self.replace_guards):
            return False
        try:
            preview = self._inspect(path)
        except LoadError as e:
            self.show_error("Cannot open the file", str(e))
            return False
        if preview is None:  # cancelled while the file was read
            return False
        return self._import_dialog(path, preview)

    def _import_dialog(self, path: str, preview: TablePreview) -> bool:
        """The import dialog on ``preview``; the series it loaded (or it loads in the background) is opened."""
        from ..dialogs.import_dialog import (
            ImportDialog,  # superqt and the dialog load on first use (cold start)
        )

        with deleted_after(ImportDialog(preview, self)) as dlg:
            if not self.ask_import(dlg):
                return False
            if dlg.series is not None:
                self._apply_loaded(dlg.series, path, dlg.options())
            else:
                self.open_series_async(path, dlg.options())
            return True

    def _inspect(self, path: str) -> TablePreview | None:
        """The import dialog's first look at ``path``: on a worker behind a busy dialog when it takes more than a
        moment (a large file is read whole for its encoding, a workbook converted: 0.9 s for a 10^7-row CSV,
        ≈ 1 s for a 10^5-row workbook, with the window frozen; issue 15), else here. None: cancelled."""
        if not slow_to_inspect(path):
            return inspect_table(path)
        done, preview = busy_call(self, "Open time series", f"Reading {Path(path).name}…", lambda: inspect_table(path))
        return preview if done else None

    def _ask_import(self, dialog: ImportDialog) -> bool:
        """Default ``ask_import``: run the dialog modally; True when the user opened the file."""
        return bool(dialog.exec() == dialog.DialogCode.Accepted)

    def open_path(self, path: str | os.PathLike) -> bool:
        """``lmdk-gui FILE``: open FILE directly when the defaults read it; when they cannot (columns to choose,
        repeated times, missing values, a contact log's person) show the import dialog instead of failing.
        A file that cannot be read at all is reported as by :meth:`open_series`. A table of many persons (an id
        column) always goes through the dialog: its rows read as one series would mix the persons."""
        # (one look at the file serves the id check and the dialog: it reads a large file whole)
        preview: TablePreview | None = None
        try:
            preview = inspect_table(path)
        except LoadError as bad:
            unreadable = bad  # reported below if load_series cannot read it either
        if preview is not None and preview.guess.id_col is not None:
            return self._import_dialog(str(path), preview)
        try:
            series = load_series(path)
        except LoadError as e:
            if preview is None:  # a file that is unreadable as such (missing, not text) has no choice to offer
                # said in the window: started from a file manager, nobody reads the terminal
                self.show_error("Cannot open the file", str(unreadable))
                return False
            opened = self._import_dialog(str(path), preview)
            if not opened:
                self.last_error = str(e)
            return opened
        self._apply_loaded(series, str(path), {})
        return True

    def open_path_in_background(self, path: str) -> None:
        """:meth:`open_path` with the window already shown, for a file that takes a while to read
        (``loader.slow_to_inspect``): ``lmdk-gui FILE`` of 10^7 rows showed no window for 5 s. The file is
        looked at behind a busy dialog, loaded on the loader's worker, and the import dialog comes when it
        has an id column or the defaults cannot read it, as with open_path."""
        try:
            preview = self._inspect(path)
        except LoadError as e:
            self.last_error = str(e)
            self.show_error("Cannot open the file", str(e))
            return
        if preview is None:
            return
        if preview.guess.id_col is not None:
            self._import_dialog(path, preview)
            return
        self.open_series_async(path, {}, dialog_if_refused=preview)

    def _remember(self, path: str, options: dict) -> None:
        p = str(Path(path).resolve())
        recent = [r for r in self.recent_files() if r != p]
        self._settings.setValue("recentFiles", [p, *recent][:MAX_RECENT])
        self._settings.setValue("lastFile", p)
        write_options(self._settings, "lastOptions", options)

    def recent_files(self) -> list[str]:
        return read_setting(self._settings, "recentFiles", [], list)

    def clear_recent(self) -> None:
        self._settings.setValue("recentFiles", [])

    def _fill_recent(self) -> None:
        """Rebuilt each time the menu opens: files that no longer exist are dropped from the list."""
        self.recent_menu.clear()
        files = self.recent_files()
        existing = [f for f in files if Path(f).is_file()]
        if existing != files:
            self._settings.setValue("recentFiles", existing)
        if not existing:
            a = self.recent_menu.addAction("(no recent files)")
            a.setEnabled(False)
        for f in existing:
            a = self.recent_menu.addAction(f)
            a.triggered.connect(lambda _=False, f=f: self.import_with_dialog(f))
        self.recent_menu.addSeparator()
        clear = self.recent_menu.addAction("Clear list")
        clear.setObjectName("clearRecentAction")
        clear.setEnabled(bool(existing))
        clear.triggered.connect(self.clear_recent)

    def dragEnterEvent(self, ev):  # noqa: N802 - Qt naming
        if ev.mimeData().hasUrls() and any(u.isLocalFile() for u in ev.mimeData().urls()):
            ev.acceptProposedAction()

    def dropEvent(self, ev):  # noqa: N802 - Qt naming
        paths = [u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile()]
        if paths:
            ev.acceptProposedAction()
            # After the drop returns: the import dialog is modal and must not run inside the drag's event.
            QTimer.singleShot(0, lambda: self.import_with_dialog(paths[0]))

    # ------------------------------------------------------------------------------ session → views
    def _on_series(self) -> None:
        s = self.session.series
        if s is None:
            return
        self._hover_row = self._hover_target = None
        self.series_plot.set_series(s)
        rel = self.session.release_series  # (the periods at a coarser release resolution)
        assert rel is not None
        self.budget_plot.set_series(rel)
        self.preview_plot.set_series(rel)
        is_loc = s.kind == "location"
        self._show_track(is_loc)
        if is_loc:
            self.track_plot.set_series(s)
        self._update_title()
        self._update_status()

    def _on_resolution(self) -> None:
        """The release resolution changed: the budget and preview rows show the released rows (events or
        periods); the series plot keeps the events, where landmarks are clicked."""
        rel = self.session.release_series
        if rel is None:
            return
        self.budget_plot.set_series(rel)
        self.preview_plot.set_series(rel)
        self._update_status()

    def _lay_out_rows(self, start) -> None:
        """A new series: the rows its first preview fills are laid out (empty) and painted before it is
        computed, then ``start`` computes it. Laid out when it arrived, in three layout passes each with a
        repaint, the first preview held the GUI thread 50-60 ms at any size (at 10^7 events, with the helper
        threads reducing the rows meanwhile, 70-90 ms)."""
        vis = self.session.visible_schemes
        laid_out = [view for view, schemes in ((self.budget_plot, LANDMARK_SCHEMES), (self.preview_plot, ALL_SCHEMES))
                    if view.expect([x for x in schemes if x in vis])]
        # once they have painted, and the relayout their axes ask for while they paint theirs (the time axis
        # takes the height of its labels) has painted too: after_paint's turn of the loop holds both
        self._rows_painted(lambda: after_paint(self, start), laid_out)  # (at once when none was laid out)

    def _show_track(self, on: bool) -> None:
        """Show or hide the GPS track view; it opens at its last width (saved splitter state), never at a
        few pixels."""
        if not on and self._track_plot is None:
            return  # never built, so not shown
        was = self.track_plot.isVisible()
        self.track_plot.setVisible(on)
        if not on or was:
            return
        state = read_setting(self._settings, "mainSplitterState", None, bytes)
        restored = state is not None and self.main_split.restoreState(state)
        self.track_plot.setVisible(True)  # restoreState also restores the hidden flag of its time
        sizes = self.main_split.sizes()
        total = sum(sizes) or max(self.main_split.width(), 2 * TRACK_MIN_WIDTH)
        if not restored or len(sizes) != 2 or sizes[1] < TRACK_MIN_WIDTH:
            # first time (or a bad saved state): about a third, so the plots keep room for their notes
            right = max(TRACK_MIN_WIDTH, int(total * 0.3))
            self.main_split.setSizes([max(total - right, 1), right])

    def _remember_split(self, *_args) -> None:
        if self._track_shown():
            self._settings.setValue("mainSplitterState", self.main_split.saveState())

    def _on_values_let_go(self) -> None:
        """A lean session let go of values (Session.valuesLetGo): the plots must not keep them alive."""
        self.preview_plot.let_go(self.session.preview)
        self.budget_plot.let_go(self.session.preview)
        if self._track_plot is not None:
            self._track_plot.let_go(self.session.preview)

    def _on_landmarks(self) -> None:
        lm = self.session.landmarks
        self.series_plot.set_landmarks(lm)
        if self._track_shown():
            self.track_plot.set_landmarks(lm)
        self._update_counts()
        self._stale_readouts.start()  # (restarted by each edit)

    def _say_computing(self) -> None:
        """The hover box and the verdict of an edit whose preview has not come ``STALE_AFTER_MS`` after it
        ("computing…"). The preview's slot says both with its budgets and verdict; a preview that comes within
        a glance (≈ 10 ms at 10^5 events) is not announced first: that was ≈ 1 ms of each click and a repaint of
        both (issue 15)."""
        if self.session.series is not None and not self.session.is_preview_current():
            self._refresh_hover()
            self._update_verdict()

    def _on_preview(self) -> None:
        s = self.session
        pv = s.preview
        rels = {k: v.release for k, v in pv.items() if k in LANDMARK_SCHEMES}
        self.budget_plot.set_budgets({k: v.budgets if v.whole else None for k, v in pv.items() if k in rels},
                                     s.release_landmarks, s.epsilon,
                                     s.visible_schemes, {k: r.max_budget for k, r in rels.items()})
        bounds = s.release_settings.bounds if s.series is not None and s.series.kind == "numeric" else None
        # The lines go with the points in one redraw: none until this state's denoised stage has arrived
        # (_on_denoised), so a line of another landmark set is never drawn over these points.
        lines = self._denoised_lines()
        self.preview_plot.set_denoised(lines, redraw=False)
        self.preview_plot.set_preview(pv, s.visible_schemes, bounds)
        self._lines_drawn_for = pv if lines else None
        if self._track_shown():
            self.track_plot.set_preview(pv, s.visible_schemes)  # drops tracks of another state's stage
        self._refresh_hover()
        self._update_status()
        # Each scene marks its view dirty in a queued call of its own: the budget rows were painted in one pass
        # of the event loop and the preview rows in the next (the status bar twice). Those calls run now, and
        # the rows are painted here, in this slot (≈ 2 ms of a click at 10^5, issue 15).
        for view in (self.budget_plot, self.preview_plot):
            QCoreApplication.sendPostedEvents(view.scene(), QEvent.Type.MetaCall)

    def _denoised_lines(self) -> dict[str, np.ndarray]:
        """With Denoise on, each row's line is what the export writes (the post-processed release), once
        the session has it for the current state; otherwise none."""
        s = self.session
        if s.series is None or not s.settings.denoise or not s.is_denoised_current():
            return {}
        return {k: display_values(s.series, p.denoised_values) for k, p in s.preview.items()
                if p.denoised_values is not None}

    def _on_denoised(self) -> None:
        """The denoised stage arrived: the lines, the points' fading and the row notes; the raw points stay
        as drawn by _on_preview (the metrics table listens to the session itself)."""
        s = self.session
        # A small series' stage comes with its preview (Session._submit's inline denoising, up to
        # DENOISE_INLINE_MAX events), whose slot has drawn these lines already: drawing them again redrew the
        # lines and notes and painted the rows a second time in every click (issue 15).
        if s.preview is not self._lines_drawn_for:
            self.preview_plot.set_denoised(self._denoised_lines(), s.preview)
        if self._track_shown():
            current = s.settings.denoise and s.is_denoised_current()
            self.track_plot.set_denoised({k: p.denoised_values for k, p in s.preview.items() if current})

    def _on_settings(self) -> None:
        if self.session.resolution is not None and self.preview_plot.series is not self.session.release_series:
            self._on_resolution()  # (new bounds clamp the events anew: the periods' true values changed)
        if self.session.preview:
            self._on_preview()

    def _update_title(self) -> None:
        s = self.session.series
        name = (Path(s.source.path).name if s is not None and s.source is not None else s.name) if s else "no series"
        self.setWindowTitle(f"{name}[*] — lmdk_gui")
        self.setWindowModified(self.session.is_dirty())

    def _update_status(self) -> None:
        self._update_counts()
        self._update_verdict()

    def _update_counts(self) -> None:
        s = self.session
        n = s.n
        k = int(s.landmarks.size)
        _set_status(self.status_events, count_noun(n, "event"))
        _set_status(self.status_landmarks, f"{count_noun(k, 'landmark')} ({share(k, n)})" if n else "no landmarks")

    def _update_verdict(self) -> None:
        s = self.session
        if s.preview and s.is_preview_current():
            bad = [SCHEME_LABELS[x] for x in LANDMARK_SCHEMES if not s.preview[x].guarantee.holds]
            if bad:
                text, color = f"✘ landmark privacy (independent events) fails: {', '.join(bad)}", "#c00000"
            else:
                text, color = f"✔ landmark privacy (independent events): holds at ε = {s.epsilon:g}", "#008000"
            # coloured by rich text: a style sheet re-polishes the label, 6-10 ms on every click and preview
            _set_status(self.status_guarantee, f"<b style='color:{color}'>{text}</b>")
            self.status_guarantee.setToolTip(
                f"(ε, L)-landmark privacy with ε = {s.epsilon:g}: every landmark scheme's budgets sum to at most ε "
                "over the landmarks plus any one regular event (checked independently of the schemes). It "
                "assumes the events are independent; the Temporal correlation tab shows the loss under a "
                "correlation model you choose.")
        else:
            _set_status(self.status_guarantee, "computing…")

    # ------------------------------------------------------------------------------- interaction
    def _on_click(self, scene_pos) -> None:
        row = self.series_plot.nearest_event(scene_pos)
        if row is not None:
            self.session.toggle_landmark(row)
        elif self.session.series is not None:  # a click just off the line did nothing, silently
            self.statusBar().showMessage(OFF_LINE_HINT, 5000)

    def _on_drag(self, x0: float, x1: float, mode: str) -> None:
        a, b = int(math.ceil(x0)), int(math.floor(x1))
        if a > b:
            return
        if mode == "add":
            self.session.add_range(a, b)
        else:
            self.session.remove_range(a, b)

    def hover_html(self, row: int) -> str:
        s = self.session
        ser = s.series
        assert ser is not None
        t = str(np.datetime_as_string(ser.times[row], unit="s")).replace("T", " ")
        if ser.kind == "numeric":
            val = f"{ser.values[row]:.6g} {ser.unit}".strip()
        elif ser.kind == "location":
            val = f"{ser.values[row, 0]:.6f}, {ser.values[row, 1]:.6f}"
        else:
            val = ser.categories[ser.values[row]] if ser.categories else str(ser.values[row])
        # "event N": the 0-based position in time order, as landmark lists and --landmark-rows number events
        # ("row N" is kept for the file's own rows, in messages about the file)
        lines = [f"<b>event {row}</b> · {t}", f"value: {val}" + (" · <b>landmark</b>" if s.is_landmark(row) else "")]
        budgets = []
        j = s.release_row(row)  # (at a coarser resolution the budgets are its period's)
        if s.resolution is not None and s.release_series is not None:
            per = s.release_series
            start = str(np.datetime_as_string(per.times[j], unit="s")).replace("T", " ")
            lines.append(f"released in the period from {start} ({per.periods.aggregate if per.periods else ''})")
        for scheme in SCHEME_LABELS:  # every scheme, landmark-private ones first
            if scheme in s.visible_schemes and scheme in s.preview:
                p = s.preview[scheme]
                if not p.whole:  # (a lean session's edit dropped its release: its preview is coming)
                    budgets.append(f"{SCHEME_LABELS[scheme]}: ε<sub>t</sub> = …")
                    continue
                if j >= p.approximated.shape[0]:  # (a preview of the previous resolution, replaced soon)
                    continue
                mark = " (approx.)" if p.approximated[j] else ""
                budgets.append(f"{SCHEME_LABELS[scheme]}: ε<sub>t</sub> = {p.budgets[j]:.4g}{mark}")
        # two schemes a line: the box fits the series plot even at 1280×800 with all six shown
        lines += [" · ".join(budgets[i:i + 2]) for i in range(0, len(budgets), 2)]
        return "<br>".join(lines)

    def _on_hover(self, evt) -> None:
        pos = evt[0]
        if self.session.series is None or not self.series_plot.sceneBoundingRect().contains(pos) or \
                not self.series_plot.vb.sceneBoundingRect().contains(pos):
            self._hover_row = self._hover_target = None
            self.series_plot.show_info(None)
            return
        # The box describes the event a click would mark, when one is within reach (ringed), else the one under
        # the pointer's time (read only: a click there marks nothing).
        target = self.series_plot.nearest_event(pos)
        row = target if target is not None else self.series_plot.row_at(pos)
        self._hover_row, self._hover_target = row, target
        if row is None:
            self.series_plot.show_info(None)
            return
        self.series_plot.show_info(row, self.hover_html(row), target)

    def _refresh_hover(self) -> None:
        """Clicks and drags change what the hover box describes (landmark or not, the budgets): redraw it for
        the same event without waiting for the mouse to move."""
        row = self._hover_row
        s = self.session.series
        if row is None or s is None or not self.series_plot.info.isVisible():
            return
        if row >= s.n:
            self._hover_row = self._hover_target = None
            self.series_plot.show_info(None)
            return
        self.series_plot.show_info(row, self.hover_html(row), self._hover_target)

    def reset_zoom(self) -> None:
        self.series_plot.getPlotItem().enableAutoRange()

    # ------------------------------------------------------------------------------------ export
    def export_dialog(self) -> None:
        """File › Export protected CSV…"""
        if self.session.series is None:
            self.show_error("Export", "Open a series first.")
            return
        if self.export_job is not None and self.export_job.is_running():
            self.show_error("Export", "An export is already running; wait for it or cancel it.")
            return
        from ..dialogs.export_dialog import ExportDialog  # loaded on first use (cold start)

        focus = self.metrics_table.selected_scheme() or "adaptive"
        start = read_setting(self._settings, "lastExportDir", "", str) or str(Path.home())
        s = self.session
        dlg = ExportDialog(s.snapshot(), focus, start, self, average=s.average, preview=s.preview,
                           landmark_rules=s.landmark_rules)
        # The R-run average may still be computing: the dialog's advice fills in when it arrives.
        fill = lambda: dlg.set_advice(s.average, s.preview)  # noqa: E731
        s.metricsChanged.connect(fill)
        with deleted_after(dlg):
            try:
                v = dlg.values() if dlg.exec() == ExportDialog.DialogCode.Accepted else None
            finally:
                s.metricsChanged.disconnect(fill)
        if v is None:
            return
        self._settings.setValue("lastExportDir", str(Path(v["path"]).parent))
        job = self.export_release(v["path"], v["scheme"], include_budget=v["include_budget"],
                                  include_flags=v["include_flags"], seed=v["seed"], backend=v["backend"],
                                  force=v["force"], include_input_name=v["include_input_name"],
                                  verbatim_labels=v.get("verbatim_labels", False), denoise=v["denoise"])
        job.finished.connect(lambda path: self._export_message(path))

    def export_release(self, path: str | os.PathLike, scheme: str, include_budget: bool = False,
                       include_flags: bool = False, seed: bytes | str | None = None, *, backend: str | None = None,
                       force: bool = False, include_input_name: bool = False,
                       verbatim_labels: bool = False, denoise: bool | None = None) -> ExportJob:
        """Start an export without dialogs (the automation API); returns the running :class:`ExportJob`.
        ``denoise`` None follows the session's setting (issue 12: on by default).

        It works on a snapshot of the session taken now; later edits do not change what is written.
        """
        if self.session.series is None:
            raise RuntimeError("no series is open")
        if self.export_job is not None and self.export_job.is_running():
            raise RuntimeError("an export is already running")
        from ...core.publish.export import ExportOptions  # the writer loads on first use (cold start)
        from ..dialogs.export_dialog import ExportJob

        opts = ExportOptions(scheme=scheme, include_budget=include_budget, include_flags=include_flags, seed=seed,
                             backend=backend, force=force, chunk_rows=16384,
                             include_input_name=include_input_name, verbatim_labels=verbatim_labels,
                             denoise=self.session.settings.denoise if denoise is None else bool(denoise),
                             landmarks_rule=", ".join(sorted(self.session.landmark_rules)) or None)
        job = ExportJob(self.session.snapshot(), path, opts, self)
        self.session.let_go_of_preview_noise()  # (at 10^7 events the preview's noise was 80 MB of the export's peak)
        self.export_job = job
        job.progress.connect(self._export_progress)
        job.finished.connect(self._export_finished)
        job.failed.connect(self._export_failed)
        job.cancelled.connect(self._export_cancelled)
        self.export_progress.setValue(0)
        self.export_progress.show()
        self.export_cancel.show()
        self.export_action.setEnabled(False)
        self.statusBar().showMessage(f"Exporting {scheme} release to {path}…")
        return job.start()

    def cancel_export(self) -> None:
        if self.export_job is not None and self.export_job.is_running():
            self.export_job.cancel()

    def _export_progress(self, done: int, total: int) -> None:
        self.export_progress.setMaximum(max(total, 1))
        self.export_progress.setValue(done)

    def _export_done(self) -> None:
        self.export_progress.hide()
        self.export_cancel.hide()
        self.export_action.setEnabled(True)

    def _export_finished(self, path: str) -> None:
        self._export_done()
        job = self.export_job
        if job is not None:
            self.last_export = job
            self.report_action.setEnabled(True)
        side = job.sidecar if job is not None else Path(path + ".json")
        self.statusBar().showMessage(f"Wrote {path} and {side}", 15000)

    def _export_message(self, path: str) -> None:
        job = self.export_job
        side = job.sidecar if job is not None else Path(path + ".json")
        warnings = "".join(f"<br>⚠ {w}" for w in (job.result.warnings if job and job.result else ()))
        if job and job.result and job.result.composition:  # (from the ledger, once the release is written)
            warnings += f"<br>Note: {html.escape(job.result.composition)}"
        box = QMessageBox(QMessageBox.Icon.Information, "Export finished",
                          f"Wrote the protected release<br><b>{path}</b><br>and its metadata<br><b>{side}</b>"
                          f"{warnings}", QMessageBox.StandardButton.Ok, self)
        box.setObjectName("exportDoneBox")
        report = box.addButton("Save release report…", QMessageBox.ButtonRole.ActionRole)
        report.setObjectName("exportReportButton")
        report.clicked.connect(self.save_release_report)
        box.open()

    # ------------------------------------------------------------------------------- release report
    def save_release_report(self) -> bool:
        """File › Save release report…: the report on the last finished export, as HTML or PDF (by the file's
        extension), with the private section unless the person leaves it out. True when a file was written."""
        job = self.last_export
        if job is None:
            self.show_error("Release report", "Export a release first: the report describes it.")
            return False
        from ..dialogs.report_dialog import default_report_path  # loaded on first use (cold start)

        answer = self.ask_report_path(str(default_report_path(job.path)), True)
        if answer is None:
            return False
        path, private = Path(answer[0]), bool(answer[1])
        if path.resolve() in {job.path.resolve(), job.sidecar.resolve()} or path.is_dir():
            self.show_error("Release report", f"{path} is the release or a folder; choose another name.")
            return False
        from ...core.publish.guard import OutputRefused, check_output

        src = job.snapshot.series.source
        try:  # the one output guard (issue 42): never the data file, through any link, nor a special file
            check_output(path, (job.path, job.sidecar, src.path if src is not None else None), force=True,
                         what="report", input_word="data file")
        except OutputRefused as e:
            self.show_error("Release report", str(e))
            return False
        try:
            ok, html = busy_call(self, "Release report", "Writing the release report…",
                                 lambda: _report_html(job, private))
            if not ok or html is None:
                return False
            from ..dialogs.report_dialog import html_to_pdf, is_pdf

            if is_pdf(path):
                html_to_pdf(html, path)
            else:
                from ...core.publish.report import write_report

                write_report(path, html)
        except (ValueError, OSError) as e:
            where = f"{e.filename}: " if isinstance(e, OSError) and e.filename else ""
            self.show_error("Release report", f"{where}{getattr(e, 'strerror', None) or e}")
            return False
        note = " (with the PRIVATE section: do not publish it)" if private else " (public)"
        self.statusBar().showMessage(f"Wrote the release report {path}{note}", 15000)
        return True

    def _ask_report_path(self, start: str, private_available: bool) -> tuple[str, bool] | None:
        from ..dialogs.report_dialog import ReportDialog

        dlg = ReportDialog(start, private_available, self)
        with deleted_after(dlg):
            return dlg.answer() if dlg.exec() == ReportDialog.DialogCode.Accepted else None

    def _export_failed(self, message: str) -> None:
        self._export_done()
        self.statusBar().clearMessage()
        self.show_error("Export failed", message)

    def _export_cancelled(self) -> None:
        self._export_done()
        self.statusBar().showMessage("Export cancelled; nothing was written.", 10000)

    # -------------------------------------------------------------------------------- messages
    def show_error(self, title: str, message: str) -> None:
        """Show one message box (window-modal, non-blocking) and remember the message."""
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
        ans = QMessageBox.question(self, "Export running",
                                   "An export is still running. Cancel it and close the window?",
                                   QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                   QMessageBox.StandardButton.No)
        return ans == QMessageBox.StandardButton.Yes

    def paintEvent(self, ev):  # noqa: N802 - Qt naming
        super().paintEvent(ev)
        ext = getattr(self, "extensions", None)  # (None while the window is still being built)
        if ext is not None:
            ext.first_painted()  # the deferred tabs, if any, install now (once)

    def closeEvent(self, ev):  # noqa: N802 - Qt naming
        if not self._guards_allow(self.close_guards):
            ev.ignore()
            return
        job = self.export_job
        if job is not None and job.is_running():
            if not self.confirm_cancel_export():
                ev.ignore()
                return
            job.cancel()
            job.wait(30)  # the writer stops between chunks and removes its temporary file
        # With no series the docks may be hidden by nothing but the empty state: keep the last real layout.
        save_window(self, self._settings, with_state=self.session.series is not None)
        self.session.shutdown()
        self._loader.shutdown()
        super().closeEvent(ev)


def _report_html(job: ExportJob, private: bool) -> str:
    """The report page of ``job``'s release (worker thread): the private section from the export's own
    snapshot — the data, landmarks and rule that release was made from."""
    from ...core.publish.report import private_facts, read_release
    from ...core.publish.report_html import render_report

    rel = read_release(job.path)
    facts = None
    if private:
        snap = job.snapshot
        facts = private_facts(rel, snap.series, snap.landmarks, rule=job.options.landmarks_rule)
    return render_report(rel, facts)


def display_rows_for_test(window: MainWindow, row: int) -> tuple[float, float]:
    """Data coordinates of an event's marker in the series plot (for tests and scripting)."""
    s = window.session.series
    assert s is not None
    return float(row), float(display_values(s, s.values[row:row + 1])[0])


def _set_status(label: QLabel, text: str) -> None:
    """A status-bar label's new text, in a width that only grows: a label whose size may change asks the whole
    window for a new layout at every text (the landmark count and the guarantee's "computing…" and verdict, at
    every click: two layout passes of the main window and a repaint of the series plot, issue 15). A fixed
    size does not; the widest text so far keeps its room."""
    if text == label.text():
        return
    label.setText(text)
    hint = label.sizeHint()
    if hint.width() > label.minimumWidth() or label.minimumHeight() != label.maximumHeight():
        label.setFixedSize(max(hint.width(), label.minimumWidth()), hint.height())
