"""Dummy landmark selection (issue 6; thesis §4.2, DESIGN §6).

The reference implementations below follow the thesis' pseudo-code literally (evalSeq from scratch,
every candidate, float Euclidean distances) with the module's tie rule, and the fast generators are
compared with them on small inputs.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine.pipeline import compute_release
from lmdk_gui.core.kernel import dummies as dm
from lmdk_gui.core.kernel.guarantee import check_guarantee
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import LANDMARK_SCHEMES, PrivacySettings

TIE = 1e-9


# ------------------------------------------------------------------------------- references
def ref_eval_seq(n: int, landmarks) -> float:
    """evalSeq by brute force: for each regular event, the distance to the nearest landmark or edge."""
    anchors = [-1, *sorted(landmarks), n]
    d = [min(abs(t - a) for a in anchors) for t in range(n) if t not in set(landmarks)]
    return float(np.std(d)) if d else 0.0


def first_within(diffs: list[float], tol: float) -> int:
    best = min(diffs)
    return next(i for i, x in enumerate(diffs) if x <= best + tol)


def ref_heuristic(n: int, landmarks) -> list[int]:
    """Algorithm 2, literally."""
    lp = set(landmarks)
    orig = ref_eval_seq(n, lp)
    order = []
    while len(lp) < n:
        cands = [t for t in range(n) if t not in lp]
        diffs = [abs(ref_eval_seq(n, lp | {t}) - orig) for t in cands]
        pick = cands[first_within(diffs, TIE * (1 + orig))]
        lp.add(pick)
        order.append(pick)
    return order


def ref_optimal(n: int, landmarks) -> list[int]:
    """Algorithm 1, literally: every ordering of T \\ L, mean evalSeq over its sets vs evalSeq(L)."""
    lm = set(landmarks)
    regular = [t for t in range(n) if t not in lm]
    orig = ref_eval_seq(n, lm)
    if not regular:
        return []
    perms = list(itertools.permutations(regular))
    diffs = []
    for p in perms:
        sets = [lm | set(p[: k + 1]) for k in range(len(p))]
        diffs.append(abs(sum(ref_eval_seq(n, s) for s in sets) / len(p) - orig))
    return list(perms[first_within(diffs, TIE * (1 + orig))])


def ref_partitioned(n: int, landmarks, h: int) -> list[int]:
    """Algorithm 3, literally, with sum-normalised histograms and float Euclidean distance."""
    nb = -(-n // h)
    cap = np.diff(np.minimum(np.arange(nb + 1) * h, n))
    hist = np.bincount(np.asarray(landmarks, dtype=int) // h, minlength=nb).astype(float)
    p = hist / hist.sum()
    cur = hist.copy()
    order = []
    while cur.sum() != n:
        diffs, idx = [], []
        for i in range(nb):
            if cur[i] + 1 <= cap[i]:
                tmp = cur.copy()
                tmp[i] += 1
                diffs.append(float(np.linalg.norm(tmp / tmp.sum() - p)))
                idx.append(i)
        pick = idx[first_within(diffs, 1e-12)]
        cur[pick] += 1
        order.append(pick)
    return order


def random_landmarks(rng, n, p):
    return np.flatnonzero(rng.random(n) < p)


# ------------------------------------------------------------------------------- evalSeq
def test_eval_seq_hand_example():
    # n = 8, L = {2}: anchors -1, 2, 8. Regular distances: rows 0,1 -> 1,1; rows 3..7 -> 1,2,3,2,1.
    # mean 11/7, mean of squares 21/7 = 3, variance 3 - 121/49 = 26/49.
    assert dm.evaluate_sequence(8, [2]) == pytest.approx(math.sqrt(26) / 7, rel=1e-12)
    assert dm.evaluate_sequence(5, range(5)) == 0.0
    assert dm.evaluate_sequence(0, []) == 0.0


def test_eval_seq_matches_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(30):
        n = int(rng.integers(1, 40))
        lm = random_landmarks(rng, n, rng.random())
        assert dm.evaluate_sequence(n, lm) == pytest.approx(ref_eval_seq(n, set(lm.tolist())), abs=1e-12)


# ------------------------------------------------------------------------------- Heuristic
def test_heuristic_hand_example():
    # n = 8, L = {2}; evalSeq(L) = √26/7 ≈ 0.7284 (above). Step 1, candidate σ after adding:
    #   row 0 -> distances 1 | 1,2,3,2,1 -> σ = √(5/9) ≈ 0.7454 (diff 0.017)   <- best (row 1 mirrors it)
    #   row 3 -> 1,1 | 1,2,2,1 -> σ ≈ 0.471; row 4 -> σ ≈ 0.373; row 5 -> σ = 0
    # Step 2 (L' = {0,2}): row 1 -> 1,2,3,2,1 -> σ = √0.56 ≈ 0.748 (diff 0.020) <- best; row 3 -> 0.490 ...
    # Step 3 (L' = {0,1,2}): row 3 -> 1,2,2,1 -> σ = 0.5 (diff 0.228) <- best (row 7 mirrors it);
    #   row 4 -> 1 | 1,2,1 -> σ ≈ 0.433; row 5 -> σ = 0
    # Step 4: row 4 -> 1,2,1 -> σ ≈ 0.471 <- best; rows 5, 6 -> σ = 0. Then all ties -> lowest rows.
    opts = dm.heuristic(8, [2])
    assert opts.order.tolist() == [0, 1, 3, 4, 5, 6, 7]


def test_heuristic_matches_literal_algorithm():
    rng = np.random.default_rng(2)
    for _ in range(40):
        n = int(rng.integers(1, 26))
        lm = random_landmarks(rng, n, rng.choice([0.0, 0.1, 0.3, 0.6]))
        assert dm.heuristic(n, lm).order.tolist() == ref_heuristic(n, set(lm.tolist())), (n, lm)


# ------------------------------------------------------------------------------- Optimal
def test_optimal_equals_brute_force_tiny():
    for n in range(1, 7):
        for r in range(n + 1):
            for lm in itertools.combinations(range(n), r):
                assert dm.optimal(n, lm).order.tolist() == ref_optimal(n, set(lm)), (n, lm)


def test_optimal_hand_example():
    # n = 3, L = {0}: evalSeq(L) = σ(dist(1), dist(2)) = σ(1, 1) = 0 (row 2's nearest anchor is the edge 3).
    # Chains (1,2): sets {0,1} -> σ(1) = 0, T -> 0: mean 0; (2,1): {0,2} -> σ(1) = 0: mean 0. Tie -> (1, 2).
    assert dm.optimal(3, [0]).order.tolist() == [1, 2]


def test_optimal_refuses_beyond_its_limit():
    n = dm.OPTIMAL_MAX_REGULAR + 1
    with pytest.raises(ValueError, match=rf"limited to {dm.OPTIMAL_MAX_REGULAR} regular events.*Heuristic"):
        dm.optimal(n, [])
    with pytest.raises(ValueError, match="Optimal"):
        dm.select_dummies(100, [1, 2], epsilon=1.0, generator="optimal", rng=np.random.default_rng(0))
    # The limit counts regular events, not n: a long series with one regular event is trivial.
    assert dm.optimal(50, [i for i in range(50) if i != 7]).order.tolist() == [7]


@pytest.mark.slow
def test_optimal_runs_at_its_limit():
    m = dm.OPTIMAL_MAX_REGULAR  # ≈ 1 s
    assert dm.optimal(m + 3, [0, 5, 9]).n_options == m


# ------------------------------------------------------------------------------- Partitioned
def test_fd_bin_width():
    # L = {2,3,4,5,12}: quartiles 3 and 5 -> IQR 2; width 2·2/5^(1/3) ≈ 2.34 -> 3 rows.
    assert dm.fd_bin_width(20, np.array([2, 3, 4, 5, 12])) == 3
    lm = np.sort(np.random.default_rng(0).choice(1000, 100, replace=False))
    q75, q25 = np.percentile(lm, [75, 25])
    assert dm.fd_bin_width(1000, lm) == math.ceil(2 * (q75 - q25) / 100 ** (1 / 3))
    assert dm.fd_bin_width(20, np.array([7])) == 20  # IQR 0 -> one bin
    assert dm.fd_bin_width(20, np.array([], dtype=np.int64)) == 20
    assert dm.fd_bin_width(20, np.array([3, 4])) == 1  # IQR 0.5 -> width 0.79 -> at least one row


def test_partitioned_hand_example():
    # n = 20, L = {2,3,4,5,12}, h = 3: bins [0,3) [3,6) [6,9) [9,12) [12,15) [15,18) [18,20),
    # capacities 3,3,3,3,3,3,2, histogram 1,3,0,0,1,0,0 (ℓ = 5). The best bin maximises (s+1)·h0_i − 5·H_i:
    #  s=5: bin0 6−5=1, bin4 6−5=1, empty bins 0, bin1 full -> tie -> bin0
    #  s=6: bin0 7−10=−3, bin4 7−5=2 -> bin4;   s=7: bin0 −2, bin4 −2, empty 0 -> bin2 (lowest empty)
    #  s=8: −1, −1, 0 -> bin3;  s=9: bin0 0, bin4 0, bin5 0 -> bin0 (lowest; now full)
    #  s=10: bin4 11−10=1 -> bin4 (full); then only empty-of-landmark bins, emptiest first, lowest first:
    #  5, 6, 2, 3, 5, 6 (bin6 full at 2), 2, 3, 5.
    opts = dm.partitioned(20, [2, 3, 4, 5, 12])
    assert opts.bin_width == 3
    assert opts.capacity.tolist() == [3, 3, 3, 3, 3, 3, 2]
    assert opts.hist0.tolist() == [1, 3, 0, 0, 1, 0, 0]
    assert opts.bin_order.tolist() == [0, 4, 2, 3, 0, 4, 5, 6, 2, 3, 5, 6, 2, 3, 5]
    assert opts.histogram(1).tolist() == [2, 3, 0, 0, 2, 0, 0]
    assert opts.edges.tolist() == [0, 3, 6, 9, 12, 15, 18, 20]


def test_partitioned_matches_literal_algorithm():
    rng = np.random.default_rng(3)
    for _ in range(60):
        n = int(rng.integers(2, 80))
        lm = random_landmarks(rng, n, rng.choice([0.05, 0.2, 0.5, 0.9]))
        if lm.size < 2 or lm.size == n:
            continue
        opts = dm.partitioned(n, lm)
        assert opts.bin_order.tolist() == ref_partitioned(n, lm, opts.bin_width), (n, lm)


def test_partitioned_degenerate_cases():
    rng = np.random.default_rng(0)
    empty = dm.partitioned(10, [])
    assert empty.n_bins == 1 and empty.n_options == 10 and np.all(empty.bin_order == 0)
    assert empty.materialise(3, rng).size == 4
    one = dm.partitioned(10, [4])
    assert one.n_bins == 1 and one.n_options == 9
    lp = one.materialise(0, rng)
    assert 4 in lp and lp.size == 2
    full = dm.partitioned(5, range(5))
    assert full.n_options == 0
    assert dm.partitioned(0, []).n_options == 0
    last_one = dm.partitioned(6, [0, 1, 2, 4, 5])
    assert last_one.n_options == 1 and last_one.materialise(0, rng).tolist() == list(range(6))


def test_partitioned_materialise_follows_the_histogram():
    rng = np.random.default_rng(5)
    n = 500
    lm = np.sort(rng.choice(n, 60, replace=False))
    opts = dm.partitioned(n, lm)
    for i in (0, 10, 200, opts.n_options - 1):
        lp = opts.materialise(i, rng)
        assert np.all(np.isin(lm, lp)) and lp.size == lm.size + i + 1
        assert np.array_equal(np.unique(lp), lp)
        hist = np.bincount(lp // opts.bin_width, minlength=opts.n_bins)
        assert hist.tolist() == opts.histogram(i).tolist()


def test_partitioned_within_bin_draw_is_uniform():
    # One dummy in a bin with 3 free rows: each should come up about a third of the time.
    opts = dm.partitioned(20, [2, 3, 4, 5, 12])  # first dummy goes to bin 0 = rows {0, 1, 2}, 2 is a landmark
    rng = np.random.default_rng(11)
    counts = {0: 0, 1: 0}
    for _ in range(2000):
        (d,) = np.setdiff1d(opts.materialise(0, rng), opts.landmarks)
        counts[int(d)] += 1
    assert stats.binomtest(counts[0], 2000, 0.5).pvalue > 1e-3


def test_partitioned_fast_on_large_series():
    rng = np.random.default_rng(0)
    n = 100_000
    lm = np.flatnonzero(rng.random(n) < 0.2)
    opts = dm.partitioned(n, lm)
    assert opts.n_options == n - lm.size
    assert np.array_equal(opts.histogram(opts.n_options - 1), opts.capacity)


# ------------------------------------------------------------------------------- nesting
@pytest.mark.parametrize("generator", dm.GENERATORS)
def test_options_are_nested_and_contain_l(generator):
    rng = np.random.default_rng(7)
    for _ in range(15):
        n = int(rng.integers(1, 9 if generator == "optimal" else 60))
        lm = random_landmarks(rng, n, rng.random())
        if generator == "optimal" and n - lm.size > dm.OPTIMAL_MAX_REGULAR:
            continue
        opts = dm.generate_options(n, lm, generator)
        assert opts.n_options == n - lm.size
        assert opts.sizes().tolist() == list(range(lm.size + 1, n + 1))
        prev = lm
        for i in range(opts.n_options):
            cur = opts.materialise(i, rng) if generator == "partitioned" else opts.option(i)
            assert cur.size == lm.size + i + 1 and np.all(np.isin(prev if generator != "partitioned" else lm, cur))
            prev = cur
        if generator != "partitioned":
            assert sorted(opts.order.tolist()) == sorted(set(range(n)) - set(lm.tolist()))
        else:
            hists = [opts.histogram(i) for i in range(opts.n_options)]
            for a, b in itertools.pairwise([opts.hist0, *hists]):
                assert np.all(b >= a) and b.sum() == a.sum() + 1 and np.all(b <= opts.capacity)


# ------------------------------------------------------------------------------- utilities
def test_count_utility():
    opts = dm.heuristic(6, [2])
    assert dm.utility_scores(opts, "count").tolist() == [1.0, 0.75, 0.5, 0.25, 0.0]
    assert dm.utility_scores(dm.heuristic(3, [0, 1]), "count").tolist() == [1.0]


def test_distance_utility_hand_example():
    # L = {2}, n = 8; Heuristic's order 0, 1, 3, 4, 5, 6, 7 has distances 2, 1, 1, 2, 3, 4, 5 to row 2.
    # Running means: 2, 1.5, 4/3, 1.5, 1.8, 13/6, 18/7; min 4/3, max 18/7.
    opts = dm.heuristic(8, [2])
    means = np.array([2, 1.5, 4 / 3, 1.5, 1.8, 13 / 6, 18 / 7])
    np.testing.assert_allclose(opts.mean_dummy_distance(), means)
    u = dm.utility_scores(opts, "distance")
    np.testing.assert_allclose(u, (18 / 7 - means) / (18 / 7 - 4 / 3))
    assert u[2] == 1.0 and u[-1] == 0.0
    # No landmark: nothing to be near, every option is as good.
    assert dm.utility_scores(dm.heuristic(4, []), "distance").tolist() == [1.0] * 4


def test_distance_utility_partitioned_is_expected_distance():
    # n = 20, L = {2,3,4,5,12}, bins of 3. Bin 0 free rows {0, 1}: distances 2, 1 -> 1.5;
    # bin 4 free rows {13, 14}: 1, 2 -> 1.5; bin 2 rows {6,7,8}: 1, 2, 3 -> 2.
    opts = dm.partitioned(20, [2, 3, 4, 5, 12])
    np.testing.assert_allclose(opts.mean_dummy_distance()[:3], [1.5, 1.5, 5 / 3])


def test_unknown_names():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="unknown generator"):
        dm.select_dummies(5, [1], epsilon=1, generator="greedy", rng=rng)
    with pytest.raises(ValueError, match="unknown utility"):
        dm.select_dummies(5, [1], epsilon=1, utility="spread", rng=rng)
    with pytest.raises(ValueError, match="share"):
        dm.select_dummies(5, [1], epsilon=1, share=1.0, rng=rng)
    with pytest.raises(ValueError, match="epsilon"):
        dm.select_dummies(5, [1], epsilon=0, rng=rng)


# ------------------------------------------------------------------------- exponential mechanism
def test_selection_probabilities():
    u = np.array([1.0, 0.5, 0.0])
    p = dm.selection_probabilities(u, 2.0)
    w = np.exp(np.array([1.0, 0.5, 0.0]))
    np.testing.assert_allclose(p, w / w.sum())
    # Stable for huge ε (no overflow) and uniform for ε = 0.
    assert dm.selection_probabilities(u, 1e6).tolist() == [1.0, 0.0, 0.0]
    np.testing.assert_allclose(dm.selection_probabilities(u, 0.0), [1 / 3] * 3)
    assert dm.exponential_mechanism(u, 1e6, np.random.default_rng(0)) == 0


def test_exponential_mechanism_frequencies_chi_square():
    u = np.array([1.0, 2 / 3, 1 / 3, 0.0])
    eps = 4.0  # large so the proportions e^2 : e^(4/3) : e^(2/3) : 1 differ visibly
    rng = np.random.default_rng(20240601)
    draws = 20_000
    counts = np.bincount([dm.exponential_mechanism(u, eps, rng) for _ in range(draws)], minlength=4)
    expected = draws * dm.selection_probabilities(u, eps)
    assert stats.chisquare(counts, expected).pvalue > 1e-3
    assert counts[0] > counts[1] > counts[2] > counts[3]


def test_select_dummies_frequencies_follow_the_count_utility():
    # m = 4 options (1..4 dummies), count utility 1, 2/3, 1/3, 0, ε_sel = 0.5·8 = 4.
    rng = np.random.default_rng(99)
    draws = 2000
    idx = [dm.select_dummies(5, [2], epsilon=8.0, share=0.5, generator="heuristic", rng=rng).option_index
           for _ in range(draws)]
    expected = draws * dm.selection_probabilities(np.array([1.0, 2 / 3, 1 / 3, 0.0]), 4.0)
    assert stats.chisquare(np.bincount(idx, minlength=4), expected).pvalue > 1e-3


# ------------------------------------------------------------------------- select_dummies
def test_select_dummies_fields_and_budget():
    sel = dm.select_dummies(100, [3, 40, 41, 77], epsilon=1.0, rng=np.random.default_rng(1))
    lm = np.array([3, 40, 41, 77])
    assert np.all(np.isin(lm, sel.landmarks)) and sel.landmarks.size > lm.size
    assert sel.landmarks.dtype == np.int64 and np.all(np.diff(sel.landmarks) > 0)
    assert np.array_equal(sel.dummies, np.setdiff1d(sel.landmarks, lm))
    assert sel.dummies.size == sel.option_index + 1 and sel.n_options == 96
    assert sel.epsilon_selection == pytest.approx(0.01)
    assert Fraction(sel.epsilon_selection) + Fraction(sel.epsilon_remaining) <= Fraction(1.0)
    assert sel.epsilon_selection + sel.epsilon_remaining == pytest.approx(1.0, rel=1e-15)


@pytest.mark.parametrize("eps,share", [(1.0, 0.01), (0.1, 0.01), (3.7, 0.013), (1e-3, 0.3), (0.7, 0.1)])
def test_split_budget_never_overspends(eps, share):
    sel, rest = dm.split_budget(eps, share)
    assert sel == share * eps
    assert Fraction(sel) + Fraction(rest) <= Fraction(eps)
    assert math.isclose(sel + rest, eps, rel_tol=1e-15)


def test_select_dummies_reuses_options():
    opts = dm.heuristic(40, [3, 20])
    a = dm.select_dummies(40, [3, 20], epsilon=1.0, generator="heuristic", rng=np.random.default_rng(4))
    b = dm.select_dummies(40, [3, 20], epsilon=1.0, generator="heuristic", rng=np.random.default_rng(4),
                          options=opts)
    assert np.array_equal(a.landmarks, b.landmarks)
    with pytest.raises(ValueError, match="another series"):
        dm.select_dummies(40, [3, 21], epsilon=1.0, generator="heuristic", rng=np.random.default_rng(4),
                          options=opts)
    with pytest.raises(ValueError, match="another series"):
        dm.select_dummies(40, [3, 20], epsilon=1.0, rng=np.random.default_rng(4), options=opts)


def test_select_dummies_all_landmarks():
    sel = dm.select_dummies(4, [0, 1, 2, 3], epsilon=2.0, rng=np.random.default_rng(0))
    assert sel.landmarks.tolist() == [0, 1, 2, 3] and sel.dummies.size == 0
    assert sel.epsilon_selection == 0.0 and sel.epsilon_remaining == 2.0
    assert "every event is already a landmark" in sel.note and sel.option_index == -1


def test_select_dummies_no_landmarks_and_seeded_reproducibility():
    a = dm.select_dummies(50, [], epsilon=1.0, rng=np.random.default_rng(3))
    b = dm.select_dummies(50, [], epsilon=1.0, rng=np.random.default_rng(3))
    assert a.landmarks.size >= 1 and np.array_equal(a.landmarks, b.landmarks)


def test_sidecar_info_never_reveals_the_dummies():
    sel = dm.select_dummies(30, [4, 9], epsilon=1.0, generator="heuristic", utility="distance",
                            rng=np.random.default_rng(0))
    info = sel.sidecar_info()
    assert info["epsilon_selection"] == sel.epsilon_selection and info["generator"] == "heuristic"
    assert info["utility"] == "distance" and info["epsilon_release"] == sel.epsilon_remaining
    for v in info.values():
        assert isinstance(v, str | float | bool), v  # no arrays, no counts of dummies or options
    assert "n_options" not in info and "option_index" not in info and "dummies" not in info


# ------------------------------------------------------------------------- the guarantee with L'
def _series(kind: str, n: int, rng) -> Series:
    if kind == "numeric":
        return Series.from_arrays(rng.random(n) * 3)
    if kind == "location":
        return Series.from_arrays(np.column_stack([52.6 + rng.random(n) * 0.01, -8.6 + rng.random(n) * 0.01]))
    return Series.from_arrays(rng.choice(["a", "b", "c"], n), kind="categorical")


@pytest.mark.parametrize("kind", ["numeric", "location", "categorical"])
@pytest.mark.parametrize("generator", ["partitioned", "heuristic"])
def test_release_on_l_prime_passes_the_guarantee(kind, generator):
    rng = np.random.default_rng(17)
    n = 300
    series = _series(kind, n, rng)
    eps = 1.0
    for p in (0.0, 0.1, 0.5, 0.95):
        lm = random_landmarks(rng, n, p)
        sel = dm.select_dummies(n, lm, epsilon=eps, generator=generator, utility="distance", rng=rng)
        assert np.all(np.isin(lm, sel.landmarks))
        settings = PrivacySettings(epsilon=sel.epsilon_remaining)
        noise = UnitNoise(n, 5)
        for scheme in LANDMARK_SCHEMES:
            rel = compute_release(series, sel.landmarks, settings, scheme, noise)
            assert rel.guarantee.holds, (scheme, p)
            assert check_guarantee(rel.budgets, sel.landmarks, sel.epsilon_remaining).holds
            # ... hence also for the true landmarks, and with ε_sel on top the total stays within ε.
            assert check_guarantee(rel.budgets, lm, sel.epsilon_remaining).holds
            total = Fraction(sel.epsilon_selection) + Fraction(rel.guarantee.worst)
            assert total <= Fraction(eps)
