"""The "Compare" tab: every scheme's error for 0–100 % landmarks on the user's own data (issue 8).

The thesis compares its schemes in §5.2.1 (Figure 5.1) by the mean absolute error for 0, 20, …, 100 %
landmarks, averaged over 100 runs. This tab runs the same experiment
(:func:`lmdk_gui.core.analysis.evaluation.evaluate`) on the session's series and privacy settings, copied when the
user presses Run, on a worker thread with a progress bar and Cancel. The session keeps working meanwhile:
edits, previews and exports are not blocked, and a later edit does not change a running comparison (the
status line says when the shown result no longer matches the session).

Landmark sets come from a suggestion rule swept to each percentage (thesis §5.1.3: thresholds for HUE,
stay points for T-drive, contact lists for Copenhagen) or from a synthetic placement. The chart is the
shared :class:`~lmdk_gui.ui.views.evalplot.EvaluationChart` (also behind ``lmdk evaluate --plot``); Save PNG and
Save CSV write what is shown.

"Errors: denoised" (issue 12) makes the next Run also denoise every run's release (``evaluate(denoise=True)``,
the same denoiser as the preview and the export; slower: each release is then built); the chart and the
table show the denoised errors, the CSV both. "raw" (the default: the thesis' experiment) shows the raw
errors; switching shows whichever the result holds.

The table's last row is the yardstick (issue 44): the error of publishing one constant at every event
(``EvaluationResult.constant_error``); a cell not clearly below it (:func:`~lmdk_gui.core.analysis.advice.informative`)
is greyed.
"""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import signals_blocked

from ...core.analysis import advice
from ...core.analysis.evaluation import (
    DEFAULT_PERCENTAGES,
    DEFAULT_RUNS,
    PLACEMENTS,
    THOUSANDS,
    EvaluationResult,
    evaluate,
    fmt_number,
    parse_percentages,
)
from ...core.analysis.suggestions import RULES
from ...core.kernel.settings import SCHEME_LABELS
from ...core.publish.guard import OutputRefused, check_output
from ..views.evalplot import SCALES, EvaluationChart
from ..views.tables import FittedTable
from ..views.theme import SCHEME_COLORS
from ..window.runner import WorkerJob
from ..window.session import Snapshot

#: landmark sources for each kind: (key, label, placement, rule, vary, fixed rule parameters, tooltip)
_RULE_SOURCES = {
    "numeric": [
        ("threshold-below", "Threshold: below", None, "threshold", "below", {},
         "Landmarks are the events below a threshold, swept to each percentage (thesis: HUE energy)"),
        ("threshold-above", "Threshold: above", None, "threshold", "above", {},
         "Landmarks are the events above a threshold, swept to each percentage"),
        ("changepoints", "Change points", None, "changepoints", None, {},
         "Landmarks are the first events after mean shifts; the penalty is swept to each percentage"),
    ],
    "location": [
        ("stay-distance", "Stay points: sweep Δl", None, "stay", "distance_m", {"duration_min": 30.0},
         "Stay points (Li et al. 2008) with Δt = 30 min and Δl swept to each percentage (thesis: T-drive)"),
        ("stay-duration", "Stay points: sweep Δt", None, "stay", "duration_min", {"distance_m": 50.0},
         "Stay points with Δl = 50 m (bus-stop scale) and Δt swept to each percentage"),
    ],
    "categorical": [
        ("category", "Category lists", None, "category", None, {},
         "Landmarks are the events whose category is in a list grown to each percentage (thesis: "
         "Copenhagen contacts)"),
    ],
}
_PLACEMENT_SOURCES = [(f"placement-{p}", f"Placement: {p}", p, None, None, {},
                       f"Synthetic {p} landmark placement (thesis §5.1.3), seeded; the sets nest as the "
                       "percentage grows") for p in PLACEMENTS]


def compact_mean_std(m: float, s: float) -> str:
    """Short cells for the table: 0.924 ± 0.0051, 8 750 ± 99, 84.1k ± 1.2k, 1.2M ± 40k style."""
    if not math.isfinite(m):
        return "no release"
    div, suffix = next(((d, x) for d, x in ((1e9, "G"), (1e6, "M"), (1e3, "k")) if abs(m) >= 10 * d), (1.0, ""))
    # (a no-break space after ±: a narrow column wraps the cell before it, "0.999 / ± 0.011")
    return f"{fmt_number(m / div, 3)}{suffix} ±\u00a0{fmt_number(s / div, 2)}{suffix}"


def sources_for_kind(kind: str | None) -> list[tuple]:
    """The landmark sources offered for a series kind (rules that apply first, then the placements)."""
    return [*(_RULE_SOURCES.get(kind or "", [])), *_PLACEMENT_SOURCES]


class EvaluationJob(WorkerJob):
    """One evaluation on a worker thread, on a snapshot. Signals are emitted on the GUI thread; a cancelled
    evaluation keeps the runs it finished in ``result``."""

    finished = Signal()

    def __init__(self, snapshot: Snapshot, kwargs: dict, parent: QObject | None = None) -> None:
        super().__init__("comparison", 1, parent)
        self.snapshot = snapshot
        self.kwargs = kwargs
        self.result: EvaluationResult | None = None

    def work(self, progress, should_cancel) -> EvaluationResult:
        snap = self.snapshot
        return evaluate(snap.series, snap.settings, progress=progress, should_cancel=should_cancel, **self.kwargs)

    def expected_error(self, exc: Exception) -> str | None:
        return str(exc) if isinstance(exc, ValueError) else None

    def was_cancelled(self, result: EvaluationResult) -> bool:
        return bool(result.cancelled)

    def _emit_finished(self) -> None:
        self.finished.emit()


class CompareTab(QWidget):
    """The tab. Automation: ``run()``, ``cancel()``, ``save_png(path)``, ``save_csv(path)``, ``result``,
    signals ``evaluationFinished`` / ``evaluationCancelled`` / ``evaluationFailed(str)``."""

    evaluationFinished = Signal()
    evaluationCancelled = Signal()
    evaluationFailed = Signal(str)

    def __init__(self, window) -> None:
        super().__init__()
        self.setObjectName("compareTab")
        self.window_ = window
        self.session = window.session
        self.job: EvaluationJob | None = None
        self.result: EvaluationResult | None = None
        self._result_snapshot: Snapshot | None = None
        self._build()
        self._fill_sources()
        self.session.seriesChanged.connect(self._on_series)
        self.session.settingsChanged.connect(self._update_stale)
        self._update_buttons()

    # ------------------------------------------------------------------------------------- layout
    def _build(self) -> None:
        """The controls on the left (the experiment, Run, the progress, saving), the chart over the table."""
        controls = QWidget()
        controls.setObjectName("compareControls")
        controls.setMaximumWidth(300)
        cl = QVBoxLayout(controls)
        cl.setContentsMargins(8, 8, 8, 8)
        cl.addWidget(self._build_experiment())
        row = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("compareRun")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("compareCancel")
        self.cancel_button.clicked.connect(self.cancel)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        cl.addLayout(row)
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName("compareProgress")
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("%p%")
        cl.addWidget(self.progress_bar)
        self.status = QLabel("")
        self.status.setObjectName("compareStatus")
        self.status.setWordWrap(True)
        cl.addWidget(self.status)

        row2 = QHBoxLayout()
        self.save_png_button = QPushButton("Save PNG…")
        self.save_png_button.setObjectName("compareSavePng")
        self.save_png_button.clicked.connect(lambda: self._save_dialog("png"))
        self.save_csv_button = QPushButton("Save CSV…")
        self.save_csv_button.setObjectName("compareSaveCsv")
        self.save_csv_button.clicked.connect(lambda: self._save_dialog("csv"))
        row2.addWidget(self.save_png_button)
        row2.addWidget(self.save_csv_button)
        cl.addLayout(row2)

        cl.addWidget(self._build_about())
        cl.addStretch(1)
        right = self._build_results()

        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(controls)
        lay.addWidget(right, 1)

    def _build_experiment(self) -> QGroupBox:
        """What is compared: the landmark percentages and how their sets are made, runs, seed, y axis, errors."""
        box = QGroupBox("Experiment")
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.percentages_edit = QLineEdit(", ".join(f"{p:g}" for p in DEFAULT_PERCENTAGES))
        self.percentages_edit.setObjectName("comparePercentages")
        self.percentages_edit.setToolTip("Landmark percentages, separated by commas (0–100)")
        form.addRow("Landmarks (%)", self.percentages_edit)
        self.source_combo = QComboBox()
        self.source_combo.setObjectName("comparePlacement")
        self.source_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.source_combo.setMinimumContentsLength(16)
        self.source_combo.setToolTip("How each percentage's landmark set is made: a suggestion rule swept to "
                                     "the percentage (thesis §5.1.3), or a seeded synthetic placement")
        form.addRow("Sets from", self.source_combo)
        self.runs_spin = QSpinBox()
        self.runs_spin.setObjectName("compareRuns")
        self.runs_spin.setRange(1, 100_000)
        self.runs_spin.setValue(DEFAULT_RUNS)
        self.runs_spin.setToolTip("Runs of the noise to average the error over (the thesis used 100)")
        form.addRow("Runs", self.runs_spin)
        self.seed_spin = QSpinBox()
        self.seed_spin.setObjectName("compareSeed")
        self.seed_spin.setRange(0, 2**31 - 1)
        self.seed_spin.setToolTip("Run r uses noise seed + 1 + r; synthetic placements use the seed itself")
        form.addRow("Seed", self.seed_spin)
        self.scale_combo = QComboBox()
        self.scale_combo.setObjectName("compareScale")
        for s in SCALES:
            self.scale_combo.addItem(s, s)
        self.scale_combo.setToolTip("auto: log when the bars span more than two decades (user-level is "
                                    "often ~n times worse than event-level)")
        self.scale_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.scale_combo.setMinimumContentsLength(10)
        self.scale_combo.currentIndexChanged.connect(self._redraw)
        form.addRow("Y axis", self.scale_combo)
        self.errors_combo = QComboBox()
        self.errors_combo.setObjectName("compareErrors")
        self.errors_combo.addItem("raw (as released)", "raw")
        self.errors_combo.addItem("denoised (post-processing)", "denoised")
        self.errors_combo.setToolTip("Denoised: the error after smoothing each release with its own values and "
                                     "the public settings — what anyone who reads it can reconstruct; no "
                                     "guarantee changes. Computed by the next Run (slower).")
        self.errors_combo.currentIndexChanged.connect(self._on_errors)
        form.addRow("Errors", self.errors_combo)
        return box

    @staticmethod
    def _build_about() -> QLabel:
        """What the experiment is, and that its errors are not for publishing."""
        about = QLabel(
            "The thesis' utility experiment (§5.2.1, Figure 5.1) on the open series and the current privacy "
            "settings, copied when you press Run: you can keep editing meanwhile.<br><br>"
            "<i>The errors are measured against the true data: use them to choose a scheme, do not "
            "publish them.</i><br><br>Denoised errors show what a reader of the release can reconstruct: "
            "the smoothing changes no guarantee, and an adversary can do exactly the same.")
        about.setObjectName("compareAbout")
        about.setWordWrap(True)
        about.setTextFormat(Qt.TextFormat.RichText)
        about.setStyleSheet("color: #444;")
        return about

    def _build_results(self) -> QSplitter:
        """The chart over the table (``self.splitter``)."""
        self.chart = EvaluationChart()
        self.chart.setObjectName("compareChart")
        self.table = FittedTable(0, 0, min_section=48)
        self.table.setObjectName("compareTable")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(True)  # "0.999 ± 0.011" over two lines where its column is too narrow
        small = self.table.font()
        small.setPointSizeF(max(small.pointSizeF() - 0.5, 8.0))
        self.table.setFont(small)
        right = self.splitter = QSplitter(Qt.Orientation.Vertical)
        right.setObjectName("compareSplitter")
        right.addWidget(self.chart)
        right.addWidget(self.table)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 1)
        right.setChildrenCollapsible(False)
        self.table.setMinimumHeight(120)
        self.chart.setMinimumHeight(260)
        return right

    # ------------------------------------------------------------------------------------- sources
    def _fill_sources(self) -> None:
        kind = self.session.series.kind if self.session.series is not None else None
        keep = self.source_combo.currentData()
        keep_key = keep[0] if keep else None
        with signals_blocked(self.source_combo):
            self.source_combo.clear()
            for src in sources_for_kind(kind):
                self.source_combo.addItem(src[1], src)
                self.source_combo.setItemData(self.source_combo.count() - 1, src[6], Qt.ItemDataRole.ToolTipRole)
            keys = [self.source_combo.itemData(i)[0] for i in range(self.source_combo.count())]
            self.source_combo.setCurrentIndex(keys.index(keep_key) if keep_key in keys else 0)

    def select_source(self, key: str) -> None:
        """Choose a landmark source by key (e.g. ``"placement-uniform"``, ``"threshold-below"``)."""
        for i in range(self.source_combo.count()):
            if self.source_combo.itemData(i)[0] == key:
                self.source_combo.setCurrentIndex(i)
                return
        raise ValueError(f"no landmark source {key!r} for this series")

    def _on_series(self) -> None:
        self._fill_sources()
        self._update_stale()

    # ------------------------------------------------------------------------------------ running
    def is_running(self) -> bool:
        return self.job is not None and self.job.is_running()

    def run(self) -> EvaluationJob | None:
        """Start a comparison on a snapshot of the session; returns the job (None when nothing started)."""
        if self.is_running():
            return self.job
        if self.session.series is None:
            self._set_status("Open a series first.", error=True)
            return None
        try:
            pcts = parse_percentages(self.percentages_edit.text())
        except ValueError as e:
            self._set_status(str(e), error=True)
            return None
        self.percentages_edit.setText(", ".join(f"{p:g}" for p in pcts))
        _key, _label, placement, rule, vary, fixed, _tip = self.source_combo.currentData()
        snap = self.session.snapshot()
        kwargs = {"percentages": pcts, "placement": placement, "rule": rule, "vary": vary,
                  "rule_params": dict(fixed), "runs": self.runs_spin.value(), "seed": self.seed_spin.value(),
                  "denoise": self.errors_combo.currentData() == "denoised"}
        job = EvaluationJob(snap, kwargs, self)
        job.progress.connect(self._on_progress)
        job.finished.connect(lambda j=job: self._on_finished(j))
        job.cancelled.connect(lambda j=job: self._on_cancelled(j))
        job.failed.connect(lambda msg, j=job: self._on_failed(j, msg))
        self.job = job
        self.progress_bar.setValue(0)
        self._set_status(f"Comparing the schemes over {self.runs_spin.value()} runs…")
        job.start()
        self._update_buttons()
        return job

    def cancel(self) -> None:
        if self.is_running():
            assert self.job is not None
            self.job.cancel()
            self._set_status("Cancelling…")

    def _on_progress(self, done: int, total: int) -> None:
        self.progress_bar.setValue(int(1000 * done / max(total, 1)))

    def _on_finished(self, job: EvaluationJob) -> None:
        if job is not self.job:
            return
        assert job.result is not None
        self._show(job.result, job.snapshot)
        self.progress_bar.setValue(1000)
        self._set_status(f"Done: {job.result.runs_done} runs in {job.result.elapsed_s:.1f} s.")
        self._update_buttons()
        self.evaluationFinished.emit()

    def _on_cancelled(self, job: EvaluationJob) -> None:
        if job is not self.job:
            return
        res = job.result
        if res is not None and res.runs_done > 0:
            self._show(res, job.snapshot)
            self._set_status(f"Cancelled after {res.runs_done} of {res.runs_requested} runs; showing those.")
        else:
            self._set_status("Cancelled." + (" The previous result is still shown." if self.result else ""))
        self.progress_bar.setValue(0)
        self._update_buttons()
        self.evaluationCancelled.emit()

    def _on_failed(self, job: EvaluationJob, message: str) -> None:
        if job is not self.job:
            return
        self.progress_bar.setValue(0)
        self._set_status(f"Could not compare: {message}", error=True)
        self._update_buttons()
        self.evaluationFailed.emit(message)

    def shutdown(self) -> bool:
        """Cancel a running comparison (the window is closing); always lets the close go on."""
        if self.is_running():
            assert self.job is not None
            self.job.cancel()
            self.job.wait(5)
        return True

    # ----------------------------------------------------------------------------------- showing
    def _show(self, result: EvaluationResult, snapshot: Snapshot) -> None:
        self.result = result
        self._result_snapshot = snapshot
        self._redraw_all()

    def _on_errors(self) -> None:
        self._redraw_all()
        if self.result is not None and not self.result.denoised and self.errors_combo.currentData() == "denoised":
            self._set_status("Press Run to compute the denoised errors (raw errors shown).")

    def shown_result(self) -> EvaluationResult | None:
        """What the chart and the table show: the denoised errors when computed and chosen, else the raw."""
        r = self.result
        if r is not None and r.denoised and self.errors_combo.currentData() == "denoised":
            return r.denoised_result()
        return r

    def _redraw_all(self) -> None:
        self._redraw()
        shown = self.shown_result()
        if shown is not None:
            self._fill_table(shown)

    def _redraw(self) -> None:
        shown = self.shown_result()
        title = None
        if shown is not None and shown is not self.result:
            title = f"{shown.name} · error of the denoised releases, ε = {shown.epsilon:g}"
        self.chart.set_result(shown, scale=self.scale_combo.currentData(), title=title)

    def _fill_table(self, result: EvaluationResult) -> None:
        t = self.table
        cols = ["Landmarks\n(count)", *(SCHEME_LABELS[s] for s in result.schemes)]
        t.clear()
        t.setColumnCount(len(cols))
        t.setRowCount(len(result.sets) + 1)  # the sets, then the constant yardstick
        for j, c in enumerate(cols):
            item = QTableWidgetItem(c if j == 0 else f"{c}\n({result.unit})")
            if j:  # in the scheme's colour, not bold: at 1152 px seven columns share ≈ 420 px
                item.setForeground(QBrush(QColor(*SCHEME_COLORS[result.schemes[j - 1]])))
            t.setHorizontalHeaderItem(j, item)
        for i, s in enumerate(result.sets):
            text = f"{s.target:g}%" if abs(s.percentage - s.target) < 0.05 else \
                f"{s.target:g}% → {s.percentage:.1f}%"
            it = QTableWidgetItem(f"{text}  ({s.count:,})".replace(",", THOUSANDS))
            it.setToolTip(", ".join(f"{k} = {v}" for k, v in s.params.items()))
            t.setItem(i, 0, it)
            for j in range(len(result.schemes)):
                m = float(result.mean[i, j])
                cell = QTableWidgetItem(compact_mean_std(m, float(result.std[i, j])))
                cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                tip = f"{cell.text()}: {int(result.runs[i, j])} runs with a value"
                if not math.isnan(m) and not advice.informative(m, result.constant_error):
                    cell.setForeground(QBrush(QColor(150, 150, 150)))
                    tip += f"; no better than publishing one constant ({advice.UNINFORMATIVE_HELP})"
                cell.setToolTip(tip)
                t.setItem(i, j + 1, cell)
        self._fill_constant_row(result)
        t.fit_columns()  # (and the rows' heights: its cells wrap)
        self._fit_table()

    def _fill_constant_row(self, result: EvaluationResult) -> None:
        """The last row: the error of publishing one constant (the same at every percentage), greyed italics."""
        t, row = self.table, len(result.sets)
        italic = QFont()
        italic.setItalic(True)
        tip = result.constant_line() + " (computed on the true data; never published)"
        label = {"numeric": "One constant (median)", "location": "One constant (median point)",
                 "categorical": "One constant (mode)"}[result.kind]
        for j in range(len(result.schemes) + 1):
            text = label if j == 0 else fmt_number(result.constant_error)
            item = QTableWidgetItem(text)
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            item.setFont(italic)
            item.setToolTip(tip)
            if j:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            t.setItem(row, j, item)

    def _fit_table(self) -> None:
        """Show every row without scrolling when that costs at most 230 px (the chart keeps ≥ 260 px)."""
        t = self.table
        need = (t.horizontalHeader().sizeHint().height() + t.verticalHeader().length() + 2 * t.frameWidth()
                + 2)
        t.setMinimumHeight(max(120, min(need, 230)))

    def _update_stale(self) -> None:
        snap = self._result_snapshot
        if snap is None or self.is_running():
            return
        # the session's Denoise setting does not enter a comparison (its own "Errors" choice does)
        if self.session.series is not snap.series or \
                self.session.settings.with_(denoise=snap.settings.denoise) != snap.settings:
            self._set_status("The series or the privacy settings changed since this comparison; press Run to "
                             "update it.")

    def _set_status(self, text: str, *, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #c00000;" if error else "")

    def _update_buttons(self) -> None:
        running = self.is_running()
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        has = self.result is not None
        self.save_png_button.setEnabled(has)
        self.save_csv_button.setEnabled(has)

    # ------------------------------------------------------------------------------------- saving
    def save_png(self, path: str | Path) -> Path:
        if self.result is None:
            raise RuntimeError("nothing to save yet: run a comparison first")
        return self.chart.save_png(path)

    def save_csv(self, path: str | Path) -> Path:
        if self.result is None:
            raise RuntimeError("nothing to save yet: run a comparison first")
        self.result.write_csv(path)
        return Path(path)

    def ask_save_path(self, what: str, suggested: str) -> str:
        """The file dialog (tests replace this hook)."""
        filt = "PNG image (*.png)" if what == "png" else "CSV file (*.csv)"
        path, _ = QFileDialog.getSaveFileName(self, f"Save the comparison as {what.upper()}", suggested, filt)
        return path

    def _save_dialog(self, what: str) -> None:
        if self.result is None:
            return
        name = f"{self.result.name}_comparison.{what}"
        start = str(Path.home() / name)
        path = self.ask_save_path(what, start)
        if not path:
            return
        series = self.session.series
        try:
            # the one output guard: the dialog has asked about replacing, but never the data file (issue 42)
            check_output(path, (series.source.path if series is not None and series.source else None,),
                         force=True, what=what.upper(), input_word="data file")
            if what == "png":
                self.save_png(path)
            else:
                self.save_csv(path)
        except OSError as e:
            self.window_.show_error("Save failed", f"Could not write {path}: {e.strerror or e}")
            return
        except OutputRefused as e:
            self.window_.show_error("Save failed", str(e))
            return
        self._set_status(f"Saved {path}")

    # ------------------------------------------------------------------------------ project state
    def state(self) -> dict:
        src = self.source_combo.currentData()
        return {"percentages": self.percentages_edit.text(), "source": src[0] if src else None,
                "runs": self.runs_spin.value(), "seed": self.seed_spin.value(),
                "scale": self.scale_combo.currentData()}

    def restore(self, d: dict) -> None:
        if not isinstance(d, dict):
            return
        if isinstance(d.get("percentages"), str):
            self.percentages_edit.setText(d["percentages"])
        if isinstance(d.get("source"), str):
            try:
                self.select_source(d["source"])
            except ValueError:
                pass
        for key, spin in (("runs", self.runs_spin), ("seed", self.seed_spin)):
            v = d.get(key)
            if isinstance(v, int) and not isinstance(v, bool):
                spin.setValue(v)
        if d.get("scale") in SCALES:
            self.scale_combo.setCurrentIndex(SCALES.index(d["scale"]))


def install(window) -> CompareTab:
    """Add the "Compare" tab to the main window."""
    tab = CompareTab(window)
    window.tabs.addTab(tab, "Compare")
    window.tabs.setTabToolTip(window.tabs.indexOf(tab), "Every scheme's error for 0–100 % landmarks "
                                                        "(thesis §5.2.1, Figure 5.1)")
    window.close_guards.append(tab.shutdown)
    return tab


# keep RULES referenced for readers: the sources above name rules from this registry
assert all(src[3] in RULES for srcs in _RULE_SOURCES.values() for src in srcs)
