"""The "What ε do I need?" tab (issue 14, accuracy first).

The user names the error they can live with — in the data's units or as a share of the data's range — and
the tab shows each landmark-private scheme's mean error over R runs against ε (log grid 0.01…100, the
:func:`~lmdk_gui.core.analysis.accuracy.error_curves` of the core, on the preview's common random numbers), the target
line, and per scheme the smallest ε that meets it, with one button to use it (``session.set_epsilon``).

The target is "informative" by default (issue 44): clearly below the error of publishing one constant (the
series' median, geometric median or mode; :func:`~lmdk_gui.core.analysis.accuracy.informative_target`). A target in
units or percent that a constant already meets is lowered to that (:func:`~lmdk_gui.core.analysis.accuracy.planner_target`),
and the note next to it says so.

The curves are computed on a latest-only worker (with Cancel) when the landmarks or the settings other than
ε change and the tab is visible; a new target only re-reads them. The tab says plainly that planning on
the true data is not itself private and offers "Plan on another file…": a public or similar series,
loaded by the core loader, with the same settings and the landmarks carried over at the same relative
positions (:func:`~lmdk_gui.core.analysis.accuracy.map_landmarks`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import qdebounced, signals_blocked

from ...core.analysis import accuracy, advice
from ...core.analysis.metrics import unit_label
from ...core.data.loader import load_series
from ...core.data.series import Series
from ...core.kernel.settings import LANDMARK_SCHEMES, SCHEME_LABELS, PrivacySettings
from ..views.theme import EPSILON_LINE_COLOR, SCHEME_COLORS, darker
from ..window.runner import LatestOnlyRunner
from ..window.session import Session

UNITS, PERCENT, INFORMATIVE = "units", "percent", accuracy.INFORMATIVE


@dataclass(frozen=True)
class _Job:
    """What one sweep works on (immutable; crosses to the worker)."""

    series: Series | None  # None: load ``path`` first
    path: str | None
    landmarks: np.ndarray
    n_session: int  # to carry the landmarks over to another file
    other: bool  # planning on another file: map the landmarks
    settings: PrivacySettings
    runs: int
    seed: int
    error_field: str


def _sweep(job: _Job, *, should_cancel) -> tuple[Series, accuracy.ErrorCurves | None]:
    series = job.series if job.series is not None else load_series(job.path)  # type: ignore[arg-type]
    lm = accuracy.map_landmarks(job.landmarks, job.n_session, series.n) if job.other else job.landmarks
    curves = accuracy.error_curves(series, lm, job.settings, runs=job.runs, seed=job.seed,
                                   error_field=job.error_field, should_cancel=should_cancel)
    return series, curves


class _Same:
    """Equal to another ``_Same`` of the very same object, which it keeps alive (so its id is never reused):
    the session replaces its series and its read-only landmark set on every change, so identity tells a
    change without hashing the set on every click (16 MB at 10^7 events with 20 % landmarks, ≈ 11 ms)."""

    __slots__ = ("obj",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, obj) -> None:
        self.obj = obj

    def __eq__(self, other) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj


class AccuracyPanel(QWidget):
    """The tab. ``curvesReady`` fires when a sweep's curves are shown; ``ask_plan_file`` (replaceable) asks
    for the file to plan on."""

    curvesReady = Signal()

    def __init__(self, session: Session, parent=None, *, error_field: str | None = None) -> None:
        """``error_field`` None follows the session's Denoise setting (the error of what an export
        publishes: ``"mae_denoised"`` when on, ``"mae"`` when off)."""
        super().__init__(parent)
        self.setObjectName("accuracyPanel")
        self.session = session
        self._fixed_error_field = error_field
        self.curves: accuracy.ErrorCurves | None = None
        self.smallest: dict[str, float | None] = {}
        self.plan_path: str | None = None  # None: plan on the open data
        self.plan_series: Series | None = None
        self.ask_plan_file: Callable[[], str] = self._ask_plan_file
        self._stale = True
        self._runner = LatestOnlyRunner("accuracy", self, finished=self._on_curves, failed=self._on_failed)
        lay = QVBoxLayout(self)
        lay.addWidget(self._build_intro())
        lay.addLayout(self._build_target_row())
        lay.addWidget(self._build_privacy_note())
        lay.addLayout(self._build_status_row())
        body = QHBoxLayout()
        body.addWidget(self._build_chart(), 3)
        body.addWidget(self._build_table(), 2)
        lay.addLayout(body, 1)
        self._computed_key: tuple | None = None
        for sig in (session.seriesChanged, session.landmarksChanged, session.settingsChanged,
                    session.resolutionChanged):
            sig.connect(self._inputs_changed)
        session.settingsChanged.connect(self._draw_epsilon)
        self._inputs_changed()

    @property
    def error_field(self) -> str:
        if self._fixed_error_field is not None:
            return self._fixed_error_field
        return "mae_denoised" if self.session.settings.denoise else "mae"

    # -------------------------------------------------------------------------------------- build
    def _build_intro(self) -> QLabel:
        lab = QLabel("<b>What ε do I need?</b> Say how large an error you can accept. For each scheme the "
                     "chart shows the release's mean error (over the R simulated runs of the Metrics table) "
                     "for ε from 0.01 to 100, and the table the smallest ε that stays within your target. "
                     "A larger ε means less noise and weaker privacy.")
        lab.setWordWrap(True)
        return lab

    def _build_target_row(self) -> QHBoxLayout:
        row = QHBoxLayout()
        row.addWidget(QLabel("Acceptable mean error:"))
        self.target_spin = QDoubleSpinBox()
        self.target_spin.setObjectName("accuracyTarget")
        self.target_spin.setDecimals(4)
        self.target_spin.setRange(1e-4, 1e12)
        self.target_spin.setValue(10.0)
        self.target_spin.setToolTip("The mean absolute error of the release you can accept, on average")
        self.target_unit = QComboBox()
        self.target_unit.setObjectName("accuracyTargetUnit")
        self.target_unit.addItem("clearly below one constant", INFORMATIVE)
        self.target_unit.addItem("% of the data's range", PERCENT)
        self.target_unit.addItem("units", UNITS)
        self.target_unit.setToolTip("Clearly below one constant: an expected error at most "
                                    f"{advice.INFORMATIVE_RATIO:g} × that of publishing the series' median at "
                                    "every event; a larger target is met by that one number")
        row.addWidget(self.target_spin)
        row.addWidget(self.target_unit)
        self.target_note = QLabel()
        self.target_note.setObjectName("accuracyTargetNote")
        self.target_note.setWordWrap(True)
        row.addWidget(self.target_note, 1)
        self.target_spin.setEnabled(False)  # (the default target, "informative", takes no number)
        self.target_spin.valueChanged.connect(self._target_changed)
        self.target_unit.currentIndexChanged.connect(self._unit_changed)
        return row

    def _build_status_row(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.status = QLabel()
        self.status.setObjectName("accuracyStatus")
        self.status.setWordWrap(True)  # a loader's message names file, column and option: it can be long
        row.addWidget(self.status, 1)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("accuracyCancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.hide()
        row.addWidget(self.cancel_button)
        return row

    def _build_privacy_note(self) -> QFrame:
        box = QFrame()
        box.setObjectName("accuracyPrivacyNote")
        box.setStyleSheet("#accuracyPrivacyNote { background: #fff6e5; border: 1px solid #e0c080; }")
        row = QHBoxLayout(box)
        row.setContentsMargins(6, 4, 6, 4)
        self.privacy_text = QLabel()
        self.privacy_text.setObjectName("accuracyPrivacyText")
        self.privacy_text.setWordWrap(True)
        row.addWidget(self.privacy_text, 1)
        self.plan_other = QPushButton("Plan on another file…")
        self.plan_other.setObjectName("accuracyPlanOther")
        self.plan_other.setToolTip("Compute the chart on a public or similar file instead, with the same settings "
                                   "and the landmarks at the same relative positions")
        self.plan_other.clicked.connect(self.plan_on_other_file)
        self.plan_own = QPushButton("Back to the open data")
        self.plan_own.setObjectName("accuracyPlanOwn")
        self.plan_own.clicked.connect(lambda: self.plan_on(None))
        self.plan_own.hide()
        row.addWidget(self.plan_other)
        row.addWidget(self.plan_own)
        return box

    def _build_chart(self) -> pg.PlotWidget:
        self.chart = pg.PlotWidget(background="w")
        self.chart.setObjectName("accuracyChart")
        self.chart.setMinimumSize(320, 220)
        pi = self.chart.getPlotItem()
        pi.setLogMode(x=True, y=True)
        pi.showGrid(x=True, y=True, alpha=0.15)
        pi.setLabel("bottom", "ε (log scale)")
        pi.setMenuEnabled(False)
        self.legend = pi.addLegend(offset=(-8, 8), labelTextColor=(30, 30, 30), brush=(255, 255, 255, 220))
        self.lines: dict[str, pg.PlotDataItem] = {}
        for s in LANDMARK_SCHEMES:
            c = SCHEME_COLORS[s]
            self.lines[s] = pi.plot([], [], pen=pg.mkPen(c, width=2), symbol="o", symbolSize=4,
                                    symbolBrush=c, symbolPen=None, name=SCHEME_LABELS[s])
        self.marks = pg.ScatterPlotItem(size=11, symbol="o")
        pi.addItem(self.marks)
        self.target_line = pg.InfiniteLine(angle=0, movable=False,
                                           pen=pg.mkPen((200, 30, 30), width=1.5, style=Qt.PenStyle.DashLine),
                                           label="target", labelOpts={"position": 0.15, "color": (200, 30, 30)})
        pi.addItem(self.target_line)
        self.eps_line = pg.InfiniteLine(angle=90, movable=False,
                                        pen=pg.mkPen(EPSILON_LINE_COLOR, width=1, style=Qt.PenStyle.DotLine),
                                        label="current ε", labelOpts={"position": 0.92, "color": EPSILON_LINE_COLOR})
        pi.addItem(self.eps_line)
        return self.chart

    def _build_table(self) -> QWidget:
        t = QTableWidget(len(LANDMARK_SCHEMES), 3)
        t.setObjectName("accuracyTable")
        t.setHorizontalHeaderLabels(["Scheme", "Smallest ε", ""])
        t.verticalHeader().hide()
        t.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        t.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
        t.horizontalHeader().setStretchLastSection(True)
        self.use_buttons: dict[str, QPushButton] = {}
        for row, s in enumerate(LANDMARK_SCHEMES):
            item = QTableWidgetItem(f"■ {SCHEME_LABELS[s]}")
            item.setForeground(pg.mkColor(darker(SCHEME_COLORS[s], 0.85)))
            t.setItem(row, 0, item)
            t.setItem(row, 1, QTableWidgetItem("…"))
            b = QPushButton("Use")
            b.setObjectName(f"accuracyUse_{s}")
            b.setEnabled(False)
            b.clicked.connect(lambda _=False, s=s: self.use(s))
            self.use_buttons[s] = b
            t.setCellWidget(row, 2, b)
        t.resizeColumnsToContents()
        self.table = t
        box = QWidget()
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(t, 1)
        note = QLabel("The dots on the chart mark these ε. Each curve is the mean error over the R runs of the "
                      "Metrics table at 24 values of ε, without dummy landmarks; the chosen ε is used by the "
                      "preview and the export.")
        note.setWordWrap(True)
        note.setStyleSheet("color: #555;")
        lay.addWidget(note)
        box.setMinimumWidth(300)
        return box

    # ---------------------------------------------------------------------------------- inputs
    def _scale(self) -> float | None:
        s = self.plan_series if self.plan_path else self.session.release_series
        return None if s is None else advice.data_range(s, self.session.release_settings)

    def _unit(self) -> str:
        s = self.plan_series if self.plan_path else self.session.release_series
        return "" if s is None else unit_label(s)

    def _planned_series(self) -> Series | None:
        return self.plan_series if self.plan_path else self.session.release_series

    def requested_target(self) -> float | None:
        """The target as asked, in the data's units (None: "informative", or a percentage of no range)."""
        v = self.target_spin.value()
        mode = self.target_unit.currentData()
        if mode == INFORMATIVE:
            return None
        if mode == UNITS:
            return v
        scale = self._scale()
        return v / 100.0 * scale if scale else None

    def target(self) -> float | None:
        """The target error in the data's units: the one asked for, never above the informative target
        (:func:`~lmdk_gui.core.analysis.accuracy.planner_target`); None when there is none to plan for."""
        series = self._planned_series()
        req = self.requested_target()
        if series is None or (req is None and self.target_unit.currentData() != INFORMATIVE):
            return req
        return accuracy.planner_target(req, series)[0]

    def set_target(self, value: float, unit: str = UNITS) -> None:
        with signals_blocked(self.target_unit):
            self.target_unit.setCurrentIndex(self.target_unit.findData(unit))
        self.target_spin.setValue(value)
        self._target_changed()

    def _unit_changed(self) -> None:
        self.target_spin.setEnabled(self.target_unit.currentData() != INFORMATIVE)
        self._relabel_units()
        self._target_changed()

    def _relabel_units(self) -> None:
        self.target_unit.setItemText(self.target_unit.findData(UNITS), self._unit() or "units")

    def _key(self) -> tuple:
        """What the curves depend on: not ε (the grid replaces it), so "Use ε" does not recompute them."""
        s = self.session
        return (_Same(s.series), _Same(s.landmarks), s.settings.with_(epsilon=1.0), s.runs, s.seed,
                self.plan_path, self.error_field, s.resolution)

    def _inputs_changed(self, *_args) -> None:
        self._relabel_units()
        self._update_privacy_text()
        if self._key() == self._computed_key:
            return
        self._stale = True
        if self.isVisible():
            self._schedule()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self._schedule()

    @qdebounced(timeout=250)
    def _schedule(self) -> None:
        self.compute()

    def compute(self) -> None:
        """Start a sweep of the current inputs (the open data, or the file planned on) on the worker."""
        s = self.session
        if s.series is None:
            return
        self._stale = False
        self._computed_key = self._key()
        other = self.plan_path is not None
        rel = s.release_series  # (the periods at a coarser release resolution: what the schemes release)
        assert rel is not None
        job = _Job(self.plan_series if other else rel, self.plan_path, s.release_landmarks.copy(), rel.n, other,
                   s.release_settings, s.runs, s.seed, self.error_field)
        self.status.setText(f"Computing {len(accuracy.DEFAULT_GRID)} values of ε × {s.runs} runs…")
        self.cancel_button.show()
        self._runner.submit(_sweep, job)

    def cancel(self) -> None:
        self._runner.cancel()
        self._stale = True
        self._computed_key = None
        self.cancel_button.hide()
        self.status.setText("Cancelled; change the target or the settings to compute again.")

    def _on_curves(self, _gen: int, result) -> None:
        series, curves = result
        self.cancel_button.hide()
        if curves is None:
            return
        if self.plan_path is not None:
            self.plan_series = series
        self.curves = curves
        if self.status.text().startswith("Computing"):  # a load error stays readable
            self.status.setText("")
        self._update_privacy_text()
        self._relabel_units()
        self._target_changed()
        self.curvesReady.emit()

    def _on_failed(self, _gen: int, message: str) -> None:
        self.cancel_button.hide()
        text = f"⚠ {message.split(': ', 1)[-1]}"
        self._computed_key = None
        if self.plan_path is not None and self.plan_series is None:  # the other file did not load: back to
            self.plan_path = None                                     # the open data, saying why
            self._update_privacy_text()
            self.compute()
            text += " (planning on the open data)"
        self.status.setText(text)

    # --------------------------------------------------------------------------------- results
    def _target_changed(self, *_args) -> None:
        target = self.target()
        unit = self._unit()
        if target is None:
            self.target_note.setText("(no range to take a share of)" if self.target_unit.currentData() == PERCENT
                                     else "(no constant's error to stay below: give a target in units)")
            return
        self.target_note.setText(self._target_text(target, unit))
        if self.curves is None:
            return
        self.smallest = accuracy.smallest_epsilon(self.curves, target)
        self._draw(target)
        self._fill_table(target, unit)

    def _target_text(self, target: float, unit: str) -> str:
        """What the target is in the data's units, and why when it is the informative one."""
        series = self._planned_series()
        mode = self.target_unit.currentData()
        req = self.requested_target()
        const = "" if series is None else advice.constant_sentence(series, accuracy.constant_error(series), unit)
        if mode == INFORMATIVE:
            return f"= {advice.fmt(target, unit)} ({advice.INFORMATIVE_RATIO:g} × {const})"
        if req is not None and req > target:
            return (f"= {advice.fmt(req, unit)}, which one constant meets ({const}): planning for "
                    f"{advice.fmt(target, unit)}")
        return f"= {advice.fmt(target, unit)}" if mode == PERCENT else ""

    def _draw(self, target: float) -> None:
        c = self.curves
        assert c is not None
        spots = []
        for s, line in self.lines.items():
            err = c.errors.get(s)
            if err is None:
                line.setData([], [])
                continue
            ok = np.isfinite(err) & (err > 0)
            line.setData(c.grid[ok], err[ok])
            eps = self.smallest.get(s)
            if eps is not None:
                j = int(np.argmin(np.abs(c.grid - eps)))
                # log mode: scatter items take log10 coordinates
                spots.append({"pos": (math.log10(eps), math.log10(max(err[j], 1e-300))),
                              "brush": pg.mkBrush(*SCHEME_COLORS[s]), "pen": pg.mkPen(darker(SCHEME_COLORS[s]), width=1.5)})
        self.marks.setData(spots)
        unit = self._unit()
        self.target_line.setValue(math.log10(target))
        self.target_line.label.setFormat(f"target {advice.fmt(target, unit)}")
        self._draw_epsilon()
        what = "mean error of the denoised release" if c.error_field == "mae_denoised" else "mean error"
        self.chart.getPlotItem().setLabel("left", f"{what}{' (' + unit + ')' if unit else ''}, log scale")

    def _draw_epsilon(self, *_args) -> None:
        self.eps_line.setValue(math.log10(self.session.epsilon))

    def _fill_table(self, target: float, unit: str) -> None:
        c = self.curves
        assert c is not None
        top = float(c.grid[-1])
        for row, s in enumerate(LANDMARK_SCHEMES):
            eps = self.smallest.get(s)
            item = self.table.item(row, 1)
            b = self.use_buttons[s]
            if eps is None:
                item.setText(f"not reached ≤ {top:g}")
                b.setText("Use")
                b.setEnabled(False)
            else:
                err = c.errors[s][int(np.argmin(np.abs(c.grid - eps)))]
                item.setText(f"{eps:.3g}")
                item.setToolTip(f"mean error {advice.fmt(err, unit)} at ε = {eps:.3g}")
                b.setText(f"Use ε = {eps:.3g}")
                b.setEnabled(self.session.series is not None)
        self.table.resizeColumnsToContents()

    def use(self, scheme: str) -> None:
        """Set the session's ε to the smallest that meets the target for ``scheme``."""
        eps = self.smallest.get(scheme)
        if eps is not None and self.session.series is not None:
            self.session.set_epsilon(eps)

    # ---------------------------------------------------------------------------- plan elsewhere
    def _update_privacy_text(self) -> None:
        if self.plan_path is None:
            self.privacy_text.setText(
                "⚠ <b>Computed on the true data.</b> Choosing ε from this chart is not itself private: the "
                "ε you pick can reveal something about the data. To stay safe, plan on a public or similar "
                "file (e.g. last year's, or another household's).")
            self.plan_own.hide()
        else:
            self.privacy_text.setText(
                f"Planning on <b>{Path(self.plan_path).name}</b> (not the open data), with the same settings "
                f"and the landmarks at the same relative positions.")
            self.plan_own.show()

    def _ask_plan_file(self) -> str:
        path, _ = QFileDialog.getOpenFileName(self, "Plan on another file", "", "CSV (*.csv);;All files (*)")
        return path

    def plan_on_other_file(self) -> None:
        path = self.ask_plan_file()
        if path:
            self.plan_on(path)

    def plan_on(self, path: str | None) -> None:
        """Plan on ``path`` (loaded on the worker), or on the open data again (None)."""
        self.plan_path = str(path) if path else None
        self.plan_series = None
        self._update_privacy_text()
        self._stale = True
        self.compute()

    def shutdown(self) -> bool:
        self._runner.shutdown()
        return True


def install(window) -> AccuracyPanel:
    """The tab, a View-menu action and the Settings dock's button next to ε (``accuracyRequested``)."""
    panel = AccuracyPanel(window.session, window)
    window.tabs.addTab(panel, "What ε do I need?")

    def show() -> None:
        window.tabs.setCurrentWidget(panel)

    action = QAction("What ε do I need?…", window)
    action.setObjectName("accuracyAction")
    action.setStatusTip("Find the smallest ε that keeps the release's error within a target")
    action.triggered.connect(show)
    window.view_menu.addAction(action)
    window.accuracy_action = action
    sig = getattr(window.settings_panel, "accuracyRequested", None)
    if sig is not None:
        sig.connect(show)
    window.close_guards.append(panel.shutdown)
    return panel
