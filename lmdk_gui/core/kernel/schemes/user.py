"""User-level baseline (DESIGN §4): every event gets ε_a/n (the whole series as one secret)."""

from __future__ import annotations

import numpy as np

from .base import Scheme, constant_budgets


def budgets(n: int, landmarks: np.ndarray, eps_a: float) -> np.ndarray:
    return constant_budgets(n, eps_a / max(n, 1))


SCHEME = Scheme(
    name="user", label="User-level", prose_name="user-level", position=4, landmark_private=False,
    budgets=budgets, uses_landmarks=False, republishes=False, remade_by_edit=False,
    color=(86, 180, 233),  # sky blue
    help=("Baseline: every event gets ε divided by the number of events, protecting the whole series as "
          "one secret, at the cost of much more noise.",
          "744 hourly readings with ε = 1: each is released with ε_t ≈ 0.0013."),
)
