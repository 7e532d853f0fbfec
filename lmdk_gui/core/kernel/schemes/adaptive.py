"""Adaptive (DESIGN §4, thesis §4.1.3): sampling at a rate that follows the released values; its budgets
are drawn by the loop in :mod:`lmdk_gui.core.kernel.adaptive` (the runners call it), and checked after."""

from __future__ import annotations

from .base import Scheme

SCHEME = Scheme(
    name="adaptive", label="Adaptive", prose_name="Adaptive", position=2, landmark_private=True,
    budgets=None, uses_landmarks=True, republishes=True, remade_by_edit=True,
    color=(0, 158, 115),  # bluish green
    help=("Samples events at a rate that rises while the released values change and falls while they "
          "are steady. Sampled landmarks get ε/(landmarks + 1); what skipped landmarks do not spend goes "
          "to later regular events; unsampled events repeat the previous release.",
          "A flat night of readings is sampled rarely, so its budget is saved for the morning's changes."),
)
