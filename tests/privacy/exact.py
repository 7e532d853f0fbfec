"""Exact (rational) arithmetic on float budgets, for checking the landmark sum without rounding."""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def exact_sum(values: np.ndarray) -> Fraction:
    """Exact sum of floats, fast: each float is an integer mantissa times a power of two; mantissas with
    the same exponent are added as Python integers (no rounding, no overflow)."""
    v = np.asarray(values, dtype=np.float64)
    m, e = np.frexp(v)
    mant = (m * 2.0**53).astype(np.int64)  # exact: |m| in [0.5, 1) has at most 53 significant bits
    exps = e.astype(np.int64) - 53
    total = Fraction(0)
    for u in np.unique(exps):
        total += Fraction(sum(mant[exps == u].tolist())) * Fraction(2) ** int(u)
    return total


def exact_worst(budgets: np.ndarray, landmarks) -> Fraction:
    """max over t of sum(ε_i, i ∈ L ∪ {t}), exactly, in O(n + |L|): S_L plus the largest regular budget."""
    b = np.asarray(budgets, dtype=np.float64)
    lm = np.asarray(landmarks, dtype=np.int64)
    regular = np.ones(b.size, dtype=bool)
    regular[lm] = False
    return exact_sum(b[lm]) + (Fraction(float(b[regular].max())) if regular.any() else 0)
