"""The correlation model's own input widgets: the strength s (spin box and its log-scale slider mapping), the
number of states and the transition-matrix editor.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QHeaderView,
    QSizePolicy,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
)
from superqt.utils import signals_blocked

#: the names the package re-exports (every name here, as the one module the tab used to be had them)
__all__ = [
    "BACKWARD_MODES", "DEFAULT_MODEL_NOTE", "MAX_STATES", "S_DEFAULT", "S_MAX", "S_MIN", "S_PRESETS", "_SLIDER_STEPS",
    "MatrixEditor", "SSpinBox", "_matrix_text", "fmt_number", "s_to_slider", "slider_to_s", "states_spin",
]

#: the thesis' correlation degrees (§5.1.3): weak, moderate, strong
S_PRESETS: tuple[tuple[float, str], ...] = ((1.0, "weak"), (0.1, "moderate"), (0.01, "strong"))
S_DEFAULT = 0.1
S_MIN, S_MAX = 0.001, 10.0  # the slider's log range (the spin box goes from 0 to 1000)
_SLIDER_STEPS = 1000
MAX_STATES = 12
#: backward matrix choices of the custom editor
BACKWARD_MODES: tuple[tuple[str, str], ...] = (
    ("same", "same as forward"),
    ("reversed", "reversed chain of forward (Bayes)"),
    ("own", "own matrix (below)"),
)
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


def states_spin(name: str, tip: str) -> QSpinBox:
    """A number of states m of a chain: 2 to :data:`MAX_STATES`, 2 at first; counts only once typed."""
    spin = QSpinBox()
    spin.setObjectName(name)
    spin.setRange(2, MAX_STATES)
    spin.setValue(2)
    spin.setKeyboardTracking(False)
    spin.setToolTip(tip)
    return spin


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
        with signals_blocked(self):
            self.setRowCount(m)
            self.setColumnCount(m)
            self.setHorizontalHeaderLabels([f"→{j}" for j in range(m)])
            self.setVerticalHeaderLabels([f"{i}" for i in range(m)])
            for i in range(m):
                for j in range(m):
                    it = QTableWidgetItem(fmt_number(float(p[i, j])))
                    it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    self.setItem(i, j, it)
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


def _matrix_text(p: np.ndarray) -> str:
    return "\n".join("  ".join(f"{v:.4g}" for v in row) for row in p)
