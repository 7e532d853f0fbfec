"""The guide's worked examples agree with the code (a newcomer found Balanced's typed-in figures wrong)."""

from __future__ import annotations

import numpy as np

from lmdk_gui.core.engine.release import balanced_budgets
from lmdk_gui.ui.dialogs.help import SCHEME_HELP


def test_balanced_example_matches_the_budgets_the_scheme_gives():
    budgets = balanced_budgets(1000, np.arange(0, 1000, 20, dtype=np.int64), 1.0)  # 50 landmarks
    text = SCHEME_HELP["balanced"][1]
    assert f"ε_t ≈ {budgets[0]:.3g} " in text
    assert f"other event ≈ {budgets[1]:.3g} " in text
    assert "0.0124" in text and "0.381" in text
