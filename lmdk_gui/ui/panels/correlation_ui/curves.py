"""The worker job of the tab (:func:`compute_curves`) and what it returns per scheme (:class:`CurveResult`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....core.analysis.correlation import (
    CorrelationModel,
    landmark_tpl,
    no_correlation_value,
)


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
