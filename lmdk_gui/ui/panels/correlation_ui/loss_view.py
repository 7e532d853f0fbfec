"""The right side of the tab: the status line, the loss plot (following the series plot's zoom) and the table
of maxima, drawn from the tab's cached curves."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ....core.kernel.settings import ALL_SCHEMES, SCHEME_LABELS
from ...views.axes import TimeAxis, format_time
from ...views.theme import EPSILON_LINE_COLOR, SCHEME_COLORS, count_noun
from .curves import CurveResult

STALE_COLOR = (175, 175, 175)
TABLE_COLUMNS = ("Scheme", "Worst loss with\ncorrelation", "Under the model\nyou chose", "Without\ncorrelation",
                 "vs without", "at")
#: the precise terms, for the column headers' tooltips
TABLE_TIPS = ("", "The maximum landmark temporal privacy loss (TPL, Definition 10 of the thesis), in nats like ε",
              "Whether that loss stays within ε under the correlation model chosen on the left",
              "The maximum without correlation: the landmark sum, what the status bar's verdict checks", "",
              "Where the maximum is reached")


def _span(times: np.ndarray) -> float:
    return float((times[-1] - times[0]) / np.timedelta64(1, "s")) if times.size > 1 else 0.0


class LossView:
    """The plot and table of :class:`~.tab.CorrelationTab` (a part of it, as :class:`~.model_choice.ModelChoice`
    is). It draws the tab's ``_cache`` for the shown schemes (``_wanted``), grey where a curve is not current
    (``_entry_current``)."""

    def _build_view(self) -> QWidget:
        """The status line over the plot and, under it, the table of maxima (a splitter between them)."""
        w = QWidget()
        lay = QVBoxLayout(w)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.status_label = QLabel()
        self.status_label.setObjectName("correlationStatus")
        # never widens the window; wraps rather than cutting the landmarks and ε off at 1280×800 (the tooltip
        # has it all too)
        self.status_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.status_label.setWordWrap(True)
        lay.addWidget(self.status_label)

        vsplit = QSplitter(Qt.Orientation.Vertical)
        vsplit.setObjectName("correlationViewSplitter")
        vsplit.addWidget(self._build_plot())
        vsplit.addWidget(self._build_table())
        vsplit.setStretchFactor(0, 4)
        vsplit.setStretchFactor(1, 1)
        vsplit.setCollapsible(0, False)
        lay.addWidget(vsplit, 1)
        self._fit_table_height()
        return w

    def _build_plot(self) -> pg.PlotWidget:
        """The loss plot: per scheme its curve, the curve without correlation and the maximum's dot; the ε
        line; the hover read-out and its cursor."""
        self.time_axis = TimeAxis(orientation="bottom")
        self.plot = pg.PlotWidget(axisItems={"bottom": self.time_axis})
        self.plot.setObjectName("correlationPlot")
        pi = self.plot.getPlotItem()
        pi.showGrid(x=True, y=True, alpha=0.15)
        pi.setLabel("left", "privacy loss at each event (scale of ε)")
        pi.getAxis("left").setToolTip("Landmark temporal privacy loss (TPL, thesis Definition 10), in nats like ε")
        pi.setMouseEnabled(x=True, y=False)
        pi.hideButtons()
        # Long series: draw about two points per pixel column (peaks kept). Set on the PlotItem: its
        # addItem() overwrites a PlotDataItem's own downsampling/clip settings with the PlotItem's.
        pi.setDownsampling(auto=True, mode="peak")
        pi.setClipToView(True)
        self.vb = pi.getViewBox()
        self._add_curves(pi)
        self.eps_line = pg.InfiniteLine(angle=0, movable=False,
                                        pen=pg.mkPen(EPSILON_LINE_COLOR, width=2, style=Qt.PenStyle.DashDotLine),
                                        label="ε = 1", labelOpts={"position": 0.03, "color": (90, 90, 90),
                                                                   "anchors": [(0, 1), (0, 1)]})
        pi.addItem(self.eps_line, ignoreBounds=True)
        self.info = pg.TextItem(anchor=(0, 0), color=(20, 20, 20), fill=pg.mkBrush(255, 255, 250, 235),
                                border=pg.mkPen(180, 180, 180))
        self.info.setZValue(200)
        self.info.setFont(QFont("", 8))
        self.info.hide()
        pi.addItem(self.info, ignoreBounds=True)
        self.cursor = pg.InfiniteLine(angle=90, movable=False,
                                      pen=pg.mkPen((150, 150, 150), style=Qt.PenStyle.DotLine))
        self.cursor.hide()
        pi.addItem(self.cursor, ignoreBounds=True)
        self._hover = pg.SignalProxy(self.plot.scene().sigMouseMoved, rateLimit=30, slot=self._on_hover)
        return self.plot

    def _add_curves(self, pi: pg.PlotItem) -> None:
        """Each scheme's three items (empty until :meth:`_redraw` draws them)."""
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.nc_curves: dict[str, pg.PlotDataItem] = {}
        self.max_markers: dict[str, pg.PlotDataItem] = {}
        for scheme in ALL_SCHEMES:
            nc = pg.PlotDataItem()
            c = pg.PlotDataItem()
            mk = pg.PlotDataItem(pen=None, symbol="o", symbolSize=8)
            pi.addItem(nc)
            pi.addItem(c)
            pi.addItem(mk)
            nc.setZValue(1)
            c.setZValue(2)
            mk.setZValue(3)
            self.curves[scheme] = c
            self.nc_curves[scheme] = nc
            self.max_markers[scheme] = mk

    def _build_table(self) -> QTableWidget:
        """A row per scheme (hidden when not shown), filled by :meth:`_fill_table`."""
        self.table = QTableWidget(len(ALL_SCHEMES), len(TABLE_COLUMNS))
        self.table.setObjectName("correlationTable")
        self.table.setHorizontalHeaderLabels(TABLE_COLUMNS)
        for c, tip in enumerate(TABLE_TIPS):
            if tip:
                self.table.horizontalHeaderItem(c).setToolTip(tip)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        h = self.table.horizontalHeader()
        h.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        h.setStretchLastSection(True)
        h.setMinimumSectionSize(56)
        bold = QFont()
        bold.setBold(True)
        for r, scheme in enumerate(ALL_SCHEMES):
            it = QTableWidgetItem(SCHEME_LABELS[scheme])
            it.setFont(bold)
            self.table.setItem(r, 0, it)
            for c in range(1, len(TABLE_COLUMNS)):
                cell = QTableWidgetItem("—")
                cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, cell)
        self.table.setToolTip("Maximum over all events of each scheme's landmark temporal privacy loss, next to "
                              "ε and to the same maximum without correlation (the landmark sum)")
        return self.table

    def _fit_table_height(self) -> None:
        shown = sum(not self.table.isRowHidden(r) for r in range(self.table.rowCount()))
        head = self.table.horizontalHeader().sizeHint().height()
        self.table.setMinimumHeight(head + 22 * max(shown, 1) + 6)
        self.table.setMaximumHeight(head + 22 * len(ALL_SCHEMES) + 6)

    # =============================================================================== view options
    def _on_follow(self, on: bool) -> None:
        if on:
            self._sync_from_series()
        else:
            self._fit_y()

    def _on_log(self, on: bool) -> None:
        self.plot.getPlotItem().setLogMode(y=on)
        self._redraw()

    def _sync_from_series(self) -> None:
        if not self.follow_check.isChecked() or self.session.series is None:
            return
        (x0, x1), _ = self.window_.series_plot.vb.viewRange()
        self._set_x(x0, x1)

    def _set_x(self, x0: float, x1: float) -> None:
        self._syncing_x = True
        try:
            self.vb.setXRange(x0, x1, padding=0)
        finally:
            self._syncing_x = False
        self._fit_y()

    def _on_series_range(self, _vb, rng) -> None:
        if self._syncing_x or not self.follow_check.isChecked() or not self.isVisible():
            return
        self._set_x(float(rng[0]), float(rng[1]))

    def _on_own_range(self, _vb, rng) -> None:
        if self._syncing_x:
            return
        self._fit_y()
        if self.follow_check.isChecked() and self.isVisible():
            self._syncing_x = True
            try:
                self.window_.series_plot.vb.setXRange(float(rng[0]), float(rng[1]), padding=0)
            finally:
                self._syncing_x = False

    # =============================================================================== drawing
    def _redraw(self) -> None:
        """Every shown scheme's curves from the cache (grey when not current), the title, table and status."""
        self._redraw_pending = False
        s = self.session
        log = self.log_check.isChecked()
        eps = s.epsilon
        self.eps_line.setPos(math.log10(eps) if log else eps)
        self.eps_line.label.setFormat(f"ε = {eps:g}")
        preview_current = s.series is not None and s.is_preview_current()
        shown = set(self._wanted()) if s.series is not None else set()
        show_nc = self.nocorr_check.isChecked()
        self._y_cache = {}
        keys: list[str] = []
        for scheme in ALL_SCHEMES:
            e = self._cache.get(scheme)
            if scheme not in shown or e is None or s.series is None or e.tpl.size != s.n:
                for item in (self.curves[scheme], self.nc_curves[scheme], self.max_markers[scheme]):
                    item.hide()
                continue
            fresh = preview_current and self._entry_current(scheme)
            color = SCHEME_COLORS[scheme] if fresh else STALE_COLOR
            self._draw_scheme(scheme, e, color, fresh, log, show_nc)
            r, g, b = color
            keys.append(f"<span style='color:rgb({r},{g},{b})'><b>━ {SCHEME_LABELS[scheme]}</b></span>")
        self._set_title(keys, show_nc, eps)
        self._fill_table(shown, preview_current)
        self._fit_y()
        self._update_status()

    def _draw_scheme(self, scheme: str, e: CurveResult, color: tuple, fresh: bool, log: bool, show_nc: bool) -> None:
        """One scheme's curve, its curve without correlation (``show_nc``) and, when ``fresh``, its maximum's
        dot, in ``color``; the curves' values go into the y range's cache (``_y_cache``)."""
        c, nc, mk = self.curves[scheme], self.nc_curves[scheme], self.max_markers[scheme]
        tpl, ncv = (self._positive(e.tpl), self._positive(e.no_corr)) if log else (e.tpl, e.no_corr)
        pen = pg.mkPen(color, width=2 if fresh else 1.5)
        nc_pen = pg.mkPen(color, width=1.2, style=Qt.PenStyle.DashLine)
        # Greying out only changes pens; data is set again only when it changed (10⁵ points cost).
        drawn = self._drawn.get(scheme)
        if drawn is not None and drawn[0] is e and drawn[1] == log:
            c.setPen(pen)
            nc.setPen(nc_pen)
        else:
            x = np.arange(e.tpl.size, dtype=np.float64)
            c.setData(x, tpl, pen=pen)
            nc.setData(x, ncv, pen=nc_pen)
            self._drawn[scheme] = (e, log)
        c.show()
        self._y_cache[scheme] = e.tpl
        if show_nc:
            nc.show()
            self._y_cache[scheme + ":nc"] = e.no_corr
        else:
            nc.hide()
        if fresh and e.tpl.size:
            r = e.max_row
            mk.setData([float(r)], [float(tpl[r])], symbolBrush=pg.mkBrush(color), symbolPen=pg.mkPen("w", width=1))
            mk.show()
        else:
            mk.hide()

    def _set_title(self, keys: list[str], show_nc: bool, eps: float) -> None:
        """The legend lives in the title line: an in-plot legend would cover the curves' tops, where the
        maxima are."""
        if not keys:
            self.plot.getPlotItem().setTitle("Landmark temporal privacy loss per event", size="9pt")
            return
        grey = "rgb(90,90,90)"
        style = [f"<span style='color:{grey}'>╌ without corr.</span>"] if show_nc else []
        style.append(f"<span style='color:{grey}'>─·─ ε</span>")
        self.plot.getPlotItem().setTitle("&nbsp;&nbsp;".join(keys + style), size="9pt")

    @staticmethod
    def _positive(v: np.ndarray) -> np.ndarray:
        pos = v[v > 0]
        floor = float(pos.min()) if pos.size else 1e-12
        return np.maximum(v, floor)

    def _fit_y(self) -> None:
        if not self._y_cache:
            eps = self.session.epsilon
            lo, hi = (eps / 10, eps * 2) if self.log_check.isChecked() else (0.0, eps * 1.15)
        else:
            (x0, x1), _ = self.vb.viewRange()
            n = next(iter(self._y_cache.values())).size
            a, b = max(0, int(math.floor(x0))), min(n - 1, int(math.ceil(x1)))
            if a > b:
                a, b = 0, n - 1
            hi = self.session.epsilon
            lo = self.session.epsilon
            for v in self._y_cache.values():
                seg = v[a:b + 1]
                if seg.size:
                    hi = max(hi, float(seg.max()))
                    pos = seg[seg > 0]
                    if pos.size:
                        lo = min(lo, float(pos.min()))
            lo = 0.0 if not self.log_check.isChecked() else lo
        if self.log_check.isChecked():
            lo = max(lo, 1e-12)
            self.vb.setYRange(math.log10(lo) - 0.1, math.log10(max(hi, lo * 1.01)) + 0.12, padding=0)
        else:
            self.vb.setYRange(0.0, hi * 1.1 if hi > 0 else 1.0, padding=0)

    def _fill_table(self, shown: set[str], preview_current: bool) -> None:
        s = self.session
        eps = s.epsilon
        grey = QBrush(QColor(*STALE_COLOR))
        for r, scheme in enumerate(ALL_SCHEMES):
            self.table.setRowHidden(r, scheme not in shown)
            e = self._cache.get(scheme)
            fresh = preview_current and self._entry_current(scheme)
            name = self.table.item(r, 0)
            name.setForeground(QBrush(QColor(*SCHEME_COLORS[scheme])) if fresh else grey)
            cells = [self.table.item(r, c) for c in range(1, len(TABLE_COLUMNS))]
            if e is None or s.series is None or e.tpl.size != s.n:
                for cell in cells:
                    cell.setText("…")
                    cell.setForeground(grey)
                    cell.setToolTip("")
                continue
            m, m0, row = e.max_tpl, e.max_no_corr, e.max_row
            exceeds = m > eps * (1 + 1e-9)
            at = format_time(s.series.times[row], _span(s.series.times)) if row >= 0 else "—"
            cells[0].setText(f"{m:.4g}")
            cells[1].setText(f"{'✘' if exceeds else '✔'} loss ≤ {m / eps:.3g}·ε")
            cells[1].setToolTip(f"Under the correlation model you chose, the worst loss is {m:.6g} = "
                                f"{m / eps:.3g}·ε, which {'exceeds' if exceeds else 'is within'} ε = {eps:g}. "
                                "Landmark privacy for independent events (status bar) is a different check.")
            cells[2].setText(f"{m0:.4g}")
            cells[3].setText(f"× {m / m0:.3g}" if m0 > 0 else f"+{m - m0:.3g}")
            cells[3].setToolTip(f"correlation adds {m - m0:.6g} (on the scale of ε) to the maximum without it "
                                f"(the landmark sum, {m0:.6g})")
            cells[4].setText(at)
            cells[4].setToolTip(f"event {row} (the dot on the curve)")
            for cell in cells:
                cell.setForeground(grey if not fresh else QBrush(QColor(20, 20, 20)))
            if fresh:
                cells[1].setForeground(QBrush(QColor(192, 0, 0) if exceeds else QColor(0, 128, 0)))
            f = cells[1].font()
            f.setBold(fresh)
            cells[1].setFont(f)
        self._fit_table_height()

    def _update_status(self) -> None:
        s = self.session
        if s.series is None:
            self.status_label.setText("Open a series to see its temporal privacy loss.")
            self.status_label.setStyleSheet("")
            return
        if not self._wanted() and s.is_preview_current():
            self.status_label.setText("No scheme is shown (Settings › Show schemes).")
            self.status_label.setStyleSheet("")
            return
        current = self.is_current()
        used = {int(self._cache[x].release.landmarks.size) for x in self._wanted() if x in self._cache}
        k = used.pop() if len(used) == 1 else int(s.landmarks.size)
        lm = count_noun(k, "landmark")
        if current and k > s.landmarks.size:  # the releases protect L' ⊇ L (dummy landmarks)
            lm += f" (incl. {k - int(s.landmarks.size):,} dummies)"
        text = f"under the correlation model you chose ({self._model.description}) · {lm} · ε = {s.epsilon:g}"
        if current:
            self.status_label.setText(f"✔ up to date · {text}")
            self.status_label.setStyleSheet("color: #2a2a2a;")
        else:
            self.status_label.setText(f"⟳ updating… (grey = out of date) · {text}")
            self.status_label.setStyleSheet("color: #b35900; font-weight: bold;")
        self.status_label.setToolTip(self.status_label.text())

    # =============================================================================== hover
    def _on_hover(self, evt) -> None:
        pos = evt[0]
        s = self.session
        if s.series is None or not self.vb.sceneBoundingRect().contains(pos) or not self._y_cache:
            self.info.hide()
            self.cursor.hide()
            return
        row = int(round(self.vb.mapSceneToView(pos).x()))
        if not 0 <= row < s.n:
            self.info.hide()
            self.cursor.hide()
            return
        t = str(np.datetime_as_string(s.series.times[row], unit="s")).replace("T", " ")
        lines = [f"<b>event {row}</b> · {t}"]
        for scheme in self._wanted():
            e = self._cache.get(scheme)
            if e is None or e.tpl.size != s.n:
                continue
            r, g, b = SCHEME_COLORS[scheme]
            lines.append(f"<span style='color:rgb({r},{g},{b})'>{SCHEME_LABELS[scheme]}</span>: "
                         f"{e.tpl[row]:.4g} (without corr. {e.no_corr[row]:.4g})")
        self.info.setHtml("<br>".join(lines))
        (x0, _x1), (_y0, y1) = self.vb.viewRange()
        self.info.setPos(x0, y1)
        self.info.show()
        self.cursor.setPos(row)
        self.cursor.show()
