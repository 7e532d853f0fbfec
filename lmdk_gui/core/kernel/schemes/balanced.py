"""Balanced (issue 12, docs/pipeline.md): B*/m per landmark and ε_a − B* per regular event, with the B* that
minimises Σ_t Δ/ε_t under the landmark-sum constraint."""

from __future__ import annotations

import math

import numpy as np

from .base import Scheme, constant_budgets


def landmark_total(n: int, m: int, eps_a: float) -> float:
    """B* = ε_a·m / (m + √(n − m)): the landmarks' total that minimises Σ_t Δ/ε_t when each of the m
    landmarks gets B*/m and each of the n − m regular events ε_a − B* (docs/pipeline.md)."""
    if m <= 0:
        return 0.0
    if m >= n:
        return eps_a
    return eps_a * m / (m + math.sqrt(n - m))


def full_budgets(n: int, landmarks: np.ndarray, eps_a: float) -> np.ndarray:
    """B*/m per landmark, ε_a − B* per regular event (no landmarks: ε_a each), as a series-sized array."""
    m = int(landmarks.size)
    total = landmark_total(n, m, eps_a)
    b = np.full(n, eps_a - total)
    if m:
        b[landmarks] = total / m
    return b


def budgets(n: int, landmarks: np.ndarray, eps_a: float) -> np.ndarray:
    if landmarks.size == 0:
        return constant_budgets(n, eps_a)  # B* = 0: ε_a everywhere, as one float
    return full_budgets(n, landmarks, eps_a)


def _example(n: int, k: int, epsilon: float) -> str:
    """The help's worked example, computed with the scheme's own formula (a figure typed by hand drifted)."""
    total = landmark_total(n, k, epsilon)
    return (f"{n:,} events, {k} landmarks, ε = {epsilon:g}: each landmark gets ε_t ≈ {total / k:.3g} and every "
            f"other event ≈ {epsilon - total:.3g} (Uniform would give every event {epsilon / (k + 1):.3g}).")


SCHEME = Scheme(
    name="balanced", label="Balanced", prose_name="Balanced", position=5, landmark_private=True,
    budgets=budgets, uses_landmarks=True, republishes=False, remade_by_edit=True,
    # Okabe–Ito black (vermillion sits too close to the landmarks under deuteranopia)
    color=(0, 0, 0),
    help=("Spends on the landmarks exactly what minimises the total raw noise: each of the k landmarks gets "
          "B/k and every regular event ε − B, with B = ε·k/(k + √(n − k)). Far less raw noise than Uniform "
          "and no repeated values as in Skip, but that optimum is the raw release's: once denoised (the "
          "export's default) Skip is usually better. Compare the denoised errors on your data.",
          _example(1000, 50, 1.0)),
)
