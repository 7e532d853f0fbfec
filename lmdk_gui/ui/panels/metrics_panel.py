"""The metrics table: one row per scheme with the guarantee check and the errors.

With dummy landmarks on (issue 6), every column but the last two describes the release *with* dummies —
what the export would publish: the landmark sum is checked against ``L'`` and ``ε − ε_sel`` — and two more
columns show the MAE of the same scheme *without* dummies, so the cost of hiding the landmarks reads along
each row. Without dummies those two columns are hidden.

The verdict column says what it speaks of: landmark privacy for independent events (the landmark-sum
check); the loss under a temporal correlation model is the Temporal correlation tab's, and says so there.

With denoising on (issue 12, the settings' ``denoise``), the last two columns show the error of the same
releases after post-processing (this seed, and the average over the runs); they are hidden when it is off.

Issue 44: every average comes with its spread, the 10th–90th percentile of the runs' errors ("0.99 (0.97–1)";
with dummies each run draws its own dummies, as each export does, while "one draw" is the preview's single
draw). The last row is the yardstick, the error of publishing one constant (the series' median, the track's
geometric median, the most frequent category: :func:`~lmdk_gui.core.analysis.metrics.constant_error`), computed on the
true data and never published; a scheme whose expected error (of what the export publishes: denoised when
Denoise is on) is not clearly below it (:func:`~lmdk_gui.core.analysis.advice.informative`) has that average greyed,
with a tooltip saying so.
"""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QTableWidgetItem

from ...core.analysis import advice
from ...core.analysis.metrics import known_constant_error, readable_number, spread_text, unit_label
from ...core.kernel.settings import ALL_SCHEMES, SCHEME_LABELS
from ..views.tables import FittedTable
from ..views.theme import SCHEME_COLORS
from ..window.session import Session

COLUMNS = ("Scheme", "Landmark sum\n(max over t)", "Landmark privacy\n(independent events)", "Mean budget\nper event",
           "Approximated", "MAE (this seed)",
           "MAE (avg)", "MAE without dummies\n(this seed)", "MAE without dummies\n(avg)",
           "MAE denoised\n(this seed)", "MAE denoised\n(avg)")
#: units up to this long follow a header's second line; longer ones get a line of their own
UNIT_INLINE_MAX = 8
#: the columns shown only with dummy landmarks on
PLAIN_COLUMNS = (7, 8)
#: the columns shown only with denoising on (the same releases as columns 5 and 6, post-processed)
DENOISED_COLUMNS = (9, 10)


fmt = readable_number  # (the metrics' numbers are written as everywhere else)

#: the yardstick's row, after the schemes'
CONSTANT_ROW = len(ALL_SCHEMES)
CONSTANT_LABELS = {"numeric": "Constant: median", "location": "Constant: median point",
                   "categorical": "Constant: mode"}
#: an average no better than the constant's error is written in this colour
UNINFORMATIVE_COLOR = QColor(150, 150, 150)


def avg_text(mean: float, lo: float, hi: float) -> str:
    """An R-run average with its 10th–90th percentile band, three and two significant digits ("0.405 (0.26–0.55)"):
    eleven columns with dummies and denoising share 1280 pixels, and the band is a spread, not a measurement."""
    return spread_text(mean, lo, hi, 3, 2)


class MetricsTable(FittedTable):
    def __init__(self, session: Session, parent=None) -> None:
        super().__init__(len(ALL_SCHEMES) + 1, len(COLUMNS), parent, min_section=70)
        self.session = session
        self._headers_for: tuple | None = None  # what the headers say now (_update_headers)
        self.setObjectName("metricsTable")
        self.setHorizontalHeaderLabels(COLUMNS)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 3)  # compact: plots need the room
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
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
        self._build_constant_row()
        for c in PLAIN_COLUMNS:
            self.setColumnHidden(c, True)
        session.previewChanged.connect(self.refresh)
        session.denoisedChanged.connect(self.refresh_denoised)
        session.metricsChanged.connect(self.refresh_average)
        session.seriesChanged.connect(self._update_headers)
        session.resolutionChanged.connect(self._update_headers)
        self.setMinimumHeight(self._rows_height())

    def _build_constant_row(self) -> None:
        """The yardstick's row: not a scheme, never selectable, grey italics."""
        italic = QFont()
        italic.setItalic(True)
        for c in range(len(COLUMNS)):
            it = QTableWidgetItem("—" if c else CONSTANT_LABELS["numeric"])
            it.setFlags(Qt.ItemFlag.NoItemFlags)
            it.setFont(italic)
            if c:
                it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.setItem(CONSTANT_ROW, c, it)
        self.item(CONSTANT_ROW, 2).setText("not published")

    def yardstick(self) -> float:
        """The error of publishing one constant for the open series (NaN with none, or until a worker has
        computed it: a later stage does for a large series, core/engine/preview.py)."""
        s = self.session.release_series  # (the periods at a coarser resolution)
        y = None if s is None else known_constant_error(s)
        return float("nan") if y is None else y

    def _fill_constant_row(self) -> None:
        s = self.session.release_series
        if s is None:
            return
        y = self.yardstick()
        unit = unit_label(s)
        value = "being computed" if math.isnan(y) and s.n else advice.fmt(y, unit)
        tip = (f"The error of publishing {advice.CONSTANT_LABEL[s.kind]} at every event ({value}): "
               f"the yardstick. A release whose expected error is not clearly below it (≤ "
               f"{advice.INFORMATIVE_RATIO:g} × this) tells no more than that one number. Computed on the true "
               "data as guidance; never published.")
        self.item(CONSTANT_ROW, 0).setText(CONSTANT_LABELS[s.kind])
        for c in range(len(COLUMNS)):
            self.item(CONSTANT_ROW, c).setToolTip(tip)
        for c in (5, 6, 7, 8, 9, 10):
            self.item(CONSTANT_ROW, c).setText("computing…" if math.isnan(y) and s.n else fmt(y))

    def fit_columns(self) -> None:
        super().fit_columns()
        # a header that wraps to more lines at the new widths makes the table taller: the dock keeps every row
        # (at 1280×800 the Balanced row went under the dock's edge)
        if hasattr(self, "session"):
            self.setMinimumHeight(self._rows_height())

    def sizeHint(self):  # noqa: N802 - Qt naming
        # Just the rows: the dock would otherwise take Qt's default table height from the plots.
        hint = super().sizeHint()
        hint.setHeight(self._rows_height())
        return hint

    def _rows_height(self) -> int:
        return (self.verticalHeader().length() + self.horizontalHeader().sizeHint().height()
                + 2 * self.frameWidth() + 2)

    def with_dummies(self) -> bool:
        """Whether the table currently shows releases with dummy landmarks (and the columns without)."""
        return self.session.dummy_selection is not None

    def _update_headers(self) -> None:
        s = self.session.release_series
        u = f"({unit_label(s)})" if s is not None else ""
        runs = self.session.runs
        dm = self.with_dummies()
        key = (u, runs, dm, self.session.settings.denoise)
        if key == self._headers_for:  # (made again at every preview, they relaid and repainted the header)
            return
        self._headers_for = key
        # a long unit ("(mismatch rate)", a column's own unit) on a line of its own: after "this seed" it made
        # the headers wider than their columns at 1280×800, cut at both ends
        after = ("\n" if len(u) > UNIT_INLINE_MAX else " ") + u if u else ""
        verdict = QTableWidgetItem("Landmark privacy\n(independent events)")
        verdict.setToolTip("Whether (ε, L)-landmark privacy holds: the budgets over the landmarks plus any one "
                           "regular event sum to at most ε, assuming events are independent. For correlated "
                           "events see the Temporal correlation tab.")
        self.setHorizontalHeaderItem(2, verdict)
        mean = QTableWidgetItem("Mean budget\nper event")
        mean.setToolTip("The mean of the per-event budgets ε_t")
        self.setHorizontalHeaderItem(3, mean)
        band = "avg (p10–p90)"
        if dm:
            self.setHorizontalHeaderItem(1, QTableWidgetItem("Landmark sum with dummies\n(≤ ε left for release)"))
            self.setHorizontalHeaderItem(5, QTableWidgetItem(f"MAE with dummies\none draw{after}"))
            self.setHorizontalHeaderItem(6, QTableWidgetItem(f"MAE with dummies\n{band}{after}"))
        else:
            self.setHorizontalHeaderItem(1, QTableWidgetItem("Landmark sum\n(max over t)"))
            self.setHorizontalHeaderItem(5, QTableWidgetItem(f"MAE this seed\n{u}"))
            self.setHorizontalHeaderItem(6, QTableWidgetItem(f"MAE {band}\nof {runs} runs {u}"))
        self.setHorizontalHeaderItem(7, QTableWidgetItem(f"MAE without dummies\nthis seed{after}"))
        self.setHorizontalHeaderItem(8, QTableWidgetItem(f"MAE without dummies\n{band}{after}"))
        spread_tip = (f"Mean over {runs} simulated releases, and in brackets the 10th–90th percentile of their "
                      "errors: where one release's error is likely to land")
        if dm:
            spread_tip += " (each run draws its own dummies, as each export does)"
            self.horizontalHeaderItem(5).setToolTip(
                "The preview's one draw of the dummies and the noise; an export draws its own, and the average "
                "column draws anew in every run")
        for c in (6, 8):
            self.horizontalHeaderItem(c).setToolTip(spread_tip)
        for c in PLAIN_COLUMNS:
            self.setColumnHidden(c, not dm)
        dn = self.session.settings.denoise
        self.setHorizontalHeaderItem(9, QTableWidgetItem(f"MAE denoised\nthis seed{after}"))
        self.setHorizontalHeaderItem(10, QTableWidgetItem(f"MAE denoised\n{band}{after}"))
        for c in DENOISED_COLUMNS:
            self.setColumnHidden(c, not dn)
            self.horizontalHeaderItem(c).setToolTip(
                "The same release after denoising (post-processing of the released values with the public "
                "settings only): the guarantee is unchanged, and anyone who reads the release can do this")
        if dm:
            self.horizontalHeaderItem(1).setToolTip(
                "Checked against L' (the landmarks plus the dummies) and the release's ε − ε_sel (the ε left "
                "after choosing the dummies, ε_sel); with the ε_sel of the selection that makes the release "
                "(ε, L)-landmark private")
            for c in PLAIN_COLUMNS:
                self.horizontalHeaderItem(c).setToolTip("The same scheme on the true landmarks only, with all "
                                                        "of ε: what hiding the landmarks costs")
        self.fit_columns()

    def selected_scheme(self) -> str | None:
        rows = self.selectionModel().selectedRows() if self.selectionModel() else []
        return ALL_SCHEMES[rows[0].row()] if rows and rows[0].row() < len(ALL_SCHEMES) else None

    def refresh(self) -> None:
        self._update_headers()
        self._fill_constant_row()
        pv = self.session.preview
        plain = self.session.preview_plain
        eps = self.session.epsilon
        sel = self.session.dummy_selection
        dm = sel is not None
        for r, s in enumerate(ALL_SCHEMES):
            p = pv.get(s)
            if p is None:
                continue
            g = p.guarantee
            against = f"{g.epsilon:.4g}" if dm else f"ε = {eps:g}"
            self.item(r, 1).setText(f"{g.worst:.4f} {'≤' if g.holds else '>'} {against}")
            ok = g.holds
            it = self.item(r, 2)
            it.setText("✔ holds" if ok else "✘ fails")
            it.setForeground(QBrush(QColor(0, 130, 0) if ok else QColor(200, 0, 0)))
            tip = g.as_text() if ok else (g.reason or g.as_text())
            if dm:
                tip = (f"Checked against L' ({sel.landmarks.size:,} events: the landmarks and "
                       f"{sel.dummies.size:,} dummies) and ε − ε_sel = {g.epsilon:.6g}: {tip}")
                self.item(r, 1).setToolTip(tip)
            else:
                self.item(r, 1).setToolTip("")
            it.setToolTip(tip)
            self.item(r, 3).setText(fmt(p.release.mean_budget))
            self.item(r, 4).setText(f"{100 * p.release.approximated_share:.1f}%")
            self.item(r, 5).setText(fmt(p.mae))
            if p.relative is not None and not math.isnan(p.relative):
                self.item(r, 5).setToolTip(f"relative error: {p.relative:.3g} × the mean absolute value")
            self.item(r, 6).setText("computing…" if self.session.average is None else
                                    self.item(r, 6).text())
            self.item(r, 10).setText("computing…" if self.session.average is None else self.item(r, 10).text())
            q = plain.get(s)
            self.item(r, 7).setText(fmt(q.mae) if dm and q is not None else "—")
            self.item(r, 8).setText("computing…" if dm and self.session.average_plain is None else
                                    self.item(r, 8).text())
        self.refresh_denoised()
        self.refresh_average()

    def refresh_denoised(self) -> None:
        """The denoised error of this seed: a later stage of the preview (Session.denoisedChanged)."""
        self._fill_constant_row()  # (that stage computes the yardstick of a large series)
        pending = self.session.settings.denoise and not self.session.is_denoised_current()
        for r, s in enumerate(ALL_SCHEMES):
            p = self.session.preview.get(s)
            if p is not None:
                self.item(r, 9).setText("computing…" if pending else
                                        fmt(p.mae_denoised) if p.denoised_scored else "—")

    def refresh_average(self) -> None:
        avg = self.session.average
        if avg is None:
            return
        self._update_headers()
        plain = self.session.average_plain
        self._fill_constant_row()
        yardstick = self.yardstick()
        dn = self.session.settings.denoise
        for r, s in enumerate(ALL_SCHEMES):
            st = avg.get(s)
            if st is None:
                continue
            self.item(r, 6).setText(avg_text(st.mean, st.p10, st.p90))
            self.item(r, 10).setText(avg_text(st.mean_denoised, st.p10_denoised, st.p90_denoised)
                                     if not math.isnan(st.mean_denoised) else "—")
            q = plain.get(s) if plain is not None else None
            self.item(r, 8).setText(avg_text(q.mean, q.p10, q.p90) if q is not None and self.with_dummies()
                                    else "—")
            self._mark_informative(r, st.mean_denoised if dn else st.mean, 10 if dn else 6, yardstick)
        self.fit_columns()

    def _mark_informative(self, row: int, error: float, column: int, yardstick: float) -> None:
        """Grey the average of what the export publishes when it is no better than one constant."""
        if math.isnan(error):
            return
        ok = advice.informative(error, yardstick)
        for c in (6, 10):
            it = self.item(row, c)
            it.setForeground(QBrush(self.palette().text().color()) if ok or c != column else
                             QBrush(UNINFORMATIVE_COLOR))
            it.setToolTip("" if ok or c != column else
                          f"No better than publishing one constant ({fmt(yardstick)}, the last row): "
                          f"{advice.UNINFORMATIVE_HELP}")
