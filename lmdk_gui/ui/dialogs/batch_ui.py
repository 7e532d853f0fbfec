"""Many persons in the app (issue 16): switching person, and File › Export all persons….

A series read from a long table (``source.columns.id_col``, chosen in the import dialog) is one person's. The status
bar then shows a searchable **Person** chooser (ids with their row counts, read by
:func:`~lmdk_gui.core.data.loader.person_ids`); picking another id reloads the file for that person with the same
column options (on a worker) and keeps the privacy settings, shown schemes and dummies. Landmarks are per
person: the window's replace guards ask about unsaved ones first, then they are cleared and the status bar
says so (:attr:`BatchUI.last_note`).

File › Export all persons… (``exportAllAction``) runs :func:`lmdk_gui.core.publish.batch.run_batch` — what
``lmdk batch`` runs — on a worker thread (:class:`BatchJob`) with the session's privacy settings and column
options; each person's landmarks come from a suggestion rule or a landmark file (the landmarks on screen are
one person's). Dask starts inside the worker (seconds), so the window never waits for it; a progress dialog
shows persons done / total and rows/s with Cancel; the manifest's summary comes at the end.

Automation API: ``window.extensions["batch_ui"]`` is a :class:`BatchUI` with ``switch_person(id)``,
``export_all(outdir, **options) -> BatchJob`` and the replaceable hooks ``ask_export_all`` (runs the dialog),
``get_folder``, ``get_landmark_file``, ``ask_categories_from_data``, ``show_summary``, ``open_folder`` and
``confirm_cancel_batch``.

Categorical tables (DESIGN §3): every person's sidecar publishes one list. Without a public list the dialog
asks, as the export dialog does, whether to publish the table's own list (the union of every person's labels:
``categories_from_data``); with one, a box maps labels it lacks to ``other`` (``map_unlisted_to``), else such a
label stops the whole run (all persons or none). ``export_all(..., categories_from_data=True)`` is the
automation API's answer.
"""

from __future__ import annotations

import html
import logging
import math
import os
import threading
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...core.analysis import suggestions as sugg
from ...core.data.loader import person_ids
from ...core.data.project import ColumnChoice
from ...core.data.series import LoadError, Series
from ...core.kernel.dummies import DummySettings
from ...core.kernel.settings import LANDMARK_SCHEMES, SCHEME_LABELS, PrivacySettings, categories_from_data
from ...core.publish.batch import (
    BatchError,
    BatchOptions,
    BatchProgress,
    BatchSummary,
    Cancelled,
    check_outdir,
    run_batch,
)
from ...core.publish.batch_base import _COLUMN_OPTIONS
from ..views.plots import load_for_view
from ..window.extensions import WindowPart
from ..window.runner import LatestOnlyRunner, WorkerJob
from .common import (
    accept_buttons,
    ask_publish_categories,
    ask_yes_no,
    categories_question,
    deleted_after,
    path_row,
    warning_label,
)
from .person_chooser import PersonChooser, signals_blocked

_HEADLESS_PLATFORMS = ("offscreen", "minimal")  # no one to answer a question there
#: the public category the dialog's "map labels not in the list" box maps such labels to (--map-unlisted-to)
UNLISTED_CATEGORY = "other"
_ERROR = "color: #b00020;"
_NOTE = "color: #555;"
_PHASES = {
    "starting": "Starting the Dask workers (a few seconds)…",
    "checksums": "Reading the input's checksum…",
    "counting": "Counting each person's rows…",
    "releasing": "Releasing persons…",
    "manifest": "Writing the manifest…",
    "done": "Done.",
}


# The core words its refusals for the command; the dialog's boxes for the same options.
_APP_WORDS = (("pass --resume to finish it or --force to start over", "tick Resume to finish it or Start over to "
               "replace it"), ("pass --force to write into it", "tick Start over to write into it"),
              ("--resume and --force exclude each other", "Resume and Start over exclude each other"),
              ("give the public list with --categories a,b,c or accept this with --categories-from-data",
               "give the public category list in the settings, or answer Yes to publishing the data's list"),
              ("give public bounds (--bounds LO HI)", "type public bounds in the settings"),
              ("add them to --categories, or map them to one public category with --map-unlisted-to other",
               "add them to the public category list in the settings, or tick 'map labels not in the list to "
               f"{UNLISTED_CATEGORY}'"))


def in_app_words(message: str) -> str:
    for cmd, app in _APP_WORDS:
        message = message.replace(cmd, app)
    return message


def person_of(series: Series | None) -> tuple[str, str, str] | None:
    """``(path, id column, person id)`` of a series read for one person of a long table, else None."""
    src = series.source if series is not None else None
    if src is None or src.columns.id_col is None or src.columns.person_id is None:
        return None
    return src.path, src.columns.id_col, src.columns.person_id


def load_options(series: Series, settings: PrivacySettings) -> dict[str, Any]:
    """The ``load_series`` options that read ``series`` (as a project saves them)."""
    opts = {k: v for k, v in ColumnChoice.from_series(series).to_dict().items() if v is not None}
    if settings.categories is not None:
        opts["categories"] = list(settings.categories)
    return opts


def batch_options(series: Series, settings: PrivacySettings, dummies: DummySettings | None, *,
                  scheme: str, format: str = "csv", rule: str | None = None,
                  rule_params: Mapping[str, Any] | None = None, landmarks_file: str | None = None,
                  workers: int | None = None, resume: bool = False, force: bool = False,
                  categories_from_data: bool = False, map_unlisted_to: str | None = None) -> BatchOptions:
    """What ``lmdk batch`` would get for this session: its column options, privacy settings and dummies.
    ``categories_from_data`` / ``map_unlisted_to``: as ``--categories-from-data`` / ``--map-unlisted-to``
    (a categorical table without a public list is refused without the first)."""
    where = person_of(series)
    if where is None:
        raise BatchError("this series was not read from a table with a person id column")
    cc = ColumnChoice.from_series(series)
    # the person's own rows are the batch's to choose (by id_col); the rest reads every person alike
    columns = ColumnChoice.of(**{k: getattr(cc, k) for k in _COLUMN_OPTIONS})
    return BatchOptions(
        id_col=where[1], scheme=scheme, settings=settings, columns=columns,
        landmarks_file=landmarks_file or None, rule=rule, rule_params=dict(rule_params or {}), dummies=dummies,
        format=format, resume=resume, force=force, workers=workers, categories_from_data=categories_from_data,
        map_unlisted_to=map_unlisted_to)


def _load_job(path: str, options: dict, *, should_cancel=None) -> Series | LoadError:
    try:
        return load_for_view(path, options)  # on the loader's thread, with the series line's pyramid
    except LoadError as exc:
        return exc


def _ids_job(path: str, id_col: str, *, should_cancel=None) -> tuple[tuple[str, int], ...]:
    return person_ids(path, id_col)


# ------------------------------------------------------------------------------------------- the job
class BatchJob(WorkerJob):
    """One :func:`run_batch` on a worker thread. ``progress(done, total)`` as persons finish; :attr:`latest`
    is the newest :class:`BatchProgress` (phase, rows/s, dashboard); ``finished(object)`` carries the
    :class:`BatchSummary`; ``cancel()`` stops the run after the persons being released (complete files only)."""

    finished = Signal(object)
    cancel_exceptions = (Cancelled,)
    failure_note = "; every person released so far is complete (Resume finishes the run)"

    def __init__(self, input: str, outdir: str | Path, options: BatchOptions, client=None, parent=None) -> None:
        super().__init__("batch export", 0, parent)
        self.input = input
        self.outdir = Path(outdir)
        self.options = options
        self.client = client
        self._latest = BatchProgress("starting")
        self._latest_lock = threading.Lock()

    @property
    def latest(self) -> BatchProgress:
        with self._latest_lock:
            return self._latest

    def work(self, progress, should_cancel):
        def report(p: BatchProgress) -> None:
            with self._latest_lock:
                self._latest = p
            progress(p.persons_done, p.persons_total)

        return run_batch(self.input, self.outdir, self.options, progress=report, should_cancel=should_cancel,
                         client=self.client)

    def expected_error(self, exc: Exception) -> str | None:
        if isinstance(exc, BatchError):
            return in_app_words(str(exc))
        if isinstance(exc, OSError):
            return f"could not write in {self.outdir}: {exc.strerror or exc}"
        return None

    def _emit_finished(self) -> None:
        self.finished.emit(self.result)


# ---------------------------------------------------------------------------------------- the dialog
class ExportAllDialog(QDialog):
    """Folder, format, scheme, landmarks per person (rule + parameters, or a file), workers, resume."""

    def __init__(self, series: Series, settings: PrivacySettings, dummies: DummySettings | None, start_dir: str,
                 n_persons: int | None, parent: QWidget | None = None, *,
                 get_folder: Callable[[str], str] | None = None,
                 get_landmark_file: Callable[[str], str] | None = None,
                 ask_categories_from_data: Callable[[str], bool] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("exportAllDialog")
        self.setWindowTitle("Export all persons")
        self.series = series
        self.settings = settings
        self.dummies = dummies
        self.get_folder = get_folder or self._pick_folder
        self.get_landmark_file = get_landmark_file or self._pick_file
        self.ask_categories_from_data = ask_categories_from_data or partial(ask_publish_categories, self)
        #: the user's answer to the data's-own-category-list question (asked on Export all)
        self.categories_from_data = False
        path, id_col, pid = person_of(series) or ("", "", "")
        lay = QVBoxLayout(self)
        persons = f"{n_persons:,} persons" if n_persons else "every person"
        bounds = (f"public bounds {settings.bounds[0]:g} to {settings.bounds[1]:g}" if settings.bounds
                  else "no public bounds")
        intro = QLabel(f"Releases {persons} of <b>{html.escape(Path(path).name)}</b> (id column "
                       f"<b>{html.escape(id_col)}</b>) one by one, each exactly as <i>Export protected CSV</i> "
                       f"would release them alone, with this session's settings: ε = {settings.epsilon:g}, "
                       f"sensitivity Δ = {settings.sensitivity:g}, {bounds}"
                       + (", dummy landmarks on" if dummies is not None else "") + ".")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        lay.addWidget(self._make_output(start_dir))
        lay.addWidget(self._make_landmarks(pid))
        self.map_unlisted = QCheckBox(f"Map labels not in the public category list to '{UNLISTED_CATEGORY}' "
                                      "(added to the list); otherwise such a label stops the whole run")
        self.map_unlisted.setObjectName("exportAllMapUnlisted")
        self.map_unlisted.setToolTip("Every person is released or none: leaving out the persons who hold an "
                                     "unlisted label would tell who holds one")
        self._map_offered = series.kind == "categorical" and settings.categories is not None
        lay.addWidget(self.map_unlisted)
        self.map_unlisted.setVisible(self._map_offered)
        lay.addWidget(self._make_run())
        self.error = QLabel()
        self.error.setObjectName("exportAllError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet(_ERROR)
        self.error.hide()
        lay.addWidget(self.error)
        buttons, self.start_button = accept_buttons(self, "Export all", self.try_accept)
        self.start_button.setObjectName("exportAllStart")
        lay.addWidget(buttons)
        self.resize(640, self.sizeHint().height())

    # --------------------------------------------------------------------------------------- layout
    def _make_output(self, start_dir: str) -> QGroupBox:
        box = QGroupBox("Output")
        form = QFormLayout(box)
        self.folder = QLineEdit(start_dir)
        self.folder.setObjectName("exportAllFolder")
        self.folder.setPlaceholderText("an empty folder, or one holding an earlier run to resume")
        form.addRow("Folder", path_row(self.folder,
                                       lambda: self._set_text(self.folder, self.get_folder(self.folder.text()))))
        self.format = QComboBox()
        self.format.setObjectName("exportAllFormat")
        self.format.addItem("CSV: <id>.csv + <id>.csv.json per person", "csv")
        self.format.addItem("Parquet: one dataset partitioned by id", "parquet")
        form.addRow("Format", self.format)
        self.scheme = QComboBox()
        self.scheme.setObjectName("exportAllScheme")
        for s in LANDMARK_SCHEMES:
            self.scheme.addItem(SCHEME_LABELS[s], s)
        self.scheme.setCurrentIndex(self.scheme.findData("adaptive"))
        form.addRow("Scheme", self.scheme)
        return box

    def _make_landmarks(self, pid: str) -> QGroupBox:
        box = QGroupBox("Landmarks of each person")
        form = QFormLayout(box)
        note = QLabel(f"The landmarks on screen are person {pid}'s only; every person gets their own:")
        note.setWordWrap(True)
        note.setStyleSheet(_NOTE)
        form.addRow(note)
        self.source = QComboBox()
        self.source.setObjectName("exportAllLandmarks")
        for r in sugg.RULES.values():
            if r.supports(self.series.kind):
                self.source.addItem(f"found by a rule: {r.label}", f"rule:{r.name}")
        self.source.addItem("from a landmark file (id + timestamp or row columns)", "file")
        self.source.addItem("none (every event is a regular event)", "none")
        form.addRow("Landmarks", self.source)
        self.rule_help = QLabel()
        self.rule_help.setWordWrap(True)
        self.rule_help.setStyleSheet(_NOTE)
        form.addRow(self.rule_help)
        self.rule_warning = warning_label(f"⚠ {sugg.RULE_WARNING} Each person's sidecar says so.",
                                          "exportAllRuleWarning")
        form.addRow(self.rule_warning)
        self.params_box = QWidget()
        self.params_form = QFormLayout(self.params_box)
        self.params_form.setContentsMargins(0, 0, 0, 0)
        form.addRow(self.params_box)
        self.param_fields: dict[str, tuple[sugg.ParamSpec, QLineEdit]] = {}
        self.file = QLineEdit()
        self.file.setObjectName("exportAllLandmarkFile")
        self.file.setPlaceholderText("CSV with the id column and a 'timestamp' (or 0-based 'row') column")
        self.file_row = path_row(self.file,
                                 lambda: self._set_text(self.file, self.get_landmark_file(self.file.text())))
        form.addRow(self.file_row)
        self.source.currentIndexChanged.connect(self._source_changed)
        self._source_changed()
        return box

    def _make_run(self) -> QGroupBox:
        box = QGroupBox("Run")
        form = QFormLayout(box)
        self.workers = QSpinBox()
        self.workers.setObjectName("exportAllWorkers")
        cpus = os.cpu_count() or 1
        self.workers.setRange(1, max(64, cpus))
        self.workers.setValue(cpus)
        self.workers.setSuffix(" worker processes")
        self.workers.setToolTip("Local Dask worker processes on this machine (listening on 127.0.0.1 only)")
        form.addRow("Parallel", self.workers)
        self.resume = QCheckBox("Resume an interrupted run in this folder (persons already released are kept)")
        self.resume.setObjectName("exportAllResume")
        self.force = QCheckBox("Start over: remove an earlier run's files in this folder")
        self.force.setObjectName("exportAllForce")
        self.resume.toggled.connect(lambda on: on and self.force.setChecked(False))
        self.force.toggled.connect(lambda on: on and self.resume.setChecked(False))
        form.addRow(self.resume)
        form.addRow(self.force)
        private = QLabel("The folder also gets manifest.json, the private record of the run (input checksums, "
                         "each person's landmark count): publish only the per-person files and their .json "
                         "sidecars.")
        private.setWordWrap(True)
        private.setStyleSheet(_NOTE)
        form.addRow(private)
        return box

    @staticmethod
    def _set_text(edit: QLineEdit, text: str | None) -> None:
        if text:
            edit.setText(text)

    def _source_changed(self, *_args: object) -> None:
        what, _, name = str(self.source.currentData()).partition(":")
        self.file_row.setVisible(what == "file")
        self.params_box.setVisible(what == "rule")
        self.rule_help.setVisible(what == "rule")
        self.rule_warning.setVisible(what == "rule")
        while self.params_form.rowCount():
            self.params_form.removeRow(0)
        self.param_fields = {}
        if what != "rule":
            return
        rule = sugg.RULES[name]
        self.rule_help.setText(f"{rule.help} Starting values from person {person_of(self.series)[2]}'s "  # type: ignore[index]
                               "data; the rule runs on each person's own series.")
        try:
            start = sugg.defaults(self.series, rule)
        except ValueError:
            start = {}
        for spec in rule.params:
            edit = QLineEdit()
            edit.setObjectName(f"exportAllParam_{spec.name}")
            v = start.get(spec.name, spec.default)
            if spec.type == "labels":
                edit.setPlaceholderText("labels, comma-separated")
                edit.setText(",".join(map(str, v or ())))
            else:
                edit.setPlaceholderText("empty = not used" if spec.optional else "")
                edit.setText("" if v is None else f"{v:.6g}")
            edit.setToolTip(spec.help)
            label = spec.label + (f" ({spec.unit})" if spec.unit else "")
            self.params_form.addRow(label, edit)
            self.param_fields[spec.name] = (spec, edit)
        self.adjustSize()

    # --------------------------------------------------------------------------------------- values
    def rule_params(self) -> dict[str, Any]:
        """The rule's parameters as typed; ValueError naming the field when one is not a number."""
        out: dict[str, Any] = {}
        for name, (spec, edit) in self.param_fields.items():
            text = edit.text().strip()
            if spec.type == "labels":
                out[name] = [t.strip() for t in text.split(",") if t.strip()]
            elif text:
                try:
                    v = float(text)
                except ValueError:
                    raise ValueError(f"{spec.label}: expected a number, got {text!r}") from None
                if math.isnan(v):
                    raise ValueError(f"{spec.label}: expected a number, got {text!r}")
                out[name] = v
        return out

    def values(self) -> dict[str, Any]:
        """Keyword arguments for :meth:`BatchUI.export_all`."""
        what, _, name = str(self.source.currentData()).partition(":")
        return {"outdir": self.folder.text().strip(), "format": self.format.currentData(),
                "scheme": self.scheme.currentData(), "rule": name if what == "rule" else None,
                "rule_params": self.rule_params() if what == "rule" else {},
                "landmarks_file": self.file.text().strip() if what == "file" else None,
                "workers": self.workers.value(), "resume": self.resume.isChecked(), "force": self.force.isChecked(),
                "categories_from_data": self.categories_from_data,
                "map_unlisted_to": UNLISTED_CATEGORY if self._map_offered and self.map_unlisted.isChecked() else None}

    def check(self) -> str | None:
        """What stops the run from starting (one line), asked of the core; None when it can start."""
        try:
            v = self.values()
        except ValueError as e:
            return str(e)
        if not v["outdir"]:
            return "choose the output folder"
        if v["landmarks_file"] == "":
            return "choose the landmark file"
        if v["landmarks_file"] is not None and not Path(v["landmarks_file"]).is_file():
            return f"the landmark file {v['landmarks_file']} does not exist"
        outdir = v.pop("outdir")
        try:
            check_outdir(person_of(self.series)[0], outdir,  # type: ignore[index]
                         batch_options(self.series, self.settings, self.dummies, **v))
            if v["rule"] is not None:  # the rule's own checks (e.g. threshold needs a bound), on this person
                sugg.apply_rule(self.series, v["rule"], **v["rule_params"])
        except (BatchError, ValueError) as e:
            return in_app_words(str(e))
        return None

    def try_accept(self) -> None:
        problem = self.check()
        if problem is None and not self._confirm_categories():
            problem = ("no public category list: give one in the settings, or answer Yes to publishing the "
                       "data's list")
        if problem is not None:
            self.error.setText(problem)
            self.error.show()
            return
        self.accept()

    def _confirm_categories(self) -> bool:
        """The export dialog's question (``lmdk batch --categories-from-data``), for the whole table."""
        if not categories_from_data(self.series.kind, self.settings):
            return True
        self.categories_from_data = self.ask_categories_from_data(categories_question(None))
        return self.categories_from_data

    def _pick_folder(self, start: str) -> str:
        return QFileDialog.getExistingDirectory(self, "Folder for the releases", start)

    def _pick_file(self, start: str) -> str:
        path, _ = QFileDialog.getOpenFileName(self, "Landmark file", start, "CSV (*.csv *.tsv *.txt);;All files (*)")
        return path


# -------------------------------------------------------------------------------------- progress
class BatchProgressDialog(QDialog):
    """Non-modal: phase, persons done / total, rows/s, the Dask dashboard link, Cancel."""

    def __init__(self, job: BatchJob, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("exportAllProgress")
        self.setWindowTitle("Exporting all persons")
        self.job = job
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(f"Into <b>{job.outdir}</b>"))
        self.phase = QLabel(_PHASES["starting"])
        self.phase.setObjectName("exportAllPhase")
        lay.addWidget(self.phase)
        self.bar = QProgressBar()
        self.bar.setObjectName("exportAllBar")
        self.bar.setRange(0, 0)  # busy until the persons are counted
        self.bar.setFormat("%p %")
        lay.addWidget(self.bar)
        self.detail = QLabel(" ")
        self.detail.setObjectName("exportAllDetail")
        lay.addWidget(self.detail)
        self.dashboard = QLabel()
        self.dashboard.setOpenExternalLinks(True)
        self.dashboard.hide()
        lay.addWidget(self.dashboard)
        row = QHBoxLayout()
        row.addStretch(1)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("exportAllCancel")
        self.cancel_button.setToolTip("Stop after the persons being released; every file written is complete")
        self.cancel_button.clicked.connect(self.cancel)
        row.addWidget(self.cancel_button)
        lay.addLayout(row)
        self.setMinimumWidth(480)
        # The job reports ~4×/s on its thread; the dialog reads the newest report at the same pace.
        self._timer = QTimer(self)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self.refresh)
        self._timer.start()
        job.progress.connect(lambda *_: self.refresh())

    def cancel(self) -> None:
        self.job.cancel()
        self.cancel_button.setEnabled(False)
        self.phase.setText("Cancelling: the persons being released finish, then the workers stop…")

    def refresh(self) -> None:
        p = self.job.latest
        if not self.cancel_button.isEnabled():
            return
        self.phase.setText(_PHASES.get(p.phase, p.phase))
        if p.persons_total:
            self.bar.setRange(0, p.persons_total)
            self.bar.setValue(p.persons_done)
        failed = f", {p.failed:,} failed" if p.failed else ""
        if p.phase in ("releasing", "manifest", "done"):
            self.detail.setText(f"{p.persons_done:,} of {p.persons_total:,} persons done{failed} · "
                                f"{p.rows_done:,} rows, {p.rows_per_s:,.0f} rows/s · {p.elapsed_s:.0f} s")
        if p.dashboard and self.dashboard.isHidden():
            self.dashboard.setText(f'Dask dashboard: <a href="{p.dashboard}">{p.dashboard}</a>')
            self.dashboard.show()

    def done(self, result: int) -> None:  # noqa: D401 - Qt override
        """Closing the dialog (Esc, ×) while the job runs cancels it, as the Cancel button does."""
        if self.job.is_running() and self.cancel_button.isEnabled():
            self.cancel()
            return
        self._timer.stop()
        super().done(result)


# --------------------------------------------------------------------------------------- the feature
class BatchUI(WindowPart):
    """The Person chooser in the status bar and File › Export all persons… (see the module docstring)."""

    personSwitched = Signal(str)
    personsListed = Signal()
    batchFinished = Signal(object)  # BatchSummary

    def __init__(self, window) -> None:
        super().__init__(window)
        self.job: BatchJob | None = None
        self.progress_dialog: BatchProgressDialog | None = None
        self.summary_box: QMessageBox | None = None
        self.last_note = ""
        self._ids_for: tuple[str, str] | None = None
        self._n_persons: int | None = None
        self._pending: str | None = None
        #: replaceable hooks (tests, scripts)
        self.ask_export_all: Callable[[ExportAllDialog], bool] = lambda d: d.exec() == QDialog.DialogCode.Accepted
        self.get_folder: Callable[[str], str] | None = None
        self.get_landmark_file: Callable[[str], str] | None = None
        #: may the releases publish the table's own category list? None = the dialog's Yes/No question
        self.ask_categories_from_data: Callable[[str], bool] | None = None
        self.show_summary: Callable[[BatchSummary], None] = self._show_summary
        self.open_folder: Callable[[Path], None] = lambda p: QDesktopServices.openUrl(QUrl.fromLocalFile(str(p)))
        self.confirm_cancel_batch: Callable[[], bool] = self._confirm_cancel
        self._build_chooser()
        self._build_action()
        self._loader = LatestOnlyRunner("person-load", self, finished=self._on_loaded, failed=self._on_load_failed)
        self._ids = LatestOnlyRunner("person-ids", self, finished=self._on_ids)
        self.session.seriesChanged.connect(self._on_series)
        window.close_guards.append(self._close_guard)
        self._on_series()

    # ------------------------------------------------------------------------------ person chooser
    def _build_chooser(self) -> None:
        self.person_box = QWidget()
        self.person_box.setObjectName("personSwitchBox")
        row = QHBoxLayout(self.person_box)
        row.setContentsMargins(0, 0, 0, 0)
        self.person_label = QLabel("Person:")
        row.addWidget(self.person_label)
        self.chooser = PersonChooser()
        self.chooser.setObjectName("personSwitch")
        self.chooser.setToolTip("Open another person of this file (type to search); the settings are kept, "
                                "the landmarks are per person")
        self.chooser.setMinimumContentsLength(18)
        self.chooser.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.chooser.currentIndexChanged.connect(self._chosen)
        row.addWidget(self.chooser)
        self.window.statusBar().insertPermanentWidget(0, self.person_box)
        self.person_box.hide()

    def _build_action(self) -> None:
        w = self.window
        self.action = w._action("Export &all persons…", "exportAllAction", self.export_all_dialog,
                                tip="Release every person of this file (one id column) with these settings")
        self.switch_action = w._action("S&witch person…", "switchPersonAction", self._focus_chooser,
                                       tip="Open another person of this file, keeping the settings")
        w.file_menu.insertAction(w.quit_action, self.switch_action)
        w.file_menu.insertAction(w.quit_action, self.action)
        w.file_menu.insertSeparator(w.quit_action)

    def _focus_chooser(self) -> None:
        self.chooser.setFocus()
        self.chooser.showPopup()

    def _on_series(self) -> None:
        where = person_of(self.session.series)
        self.person_box.setVisible(where is not None)
        for a in (self.action, self.switch_action):
            a.setEnabled(where is not None and not self.is_running())
        if where is None:
            return
        path, id_col, pid = where
        with signals_blocked(self.chooser):
            self.chooser.select(pid)
        if self._ids_for != (path, id_col):
            self._ids_for = (path, id_col)
            self._n_persons = None
            with signals_blocked(self.chooser):
                self.chooser.set_ids(((pid, self.session.series.n),), pid)
            self._ids.submit(_ids_job, path, id_col)

    def _on_ids(self, generation: int, counts: tuple[tuple[str, int], ...]) -> None:
        where = person_of(self.session.series)
        if not self._ids.is_current(generation) or where is None:
            return
        self._n_persons = len(counts)
        with signals_blocked(self.chooser):
            self.chooser.set_ids(counts, where[2])
        self.person_label.setText(f"Person ({len(counts):,} in file):")
        self.personsListed.emit()

    def _chosen(self, *_args: object) -> None:
        pid = self.chooser.current_id()
        where = person_of(self.session.series)
        if pid and where is not None and pid != where[2]:
            self.switch_person(pid)

    def switch_person(self, pid: str) -> bool:
        """Reload this file for person ``pid`` (on a worker), keeping the settings; False when a replace guard
        (unsaved landmarks) said no. ``personSwitched`` follows once it is shown."""
        series = self.session.series
        where = person_of(series)
        if series is None or where is None:
            return False
        if not self.window._guards_allow(self.window.replace_guards):
            with signals_blocked(self.chooser):
                self.chooser.select(where[2])
            return False
        opts = {**load_options(series, self.session.settings), "person_id": str(pid)}
        self._pending = str(pid)
        self.window.statusBar().showMessage(f"Opening person {pid}…")
        self._loader.submit(_load_job, where[0], opts)
        return True

    def _on_loaded(self, generation: int, result: Series | LoadError) -> None:
        if not self._loader.is_current(generation) or self._pending is None:
            return
        if isinstance(result, LoadError):
            self._on_load_failed(generation, str(result))
            return
        before = person_of(self.session.series)
        n_lm = int(self.session.landmarks.size)
        path, opts = result.source.path, load_options(result, self.session.settings)
        self.window._apply_loaded(result, path, opts, settings=self.session.settings)
        pid, self._pending = self._pending, None
        cleared = (f"; person {before[2]}'s {n_lm} landmark{'s' if n_lm != 1 else ''} were cleared (landmarks "
                   "are per person)") if before and n_lm else ""
        self.last_note = f"Person {pid}: {result.n:,} events, same settings{cleared}"
        self.window.statusBar().showMessage(self.last_note, 20000)
        self.personSwitched.emit(pid)

    def _on_load_failed(self, generation: int, message: str) -> None:
        if not self._loader.is_current(generation):
            return
        self._pending = None
        where = person_of(self.session.series)
        if where is not None:
            with signals_blocked(self.chooser):
                self.chooser.select(where[2])
        msg = message.split(": ", 1)[1] if message.startswith("LoadError: ") else message
        self.window.show_error("Cannot open this person", msg, clear_status=True)

    # --------------------------------------------------------------------------------- export all
    def is_running(self) -> bool:
        """Until its end is shown (the thread itself ends a moment after it reports)."""
        return self.job is not None and self.job.state == "running"

    def export_all_dialog(self) -> None:
        """File › Export all persons…"""
        series = self.session.series
        if person_of(series) is None:
            self.window.show_error("Export all persons", "Open a table with a person / household id column "
                                   "first (File › Open…, then 'Person / household id column').")
            return
        if self.is_running():
            self.window.show_error("Export all persons", "A run is already going; wait for it or cancel it.")
            return
        assert series is not None
        # a new folder next to the input (a run must not land among other files, e.g. the home folder)
        src = Path(person_of(series)[0])  # type: ignore[index]
        start = str(src.resolve().parent / f"{src.stem}-release")
        dlg = ExportAllDialog(series, self.session.settings, self.session.dummies, start, self._n_persons,
                              self.window, get_folder=self.get_folder, get_landmark_file=self.get_landmark_file,
                              ask_categories_from_data=self.ask_categories_from_data)
        with deleted_after(dlg):
            v = dlg.values() if self.ask_export_all(dlg) else None
        if v is not None:
            self.export_all(**v)

    def export_all(self, outdir: str | Path, *, scheme: str, client=None, **options: Any) -> BatchJob:
        """Start the run without dialogs (the automation API); ``options`` as :func:`batch_options`;
        ``client``: an existing ``distributed.Client`` (else local workers start inside the job)."""
        series = self.session.series
        where = person_of(series)
        if series is None or where is None:
            raise RuntimeError("the open series was not read from a table with a person id column")
        if self.is_running():
            raise RuntimeError("an export of all persons is already running")
        opts = batch_options(series, self.session.settings, self.session.dummies, scheme=scheme, **options)
        # The in-process scheduler logs each shuffle's start and end as warnings: noise for a steward.
        logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)
        job = BatchJob(where[0], outdir, opts, client, self)
        self.job = job
        job.finished.connect(self._finished)
        job.failed.connect(self._failed)
        job.cancelled.connect(self._cancelled)
        self.action.setEnabled(False)
        self.progress_dialog = BatchProgressDialog(job, self.window)
        self.progress_dialog.show()
        self.window.statusBar().showMessage(f"Exporting all persons into {outdir}…")
        return job.start()

    def _end(self) -> None:
        self.action.setEnabled(person_of(self.session.series) is not None)
        if self.progress_dialog is not None:
            self.progress_dialog.cancel_button.setEnabled(False)
            self.progress_dialog.close()
            self.progress_dialog = None

    def _finished(self, summary: BatchSummary) -> None:
        self._end()
        self.window.statusBar().showMessage(
            f"Released {summary.released} of {summary.persons} persons into {summary.outdir}", 15000)
        self.show_summary(summary)
        self.batchFinished.emit(summary)

    def _failed(self, message: str) -> None:
        self._end()
        self.window.show_error("Export all persons failed", message, clear_status=True)

    def _cancelled(self) -> None:
        self._end()
        out = self.job.outdir if self.job is not None else ""
        # what to do first, the folder last: a status bar cuts a long path, and the rest with it
        self.window.statusBar().showMessage("Export all persons cancelled: run it again with Resume to finish; "
                                            f"the folder holds complete persons only ({out}).", 20000)

    def _show_summary(self, summary: BatchSummary) -> None:
        self.summary_box = summary_box(summary, self.window, self.open_folder)
        self.summary_box.open()

    # -------------------------------------------------------------------------------------- close
    def _confirm_cancel(self) -> bool:
        if QGuiApplication.platformName() in _HEADLESS_PLATFORMS:
            return True  # nobody to answer (e.g. a script): never hang, cancel (complete files stay)
        return ask_yes_no(self.window, "Export of all persons running",
                          "An export of all persons is still running. Cancel it and close the window? "
                          "(The persons released so far are complete; Resume finishes the run.)")

    def _close_guard(self) -> bool:
        if self.is_running():
            if not self.confirm_cancel_batch():
                return False
            assert self.job is not None
            self.job.cancel()
        if self.job is not None:
            self.job.wait(60)  # running persons finish their atomic files; the workers stop
        for r in (self._loader, self._ids):
            r.shutdown(timeout=0)
        return True


def summary_text(summary: BatchSummary) -> str:
    """The manifest's summary in a sentence or two (the message box's text)."""
    before = f" ({summary.resumed:,} of them released by an earlier run)" if summary.resumed else ""
    failed = f"; <b>{summary.failed:,} failed</b> (see below)" if summary.failed else ""
    missing = (f"; {summary.missing_id_rows:,} rows without an id were skipped" if summary.missing_id_rows else "")
    return (f"Released <b>{summary.released:,} of {summary.persons:,}</b> persons{before}{failed}{missing}, "
            f"{summary.rows:,} rows in {summary.seconds:.1f} s, into<br><b>{html.escape(str(summary.outdir))}</b>.<br><br>"
            f"{summary.manifest.name} there is the private record of the run: publish only the per-person "
            "files and their .json sidecars."
            + (f"<br><br>Note: {html.escape(summary.composition)}." if summary.composition else ""))


def _failure(pid: str, err: str) -> str:
    """One failed person's line (the loader's messages already start with "id <pid>")."""
    return err if err.startswith(f"id {pid}") else f"id {pid}: {err}"


def summary_box(summary: BatchSummary, parent: QWidget, open_folder: Callable[[Path], None]) -> QMessageBox:
    icon = QMessageBox.Icon.Warning if summary.failed else QMessageBox.Icon.Information
    box = QMessageBox(icon, "Export of all persons finished", summary_text(summary), QMessageBox.StandardButton.Ok,
                      parent)
    box.setObjectName("exportAllDoneBox")
    box.setStyleSheet("QLabel#qt_msgbox_label, QLabel#qt_msgbox_informativelabel { min-width: 460px; }")
    if summary.errors:
        shown = [html.escape(_failure(pid, err)) for pid, err in summary.errors[:5]]
        more = f"<br>… and {len(summary.errors) - 5} more" if len(summary.errors) > 5 else ""
        box.setInformativeText("Failed persons:<br>" + "<br>".join(shown) + more)
        box.setDetailedText("\n".join(_failure(pid, err) for pid, err in summary.errors))
    folder = box.addButton("Open folder", QMessageBox.ButtonRole.ActionRole)
    folder.setObjectName("exportAllOpenFolder")
    folder.clicked.connect(lambda: open_folder(summary.outdir))
    return box


def install(window) -> BatchUI:
    """The Person chooser (status bar) and File › Switch person… / Export all persons…."""
    return BatchUI(window)
