"""Event-level baseline (DESIGN §4): every event gets ε_a (fails the check as soon as there is a landmark)."""

from __future__ import annotations

import numpy as np

from .base import Scheme, constant_budgets


def budgets(n: int, landmarks: np.ndarray, eps_a: float) -> np.ndarray:
    return constant_budgets(n, eps_a)


SCHEME = Scheme(
    name="event", label="Event-level", prose_name="event-level", position=3, landmark_private=False,
    budgets=budgets, uses_landmarks=False, republishes=False, remade_by_edit=False,
    color=(204, 121, 167),  # reddish purple
    help=("Baseline: every event gets the whole ε. It protects one event at a time, not the landmarks "
          "together, so with landmarks it fails the check and cannot be exported.",
          "ε = 1 and 2 landmarks: a landmark plus one other event spend 3, more than ε."),
)
