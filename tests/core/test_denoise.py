"""The denoiser (issue 12 §2): free post-processing from released values, budgets, flags and public settings."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.integrate import quad

from lmdk_gui.core.analysis import denoise as dn
from lmdk_gui.core.analysis.denoise import Denoised, denoise
from lmdk_gui.core.analysis.metrics import mae
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine.pipeline import compute_release
from lmdk_gui.core.engine.release import Release
from lmdk_gui.core.kernel.mechanisms import EARTH_RADIUS_M
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import PrivacySettings


# ------------------------------------------------------------------------------------------- helpers
def public(rel: Release, s: PrivacySettings) -> dict:
    return dict(sensitivity=s.sensitivity, bounds=s.bounds, radius_m=s.radius_m,
                n_categories=len(rel.categories) if rel.categories is not None else None)


def run(rel: Release, s: PrivacySettings) -> Denoised:
    return denoise(rel.kind, rel.values, rel.budgets, rel.approximated, **public(rel, s))


def denoised_release(rel: Release, s: PrivacySettings) -> Release:
    return replace(rel, values=run(rel, s).values)


def random_walk(n: int, sd: float, seed: int) -> np.ndarray:
    return np.cumsum(np.random.default_rng(seed).normal(0.0, sd, n))


def track(n: int, seed: int, speed: float = 8.0) -> np.ndarray:
    """A bus-like track: constant speed, slowly turning heading, one point per second."""
    rng = np.random.default_rng(seed)
    heading = np.cumsum(rng.normal(0.0, 0.05, n))
    east, north = np.cumsum(speed * np.cos(heading)), np.cumsum(speed * np.sin(heading))
    lat0 = 52.66
    return np.column_stack([lat0 + np.degrees(north / EARTH_RADIUS_M),
                            -8.63 + np.degrees(east / (EARTH_RADIUS_M * math.cos(math.radians(lat0))))])


def sticky_chain(n: int, k: int, stay: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    codes = np.empty(n, dtype=np.int64)
    codes[0] = 0
    moves = rng.random(n) >= stay
    steps = rng.integers(1, k, n)
    for t in range(1, n):
        codes[t] = (codes[t - 1] + steps[t]) % k if moves[t] else codes[t - 1]
    return codes


def numeric_series(kind: str, n: int = 2000, seed: int = 0) -> Series:
    if kind == "random walk":
        return Series.from_arrays(random_walk(n, 0.1, seed))
    rng = np.random.default_rng(seed)  # sine + noise inside [0, 5]
    return Series.from_arrays(np.clip(2.5 + 1.5 * np.sin(np.arange(n) / 60.0) + rng.normal(0, 0.2, n), 0, 5))


def categorical_series(n: int = 2000, k: int = 4, seed: int = 0) -> Series:
    return Series.from_arrays(sticky_chain(n, k, 0.97, seed), kind="categorical",
                              categories=[f"c{i}" for i in range(k)])


def every_tenth(n: int) -> np.ndarray:
    return np.arange(5, n, 10)


# ------------------------------------------------------------------------ a function of public inputs
def test_same_inputs_same_bits_for_every_kind():
    cases = [(numeric_series("sine"), PrivacySettings(sensitivity=5.0, bounds=(0.0, 5.0))),
             (Series.from_arrays(track(800, 1), kind="location"), PrivacySettings(radius_m=100.0)),
             (categorical_series(800), PrivacySettings())]
    for series, s in cases:
        rel = compute_release(series, every_tenth(series.n), s, "skip", UnitNoise(series.n, 3))
        a, b = run(rel, s), run(rel, s)
        assert a.values.tobytes() == b.values.tobytes()
        assert a.method == b.method and json.dumps(a.params) == json.dumps(b.params)


@pytest.mark.parametrize("bounds", [None, (0.0, 5.0)])
@pytest.mark.parametrize("scheme", ["skip", "adaptive", "uniform"])
def test_a_consumed_release_holds_the_same_bits(scheme, bounds):
    """``consume`` (the R-run average lets go of each run's release): the numeric result is written over the
    release's own array, bit for bit what a separate array gets; other kinds ignore it."""
    series, s = numeric_series("sine"), PrivacySettings(sensitivity=5.0, bounds=bounds)
    rel = compute_release(series, every_tenth(series.n), s, scheme, UnitNoise(series.n, 3))
    want = run(rel, s).values.tobytes()
    own = rel.values
    got = denoise(rel.kind, own, rel.budgets, rel.approximated, **public(rel, s), consume=True)
    assert got.values is own and own.tobytes() == want
    loc = compute_release(Series.from_arrays(track(300, 1), kind="location"), every_tenth(300),
                          PrivacySettings(radius_m=100.0), scheme, UnitNoise(300, 3))
    kept = loc.values.copy()
    assert denoise(loc.kind, loc.values, loc.budgets, loc.approximated, radius_m=100.0, consume=True).values \
        is not loc.values and np.array_equal(loc.values, kept)


@pytest.mark.parametrize("kind", ["numeric", "location", "categorical"])
def test_two_true_series_with_the_same_release_give_the_same_bits(kind):
    """Skip releases nothing at landmarks, so true series that differ only there publish identical arrays;
    their denoised releases must then be identical too: the truth cannot leak in any other way."""
    n = 600
    lm = every_tenth(n)
    rng = np.random.default_rng(7)
    if kind == "numeric":
        x = numeric_series("sine", n).values
        y = x.copy()
        y[lm] = rng.uniform(0, 5, lm.size)
        a, b = Series.from_arrays(x), Series.from_arrays(y)
        s = PrivacySettings(sensitivity=5.0, bounds=(0.0, 5.0))
    elif kind == "location":
        x = track(n, 2)
        y = x.copy()
        y[lm] += rng.normal(0, 0.01, (lm.size, 2))
        a, b = Series.from_arrays(x, kind="location"), Series.from_arrays(y, kind="location")
        s = PrivacySettings(radius_m=100.0)
    else:
        x = sticky_chain(n, 4, 0.95, 3)
        y = x.copy()
        y[lm] = (y[lm] + 1) % 4
        cats = ["a", "b", "c", "d"]
        a = Series.from_arrays(x, kind="categorical", categories=cats)
        b = Series.from_arrays(y, kind="categorical", categories=cats)
        s = PrivacySettings()
    assert not np.array_equal(a.values, b.values)
    ra = compute_release(a, lm, s, "skip", UnitNoise(n, 11))
    rb = compute_release(b, lm, s, "skip", UnitNoise(n, 11))
    assert ra.values.tobytes() == rb.values.tobytes()
    assert ra.guarantee.holds and rb.guarantee.holds
    assert run(ra, s).values.tobytes() == run(rb, s).values.tobytes()


@pytest.mark.parametrize("kind", ["numeric", "location", "categorical"])
def test_values_at_approximated_events_are_ignored(kind):
    """Approximated events only republish: whatever stands there carries no observation."""
    n = 500
    rng = np.random.default_rng(5)
    budgets = np.where(rng.random(n) < 0.3, 0.0, 1.0)
    approx = budgets == 0
    if kind == "numeric":
        y = random_walk(n, 0.1, 1) + rng.laplace(0, 1, n)
        other = np.where(approx, 1e6, y)
        kw: dict = {"sensitivity": 1.0}
    elif kind == "location":
        y = track(n, 4)
        other = np.where(approx[:, None], 0.0, y)
        kw = {"radius_m": 100.0}
    else:
        y = sticky_chain(n, 3, 0.9, 2)
        other = np.where(approx, (y + 1) % 3, y)
        kw = {"n_categories": 3}
    a = denoise(kind, y, budgets, approx, **kw)
    b = denoise(kind, other, budgets, approx, **kw)
    assert a.values.tobytes() == b.values.tobytes()


def test_params_are_public_and_json_able():
    series = numeric_series("sine")
    s = PrivacySettings(sensitivity=5.0, bounds=(0.0, 5.0))
    rel = compute_release(series, every_tenth(series.n), s, "skip", UnitNoise(series.n, 1))
    d = run(rel, s)
    assert d.method == "clip+rts-local-level"
    assert json.loads(json.dumps(d.params))["process_variance"] > 0


# ----------------------------------------------------------------------------------------- clipping
@settings(max_examples=60, deadline=None)
@given(
    values=hnp.arrays(np.float64, st.integers(0, 60),
                      elements=st.floats(-1e12, 1e12, allow_nan=False) | st.just(np.nan)),
    data=st.data(),
    lo=st.floats(-100, 100),
    width=st.floats(1e-3, 1e3),
    sens=st.floats(1e-3, 1e3),
)
def test_clip_never_leaves_the_bounds(values, data, lo, width, sens):
    n = values.shape[0]
    budgets = np.asarray(data.draw(hnp.arrays(np.float64, n, elements=st.sampled_from([0.0, 1e-9, 0.01, 1.0, 50.0]))))
    approx = budgets == 0
    hi = lo + width
    d = denoise("numeric", values, budgets, approx, sensitivity=sens, bounds=(lo, hi))
    out = d.values
    assert out.shape == (n,)
    finite = np.isfinite(out)
    assert np.all((out[finite] >= lo) & (out[finite] <= hi))
    if (~approx & np.isfinite(values)).any():
        assert finite.all()


# --------------------------------------------------------------------------- better than raw, known truth
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("shape", ["random walk", "sine"])
@pytest.mark.parametrize("scheme", ["skip", "event", "adaptive"])
def test_numeric_smoother_beats_raw(eps, shape, scheme):
    series = numeric_series(shape)
    bounds = (0.0, 5.0) if shape == "sine" else None
    s = PrivacySettings(epsilon=eps, sensitivity=1.0, bounds=bounds)
    rel = compute_release(series, every_tenth(series.n), s, scheme, UnitNoise(series.n, 2))
    raw, den = mae(series, rel), mae(series, denoised_release(rel, s))
    assert den < 0.6 * raw, (raw, den)


@pytest.mark.parametrize("eps", [0.2, 1.0, 5.0])
def test_location_smoother_beats_raw(eps):
    series = Series.from_arrays(track(2000, 5), kind="location")
    s = PrivacySettings(epsilon=eps, radius_m=100.0)
    rel = compute_release(series, every_tenth(series.n), s, "skip", UnitNoise(series.n, 4))
    d = run(rel, s)
    raw, den = mae(series, rel), mae(series, replace(rel, values=d.values))
    assert den < 0.5 * raw, (raw, den)
    assert d.params["model"] == "constant-velocity"  # a vehicle moving at steady speed


def test_location_across_the_antimeridian():
    n = 600
    x = track(n, 6)
    x[:, 1] += 180.0 - x[:, 1].mean()  # centre the track on 180°
    x[:, 1] = (x[:, 1] + 180.0) % 360.0 - 180.0
    assert (x[:, 1] > 0).any() and (x[:, 1] < 0).any()
    series = Series.from_arrays(x, kind="location")
    s = PrivacySettings(epsilon=1.0, radius_m=100.0)
    rel = compute_release(series, [], s, "event", UnitNoise(n, 2))
    assert mae(series, denoised_release(rel, s)) < 0.5 * mae(series, rel)


def test_location_model_choice_follows_the_data():
    """A wandering point (random walk of positions) is a local level; a vehicle is constant velocity."""
    rng = np.random.default_rng(8)
    n = 2000
    walk = np.column_stack([52.0 + np.cumsum(rng.normal(0, 2e-5, n)), 8.0 + np.cumsum(rng.normal(0, 3e-5, n))])
    s = PrivacySettings(epsilon=1.0, radius_m=20.0)
    rel = compute_release(Series.from_arrays(walk, kind="location"), [], s, "event", UnitNoise(n, 1))
    assert run(rel, s).params["model"] == "local-level"


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("scheme", ["skip", "event"])
def test_categorical_smoother_beats_raw(eps, scheme):
    series = categorical_series()
    s = PrivacySettings(epsilon=eps)
    rel = compute_release(series, every_tenth(series.n), s, scheme, UnitNoise(series.n, 6))
    d = run(rel, s)
    raw, den = mae(series, rel, s), mae(series, replace(rel, values=d.values), s)
    assert den < 0.8 * raw, (raw, den)  # ε = 0.5: 0.45 vs 0.63 (the fitted chain is less sticky than truth)
    assert d.method == "hmm-forward-backward" and d.params["stay_probability_mean"] > 0.8


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_noise_swamped_release_stays_in_the_middle_of_the_bounds(seed):
    """Noise ~10^4 × the bounds' width (Uniform with many landmarks): the release says next to nothing, so
    the level must stay near its prior, the middle — not jump to a bound (an uncapped extended filter did)."""
    n = 3000
    rng = np.random.default_rng(seed)
    y = 1.0 + rng.laplace(0.0, 5e4, n)
    d = denoise("numeric", y, np.full(n, 1e-4), np.zeros(n, bool), sensitivity=5.0, bounds=(0.0, 5.0))
    assert np.all(np.abs(d.values - 2.5) < 0.5)


@pytest.mark.parametrize("eps", [1.0, 2.0])
def test_many_categories_use_the_stay_or_jump_chain_and_beat_raw(eps):
    k = dn.FULL_MATRIX_MAX_K + 4
    series = categorical_series(3000, k, 5)
    s = PrivacySettings(epsilon=eps)
    rel = compute_release(series, every_tenth(series.n), s, "skip", UnitNoise(series.n, 8))
    d = run(rel, s)
    assert d.params["transitions"].startswith("stay-or-jump")
    assert mae(series, replace(rel, values=d.values), s) < 0.7 * mae(series, rel, s)


def test_stay_or_jump_pass_equals_the_full_matrix_pass():
    """The O(k) forward–backward is the O(k²) one on the matrix A_ij = s_i[i = j] + (1 − s_i)π_j."""
    rng = np.random.default_rng(21)
    k, n = 6, 400
    stay, land = rng.uniform(0.5, 0.99, k), rng.dirichlet(np.ones(k))
    full = np.diag(stay) + (1 - stay)[:, None] * land[None, :]
    codes = np.where(rng.random(n) < 0.2, -1, rng.integers(0, k, n))
    keep = np.where(codes < 0, 1.0 / k, rng.uniform(0.3, 0.9, n))
    out = []
    for chain, counts in (((full, dn._NO_VECTOR, dn._NO_VECTOR), np.empty((k, k))),
                          ((dn._NO_MATRIX, stay, land), np.empty((3, k)))):
        post = np.empty((n, k))
        ll = dn._hmm_pass(codes, keep, k, *chain, np.empty((n, k)), np.empty(n), counts, post)
        out.append((ll, post, counts))
    (ll_f, post_f, xi), (ll_j, post_j, c3) = out
    assert ll_j == pytest.approx(ll_f, rel=1e-12)
    np.testing.assert_allclose(post_j, post_f, rtol=1e-9, atol=1e-15)
    # the expected transitions i → j of the full pass, split into stays and jumps
    np.testing.assert_allclose(c3[0] + c3[1], xi.sum(axis=1), rtol=1e-9)
    np.testing.assert_allclose(c3[2] + c3[0], xi.sum(axis=0), rtol=1e-9)


def test_smoother_fills_approximated_runs_better_than_republishing():
    """Long runs of ε_t = 0 (Skip over consecutive landmarks): the smoother interpolates, the raw release
    repeats the last value before the run."""
    series = numeric_series("random walk", 3000)
    lm = np.concatenate([np.arange(s, s + 80) for s in range(200, 3000, 400)])
    s = PrivacySettings(epsilon=2.0, sensitivity=1.0)
    rel = compute_release(series, lm, s, "skip", UnitNoise(series.n, 9))
    out = run(rel, s).values
    err_raw = np.abs(rel.values - series.values)[lm].mean()
    err_den = np.abs(out - series.values)[lm].mean()
    assert err_den < 0.8 * err_raw


# ------------------------------------------------------------------------------------------ statistics
@pytest.mark.parametrize("step_sd", [0.05, 0.3])
def test_ml_process_variance_is_near_the_truth(step_sd):
    n = 20_000
    x = random_walk(n, step_sd, 12)
    y = x + np.random.default_rng(13).laplace(0.0, 1.0, n)
    d = denoise("numeric", y, np.ones(n), np.zeros(n, bool), sensitivity=1.0)
    assert step_sd**2 / 3 < d.params["process_variance"] < 3 * step_sd**2


def test_ml_on_blocks_of_a_long_series():
    n = 100_000
    assert dn.search_blocks(n) != [(0, n)]
    x = random_walk(n, 0.1, 14)
    y = x + np.random.default_rng(15).laplace(0.0, 1.0, n)
    d = denoise("numeric", y, np.ones(n), np.zeros(n, bool), sensitivity=1.0)
    assert d.params["search_events"] == dn.SEARCH_BLOCK * dn.SEARCH_BLOCKS
    assert 0.01 / 3 < d.params["process_variance"] < 0.03
    assert np.abs(d.values - x).mean() < 0.4 * np.abs(y - x).mean()


@pytest.mark.parametrize("x", [0.0, 0.3, 2.5, 4.99, 5.0])
@pytest.mark.parametrize("b", [0.004, 0.05, 1.0, 5.0, 1e4])
def test_clipped_laplace_moments_match_numerical_integration(x, b):
    lo, hi = 0.0, 5.0
    slope, shift, var = dn._clipped_laplace(x, b, 1.0 / b, lo, hi, math.exp(-(hi - lo) / b))
    # E[z], E[z^2] of z = clip(x + L): point masses at the bounds plus the interior integral
    p_lo, p_hi = 0.5 * math.exp(-(x - lo) / b), 0.5 * math.exp(-(hi - x) / b)
    def interior(power: int) -> float:
        f = lambda v: v**power * math.exp(-abs(v - x) / b) / (2 * b)  # noqa: E731
        return sum(quad(f, a, c, epsabs=1e-14, epsrel=1e-12)[0] for a, c in ((lo, x), (x, hi)) if c > a)

    ez = lo * p_lo + hi * p_hi + interior(1)
    ez2 = lo**2 * p_lo + hi**2 * p_hi + interior(2)
    assert shift == pytest.approx(ez - x, abs=1e-6 * max(b, 1))
    assert var == pytest.approx(ez2 - ez**2, rel=1e-4, abs=1e-9)
    assert slope == pytest.approx(1.0 - p_lo - p_hi, abs=1e-9)  # dE[z]/dx = P(lo < x + L < hi)


def test_g_series_joins_the_closed_form():
    for u in (1e-3 * (1 - 1e-9), 1e-3 * (1 + 1e-9)):
        assert dn._g(u, math.exp(-u)) == pytest.approx(1 - (1 + u) * math.exp(-u), rel=1e-8)


def test_categorical_em_on_blocks_of_a_long_series():
    n = 40_000
    series = categorical_series(n, 3, 4)
    s = PrivacySettings(epsilon=1.0)
    rel = compute_release(series, [], s, "event", UnitNoise(n, 2))
    d = run(rel, s)
    assert d.params["em_events"] == dn.SEARCH_BLOCK * dn.SEARCH_BLOCKS and d.params["em_converged"]
    assert mae(series, replace(rel, values=d.values), s) < 0.5 * mae(series, rel, s)


def test_rr_emissions_are_the_mechanisms():
    """The HMM's keep probability is the mechanism's (an ε_t = 0 event is then uninformative, 1/k)."""
    from lmdk_gui.core.kernel.mechanisms import rr_keep_probability
    k = 5
    for eps in (0.0, 0.3, 2.0, 800.0):
        assert 1.0 / (1.0 + (k - 1) * np.exp(-eps)) == pytest.approx(rr_keep_probability(eps, k), rel=1e-15)


# ----------------------------------------------------------------------------------------- edge cases
@pytest.mark.parametrize("kind", ["numeric", "location", "categorical"])
def test_empty_series(kind):
    released = np.zeros((0, 2)) if kind == "location" else np.zeros(0, np.int64 if kind == "categorical" else float)
    d = denoise(kind, released, np.zeros(0), np.zeros(0, bool), sensitivity=1.0, radius_m=10.0, n_categories=3)
    assert d.values.shape == released.shape


def test_all_approximated_keeps_the_fallbacks():
    n = 30
    zero, flags = np.zeros(n), np.ones(n, bool)
    d = denoise("numeric", np.full(n, 2.5), zero, flags, sensitivity=1.0, bounds=(0.0, 5.0))
    assert np.all(d.values == 2.5) and d.method == "none"
    d = denoise("numeric", np.full(n, np.nan), zero, flags, sensitivity=1.0)
    assert np.isnan(d.values).all()
    d = denoise("location", np.full((n, 2), np.nan), zero, flags, radius_m=50.0)
    assert np.isnan(d.values).all()
    d = denoise("categorical", np.full(n, -1), zero, flags, n_categories=4)
    assert np.all(d.values == -1)


def test_one_event():
    one, no = np.ones(1), np.zeros(1, bool)
    d = denoise("numeric", np.array([7.0]), one, no, sensitivity=1.0, bounds=(0.0, 5.0))
    assert 0.0 <= d.values[0] <= 5.0
    d = denoise("numeric", np.array([7.0]), one, no, sensitivity=1.0)
    assert d.values[0] == pytest.approx(7.0, abs=1e-4)
    d = denoise("location", np.array([[52.0, 8.0]]), one, no, radius_m=100.0)
    assert d.values == pytest.approx(np.array([[52.0, 8.0]]), abs=1e-9)
    d = denoise("categorical", np.array([2]), one, no, n_categories=3)
    assert d.values.tolist() == [2]


def test_single_category_and_before_the_first_release():
    d = denoise("categorical", np.zeros(5, np.int64), np.ones(5), np.zeros(5, bool), n_categories=1)
    assert d.values.tolist() == [0] * 5
    # no public fallback: code −1 before the first fresh release; the posterior fills it
    codes = np.array([-1, -1, 1, 1, 1, 1])
    flags = codes < 0
    d = denoise("categorical", codes, np.where(flags, 0.0, 3.0), flags, n_categories=3)
    assert d.values.min() >= 0


def test_bad_input_is_a_one_line_error():
    with pytest.raises(ValueError, match="unknown kind"):
        denoise("text", np.zeros(2), np.ones(2), np.zeros(2, bool))
    with pytest.raises(ValueError, match="same 3 events"):
        denoise("numeric", np.zeros(2), np.ones(3), np.zeros(3, bool), sensitivity=1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        denoise("numeric", np.zeros(2), np.ones(2), np.zeros(2, bool))
    with pytest.raises(ValueError, match="bounds"):
        denoise("numeric", np.zeros(2), np.ones(2), np.zeros(2, bool), sensitivity=1.0, bounds=(1.0, 1.0))
    with pytest.raises(ValueError, match="radius"):
        denoise("location", np.zeros((2, 2)), np.ones(2), np.zeros(2, bool))
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        denoise("categorical", np.array([0, 2]), np.ones(2), np.zeros(2, bool), n_categories=2)


CACHE_SCRIPT = r"""
import numpy as np
from lmdk_gui.core.analysis.denoise import denoise
rng = np.random.default_rng(0)
n, ok = 300, np.zeros(300, bool)
denoise("numeric", rng.normal(size=n), np.ones(n), ok, sensitivity=1.0, bounds=(-1.0, 1.0))
denoise("numeric", rng.normal(size=n), np.ones(n), ok, sensitivity=1.0)
denoise("location", np.column_stack([rng.uniform(50, 50.01, n), rng.uniform(8, 8.01, n)]), np.ones(n), ok,
        radius_m=100.0)
denoise("categorical", rng.integers(0, 3, n), np.ones(n), ok, n_categories=3)
print("ok")
"""


@pytest.mark.slow
def test_a_second_process_hits_the_numba_cache(tmp_path):
    """The kernels take no function arguments, so numba's on-disk cache serves a fresh process."""
    import os
    import subprocess
    import sys

    cache = tmp_path / "numba_cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    seen = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", CACHE_SCRIPT], capture_output=True, text=True, env=env,
                              timeout=600)
        assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
        seen.append(sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.suffix in (".nbi", ".nbc")))
    assert any("denoise" in f for f in seen[0])
    assert seen[1] == seen[0]


@pytest.mark.parametrize("n", [1, 7, 8, 9, 127, 128, 129, 1000, 8193, 100_003])
def test_variance_in_the_copy_is_numpys_to_the_bit(n):
    """The numeric denoiser's starting scale: np.var's own steps, computed in the copy it already has (no
    second 80 MB array at 10^7 events) — the same bits, so the same denoised values."""
    rng = np.random.default_rng(n)
    for a in (rng.laplace(5.0, 3.0, n), rng.random(n) * 1e9 + 1e12, rng.normal(0.0, 1e-6, n)):
        assert dn.variance_of_copy(a.copy()) == float(np.var(a))


# ------------------------------------------------------------------------------- a public lower bound
def test_a_lower_bound_alone_clips_the_denoised_values_and_nothing_else():
    """Issue 44: a near-zero non-negative series at a small ε denoises below 0 without a bound; the public
    lower bound 0 clips the result to it; with both ends the bounds stay the only way to say it."""
    rng = np.random.default_rng(0)
    x = np.abs(rng.normal(0.0, 0.05, 600))
    budgets = np.full(x.size, 0.2)
    y = x + rng.laplace(0.0, 1.0 / 0.2, x.size)
    flags = np.zeros(x.size, dtype=bool)
    free = denoise("numeric", y, budgets, flags, sensitivity=1.0)
    assert free.values.min() < 0  # (the case the bound is for)
    d = denoise("numeric", y, budgets, flags, sensitivity=1.0, lower_bound=0.0)
    assert d.values.min() >= 0.0 and d.method == "clip-lower+" + free.method
    np.testing.assert_array_equal(d.values, np.maximum(free.values, 0.0))
    with pytest.raises(ValueError, match="lower bound"):
        denoise("numeric", y, budgets, flags, sensitivity=1.0, bounds=(0.0, 1.0), lower_bound=0.0)


def test_settings_take_a_lower_bound_alone():
    s = PrivacySettings(lower_bound=0.0)
    s.validate()
    assert s.clip_range() == (0.0, math.inf) and PrivacySettings(bounds=(1.0, 2.0)).clip_range() == (1.0, 2.0)
    assert PrivacySettings.from_dict(json.loads(json.dumps(s.to_dict()))).lower_bound == 0.0
    with pytest.raises(ValueError, match="not both"):
        PrivacySettings(bounds=(0.0, 1.0), lower_bound=0.0).validate()
    with pytest.raises(ValueError, match="finite"):
        PrivacySettings(lower_bound=math.inf).validate()
