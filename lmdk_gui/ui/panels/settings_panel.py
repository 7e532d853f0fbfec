"""The settings dock: ε (spin box + log slider), per-kind mechanism settings, Adaptive's parameters, seed,
runs, and which schemes are shown. Every change goes straight to the session (no Apply button)."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...core.data.periods import describe as describe_periods
from ...core.kernel.settings import (
    ALL_SCHEMES,
    NONNEGATIVE_QUESTION,
    SCHEME_LABELS,
    AdaptiveParams,
    PrivacySettings,
    lower_bound_question,
    sensitivity_warning,
)
from ..dialogs.common import warning_label, wrapped_label
from ..views.theme import SCHEME_COLORS
from ..window.session import Session

EPS_MIN, EPS_MAX = 0.01, 10.0  # the slider's range (the spin box goes further)
_SLIDER_STEPS = 1000


def eps_to_slider(eps: float) -> int:
    eps = min(max(eps, EPS_MIN), EPS_MAX)
    return int(round((math.log10(eps) - math.log10(EPS_MIN)) / (math.log10(EPS_MAX) - math.log10(EPS_MIN))
                     * _SLIDER_STEPS))


def slider_to_eps(pos: int) -> float:
    e = 10 ** (math.log10(EPS_MIN) + pos / _SLIDER_STEPS * (math.log10(EPS_MAX) - math.log10(EPS_MIN)))
    # Round to 3 significant digits so slider values read cleanly in the spin box.
    return float(f"{e:.3g}")


def _spin(lo: float, hi: float, value: float, decimals: int = 3, step: float = 0.1, suffix: str = "",
          tip: str = "") -> QDoubleSpinBox:
    s = QDoubleSpinBox()
    s.setRange(lo, hi)
    s.setDecimals(decimals)
    s.setSingleStep(step)
    s.setValue(value)
    s.setKeyboardTracking(False)
    if suffix:
        s.setSuffix(suffix)
    if tip:
        s.setToolTip(tip)
    return s


SENS_TIP = ("Δ (the sensitivity): the change in one event's value that is protected, in the data's units. "
            "Two series that differ by at most Δ in one event look alike in the release. With public bounds "
            "[lo, hi], Δ = hi − lo protects any value within them; a smaller Δ protects only smaller changes.")
RADIUS_TIP = ("r (geo-indistinguishability radius): the distance by which one event's position can move and stay "
              "protected; positions within r of each other look alike in the release, farther ones less so.")


#: the window's choice of release resolutions (label, resolution; "" = one value per event)
RESOLUTIONS = (("event", ""), ("hour", "1h"), ("day", "1D"), ("week (from Monday)", "1W"))
RESOLUTION_TIP = ("One value per event, or per hour, day or week: the same protection of each event, with the "
                  "noise of one event on a value that adds many. Where an event's value is lost in noise, a "
                  "day's may not be.")


def _help(text: str) -> QLabel:
    return wrapped_label(text, style="color: #555; font-size: 8pt;")


class SettingsPanel(QScrollArea):
    rerollRequested = Signal()
    accuracyRequested = Signal()  # "What ε do I need?" (ui/panels/accuracy_ui.py opens its tab)

    def __init__(self, session: Session, parent=None) -> None:
        super().__init__(parent)
        self.session = session
        self.setWidgetResizable(True)
        self.setMinimumWidth(300)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(8)

        for box in (self._build_budget, self._build_mechanism, self._build_adaptive, self._build_postprocessing,
                    self._build_resolution, self._build_noise, self._build_visibility):
            lay.addWidget(box())
        lay.addStretch(1)
        self.setWidget(body)

        self._bounds_derived = False
        self._connect()
        session.settingsChanged.connect(self.refresh)
        session.seriesChanged.connect(self.refresh)
        session.resolutionChanged.connect(self.refresh)
        self.refresh()

    # ---------------------------------------------------------------------------------- the groups
    def _build_budget(self) -> QGroupBox:
        """ε: its spin box, the log-scale slider under it, and the “What ε do I need?” button (the accuracy tab)."""
        g = QGroupBox("Privacy budget")
        f = QFormLayout(g)
        self.eps_spin = _spin(0.001, 1000.0, 1.0, 3, 0.1, tip="Total privacy budget ε")
        self.eps_spin.setObjectName("epsilonSpin")
        self.eps_slider = QSlider(Qt.Orientation.Horizontal)
        self.eps_slider.setObjectName("epsilonSlider")
        self.eps_slider.setRange(0, _SLIDER_STEPS)
        self.eps_slider.setToolTip("ε on a log scale from 0.01 to 10")
        self.accuracy_button = QPushButton("What ε do I need?…")
        self.accuracy_button.setObjectName("accuracyButton")
        self.accuracy_button.setToolTip("Find the smallest ε that keeps the release's error within a target")
        self.accuracy_button.clicked.connect(self.accuracyRequested)
        erow = QHBoxLayout()
        erow.addWidget(self.eps_spin, 1)
        erow.addWidget(self.accuracy_button)
        f.addRow("ε", erow)
        row = QHBoxLayout()
        row.addWidget(QLabel("0.01"))
        row.addWidget(self.eps_slider, 1)
        row.addWidget(QLabel("10"))
        f.addRow(row)
        return g

    def _build_mechanism(self) -> QGroupBox:
        """The Laplace mechanism's protected change Δ and public bounds, the location radius r, the
        public categories (the rows of the series' kind are shown by :meth:`refresh`)."""
        self.mech_box = QGroupBox("Mechanism")
        mf = QFormLayout(self.mech_box)
        self.mech_form = mf
        self.sens_spin = _spin(1e-6, 1e9, 1.0, 4, 0.1, tip=SENS_TIP)
        self.sens_spin.setObjectName("sensitivitySpin")
        self.sens_label = QLabel("Protected change Δ")
        self.sens_label.setToolTip(SENS_TIP)
        mf.addRow(self.sens_label, self.sens_spin)
        self.sens_help = _help("Δ is the change in one event's value that is protected.")
        mf.addRow(self.sens_help)
        self.bounds_check = QCheckBox("Public bounds (inputs are clamped)")
        self.lo_spin = _spin(-1e12, 1e12, 0.0, 4, 0.1)
        self.hi_spin = _spin(-1e12, 1e12, 1.0, 4, 0.1)
        self.bounds_from_data = QPushButton("From data")
        self.bounds_from_data.setToolTip("Use the data's minimum and maximum (this leaks them)")
        brow = QHBoxLayout()
        self.bounds_row = brow
        brow.addWidget(self.lo_spin)
        brow.addWidget(QLabel("to"))
        brow.addWidget(self.hi_spin)
        mf.addRow(self.bounds_check)
        mf.addRow(brow)
        mf.addRow("", self.bounds_from_data)
        # Asked, never derived (issue 44): shown for an all-non-negative series without bounds; only the user
        # knows whether "cannot be negative" is a public fact about such data.
        self.lower_check = QCheckBox(NONNEGATIVE_QUESTION)
        self.lower_check.setObjectName("lowerBoundCheck")
        self.lower_check.setToolTip("A public fact you assert (e.g. energy use cannot be negative): inputs are "
                                    "clamped to it and the denoised release is clipped to it. The release's "
                                    "metadata publishes it; it says nothing about your data.")
        self._lower_value = 0.0
        self._nonneg: tuple[object, bool] = (None, False)
        mf.addRow(self.lower_check)
        self.sens_from_bounds = QPushButton("Use Δ = hi − lo")
        self.sens_from_bounds.setObjectName("sensitivityFromBounds")
        self.sens_from_bounds.setToolTip("Protect any value within the bounds: Δ = the bounds' width")
        self.sens_warning = warning_label(name="sensitivityWarning")
        mf.addRow(self.sens_warning)
        mf.addRow("", self.sens_from_bounds)
        self.radius_spin = _spin(0.1, 1e7, 100.0, 1, 10.0, " m", RADIUS_TIP)
        self.radius_label = QLabel("Protected distance r")
        self.radius_label.setToolTip(RADIUS_TIP)
        mf.addRow(self.radius_label, self.radius_spin)
        self.radius_help = _help("r is the distance by which one event's position can move and stay protected.")
        mf.addRow(self.radius_help)
        self.cat_edit = QLineEdit()
        self.cat_edit.setPlaceholderText("public categories, comma-separated")
        self.cat_edit.setToolTip("The public list of categories. Empty = the data's own categories (leaks which occur)")
        self.cat_label = QLabel("Categories")
        mf.addRow(self.cat_label, self.cat_edit)
        self.leak_note = warning_label(name="leakNote")
        mf.addRow(self.leak_note)
        return self.mech_box

    def _build_adaptive(self) -> QGroupBox:
        """Adaptive's sampling-rate parameters."""
        g = QGroupBox("Adaptive scheme")
        af = QFormLayout(g)
        self.inc_spin = _spin(0.0, 1.0, 0.1, 2, 0.05, tip="Sampling-rate increase when the data moves")
        self.dec_spin = _spin(0.0, 1.0, 0.1, 2, 0.05, tip="Sampling-rate decrease when it does not")
        self.min_spin = _spin(0.01, 1.0, 0.1, 2, 0.05, tip="Lowest sampling rate")
        af.addRow("Rate increase", self.inc_spin)
        af.addRow("Rate decrease", self.dec_spin)
        af.addRow("Minimum rate", self.min_spin)
        return g

    def _build_postprocessing(self) -> QGroupBox:
        """Denoise, and why it changes no guarantee (issue 12)."""
        g = QGroupBox("Post-processing")
        pf = QVBoxLayout(g)
        self.denoise_check = QCheckBox("Denoise (post-processing)")
        self.denoise_check.setObjectName("denoiseCheck")
        why = ("Smooths the released values using only the release itself and the public settings: it changes "
               "no guarantee, and anyone who reads the release can do the same.")
        self.denoise_check.setToolTip(why + " Off: the raw, unbiased noisy values (better for long sums).")
        self.denoise_note = wrapped_label(why, "denoiseNote", "color: palette(placeholder-text);")
        pf.addWidget(self.denoise_check)
        pf.addWidget(self.denoise_note)
        return g

    def _build_resolution(self) -> QGroupBox:
        """One released value per event, hour, day or week (DESIGN §12), summed or averaged."""
        g = self.resolution_box = QGroupBox("Release resolution")
        g.setObjectName("resolutionBox")
        rf = QFormLayout(g)
        self.resolution_combo = QComboBox()
        self.resolution_combo.setObjectName("resolutionCombo")
        for label, value in RESOLUTIONS:
            self.resolution_combo.addItem(label, value)
        self.resolution_combo.setToolTip(RESOLUTION_TIP)
        self.aggregate_combo = QComboBox()
        self.aggregate_combo.setObjectName("aggregateCombo")
        self.aggregate_combo.addItem("Sum", "sum")
        self.aggregate_combo.addItem("Mean", "mean")
        self.aggregate_combo.setToolTip("Each period's value: the sum of its events, or their mean")
        rf.addRow("One value per", self.resolution_combo)
        rf.addRow("Aggregate", self.aggregate_combo)
        self.resolution_note = _help(RESOLUTION_TIP)
        self.resolution_note.setObjectName("resolutionNote")
        rf.addRow(self.resolution_note)
        return g

    def _build_noise(self) -> QGroupBox:
        """The preview's seed (and re-roll) and the runs the MAE column averages."""
        g = QGroupBox("Preview noise")
        nf = QFormLayout(g)
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(0, 2**31 - 1)
        self.seed_spin.setKeyboardTracking(False)
        self.seed_spin.setToolTip("Seed of the preview's noise. Exports use fresh OS randomness.")
        self.reroll_button = QPushButton("Re-roll")
        self.reroll_button.setObjectName("rerollButton")
        srow = QHBoxLayout()
        srow.addWidget(self.seed_spin, 1)
        srow.addWidget(self.reroll_button)
        nf.addRow("Seed", srow)
        self.runs_spin = QSpinBox()
        self.runs_spin.setRange(1, 1000)
        self.runs_spin.setKeyboardTracking(False)
        self.runs_spin.setToolTip("Runs averaged for the MAE column of the metrics table")
        nf.addRow("MAE runs R", self.runs_spin)
        return g

    def _build_visibility(self) -> QGroupBox:
        """A check box per scheme, in its colour."""
        g = QGroupBox("Show schemes")
        vf = QVBoxLayout(g)
        self.scheme_checks: dict[str, QCheckBox] = {}
        for s in ALL_SCHEMES:
            cb = QCheckBox(SCHEME_LABELS[s])
            r, gg, b = SCHEME_COLORS[s]
            cb.setStyleSheet(f"QCheckBox {{ color: rgb({r},{gg},{b}); font-weight: bold; }}")
            cb.setObjectName(f"show_{s}")
            vf.addWidget(cb)
            self.scheme_checks[s] = cb
        return g

    # ---------------------------------------------------------------------------------- wiring
    def _connect(self) -> None:
        self.eps_spin.valueChanged.connect(self._on_eps_spin)
        self.eps_slider.valueChanged.connect(self._on_eps_slider)
        # (before _push: an edited bound is no longer the data's, and the settings pushed must say so)
        self.lo_spin.valueChanged.connect(self._bounds_edited)
        self.hi_spin.valueChanged.connect(self._bounds_edited)
        # every edit of a setting pushes the settings to the session
        spins = (self.sens_spin, self.lo_spin, self.hi_spin, self.radius_spin, self.inc_spin, self.dec_spin,
                 self.min_spin)
        for edited in (*(w.valueChanged for w in spins), self.bounds_check.toggled, self.lower_check.toggled,
                       self.denoise_check.toggled, self.cat_edit.editingFinished):
            edited.connect(self._push)
        self.bounds_check.toggled.connect(lambda _on: self._update_lower_question())
        self.bounds_from_data.clicked.connect(self._use_data_bounds)
        self.sens_from_bounds.clicked.connect(self._use_bounds_width)
        self.bounds_check.toggled.connect(lambda _on: self._update_sensitivity_hint())
        for w in (self.sens_spin, self.lo_spin, self.hi_spin):
            w.valueChanged.connect(lambda _v: self._update_sensitivity_hint())
        self.seed_spin.valueChanged.connect(lambda v: self.session.set_seed(v))
        self.reroll_button.clicked.connect(self.session.reroll)
        self.runs_spin.valueChanged.connect(lambda v: self.session.set_runs(v))
        self.resolution_combo.currentIndexChanged.connect(self._resolution_edited)
        self.aggregate_combo.currentIndexChanged.connect(self._resolution_edited)
        for s, cb in self.scheme_checks.items():
            cb.toggled.connect(lambda on, s=s: self.session.set_scheme_visible(s, on))

    def _on_eps_spin(self, value: float) -> None:
        self.eps_slider.blockSignals(True)
        self.eps_slider.setValue(eps_to_slider(value))
        self.eps_slider.blockSignals(False)
        self._push()

    def _on_eps_slider(self, pos: int) -> None:
        self.eps_spin.setValue(slider_to_eps(pos))  # → _on_eps_spin → _push

    def _bounds_edited(self) -> None:
        self._bounds_derived = False
        self._update_note()

    def _use_data_bounds(self) -> None:
        s = self.session.series
        if s is None or s.kind != "numeric" or s.n == 0:
            return
        for w in (self.lo_spin, self.hi_spin, self.bounds_check):
            w.blockSignals(True)
        self.lo_spin.setValue(float(np.min(s.values)))
        self.hi_spin.setValue(float(np.max(s.values)))
        self.bounds_check.setChecked(True)
        for w in (self.lo_spin, self.hi_spin, self.bounds_check):
            w.blockSignals(False)
        self._bounds_derived = True  # remembered in the settings: the export says so (issue 42, finding 7)
        self._push()
        self._update_note()

    def _use_bounds_width(self) -> None:
        """Δ = hi − lo: protects any value within the public bounds."""
        if not self.bounds_check.isChecked():
            return
        width = self.hi_spin.value() - self.lo_spin.value()
        if width > 0:
            self.sens_spin.setValue(width)  # → _push

    def _update_sensitivity_hint(self) -> None:
        s = self.session.series
        numeric = s is None or s.kind == "numeric"
        bounded = self.bounds_check.isChecked() and numeric
        width = self.hi_spin.value() - self.lo_spin.value()
        delta = self.sens_spin.value()
        text = sensitivity_warning(delta, (self.lo_spin.value(), self.hi_spin.value()) if bounded else None,
                                   s.unit if s is not None and s.unit else "")
        short = text is not None
        if short:
            self.sens_warning.setText(f"⚠ {text}.")
        self.sens_warning.setVisible(short)
        self.mech_form.setRowVisible(self.sens_warning, short)
        self.mech_form.setRowVisible(self.sens_from_bounds, bounded and width > 0 and abs(delta - width) > 1e-12)

    def _read(self) -> PrivacySettings | None:
        cats = tuple(c.strip() for c in self.cat_edit.text().split(",") if c.strip()) or None
        bounds = None
        if self.bounds_check.isChecked():
            lo, hi = self.lo_spin.value(), self.hi_spin.value()
            if not lo < hi:
                self.leak_note.setText("The lower bound must be below the upper bound.")
                return None
            bounds = (lo, hi)
        lower = self._lower_value if self.lower_check.isChecked() and bounds is None else None
        s = PrivacySettings(
            epsilon=self.eps_spin.value(),
            sensitivity=self.sens_spin.value(),
            bounds=bounds,
            radius_m=self.radius_spin.value(),
            categories=cats,
            adaptive=AdaptiveParams(self.inc_spin.value(), self.dec_spin.value(), self.min_spin.value()),
            denoise=self.denoise_check.isChecked(),
            bounds_from_data=self._bounds_derived and bounds is not None,
            lower_bound=lower,
        )
        try:
            s.validate()
        except ValueError as e:
            self.leak_note.setText(str(e))
            return None
        return s

    def _push(self, *_args) -> None:
        s = self._read()
        if s is None:
            return
        series = self.session.series
        if series is not None and series.kind == "categorical" and s.categories is not None:
            missing = sorted(set(series.categories or ()) - set(s.categories))
            if missing:
                self.leak_note.setText("Not in the category list: " + ", ".join(missing[:6]) +
                                       (" …" if len(missing) > 6 else "") + ". Add them, or leave the list empty.")
                return
        self.session.set_settings(s)
        self._update_note()

    # --------------------------------------------------------------------------------- refresh
    def refresh(self) -> None:
        st = self.session.settings
        widgets = [self.eps_spin, self.eps_slider, self.sens_spin, self.bounds_check, self.lo_spin, self.hi_spin,
                   self.lower_check,
                   self.radius_spin, self.cat_edit, self.inc_spin, self.dec_spin, self.min_spin, self.seed_spin,
                   self.runs_spin, self.denoise_check, self.resolution_combo, self.aggregate_combo,
                   *self.scheme_checks.values()]
        for w in widgets:
            w.blockSignals(True)
        try:
            self.eps_spin.setValue(st.epsilon)
            self.eps_slider.setValue(eps_to_slider(st.epsilon))
            self.sens_spin.setValue(st.sensitivity)
            self.bounds_check.setChecked(st.bounds is not None)
            self._bounds_derived = st.bounds_from_data  # a project restores it
            if st.bounds is not None:
                self.lo_spin.setValue(st.bounds[0])
                self.hi_spin.setValue(st.bounds[1])
            self.lower_check.setChecked(st.lower_bound is not None)
            self._lower_value = 0.0 if st.lower_bound is None else st.lower_bound  # (a project's, kept)
            self.radius_spin.setValue(st.radius_m)
            if not self.cat_edit.hasFocus():
                self.cat_edit.setText(", ".join(st.categories) if st.categories else "")
            self.inc_spin.setValue(st.adaptive.inc)
            self.dec_spin.setValue(st.adaptive.dec)
            self.min_spin.setValue(st.adaptive.min_rate)
            self.denoise_check.setChecked(st.denoise)
            self.seed_spin.setValue(self.session.seed)
            self.runs_spin.setValue(self.session.runs)
            for s, cb in self.scheme_checks.items():
                cb.setChecked(s in self.session.visible_schemes)
            res = self.session.resolution
            self.resolution_combo.setCurrentIndex(max(0, self.resolution_combo.findData(res[0] if res else "")))
            self.aggregate_combo.setCurrentIndex(max(0, self.aggregate_combo.findData(res[1] if res else "sum")))
        finally:
            for w in widgets:
                w.blockSignals(False)
        kind = self.session.series.kind if self.session.series is not None else "numeric"
        f = self.mech_form
        for w in (self.sens_spin, self.sens_help, self.bounds_check, self.bounds_row, self.bounds_from_data):
            f.setRowVisible(w, kind == "numeric")
        f.setRowVisible(self.radius_spin, kind == "location")
        f.setRowVisible(self.radius_help, kind == "location")
        f.setRowVisible(self.cat_edit, kind == "categorical")
        self.resolution_box.setVisible(kind == "numeric")
        self.aggregate_combo.setEnabled(self.session.resolution is not None)
        rel = self.session.release_series
        self.resolution_note.setText(RESOLUTION_TIP if rel is None or rel.periods is None else
                                     f"The schemes release {describe_periods(rel.periods)}: {rel.n:,} rows. "
                                     "A period holding a landmark counts as a landmark.")
        self.mech_box.setTitle({"numeric": "Laplace mechanism", "location": "Planar Laplace (location)",
                                "categorical": "Randomized response"}[kind])
        self._update_note()
        self._update_sensitivity_hint()
        self._update_lower_question()

    def _update_lower_question(self) -> None:
        """The lower-bound question: for a numeric series without bounds whose values are all ≥ 0 (or when a
        lower bound is already set, so it can be taken back)."""
        s = self.session.series
        st = self.session.settings
        if s is not None and self._nonneg[0] is not s:  # (one pass over the values per series, not per refresh)
            self._nonneg = (s, lower_bound_question(s.kind, s.values, PrivacySettings()))
        ask = s is not None and (self._nonneg[1] or (s.kind == "numeric" and st.lower_bound is not None))
        self.lower_check.setText(NONNEGATIVE_QUESTION if self._lower_value == 0 else
                                 f"public lower bound {self._lower_value:g} (values cannot be below it)")
        self.mech_form.setRowVisible(self.lower_check, bool(ask) and not self.bounds_check.isChecked())

    def _resolution_edited(self, *_args) -> None:
        res = self.resolution_combo.currentData() or None
        self.session.set_resolution(res, self.aggregate_combo.currentData() or "sum")

    def _update_note(self) -> None:
        s = self.session.series
        st = self.session.settings
        note = ""
        if s is not None and s.kind == "categorical" and st.categories is None:
            note = ("⚠ The category list is derived from the data: it reveals which categories occur. "
                    "Type the public list above to avoid that.")
        elif s is not None and s.kind == "numeric" and st.bounds is not None and self._bounds_derived:
            note = "⚠ The bounds are the data's own minimum and maximum: publishing them leaks those values."
        elif s is not None and s.kind == "numeric" and st.bounds is None:
            note = "No public bounds: before the first release, approximations reuse the first fresh release."
        self.leak_note.setText(note)
        self.leak_note.setVisible(bool(note))

    @property
    def bounds_derived(self) -> bool:
        return self._bounds_derived
