"""The dummy selection draws exactly from the exponential mechanism (issue 17, finding 16).

The selection used to add numpy Gumbel noise in floating point; it now snaps the utilities to an integer
grid, rounds ε down to a dyadic fraction and samples by exact integer rejection (``core/kernel/dummies.py``,
``exponential_mechanism``), from the export's own :class:`WordSource` when one is given. Checked here: the
frequencies of the draws against the mechanism's probabilities (chi-square, p > 1e-6), the grid keeping the
utility's sensitivity, the extremes (ε = 0 uniform, huge ε the best option), Partitioned's within-bin rows
uniform, and that an export's selection reads its words from the source it is given and nothing else.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from lmdk_gui.core.kernel import dummies as dm
from lmdk_gui.core.kernel.securenoise import WordSource

P_MIN = 1e-6


class CountingSource(WordSource):
    """Philox words (reproducible) that count how many were handed out."""

    def __init__(self, seed: int) -> None:
        bitgen = np.random.Philox(seed)
        self.used = 0

        def fill(buf: np.ndarray) -> None:
            self.used += buf.shape[0]
            buf[:] = bitgen.random_raw(buf.shape[0])

        super().__init__(fill, f"test Philox({seed})")


def frequencies(utilities, epsilon: float, draws: int, source: WordSource) -> np.ndarray:
    idx = [dm.exponential_mechanism(utilities, epsilon, words=source) for _ in range(draws)]
    return np.bincount(idx, minlength=len(utilities))


@pytest.mark.parametrize("utilities, epsilon", [
    ([1.0, 2 / 3, 1 / 3, 0.0], 4.0),  # the count utility of four options at ε_sel = 4
    ([0.0, 0.25, 1.0, 0.9, 0.1], 6.0),  # a distance utility, best in the middle
    ([1.0, 0.0, 0.5], 0.02),  # the default share: nearly uniform
])
def test_frequencies_match_the_exponential_mechanism(utilities, epsilon):
    draws = 12_000
    counts = frequencies(utilities, epsilon, draws, CountingSource(7))
    p = dm.selection_probabilities(np.array(utilities), epsilon)
    assert stats.chisquare(counts, draws * p).pvalue > P_MIN
    # the probabilities are the exponential mechanism's up to the 2^-20 utility grid
    w = np.exp(epsilon * np.array(utilities) / 2)
    np.testing.assert_allclose(p, w / w.sum(), rtol=1e-5)


def test_extremes():
    u = np.array([0.2, 1.0, 0.7, 1.0 - 2.0**-10])
    src = CountingSource(3)
    assert {dm.exponential_mechanism(u, 1e6, words=src) for _ in range(200)} == {1}
    counts = frequencies(u, 0.0, 8000, src)
    assert stats.chisquare(counts).pvalue > P_MIN  # ε = 0: uniform
    with pytest.raises(ValueError, match="at least one option"):
        dm.exponential_mechanism([], 1.0, words=src)
    with pytest.raises(ValueError, match="finite"):
        dm.exponential_mechanism([0.5, math.nan], 1.0, words=src)
    with pytest.raises(ValueError, match="epsilon"):
        dm.exponential_mechanism([0.5], -1.0, words=src)
    with pytest.raises(ValueError, match="random source"):
        dm.exponential_mechanism([0.5], 1.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(-1, 1)), min_size=1, max_size=20))
def test_grid_keeps_the_sensitivity(pairs):
    """Neighbouring inputs move a utility by at most Δu = 1; the grid values then move by at most K."""
    u = np.array([a for a, _ in pairs])
    u2 = np.array([a + b for a, b in pairs])  # |u2 − u| ≤ 1
    v, v2 = dm._grid_utilities(u, 1.0), dm._grid_utilities(u2, 1.0)
    assert np.all(np.abs(v - v2) <= dm.UTILITY_GRID)
    assert np.all(np.abs(v - u * dm.UTILITY_GRID) <= 0.5)


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 1e12), st.lists(st.floats(0, 1), min_size=1, max_size=8))
def test_epsilon_is_rounded_down_and_products_fit(eps, u):
    gaps, num, d = dm._em_parameters(np.array(u), eps, 1.0)
    eps_used = num / 2 ** (d - dm.UTILITY_GRID.bit_length())
    assert eps_used <= eps
    assert eps_used >= min(eps, 2.0**30) * (1 - 2.0**-30) - 2.0**-41
    assert num * int(gaps.max()) < 2**63 and d <= 62


def test_selection_reads_only_the_given_words():
    """An export passes its WordSource: the pick and Partitioned's rows come from it (no rng needed), and
    the same words give the same selection."""
    lm = [3, 4, 20, 31, 32, 60]
    a_src, b_src = CountingSource(11), CountingSource(11)
    a = dm.select_dummies(80, lm, epsilon=2.0, share=0.5, generator="partitioned", words=a_src)
    b = dm.select_for_release(80, lm, 2.0, dm.DummySettings("partitioned", 0.5, "count"), words=b_src)
    assert a_src.used > 0 and a_src.used == b_src.used
    assert np.array_equal(a.landmarks, b.landmarks) and a.option_index == b.option_index
    c = dm.select_dummies(80, lm, epsilon=2.0, share=0.5, words=WordSource.from_os())
    assert np.all(np.isin(lm, c.landmarks))


def test_seeded_previews_are_reproducible():
    s1 = dm.select_dummies(60, [5, 30], epsilon=1.0, rng=dm.selection_rng(4, 2))
    s2 = dm.select_dummies(60, [5, 30], epsilon=1.0, rng=dm.selection_rng(4, 2))
    assert np.array_equal(s1.landmarks, s2.landmarks)


def test_select_dummies_frequencies_through_the_export_path():
    """Whole selections (heuristic, count utility, ε_sel = 4) drawn from a WordSource."""
    src = CountingSource(5)
    opts = dm.heuristic(5, [2])
    draws = 3000
    idx = [dm.select_dummies(5, [2], epsilon=8.0, share=0.5, generator="heuristic", words=src,
                             options=opts).option_index for _ in range(draws)]
    expected = draws * dm.selection_probabilities(np.array([1.0, 2 / 3, 1 / 3, 0.0]), 4.0)
    assert stats.chisquare(np.bincount(idx, minlength=4), expected).pvalue > P_MIN


def test_partitioned_rows_uniform_within_a_bin():
    """Two dummies in one bin of eight free rows: each of the 28 pairs equally likely."""
    opts = dm.partitioned(8, [])  # one bin over rows 0..7
    src = CountingSource(9)
    pairs: dict[tuple[int, ...], int] = {}
    for _ in range(6000):
        d = tuple(np.setdiff1d(opts.materialise(1, src), opts.landmarks).tolist())
        pairs[d] = pairs.get(d, 0) + 1
    assert len(pairs) == 28 and all(len(p) == 2 for p in pairs)
    assert stats.chisquare(list(pairs.values())).pvalue > P_MIN
