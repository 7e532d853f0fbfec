"""The Landmarks feature (``window.extensions["landmarks_ui"]``): the Landmarks menu's *Suggest* entries and
landmark list entries, the suggestion panel's dock, and the rules' last parameters (kept with a project)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction

from ....core.analysis import suggestions as sugg
from ....core.data.series import Series
from ...window.docks import add_dock
from ...window.extensions import WindowPart, after_close
from .list_files import LandmarkListFiles
from .panel import SuggestionDock, SuggestionPanel


class LandmarksUI(WindowPart, LandmarkListFiles):
    """Landmarks menu additions: one *Suggest* entry per rule, and landmark list import/export
    (:class:`~.list_files.LandmarkListFiles`)."""

    #: import finished: number of landmarks afterwards
    imported = Signal(int)

    def __init__(self, window) -> None:
        super().__init__(window)
        self.panel: SuggestionPanel | None = None
        self.dock: SuggestionDock | None = None
        self._params: dict[str, dict[str, Any]] = {}  # last parameters per rule (kept with the project)
        #: Replaceable hooks (tests): return a path, or "" / None to cancel.
        self.get_import_path: Callable[[], str | None] = self._ask_import_path
        self.get_export_path: Callable[[], str | None] = self._ask_export_path
        #: (landmarks in the file, current landmarks) -> "replace" | "add" | None (cancel)
        self.ask_import_mode: Callable[[int, int], str | None] = self._ask_import_mode
        self._build_menu()
        self.session.seriesChanged.connect(self._on_series)
        self._on_series()
        after_close(window, self.shutdown)  # (stops the panel's worker threads)

    # ------------------------------------------------------------------------------- menu
    def _build_menu(self) -> None:
        w = self.window
        m = w.landmarks_menu
        m.setToolTipsVisible(True)
        m.addSection("Suggest")
        self.rule_actions: dict[str, QAction] = {}
        for r in sugg.RULES.values():
            a = QAction(f"{r.label}…", w)
            a.setObjectName(f"suggest{r.name.capitalize()}Action")
            a.setStatusTip(r.help)
            a.triggered.connect(lambda _=False, name=r.name: self.open_suggestions(name))
            m.addAction(a)
            self.rule_actions[r.name] = a
        m.addSeparator()
        self.import_action = QAction("&Import landmark list…", w)
        self.import_action.setObjectName("importLandmarksAction")
        self.import_action.setStatusTip("Read landmarks from a CSV with a 'timestamp' column (or 'row': event "
                                        "numbers from 0, as the hover box shows them)")
        self.import_action.triggered.connect(self.import_dialog)
        self.export_action = QAction("E&xport landmark list…", w)
        self.export_action.setObjectName("exportLandmarksAction")
        self.export_action.setStatusTip("Write the landmarks as a CSV (timestamp, row = the event number the "
                                        "hover box shows); the file is private")
        self.export_action.triggered.connect(self.export_dialog)
        m.addAction(self.import_action)
        m.addAction(self.export_action)

    def _on_series(self) -> None:
        s = self.session.series
        for name, a in self.rule_actions.items():
            r = sugg.RULES[name]
            if s is None:
                a.setEnabled(False)
                a.setToolTip("Open a series first")
            elif r.supports(s.kind):
                a.setEnabled(True)
                a.setToolTip(r.help)
            else:
                a.setEnabled(False)
                a.setToolTip(f"Needs a {' or '.join(r.kinds)} series; this one is {s.kind}.")
        self.import_action.setEnabled(s is not None)
        self.export_action.setEnabled(s is not None)
        self._params = {}  # a new series starts from its own defaults (a project restores its own after)
        if self.panel is not None and self.dock is not None:
            if s is None:
                self.close_suggestions()
            elif self.panel.series is not s:
                rule = self.panel.rule
                keep = rule is not None and rule.supports(s.kind)
                new_rule = rule.name if keep else sugg.rules_for_kind(s.kind)[0].name
                self.panel.overlay.clear()
                self.panel.set_rule(new_rule)
                if self.dock.isVisible():
                    self.panel.activate()

    # -------------------------------------------------------------------------- suggestions
    def open_suggestions(self, rule: str) -> SuggestionPanel:
        """Show the suggestion panel for ``rule`` (docked on the right; non-modal)."""
        w = self.window
        if self.panel is None:
            self.panel = SuggestionPanel(self)
            # Tabbed with the settings (left): the plots keep their width, which matters at 1280 px
            # with a location series (series plot and track map side by side).
            self.dock = add_dock(w, SuggestionDock(self.panel, w), Qt.DockWidgetArea.LeftDockWidgetArea,
                                 tab_with=w.settings_dock)
            self.dock.hide()
            w.view_menu.addAction(self.dock.toggleViewAction())
        assert self.dock is not None
        self.panel.set_rule(rule)
        self.dock.show()
        self.dock.raise_()
        self.panel.activate()
        return self.panel

    def close_suggestions(self) -> None:
        if self.dock is not None:
            self.dock.hide()
        if self.panel is not None:
            self.panel.deactivate()

    def remembered_params(self, series: Series, rule: str) -> dict[str, Any]:
        """Parameters last used with ``rule`` (dropped when they do not fit this series)."""
        p = dict(self._params.get(rule, {}))
        if series.kind == "categorical" and "values" in p:
            cats = set(series.categories or ())
            p["values"] = [v for v in p["values"] if v in cats]
        return p

    def remember_params(self, series: Series, rule: str, params: dict[str, Any]) -> None:
        self._params[rule] = {k: (list(v) if isinstance(v, list | tuple) else v) for k, v in params.items()}

    # ---------------------------------------------------------------------- project state
    def state(self) -> dict:
        """Saved in project files: the last parameters of each rule."""
        return {"suggest_params": {k: dict(v) for k, v in self._params.items()}}

    def restore(self, d: dict) -> None:
        params = d.get("suggest_params") if isinstance(d, dict) else None
        if isinstance(params, dict):
            self._params = {str(k): dict(v) for k, v in params.items() if isinstance(v, dict)
                            and str(k) in sugg.RULES}

    def shutdown(self) -> None:
        if self.panel is not None:
            self.panel.shutdown()


def install(window) -> LandmarksUI:
    return LandmarksUI(window)
