"""The metrics table: one row per scheme with the guarantee check and the errors."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from ..core.metrics import unit_label
from ..core.settings import ALL_SCHEMES, SCHEME_LABELS
from .session import Session
from .theme import SCHEME_COLORS

COLUMNS = ("Scheme", "Landmark sum\n(max over t)", "Guarantee", "Mean ε_t", "Approximated", "MAE (this seed)",
           "MAE (avg)")


def fmt(x: float | None, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.{digits}g}"


class MetricsTable(QTableWidget):
    def __init__(self, session: Session, parent=None) -> None:
        super().__init__(len(ALL_SCHEMES), len(COLUMNS), parent)
        self.session = session
        self.setObjectName("metricsTable")
        self.setHorizontalHeaderLabels(COLUMNS)
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setAlternatingRowColors(True)
        h = self.horizontalHeader()
        h.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        h.setMinimumSectionSize(70)
        bold = QFont()
        bold.setBold(True)
        for r, s in enumerate(ALL_SCHEMES):
            item = QTableWidgetItem(SCHEME_LABELS[s])
            item.setForeground(QBrush(QColor(*SCHEME_COLORS[s])))
            item.setFont(bold)
            self.setItem(r, 0, item)
            for c in range(1, len(COLUMNS)):
                it = QTableWidgetItem("—")
                it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(r, c, it)
        session.previewChanged.connect(self.refresh)
        session.metricsChanged.connect(self.refresh_average)
        session.seriesChanged.connect(self._update_headers)
        self.setMinimumHeight(self.verticalHeader().length() + self.horizontalHeader().height() + 6)

    def _update_headers(self) -> None:
        s = self.session.series
        unit = f" ({unit_label(s)})" if s is not None else ""
        runs = self.session.runs
        self.setHorizontalHeaderItem(5, QTableWidgetItem(f"MAE this seed\n{unit.strip()}"))
        self.setHorizontalHeaderItem(6, QTableWidgetItem(f"MAE avg of {runs} runs\n{unit.strip()}"))

    def selected_scheme(self) -> str | None:
        rows = self.selectionModel().selectedRows() if self.selectionModel() else []
        return ALL_SCHEMES[rows[0].row()] if rows else None

    def refresh(self) -> None:
        self._update_headers()
        pv = self.session.preview
        eps = self.session.epsilon
        for r, s in enumerate(ALL_SCHEMES):
            p = pv.get(s)
            if p is None:
                continue
            g = p.guarantee
            self.item(r, 1).setText(f"{g.worst:.4f} {'≤' if g.holds else '>'} ε = {eps:g}")
            ok = g.holds
            it = self.item(r, 2)
            it.setText("✔ holds" if ok else "✘ violated")
            it.setForeground(QBrush(QColor(0, 130, 0) if ok else QColor(200, 0, 0)))
            it.setToolTip(g.as_text() if ok else (g.reason or g.as_text()))
            self.item(r, 3).setText(fmt(p.release.mean_budget))
            self.item(r, 4).setText(f"{100 * p.release.approximated_share:.1f}%")
            self.item(r, 5).setText(fmt(p.mae))
            if p.relative is not None and not math.isnan(p.relative):
                self.item(r, 5).setToolTip(f"relative error: {p.relative:.3g} × the mean absolute value")
            self.item(r, 6).setText("computing…" if self.session.average is None else
                                    self.item(r, 6).text())
        self.refresh_average()

    def refresh_average(self) -> None:
        avg = self.session.average
        if avg is None:
            return
        self._update_headers()
        for r, s in enumerate(ALL_SCHEMES):
            st = avg.get(s)
            if st is None:
                continue
            self.item(r, 6).setText(f"{fmt(st.mean)} ± {fmt(st.std, 2)}")
