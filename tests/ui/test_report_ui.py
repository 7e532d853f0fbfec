"""File › Save release report… (issue 45): enabled after an export, HTML or PDF by extension, the private
section by default with a way to leave it out, and the export-finished box's button."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox, QPushButton


def _export(qtbot, window, out):
    window.session.add_range(100, 140)
    job = window.export_release(out, "uniform", denoise=False)
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    return job


def test_report_action_waits_for_an_export_then_writes_the_private_report(qtbot, window, tmp_path):
    action = window.findChild(QAction, "saveReportAction")
    assert action in window.file_menu.actions() and not action.isEnabled()
    _export(qtbot, window, tmp_path / "release.csv")
    assert action.isEnabled()
    asked = []
    target = tmp_path / "for the board.html"
    window.ask_report_path = lambda start, private: asked.append((start, private)) or (str(target), True)
    action.trigger()
    assert asked == [(str(tmp_path / "release-report.html"), True)]  # private offered, and on by default
    html = target.read_text(encoding="utf-8")
    assert "PRIVATE — DO NOT PUBLISH" in html and "energy_hue_2013_jan.csv" in html
    assert "41; rule: none recorded" in html  # the export's own 41 landmarks (rows 100-140)
    assert "private" in window.statusBar().currentMessage().lower()


def test_leaving_the_private_section_out_gives_the_public_report(qtbot, window, tmp_path):
    _export(qtbot, window, tmp_path / "release.csv")
    target = tmp_path / "public.html"
    window.ask_report_path = lambda start, private: (str(target), False)
    assert window.save_release_report()
    html = target.read_text(encoding="utf-8")
    assert "PRIVATE" not in html and "energy_hue_2013_jan" not in html
    assert "<svg" in html and "release.csv" in html


def test_pdf_by_extension_and_cancel_writes_nothing(qtbot, window, tmp_path):
    _export(qtbot, window, tmp_path / "release.csv")
    window.ask_report_path = lambda start, private: None
    assert not window.save_release_report()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release.csv", "release.csv.json"]
    target = tmp_path / "report.pdf"
    window.ask_report_path = lambda start, private: (str(target), True)
    assert window.save_release_report()
    data = target.read_bytes()
    assert data.startswith(b"%PDF") and b"/Image" in data and len(data) > 20_000  # text and the figure
    # the release itself is never overwritten by a report
    window.ask_report_path = lambda start, private: (str(tmp_path / "release.csv"), True)
    assert not window.save_release_report() and "is the release" in window.last_error


def test_export_finished_box_offers_the_report(qtbot, window, tmp_path):
    out = tmp_path / "release.csv"
    _export(qtbot, window, out)
    window._export_message(str(out))
    box = window.findChild(QMessageBox, "exportDoneBox")
    button = box.findChild(QPushButton, "exportReportButton")
    target = tmp_path / "r.html"
    window.ask_report_path = lambda start, private: (str(target), False)
    button.click()
    qtbot.waitUntil(target.exists, timeout=30_000)
    assert "What was published" in target.read_text(encoding="utf-8")


def test_report_dialog_offers_the_private_section_only_with_the_data(qtbot, tmp_path):
    from lmdk_gui.ui.dialogs.report_dialog import ReportDialog

    start = str(tmp_path / "r-report.html")
    dlg = ReportDialog(start, True)
    qtbot.addWidget(dlg)
    assert dlg.answer() == (start, True)
    dlg.private.setChecked(False)
    assert dlg.answer() == (start, False)
    without = ReportDialog(start, False)
    qtbot.addWidget(without)
    assert not without.private.isEnabled() and without.answer() == (start, False)
