"""File › Export protected CSV…: the dialog and the background export job (issue 4).

The job runs :func:`lmdk_gui.core.publish.export.export_release` — the same writer and noise path as ``lmdk export`` —
on a worker thread, on a *snapshot* of the session, so edits made while it runs do not change what is
written. The core writes through a temporary file in the target folder and renames it only when complete,
so cancelling, failing or closing the window never leaves a partial file at the target path.

Dummy landmarks (issue 6): when the snapshot has them on, the job asks the core for them
(``ExportOptions.dummies``): the export draws its *own* selection with fresh randomness (derived from the
export key when the user asks for a reproducible export) — never the preview's — and releases on ``L'``
with ``ε − ε_sel``.

Issue 17: a reproducible export uses a generated secret key (shown, copyable, kept in the private ledger
for "re-export the same release"), never a small seed; Skip/Adaptive say next to the scheme that repeated
values show the landmarks; text cells are neutralised unless the user keeps them verbatim; and an input
released before asks (``ask_repeat_release``, replaceable) after showing the composed ε.

Guidance (issue 14): under the scheme chooser a small table lists, per scheme, the expected error (the R-run
average the session already computed — passed in, or in ``snapshot.extra["average"]``; the dialog never
recomputes it; only when its Denoise box asks for a denoised error the session did not average, it runs the
core's ``compute_average`` for that setting in the background), the share of approximated events (from the preview release), and the check's verdict. The
passing scheme with the lowest expected error (:func:`~lmdk_gui.core.analysis.advice.best_scheme`) is pre-selected,
and a warning (not a refusal) says when the chosen scheme's expected error is no better than publishing a constant.

Issue 44: each expected error shows its spread over the runs (10th–90th percentile; with dummies each run
draws its own, as the export does), and the table's last row is the yardstick, the error of publishing one
constant (:func:`~lmdk_gui.core.analysis.metrics.constant_error`). Only informative schemes (clearly below it) are
advised; when none is, nothing is pre-selected and the dialog says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.analysis import advice
from ...core.analysis.metrics import RunStats, constant_error, spread_text, unit_label
from ...core.engine.pipeline import export_verdicts, precheck
from ...core.engine.preview import compute_average
from ...core.kernel.dummies import split_budget
from ...core.kernel.guarantee import GuaranteeError
from ...core.kernel.settings import (
    ALL_SCHEMES,
    LANDMARK_SCHEMES,
    NONNEGATIVE_QUESTION,
    SCHEME_LABELS,
    bounds_from_data_risk,
    categories_from_data,
    lower_bound_question,
)
from ...core.publish import ledger
from ...core.publish.export import (
    REPUBLISH_WARNING,
    REPUBLISHING_SCHEMES,
    Cancelled,
    ExportError,
    ExportOptions,
    export_release,
    new_export_key,
)
from ..views.theme import count_noun
from ..window.runner import LatestOnlyRunner, WorkerJob
from ..window.session import AverageResult, SchemePreview, Snapshot
from .common import (
    WheelGuard,
    accept_buttons,
    ask_publish_categories,
    ask_yes_no,
    categories_question,
    path_row,
    warning_label,
)


class ExportJob(WorkerJob):
    """One export on a worker thread, on a snapshot of the session. Signals are emitted on the GUI thread:
    ``progress(int, int)`` (rows written / total), ``finished(str)`` (the path), ``failed(str)`` (one clear
    message) and ``cancelled()``; ``cancel()`` asks it to stop."""

    finished = Signal(str)  # the release path
    cancel_exceptions = (Cancelled,)
    failure_note = "; nothing was written"

    def __init__(self, snapshot: Snapshot, path: str | Path, options: ExportOptions, parent=None) -> None:
        super().__init__("export", snapshot.series.n, parent)
        self.snapshot = snapshot
        self.path = Path(path)
        if options.dummies is None and snapshot.dummies is not None:
            # Dummies on in the session: the export draws its own selection (never the preview's).
            options = replace(options, dummies=snapshot.dummies)
        # A category list from the data is published only when the user said so (the dialog's question, or
        # categories_from_data=True through the automation API): the core refuses it otherwise (DESIGN §3).
        self.options = options

    @property
    def sidecar(self) -> Path:
        return self.path.with_name(self.path.name + ".json")

    def work(self, progress, should_cancel):
        snap = self.snapshot
        return export_release(snap.series, snap.landmarks, snap.settings, self.path, self.options,
                              progress=progress, should_cancel=should_cancel)

    def expected_error(self, exc: Exception) -> str | None:
        if isinstance(exc, (ExportError, GuaranteeError, ValueError)):
            return str(exc)
        if isinstance(exc, OSError):
            return f"could not write {self.path}: {exc.strerror or exc}; nothing was written"
        return None

    def _emit_finished(self) -> None:
        self.finished.emit(str(self.path))


def exportable_schemes(snapshot: Snapshot) -> dict[str, str]:
    """Scheme → reason it cannot be exported ('' when it can): the core's pre-check verdicts."""
    return export_verdicts(snapshot.series, snapshot.landmarks, snapshot.settings, snapshot.dummies)


class ExportDialog(QDialog):
    """Scheme, output path, opt-in columns, noise backend, optional seed, and what will be guaranteed."""

    def __init__(self, snapshot: Snapshot, default_scheme: str, start_dir: str, parent=None, *,
                 average: AverageResult | Mapping[str, RunStats] | None = None,
                 preview: Mapping[str, SchemePreview] | None = None, error_field: str | None = None,
                 landmark_rules: frozenset[str] = frozenset()) -> None:
        """``average`` / ``preview``: the session's R-run average and preview for this snapshot (default:
        ``snapshot.extra["average"]`` / ``["preview"]``); without them the table says they are computing and
        :meth:`set_advice` fills it in later. ``error_field`` None ranks by the error of what will be
        published: ``"mae_denoised"`` while the Denoise box is checked, ``"mae"`` otherwise.
        ``landmark_rules``: the suggestion rules the landmarks come from (``Session.landmark_rules``)."""
        super().__init__(parent)
        self.setObjectName("exportDialog")
        self.setWindowTitle("Export protected CSV")
        self.snapshot = snapshot
        self._fixed_error_field = error_field
        self.setMinimumWidth(640)
        lay = QVBoxLayout(self)
        # The choices scroll when the dialog would be taller than the screen (its notes, the key's and a rule's
        # warnings made it ≈ 850 px: at 1280×800 Export was off the screen); the guarantee and the buttons stay.
        self._body = QWidget()
        self._body.setObjectName("exportBody")
        form = QFormLayout(self._body)
        form.setContentsMargins(0, 0, 0, 0)
        self._scroll = QScrollArea()
        self._scroll.setObjectName("exportScroll")
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.setWidget(self._body)
        lay.addWidget(self._scroll, 1)

        self._build_scheme_chooser(form, default_scheme)
        self._build_warnings(form, landmark_rules)
        self._build_output(form, start_dir)
        self._build_randomness(form)
        self._build_values(form)
        # The wheel scrolls the dialog: over a combo or spin box it would change the choice (the scheme!)
        # while the person only meant to scroll; an unfocused one passes the wheel on (issue 44).
        self._wheel_guard = WheelGuard(self)
        for w in self._body.findChildren(QAbstractSpinBox) + self._body.findChildren(QComboBox):
            self._wheel_guard.guard(w)
        self._build_footer(lay)
        for w in (self.scheme, self.backend):
            w.currentIndexChanged.connect(self._update)
        for w in (self.include_budget, self.include_flags, self.use_seed):
            w.toggled.connect(self._update)
        self.scheme.activated.connect(self._chosen_by_user)
        # The session averages what its own Denoise setting publishes; when this box asks for the denoised
        # error and the session's average has none, the dialog asks the core for it (same compute_average).
        self._denoised_average: AverageResult | None = None
        self._average_runner: LatestOnlyRunner | None = None
        self.set_advice(average if average is not None else snapshot.extra.get("average"),
                        preview if preview is not None else snapshot.extra.get("preview"))
        self._update()

    def _build_warnings(self, form: QFormLayout, landmark_rules: frozenset[str]) -> None:
        """The notes under the scheme chooser: republishing, and landmarks found by a rule on the values."""
        self.republish_warning = warning_label(f"⚠ {REPUBLISH_WARNING} (Dummy landmarks panel).",
                                               "exportRepublishWarning")
        form.addRow("", self.republish_warning)
        rules = ", ".join(sorted(landmark_rules))
        self.rule_warning = warning_label(f"⚠ These landmarks were found by a rule on the values ({rules}): "
                                          "wherever a release shows where they are, it shows which events passed "
                                          "the rule. The file's metadata says so.", "exportRuleWarning")
        self.rule_warning.setVisible(bool(rules))
        form.addRow("", self.rule_warning)

    def _build_output(self, form: QFormLayout, start_dir: str) -> None:
        """The output file, the opt-in columns and metadata, and the noise backend."""
        snapshot = self.snapshot
        stem = Path(snapshot.series.source.path).stem if snapshot.series.source else snapshot.series.name
        self.path_edit = QLineEdit(str(Path(start_dir) / f"{stem}_protected.csv"))
        self.path_edit.setObjectName("exportPath")
        form.addRow("Output file", path_row(self.path_edit, self._browse))

        self.include_budget = QCheckBox("Add an 'epsilon' column (ε_t per event)")
        self.include_flags = QCheckBox("Add an 'approximated' column (0/1)")
        form.addRow("Extra columns", self.include_budget)
        form.addRow("", self.include_flags)
        self.include_input_name = QCheckBox("Name the input file in the metadata (off: a file name can name a person)")
        self.include_input_name.setObjectName("exportIncludeInputName")
        form.addRow("Metadata", self.include_input_name)
        self.columns_warning = warning_label("⚠ These columns reveal where the landmarks are.")
        form.addRow("", self.columns_warning)

        self.backend = QComboBox()
        self.backend.addItem("Exact integer samplers (floating-point safe; default)", "exact")
        if snapshot.series.kind in ("numeric", "categorical"):
            self.backend.addItem("OpenDP samplers (slower; not for Adaptive; no seed)", "opendp")
        form.addRow("Noise", self.backend)

    def _build_randomness(self, form: QFormLayout) -> None:
        """Fresh randomness, or a generated secret key that makes the export reproducible."""
        self.use_seed = QCheckBox("Reproducible export (generate a secret key)")
        self.use_seed.setObjectName("exportReproducible")
        self.seed = QLineEdit()  # the generated key: shown, read-only, copyable
        self.seed.setObjectName("exportKey")
        self.seed.setReadOnly(True)
        self.seed.setEnabled(False)
        self.seed.setPlaceholderText("fresh randomness (no key)")
        self.copy_key = QPushButton("Copy")
        self.copy_key.setObjectName("exportKeyCopy")
        self.copy_key.setEnabled(False)
        self.copy_key.clicked.connect(lambda: QApplication.clipboard().setText(self.seed.text()))
        form.addRow("Randomness", self.use_seed)
        krow = QHBoxLayout()
        krow.addWidget(self.seed, 1)
        krow.addWidget(self.copy_key)
        form.addRow("Export key", krow)
        self.seed_warning = warning_label("⚠ Anyone who holds this key can reproduce the noise (and remove it): "
                                          "keep it secret. It is kept in your private release ledger so that the "
                                          "same release can be made again without spending ε again.")
        form.addRow("", self.seed_warning)

    def _build_values(self, form: QFormLayout) -> None:
        """How the values are written: text cells verbatim or not, denoised or raw (with the lower-bound hint)."""
        snapshot = self.snapshot
        self.verbatim_labels = QCheckBox("Keep text cells verbatim, formulas included")
        self.verbatim_labels.setToolTip("Off (default): a label starting with = + - @, a tab or a carriage return "
                                        "gets a leading ' so that spreadsheets do not run it as a formula.")
        self.verbatim_labels.setObjectName("exportVerbatimLabels")
        self.verbatim_labels.setEnabled(snapshot.series.kind == "categorical")
        form.addRow("Text cells", self.verbatim_labels)

        # Post-processing (issue 12): defaults to the session's setting.
        self.denoise = QCheckBox("Denoise (post-processing; off: the raw, unbiased noisy values)")
        self.denoise.setObjectName("exportDenoise")
        self.denoise.setChecked(snapshot.settings.denoise)
        self.denoise.setToolTip("Smooths the released values using only the release itself and the public "
                                "settings: it changes no guarantee, and anyone who reads the release can do "
                                "the same. The sidecar records what was applied.")
        form.addRow("Values", self.denoise)
        self.denoise.toggled.connect(self._denoise_toggled)
        # Asked, never derived (issue 44): the dock's box sets it, the person decides.
        self.lower_bound_hint = QLabel(
            f"Values cannot be negative? If that is a public fact, tick \u201c{NONNEGATIVE_QUESTION}\u201d in "
            "the Laplace mechanism settings: the denoised release is then clipped to 0 and the metadata "
            "publishes the bound (nothing is taken from your data).")
        self.lower_bound_hint.setObjectName("exportLowerBoundHint")
        self.lower_bound_hint.setWordWrap(True)
        self.lower_bound_hint.setStyleSheet("color: #555;")
        self.lower_bound_hint.setVisible(lower_bound_question(snapshot.series.kind, snapshot.series.values,
                                                              snapshot.settings))
        form.addRow("", self.lower_bound_hint)

    def _build_footer(self, lay: QVBoxLayout) -> None:
        """What will be guaranteed (the summary) and the buttons, below the scrolling choices."""
        self.summary = QLabel()
        self.summary.setObjectName("exportSummary")
        self.summary.setWordWrap(True)
        self.summary.setStyleSheet("background: #f4f8ff; border: 1px solid #c8d8f0; padding: 6px;")
        lay.addWidget(self.summary)

        buttons, self.export_button = accept_buttons(self, "Export", self._accept)
        lay.addWidget(buttons)

    def event(self, e: QEvent) -> bool:
        done = super().event(e)
        if e.type() in (QEvent.Type.LayoutRequest, QEvent.Type.Show):
            self._fit_height()
        return done

    def _fit_height(self) -> None:
        """Grow to the height the contents need at this width, up to the screen's: a window is not grown by
        its layout's height for width (at the minimum height the wrapped notes were drawn over the advice
        table: 640×556, the notes needing 710), also when a note appears or the table fills in later. Past the
        screen's height the choices scroll."""
        body = self._body.layout().totalHeightForWidth(self._scroll.viewport().width())
        need = self.height() - self._scroll.viewport().height() + body
        screen = self.screen()
        room = screen.availableGeometry().height() - 40 if screen is not None else need  # (the title bar)
        target = min(need, max(room, self.minimumSizeHint().height()))
        if target > self.height():
            self.resize(self.width(), target)
        if screen is not None and self.isVisible():  # grown downwards from where it was centred: back on screen
            frame, avail = self.frameGeometry(), screen.availableGeometry()
            if frame.bottom() > avail.bottom():
                self.move(frame.x(), max(avail.top(), avail.bottom() - frame.height()))

    # ----------------------------------------------------------------------------- scheme chooser
    def _build_scheme_chooser(self, form: QFormLayout, default_scheme: str) -> None:
        """The scheme combo (failing schemes disabled), the per-scheme advice table and the noise warning."""
        self.scheme = QComboBox()
        self.scheme.setObjectName("exportScheme")
        self.scheme.setPlaceholderText("none advised: choose a scheme")  # (shown when none is pre-selected)
        self.reasons = exportable_schemes(self.snapshot)
        for s in ALL_SCHEMES:
            label = SCHEME_LABELS[s] + ("" if s in LANDMARK_SCHEMES else " (baseline)")
            if self.reasons[s]:
                label += f" — {self.reasons[s]}"
            self.scheme.addItem(label, s)
            if self.reasons[s]:
                item = self.scheme.model().item(self.scheme.count() - 1)
                item.setEnabled(False)
        ok = default_scheme in ALL_SCHEMES and not self.reasons[default_scheme]
        self.scheme.setCurrentIndex(ALL_SCHEMES.index(default_scheme if ok else "adaptive"))
        self._user_chose = False
        self.best: str | None = None
        form.addRow("Scheme", self.scheme)

        self.advice_table = QTableWidget(len(ALL_SCHEMES) + 1, 4)  # the schemes, then the constant yardstick
        self.advice_table.setObjectName("exportAdvice")
        unit = unit_label(self.snapshot.series)
        self.unit = unit
        err_head = "Expected error" + ("" if unit in ("share", "mismatch rate") else f" ({unit})")
        self.advice_table.setHorizontalHeaderLabels(["Scheme", err_head, "Approximated", "Advice"])
        self.advice_table.horizontalHeaderItem(1).setToolTip(
            f"Mean absolute error of the release averaged over {self.snapshot.runs} simulated runs "
            "(the Metrics table's number)")
        self.advice_table.horizontalHeaderItem(2).setToolTip(
            "Share of events that republish an earlier release instead of a fresh noisy value")
        self.advice_table.verticalHeader().hide()
        self.advice_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.advice_table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.advice_table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.advice_table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.advice_table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.advice_table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        vh = self.advice_table.verticalHeader()
        vh.setSectionResizeMode(vh.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.advice_table.cellClicked.connect(self._advice_clicked)
        form.addRow("", self.advice_table)
        self.advice_caption = caption = QLabel()
        caption.setWordWrap(True)
        caption.setStyleSheet("color: #555;")
        form.addRow("", caption)

        self.none_informative = warning_label(name="exportNoneInformative")
        self.none_informative.hide()
        form.addRow("", self.none_informative)
        self.noise_warning = warning_label(name="exportNoiseWarning")
        form.addRow("", self.noise_warning)

    @property
    def error_field(self) -> str:
        """The error the advice ranks by: that of the values this export writes (denoised or raw)."""
        if self._fixed_error_field is not None:
            return self._fixed_error_field
        return "mae_denoised" if self.denoise.isChecked() else "mae"

    def _denoise_toggled(self, _on: bool) -> None:
        self._set_error_head()
        self.set_advice(self._average, self._preview)

    def _set_error_head(self) -> None:
        den = self.error_field == "mae_denoised"
        unit = "" if self.unit in ("share", "mismatch rate") else f" ({self.unit})"
        self.advice_table.horizontalHeaderItem(1).setText(f"Expected error{unit}" + ("\nafter denoising" if den else ""))
        self.advice_caption.setText(
            f"Expected error: the mean absolute error over {self.snapshot.runs} simulated releases"
            + (", after the same denoising as the export (the Metrics table's MAE denoised average)" if den
               else " (the Metrics table's average)")
            + "; in brackets the 10th–90th percentile of those releases' errors"
            + (" (each draws its own dummies, as the export does)" if self.snapshot.dummies is not None else "")
            + ". The last row is the error of publishing one constant at every event (computed on the true data, "
            "never published): only schemes clearly below it are advised. Approximated: events that repeat an "
            "earlier value instead of a fresh noisy one.")
        self.advice_table.horizontalHeaderItem(1).setToolTip(
            f"Mean absolute error of the {'denoised ' if den else ''}release averaged over {self.snapshot.runs} "
            f"simulated runs (the Metrics table's {'MAE denoised ' if den else ''}average)")

    def set_advice(self, average: AverageResult | Mapping[str, RunStats] | None,
                   preview: Mapping[str, SchemePreview] | None) -> None:
        """Fill the table from the session's results and pre-select the advised scheme (unless the user has
        already picked one in this dialog)."""
        self._average, self._preview = average, preview
        self._set_error_head()
        avg = average.average if isinstance(average, AverageResult) else average
        self.errors = advice.errors_of(avg, self.error_field) if avg else {}
        self.spreads = advice.spreads_of(avg, self.error_field) if avg else {}
        if avg and self.error_field == "mae_denoised" and all(np.isnan(v) for v in self.errors.values()):
            self.errors, self.spreads = self._denoised_errors()
        self.shares = {s: p.release.approximated_share for s, p in preview.items()} if preview else {}
        self.best = advice.best_scheme(self.reasons, self.errors, self.yardstick) if self.errors else None
        # every passing scheme has its error, and none is informative: nothing is advised, nothing pre-selected
        passing = [s for s in ALL_SCHEMES if not self.reasons[s]]
        self.none_advised = bool(self.errors) and self.best is None and bool(passing) and all(
            np.isfinite(self.errors.get(s, np.nan)) for s in passing)
        if not self._user_chose:
            if self.best is not None:
                self.scheme.setCurrentIndex(ALL_SCHEMES.index(self.best))
            elif self.none_advised:
                self.scheme.setCurrentIndex(-1)
        self.none_informative.setText(f"⚠ {advice.none_informative(self.snapshot.series, self.unit)} "
                                      "Choose a scheme to export anyway." if self.none_advised else "")
        self.none_informative.setVisible(self.none_advised)
        self._fill_advice()
        self._update()

    @property
    def yardstick(self) -> float:
        """The error of publishing one constant at every event (the series' own, computed once per series)."""
        return constant_error(self.snapshot.series)

    def _fill_advice(self) -> None:
        t = self.advice_table
        yardstick = self.yardstick
        for row, s in enumerate(ALL_SCHEMES):
            err = self.errors.get(s)
            share = self.shares.get(s)
            if self.reasons[s]:
                note = "✘ fails the check"
            elif s == self.best:
                note = "★ lowest error"
            elif err is not None and np.isfinite(err) and not advice.informative(err, yardstick):
                note = "not informative"
            else:
                note = ""
            lo, hi = self.spreads.get(s, (np.nan, np.nan))
            cells = [SCHEME_LABELS[s] + ("" if s in LANDMARK_SCHEMES else " (baseline)"),
                     spread_text(err, lo, hi, 3, 2) if err is not None else "computing…",
                     f"{100 * share:.0f} %" if share is not None else "…", note]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col in (1, 2):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if self.reasons[s]:
                    item.setFlags(Qt.ItemFlag.NoItemFlags)  # greyed out, not selectable
                    item.setToolTip(self.reasons[s])
                elif note == "not informative":
                    item.setToolTip(f"No better than publishing one constant (the last row): "
                                    f"{advice.UNINFORMATIVE_HELP}")
                t.setItem(row, col, item)
        self._fill_constant_row(yardstick)
        t.resizeColumnsToContents()
        t.horizontalHeader().setStretchLastSection(True)
        rows_h = t.verticalHeader().defaultSectionSize() * t.rowCount()
        t.setFixedHeight(rows_h + t.horizontalHeader().sizeHint().height() + 2 * t.frameWidth() + 4)

    def _fill_constant_row(self, yardstick: float) -> None:
        """The yardstick's row: not a scheme, never selectable."""
        series = self.snapshot.series
        tip = (f"The error of publishing {advice.CONSTANT_LABEL[series.kind]} at every event: a release not "
               f"clearly below it (≤ {advice.INFORMATIVE_RATIO:g} ×) tells no more than that one number. "
               "Computed on the true data as guidance; never published.")
        cells = ["One constant (" + {"numeric": "median", "location": "median point",
                                     "categorical": "mode"}[series.kind] + ")",
                 advice.fmt(yardstick, ""), "", "not published"]
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            item.setToolTip(tip)
            if col == 1:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.advice_table.setItem(len(ALL_SCHEMES), col, item)

    def _denoised_errors(self) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
        """The denoised expected errors and their spreads when the session averaged raw values only: computed
        once, in the background ({} = "computing…" until they arrive)."""
        if self._denoised_average is not None:
            avg = self._denoised_average.average
            return advice.errors_of(avg, "mae_denoised"), advice.spreads_of(avg, "mae_denoised")
        if self._average_runner is None:
            snap = self.snapshot
            snap = replace(snap, settings=snap.settings.with_(denoise=True), extra={})
            self._average_runner = LatestOnlyRunner("export-advice", self)
            self._average_runner.finished.connect(self._on_denoised_average)
            self._average_runner.submit(compute_average, snap)
        return {}, {}

    def _on_denoised_average(self, _generation: int, result: AverageResult | None) -> None:
        if result is not None:
            self._denoised_average = result
            self.set_advice(self._average, self._preview)

    def done(self, result: int) -> None:
        if self._average_runner is not None:
            self._average_runner.shutdown(timeout=0.0)
        super().done(result)

    def _advice_clicked(self, row: int, _col: int) -> None:
        if row >= len(ALL_SCHEMES):  # the constant's row
            return
        s = ALL_SCHEMES[row]
        if not self.reasons[s]:
            self._user_chose = True
            self.scheme.setCurrentIndex(row)

    def _chosen_by_user(self, _index: int) -> None:
        self._user_chose = True

    def _update_advice(self, scheme: str | None) -> None:
        """Select the chosen scheme's row and say when its expected error is no better than a constant's."""
        if scheme is None:
            self.advice_table.clearSelection()
            self.noise_warning.hide()
            return
        self.advice_table.selectRow(ALL_SCHEMES.index(scheme))
        err = self.errors.get(scheme)
        warn = "" if err is None else advice.noise_warning(err, self.snapshot.series, self.snapshot.settings,
                                                            self.unit)
        self.noise_warning.setText(f"⚠ {warn[0].upper()}{warn[1:]}. You can still export it, or raise ε first "
                                    "(View › What ε do I need?)." if warn else "")
        self.noise_warning.setVisible(bool(warn))

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export protected CSV", self.path_edit.text(),
                                              "CSV (*.csv);;All files (*)",
                                              options=QFileDialog.Option.DontConfirmOverwrite)
        if path:
            self.path_edit.setText(path)

    def _update(self) -> None:
        self.columns_warning.setVisible(self.include_budget.isChecked() or self.include_flags.isChecked())
        keyed = self.use_seed.isChecked()
        if keyed and not self.seed.text():
            self.seed.setText(new_export_key())  # a fresh secret for this export only
            self.seed.setCursorPosition(0)
        elif not keyed:
            self.seed.clear()
        self.seed.setEnabled(keyed)
        self.copy_key.setEnabled(keyed)
        self.seed_warning.setVisible(keyed)
        self.republish_warning.setVisible(self.scheme.currentData() in REPUBLISHING_SCHEMES
                                          and self.snapshot.dummies is None)
        opendp = self.backend.currentData() == "opendp"
        if opendp:
            self.use_seed.setChecked(False)
        self.use_seed.setEnabled(not opendp)
        snap = self.snapshot
        scheme = self.scheme.currentData()
        self._update_advice(scheme)
        if scheme is None:
            self.summary.setText("<b>No scheme is chosen:</b> none is advised (see above). Choose one to export.")
            self.export_button.setEnabled(False)
            return
        n, k = snap.series.n, int(snap.landmarks.size)
        eps = snap.settings.epsilon
        if scheme == "adaptive":
            how = "Adaptive samples events and republishes between samples; its budgets are checked after drawing."
        elif scheme == "balanced":
            how = ("Balanced gives the landmarks together B* = ε·k/(k + √(n − k)) and every other event ε − B*: "
                   "the least total raw noise under the landmark-sum constraint. Denoised, Skip usually does "
                   "better: compare the errors above.")
        elif scheme in LANDMARK_SCHEMES:
            how = ""
        else:
            how = "This is a baseline, exported because it passes the check for these landmarks."
        dm = snap.dummies
        if dm is None:
            check = precheck(scheme, n, snap.landmarks, eps)
            lsum = f"{check.worst:.6g}" if check is not None else "≤ ε (checked on export)"
            dummies = ""
        else:
            eps_rem = split_budget(eps, dm.share)[1]
            lsum = f"≤ {eps_rem:.6g} (ε minus what choosing the dummies costs), checked on export"
            seeded = "derived from the export key" if self.use_seed.isChecked() else "fresh randomness"
            sel = dm.share * eps
            dummies = (
                f"<br><b>Dummy landmarks:</b> on ({dm.describe()}). The export draws a <i>new</i> choice of "
                f"dummies ({seeded}; not the preview's), which costs ε = {sel:.4g}; the "
                f"{count_noun(k, 'landmark')} and the dummies are then released with the remaining "
                f"ε = {eps_rem:.6g}. The metadata records the total ε = {eps:g}, that cost and the method; "
                f"nothing written says which events are dummies or how many.")
        self.summary.setText(
            f"<b>Guarantee:</b> landmark privacy at ε = {eps:g} with the <b>{SCHEME_LABELS[scheme]}</b> scheme: "
            f"for every event, the budgets of the {count_noun(k, 'landmark')} plus that event's own add up to "
            f"at most ε = {eps:g} (landmark sum: {lsum}). {n:,} events are written; nothing is written if the "
            f"check fails. {how}{dummies}")
        self.export_button.setEnabled(scheme is not None)

    def _accept(self) -> None:
        p = Path(self.path_edit.text()).expanduser()
        if not self.path_edit.text().strip():
            QMessageBox.warning(self, "Export", "Choose a file name for the release.")
            return
        if p.is_dir():
            QMessageBox.warning(self, "Export", f"{p} is a folder; choose a file name.")
            return
        side = p.with_name(p.name + ".json")
        existing = [x for x in (p, side) if x.exists()]
        if existing:
            names = " and ".join(str(x) for x in existing)
            if not ask_yes_no(self, "Overwrite?", f"{names} already exist(s). Replace?"):
                return
        if not self._confirm_categories() or not self._confirm_bounds():
            return
        notice = ledger.composition_notice(self.snapshot.series, self.snapshot.settings.epsilon)
        if notice and not self.ask_repeat_release(notice):
            return
        self.accept()

    def ask_repeat_release(self, notice: str) -> bool:
        """Asked before another release of an input released before (tests replace it)."""
        return ask_yes_no(self, "Release this data again?", f"{notice[0].upper()}{notice[1:]}.<br>Export anyway?")

    # ------------------------------------------------- the data's own category list (issue 17, finding 5)
    #: set by :meth:`_confirm_categories`: the user agreed to publish the data's own category list
    categories_from_data = False

    def ask_categories_from_data(self, message: str) -> bool:
        """Replaceable hook (tests set it): may the release publish the data's own category list?"""
        return ask_publish_categories(self, message)

    def _confirm_categories(self) -> bool:
        """The same question as ``lmdk export``'s --categories-from-data, asked before anything is written."""
        snap = self.snapshot
        if not categories_from_data(snap.series.kind, snap.settings):
            return True
        self.categories_from_data = self.ask_categories_from_data(
            categories_question(len(snap.series.categories or ())))
        return self.categories_from_data

    # ------------------------------------------------------- bounds taken from the data (issue 42, finding 7)
    def ask_bounds_from_data(self, message: str) -> bool:
        """Replaceable hook (tests set it): may the release publish bounds that are the data's min and max?"""
        return ask_yes_no(self, "Publish the data's minimum and maximum?", message)

    def _confirm_bounds(self) -> bool:
        """The same question for bounds set with "From data" (the command's --bounds-from-data)."""
        snap = self.snapshot
        st = snap.settings
        if snap.series.kind != "numeric" or st.bounds is None or not st.bounds_from_data:
            return True
        return self.ask_bounds_from_data(
            f"The bounds were set with \"From data\": {bounds_from_data_risk(st.bounds)}. The release's "
            "metadata and statement say so. Type public bounds in the settings instead to avoid it. Publish "
            "them with the release?")

    def values(self) -> dict:
        p = Path(self.path_edit.text()).expanduser()
        return {
            "path": str(p),
            "scheme": self.scheme.currentData(),
            "include_budget": self.include_budget.isChecked(),
            "include_flags": self.include_flags.isChecked(),
            "include_input_name": self.include_input_name.isChecked(),
            "seed": self.seed.text() if self.use_seed.isChecked() else None,
            "verbatim_labels": self.verbatim_labels.isChecked(),
            "backend": self.backend.currentData(),
            "denoise": self.denoise.isChecked(),
            "force": p.exists() or p.with_name(p.name + ".json").exists(),
            "categories_from_data": self.categories_from_data,
        }
