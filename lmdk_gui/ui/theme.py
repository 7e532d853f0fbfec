"""Colours and pens shared by all views (one colour per scheme everywhere)."""

from __future__ import annotations

SCHEME_COLORS = {
    "uniform": (31, 119, 180),
    "skip": (255, 127, 14),
    "adaptive": (44, 160, 44),
    "balanced": (23, 170, 190),
    "event": (148, 103, 189),
    "user": (140, 86, 75),
}
ORIGINAL_COLOR = (40, 40, 40)
LANDMARK_COLOR = (214, 39, 40)
DUMMY_COLOR = (227, 119, 194)
EPSILON_LINE_COLOR = (120, 120, 120)


def rgba(color: tuple[int, int, int], alpha: int) -> tuple[int, int, int, int]:
    return (*color, alpha)


def darker(color: tuple[int, int, int], factor: float = 0.6) -> tuple[int, int, int]:
    r, g, b = color
    return (int(r * factor), int(g * factor), int(b * factor))
