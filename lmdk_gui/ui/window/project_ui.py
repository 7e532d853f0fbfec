"""Project files in the window: File › Save Project (Ctrl+S), Save Project As…, Open Project…, Open Recent
Project ›; the unsaved-changes prompt and the title-bar mark (DESIGN §9, issue 5).

A project (``.lmdk.json``, :mod:`lmdk_gui.core.data.project`) keeps the data file's path and SHA-256, the column
choices, the landmarks (rows and timestamps), every privacy setting, the seed, and the view: the schemes
shown, the number of MAE runs, the zoom, and the ``state()`` of every feature module that has one (restored
with its ``restore(d)``). **It is private**: it holds the landmark positions (the core writes it owner-only).

Opening checks the data before the landmarks are applied. A data file that moved (and is not next to the
project where it used to be) is asked for; a data file whose bytes, row count or columns changed gets a
warning with the choice to re-attach the landmarks by their timestamps (:func:`landmarks_by_time`), keep
the row numbers, or open without landmarks.

Every question goes through a replaceable attribute of :class:`ProjectUI` (``ask_unsaved``,
``locate_data``, ``ask_data_changed``, ``get_save_path``, ``get_open_path``), so tests and scripts never
meet a modal dialog. ``ask_unsaved`` answers "discard" by itself on a display-less (offscreen) platform,
where nobody could answer it (``lmdk-gui --screenshot`` closes a window with landmarks set).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from ...core.data.loader import load_series
from ...core.data.project import (
    PROJECT_SUFFIX,
    Project,
    check_data,
    landmarks_by_time,
    load_project,
    resolve_data_path,
    save_project,
)
from ...core.data.series import LoadError, Series
from ...core.kernel.settings import ALL_SCHEMES
from .extensions import WindowPart, after_close
from .main_window import app_settings, load_job
from .runner import LatestOnlyRunner
from .startup import read_setting

MAX_RECENT_PROJECTS = 8
_HEADLESS_PLATFORMS = ("offscreen", "minimal")


def project_name(path: str | os.PathLike) -> str:
    """``jan.lmdk.json`` → ``jan`` (the title shows it)."""
    name = Path(path).name
    return name[: -len(PROJECT_SUFFIX)] if name.endswith(PROJECT_SUFFIX) else Path(name).stem


class ProjectUI(WindowPart):
    """Project actions, unsaved-changes guards and the title of one main window."""

    projectSaved = Signal(str)  # path
    projectOpened = Signal(str)  # path
    projectFailed = Signal(str)  # message

    def __init__(self, window) -> None:
        super().__init__(window)
        #: The project file the window's session belongs to (None: not saved as a project yet).
        self.path: Path | None = None
        self._opening = False
        self._extra_dirty = False  # e.g. data found at a new place: the project file should be saved again
        self._loader: LatestOnlyRunner | None = None
        self._pending: tuple[Project, Path, Path] | None = None
        self._settings = app_settings()
        # Replaceable hooks (tests, scripting). See the module docstring.
        #: () -> "save" | "discard" | "cancel"
        self.ask_unsaved: Callable[[], str] = self._ask_unsaved
        #: (project, project path) -> new data path or None (cancel)
        self.locate_data: Callable[[Project, Path], str | None] = self._locate_data
        #: (warnings, matched by time, saved landmarks, rows still valid) -> "by_time"|"rows"|"none"|"cancel"
        self.ask_data_changed: Callable[[list[str], int, int, bool], str] = self._ask_data_changed
        #: () -> path or None
        self.get_save_path: Callable[[], str | None] = self._ask_save_path
        self.get_open_path: Callable[[], str | None] = self._ask_open_path
        self._build_actions()
        window.close_guards.append(self.confirm_discard)
        window.replace_guards.append(self.confirm_discard)
        s = self.session
        s.seriesChanged.connect(self._on_series)
        s.dirtyChanged.connect(lambda _d: self.update_title())
        s.settingsChanged.connect(self.update_title)  # a new seed makes the session dirty without dirtyChanged
        s.landmarksChanged.connect(self.update_title)
        window.installEventFilter(self)  # (a dropped project file)
        after_close(window, self._stop_loader)
        self.update_title()

    # --------------------------------------------------------------------------------- actions
    def _build_actions(self) -> None:
        w = self.window
        m = w.file_menu

        def action(text: str, name: str, slot, shortcut=None, tip: str = "") -> QAction:
            a = QAction(text, w)
            a.setObjectName(name)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            a.setStatusTip(tip)
            a.triggered.connect(slot)
            w.addAction(a)
            return a

        self.open_action = action("Open &Project…", "openProjectAction", self.open_dialog, "Ctrl+Shift+O",
                                  "Open a saved project: data, landmarks and settings")
        self.save_action = action("&Save Project", "saveProjectAction", self.save, QKeySequence.StandardKey.Save,
                                  "Save the landmarks and settings as a project file (private)")
        self.save_as_action = action("Save Project &As…", "saveProjectAsAction", self.save_as,
                                     QKeySequence.StandardKey.SaveAs, "Save the project under a new name")
        self.recent_menu = QMenu("Open Recent Pro&ject", m)
        self.recent_menu.setObjectName("recentProjectsMenu")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        # File: Open series…, Open Recent › | Open Project…, Open Recent Project ›, Save, Save As… | Export… | Quit
        anchor = next((a for a in m.actions() if a.isSeparator()), None)
        if anchor is None:
            m.addSeparator()
            for a in (self.open_action, self.recent_menu.menuAction(), self.save_action, self.save_as_action):
                m.addAction(a)
        else:
            m.insertSeparator(anchor)
            m.insertAction(anchor, self.open_action)
            m.insertMenu(anchor, self.recent_menu)
            m.insertAction(anchor, self.save_action)
            m.insertAction(anchor, self.save_as_action)

    # ------------------------------------------------------------------------------ dirty state
    def has_unsaved_changes(self) -> bool:
        return self.session.series is not None and (self.session.is_dirty() or self._extra_dirty)

    def update_title(self) -> None:
        """Project name in the title when there is one; ``[*]`` shows unsaved changes (the main window
        sets the series name first, this runs after it)."""
        w = self.window
        if self.path is not None:
            s = self.session.series
            data = Path(s.source.path).name if s is not None and s.source is not None else ""
            w.setWindowTitle(f"{project_name(self.path)} ({data})[*] — lmdk_gui")
        w.setWindowModified(self.has_unsaved_changes())

    def _on_series(self) -> None:
        if not self._opening:  # another series was opened: it is not this project any more
            self.path = None
            self._extra_dirty = False
        self.update_title()

    # ------------------------------------------------------------------------------------ guards
    def confirm_discard(self) -> bool:
        """Close / replace guard: True to go on. Asks Save / Discard / Cancel when there are unsaved
        changes; "Save" saves (asking for a name when the session is not a project yet)."""
        if not self.has_unsaved_changes():
            return True
        answer = self.ask_unsaved()
        if answer == "save":
            return self.save()
        return answer == "discard"

    def unsaved_box(self) -> QMessageBox:
        """The Save / Discard / Cancel box (built here so it can be looked at without running it)."""
        name = f"the project “{project_name(self.path)}”" if self.path is not None else "this session"
        box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved changes",
                          f"The landmarks or settings of {name} have changed since they were last saved.",
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self.window)
        box.setObjectName("unsavedBox")
        box.setInformativeText("Save them in a project file before going on?")
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        return box

    def _ask_unsaved(self) -> str:
        if QGuiApplication.platformName() in _HEADLESS_PLATFORMS:
            return "discard"  # no display, nobody to answer: never hang (e.g. lmdk-gui --screenshot)
        ans = self.unsaved_box().exec()
        return {QMessageBox.StandardButton.Save: "save",
                QMessageBox.StandardButton.Discard: "discard"}.get(QMessageBox.StandardButton(ans), "cancel")

    # ------------------------------------------------------------------------------------ saving
    def view_state(self) -> dict[str, Any]:
        """GUI state kept in ``Project.view``: shown schemes, MAE runs, zoom and the feature modules'
        ``state()``."""
        s = self.session
        view: dict[str, Any] = {"visible_schemes": [x for x in ALL_SCHEMES if x in s.visible_schemes],
                                "runs": int(s.runs)}
        try:
            (x0, x1), _ = self.window.series_plot.vb.viewRange()
            view["x_range"] = [float(x0), float(x1)]
        except (AttributeError, TypeError, ValueError):
            pass
        ext_state = {}
        skipped = []
        for name, ext in getattr(self.window, "extensions", {}).items():
            fn = getattr(ext, "state", None)
            if ext is self or not callable(fn):
                continue
            try:  # one module's unsavable state must not cost the user the whole project
                st = fn()
                json.dumps(st, allow_nan=False)
            except Exception:  # noqa: BLE001
                skipped.append(name)
                continue
            ext_state[name] = st
        view["extensions"] = ext_state
        if skipped:
            self.window.statusBar().showMessage(f"Not saved in the project (not plain JSON): {', '.join(skipped)}",
                                                10000)
        return view

    def save(self) -> bool:
        """File › Save Project: to the current project file, else asks for one. True when saved."""
        if self.path is None:
            return self.save_as()
        return self.save_to(self.path)

    def save_as(self) -> bool:
        """File › Save Project As…"""
        if self.session.series is None:
            self.window.show_error("Save project", "Open a series first.")
            return False
        path = self.get_save_path()
        if not path:
            return False
        return self.save_to(path)

    def save_to(self, path: str | os.PathLike) -> bool:
        """Write the session as a project to ``path`` (the scripting API; no dialogs). True when saved."""
        s = self.session
        series = s.series
        if series is None:
            self.window.show_error("Save project", "Open a series first.")
            return False
        p = Path(path)
        try:
            project = Project.from_series(series, s.landmarks, s.settings, seed=s.seed, view=self.view_state(),
                                          landmark_rules=s.landmark_rules)
            if s.resolution is not None:
                project.resolution, project.aggregate = s.resolution
            save_project(p, project)
        except (OSError, ValueError) as e:
            msg = f"{p}: {e.strerror or e}" if isinstance(e, OSError) else str(e)
            self.window.show_error("Cannot save the project", msg)
            self.projectFailed.emit(msg)
            return False
        self.path = p.resolve()
        self._extra_dirty = False
        s.mark_clean()
        self._remember(self.path)
        self.update_title()
        self.window.statusBar().showMessage(
            f"Saved project {self.path} (private: it holds your landmark positions)", 8000)
        self.projectSaved.emit(str(self.path))
        return True

    def _ask_save_path(self) -> str | None:
        s = self.session.series
        if self.path is not None:
            start = str(self.path)
        else:
            stem = Path(s.source.path).stem if s is not None and s.source is not None else "project"
            folder = Path(s.source.path).resolve().parent if s is not None and s.source is not None else Path.home()
            start = str(folder / f"{stem}{PROJECT_SUFFIX}")
        path, _ = QFileDialog.getSaveFileName(self.window, "Save project (private: holds your landmarks)", start,
                                              f"lmdk projects (*{PROJECT_SUFFIX});;All files (*)")
        if not path:
            return None
        if not path.endswith(PROJECT_SUFFIX):
            path = path[: -len(".json")] if path.endswith(".json") else path
            path += PROJECT_SUFFIX
        return path

    # ----------------------------------------------------------------------------------- opening
    def open_dialog(self) -> None:
        """File › Open Project…"""
        if not self._guards_allow():
            return
        path = self.get_open_path()
        if path:
            self.open_project_async(path)

    def _guards_allow(self) -> bool:
        return all(g() for g in list(self.window.replace_guards))

    def _ask_open_path(self) -> str | None:
        start = str(self.path.parent) if self.path is not None else (
            read_setting(self._settings, "lastProjectDir", "", str) or str(Path.home()))
        path, _ = QFileDialog.getOpenFileName(self.window, "Open project", start,
                                              f"lmdk projects (*{PROJECT_SUFFIX});;JSON (*.json);;All files (*)")
        return path or None

    def _read(self, path: str | os.PathLike) -> tuple[Project, Path] | None:
        """Read the project and find its data (asking when it moved); None (reported) when that fails."""
        p = Path(path)
        try:
            project = load_project(p)
        except LoadError as e:
            self._fail("Cannot open the project", str(e))
            return None
        data = resolve_data_path(project, p)
        if data is None:
            picked = self.locate_data(project, p)
            if not picked:
                self.window.statusBar().showMessage("Project not opened: its data file was not found.", 8000)
                return None
            data = Path(picked)
        return project, data

    def open_project(self, path: str | os.PathLike) -> bool:
        """Open a project now (blocking load; the scripting API, no replace guards). True when opened."""
        got = self._read(path)
        if got is None:
            return False
        project, data = got
        try:
            series = load_series(data, **project.load_options())
        except LoadError as e:
            self._fail("Cannot open the project's data", str(e))
            return False
        return self._finish(project, Path(path), data, series)

    def open_project_async(self, path: str | os.PathLike) -> None:
        """Open a project with the data loaded on a worker (menus): ``projectOpened`` or ``projectFailed``
        follows."""
        got = self._read(path)
        if got is None:
            return
        project, data = got
        if self._loader is None:
            self._loader = LatestOnlyRunner("project-loader", self, finished=self._on_loaded,
                                            failed=self._on_load_failed)
        self._pending = (project, Path(path), data)
        self.window.statusBar().showMessage(f"Loading {data}…")
        self._loader.submit(load_job, str(data), project.load_options())

    def _on_loaded(self, _gen: int, series: Series) -> None:
        if self._pending is None:
            return
        project, path, data = self._pending
        self._pending = None
        self.window.statusBar().clearMessage()
        self._finish(project, path, data, series)

    def _on_load_failed(self, _gen: int, message: str) -> None:
        self._pending = None
        self.window.statusBar().clearMessage()
        msg = message.split(": ", 1)[1] if message.startswith(("LoadError: ", "ProjectError: ")) else message
        self._fail("Cannot open the project's data", msg)

    def _fail(self, title: str, message: str) -> None:
        self.window.show_error(title, message)
        self.projectFailed.emit(message)

    def _finish(self, project: Project, path: Path, data: Path, series: Series) -> bool:
        """Check the data, decide the landmarks, and make the project the window's session."""
        rows = np.asarray(project.landmarks, dtype=np.int64)
        warnings = check_data(project, series)
        if warnings:
            by_time, _missing = landmarks_by_time(project, series)
            rows_ok = rows.size == 0 or int(rows[-1]) < series.n
            choice = self.ask_data_changed(warnings, int(by_time.size), int(rows.size), rows_ok)
            if choice == "by_time":
                rows = by_time
            elif choice == "rows" and rows_ok:
                pass
            elif choice == "none":
                rows = np.zeros(0, dtype=np.int64)
            else:
                self.window.statusBar().showMessage("Project not opened.", 8000)
                return False
        s = self.session
        self._opening = True
        try:
            s.set_series(series, landmarks=rows, settings=project.settings, seed=project.seed,
                         landmark_rules=frozenset(project.landmark_rules) if rows.size else frozenset())
            s.set_resolution(project.resolution, project.aggregate)
        except ValueError as e:
            self._fail("Cannot open the project", f"{path.name}: {e}")
            return False
        finally:
            self._opening = False
        self._restore_view(project.view, series)
        self.path = path.resolve()
        moved = Path(os.path.abspath(data)) != Path(project.input_path)
        self._extra_dirty = moved or bool(warnings)  # saving again records the new place / state
        s.mark_clean()
        self._remember(self.path)
        self.update_title()
        note = f" The data was found at {data}; save the project to remember it." if moved else ""
        self.window.statusBar().showMessage(f"Opened project {self.path}.{note}", 10000)
        self.projectOpened.emit(str(self.path))
        return True

    def _restore_view(self, view: dict, series: Series) -> None:
        s = self.session
        vis = view.get("visible_schemes")
        if isinstance(vis, list):
            for scheme in ALL_SCHEMES:
                s.set_scheme_visible(scheme, scheme in vis)
        runs = view.get("runs")
        if isinstance(runs, int) and not isinstance(runs, bool) and runs > 0:
            s.set_runs(runs)
        xr = view.get("x_range")
        if isinstance(xr, list) and len(xr) == 2 and all(isinstance(v, int | float) for v in xr) and xr[0] < xr[1]:
            self.window.series_plot.vb.setXRange(float(xr[0]), float(xr[1]), padding=0)
        exts = view.get("extensions")
        if isinstance(exts, dict):
            problems = []
            for name, ext in getattr(self.window, "extensions", {}).items():
                fn = getattr(ext, "restore", None)
                if ext is self or not callable(fn) or name not in exts:
                    continue
                try:
                    fn(exts[name])
                except Exception as e:  # noqa: BLE001 - one module's bad state must not stop the project
                    problems.append(f"{name}: {type(e).__name__}: {e}")
            if problems:
                self.window.show_error("Part of the project view was not restored", "\n".join(problems))

    def _locate_data(self, project: Project, project_path: Path) -> str | None:
        name = Path(project.input_path).name
        QMessageBox.information(self.window, "Data file moved",
                                f"The project's data file {name} is not at {project.input_path} any more "
                                "(nor next to the project). Please show where it is now.")
        path, _ = QFileDialog.getOpenFileName(self.window, f"Where is {name}?", str(project_path.parent),
                                              "Time series (*.csv *.tsv *.txt *.xlsx *.gpx *.parquet);;All files (*)")
        return path or None

    def data_changed_box(self, warnings: list[str], matched: int, saved: int, rows_ok: bool
                         ) -> tuple[QMessageBox, dict]:
        """The warning shown before the landmarks of a project are applied to changed data, and its
        buttons → answers (built here so it can be looked at without running it)."""
        box = QMessageBox(QMessageBox.Icon.Warning, "The data file has changed",
                          "The data does not match the project:", QMessageBox.StandardButton.NoButton,
                          self.window)
        box.setObjectName("dataChangedBox")
        box.setInformativeText("\n".join(f"• {w}" for w in warnings)
                               + "\n\nHow should the saved landmarks be applied?")
        by_time = box.addButton(f"Re-attach {matched} of {saved} by timestamp", QMessageBox.ButtonRole.AcceptRole)
        by_time.setToolTip("each saved landmark goes to the event with its saved timestamp, wherever it is now")
        keep = box.addButton("Keep row numbers", QMessageBox.ButtonRole.AcceptRole)
        keep.setEnabled(rows_ok)
        keep.setToolTip("the same row positions as saved" if rows_ok else "some saved rows are past the end")
        none = box.addButton("No landmarks", QMessageBox.ButtonRole.AcceptRole)
        none.setToolTip("open the data and settings without the saved landmarks")
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(by_time)
        return box, {by_time: "by_time", keep: "rows", none: "none", cancel: "cancel"}

    def _ask_data_changed(self, warnings: list[str], matched: int, saved: int, rows_ok: bool) -> str:
        box, answers = self.data_changed_box(warnings, matched, saved, rows_ok)
        box.exec()
        return answers.get(box.clickedButton(), "cancel")

    # ------------------------------------------------------------------------------------ recent
    def recent_projects(self) -> list[str]:
        return read_setting(self._settings, "recentProjects", [], list)

    def _remember(self, path: Path) -> None:
        p = str(path)
        recent = [r for r in self.recent_projects() if r != p]
        self._settings.setValue("recentProjects", [p, *recent][:MAX_RECENT_PROJECTS])
        self._settings.setValue("lastProjectDir", str(path.parent))

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        files = self.recent_projects()
        if not files:
            a = self.recent_menu.addAction("(no recent projects)")
            a.setEnabled(False)
            return
        for f in files:
            a = self.recent_menu.addAction(f)
            a.setEnabled(Path(f).is_file())
            a.triggered.connect(lambda _=False, f=f: self._open_recent(f))

    def _open_recent(self, path: str) -> None:
        if self._guards_allow():
            self.open_project_async(path)

    # ---------------------------------------------------------------------- drops, and closing
    def eventFilter(self, obj, ev) -> bool:  # noqa: N802 - Qt naming
        if obj is self.window and ev.type() == QEvent.Type.Drop and ev.mimeData().hasUrls():
            # a dropped project file opens as a project (the window would offer to import it as a series)
            for u in ev.mimeData().urls():
                local = u.toLocalFile() if u.isLocalFile() else ""
                if local.endswith(PROJECT_SUFFIX):
                    ev.acceptProposedAction()
                    QTimer.singleShot(0, lambda p=local: self._open_recent(p))
                    return True
        return False

    def _stop_loader(self) -> None:
        if self._loader is not None:
            self._loader.shutdown(1.0)
            self._loader = None


def install(window) -> ProjectUI:
    return ProjectUI(window)
