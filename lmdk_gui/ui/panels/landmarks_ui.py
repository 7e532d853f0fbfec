"""Landmarks menu: suggestion rules with a live count and a preview highlight; landmark list import/export.

Landmark choice is the user's (thesis §4.1: "landmark identification is an orthogonal problem"); the rules of
:mod:`lmdk_gui.core.analysis.suggestions` only *propose* rows (DESIGN §8). The panel shows a rule's parameters, the
number and percentage of events it would mark (recomputed on a worker while the user edits, coalesced by a
short debounce and :class:`~lmdk_gui.ui.window.runner.LatestOnlyRunner`, so stay points on 10^5+ fixes never block
the window), and highlights the proposal on the series plot (and on the track map for location series) in
a colour used for nothing else. Nothing changes until **Apply**, which replaces or adds to the current set
as one undoable step.

Automation API (tests and scripting): ``window.extensions["landmarks_ui"]`` is a :class:`LandmarksUI` with
``open_suggestions(rule) -> SuggestionPanel``, ``import_landmarks(path, mode=…)``, ``export_landmarks(path)``
and the replaceable hooks ``get_import_path``, ``get_export_path``, ``ask_import_mode``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDockWidget,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from ...core.analysis import suggestions as sugg
from ...core.analysis.metrics import share
from ...core.data.landmark_files import read_landmark_list, write_landmark_file
from ...core.data.series import LoadError, Series
from ..dialogs.common import warning_label
from ..views.plots import PassiveScatter, step_runs
from ..views.theme import darker, rgba
from ..window.runner import LatestOnlyRunner

#: Proposal highlight: a teal used by no scheme, not by landmarks (red) and not by dummies (pink).
PROPOSAL_COLOR = (23, 170, 190)
#: Parameter edits within this many ms are computed once.
DEBOUNCE_MS = 150
#: Rings are drawn around proposed events only when at most this many are in view (the band shows the rest).
RING_LIMIT = 6000
_SLIDER_STEPS = 1000


def _compute_rule(series: Series, rule: str, params: dict[str, Any], *, should_cancel=None) -> np.ndarray:
    return sugg.apply_rule(series, rule, **params)


def _compute_target(series: Series, rule: str, pct: float, vary: str, fixed: dict[str, Any], *,
                    should_cancel=None) -> tuple[dict[str, Any], np.ndarray]:
    return sugg.rule_for_percentage(series, rule, pct, vary=vary, **fixed)


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def describe(rule: sugg.Rule, params: dict[str, Any]) -> str:
    """Short text of a rule and its parameters for the undo history, e.g.
    ``Stay points: Distance Δl = 50 m, Duration Δt = 1 min``."""
    parts = []
    for p in rule.params:
        v = params.get(p.name)
        if v is None:
            continue
        if p.type == "labels":
            vals = list(v)
            shown = ", ".join(map(str, vals[:4])) + (f" +{len(vals) - 4} more" if len(vals) > 4 else "")
            parts.append(f"{p.label} {{{shown}}}")
        else:
            parts.append(f"{p.label} = {_fmt(float(v))}{' ' + p.unit if p.unit else ''}")
    return f"{rule.label}: " + ", ".join(parts) if parts else rule.label


# ------------------------------------------------------------------------------------- form fields
class NumberField(QWidget):
    """A float parameter: an (optional) enable box, a spin box and a slider over the useful range.

    The slider maps linearly for data-valued parameters (thresholds) and with a cube for parameters that
    start at 0 (distance, duration, penalty), whose interesting values sit near the bottom of a wide range
    (a 50 m stay radius on an 8 km track; penalties of a few units below a root gain of thousands).
    """

    changed = Signal()

    def __init__(self, spec: sugg.ParamSpec, data_range: tuple[float, float], value: float | None,
                 parent: QWidget | None = None, *, fallback: float | None = None) -> None:
        """``fallback`` is what the spin box shows for an unused optional parameter (so that ticking it
        starts somewhere sensible, e.g. "above" at the 80th percentile rather than the minimum)."""
        super().__init__(parent)
        self.spec = spec
        lo, hi = data_range
        if not (math.isfinite(lo) and math.isfinite(hi)):
            lo, hi = 0.0, 1.0
        span = hi - lo if hi > lo else max(abs(hi), 1.0)
        pad = 0.05 * span
        spin_lo = spec.minimum if spec.minimum is not None else lo - pad
        spin_hi = spec.maximum if spec.maximum is not None else hi + pad
        self._cubic = spec.minimum is not None and spec.minimum == 0.0
        self._sl_lo = lo if spec.minimum is not None else spin_lo
        self._sl_hi = hi if (spec.maximum is not None and hi > lo) else spin_hi
        if value is not None:
            spin_lo, spin_hi = min(spin_lo, value), max(spin_hi, value)
            self._sl_lo, self._sl_hi = min(self._sl_lo, value), max(self._sl_hi, value)
        if not self._sl_hi > self._sl_lo:
            self._sl_hi = self._sl_lo + 1.0
        decimals = int(min(6, max(1, 4 - math.floor(math.log10(span)))))

        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.check: QCheckBox | None = None
        if spec.optional:
            self.check = QCheckBox()
            self.check.setObjectName(f"suggestUse_{spec.name}")
            self.check.setToolTip(f"use “{spec.label}”")
            self.check.setChecked(value is not None)
            self.check.toggled.connect(self._on_toggle)
            lay.addWidget(self.check)
        self.spin = QDoubleSpinBox()
        self.spin.setObjectName(f"suggestParam_{spec.name}")
        self.spin.setDecimals(decimals)
        self.spin.setRange(spin_lo, spin_hi)
        self.spin.setStepType(QDoubleSpinBox.StepType.AdaptiveDecimalStepType)
        self.spin.setKeyboardTracking(False)
        if spec.unit:
            self.spin.setSuffix(f" {spec.unit}")
        self.spin.setMinimumWidth(110)
        self.spin.setToolTip(spec.help)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName(f"suggestSlider_{spec.name}")
        self.slider.setRange(0, _SLIDER_STEPS)
        self.slider.setToolTip(spec.help)
        self.slider.setMinimumWidth(80)
        lay.addWidget(self.spin)
        lay.addWidget(self.slider, 1)
        shown = value if value is not None else (fallback if fallback is not None else lo)
        self.spin.setValue(shown if math.isfinite(shown) else 0.0)
        self._sync_slider()
        self.spin.valueChanged.connect(self._on_spin)
        self.slider.valueChanged.connect(self._on_slider)
        self._on_toggle(self.is_enabled())

    def is_enabled(self) -> bool:
        return self.check is None or self.check.isChecked()

    def value(self) -> float | None:
        return float(self.spin.value()) if self.is_enabled() else None

    def set_value(self, value: float | None) -> None:
        """Set without emitting ``changed`` (the caller recomputes once)."""
        for w in (self.spin, self.slider, *( [self.check] if self.check else [])):
            w.blockSignals(True)
        try:
            if self.check is not None:
                self.check.setChecked(value is not None)
            if value is not None:
                if value > self.spin.maximum():
                    self.spin.setMaximum(value)
                if value < self.spin.minimum():
                    self.spin.setMinimum(value)
                self.spin.setValue(float(value))
                self._sync_slider()
        finally:
            for w in (self.spin, self.slider, *( [self.check] if self.check else [])):
                w.blockSignals(False)
        self._on_toggle(self.is_enabled(), emit=False)

    def _to_slider(self, v: float) -> int:
        f = (v - self._sl_lo) / (self._sl_hi - self._sl_lo)
        f = min(max(f, 0.0), 1.0)
        if self._cubic:
            f = f ** (1.0 / 3.0)
        return int(round(f * _SLIDER_STEPS))

    def _from_slider(self, pos: int) -> float:
        f = pos / _SLIDER_STEPS
        if self._cubic:
            f = f ** 3
        return self._sl_lo + f * (self._sl_hi - self._sl_lo)

    def _sync_slider(self) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(self._to_slider(self.spin.value()))
        self.slider.blockSignals(False)

    def _on_spin(self, _v: float) -> None:
        self._sync_slider()
        self.changed.emit()

    def _on_slider(self, pos: int) -> None:
        self.spin.blockSignals(True)
        self.spin.setValue(self._from_slider(pos))
        self.spin.blockSignals(False)
        self.changed.emit()

    def _on_toggle(self, on: bool, emit: bool = True) -> None:
        self.spin.setEnabled(on)
        self.slider.setEnabled(on)
        if emit and self.check is not None:
            self.changed.emit()


class LabelsField(QWidget):
    """A multi-select of the series' categories, most frequent first, with event counts and a filter."""

    changed = Signal()

    def __init__(self, spec: sugg.ParamSpec, series: Series, values: list[str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        self.filter = QLineEdit()
        self.filter.setObjectName("suggestCategoryFilter")
        self.filter.setPlaceholderText("filter categories…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        all_b = QPushButton("All")
        none_b = QPushButton("None")
        for b in (all_b, none_b):
            b.setAutoDefault(False)
        all_b.setObjectName("suggestCategoryAll")
        none_b.setObjectName("suggestCategoryNone")
        all_b.clicked.connect(lambda: self._check_all(True))
        none_b.clicked.connect(lambda: self._check_all(False))
        top.addWidget(self.filter, 1)
        top.addWidget(all_b)
        top.addWidget(none_b)
        lay.addLayout(top)
        self.list = QListWidget()
        self.list.setObjectName("suggestCategories")
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.list.setMinimumHeight(160)
        self.list.setToolTip(spec.help)
        lay.addWidget(self.list, 1)
        cats = series.categories or ()
        freq = np.bincount(series.values, minlength=len(cats)) if series.n else np.zeros(len(cats), int)
        chosen = set(map(str, values))
        for code in np.argsort(-freq, kind="stable"):
            label = cats[int(code)]
            f = int(freq[code])
            item = QListWidgetItem(f"{label}    {f:,} events ({share(f, series.n)})")
            item.setData(Qt.ItemDataRole.UserRole, label)
            item.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
            item.setCheckState(Qt.CheckState.Checked if label in chosen else Qt.CheckState.Unchecked)
            self.list.addItem(item)
        self.list.itemChanged.connect(lambda _i: self.changed.emit())

    def value(self) -> list[str]:
        out = []
        for i in range(self.list.count()):
            it = self.list.item(i)
            if it.checkState() == Qt.CheckState.Checked:
                out.append(str(it.data(Qt.ItemDataRole.UserRole)))
        return out

    def set_value(self, values) -> None:
        chosen = set(map(str, values or ()))
        self.list.blockSignals(True)
        try:
            for i in range(self.list.count()):
                it = self.list.item(i)
                on = str(it.data(Qt.ItemDataRole.UserRole)) in chosen
                it.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        finally:
            self.list.blockSignals(False)

    def _check_all(self, on: bool) -> None:
        self.list.blockSignals(True)
        try:
            for i in range(self.list.count()):
                it = self.list.item(i)
                if not it.isHidden():
                    it.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        finally:
            self.list.blockSignals(False)
        self.changed.emit()

    def _apply_filter(self, text: str) -> None:
        t = text.strip().lower()
        for i in range(self.list.count()):
            it = self.list.item(i)
            it.setHidden(bool(t) and t not in str(it.data(Qt.ItemDataRole.UserRole)).lower())


# ------------------------------------------------------------------------------- preview highlight
class ProposalOverlay:
    """The proposal drawn on the series plot (a translucent teal band plus rings around proposed events in
    view) and, for location series, rings on the track map. Items are added on :meth:`show` and removed on
    :meth:`clear`, so a closed panel leaves the plots exactly as they were. Each show after a clear makes
    fresh items (pyqtgraph 0.14 fails to re-add a removed PlotDataItem: its cached view is the widget)."""

    def __init__(self, window) -> None:
        self.window = window
        self._make_items()
        self.rows = np.zeros(0, dtype=np.int64)
        self._shown = False
        self._on_track = False

    def _make_items(self) -> None:
        brush = pg.mkBrush(rgba(PROPOSAL_COLOR, 70))
        self.band = pg.PlotDataItem(pen=pg.mkPen(rgba(PROPOSAL_COLOR, 160), width=1), fillLevel=0.0, brush=brush)
        self.band.setDownsampling(auto=True, method="peak")
        self.band.setClipToView(True)
        self.band.setZValue(-8)
        self.rings = PassiveScatter(size=11, pen=pg.mkPen(darker(PROPOSAL_COLOR, 0.8), width=1.5), brush=None,
                                    symbol="o")
        self.rings.setZValue(20)
        self._make_track_rings()

    def _make_track_rings(self) -> None:
        self.track_rings = PassiveScatter(size=9, pen=pg.mkPen(darker(PROPOSAL_COLOR, 0.8), width=1.5),
                                          brush=pg.mkBrush(rgba(PROPOSAL_COLOR, 90)), symbol="o")
        self.track_rings.setZValue(15)

    @property
    def shown(self) -> bool:
        return self._shown

    def show(self, rows: np.ndarray) -> None:
        w = self.window
        plot = w.series_plot
        series = plot.series
        if series is None:
            return
        self.rows = np.asarray(rows, dtype=np.int64)
        if not self._shown:
            pi = plot.getPlotItem()
            pi.addItem(self.band, ignoreBounds=True)
            pi.addItem(self.rings, ignoreBounds=True)
            plot.legend.addItem(self.rings, "proposed<br>(not applied)")  # one line was cut at the window edge
            plot.vb.sigXRangeChanged.connect(self._update_rings)
            self._shown = True
        y = plot.y
        fin = y[np.isfinite(y)] if y.size else y
        lo, hi = (float(fin.min()), float(fin.max())) if fin.size else (0.0, 1.0)
        pad = 0.04 * (hi - lo) if hi > lo else 0.5
        top = np.full(series.n, lo - pad)
        top[self.rows] = hi + pad
        self.band.setFillLevel(lo - pad)
        self.band.setData(*step_runs(top), skipFiniteCheck=True)
        self._update_rings()
        if series.kind == "location" and w.track_plot.isVisible():  # (other kinds never build the track view)
            track = w.track_plot
            if not self._on_track:
                track.getPlotItem().addItem(self.track_rings)  # no legend entry: the track view rebuilds
                self._on_track = True
            pts = series.values[self.rows]
            self.track_rings.setData(pts[:, 1], pts[:, 0])
        elif self._on_track:
            self._remove_track()

    def _update_rings(self, *_args) -> None:
        plot = self.window.series_plot
        if not self._shown or plot.series is None or self.rows.size == 0:
            self.rings.setData([], [])
            return
        a, b = plot.visible_rows()
        i0, i1 = np.searchsorted(self.rows, [a, b + 1])
        vis = self.rows[i0:i1]
        if vis.size > RING_LIMIT:
            self.rings.setData([], [])
        else:
            self.rings.setData(vis.astype(np.float64), plot.y[vis])

    def _remove_track(self) -> None:
        track = self.window.track_plot
        track.getPlotItem().removeItem(self.track_rings)
        self._on_track = False
        self._make_track_rings()

    def clear(self) -> None:
        if self._shown:
            plot = self.window.series_plot
            try:
                plot.vb.sigXRangeChanged.disconnect(self._update_rings)
            except (RuntimeError, TypeError):
                pass
            plot.legend.removeItem(self.rings)
            pi = plot.getPlotItem()
            pi.removeItem(self.band)
            pi.removeItem(self.rings)
            self._shown = False
        if self._on_track:
            self._remove_track()
        self.rows = np.zeros(0, dtype=np.int64)
        self._make_items()


# ------------------------------------------------------------------------------------- the panel
class SuggestionPanel(QWidget):
    """Parameters of one rule, built from its :class:`~lmdk_gui.core.analysis.suggestions.ParamSpec` s, with a live
    count, a "target %" helper and Apply (replace / add to the current landmarks)."""

    #: a proposal for the current parameters is ready (its size)
    proposalReady = Signal(int)
    #: the parameters cannot be used (message)
    proposalFailed = Signal(str)
    #: the target helper set new parameters (the achieved count follows with ``proposalReady``)
    targetFound = Signal(int)
    #: a suggestion was applied (number of landmarks afterwards)
    applied = Signal(int)

    def __init__(self, ui: LandmarksUI) -> None:
        super().__init__()
        self.setObjectName("suggestionPanel")
        self.ui = ui
        self.window = ui.window
        self.session = ui.window.session
        self.overlay = ProposalOverlay(self.window)
        self.rule: sugg.Rule | None = None
        self.series: Series | None = None
        self.fields: dict[str, NumberField | LabelsField] = {}
        self.proposal: np.ndarray | None = None
        self._proposal_key: tuple | None = None
        self._runner: LatestOnlyRunner | None = None
        self._target_runner: LatestOnlyRunner | None = None
        self._pending_key: tuple | None = None
        self._target_request: tuple[float, str] = (0.0, "")
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._submit)
        self._active = False
        self._build()
        self.session.landmarksChanged.connect(self._update_after)

    # ------------------------------------------------------------------------------- layout
    def _build(self) -> None:
        """Rule, help, parameters and the target helper scroll; the count, the mode and Apply/Close stay
        at the bottom, always visible (a 1280×800 screen cannot show a long category list and all)."""
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(4)
        body = QWidget()
        body.setObjectName("suggestBody")
        lay = QVBoxLayout(body)
        lay.setContentsMargins(6, 6, 6, 0)
        top = QHBoxLayout()
        top.addWidget(QLabel("Rule:"))
        self.rule_combo = QComboBox()
        self.rule_combo.setObjectName("suggestRule")
        self.rule_combo.currentIndexChanged.connect(self._on_rule_combo)
        top.addWidget(self.rule_combo, 1)
        lay.addLayout(top)
        self.help = QLabel()
        self.help.setObjectName("suggestHelp")
        self.help.setWordWrap(True)
        self.help.setStyleSheet("color: #555;")
        lay.addWidget(self.help)

        self.param_box = QGroupBox("Parameters")
        self.form = QFormLayout(self.param_box)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        lay.addWidget(self.param_box)

        tgt = QGroupBox("Aim for a landmark percentage")
        tv = QVBoxLayout(tgt)
        tl = QHBoxLayout()
        self.target_spin = QDoubleSpinBox()
        self.target_spin.setObjectName("suggestTarget")
        self.target_spin.setRange(0.0, 100.0)
        self.target_spin.setDecimals(1)
        self.target_spin.setSuffix(" %")
        self.target_spin.setValue(20.0)
        self.vary_combo = QComboBox()
        self.vary_combo.setObjectName("suggestVary")
        self.vary_combo.setToolTip("the parameter the search changes (the others stay as set)")
        self.find_button = QPushButton("Find")
        self.find_button.setObjectName("suggestFind")
        self.find_button.setAutoDefault(False)
        self.find_button.setToolTip("search the parameter that gets closest to this percentage")
        self.find_button.clicked.connect(lambda: self.find_target(self.target_spin.value()))
        tl.addWidget(self.target_spin)
        self.vary_label = QLabel("by")
        tl.addWidget(self.vary_label)
        tl.addWidget(self.vary_combo, 1)
        tl.addWidget(self.find_button)
        tv.addLayout(tl)
        self.target_status = QLabel("")
        self.target_status.setObjectName("suggestTargetStatus")
        self.target_status.setWordWrap(True)
        self.target_status.setStyleSheet("color: #555;")
        self.target_status.hide()
        tv.addWidget(self.target_status)
        lay.addWidget(tgt)
        lay.addWidget(warning_label(f"⚠ {sugg.RULE_WARNING}", "suggestWarning"))
        lay.addStretch(1)
        self._body_layout = lay

        scroll = QScrollArea()
        scroll.setObjectName("suggestScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)

        foot = QWidget()
        fl = QVBoxLayout(foot)
        fl.setContentsMargins(6, 2, 6, 6)
        self.count_label = QLabel("…")
        self.count_label.setObjectName("suggestCount")
        self.count_label.setWordWrap(True)
        self.count_label.setTextFormat(Qt.TextFormat.RichText)
        self.count_label.setMinimumHeight(30)
        fl.addWidget(self.count_label)
        self.replace_radio = QRadioButton("Replace")
        self.replace_radio.setObjectName("suggestReplace")
        self.replace_radio.setToolTip("the proposal becomes the landmark set")
        self.add_radio = QRadioButton("Add")
        self.add_radio.setObjectName("suggestAdd")
        self.add_radio.setToolTip("the proposal is added to the current landmarks")
        self.replace_radio.setChecked(True)
        self.mode_group = QButtonGroup(self)
        self.mode_group.addButton(self.replace_radio)
        self.mode_group.addButton(self.add_radio)
        ml = QHBoxLayout()
        ml.addWidget(self.replace_radio)
        ml.addWidget(self.add_radio)
        ml.addStretch(1)
        fl.addLayout(ml)
        buttons = QHBoxLayout()
        self.apply_button = QPushButton("Apply")
        self.apply_button.setObjectName("suggestApply")
        self.apply_button.setToolTip("make the proposal the landmarks (one step: Edit › Undo takes it back)")
        self.apply_button.clicked.connect(lambda: self.apply())
        self.close_button = QPushButton("Close")
        self.close_button.setObjectName("suggestClose")
        self.close_button.setToolTip("close the panel and remove the highlight (nothing is applied)")
        self.close_button.clicked.connect(self.ui.close_suggestions)
        for b in (self.apply_button, self.close_button):
            b.setAutoDefault(False)
        buttons.addStretch(1)
        buttons.addWidget(self.apply_button)
        buttons.addWidget(self.close_button)
        fl.addLayout(buttons)
        outer.addWidget(foot)

    # --------------------------------------------------------------------------------- rules
    def set_rule(self, rule: str | sugg.Rule) -> None:
        """Show ``rule`` for the session's current series (its parameters start at the last values used
        on this series, else at :func:`~lmdk_gui.core.analysis.suggestions.defaults`)."""
        series = self.session.series
        if series is None:
            raise RuntimeError("no series is open")
        r = sugg.get_rule(rule)
        if not r.supports(series.kind):
            raise ValueError(f"the {r.label} rule needs a {' or '.join(r.kinds)} series; this one is {series.kind}")
        self.series = series
        self.rule = r
        self._fill_rule_combo()
        self.help.setText(r.help)
        self.param_box.setTitle(f"{r.label} — parameters")
        self._build_fields()
        vary = [p for p in r.params if p.type == "float"]
        self.vary_combo.clear()
        for p in vary:
            self.vary_combo.addItem(p.label, p.name)
        if r.main in [p.name for p in vary]:
            self.vary_combo.setCurrentIndex([p.name for p in vary].index(r.main))
        show_vary = len(vary) > 1
        self.vary_combo.setVisible(show_vary)
        self.vary_label.setVisible(show_vary)
        self.target_status.setText("")
        self.target_status.hide()
        self.invalidate()

    def _fill_rule_combo(self) -> None:
        assert self.series is not None and self.rule is not None
        self.rule_combo.blockSignals(True)
        self.rule_combo.clear()
        for r in sugg.rules_for_kind(self.series.kind):
            self.rule_combo.addItem(r.label, r.name)
        self.rule_combo.setCurrentIndex(max(0, self.rule_combo.findData(self.rule.name)))
        self.rule_combo.blockSignals(False)

    def _on_rule_combo(self, _i: int) -> None:
        name = self.rule_combo.currentData()
        if name and self.rule is not None and name != self.rule.name:
            self.set_rule(name)

    def _build_fields(self) -> None:
        assert self.series is not None and self.rule is not None
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields = {}
        series, r = self.series, self.rule
        start = sugg.defaults(series, r)
        start.update(self.ui.remembered_params(series, r.name))
        rng = sugg.ranges(series, r)
        for p in r.params:
            if p.type == "labels":
                f: NumberField | LabelsField = LabelsField(p, series, list(start.get(p.name) or []))
                label = QLabel(f"{p.label} (tick one or more):")
                label.setToolTip(p.help)
                self.form.addRow(label)
                self.form.addRow(f)
            else:
                fallback = None
                if r.name == "threshold" and series.n:  # an unticked side starts at its usual tail
                    fallback = float(np.quantile(series.values, 0.2 if p.name == "below" else 0.8))
                f = NumberField(p, rng.get(p.name, (p.minimum or 0.0, p.maximum or 1.0)), start.get(p.name),
                                fallback=fallback)
                label = QLabel(p.label)  # the unit is the spin box's suffix
                label.setToolTip(p.help)
                self.form.addRow(label, f)
            f.changed.connect(self.invalidate)
            self.fields[p.name] = f
        # a category list takes the spare height; number fields keep their natural size
        has_list = any(isinstance(f, LabelsField) for f in self.fields.values())
        self._body_layout.setStretchFactor(self.param_box, 1 if has_list else 0)
        self._body_layout.setStretch(self._body_layout.count() - 1, 0 if has_list else 1)  # trailing stretch

    # ------------------------------------------------------------------------------ computing
    def params(self) -> dict[str, Any]:
        """The parameters as the form shows them (``None`` for an unused optional one)."""
        out: dict[str, Any] = {}
        for name, f in self.fields.items():
            out[name] = f.value()
        return out

    def set_params(self, **params: Any) -> None:
        """Set some parameters (as a user would; one recomputation follows)."""
        for name, v in params.items():
            if name not in self.fields:
                raise ValueError(f"the {self.rule.name if self.rule else '?'} rule has no parameter {name!r}")
            self.fields[name].set_value(v)
        self.invalidate()

    def _key(self) -> tuple:
        p = self.params()
        return (id(self.series), self.rule.name if self.rule else None,
                tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(p.items())))

    def is_current(self) -> bool:
        """True when :attr:`proposal` is the proposal for the parameters now shown."""
        return self.proposal is not None and self._proposal_key == self._key()

    def invalidate(self) -> None:
        """Parameters changed: forget the proposal and compute a new one after the debounce."""
        self.proposal = None
        self.apply_button.setEnabled(False)
        self._set_count_text("<span style='color:#777'>computing…</span>")
        if self._active:
            self._timer.start()

    def _count_runner(self) -> LatestOnlyRunner:
        if self._runner is None:  # created on first use: a window that never suggests starts no thread
            self._runner = LatestOnlyRunner("suggest", self)
            self._runner.finished.connect(self._on_result)
            self._runner.failed.connect(self._on_failed)
        return self._runner

    def _sweep_runner(self) -> LatestOnlyRunner:
        if self._target_runner is None:
            self._target_runner = LatestOnlyRunner("suggest-target", self)
            self._target_runner.finished.connect(self._on_target)
            self._target_runner.failed.connect(self._on_target_failed)
        return self._target_runner

    def _submit(self) -> None:
        if self.series is None or self.rule is None or self.session.series is not self.series:
            return
        params = {k: v for k, v in self.params().items() if v is not None or self.rule.param(k).optional}
        self._pending_key = self._key()
        self._count_runner().submit(_compute_rule, self.series, self.rule.name, params)

    def _on_result(self, gen: int, rows: np.ndarray) -> None:
        if self._runner is None or not self._runner.is_current(gen) or self._pending_key != self._key():
            return
        self.proposal = np.asarray(rows, dtype=np.int64)
        self._proposal_key = self._pending_key
        if self.series is not None and self.rule is not None:
            self.ui.remember_params(self.series, self.rule.name, self.params())
        self._show_proposal()
        self.proposalReady.emit(int(self.proposal.size))

    def _on_failed(self, gen: int, message: str) -> None:
        if self._runner is None or not self._runner.is_current(gen):
            return
        msg = message.split(": ", 1)[1] if message.startswith("ValueError: ") else message
        if self.rule is not None and self.rule.name == "threshold" and "give below, above or both" in msg:
            msg = "Tick Below, Above or both."
        self.proposal = None
        self.overlay.clear()
        self._set_count_text(f"<span style='color:#b00000'>{msg}</span>")
        self.apply_button.setEnabled(False)
        self.proposalFailed.emit(msg)

    def _show_proposal(self) -> None:
        assert self.proposal is not None and self.series is not None
        n = self.series.n
        k = int(self.proposal.size)
        self._set_count_text(f"<b style='font-size:11pt'>{k:,}</b> of {n:,} events "
                             f"(<b>{share(k, n)}</b>) would be landmarks")
        self.apply_button.setEnabled(True)
        if self._active:
            self.overlay.show(self.proposal)
        self._update_after()

    def _set_count_text(self, html: str) -> None:
        self.count_label.setText(html)

    def _update_after(self) -> None:
        """Show how many landmarks each mode would leave."""
        if self.proposal is None or self.session.series is None:
            self.replace_radio.setText("Replace")
            self.add_radio.setText("Add")
            return
        cur = self.session.landmarks
        added = int(np.union1d(cur, self.proposal).size)
        self.replace_radio.setText(f"Replace ({cur.size:,} → {self.proposal.size:,} landmarks)")
        self.add_radio.setText(f"Add ({cur.size:,} → {added:,})")

    # --------------------------------------------------------------------------------- target
    def find_target(self, percent: float, vary: str | None = None) -> None:
        """Search (on a worker) the parameter giving the landmark percentage closest to ``percent``;
        the form then shows it and ``targetFound`` fires."""
        if self.series is None or self.rule is None:
            return
        r = self.rule
        if vary is None:
            vary = self.vary_combo.currentData() or r.main
            if r.name == "threshold":  # sweep the side that is in use
                p = self.params()
                if p.get("below") is None and p.get("above") is not None:
                    vary = "above"
                elif vary == "above" and p.get("above") is None:
                    vary = "below"
        fixed = {k: v for k, v in self.params().items() if k != vary and v is not None}
        if r.name in ("category", "changepoints"):
            fixed = {}
        self._target_request = (float(percent), vary)
        self.find_button.setEnabled(False)
        self.target_status.setText(f"Searching for {percent:g} %…")
        self.target_status.show()
        self._sweep_runner().submit(_compute_target, self.series, r.name, float(percent), vary, fixed)

    def _on_target(self, gen: int, result) -> None:
        if self._target_runner is None or not self._target_runner.is_current(gen):
            return
        self.find_button.setEnabled(True)
        params, rows = result
        pct, vary = self._target_request
        if self.rule is not None and self.rule.name == "threshold":
            params = {"below": params.get("below"), "above": params.get("above")}
        self.set_params(**{k: v for k, v in params.items() if k in self.fields})
        n = self.series.n if self.series is not None else 0
        got = 100.0 * rows.size / n if n else 0.0
        spec = self.rule.param(vary) if self.rule is not None else None
        what = f"{spec.label} = {_fmt(float(params[vary]))} {spec.unit}".rstrip() if spec is not None and \
            spec.type == "float" and params.get(vary) is not None else "the closest category list"
        self.target_status.setText(f"Closest to {pct:g} %: {what} → {got:.1f} %")
        self.target_status.show()
        self.targetFound.emit(int(rows.size))

    def _on_target_failed(self, gen: int, message: str) -> None:
        if self._target_runner is None or not self._target_runner.is_current(gen):
            return
        self.find_button.setEnabled(True)
        self.target_status.setText(message.split(": ", 1)[-1])
        self.target_status.show()

    # ---------------------------------------------------------------------------------- apply
    def mode(self) -> str:
        return "add" if self.add_radio.isChecked() else "replace"

    def apply(self, mode: str | None = None) -> bool:
        """Apply the current proposal (``mode`` "replace" or "add"; default: the radio buttons) as one
        undoable step. Returns False when there is no current proposal or nothing would change."""
        if not self.is_current() or self.rule is None or self.session.series is not self.series:
            return False
        mode = mode or self.mode()
        if mode not in ("replace", "add"):
            raise ValueError(f"mode must be 'replace' or 'add', got {mode!r}")
        assert self.proposal is not None
        before = self.session.landmarks
        rows = self.proposal if mode == "replace" else np.union1d(before, self.proposal)
        verb = "replace" if mode == "replace" else "add"
        rules = frozenset({self.rule.label}) | (self.session.landmark_rules if mode == "add" else frozenset())
        self.session.set_landmarks(rows, text=f"Suggest: {describe(self.rule, self.params())} ({verb})", rules=rules)
        changed = not np.array_equal(self.session.landmarks, before)
        msg = (f"{self.session.landmarks.size:,} landmarks after applying {self.rule.label.lower()}"
               if changed else "The proposal is already the landmark set; nothing changed.")
        self.window.statusBar().showMessage(msg, 8000)
        self.overlay.clear()  # applied: the highlight would now mark the landmarks twice
        if changed:
            self.applied.emit(int(self.session.landmarks.size))
        return changed

    # --------------------------------------------------------------------------- activation
    def activate(self) -> None:
        """The panel is shown: compute and highlight."""
        self._active = True
        if self.is_current():
            self._show_proposal()
        else:
            self.invalidate()

    def deactivate(self) -> None:
        """The panel is hidden: stop computing and remove the highlight."""
        self._active = False
        self._timer.stop()
        for r in (self._runner, self._target_runner):
            if r is not None:
                r.cancel()
        self.find_button.setEnabled(True)
        self.overlay.clear()

    def shutdown(self) -> None:
        self.deactivate()
        for attr in ("_runner", "_target_runner"):
            r = getattr(self, attr)
            if r is not None:
                r.shutdown(1.0)
                setattr(self, attr, None)


class SuggestionDock(QDockWidget):
    """Dock holding the panel; hiding or closing it removes the highlight."""

    def __init__(self, panel: SuggestionPanel, parent: QWidget) -> None:
        super().__init__("Suggest landmarks", parent)
        self.setObjectName("suggestDock")
        panel.setMinimumWidth(300)
        self.setWidget(panel)
        self.panel = panel
        self.visibilityChanged.connect(self._on_visible)

    def _on_visible(self, visible: bool) -> None:
        if visible:
            self.panel.activate()
        elif self.isHidden():  # closed or toggled off (not merely tabbed behind another dock)
            self.panel.deactivate()

    def closeEvent(self, ev):  # noqa: N802 - Qt naming
        self.panel.deactivate()
        super().closeEvent(ev)


# ----------------------------------------------------------------------------------- the feature
class LandmarksUI(QObject):
    """Landmarks menu additions: one *Suggest* entry per rule, and landmark list import/export."""

    #: import finished: number of landmarks afterwards
    imported = Signal(int)

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.session = window.session
        self.panel: SuggestionPanel | None = None
        self.dock: SuggestionDock | None = None
        self._params: dict[str, dict[str, Any]] = {}  # last parameters per rule (kept with the project)
        #: Replaceable hooks (tests): return a path, or "" / None to cancel.
        self.get_import_path: Callable[[], str | None] = self._ask_import_path
        self.get_export_path: Callable[[], str | None] = self._ask_export_path
        #: (landmarks in the file, current landmarks) -> "replace" | "add" | None (cancel)
        self.ask_import_mode: Callable[[int, int], str | None] = self._ask_import_mode
        self._build_menu()
        self.session.seriesChanged.connect(self._on_series)
        self._on_series()
        window.installEventFilter(self)

    def eventFilter(self, obj, ev) -> bool:  # noqa: N802 - Qt naming
        # After the window has really closed (every close guard agreed), stop the panel's worker threads.
        if obj is self.window and ev.type() == QEvent.Type.Close:
            QTimer.singleShot(0, self._after_close)
        return False

    def _after_close(self) -> None:
        if not self.window.isVisible():
            self.shutdown()

    # ------------------------------------------------------------------------------- menu
    def _build_menu(self) -> None:
        w = self.window
        m = w.landmarks_menu
        m.setToolTipsVisible(True)
        m.addSection("Suggest")
        self.rule_actions: dict[str, QAction] = {}
        for r in sugg.RULES.values():
            a = QAction(f"{r.label}…", w)
            a.setObjectName(f"suggest{r.name.capitalize()}Action")
            a.setStatusTip(r.help)
            a.triggered.connect(lambda _=False, name=r.name: self.open_suggestions(name))
            m.addAction(a)
            self.rule_actions[r.name] = a
        m.addSeparator()
        self.import_action = QAction("&Import landmark list…", w)
        self.import_action.setObjectName("importLandmarksAction")
        self.import_action.setStatusTip("Read landmarks from a CSV with a 'timestamp' column (or 'row': event "
                                        "numbers from 0, as the hover box shows them)")
        self.import_action.triggered.connect(self.import_dialog)
        self.export_action = QAction("E&xport landmark list…", w)
        self.export_action.setObjectName("exportLandmarksAction")
        self.export_action.setStatusTip("Write the landmarks as a CSV (timestamp, row = the event number the "
                                        "hover box shows); the file is private")
        self.export_action.triggered.connect(self.export_dialog)
        m.addAction(self.import_action)
        m.addAction(self.export_action)

    def _on_series(self) -> None:
        s = self.session.series
        for name, a in self.rule_actions.items():
            r = sugg.RULES[name]
            if s is None:
                a.setEnabled(False)
                a.setToolTip("Open a series first")
            elif r.supports(s.kind):
                a.setEnabled(True)
                a.setToolTip(r.help)
            else:
                a.setEnabled(False)
                a.setToolTip(f"Needs a {' or '.join(r.kinds)} series; this one is {s.kind}.")
        self.import_action.setEnabled(s is not None)
        self.export_action.setEnabled(s is not None)
        self._params = {}  # a new series starts from its own defaults (a project restores its own after)
        if self.panel is not None and self.dock is not None:
            if s is None:
                self.close_suggestions()
            elif self.panel.series is not s:
                rule = self.panel.rule
                keep = rule is not None and rule.supports(s.kind)
                new_rule = rule.name if keep else sugg.rules_for_kind(s.kind)[0].name
                self.panel.overlay.clear()
                self.panel.set_rule(new_rule)
                if self.dock.isVisible():
                    self.panel.activate()

    # -------------------------------------------------------------------------- suggestions
    def open_suggestions(self, rule: str) -> SuggestionPanel:
        """Show the suggestion panel for ``rule`` (docked on the right; non-modal)."""
        w = self.window
        if self.panel is None:
            self.panel = SuggestionPanel(self)
            self.dock = SuggestionDock(self.panel, w)
            self.dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable
                                  | QDockWidget.DockWidgetFeature.DockWidgetMovable
                                  | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
            # Tabbed with the settings (left): the plots keep their width, which matters at 1280 px
            # with a location series (series plot and track map side by side).
            w.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.dock)
            w.tabifyDockWidget(w.settings_dock, self.dock)
            self.dock.hide()
            w.view_menu.addAction(self.dock.toggleViewAction())
        assert self.dock is not None
        self.panel.set_rule(rule)
        self.dock.show()
        self.dock.raise_()
        self.panel.activate()
        return self.panel

    def close_suggestions(self) -> None:
        if self.dock is not None:
            self.dock.hide()
        if self.panel is not None:
            self.panel.deactivate()

    def remembered_params(self, series: Series, rule: str) -> dict[str, Any]:
        """Parameters last used with ``rule`` (dropped when they do not fit this series)."""
        p = dict(self._params.get(rule, {}))
        if series.kind == "categorical" and "values" in p:
            cats = set(series.categories or ())
            p["values"] = [v for v in p["values"] if v in cats]
        return p

    def remember_params(self, series: Series, rule: str, params: dict[str, Any]) -> None:
        self._params[rule] = {k: (list(v) if isinstance(v, list | tuple) else v) for k, v in params.items()}

    # ---------------------------------------------------------------------- project state
    def state(self) -> dict:
        """Saved in project files: the last parameters of each rule."""
        return {"suggest_params": {k: dict(v) for k, v in self._params.items()}}

    def restore(self, d: dict) -> None:
        params = d.get("suggest_params") if isinstance(d, dict) else None
        if isinstance(params, dict):
            self._params = {str(k): dict(v) for k, v in params.items() if isinstance(v, dict)
                            and str(k) in sugg.RULES}

    # ------------------------------------------------------------------------ landmark files
    def _ask_import_path(self) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Import landmark list", self._start_dir(),
                                              "Landmark lists (*.csv *.tsv *.txt);;All files (*)")
        return path or None

    def _ask_export_path(self) -> str | None:
        s = self.session.series
        stem = Path(s.source.path).stem if s is not None and s.source is not None else "series"
        start = os.path.join(self._start_dir(), f"{stem}_landmarks.csv")
        path, _ = QFileDialog.getSaveFileName(self.window, "Export landmark list (private)", start,
                                              "Landmark lists (*.csv);;All files (*)")
        return path or None

    def _start_dir(self) -> str:
        s = self.session.series
        if s is not None and s.source is not None:
            return str(Path(s.source.path).resolve().parent)
        return str(Path.home())

    def _ask_import_mode(self, new: int, current: int) -> str | None:
        box = QMessageBox(QMessageBox.Icon.Question, "Import landmark list",
                          f"The file lists {new:,} landmarks; {current:,} events are landmarks now.",
                          QMessageBox.StandardButton.NoButton, self.window)
        box.setObjectName("importModeBox")
        replace = box.addButton("Replace", QMessageBox.ButtonRole.AcceptRole)
        add = box.addButton("Add to them", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(replace)
        box.exec()
        clicked = box.clickedButton()
        return "replace" if clicked is replace else "add" if clicked is add else None

    def import_dialog(self) -> None:
        """Landmarks › Import landmark list…"""
        if self.session.series is None:
            self.window.show_error("Import landmark list", "Open a series first.")
            return
        path = self.get_import_path()
        if path:
            self.import_landmarks(path, mode=None)

    def import_landmarks(self, path: str | os.PathLike, mode: str | None = "replace") -> bool:
        """Read a landmark file and make it the landmarks (``mode="replace"``) or add it (``"add"``) in one
        undoable step. ``mode=None`` asks (through :attr:`ask_import_mode`) when landmarks are set already.
        A file with entries that are not in the series changes nothing and shows which (an error box).
        """
        s = self.session
        if s.series is None:
            raise RuntimeError("no series is open")
        try:
            rows, rules = read_landmark_list(path, s.series)
        except LoadError as e:
            self.window.show_error("Cannot import the landmark list", str(e))
            return False
        if mode is None:
            mode = "replace" if s.landmarks.size == 0 else self.ask_import_mode(int(rows.size),
                                                                                int(s.landmarks.size))
            if mode is None:
                return False
        if mode not in ("replace", "add"):
            raise ValueError(f"mode must be 'replace' or 'add', got {mode!r}")
        target = rows if mode == "replace" else np.union1d(s.landmarks, rows)
        # (a file says which rules found its landmarks in its 'rule' column; without one, none is said of them)
        s.set_landmarks(target, text=f"Import {Path(path).name} ({mode})",
                        rules=rules if mode == "replace" else s.landmark_rules | rules)
        found = f" (found by a rule: {', '.join(sorted(rules))}; the export says so)" if rules else ""
        self.window.statusBar().showMessage(f"Imported {rows.size:,} landmarks from {path}{found}", 8000)
        self.imported.emit(int(s.landmarks.size))
        return True

    def export_dialog(self) -> None:
        """Landmarks › Export landmark list…"""
        if self.session.series is None:
            self.window.show_error("Export landmark list", "Open a series first.")
            return
        path = self.get_export_path()
        if path:
            self.export_landmarks(path)

    def export_landmarks(self, path: str | os.PathLike) -> bool:
        """Write the landmarks (``timestamp`` and ``row`` columns; atomically; a new file is owner-only)."""
        s = self.session
        if s.series is None:
            raise RuntimeError("no series is open")
        try:
            write_landmark_file(path, s.series, s.landmarks, s.landmark_rules)
        except OSError as e:
            self.window.show_error("Cannot export the landmark list", f"{path}: {e.strerror or e}")
            return False
        except ValueError as e:  # the output guard: never over the data file, nor a special file
            self.window.show_error("Cannot export the landmark list", str(e))
            return False
        self.window.statusBar().showMessage(
            f"Wrote {s.landmarks.size:,} landmarks to {path} (private: it reveals which events you protect)",
            10000)
        return True

    def shutdown(self) -> None:
        if self.panel is not None:
            self.panel.shutdown()


def install(window) -> LandmarksUI:
    return LandmarksUI(window)
