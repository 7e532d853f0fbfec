"""File › Save release report… (issue 45): the release report of the last export, as HTML or PDF.

The page is the core's (:mod:`lmdk_gui.core.publish.report`, the same as ``lmdk report``). The app has the
original data, so the private section (error against it, yardstick, landmarks, composed ε) is in by
default, with a box to leave it out for a report that can be handed on. The file's extension picks the
format: ``.pdf`` prints the page with Qt's own rich-text engine (:func:`html_to_pdf`; Qt WebEngine is not a
dependency), anything else writes the HTML page.
"""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QSizeF, Qt, QUrl
from PySide6.QtGui import QImage, QPageLayout, QPageSize, QPainter, QPdfWriter, QTextDocument
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from ...core.publish.writers import AtomicFile
from .common import path_row

FILTERS = "HTML page (*.html *.htm);;PDF document (*.pdf)"
_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
_SIZE = re.compile(r'viewBox="0 0 (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)"')


def default_report_path(release: str | Path) -> Path:
    """``release.csv`` → ``release-report.html`` next to it."""
    p = Path(release)
    return p.with_name(f"{p.stem}-report.html")


def is_pdf(path: str | Path) -> bool:
    return Path(path).suffix.lower() == ".pdf"


def report_document(html: str) -> QTextDocument:
    """The report page as a QTextDocument: its inline SVG figures drawn into images first (the rich-text
    engine shows images, not SVG)."""
    doc = QTextDocument()
    figures: list[tuple[str, QImage]] = []

    def to_image(m: re.Match) -> str:
        svg = m.group(0)
        size = _SIZE.search(svg)
        w, h = (float(size.group(1)), float(size.group(2))) if size else (880.0, 330.0)
        img = QImage(int(w * 2), int(h * 2), QImage.Format.Format_ARGB32)
        img.fill(Qt.GlobalColor.white)
        painter = QPainter(img)
        QSvgRenderer(QByteArray(svg.encode("utf-8"))).render(painter)
        painter.end()
        name = f"lmdk-figure-{len(figures)}.png"
        figures.append((name, img))
        return f'<img src="{name}" width="{int(w * 0.72)}" height="{int(h * 0.72)}">'

    body = _SVG.sub(to_image, html)
    for name, img in figures:
        doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(name), img)
    doc.setHtml(body)
    return doc


def html_to_pdf(html: str, path: str | Path) -> None:
    """Print the report page to an A4 PDF with Qt's rich-text engine; written whole or not at all."""
    doc = report_document(html)
    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buf)
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout.Unit.Millimeter)
    writer.setResolution(96)
    writer.setTitle("Release report")
    rect = writer.pageLayout().paintRectPixels(writer.resolution())
    doc.setPageSize(QSizeF(rect.width(), rect.height()))
    doc.print_(writer)
    del writer  # finishes the PDF into the buffer
    buf.close()
    with AtomicFile(path, "wb") as f:
        f.file.write(bytes(buf.data().data()))
        f.commit()


class ReportDialog(QDialog):
    """Where to save the report (``.html`` or ``.pdf``) and whether it carries the private section."""

    def __init__(self, start: str, private_available: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reportDialog")
        self.setWindowTitle("Save release report")
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("A page on what was published and how it is protected, for a board, an ethics "
                             "committee or the data subjects. Save as .html, or .pdf to print it."))
        self.path_edit = QLineEdit(start)
        self.path_edit.setObjectName("reportPath")
        lay.addWidget(path_row(self.path_edit, self._browse))
        self.private = QCheckBox("Include the private section: the release's error against your data, the "
                                 "landmarks, the composed ε (do not publish a report with it)")
        self.private.setObjectName("reportPrivate")
        self.private.setChecked(private_available)
        self.private.setEnabled(private_available)
        lay.addWidget(self.private)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save release report", self.path_edit.text(), FILTERS)
        if path:
            self.path_edit.setText(path)

    def _accept(self) -> None:
        if self.path_edit.text().strip():
            self.accept()

    def answer(self) -> tuple[str, bool]:
        return str(Path(self.path_edit.text().strip()).expanduser()), self.private.isChecked()
