"""File › Export protected CSV…: the dialog and the background export job (issue 4).

The job runs :func:`lmdk_gui.core.export.export_release` — the same writer and noise path as ``lmdk export`` —
on a worker thread, on a *snapshot* of the session, so edits made while it runs do not change what is
written. The core writes through a temporary file in the target folder and renames it only when complete,
so cancelling, failing or closing the window never leaves a partial file at the target path.

Dummy landmarks (issue 6): when the snapshot has them on, the job asks the core for them
(``ExportOptions.dummies``): the export draws its *own* selection with fresh randomness (derived from the
seed when the user seeds the export) — never the preview's — and releases on ``L'`` with ``ε − ε_sel``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from ..core.dummies import split_budget
from ..core.export import Cancelled, ExportError, ExportOptions, export_release
from ..core.guarantee import GuaranteeError
from ..core.pipeline import export_verdicts, precheck
from ..core.settings import ALL_SCHEMES, LANDMARK_SCHEMES, SCHEME_LABELS
from .runner import WorkerJob
from .session import Snapshot


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

    def __init__(self, snapshot: Snapshot, default_scheme: str, start_dir: str, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("exportDialog")
        self.setWindowTitle("Export protected CSV")
        self.snapshot = snapshot
        self.setMinimumWidth(560)
        lay = QVBoxLayout(self)
        form = QFormLayout()
        lay.addLayout(form)

        self.scheme = QComboBox()
        self.scheme.setObjectName("exportScheme")
        reasons = exportable_schemes(snapshot)
        for s in ALL_SCHEMES:
            label = SCHEME_LABELS[s] + ("" if s in LANDMARK_SCHEMES else " (baseline)")
            if reasons[s]:
                label += f" — {reasons[s]}"
            self.scheme.addItem(label, s)
            if reasons[s]:
                item = self.scheme.model().item(self.scheme.count() - 1)
                item.setEnabled(False)
        idx = ALL_SCHEMES.index(default_scheme) if default_scheme in ALL_SCHEMES and not reasons[default_scheme] \
            else ALL_SCHEMES.index("adaptive")
        self.scheme.setCurrentIndex(idx)
        form.addRow("Scheme", self.scheme)

        stem = Path(snapshot.series.source.path).stem if snapshot.series.source else snapshot.series.name
        self.path_edit = QLineEdit(str(Path(start_dir) / f"{stem}_protected.csv"))
        self.path_edit.setObjectName("exportPath")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.path_edit, 1)
        row.addWidget(browse)
        form.addRow("Output file", row)

        self.include_budget = QCheckBox("Add an 'epsilon' column (ε_t per event)")
        self.include_flags = QCheckBox("Add an 'approximated' column (0/1)")
        form.addRow("Extra columns", self.include_budget)
        form.addRow("", self.include_flags)
        self.include_input_name = QCheckBox("Name the input file in the metadata (off: a file name can name a person)")
        self.include_input_name.setObjectName("exportIncludeInputName")
        form.addRow("Metadata", self.include_input_name)
        self.columns_warning = QLabel("⚠ These columns reveal where the landmarks are (thesis §4.2).")
        self.columns_warning.setStyleSheet("color: #a05a00;")
        form.addRow("", self.columns_warning)

        self.backend = QComboBox()
        self.backend.addItem("Exact integer samplers (floating-point safe; default)", "exact")
        if snapshot.series.kind in ("numeric", "categorical"):
            self.backend.addItem("OpenDP samplers (slower; not for Adaptive; no seed)", "opendp")
        form.addRow("Noise", self.backend)

        self.use_seed = QCheckBox("Seed the noise")
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setEnabled(False)
        srow = QHBoxLayout()
        srow.addWidget(self.use_seed)
        srow.addWidget(self.seed, 1)
        form.addRow("Randomness", srow)
        self.seed_warning = QLabel("⚠ A seeded release can be reproduced by anyone who holds the seed.")
        self.seed_warning.setStyleSheet("color: #a05a00;")
        form.addRow("", self.seed_warning)

        # Post-processing (issue 12): defaults to the session's setting.
        self.denoise = QCheckBox("Denoise (post-processing; off: the raw, unbiased noisy values)")
        self.denoise.setObjectName("exportDenoise")
        self.denoise.setChecked(snapshot.settings.denoise)
        self.denoise.setToolTip("Smooths the released values using only the release itself and the public "
                                "settings: it changes no guarantee, and anyone who reads the release can do "
                                "the same. The sidecar records what was applied.")
        form.addRow("Values", self.denoise)

        self.summary = QLabel()
        self.summary.setObjectName("exportSummary")
        self.summary.setWordWrap(True)
        self.summary.setStyleSheet("background: #f4f8ff; border: 1px solid #c8d8f0; padding: 6px;")
        lay.addWidget(self.summary)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.export_button = buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

        for w in (self.scheme, self.backend):
            w.currentIndexChanged.connect(self._update)
        for w in (self.include_budget, self.include_flags, self.use_seed):
            w.toggled.connect(self._update)
        self._update()

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export protected CSV", self.path_edit.text(),
                                              "CSV (*.csv);;All files (*)",
                                              options=QFileDialog.Option.DontConfirmOverwrite)
        if path:
            self.path_edit.setText(path)

    def _update(self) -> None:
        self.columns_warning.setVisible(self.include_budget.isChecked() or self.include_flags.isChecked())
        self.seed.setEnabled(self.use_seed.isChecked())
        self.seed_warning.setVisible(self.use_seed.isChecked())
        opendp = self.backend.currentData() == "opendp"
        if opendp:
            self.use_seed.setChecked(False)
        self.use_seed.setEnabled(not opendp)
        snap = self.snapshot
        scheme = self.scheme.currentData()
        n, k = snap.series.n, int(snap.landmarks.size)
        eps = snap.settings.epsilon
        if scheme == "adaptive":
            how = "Adaptive samples events and republishes between samples; its budgets are checked after drawing."
        elif scheme == "balanced":
            how = ("Balanced gives the landmarks together B* = ε·k/(k + √(n − k)) and every other event ε − B*: "
                   "the least total noise under the landmark-sum constraint.")
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
            lsum = f"≤ ε − ε_sel = {eps_rem:.6g}, checked on export against L'"
            seeded = "derived from the seed" if self.use_seed.isChecked() else "fresh randomness"
            dummies = (
                f"<br><b>Dummy landmarks:</b> on ({dm.describe()}). The export draws a <i>new</i> selection "
                f"({seeded}; not the preview's): an exponential mechanism with ε_sel = {dm.share * eps:.4g} "
                f"adds dummies to the {k} landmark(s), giving L', and the release uses L' with "
                f"ε − ε_sel = {eps_rem:.6g}. The metadata records ε = {eps:g}, ε_sel and the generator; "
                f"nothing written says which events are dummies or how many.")
        self.summary.setText(
            f"<b>Guarantee:</b> ({eps:g}, L)-landmark privacy with the <b>{SCHEME_LABELS[scheme]}</b> scheme: for "
            f"every event t, the budgets of the {k} landmark(s) plus t's own add up to at most ε = {eps:g} "
            f"(landmark sum: {lsum}). {n:,} events are written; nothing is written if the check fails. {how}"
            f"{dummies}")
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
            ans = QMessageBox.question(self, "Overwrite?", f"{names} already exist(s). Replace?",
                                       QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                       QMessageBox.StandardButton.No)
            if ans != QMessageBox.StandardButton.Yes:
                return
        self.accept()

    def values(self) -> dict:
        p = Path(self.path_edit.text()).expanduser()
        return {
            "path": str(p),
            "scheme": self.scheme.currentData(),
            "include_budget": self.include_budget.isChecked(),
            "include_flags": self.include_flags.isChecked(),
            "include_input_name": self.include_input_name.isChecked(),
            "seed": self.seed.value() if self.use_seed.isChecked() else None,
            "backend": self.backend.currentData(),
            "denoise": self.denoise.isChecked(),
            "force": p.exists() or p.with_name(p.name + ".json").exists(),
        }
