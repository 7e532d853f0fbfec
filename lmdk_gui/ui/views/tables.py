"""Tables whose columns are as wide as what they show (headers, every line of them, and cells), the width left
shared equally. Equal stretched columns cut the longer headers and numbers at 1280×800 ("Landmark privacy
(independent events)", "0.999 ± 0.011"); in a narrower table every column gives up the same share of its need,
so the table still fills its width and no scroll bar hides the last row."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QHeaderView, QStyle, QTableWidget


class _WrappingHeader(QHeaderView):
    """A horizontal header whose labels wrap between words when their column is narrower than the text
    ("Event-level" after its hyphen), and which is as tall as its tallest wrapped label: a squeezed header
    was cut at both ends."""

    def __init__(self, parent=None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.setSectionsClickable(True)  # (as the header QTableView makes for itself)
        self.setHighlightSections(True)
        self.setDefaultAlignment(Qt.AlignmentFlag(int(Qt.AlignmentFlag.AlignCenter) | int(Qt.TextFlag.TextWordWrap)))

    def sectionSizeFromContents(self, logical: int) -> QSize:  # noqa: N802 - Qt naming
        size = super().sectionSizeFromContents(logical)
        # Not before the table is shown (its sections have Qt's default widths then, and a table sized from that
        # header kept its height), nor for a hidden section (its width is 0).
        if not self.isVisible() or self.isSectionHidden(logical):
            return size
        model = self.model()
        text = model.headerData(logical, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole) if model else None
        margin = self.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, self)
        width = self.sectionSize(logical) - 2 * margin
        if text and width > 0:
            font = model.headerData(logical, Qt.Orientation.Horizontal, Qt.ItemDataRole.FontRole) or self.font()
            fm, center = QFontMetrics(font), int(Qt.AlignmentFlag.AlignCenter)
            wrapped = fm.boundingRect(QRect(0, 0, width, 10_000), center | int(Qt.TextFlag.TextWordWrap), str(text))
            whole = fm.boundingRect(QRect(0, 0, 10_000, 10_000), center, str(text))
            # the lines wrapping adds, on top of the style's own height for the text's lines
            size.setHeight(size.height() + max(0, wrapped.height() - whole.height()))
        return size


class FittedTable(QTableWidget):
    """A QTableWidget that fits its columns on every resize and on :meth:`fit_columns` (after new contents)."""

    def __init__(self, rows: int = 0, columns: int = 0, parent=None, *, min_section: int = 60) -> None:
        super().__init__(rows, columns, parent)
        h = _WrappingHeader(self)
        self.setHorizontalHeader(h)
        h.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        h.setStretchLastSection(False)
        h.setMinimumSectionSize(min_section)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().resizeEvent(event)
        self.fit_columns()

    def _header_word_width(self, column: int) -> int:
        """The width of the header's longest word plus the header's margins: it cannot wrap below that."""
        item = self.horizontalHeaderItem(column)
        text = item.text() if item is not None else ""
        if not text:
            return 0
        fm = QFontMetrics(item.font() if item is not None else self.horizontalHeader().font())
        margin = self.horizontalHeader().style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None,
                                                              self.horizontalHeader())
        return max(fm.horizontalAdvance(w) for w in text.split()) + 2 * margin + 4

    def fit_columns(self) -> None:
        """Each shown column's need (header, cells, the minimum section) plus an equal share of the room left;
        every need scaled down alike when the room is short."""
        h = self.horizontalHeader()
        shown = [c for c in range(self.columnCount()) if not self.isColumnHidden(c)]
        if not shown:
            return
        need = [max(h.sectionSizeFromContents(c).width(), self.sizeHintForColumn(c), h.minimumSectionSize())
                for c in shown]
        room = self.viewport().width()
        spare = room - sum(need)
        if spare >= 0:
            widths = [w + spare // len(shown) + (1 if i < spare % len(shown) else 0) for i, w in enumerate(need)]
        else:
            # Short of room, a header wraps before a cell or a word is cut: each column keeps its floor (its
            # cells, its header's longest word) and gives up a share of what it needs beyond it. Scaled alike,
            # "Approximated" and "Constant: median" were cut while three-line headers kept spare room.
            floor = [min(n, max(self._header_word_width(c), self.sizeHintForColumn(c), h.minimumSectionSize()))
                     for c, n in zip(shown, need, strict=True)]
            give = sum(need) - sum(floor)
            if sum(floor) <= room and give > 0:
                widths = [f + (n - f) * (room - sum(floor)) // give for f, n in zip(floor, need, strict=True)]
            else:
                widths = [max(h.minimumSectionSize(), w * room // sum(need)) for w in need]
        for c, w in zip(shown, widths, strict=True):
            h.resizeSection(c, w)
        tall = h.height()
        h.headerDataChanged(Qt.Orientation.Horizontal, 0, self.columnCount() - 1)  # its height, at these widths
        if h.sizeHint().height() != tall:
            self.updateGeometries()
        if self.wordWrap():  # a cell that wraps at the new width needs its row's height again
            self.resizeRowsToContents()
