"""The left column of the tab: the correlation model (the smoothed chain or a matrix of the user's own) and
the view options, and everything that turns those controls into the model in use."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSlider,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import signals_blocked

from ....core.analysis.correlation import (
    CorrelationModel,
    read_matrix_file,
    smoothed_matrix,
)
from ...dialogs.common import error_label, wrapped_label
from .widgets import (
    _SLIDER_STEPS,
    BACKWARD_MODES,
    DEFAULT_MODEL_NOTE,
    MAX_STATES,
    S_DEFAULT,
    S_MAX,
    S_MIN,
    S_PRESETS,
    MatrixEditor,
    SSpinBox,
    _matrix_text,
    s_to_slider,
    slider_to_s,
    states_spin,
)


class ModelChoice:
    """The model controls of :class:`~.tab.CorrelationTab` (a part of it: the tab is a ModelChoice, a
    LossView and a QWidget). A new valid model goes through :meth:`_set_model`, which redraws and asks for new
    curves (the tab's ``_redraw`` and ``_request``); an invalid one shows its message and keeps the old one."""

    def _build_controls(self) -> QWidget:
        """The left column, scrolling: a word on what the tab shows, the model, the view options."""
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

        intro = wrapped_label("If consecutive values are correlated (a Markov chain the adversary knows), each "
                              "release also leaks about its neighbours, so the real loss exceeds ε<sub>t</sub>.",
                              style="color: #444;")
        intro.setToolTip("Temporal privacy loss (TPL): thesis §2.3.4 and §4.1.3, Definition 10")
        lay.addWidget(intro)

        lay.addWidget(self._build_model_group())
        lay.addWidget(self._build_view_options())
        lay.addStretch(1)
        scroll.setWidget(body)

        s = smoothed_matrix(2, S_DEFAULT)
        self.forward_table.set_matrix(s)
        self.backward_table.set_matrix(s)
        self._update_mode_widgets()
        return scroll

    def _build_model_group(self) -> QGroupBox:
        """The two kinds of model (only the chosen one's controls take room), the model in use and what was
        wrong with a rejected one."""
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
        gl.addWidget(self._build_smoothed_box())
        self.default_note = wrapped_label(DEFAULT_MODEL_NOTE, "correlationDefaultNote", "color: #555; font-size: 8pt;")
        gl.addWidget(self.default_note)
        gl.addWidget(self.custom_radio)
        gl.addWidget(self._build_custom_box())

        self.error_label = error_label("correlationError")
        gl.addWidget(self.error_label)
        self.model_label = wrapped_label("", "modelLabel", "color: #333; font-size: 8pt;")
        gl.addWidget(self.model_label)
        return g

    def _build_smoothed_box(self) -> QWidget:
        """The smoothed chain's controls: s (spin box, log slider, the thesis' presets) and the states m."""
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
        self.states_spin = states_spin("statesSpin", "Number of states m of the chain (2 by default, as in the thesis)")
        sf.addRow("States m", self.states_spin)
        self.smoothed_hint = wrapped_label("", "smoothedHint", "color: #555; font-size: 8pt;")
        sf.addRow(self.smoothed_hint)
        return self.smoothed_box

    def _build_custom_box(self) -> QWidget:
        """The custom matrix's controls: load, normalise, its size, the forward and backward tables."""
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
        self.size_spin = states_spin("matrixSizeSpin",
                                     "Number of states (resets the tables to the smoothed matrix of this size)")
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
        return self.custom_box

    def _build_view_options(self) -> QGroupBox:
        """Follow the series plot's zoom, the curves without correlation, a log y axis."""
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
        vl.addWidget(wrapped_label("Schemes shown: Settings › Show schemes.", style="color: #666; font-size: 8pt;"))
        return v

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
        with signals_blocked(self.s_slider):
            self.s_slider.setValue(s_to_slider(value))
        self._apply_smoothed()

    def _on_s_slider(self, pos: int) -> None:
        with signals_blocked(self.s_spin):
            self.s_spin.setValue(slider_to_s(pos))
        self._apply_smoothed()

    def set_smoothing(self, s: float, m: int | None = None) -> None:
        """Use the smoothed chain of degree s (and m states): the scripting entry point of the controls."""
        with signals_blocked(self.s_spin, self.s_slider, self.states_spin, self.smoothed_radio):
            self.s_spin.setValue(float(s))
            self.s_slider.setValue(s_to_slider(float(s)))
            if m is not None:
                self.states_spin.setValue(int(m))
            self.smoothed_radio.setChecked(True)
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
        with signals_blocked(self.size_spin, self.backward_combo, self.custom_radio, self.smoothed_radio):
            self.forward_table.set_matrix(forward)
            if backward is not None:
                self.backward_table.set_matrix(backward)
            if forward.shape[0] == forward.shape[1] and 2 <= forward.shape[0] <= MAX_STATES:
                self.size_spin.setValue(int(forward.shape[0]))
            self.backward_combo.setCurrentIndex([k for k, _ in BACKWARD_MODES].index(mode))
            self.custom_radio.setChecked(True)
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
            with signals_blocked(self.custom_radio):
                self.custom_radio.setChecked(True)
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
