"""Colours and pens shared by all views (one colour per scheme everywhere).

The schemes use the Okabe–Ito palette (designed to stay apart for the common colour-vision deficiencies);
landmarks are a brick red and dummy landmarks a violet, both picked so that under a deuteranopia
simulation they stay clearly apart from every scheme colour and from the original series
(tests/ui/test_palette.py checks the distances).
"""

from __future__ import annotations

from ...core.kernel.schemes import SCHEMES
from ...core.kernel.settings import SCHEME_LABELS

#: one colour per scheme, from the scheme registry (each scheme's module says why its colour), in
#: SCHEME_LABELS' order (landmark-private schemes first)
SCHEME_COLORS = {name: SCHEMES[name].color for name in SCHEME_LABELS}
ORIGINAL_COLOR = (40, 40, 40)
#: the original series behind each release in the preview rows
ORIGINAL_PREVIEW_COLOR = (150, 150, 150)
LANDMARK_COLOR = (190, 30, 20)
DUMMY_COLOR = (150, 0, 255)
EPSILON_LINE_COLOR = (120, 120, 120)
#: off-chart marks and their counts
OFFCHART_COLOR = (110, 110, 110)


def rgba(color: tuple[int, int, int], alpha: int) -> tuple[int, int, int, int]:
    return (*color, alpha)


def darker(color: tuple[int, int, int], factor: float = 0.6) -> tuple[int, int, int]:
    r, g, b = color
    return (int(r * factor), int(g * factor), int(b * factor))


def count_noun(k: int, word: str, plural: str | None = None) -> str:
    """"1 landmark", "2 landmarks", "1,234 events" (never "1 landmarks")."""
    return f"{k:,} {word if k == 1 else (plural or word + 's')}"


def css(color: tuple[int, int, int]) -> str:
    """``#rrggbb`` for rich text."""
    return "#{:02x}{:02x}{:02x}".format(*color)
