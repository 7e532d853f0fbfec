"""The suggestion panel's parameter fields: a number (spin box and slider over the useful range, optionally
unused) and a multi-select of the series' categories."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from ....core.analysis import suggestions as sugg
from ....core.analysis.metrics import share
from ....core.data.series import Series

_SLIDER_STEPS = 1000


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

