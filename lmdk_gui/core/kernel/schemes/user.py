"""User-level baseline (DESIGN §4): every event gets ε_a/n (the whole series as one secret)."""

from __future__ import annotations

from .base import baseline


def share(n: int, eps_a: float) -> float:
    return eps_a / max(n, 1)


SCHEME = baseline("user", "User-level", 4, share, color=(86, 180, 233), help=(  # sky blue
    "Baseline: every event gets ε divided by the number of events, protecting the whole series as one secret, "
    "at the cost of much more noise.",
    "744 hourly readings with ε = 1: each is released with ε_t ≈ 0.0013."))
