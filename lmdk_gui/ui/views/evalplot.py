"""Grouped bar chart of an evaluation (thesis Figure 5.1), shared by the Compare tab and ``lmdk evaluate
--plot``.

One group of bars per landmark percentage, one bar per scheme in the app's scheme colours, error bars of
±1 standard deviation over the runs, the y axis labelled with the data's units, a title naming the data
and ε, and a legend above the plot (so it never hides a bar).

Scale. User-level protection (ε/n per event) is orders of magnitude worse than everything else on numeric
and location data (≈ n times the event-level error), and so is Uniform at high landmark percentages. On a
linear axis the other bars then shrink to a few pixels, so ``scale="auto"`` switches to a log axis when the
bars span more than two decades; categorical mismatch rates (in [0, 1]) stay linear. The log axis is drawn
by hand (bars from a floor decade up to log10(MAE), ticks labelled with plain numbers) because pyqtgraph's
bar and error-bar items do not follow a plot's log mode.
"""

from __future__ import annotations

import html
import math
import os
import sys
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ...core.analysis.evaluation import THOUSANDS, EvaluationResult
from ...core.kernel.settings import SCHEME_LABELS
from .theme import SCHEME_COLORS, darker

SCALES = ("auto", "linear", "log")
#: decades spanned by the bars above which "auto" uses a log axis
AUTO_LOG_DECADES = 2.0
_GROUP_WIDTH = 0.82


def choose_log(result: EvaluationResult) -> bool:
    """Whether ``scale="auto"`` draws a log axis for this result."""
    if result.kind == "categorical":
        return False
    m = result.mean[np.isfinite(result.mean) & (result.mean > 0)]
    if m.size < 2:
        return False
    return math.log10(float(m.max()) / float(m.min())) > AUTO_LOG_DECADES


def y_axis_label(result: EvaluationResult) -> str:
    if result.kind == "categorical":
        return "mismatch rate"
    if result.kind == "location":
        return "mean error (m)"
    return f"MAE ({result.unit})" if result.unit else "MAE"


def group_label(target: float, actual: float, sep: str = " ") -> str:
    """``20%``, or ``20% → 37.8%`` when the landmark set is half a point or more off the target."""
    lab = f"{target:g}%"
    if abs(actual - target) >= 0.5:
        lab += f"{sep}→ {actual:.1f}%"
    return lab


def _plain(v: float) -> str:
    """10^k as a plain number: 0.001, 0.1, 1, 10, 1 000, 1 000 000, then 1e7…"""
    if v >= 1e7 or v < 1e-3:
        return f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-")
    if v >= 1:
        return f"{int(round(v)):,}".replace(",", THOUSANDS)
    return f"{v:g}"


def legend_html(schemes) -> str:
    """The legend's entries (a square in the scheme's colour and its name) as one rich text: a label wraps it
    between entries, never inside one, so six schemes fit a narrow chart on two lines (in one row of boxes
    they made the Compare tab wider than the window at 1152 px, and cut the names)."""
    entries = []
    for s in schemes:
        r, g, b = SCHEME_COLORS.get(s, (120, 120, 120))
        # (a non-breaking hyphen: <nobr> keeps Qt from breaking at spaces, not after "User-")
        name = html.escape(SCHEME_LABELS.get(s, s)).replace("-", "\u2011")
        entries.append(f"<nobr><span style='color:#{r:02x}{g:02x}{b:02x}; font-size:12pt'>\u25a0</span> {name}</nobr>")
    return "&nbsp;&nbsp; ".join(entries)


class EvaluationChart(QWidget):
    """Title, legend, the bar plot and a note, on white: what the tab shows and what the PNG holds.

    The texts are Qt labels (they wrap when the window is narrow), the bars a pyqtgraph plot.
    ``set_result(result, scale=...)`` draws; ``png_bytes()`` / ``save_png(path)`` export what is drawn.
    """

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("evaluationChart")
        self.setAutoFillBackground(True)
        pal = self.palette()
        pal.setColor(QPalette.ColorRole.Window, QColor("white"))
        pal.setColor(QPalette.ColorRole.WindowText, QColor("black"))
        self.setPalette(pal)
        self.result: EvaluationResult | None = None
        self.scale = "auto"
        self.log = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 8, 10, 6)
        lay.setSpacing(3)

        def label(obj: str, css: str) -> QLabel:
            lab = QLabel()
            lab.setObjectName(obj)
            lab.setWordWrap(True)
            lab.setAlignment(Qt.AlignmentFlag.AlignHCenter)
            lab.setStyleSheet(css)
            lab.setTextFormat(Qt.TextFormat.PlainText)
            return lab

        self.title = label("chartTitle", "color: black; font-size: 12pt; font-weight: bold;")
        self.subtitle = label("chartSubtitle", "color: #444; font-size: 9pt;")
        self.legend = label("chartLegend", "color: black; font-size: 10pt;")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.plot_widget = pg.PlotWidget(background="w")
        self.plot_widget.setObjectName("chartPlot")
        self.plot = self.plot_widget.getPlotItem()
        self.note = label("chartNote", "color: #555; font-size: 8pt;")
        lay.addWidget(self.title)
        lay.addWidget(self.subtitle)
        lay.addWidget(self.legend)
        lay.addWidget(self.plot_widget, 1)
        lay.addWidget(self.note)
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.setContentsMargins(2, 10, 8, 2)  # room for the top decade's label
        font = QFont()
        font.setPointSize(10)
        for name in ("left", "bottom"):
            ax = self.plot.getAxis(name)
            ax.setTickFont(font)
            ax.setPen("k")
            ax.setTextPen("k")
        self.plot.getAxis("bottom").setStyle(tickLength=0)
        self.plot.getAxis("left").setStyle(hideOverlappingLabels=False)  # keep the end decades' labels
        self._items: list = []
        self.set_result(None)

    # ------------------------------------------------------------------------------------ drawing
    def set_result(self, result: EvaluationResult | None, *, scale: str | None = None,
                   title: str | None = None) -> None:
        """Draw ``result`` (None: the empty chart): a bar per landmark set and scheme with ±1 standard deviation,
        the axes (log by ``scale``, or "auto": log when the bars span decades) and the texts around them."""
        if scale is not None:
            if scale not in SCALES:
                raise ValueError(f"scale must be one of {', '.join(SCALES)}")
            self.scale = scale
        self.result = result
        for it in self._items:
            self.plot.removeItem(it)
        self._items = []
        self.legend.setText(legend_html(result.schemes if result is not None else ()))
        if result is None or not result.sets:
            self._show_empty(result)
            return
        self.log = choose_log(result) if self.scale == "auto" else self.scale == "log"
        std = np.where(np.isfinite(result.std), result.std, 0.0)
        finite = np.isfinite(result.mean)
        base, hi_dec = self._log_decades(result.mean, std, finite) if self.log else (0.0, 0)
        ymax, missing_marks = self._draw_bars(result, std, finite, base)
        self._set_axes(result, base, hi_dec, ymax)
        self._mark_missing(missing_marks)
        self._set_texts(result, finite, title)

    def _add(self, item, z: float) -> None:
        item.setZValue(z)
        self.plot.addItem(item)
        self._items.append(item)

    def _show_empty(self, result: EvaluationResult | None) -> None:
        """No comparison yet (``result`` None), or one without landmark sets: texts only, no ticks."""
        self.title.setText("No comparison yet" if result is None else "No landmark sets")
        self.subtitle.setText("Choose the percentages and the landmarks, then press Run."
                              if result is None else "")
        self.note.setText("")
        self.plot.getAxis("left").setTicks(None)
        self.plot.getAxis("bottom").setTicks([[]])
        self.plot.setLabel("left", "")
        self.plot.setLabel("bottom", "")

    @staticmethod
    def _log_decades(mean: np.ndarray, std: np.ndarray, finite: np.ndarray) -> tuple[float, int]:
        """The log axis' lowest decade (the bars' base) and the decade above the highest error bar."""
        pos = mean[finite & (mean > 0)]
        low = math.log10(float(pos.min())) if pos.size else 0.0
        lo_dec = math.floor(low)
        if low - lo_dec < 0.3:  # keep at least a third of a decade of the smallest bar visible
            lo_dec -= 1
        hi_dec = math.ceil(math.log10(float((mean + std)[finite & (mean > 0)].max()))) if pos.size else 1
        if hi_dec <= lo_dec:
            hi_dec = lo_dec + 1
        return float(lo_dec), hi_dec

    def _draw_bars(self, result: EvaluationResult, std: np.ndarray, finite: np.ndarray,
                   base: float) -> tuple[float, list[tuple[float, tuple[int, int, int]]]]:
        """Each scheme's bars (and error bars after more than one run) from ``base``; returns the highest
        point drawn and (x, colour) of every bar without a value."""
        P, S = len(result.sets), len(result.schemes)
        w = _GROUP_WIDTH / S
        mean = result.mean
        ymax = base
        missing_marks: list[tuple[float, tuple[int, int, int]]] = []
        for j, s in enumerate(result.schemes):
            color = SCHEME_COLORS.get(s, (120, 120, 120))
            xs = np.arange(P) + (j - (S - 1) / 2) * w
            ok = finite[:, j] & ((mean[:, j] > 0) if self.log else True)
            m, sd = mean[ok, j], std[ok, j]
            if self.log:
                top = np.log10(m)
                heights = top - base
                hi = np.log10(m + sd) - top
                lo_end = np.where(m - sd > 10 ** base, np.log10(np.maximum(m - sd, 1e-300)), base)
                lo = top - lo_end
            else:
                top = m
                heights = m
                hi = sd
                lo = np.minimum(sd, m)
            self._add(pg.BarGraphItem(x=xs[ok], height=heights, y0=base, width=w * 0.92,
                                      brush=pg.mkBrush(*color), pen=pg.mkPen(darker(color), width=1)), 1)
            if result.runs_done > 1 and ok.any():
                self._add(pg.ErrorBarItem(x=xs[ok], y=top, top=hi, bottom=lo, beam=w * 0.35,
                                          pen=pg.mkPen((20, 20, 20), width=1.3)), 2)
                ymax = max(ymax, float(np.max(top + hi)))
            elif ok.any():
                ymax = max(ymax, float(np.max(top)))
            for i in np.flatnonzero(~finite[:, j]):
                missing_marks.append((float(xs[i]), color))
        return ymax, missing_marks

    def _set_axes(self, result: EvaluationResult, base: float, hi_dec: int, ymax: float) -> None:
        """The landmark sets under the groups, the error's name, and the y range (decades on a log axis)."""
        left = self.plot.getAxis("left")
        bottom = self.plot.getAxis("bottom")
        labels = [group_label(s.target, s.percentage, "\n") for s in result.sets]
        bottom.setTicks([list(enumerate(labels))])
        # pyqtgraph sizes the axis for one line of tick text: make room for the second one
        bottom.setHeight(58 if any("\n" in lab for lab in labels) else None)
        differ = any(abs(s.percentage - s.target) >= 0.5 for s in result.sets)
        self.plot.setLabel("bottom", "landmarks (requested → reached, % of events)" if differ
                           else "landmarks (% of events)", color="k", size="10pt")
        self.plot.setLabel("left", y_axis_label(result) + (", log scale" if self.log else ""), color="k",
                           size="10pt")
        if self.log:
            top_dec = max(hi_dec, math.ceil(ymax))
            major = [(float(k), _plain(10.0 ** k)) for k in range(int(base), top_dec + 1)]
            minor = [(k + math.log10(m), "") for k in range(int(base), top_dec) for m in range(2, 10)]
            left.setTicks([major, minor])
            # pyqtgraph's grid would clip the end labels (its axis bounds shrink to the view with a grid),
            # so the decades get their own light lines
            self.plot.showGrid(x=False, y=False)
            for k in range(int(base) + 1, top_dec + 1):
                line = pg.InfiniteLine(pos=float(k), angle=0, pen=pg.mkPen((0, 0, 0, 40), width=1))
                self.plot.addItem(line)
                self._items.append(line)
            self.plot.setYRange(base, top_dec + 0.02, padding=0)
        else:
            left.setTicks(None)
            self.plot.showGrid(x=False, y=True, alpha=0.25)
            span = ymax if ymax > 0 else 1.0
            self.plot.setYRange(0.0, span * 1.08, padding=0)
        self.plot.setXRange(-0.5, len(result.sets) - 0.5, padding=0.01)

    def _mark_missing(self, missing_marks: list[tuple[float, tuple[int, int, int]]]) -> None:
        """A cross at the foot of every bar without a value."""
        if not missing_marks:
            return
        lo, hi_r = self.plot.viewRange()[1]
        self._add(pg.ScatterPlotItem(
            x=[m[0] for m in missing_marks], y=[lo + 0.035 * (hi_r - lo)] * len(missing_marks), symbol="x",
            size=11, pen=[pg.mkPen(darker(m[1]), width=1.5) for m in missing_marks],
            brush=[pg.mkBrush(*m[1]) for m in missing_marks]), 3)

    def _set_texts(self, result: EvaluationResult, finite: np.ndarray, title: str | None) -> None:
        """The title (series, error measure, ε), the subtitle (events, landmarks, runs) and the notes."""
        name = result.name
        metric = {"categorical": "mismatch rate", "location": "mean distance error"}.get(result.kind,
                                                                                         "mean absolute error")
        self.title.setText(title or f"{name} · {metric}, ε = {result.epsilon:g}")
        runs = f"{result.runs_done} run{'s' if result.runs_done != 1 else ''}"
        if result.cancelled:
            runs += f" of {result.runs_requested} (cancelled)"
        self.subtitle.setText(f"{result.n:,} events · landmarks from the {result.source} · mean over {runs}"
                              .replace(",", THOUSANDS))
        notes = []
        if result.runs_done > 1:
            notes.append("error bars: ±1 standard deviation over the runs")
        if self.log:
            notes.append("log scale")
        if not finite.all():
            missing = sorted({SCHEME_LABELS.get(result.schemes[j], result.schemes[j])
                              for j in range(len(result.schemes)) if not finite[:, j].all()})
            notes.append(f"×: {', '.join(missing)} released nothing (every event approximated, no public "
                         "fallback)")
        self.note.setText(" · ".join(notes))

    # ------------------------------------------------------------------------------------- export
    def png_bytes(self) -> bytes:
        """The chart as drawn now, as PNG."""
        pix = self.grab()
        data = QByteArray()
        buf = QBuffer(data)
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        if not pix.save(buf, "PNG"):
            raise OSError("could not encode the chart as PNG")
        buf.close()
        return bytes(data.data())

    def save_png(self, path: str | os.PathLike) -> Path:
        """Write the chart atomically (temporary file in the target folder, then rename)."""
        from ...core.publish.writers import AtomicFile

        data = self.png_bytes()
        with AtomicFile(path, "wb") as af:
            af.file.write(data)
            af.commit()
        return Path(path)


def render_png(result: EvaluationResult, path: str | os.PathLike, *, size: tuple[int, int] = (1200, 700),
               scale: str = "auto", title: str | None = None) -> Path:
    """Draw ``result`` offscreen and save it as PNG (for ``lmdk evaluate --plot``).

    Creates the Qt application if there is none; without a display (and no QT_QPA_PLATFORM set) it uses
    Qt's offscreen platform, so this works on headless machines.
    """
    if not os.environ.get("QT_QPA_PLATFORM") and not os.environ.get("DISPLAY") and \
            not os.environ.get("WAYLAND_DISPLAY") and os.name != "nt" and not _is_macos():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(["lmdk"])
    _quiet_offscreen_warning()
    chart = EvaluationChart()
    chart.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    chart.resize(*size)
    chart.set_result(result, scale=scale, title=title)
    chart.show()
    app.processEvents()
    try:
        return chart.save_png(path)
    finally:
        chart.close()
        chart.deleteLater()
        app.processEvents()


_QUIETED = False


def _quiet_offscreen_warning() -> None:
    """Drop Qt's "This plugin does not support propagateSizeHints()" (offscreen platform noise on every
    shown widget); every other Qt message goes where it went before."""
    global _QUIETED
    if _QUIETED:
        return
    from PySide6.QtCore import qInstallMessageHandler

    previous = None

    def handler(mode, context, message):
        if "propagateSizeHints" in message:
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            sys.stderr.write(message + "\n")

    previous = qInstallMessageHandler(handler)
    _QUIETED = True


def _is_macos() -> bool:
    return sys.platform == "darwin"
