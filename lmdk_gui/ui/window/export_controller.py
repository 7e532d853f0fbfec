"""File › Export protected CSV… and File › Save release report… (DESIGN §10): the export dialog, the export job
that runs on a snapshot of the session, its progress and Cancel in the status bar, and the report on the last
export that finished. The export dialog and the writer load on first use (cold start, issue 15)."""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox, QProgressBar, QPushButton, QStatusBar

from ..dialogs.common import busy_call, deleted_after
from .extensions import WindowPart
from .startup import read_setting

if TYPE_CHECKING:
    from ..dialogs.export_dialog import ExportJob


class ExportController(WindowPart):
    """Owns the running export (``export_job``), the last finished one (``last_export``) and their widgets."""

    def __init__(self, window) -> None:  # window: the MainWindow that builds this controller
        super().__init__(window)
        self.export_job: ExportJob | None = None
        #: The last export that finished: File › Save release report… reports on it (its snapshot has the data).
        self.last_export: ExportJob | None = None
        self.progress = QProgressBar()
        self.progress.setObjectName("exportProgress")
        self.progress.setMaximumWidth(220)
        self.progress.setFormat("export %p%")
        self.cancel_button = QPushButton("Cancel export")
        self.cancel_button.setObjectName("exportCancel")
        self.cancel_button.clicked.connect(window.cancel_export)

    def add_to(self, bar: QStatusBar) -> None:
        for w in (self.progress, self.cancel_button):
            w.hide()
            bar.addPermanentWidget(w)

    def is_running(self) -> bool:
        return self.export_job is not None and self.export_job.is_running()

    # ------------------------------------------------------------------------------------ export
    def export_dialog(self) -> None:
        w, s = self.window, self.session
        if s.series is None:
            w.show_error("Export", "Open a series first.")
            return
        if self.is_running():
            w.show_error("Export", "An export is already running; wait for it or cancel it.")
            return
        from ..dialogs.export_dialog import ExportDialog  # loaded on first use (cold start)

        focus = w.metrics_table.selected_scheme() or "adaptive"
        start = read_setting(w._settings, "lastExportDir", "", str) or str(Path.home())
        dlg = ExportDialog(s.snapshot(), focus, start, w, average=s.average, preview=s.preview,
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
        w._settings.setValue("lastExportDir", str(Path(v["path"]).parent))
        job = w.export_release(v["path"], v["scheme"], include_budget=v["include_budget"],
                               include_flags=v["include_flags"], seed=v["seed"], backend=v["backend"],
                               force=v["force"], include_input_name=v["include_input_name"],
                               verbatim_labels=v.get("verbatim_labels", False), denoise=v["denoise"],
                               categories_from_data=v.get("categories_from_data", False))
        job.finished.connect(lambda path: w._export_message(path))

    def export_release(self, path: str | os.PathLike, scheme: str, include_budget: bool = False,
                       include_flags: bool = False, seed: bytes | str | None = None, *, backend: str | None = None,
                       force: bool = False, include_input_name: bool = False,
                       verbatim_labels: bool = False, denoise: bool | None = None,
                       categories_from_data: bool = False) -> ExportJob:
        """:meth:`MainWindow.export_release`."""
        s = self.session
        if s.series is None:
            raise RuntimeError("no series is open")
        if self.is_running():
            raise RuntimeError("an export is already running")
        from ...core.publish.export import ExportOptions  # the writer loads on first use (cold start)
        from ..dialogs.export_dialog import ExportJob

        opts = ExportOptions(scheme=scheme, include_budget=include_budget, include_flags=include_flags, seed=seed,
                             backend=backend, force=force, chunk_rows=16384,
                             include_input_name=include_input_name, verbatim_labels=verbatim_labels,
                             denoise=s.settings.denoise if denoise is None else bool(denoise),
                             landmarks_rule=", ".join(sorted(s.landmark_rules)) or None,
                             categories_from_data=bool(categories_from_data))
        job = ExportJob(s.snapshot(), path, opts, self.window)
        s.let_go_of_preview_noise()  # (at 10^7 events the preview's noise was 80 MB of the export's peak)
        self.export_job = job
        job.progress.connect(self._progress)
        job.finished.connect(self._finished)
        job.failed.connect(self._failed)
        job.cancelled.connect(self._cancelled)
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.show()
        self.window.export_action.setEnabled(False)
        self.window.statusBar().showMessage(f"Exporting {scheme} release to {path}…")
        return job.start()

    def cancel_export(self) -> None:
        if self.export_job is not None and self.is_running():
            self.export_job.cancel()

    def stop_for_close(self) -> bool:
        """The window closes: a running export is cancelled if the person agrees (``confirm_cancel_export``).
        False: it keeps running and the window stays."""
        job = self.export_job
        if job is None or not job.is_running():
            return True
        if not self.window.confirm_cancel_export():
            return False
        job.cancel()
        job.wait(30)  # the writer stops between chunks and removes its temporary file
        return True

    def _progress(self, done: int, total: int) -> None:
        self.progress.setMaximum(max(total, 1))
        self.progress.setValue(done)

    def _done(self) -> None:
        self.progress.hide()
        self.cancel_button.hide()
        self.window.export_action.setEnabled(True)

    def _finished(self, path: str) -> None:
        self._done()
        job = self.export_job
        if job is not None:
            self.last_export = job
            self.window.report_action.setEnabled(True)
        side = job.sidecar if job is not None else Path(path + ".json")
        self.window.statusBar().showMessage(f"Wrote {path} and {side}", 15000)

    def _failed(self, message: str) -> None:
        self._done()
        self.window.show_error("Export failed", message, clear_status=True)

    def _cancelled(self) -> None:
        self._done()
        self.window.statusBar().showMessage("Export cancelled; nothing was written.", 10000)

    def export_message(self, path: str) -> None:
        """The box that says an export finished, with its warnings and a button for the release report."""
        job = self.export_job
        side = job.sidecar if job is not None else Path(path + ".json")
        warnings = "".join(f"<br>⚠ {w}" for w in (job.result.warnings if job and job.result else ()))
        if job and job.result and job.result.composition:  # (from the ledger, once the release is written)
            warnings += f"<br>Note: {html.escape(job.result.composition)}"
        box = QMessageBox(QMessageBox.Icon.Information, "Export finished",
                          f"Wrote the protected release<br><b>{path}</b><br>and its metadata<br><b>{side}</b>"
                          f"{warnings}", QMessageBox.StandardButton.Ok, self.window)
        box.setObjectName("exportDoneBox")
        report = box.addButton("Save release report…", QMessageBox.ButtonRole.ActionRole)
        report.setObjectName("exportReportButton")
        report.clicked.connect(self.window.save_release_report)
        box.open()

    # ------------------------------------------------------------------------------- release report
    def save_release_report(self) -> bool:
        """:meth:`MainWindow.save_release_report`."""
        w = self.window
        job = self.last_export
        if job is None:
            w.show_error("Release report", "Export a release first: the report describes it.")
            return False
        from ..dialogs.report_dialog import default_report_path  # loaded on first use (cold start)

        answer = w.ask_report_path(str(default_report_path(job.path)), True)
        if answer is None:
            return False
        path, private = Path(answer[0]), bool(answer[1])
        if path.resolve() in {job.path.resolve(), job.sidecar.resolve()} or path.is_dir():
            w.show_error("Release report", f"{path} is the release or a folder; choose another name.")
            return False
        from ...core.publish.guard import OutputRefused, check_output

        src = job.snapshot.series.source
        try:  # the one output guard (issue 42): never the data file, through any link, nor a special file
            check_output(path, (job.path, job.sidecar, src.path if src is not None else None), force=True,
                         what="report", input_word="data file")
        except OutputRefused as e:
            w.show_error("Release report", str(e))
            return False
        if not self._write_report(job, path, private):
            return False
        note = " (with the PRIVATE section: do not publish it)" if private else " (public)"
        w.statusBar().showMessage(f"Wrote the release report {path}{note}", 15000)
        return True

    def _write_report(self, job: ExportJob, path: Path, private: bool) -> bool:
        """Render the report behind a busy dialog and write it as HTML or PDF (by ``path``'s extension)."""
        try:
            ok, page = busy_call(self.window, "Release report", "Writing the release report…",
                                 lambda: _report_html(job, private))
            if not ok or page is None:
                return False
            from ..dialogs.report_dialog import html_to_pdf, is_pdf

            if is_pdf(path):
                html_to_pdf(page, path)
            else:
                from ...core.publish.report import write_report

                write_report(path, page)
        except (ValueError, OSError) as e:
            where = f"{e.filename}: " if isinstance(e, OSError) and e.filename else ""
            self.window.show_error("Release report", f"{where}{getattr(e, 'strerror', None) or e}")
            return False
        return True

    def ask_report_path(self, start: str, private_available: bool) -> tuple[str, bool] | None:
        """The default ``ask_report_path``: the report dialog (where, and whether with the private section)."""
        from ..dialogs.report_dialog import ReportDialog

        dlg = ReportDialog(start, private_available, self.window)
        with deleted_after(dlg):
            return dlg.answer() if dlg.exec() == ReportDialog.DialogCode.Accepted else None


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
