"""Uniform (DESIGN §4): every event gets ε_a/(|L| + 1)."""

from __future__ import annotations

import numpy as np

from .base import Scheme, constant_budgets


def budgets(n: int, landmarks: np.ndarray, eps_a: float) -> np.ndarray:
    return constant_budgets(n, eps_a / (int(landmarks.size) + 1))


SCHEME = Scheme(
    name="uniform", label="Uniform", prose_name="Uniform", position=0, landmark_private=True, budgets=budgets,
    uses_landmarks=True, republishes=False, remade_by_edit=True,
    color=(0, 114, 178),  # Okabe–Ito blue
    help=("Every event gets the same share of ε: ε_t = ε/(number of landmarks + 1). Simple and even, "
          "but many landmarks make every event noisy.",
          "ε = 1 with 4 landmarks: every event is released with ε_t = 0.2."),
)
