"""Schemes, the guarantee check and the preview release (issue 2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_gui.core.analysis.metrics import mae, mae_over_runs
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine.pipeline import compute_all, compute_release
from lmdk_gui.core.engine.release import fill_approximations, fixed_budgets, normalize_landmarks
from lmdk_gui.core.kernel.guarantee import allocatable, check_guarantee, landmark_sums
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, AdaptiveParams, PrivacySettings


def brute_force_sums(budgets, landmarks):
    lm = set(int(i) for i in landmarks)
    return np.array([math.fsum(budgets[i] for i in lm | {t}) for t in range(len(budgets))])


def numeric(n=50, seed=0):
    rng = np.random.default_rng(seed)
    return Series.from_arrays(rng.random(n) * 5)


# ------------------------------------------------------------------------------------------ budgets
def test_uniform_budgets_exact():
    n, lm = 10, np.array([1, 4, 7])
    eps_a = allocatable(2.0, n)
    b = fixed_budgets("uniform", n, lm, eps_a)
    assert np.all(b == eps_a / 4)
    assert eps_a == pytest.approx(2.0, rel=1e-9) and eps_a < 2.0


def test_skip_budgets_exact():
    n, lm = 6, np.array([0, 3])
    eps_a = allocatable(1.0, n)
    b = fixed_budgets("skip", n, lm, eps_a)
    assert b.tolist() == [0.0, eps_a, eps_a, 0.0, eps_a, eps_a]


def test_baselines():
    n, lm = 8, np.array([2])
    eps_a = allocatable(1.0, n)
    assert np.all(fixed_budgets("event", n, lm, eps_a) == eps_a)
    assert np.all(fixed_budgets("user", n, lm, eps_a) == eps_a / n)


def test_unknown_scheme():
    with pytest.raises(ValueError, match="unknown scheme"):
        fixed_budgets("w-event", 3, np.array([]), 1.0)


# ---------------------------------------------------------------------------------------- guarantee
def test_landmark_sums_match_brute_force():
    rng = np.random.default_rng(3)
    b = rng.random(40)
    lm = np.sort(rng.choice(40, 9, replace=False))
    np.testing.assert_allclose(landmark_sums(b, lm), brute_force_sums(b, lm), rtol=1e-14)


def test_check_fails_event_level_with_landmarks_and_passes_without():
    n = 5
    b = np.full(n, allocatable(1.0, n))
    assert not check_guarantee(b, np.array([2]), 1.0).holds
    assert check_guarantee(b, np.array([], dtype=np.int64), 1.0).holds


def test_check_is_strict_at_the_boundary():
    # Exactly ε passes only if the float sum cannot hide an excess: budgets summing to ε by construction
    # (0.1 * 10 in floats is > 1 exactly) must fail, the allocatable share must pass.
    b = np.full(11, 0.1)
    lm = np.arange(10)
    assert not check_guarantee(b, lm, 1.0).holds
    b2 = np.full(11, allocatable(1.0, 11) / 11)
    assert check_guarantee(b2, lm, 1.0).holds


@pytest.mark.parametrize("bad", [np.nan, -1e-300, np.inf])
def test_check_rejects_nan_negative_inf(bad):
    b = np.full(4, 0.1)
    b[2] = bad
    assert not check_guarantee(b, np.array([0]), 1.0).holds


def test_check_rejects_unsorted_or_outside_landmarks():
    b = np.full(4, 0.1)
    assert not check_guarantee(b, np.array([2, 1]), 1.0).holds
    assert not check_guarantee(b, np.array([4]), 1.0).holds


# ------------------------------------------------------------------------------------------ release
@pytest.mark.parametrize("scheme", ["uniform", "skip", "adaptive", "event", "user"])
def test_preview_release_shapes_and_guarantee(scheme):
    s = numeric()
    lm = [3, 10, 11, 30]
    r = compute_release(s, lm, PrivacySettings(epsilon=1.0), scheme, UnitNoise(s.n, 1))
    assert r.values.shape == (s.n,)
    assert r.budgets.shape == (s.n,)
    assert not np.any(np.isnan(r.values))
    assert r.guarantee.holds == (scheme != "event")


def test_common_random_numbers_uniform_noise_scales_with_budget():
    s = numeric()
    noise = UnitNoise(s.n, 5)
    st_ = PrivacySettings(epsilon=1.0, sensitivity=2.0)
    r0 = compute_release(s, [], st_, "uniform", noise)
    r1 = compute_release(s, [4], st_, "uniform", noise)
    # Same unit noise, budgets halved → noise exactly doubled.
    np.testing.assert_allclose(r1.values - s.values, 2 * (r0.values - s.values), rtol=1e-12)


def test_skip_approximations_republish_previous_release():
    s = numeric()
    lm = np.array([5, 6, 7, 20])
    r = compute_release(s, lm, PrivacySettings(), "skip", UnitNoise(s.n, 2))
    assert r.approximated.tolist() == [i in set(lm) for i in range(s.n)]
    assert r.values[5] == r.values[4] == r.values[6] == r.values[7]
    assert r.values[20] == r.values[19]


def test_skip_leading_landmarks_use_first_release_or_public_midpoint():
    s = numeric()
    r = compute_release(s, [0, 1], PrivacySettings(), "skip", UnitNoise(s.n, 2))
    assert r.values[0] == r.values[1] == r.values[2]
    r2 = compute_release(s, [0, 1], PrivacySettings(bounds=(0.0, 4.0)), "skip", UnitNoise(s.n, 2))
    assert r2.values[0] == r2.values[1] == 2.0


def test_skip_all_landmarks_releases_nothing():
    s = numeric(5)
    r = compute_release(s, range(5), PrivacySettings(), "skip", UnitNoise(5, 0))
    assert np.all(np.isnan(r.values)) and np.all(r.budgets == 0) and r.guarantee.holds


def test_bounds_clamp_inputs():
    s = Series.from_arrays(np.array([-100.0, 0.5, 100.0]))
    noise = UnitNoise(3, 0)
    r = compute_release(s, [], PrivacySettings(bounds=(0.0, 1.0)), "event", noise)
    eps_a = allocatable(1.0, 3)
    np.testing.assert_allclose(r.values, np.array([0.0, 0.5, 1.0]) + noise.laplace / eps_a)


def test_fill_approximations_helper():
    v = np.array([np.nan, 1.0, np.nan, 3.0, np.nan])
    f = np.array([False, True, False, True, False])
    assert fill_approximations(v.copy(), f, None).tolist() == [1.0, 1.0, 1.0, 3.0, 3.0]
    assert fill_approximations(v.copy(), f, 9.0).tolist() == [9.0, 1.0, 1.0, 3.0, 3.0]


def test_normalize_landmarks():
    assert normalize_landmarks([5, 1, 5, 3], 6).tolist() == [1, 3, 5]
    with pytest.raises(ValueError):
        normalize_landmarks([6], 6)
    with pytest.raises(ValueError):
        normalize_landmarks([-1], 6)


def test_normalize_landmarks_checks_every_time():
    """No array is trusted for having been checked before (issue 43): a read-only one can be made writeable
    again by whoever owns it, and a read-only view's base can be written."""
    frozen = np.array([1, 3, 5], dtype=np.int64)
    frozen.setflags(write=False)
    assert normalize_landmarks(frozen, 6) is frozen
    with pytest.raises(ValueError):
        normalize_landmarks(frozen, 5)
    frozen.setflags(write=True)
    frozen[:] = [5, 3, 3]
    frozen.setflags(write=False)
    assert normalize_landmarks(frozen, 6).tolist() == [3, 5]
    frozen.setflags(write=True)
    frozen[:] = [1, 3, 9]
    with pytest.raises(ValueError):
        normalize_landmarks(frozen, 6)
    base = np.array([1, 3, 5], dtype=np.int64)
    view = base[:]
    view.setflags(write=False)
    assert normalize_landmarks(view, 6) is view
    base[:] = [5, 1, 1]  # (the view cannot be written, its base can)
    assert normalize_landmarks(view, 6).tolist() == [1, 5]


def test_shared_budgets_follow_a_landmark_set_that_changed():
    """Skip's and Balanced's budgets are shared per landmark set while held, but never for rows the set no
    longer holds (a read-only set's owner can make it writeable again)."""
    lm = np.array([2, 4, 8], dtype=np.int64)
    for scheme in ("skip", "balanced"):
        lm.setflags(write=False)
        b = fixed_budgets(scheme, 10, lm, 1.0)
        assert fixed_budgets(scheme, 10, lm, 1.0) is b
        lm.setflags(write=True)
        lm[:] = [1, 4, 9]
        lm.setflags(write=False)
        again = fixed_budgets(scheme, 10, lm, 1.0)
        assert again is not b
        np.testing.assert_array_equal(again, fixed_budgets(scheme, 10, lm.copy(), 1.0))
        lm.setflags(write=True)
        lm[:] = [2, 4, 8]


def test_location_release_is_metres_scale():
    rng = np.random.default_rng(0)
    latlon = np.column_stack([52.6 + rng.random(200) * 0.01, -8.6 + rng.random(200) * 0.01])
    s = Series.from_arrays(latlon, kind="location")
    st_ = PrivacySettings(epsilon=1.0, radius_m=100.0)
    rel = compute_all(s, [], st_, UnitNoise(s.n, 3))
    # Planar Laplace mean radius is 2·r/ε = 200 m.
    assert 120 < mae(s, rel["event"]) < 300
    assert mae(s, rel["user"]) > 10 * mae(s, rel["event"])


def test_categorical_release_keeps_with_rr_probability():
    rng = np.random.default_rng(0)
    s = Series.from_arrays(rng.choice(["a", "b", "c", "d"], 4000))
    st_ = PrivacySettings(epsilon=1.0)
    r = compute_release(s, [], st_, "event", UnitNoise(s.n, 1))
    keep = np.mean(r.values == s.values)
    p = math.exp(1.0) / (math.exp(1.0) + 3)
    assert abs(keep - p) < 4 * math.sqrt(p * (1 - p) / s.n)
    assert set(np.unique(r.values)) <= {0, 1, 2, 3}


def test_public_categories_remap_and_reject_unknown():
    s = Series.from_arrays(["b", "a", "b"])
    r = compute_release(s, [], PrivacySettings(categories=("x", "a", "b")), "event", UnitNoise(3, 0))
    assert r.categories == ("x", "a", "b")
    with pytest.raises(ValueError, match="not in the public list"):
        compute_release(s, [], PrivacySettings(categories=("x", "a")), "event", UnitNoise(3, 0))


# ------------------------------------------------------------------------------------------ adaptive
def reference_adaptive(x, lm, eps_a, sens, p: AdaptiveParams, u, lap):
    """A literal Python transcription of DESIGN §4 (the numba kernel must agree exactly)."""
    L = set(int(i) for i in lm)
    base = eps_a / (len(L) + 1)
    n_s, left, rate, last = 0, len(L), 1.0, None
    out, eps = [], []
    for t in range(len(x)):
        sample = last is None or u[t] < rate
        if t in L:
            left -= 1
            e = base if sample else 0.0
            n_s += 1 if sample else 0
        else:
            e = (eps_a - (n_s + left) * base) if sample else 0.0
        if sample:
            scale = sens / e
            o = x[t] + lap[t] * scale
            if last is not None:
                rate = min(1.0, rate + p.inc) if abs(o - last) > scale else max(p.min_rate, rate - p.dec)
            last = o
        else:
            o = last
        out.append(o)
        eps.append(e)
    return np.array(out), np.array(eps)


@pytest.mark.parametrize("seed", range(5))
def test_adaptive_kernel_matches_reference(seed):
    rng = np.random.default_rng(seed)
    s = numeric(300, seed)
    lm = np.sort(rng.choice(300, 60, replace=False))
    p = AdaptiveParams(inc=0.2, dec=0.15, min_rate=0.05)
    st_ = PrivacySettings(epsilon=0.7, sensitivity=0.5, adaptive=p)
    noise = UnitNoise(s.n, seed)
    r = compute_release(s, lm, st_, "adaptive", noise)
    ref_v, ref_e = reference_adaptive(s.values, lm, allocatable(0.7, s.n), 0.5, p, noise.sample, noise.laplace)
    np.testing.assert_array_equal(r.budgets, ref_e)
    np.testing.assert_array_equal(r.values, ref_v)
    assert np.array_equal(r.approximated, ref_e == 0)


def test_adaptive_skipped_landmark_budget_goes_to_later_regular_events():
    # min_rate tiny and no movement: the rate falls, landmarks get skipped, and later regular events
    # receive the saved base.
    s = Series.from_arrays(np.zeros(400))
    lm = np.arange(0, 400, 4)
    st_ = PrivacySettings(epsilon=1.0, sensitivity=1e-6, adaptive=AdaptiveParams(0.0, 0.5, 0.01))
    r = compute_release(s, lm, st_, "adaptive", UnitNoise(s.n, 0))
    base = allocatable(1.0, s.n) / (lm.size + 1)
    fresh_regular = r.budgets[(~np.isin(np.arange(s.n), lm)) & (r.budgets > 0)]
    assert fresh_regular.max() > base * 1.5
    assert r.guarantee.holds


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 120),
    data=st.data(),
    eps=st.floats(1e-3, 1e3),
    inc=st.floats(0, 1),
    dec=st.floats(0, 1),
    rmin=st.floats(0.01, 1),
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(["numeric", "location", "categorical"]),
)
def test_every_scheme_passes_the_independent_check(n, data, eps, inc, dec, rmin, seed, kind):
    lm = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    rng = np.random.default_rng(seed)
    if kind == "numeric":
        s = Series.from_arrays(rng.normal(size=n) * 10)
    elif kind == "location":
        s = Series.from_arrays(np.column_stack([rng.uniform(-80, 80, n), rng.uniform(-179, 179, n)]),
                               kind="location")
    else:
        s = Series.from_arrays(rng.choice(["x", "y", "z"], n))
    st_ = PrivacySettings(epsilon=eps, adaptive=AdaptiveParams(inc, dec, rmin))
    rel = compute_all(s, lm, st_, UnitNoise(n, seed))
    for name in ("uniform", "skip", "adaptive", "user"):
        r = rel[name]
        assert r.guarantee.holds, (name, r.guarantee)
        assert np.all(r.budgets >= 0) and np.all(np.isfinite(r.budgets))
        sums = brute_force_sums(r.budgets, r.landmarks)
        assert max(sums) <= eps
    ev = rel["event"]
    assert ev.guarantee.holds == (max(brute_force_sums(ev.budgets, ev.landmarks)) <= eps)
    assert ev.guarantee.holds == (len(lm) == 0 or (n == 1))
    # Approximations equal the previous release (for Skip and Adaptive).
    for name in ("skip", "adaptive"):
        r = rel[name]
        for t in np.flatnonzero(r.approximated):
            if t > 0 and not (name == "skip" and not np.any(~r.approximated[:t])):
                np.testing.assert_array_equal(r.values[t], r.values[t - 1])


def test_mae_over_runs_is_cancellable_and_counts_runs():
    s = numeric(100)
    calls = []

    def cancel():  # polled before and after every release of every run (issue 15): stops in run 4
        calls.append(1)
        return len(calls) > 2 * 3 * len(ALL_SCHEMES) + 2

    stats = mae_over_runs(s, [1, 2], PrivacySettings(), runs=10, should_cancel=cancel)
    assert {st.runs for st in stats.values()} == {3}  # only complete runs count


def test_hue_cross_check_ordering():
    """The issue's cross-check on the first 1,000 hours of HUE: Skip < Adaptive < Uniform < User."""
    import pandas as pd

    from tests.conftest import DATA

    df = pd.read_csv(DATA / "energy_hue_residential1_2013.csv").iloc[:1000]
    s = Series.from_arrays(df["kwh"].to_numpy(dtype=float))
    order = np.argsort(s.values, kind="stable")
    expected_uniform = {20: 199, 40: 398, 60: 596, 80: 795}
    expected_adaptive = {20: 49, 40: 161, 60: 350, 80: 606}
    for pct in (20, 40, 60, 80):
        lm = np.sort(order[: pct * s.n // 100])
        stats = mae_over_runs(s, lm, PrivacySettings(epsilon=1.0), runs=30, seed=0)
        m = {k: v.mean for k, v in stats.items()}
        assert m["skip"] < m["adaptive"] < m["uniform"] < m["user"]
        assert m["uniform"] == pytest.approx(expected_uniform[pct], rel=0.1)
        assert m["adaptive"] == pytest.approx(expected_adaptive[pct], rel=0.25)
        assert m["event"] == pytest.approx(1.0, rel=0.15)
