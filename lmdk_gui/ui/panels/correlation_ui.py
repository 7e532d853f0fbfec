"""The "Temporal correlation" tab (issue 7; DESIGN §7; thesis §2.3.4, §4.1.3 Definition 10).

Real series are temporally correlated: an adversary who knows how consecutive values depend on each other
(a Markov chain) learns about event t from the releases around it, so the loss at t exceeds ε_t. This tab
shows, for every shown scheme, the *landmark temporal privacy loss* of the release the user is about to
make (Definition 10, :func:`lmdk_gui.core.analysis.correlation.landmark_tpl`) at every event, its maximum next to ε
and next to the same maximum without correlation (the landmark sum), under a correlation model the user
picks: the thesis' Laplacian-smoothed m-state chain of degree s (§5.1.3; smaller s = stronger) or a
row-stochastic matrix of their own (typed into a small table or loaded from CSV/JSON), with separate
backward and forward matrices allowed.

Design notes.

* The curves use each preview release's own budgets *and landmark set* (``release.landmarks``): with dummy
  landmarks on, the release protects L′ ⊇ L and Definition 10 is evaluated on L′.
* Computation runs on a :class:`LatestOnlyRunner` (≈0.1 s per scheme at n = 10⁵), only while the tab is
  visible; a hidden tab only remembers that it is out of date and catches up when it is shown. Curves are
  cached per (release object, model object), so toggling a scheme's visibility computes only that scheme.
* A curve is never shown as current when it is not: as soon as the landmarks, settings or model change,
  the old curves turn grey, the table greys out and the status reads "updating…" until the new curves
  for the *current* preview arrive.
* The x axis is the event row with the series' timestamps (:class:`~lmdk_gui.ui.views.plots.TimeAxis`) and
  follows the series plot's zoom. We copy the *data* range both ways instead of pyqtgraph's ``setXLink``:
  ``setXLink`` lines views up by their on-screen position when they overlap, and two plots in different
  tabs of the same window always overlap, so the rows shown would be shifted by the width of this tab's
  control column.
* The y range is fitted to the curves within the visible rows and always includes ε (y zoom by mouse is
  off; the x zoom drives it), so the ε line is always on screen to compare against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QValidator
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.analysis.correlation import (
    CorrelationModel,
    landmark_tpl,
    no_correlation_value,
    read_matrix_file,
    smoothed_matrix,
)
from ...core.kernel.settings import ALL_SCHEMES, SCHEME_LABELS
from ..views.plots import TimeAxis, format_time
from ..views.theme import EPSILON_LINE_COLOR, SCHEME_COLORS, count_noun
from ..window.runner import LatestOnlyRunner

#: the thesis' correlation degrees (§5.1.3): weak, moderate, strong
S_PRESETS: tuple[tuple[float, str], ...] = ((1.0, "weak"), (0.1, "moderate"), (0.01, "strong"))
S_DEFAULT = 0.1
S_MIN, S_MAX = 0.001, 10.0  # the slider's log range (the spin box goes from 0 to 1000)
_SLIDER_STEPS = 1000
MAX_STATES = 12
STALE_COLOR = (175, 175, 175)
#: backward matrix choices of the custom editor
BACKWARD_MODES: tuple[tuple[str, str], ...] = (
    ("same", "same as forward"),
    ("reversed", "reversed chain of forward (Bayes)"),
    ("own", "own matrix (below)"),
)
TABLE_COLUMNS = ("Scheme", "Worst loss with\ncorrelation", "Under the model\nyou chose", "Without\ncorrelation",
                 "vs without", "at")
#: the precise terms, for the column headers' tooltips
TABLE_TIPS = ("", "The maximum landmark temporal privacy loss (TPL, Definition 10 of the thesis), in nats like ε",
              "Whether that loss stays within ε under the correlation model chosen on the left",
              "The maximum without correlation: the landmark sum, what the status bar's verdict checks", "",
              "Where the maximum is reached")
#: what the default model is and why (shown under the model)
DEFAULT_MODEL_NOTE = (
    "Default: a 2-state chain with moderate correlation (s = 0.1), the middle of the three degrees the "
    "landmark-privacy study used. It is an assumption about what the adversary knows, not something "
    "estimated from your data (that would itself leak). The status bar's “landmark privacy (independent "
    "events)” assumes no correlation; this tab shows the loss if the adversary knows this model.")


def s_to_slider(s: float) -> int:
    s = min(max(s, S_MIN), S_MAX)
    return int(round((math.log10(s) - math.log10(S_MIN)) / (math.log10(S_MAX) - math.log10(S_MIN)) * _SLIDER_STEPS))


def slider_to_s(pos: int) -> float:
    s = 10 ** (math.log10(S_MIN) + pos / _SLIDER_STEPS * (math.log10(S_MAX) - math.log10(S_MIN)))
    return float(f"{s:.2g}")


def fmt_number(v: float) -> str:
    """Short text for a matrix entry that still parses back to (nearly) the same float: rows of thirds
    must still sum to 1 within the validator's 1e-9."""
    short = f"{v:.6g}"
    return short if float(short) == v else f"{v:.12g}"


def compute_curves(model: CorrelationModel, items: list[tuple[str, np.ndarray, np.ndarray]], *,
                   should_cancel=None) -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
    """Worker job: ``{scheme: (landmark TPL per event, no-correlation value per event)}``."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for scheme, budgets, landmarks in items:
        if should_cancel is not None and should_cancel():
            return None
        out[scheme] = (landmark_tpl(budgets, landmarks, model), no_correlation_value(budgets, landmarks))
    return out


@dataclass(frozen=True)
class CurveResult:
    """One scheme's curves and what they were computed from (compared by identity)."""

    release: object
    model: CorrelationModel
    tpl: np.ndarray
    no_corr: np.ndarray

    @property
    def max_row(self) -> int:
        return int(np.argmax(self.tpl)) if self.tpl.size else -1

    @property
    def max_tpl(self) -> float:
        return float(self.tpl.max()) if self.tpl.size else 0.0

    @property
    def max_no_corr(self) -> float:
        return float(self.no_corr.max()) if self.no_corr.size else 0.0


class SSpinBox(QDoubleSpinBox):
    """s shown as typed (``0.01``, not ``0.0100``); the arrows step on a log scale (×10^0.1)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setDecimals(6)
        self.setRange(0.0, 1000.0)
        self.setKeyboardTracking(False)

    def textFromValue(self, value: float) -> str:  # noqa: N802 - Qt naming
        return f"{value:.4g}"

    def valueFromText(self, text: str) -> float:  # noqa: N802 - Qt naming
        try:
            return float(text.strip())
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int):
        t = text.strip()
        if t in ("", ".", "-"):
            return QValidator.State.Intermediate, text, pos
        try:
            v = float(t)
        except ValueError:
            return QValidator.State.Invalid, text, pos
        ok = self.minimum() <= v <= self.maximum()
        return (QValidator.State.Acceptable if ok else QValidator.State.Intermediate), text, pos

    def stepBy(self, steps: int) -> None:  # noqa: N802 - Qt naming
        v = self.value()
        if v <= 0:
            v = S_MIN if steps > 0 else 0.0
        else:
            v = float(f"{v * 10 ** (steps / 10):.2g}")
        self.setValue(min(max(v, self.minimum()), self.maximum()))


class MatrixEditor(QTableWidget):
    """An m × m table of transition probabilities (row i: the distribution of the next/previous state
    given state i)."""

    def __init__(self, name: str, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.verticalHeader().setDefaultSectionSize(22)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip("Row i: probabilities of each state given state i (each row sums to 1)")

    def set_matrix(self, p: np.ndarray) -> None:
        m = int(p.shape[0])
        self.blockSignals(True)
        self.setRowCount(m)
        self.setColumnCount(m)
        self.setHorizontalHeaderLabels([f"→{j}" for j in range(m)])
        self.setVerticalHeaderLabels([f"{i}" for i in range(m)])
        for i in range(m):
            for j in range(m):
                it = QTableWidgetItem(fmt_number(float(p[i, j])))
                it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(i, j, it)
        self.blockSignals(False)
        self._fit_height()

    def _fit_height(self) -> None:
        h = self.horizontalHeader().height() or 22
        self.setFixedHeight(h + 22 * self.rowCount() + 4)

    def values(self, label: str) -> np.ndarray:
        """The typed numbers; ValueError naming the cell when one is not a number."""
        m = self.rowCount()
        out = np.empty((m, self.columnCount()))
        for i in range(m):
            for j in range(self.columnCount()):
                it = self.item(i, j)
                text = it.text().strip() if it is not None else ""
                try:
                    out[i, j] = float(text)
                except ValueError:
                    shown = text if text else "(empty)"
                    raise ValueError(f"the {label}, row {i}, column {j}: {shown!r} is not a number") from None
        return out


class CorrelationTab(QWidget):
    """The tab. Public API (tests and scripting): :meth:`set_smoothing`, :meth:`set_custom_matrix`,
    :meth:`load_matrix_file`, :attr:`model`, :meth:`results`, :meth:`is_current`, :meth:`state`,
    :meth:`restore`; ``curvesUpdated`` fires when curves for the current state are drawn."""

    curvesUpdated = Signal()
    modelChanged = Signal()

    def __init__(self, window) -> None:
        super().__init__()
        self.setObjectName("correlationTab")
        self.window_ = window
        self.session = window.session
        self._model = CorrelationModel.smoothed(S_DEFAULT, 2)
        self._cache: dict[str, CurveResult] = {}
        self._job: tuple[CorrelationModel, dict[str, object]] | None = None
        self._job_key: tuple | None = None
        self._runner: LatestOnlyRunner | None = None
        #: jobs submitted (tests use it to check that a hidden tab does not compute)
        self.computations = 0
        self._syncing_x = False
        self._y_cache: dict[str, np.ndarray] = {}
        self._redraw_pending = False
        self._drawn: dict[str, tuple[CurveResult, bool]] = {}  # scheme → (the result drawn, log axis)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)  # coalesce a burst of signals into one request
        self._timer.timeout.connect(self._submit)
        self._build()
        self._connect()
        self._on_series()

    # =============================================================================== layout
    def _build(self) -> None:
        outer = QHBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName("correlationSplitter")
        outer.addWidget(split)
        split.addWidget(self._build_controls())
        split.addWidget(self._build_view())
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setCollapsible(1, False)
        split.setSizes([280, 1000])

    def _build_controls(self) -> QWidget:
        scroll = QScrollArea()
        scroll.setObjectName("correlationControls")
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(240)
        scroll.setMaximumWidth(380)
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(6)

        intro = QLabel("If consecutive values are correlated (a Markov chain the adversary knows), each "
                       "release also leaks about its neighbours, so the real loss exceeds ε<sub>t</sub>.")
        intro.setToolTip("Temporal privacy loss (TPL): thesis §2.3.4 and §4.1.3, Definition 10")
        intro.setWordWrap(True)
        intro.setStyleSheet("color: #444;")
        lay.addWidget(intro)

        g = QGroupBox("Correlation model")
        gl = QVBoxLayout(g)
        gl.setSpacing(4)
        self.smoothed_radio = QRadioButton("Smoothed m-state chain (default)")
        self.smoothed_radio.setToolTip("The Laplacian-smoothed chain P = (I + s)/(1 + m·s) of the landmark-privacy "
                                       "thesis (§5.1.3)")
        self.smoothed_radio.setObjectName("smoothedRadio")
        self.custom_radio = QRadioButton("Custom matrix")
        self.custom_radio.setObjectName("customRadio")
        self.mode_group = QButtonGroup(self)
        self.mode_group.addButton(self.smoothed_radio)
        self.mode_group.addButton(self.custom_radio)
        self.smoothed_radio.setChecked(True)
        gl.addWidget(self.smoothed_radio)

        # --- smoothed chain -------------------------------------------------------------------------
        self.smoothed_box = QWidget()
        sf = QFormLayout(self.smoothed_box)
        sf.setContentsMargins(16, 0, 0, 0)
        self.s_spin = SSpinBox()
        self.s_spin.setObjectName("sSpin")
        self.s_spin.setValue(S_DEFAULT)
        self.s_spin.setToolTip("Smoothing degree s of P = (I + s)/(1 + m·s). Smaller s = stronger correlation "
                               "(s = 0: the value never changes)")
        sf.addRow("Strength s", self.s_spin)
        self.s_slider = QSlider(Qt.Orientation.Horizontal)
        self.s_slider.setObjectName("sSlider")
        self.s_slider.setRange(0, _SLIDER_STEPS)
        self.s_slider.setInvertedAppearance(True)  # right = stronger
        self.s_slider.setValue(s_to_slider(S_DEFAULT))
        self.s_slider.setToolTip(f"s on a log scale from {S_MAX:g} (left, weak) to {S_MIN:g} (right, strong)")
        srow = QHBoxLayout()
        weak = QLabel("weak")
        strong = QLabel("strong")
        for w in (weak, strong):
            w.setStyleSheet("color: #666; font-size: 8pt;")
        srow.addWidget(weak)
        srow.addWidget(self.s_slider, 1)
        srow.addWidget(strong)
        sf.addRow(srow)
        prow = QHBoxLayout()
        prow.setSpacing(3)
        self.preset_buttons: dict[float, QPushButton] = {}
        for value, word in S_PRESETS:
            b = QPushButton(f"{value:g}")
            b.setObjectName(f"sPreset_{value:g}".replace(".", "_"))
            b.setToolTip(f"s = {value:g}: {word} correlation (one of the degrees of the thesis, §5.1.3)")
            b.setCheckable(True)
            b.setMinimumWidth(34)  # overrides the style's wide minimum, so the column stays narrow
            b.clicked.connect(lambda _=False, v=value: self.set_smoothing(v))
            prow.addWidget(b)
            self.preset_buttons[value] = b
        presets = QLabel("Presets")
        presets.setToolTip("weak (s = 1), moderate (s = 0.1), strong (s = 0.01): the thesis' degrees")
        sf.addRow(presets, prow)
        self.states_spin = QSpinBox()
        self.states_spin.setObjectName("statesSpin")
        self.states_spin.setRange(2, MAX_STATES)
        self.states_spin.setValue(2)
        self.states_spin.setKeyboardTracking(False)
        self.states_spin.setToolTip("Number of states m of the chain (2 by default, as in the thesis)")
        sf.addRow("States m", self.states_spin)
        self.smoothed_hint = QLabel()
        self.smoothed_hint.setObjectName("smoothedHint")
        self.smoothed_hint.setWordWrap(True)
        self.smoothed_hint.setStyleSheet("color: #555; font-size: 8pt;")
        sf.addRow(self.smoothed_hint)
        gl.addWidget(self.smoothed_box)
        self.default_note = QLabel(DEFAULT_MODEL_NOTE)
        self.default_note.setObjectName("correlationDefaultNote")
        self.default_note.setWordWrap(True)
        self.default_note.setStyleSheet("color: #555; font-size: 8pt;")
        gl.addWidget(self.default_note)

        # --- custom matrix ------------------------------------------------------------------------
        gl.addWidget(self.custom_radio)
        self.custom_box = QWidget()
        cl = QVBoxLayout(self.custom_box)
        cl.setContentsMargins(16, 0, 0, 0)
        cl.setSpacing(3)
        brow = QHBoxLayout()
        self.load_button = QPushButton("Load file…")
        self.load_button.setMinimumWidth(60)
        self.load_button.setObjectName("loadMatrixButton")
        self.load_button.setToolTip('CSV of numbers (both directions) or JSON: a list of rows, {"matrix": rows} '
                                    'or {"backward": rows, "forward": rows}')
        self.normalise_button = QPushButton("Normalise rows")
        self.normalise_button.setMinimumWidth(60)
        self.normalise_button.setObjectName("normaliseButton")
        self.normalise_button.setToolTip("Divide every row by its sum")
        brow.addWidget(self.load_button)
        brow.addWidget(self.normalise_button)
        cl.addLayout(brow)
        frow = QHBoxLayout()
        flabel = QLabel("Forward P(x<sub>t+1</sub> | x<sub>t</sub>)")
        frow.addWidget(flabel, 1)
        frow.addWidget(QLabel("m"))
        self.size_spin = QSpinBox()
        self.size_spin.setObjectName("matrixSizeSpin")
        self.size_spin.setRange(2, MAX_STATES)
        self.size_spin.setValue(2)
        self.size_spin.setKeyboardTracking(False)
        self.size_spin.setToolTip("Number of states (resets the tables to the smoothed matrix of this size)")
        frow.addWidget(self.size_spin)
        cl.addLayout(frow)
        self.forward_table = MatrixEditor("forwardMatrixTable")
        cl.addWidget(self.forward_table)
        cl.addWidget(QLabel("Backward P(x<sub>t−1</sub> | x<sub>t</sub>)"))
        self.backward_combo = QComboBox()
        self.backward_combo.setObjectName("backwardMode")
        for key, text in BACKWARD_MODES:
            self.backward_combo.addItem(text, key)
        self.backward_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.backward_combo.setMinimumContentsLength(12)
        self.backward_combo.setToolTip("The thesis and Cao et al.'s experiments use one matrix for both "
                                       "directions; a stationary chain's backward matrix is its time reversal")
        cl.addWidget(self.backward_combo)
        self.backward_table = MatrixEditor("backwardMatrixTable")
        cl.addWidget(self.backward_table)
        gl.addWidget(self.custom_box)

        self.error_label = QLabel()
        self.error_label.setObjectName("correlationError")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #c00000;")
        self.error_label.hide()
        gl.addWidget(self.error_label)
        self.model_label = QLabel()
        self.model_label.setObjectName("modelLabel")
        self.model_label.setWordWrap(True)
        self.model_label.setStyleSheet("color: #333; font-size: 8pt;")
        gl.addWidget(self.model_label)
        lay.addWidget(g)

        # --- view ------------------------------------------------------------------------------------
        v = QGroupBox("View")
        vl = QVBoxLayout(v)
        vl.setSpacing(2)
        self.follow_check = QCheckBox("Follow the series plot's zoom")
        self.follow_check.setObjectName("followXCheck")
        self.follow_check.setChecked(True)
        self.nocorr_check = QCheckBox("Show without correlation")
        self.nocorr_check.setObjectName("noCorrCheck")
        self.nocorr_check.setChecked(True)
        self.log_check = QCheckBox("Logarithmic y axis")
        self.log_check.setObjectName("logYCheck")
        for w in (self.follow_check, self.nocorr_check, self.log_check):
            vl.addWidget(w)
        note = QLabel("Schemes shown: Settings › Show schemes.")
        note.setWordWrap(True)
        note.setStyleSheet("color: #666; font-size: 8pt;")
        vl.addWidget(note)
        lay.addWidget(v)
        lay.addStretch(1)
        scroll.setWidget(body)

        s = smoothed_matrix(2, S_DEFAULT)
        self.forward_table.set_matrix(s)
        self.backward_table.set_matrix(s)
        self._update_mode_widgets()
        return scroll

    def _build_view(self) -> QWidget:
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
        vsplit.addWidget(self.plot)

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
        vsplit.addWidget(self.table)
        vsplit.setStretchFactor(0, 4)
        vsplit.setStretchFactor(1, 1)
        vsplit.setCollapsible(0, False)
        lay.addWidget(vsplit, 1)
        self._fit_table_height()
        return w

    def _fit_table_height(self) -> None:
        shown = sum(not self.table.isRowHidden(r) for r in range(self.table.rowCount()))
        head = self.table.horizontalHeader().sizeHint().height()
        self.table.setMinimumHeight(head + 22 * max(shown, 1) + 6)
        self.table.setMaximumHeight(head + 22 * len(ALL_SCHEMES) + 6)

    # =============================================================================== wiring
    def _connect(self) -> None:
        s = self.session
        s.seriesChanged.connect(self._on_series)
        s.landmarksChanged.connect(self._on_state_changed)
        s.settingsChanged.connect(self._on_state_changed)
        s.previewChanged.connect(self._on_state_changed)
        self.s_spin.valueChanged.connect(self._on_s_spin)
        self.s_slider.valueChanged.connect(self._on_s_slider)
        self.states_spin.valueChanged.connect(lambda _v: self._apply_smoothed())
        self.smoothed_radio.toggled.connect(self._on_mode)
        self.load_button.clicked.connect(self.load_dialog)
        self.normalise_button.clicked.connect(self.normalise_rows)
        self.size_spin.valueChanged.connect(self._on_size)
        self.forward_table.itemChanged.connect(lambda _it: self._apply_custom())
        self.backward_table.itemChanged.connect(lambda _it: self._apply_custom())
        self.backward_combo.currentIndexChanged.connect(lambda _i: self._on_backward_mode())
        self.follow_check.toggled.connect(self._on_follow)
        self.nocorr_check.toggled.connect(lambda _on: self._redraw())
        self.log_check.toggled.connect(self._on_log)
        self.window_.series_plot.vb.sigXRangeChanged.connect(self._on_series_range)
        self.vb.sigXRangeChanged.connect(self._on_own_range)
        self.window_.installEventFilter(self)

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:  # noqa: N802 - Qt naming
        # The window does not tell extensions it closes; stop our worker once it really has closed
        # (a close guard may still refuse, so look after the event loop has handled it).
        if obj is self.window_ and ev.type() == QEvent.Type.Close:
            QTimer.singleShot(0, self._maybe_shutdown)
        return False

    def _maybe_shutdown(self) -> None:
        if not self.window_.isVisible():
            self.shutdown()

    def shutdown(self) -> None:
        if self._runner is not None:
            self._runner.shutdown()
            self._runner = None
        self._job = None
        self._job_key = None

    def _ensure_runner(self) -> LatestOnlyRunner:
        if self._runner is None:
            self._runner = LatestOnlyRunner("correlation", self)
            self._runner.finished.connect(self._on_result)
            self._runner.failed.connect(self._on_failed)
        return self._runner

    def showEvent(self, ev) -> None:  # noqa: N802 - Qt naming
        super().showEvent(ev)
        if self._redraw_pending:
            self._redraw()
        self._sync_from_series()
        self._request()

    # =============================================================================== model controls
    @property
    def model(self) -> CorrelationModel:
        """The correlation model in use (the last valid one)."""
        return self._model

    def _set_model(self, model: CorrelationModel) -> None:
        self._model = model
        self.error_label.hide()
        self.error_label.clear()
        self._update_model_label()
        self.modelChanged.emit()
        self._redraw()
        self._request()

    def _show_error(self, message: str) -> None:
        self.error_label.setText(f"{message}<br><i>Still using: {self._model.description}.</i>")
        self.error_label.show()

    def _update_model_label(self) -> None:
        m = self._model
        speed = "" if m.is_fast else " General matrix: slower exact algorithm (seconds on long series)."
        self.model_label.setText(f"In use: {m.description} ({m.states} states).{speed}")
        self.model_label.setToolTip("backward:\n" + _matrix_text(m.backward) + "\nforward:\n" + _matrix_text(m.forward))

    def _update_smoothed_hint(self) -> None:
        s, m = self.s_spin.value(), self.states_spin.value()
        stay = (1 + s) / (1 + m * s)
        move = s / (1 + m * s)
        self.smoothed_hint.setText(f"Smaller s = stronger correlation. P = (I + s)/(1 + m·s): the value stays "
                                   f"in its state with probability {stay:.3g}, moves to each other state with "
                                   f"{move:.3g}.")
        for value, b in self.preset_buttons.items():
            b.setChecked(math.isclose(s, value, rel_tol=1e-9))

    def _on_s_spin(self, value: float) -> None:
        self.s_slider.blockSignals(True)
        self.s_slider.setValue(s_to_slider(value))
        self.s_slider.blockSignals(False)
        self._apply_smoothed()

    def _on_s_slider(self, pos: int) -> None:
        self.s_spin.blockSignals(True)
        self.s_spin.setValue(slider_to_s(pos))
        self.s_spin.blockSignals(False)
        self._apply_smoothed()

    def set_smoothing(self, s: float, m: int | None = None) -> None:
        """Use the smoothed chain of degree s (and m states): the scripting entry point of the controls."""
        for w in (self.s_spin, self.s_slider, self.states_spin, self.smoothed_radio):
            w.blockSignals(True)
        self.s_spin.setValue(float(s))
        self.s_slider.setValue(s_to_slider(float(s)))
        if m is not None:
            self.states_spin.setValue(int(m))
        self.smoothed_radio.setChecked(True)
        for w in (self.s_spin, self.s_slider, self.states_spin, self.smoothed_radio):
            w.blockSignals(False)
        self._update_mode_widgets()
        self._apply_smoothed()

    def _apply_smoothed(self) -> None:
        self._update_smoothed_hint()
        if not self.smoothed_radio.isChecked():
            return
        s, m = self.s_spin.value(), self.states_spin.value()
        try:
            model = CorrelationModel.smoothed(s, m)
        except ValueError as e:
            self._show_error(str(e))
            return
        self._set_model(model)

    def _on_mode(self, _smoothed_checked: bool) -> None:
        self._update_mode_widgets()
        if self.smoothed_radio.isChecked():
            self._apply_smoothed()
        else:
            self._apply_custom()

    def _update_mode_widgets(self) -> None:
        smoothed = self.smoothed_radio.isChecked()
        # Only the chosen model's controls take room (the radio buttons show the other one exists).
        self.smoothed_box.setVisible(smoothed)
        self.custom_box.setVisible(not smoothed)
        self.backward_table.setVisible(self.backward_combo.currentData() == "own")
        self._update_smoothed_hint()

    def _on_size(self, m: int) -> None:
        p = smoothed_matrix(int(m), self.s_spin.value())
        self.forward_table.set_matrix(p)
        self.backward_table.set_matrix(p)
        self._apply_custom()

    def _on_backward_mode(self) -> None:
        self._update_mode_widgets()
        if self.backward_combo.currentData() == "own" and self.backward_table.rowCount() != \
                self.forward_table.rowCount():
            self.backward_table.set_matrix(self._model.backward if self._model.states == self.forward_table.rowCount()
                                           else smoothed_matrix(self.forward_table.rowCount(), self.s_spin.value()))
        self._apply_custom()

    def _custom_model(self) -> CorrelationModel:
        forward = self.forward_table.values("forward matrix")
        mode = self.backward_combo.currentData()
        if mode == "same":
            return CorrelationModel.from_matrix(forward, "custom matrix (both directions)")
        if mode == "reversed":
            return CorrelationModel.from_transition(forward, description="custom forward matrix, backward = its "
                                                    "time reversal")
        backward = self.backward_table.values("backward matrix")
        return CorrelationModel.from_matrices(backward, forward, "custom backward and forward matrices")

    def _apply_custom(self) -> bool:
        if not self.custom_radio.isChecked():
            return False
        try:
            model = self._custom_model()
        except ValueError as e:
            msg = str(e)
            self._show_error(msg[0].upper() + msg[1:])
            return False
        self._set_model(model)
        return True

    def set_custom_matrix(self, forward, backward=None, *, reversed_backward: bool = False) -> bool:
        """Type a matrix into the editor and use it (backward: ``None`` = the same matrix, or its own
        matrix, or ``reversed_backward=True`` = the time reversal of ``forward``). Invalid input shows the
        message and keeps the previous model; returns whether the new matrix is in use."""
        try:
            f = np.array(forward, dtype=np.float64)
            b = None if backward is None else np.array(backward, dtype=np.float64)
        except (TypeError, ValueError):
            self._show_error("The matrix must be a square table of numbers.")
            return False
        for label, x in (("forward matrix", f), ("backward matrix", b)):
            if x is not None and (x.ndim != 2 or x.shape[0] != x.shape[1] or x.shape[0] == 0):
                self._show_error(f"The {label} must be square (m × m), got shape {x.shape}.")
                return False
        self._fill_custom(f, b, "reversed" if reversed_backward else ("own" if b is not None else "same"))
        return self._apply_custom()

    def _fill_custom(self, forward: np.ndarray, backward: np.ndarray | None, mode: str) -> None:
        for w in (self.size_spin, self.backward_combo, self.custom_radio, self.smoothed_radio):
            w.blockSignals(True)
        self.forward_table.set_matrix(forward)
        if backward is not None:
            self.backward_table.set_matrix(backward)
        if forward.shape[0] == forward.shape[1] and 2 <= forward.shape[0] <= MAX_STATES:
            self.size_spin.setValue(int(forward.shape[0]))
        self.backward_combo.setCurrentIndex([k for k, _ in BACKWARD_MODES].index(mode))
        self.custom_radio.setChecked(True)
        for w in (self.size_spin, self.backward_combo, self.custom_radio, self.smoothed_radio):
            w.blockSignals(False)
        self._update_mode_widgets()

    def normalise_rows(self) -> None:
        """Divide every row of the editor's matrices by its sum (a convenience while typing)."""
        tables = [self.forward_table] + ([self.backward_table] if self.backward_combo.currentData() == "own" else [])
        for t, label in zip(tables, ("forward matrix", "backward matrix"), strict=False):
            try:
                p = t.values(label)
            except ValueError as e:
                self._show_error(str(e)[0].upper() + str(e)[1:])
                return
            sums = p.sum(axis=1, keepdims=True)
            if np.any(~np.isfinite(p)) or np.any(p < 0) or np.any(sums <= 0):
                self._show_error(f"The {label} needs non-negative entries and a positive sum in every row to "
                                 "be normalised.")
                return
            t.set_matrix(p / sums)
        self._apply_custom()

    def load_matrix_file(self, path: str | Path) -> bool:
        """Read a CSV/JSON matrix file (:func:`read_matrix_file`) and use it; a bad file shows the message and
        keeps the previous model. Returns whether the file's model is in use."""
        try:
            model = read_matrix_file(path)
        except ValueError as e:
            self._show_error(str(e))
            return False
        same = model.backward.shape == model.forward.shape and np.array_equal(model.backward, model.forward)
        if model.states > MAX_STATES:
            # too big for the editor; still usable
            self.custom_radio.blockSignals(True)
            self.custom_radio.setChecked(True)
            self.custom_radio.blockSignals(False)
            self._update_mode_widgets()
        else:
            self._fill_custom(model.forward, None if same else model.backward, "same" if same else "own")
        self._set_model(model)
        return True

    def load_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load a transition matrix", "",
                                              "Matrices (*.csv *.json *.txt *.tsv);;All files (*)")
        if path:
            self.load_matrix_file(path)

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

    # =============================================================================== computation
    def _on_series(self) -> None:
        s = self.session.series
        if self._runner is not None:
            self._runner.cancel()
        self._job = None
        self._job_key = None
        self._cache.clear()
        self._drawn.clear()
        self.time_axis.set_times(s.times if s is not None else None)
        if s is not None:
            self.vb.setLimits(xMin=-0.05 * s.n - 1, xMax=1.05 * s.n + 1)
            if self.follow_check.isChecked():
                self._sync_from_series()
            else:
                self._set_x(-0.5, s.n - 0.5)
        self._redraw()
        self._request()

    def _on_state_changed(self) -> None:
        # The session emits landmarksChanged/settingsChanged *before* it invalidates its preview, so judge
        # freshness once the emission is over: _submit (next pass of the event loop) greys the curves out
        # and asks for new ones. A hidden tab only remembers to redraw when it is shown.
        self._redraw_pending = True
        self._request()

    def _request(self) -> None:
        self._timer.start()

    def _entry_current(self, scheme: str) -> bool:
        e = self._cache.get(scheme)
        p = self.session.preview.get(scheme)
        return e is not None and p is not None and e.release is p.release and e.model is self._model

    def _wanted(self) -> list[str]:
        pv = self.session.preview
        return [s for s in ALL_SCHEMES if s in self.session.visible_schemes and s in pv]

    def is_current(self) -> bool:
        """True when every shown scheme's curve describes the current landmarks, settings and model."""
        s = self.session
        if s.series is None or not s.is_preview_current():
            return False
        return all(self._entry_current(x) for x in self._wanted())

    def _submit(self) -> None:
        s = self.session
        if not self.isVisible():
            return
        redrawn = self._redraw_pending
        if redrawn:
            self._redraw()
        if s.series is None or not s.is_preview_current():
            return
        need = [x for x in self._wanted() if not self._entry_current(x)]
        if not need:
            if not redrawn:
                self._redraw()
            return
        releases = {x: s.preview[x].release for x in need}
        key = (id(self._model), tuple((x, id(r)) for x, r in releases.items()))
        if key == self._job_key and self._runner is not None and not self._runner.is_idle():
            return  # exactly this job is already running
        self._job = (self._model, releases)
        self._job_key = key
        items = [(x, r.budgets, r.landmarks) for x, r in releases.items()]
        self.computations += 1
        self._ensure_runner().submit(compute_curves, self._model, items)
        self._update_status()

    def _on_result(self, generation: int, result) -> None:
        if self._runner is None or not self._runner.is_current(generation) or result is None or self._job is None:
            return
        model, releases = self._job
        self._job = None
        self._job_key = None
        for scheme, (tpl, nc) in result.items():
            self._cache[scheme] = CurveResult(releases[scheme], model, tpl, nc)
        self._redraw()
        if self.is_current():
            self.curvesUpdated.emit()
        else:
            self._request()  # the state moved on while we computed

    def _on_failed(self, generation: int, message: str) -> None:
        if self._runner is None or not self._runner.is_current(generation):
            return
        self._job = None
        self._job_key = None
        self.status_label.setText(f"<span style='color:#c00000'>Computing the temporal privacy loss failed: "
                                  f"{message}</span>")

    def results(self) -> dict[str, CurveResult]:
        """The curves drawn now (current or not: check :meth:`is_current`)."""
        return dict(self._cache)

    # =============================================================================== drawing
    def _redraw(self) -> None:
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
            c, nc, mk = self.curves[scheme], self.nc_curves[scheme], self.max_markers[scheme]
            e = self._cache.get(scheme)
            if scheme not in shown or e is None or s.series is None or e.tpl.size != s.n:
                for item in (c, nc, mk):
                    item.hide()
                continue
            fresh = preview_current and self._entry_current(scheme)
            color = SCHEME_COLORS[scheme] if fresh else STALE_COLOR
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
                mk.setData([float(r)], [float(tpl[r])], symbolBrush=pg.mkBrush(color),
                           symbolPen=pg.mkPen("w", width=1))
                mk.show()
            else:
                mk.hide()
            r, g, b = color
            keys.append(f"<span style='color:rgb({r},{g},{b})'><b>━ {SCHEME_LABELS[scheme]}</b></span>")
        self._set_title(keys, show_nc, eps)
        self._fill_table(shown, preview_current)
        self._fit_y()
        self._update_status()

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

    # =============================================================================== project state
    def state(self) -> dict:
        """JSON-serialisable settings of the tab (saved in project files)."""
        mode = "smoothed" if self.smoothed_radio.isChecked() else "custom"
        d: dict = {"mode": mode, "s": float(self.s_spin.value()), "m": int(self.states_spin.value()),
                   "backward_mode": self.backward_combo.currentData(), "follow_x": self.follow_check.isChecked(),
                   "no_correlation": self.nocorr_check.isChecked(), "log_y": self.log_check.isChecked()}
        if mode == "custom":
            d["forward"] = self._model.forward.tolist()
            d["backward"] = self._model.backward.tolist()
        return d

    def restore(self, d: dict) -> None:
        """Apply :meth:`state` output; bad entries are reported in the error label, never raised."""
        if not isinstance(d, dict):
            return
        for key, cb in (("follow_x", self.follow_check), ("no_correlation", self.nocorr_check),
                        ("log_y", self.log_check)):
            if isinstance(d.get(key), bool):
                cb.setChecked(d[key])
        try:
            s = float(d.get("s", S_DEFAULT))
            m = int(d.get("m", 2))
            if not (math.isfinite(s) and s >= 0 and 2 <= m <= MAX_STATES):
                raise ValueError
        except (TypeError, ValueError):
            s, m = S_DEFAULT, 2
        if d.get("mode") == "custom" and d.get("forward") is not None:
            self.s_spin.blockSignals(True)
            self.s_spin.setValue(s)
            self.s_spin.blockSignals(False)
            mode = d.get("backward_mode")
            if mode == "reversed":
                self.set_custom_matrix(d["forward"], reversed_backward=True)
            elif mode == "own":
                self.set_custom_matrix(d["forward"], d.get("backward"))
            else:
                self.set_custom_matrix(d["forward"])
        else:
            self.set_smoothing(s, m)


def _span(times: np.ndarray) -> float:
    return float((times[-1] - times[0]) / np.timedelta64(1, "s")) if times.size > 1 else 0.0


def _matrix_text(p: np.ndarray) -> str:
    return "\n".join("  ".join(f"{v:.4g}" for v in row) for row in p)


def install(window) -> CorrelationTab:
    """Add the "Temporal correlation" tab to the main window."""
    tab = CorrelationTab(window)
    window.tabs.addTab(tab, "Temporal correlation")
    window.tabs.setTabToolTip(window.tabs.indexOf(tab), "The privacy loss if consecutive values are correlated "
                                                        "(temporal privacy loss, thesis §2.3.4, Definition 10)")
    return tab
