"""Skip (DESIGN §4): regular events get ε_a; landmarks get 0 and republish the previous release."""

from __future__ import annotations

import numpy as np

from .base import Scheme, constant_budgets


def budgets(n: int, landmarks: np.ndarray, eps_a: float) -> np.ndarray:
    if landmarks.size == 0:
        return constant_budgets(n, eps_a)
    b = np.full(n, eps_a)
    b[landmarks] = 0.0
    return b


SCHEME = Scheme(
    name="skip", label="Skip", prose_name="Skip", position=1, landmark_private=True, budgets=budgets,
    uses_landmarks=True, republishes=True,
    remade_by_edit=False,  # an edit changes the clicked events' budgets only (the preview patches its release)
    color=(230, 159, 0),  # orange
    help=("Regular events get the whole ε; landmarks publish nothing new and repeat the previous release. "
          "Regular events are accurate; the landmarks' true values never appear.",
          "A landmark at 14:00 shows the value released at 13:00; every other hour is released with ε_t = 1."),
)
