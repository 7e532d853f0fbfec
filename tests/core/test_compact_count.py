"""Counts in the preview rows' notes, which are three lines of a 160 px column (issue 15's round: the fourth
line ran below a 1280×800 screen's edge)."""

from __future__ import annotations

import pytest

from lmdk_gui.core.analysis.metrics import compact_count


@pytest.mark.parametrize(("k", "text"), [
    (0, "0"), (744, "744"), (99_999, "99,999"), (100_000, "100k"), (412_345, "412k"), (899_999, "900k"),
    (999_999, "1M"), (1_000_000, "1M"), (4_123_456, "4.12M"), (10_000_000, "10M"), (2_500_000_000, "2.5G"),
])
def test_compact_count(k, text):
    assert compact_count(k) == text
