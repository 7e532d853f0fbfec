"""Event-level baseline (DESIGN §4): every event gets ε_a (fails the check as soon as there is a landmark)."""

from __future__ import annotations

from .base import baseline


def share(n: int, eps_a: float) -> float:
    return eps_a


SCHEME = baseline("event", "Event-level", 3, share, color=(204, 121, 167), help=(  # reddish purple
    "Baseline: every event gets the whole ε. It protects one event at a time, not the landmarks together, so "
    "with landmarks it fails the check and cannot be exported.",
    "ε = 1 and 2 landmarks: a landmark plus one other event spend 3, more than ε."))
