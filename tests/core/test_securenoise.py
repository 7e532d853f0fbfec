"""Tests for lmdk_gui.core.kernel.securenoise: exactness of the integer samplers, distributions, protocol, API.

Statistical tests use fixed seeds and reject only below p = 1e-6 (as OpenDP's own tests do), so they are
deterministic and not flaky.
"""

from __future__ import annotations

import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from lmdk_gui.core.kernel import opendp_noise
from lmdk_gui.core.kernel import securenoise as sn

P_MIN = 1e-6
TWO64 = 1 << 64


def _words(seed: int, n: int) -> np.ndarray:
    return sn.WordSource.from_seed(seed).words(n)


def _chi2_p(counts, probs) -> float:
    counts = np.asarray(counts, dtype=float)
    probs = np.asarray(probs, dtype=float)
    expected = probs / probs.sum() * counts.sum()
    return float(stats.chisquare(counts, expected).pvalue)


# ---------------------------------------------------------------------------------------- uniform_below


def test_uniform_below_rejection_rule_by_hand():
    # high = 3: threshold 2**64 mod 3 = 1, so the word 0 is rejected, 1 is accepted (-> 1 % 3 = 1)
    w = np.array([0, 1, 5], dtype=np.uint64)
    v, pos = sn.uniform_below(3, w, 0)
    assert (int(v), pos) == (1, 2)
    # high = 2**62 + 1: threshold = 2**64 mod high = 2**62 - 3
    high = (1 << 62) + 1
    thresh = TWO64 % high
    assert thresh == (1 << 62) - 3
    w = np.array([thresh - 1, thresh, TWO64 - 1], dtype=np.uint64)
    v, pos = sn.uniform_below(high, w, 0)
    assert (int(v), pos) == (thresh % high, 2)
    v, pos = sn.uniform_below(high, w, 2)
    assert (int(v), pos) == ((TWO64 - 1) % high, 3)
    # power of two: nothing is rejected
    w = np.array([0, TWO64 - 1], dtype=np.uint64)
    assert int(sn.uniform_below(np.uint64(1 << 63), w, 0)[0]) == 0
    assert int(sn.uniform_below(1, w, 1)[0]) == 0


@pytest.mark.parametrize("high", [3, 7, 10])
def test_uniform_below_small_high_chisquare(high):
    w = _words(100 + high, 40_000)
    vals = []
    pos = 0
    while pos >= 0 and len(w) - pos > 2:
        v, pos = sn.uniform_below(high, w, pos)
        if pos >= 0:
            vals.append(int(v))
    counts = np.bincount(vals, minlength=high)
    assert len(counts) == high
    assert _chi2_p(counts, np.ones(high)) > P_MIN


def test_uniform_below_large_high_quartiles_and_rejection_rate():
    high = (1 << 62) + 1  # rejection probability (2**62 - 3) / 2**64 ≈ 1/4
    w = _words(7, 40_000)
    vals, used = [], []
    pos = 0
    while len(w) - pos > 64:
        p0 = pos
        v, pos = sn.uniform_below(high, w, pos)
        vals.append(int(v))
        used.append(pos - p0)
    vals = np.array(vals, dtype=object)
    assert all(0 <= v < high for v in vals)
    quart = np.array([min(3, 4 * int(v) // high) for v in vals])
    assert _chi2_p(np.bincount(quart, minlength=4), np.ones(4)) > P_MIN
    # words per draw is geometric with mean 1 / (1 - q), q ≈ 1/4
    mean = np.mean(used)
    assert abs(mean - 4 / 3) < 0.03


# -------------------------------------------------------------------------------- Bernoulli(exp(-γ))


@pytest.mark.parametrize("num,den", [(0, 1), (1, 2), (1, 1), (3, 7), (5, 2), (3, 1), (10**12, 10**12 + 1)])
def test_bernoulli_exp_frequencies(num, den):
    w = _words(num * 31 + den, 400_000)
    n = 20_000
    pos = 0
    hits = 0
    for _ in range(n):
        b, pos = sn.bernoulli_exp(num, den, w, pos)
        assert pos >= 0
        hits += bool(b)
    p = math.exp(-num / den)
    if num == 0:
        assert hits == n
    else:
        assert stats.binomtest(hits, n, p).pvalue > P_MIN


# ------------------------------------------------------------------------------------ discrete Laplace


@pytest.mark.parametrize("t", [1, 3, 40])
def test_discrete_laplace_pmf_chisquare(t):
    w = _words(1000 + t, 500_000)
    n = 20_000
    pos = 0
    zs = np.empty(n, dtype=np.int64)
    for i in range(n):
        z, pos = sn.discrete_laplace(t, w, pos)
        assert pos >= 0
        zs[i] = z
    cut = 4 * t  # bins -cut..cut, tails lumped
    zc = np.clip(zs, -cut - 1, cut + 1) + cut + 1
    counts = np.bincount(zc, minlength=2 * cut + 3)
    r = math.exp(-1 / t)
    norm = (1 - r) / (1 + r)
    pm = [norm * r ** abs(z) for z in range(-cut, cut + 1)]
    tail = norm * r ** (cut + 1) / (1 - r)
    probs = [tail, *pm, tail]
    assert _chi2_p(counts, probs) > P_MIN


def test_geometric_mean():
    w = _words(5, 200_000)
    t = 10
    pos = 0
    xs = []
    for _ in range(10_000):
        x, pos = sn.geometric(t, w, pos)
        xs.append(int(x))
    r = math.exp(-1 / t)
    # mean of P(x) ∝ r**x is r / (1 - r); standard error ~ sd/sqrt(n)
    sd = math.sqrt(r) / (1 - r)
    assert abs(np.mean(xs) - r / (1 - r)) < 6 * sd / 100


# --------------------------------------------------------------------------------- snapped Laplace


@pytest.mark.parametrize(
    "x,scale,sens,seed",
    [
        (0.0, 1.0, 1.0, 1),
        (3.3, 0.25, 1.0, 2),
        (-1234.5678, 70.0, 0.5, 3),
        (1e9, 1.0, 1.0, 4),
        (0.1, 1e-6, 1e-6, 5),
    ],
)
def test_snapped_laplace_ks(x, scale, sens, seed):
    n = 5000
    y = sn.secure_laplace(np.full(n, x), scale, sens, sn.WordSource.from_seed(seed))
    noise = (y - x) / scale
    assert stats.kstest(noise, "laplace").pvalue > P_MIN


def test_snapped_laplace_per_element_scales_ks():
    n = 6000
    scales = np.array([0.5, 2.0, 9.0])[np.arange(n) % 3]
    y = sn.secure_laplace(np.zeros(n), scales, 1.0, sn.WordSource.from_seed(11))
    for s in (0.5, 2.0, 9.0):
        assert stats.kstest(y[scales == s] / s, "laplace").pvalue > P_MIN


def test_snapped_outputs_lie_on_grid():
    scale, sens = 3.0, 1.0
    g, t = sn.laplace_grid(scale, sens)
    # issue 17, finding 3: the grid comes from public Δ and Δ/ε only (here a stand-alone call, ε = Δ/scale)
    assert g == 2.0 ** (min(math.floor(math.log2(sens)), math.ceil(math.log2(scale))) - 21)
    rng = np.random.default_rng(0)
    on_grid = g * rng.integers(-(2**45), 2**45, size=2000).astype(float)
    off_grid = rng.normal(0, 100, size=2000)
    for x in (on_grid, off_grid):
        y = sn.secure_laplace(x, scale, sens, sn.WordSource.from_seed(3))
        k = y / g
        assert np.all(k == np.rint(k))
        # and the noise, in grid units, is an integer added to round(x/g)
        assert np.all((k - np.rint(x / g)) == np.rint(k - np.rint(x / g)))


def test_effective_scale_close_to_requested():
    for eps in (1e-6, 1e-3, 0.1, 1.0, 10.0, 1e4):
        for sens in (1e-3, 1.0, 250.0):
            b = sens / eps
            eff = sn.effective_laplace_scale(b, sens)
            assert b <= eff <= b * (1 + 2e-6)


@settings(max_examples=300, deadline=None)
@given(
    eps=st.floats(min_value=2.0**-32, max_value=1e6, allow_nan=False),
    sens=st.floats(min_value=1e-12, max_value=1e12, allow_nan=False),
)
def test_laplace_params_privacy_inequality_exact(eps, sens):
    """t >= Δ_k / ε_t in exact rationals, with b computed by the caller as the float Δ/ε_t."""
    b = sens / eps
    g, t = sn.laplace_grid(b, sens)
    gf = Fraction(g)
    assert gf.numerator == 1 or gf.denominator == 1  # power of two
    dk = math.floor(Fraction(sens) / gf) + 1
    assert Fraction(t) * Fraction(eps) >= dk
    assert 2**20 <= t < 2**55  # the public grid (finding 3) widens t's range; int64-exact up to 2**62


@pytest.mark.parametrize("eps", [1e-14, 1e-20, 1e-300])
def test_absurdly_small_epsilon_is_refused(eps):
    with pytest.raises(ValueError):
        sn.laplace_grid(1.0 / eps, 1.0)
    with pytest.raises(ValueError):
        sn.secure_laplace(np.zeros(2), 1.0 / eps, 1.0, sn.WordSource.from_seed(1))
    assert sn.secure_laplace_one(0.0, 1.0 / eps, 1.0, _words(1, 10), 0)[1] == -2


def test_huge_and_tiny_inputs_are_finite():
    # |x| up to 2**61 grid steps (about 1e12 for Δ = 1; finding 3 made the sum k + Z exact in int64)
    y = sn.secure_laplace(np.array([1e12, -1e12, 5e-324, 0.0]), 1.0, 1.0, sn.WordSource.from_seed(1))
    assert np.all(np.isfinite(y))
    with pytest.raises(ValueError, match="too large"):  # x/g overflows: refused, never released unprotected
        sn.secure_laplace(np.array([1e300]), 1.0, 1.0, sn.WordSource.from_seed(1))


# ------------------------------------------------------------------------------------------- planar


def _offsets_m(lat, lon, out):
    dy = np.radians(out[:, 0] - lat) * sn.R_EARTH_M
    dx = np.radians(out[:, 1] - lon) * sn.R_EARTH_M * np.cos(np.radians(lat))
    return dx, dy


@pytest.mark.parametrize(
    "lat,lon,scale,seed", [(48.137, 11.575, 50.0, 1), (-33.9, 151.2, 2000.0, 2), (0.0, 0.0, 7.0, 3)]
)
def test_planar_radius_gamma_and_angle_uniform(lat, lon, scale, seed):
    n = 5000
    out = sn.secure_planar(np.tile([lat, lon], (n, 1)), scale, sn.WordSource.from_seed(seed))
    dx, dy = _offsets_m(lat, lon, out)
    r = np.hypot(dx, dy)
    assert stats.kstest(r, stats.gamma(a=2, scale=scale).cdf).pvalue > P_MIN
    ang = np.mod(np.arctan2(dy, dx), 2 * np.pi)
    assert stats.kstest(ang, stats.uniform(0, 2 * np.pi).cdf).pvalue > P_MIN


def test_planar_outputs_on_public_grid_and_in_range():
    pts = np.array([[89.99999, 179.99999], [-89.9999, -179.9999], [0.0, 180.0], [45.0, -0.0]] * 500)
    out = sn.secure_planar(pts, 5e5, sn.WordSource.from_seed(4))
    assert np.all(np.abs(out[:, 0]) <= 90.0)
    assert np.all((out[:, 1] >= -180.0) & (out[:, 1] < 180.0))
    assert np.all(np.rint(out * 1e7) / 1e7 == out)


# ---------------------------------------------------------------------------------- randomized response


@pytest.mark.parametrize("eps,k", [(1.0, 5), (0.3, 2), (2.5, 12), (1e-12, 4), (50.0, 3)])
def test_rr_keep_flip_chisquare(eps, k):
    n = 30_000
    true = 1
    out = sn.secure_rr(np.full(n, true), eps, k, sn.WordSource.from_seed(int(eps * 100) + k))
    counts = np.bincount(out, minlength=k)
    p = math.exp(eps) / (math.exp(eps) + k - 1)
    probs = np.full(k, (1 - p) / (k - 1))
    probs[true] = p
    if eps == 50.0:
        assert counts[true] == n
    else:
        assert _chi2_p(counts, probs) > P_MIN


@settings(max_examples=200, deadline=None)
@given(eps=st.floats(min_value=1e-9, max_value=800.0), k=st.integers(min_value=1, max_value=10**6))
def test_rr_threshold_rounds_keep_probability_down(eps, k):
    getcontext().prec = 60
    e = Decimal(eps).exp()
    alpha = Decimal(k) / (e + Decimal(k - 1))
    a = int(sn._rr_threshold(eps, float(k)))
    assert 1 <= a <= 2**62
    assert Decimal(a) / Decimal(2**62) >= alpha  # randomize prob rounded up => keep prob rounded down
    # effective epsilon never exceeds eps
    alpha_eff = Fraction(a, 2**62)
    ratio = 1 + k * (1 - alpha_eff) / alpha_eff
    assert Decimal(ratio.numerator) / Decimal(ratio.denominator) <= e * (1 + Decimal(10) ** -40)


# ------------------------------------------------------------------------------------- reproducibility


def test_seeded_reproducible_and_os_not():
    x = np.linspace(0, 10, 1000)
    a = sn.secure_laplace(x, 1.0, 1.0, sn.WordSource.from_seed(42))
    b = sn.secure_laplace(x, 1.0, 1.0, sn.WordSource.from_seed(42))
    c = sn.secure_laplace(x, 1.0, 1.0, sn.WordSource.from_seed(43))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    d = sn.secure_laplace(x, 1.0, 1.0, sn.WordSource.from_os())
    e = sn.secure_laplace(x, 1.0, 1.0)
    assert not np.array_equal(d, e)
    ll = np.tile([10.0, 20.0], (100, 1))
    assert np.array_equal(
        sn.secure_planar(ll, 30.0, sn.WordSource.from_seed(1)),
        sn.secure_planar(ll, 30.0, sn.WordSource.from_seed(1)),
    )
    codes = np.arange(100) % 4
    assert np.array_equal(
        sn.secure_rr(codes, 0.5, 4, sn.WordSource.from_seed(9)),
        sn.secure_rr(codes, 0.5, 4, sn.WordSource.from_seed(9)),
    )


def test_refill_consumes_one_continuous_word_stream():
    """Chunking + refill must equal one pass over the same seeded stream (no word lost or reused)."""
    n = 150_000  # > 2 chunks
    x = np.zeros(n)
    sc = np.full(n, 2.0)
    y = sn.secure_laplace(x, sc, 1.0, sn.WordSource.from_seed(77))
    words = sn.WordSource.from_seed(77).words(n * 40)
    ref = np.empty(n)
    j, pos = sn._laplace_kernel(x, sc, 1.0, sn.laplace_grid_exponent(1.0, 2.0), ref, 0, n, words, 0)
    assert j == n and pos > 0
    assert np.array_equal(y, ref)


# ------------------------------------------------------------------------------------- buffer protocol


def test_exhaustion_returns_minus_one_and_prefix_consistency():
    full = _words(12, 4000)
    calls = [
        lambda w, p: sn.secure_laplace_one(0.5, 1.0, 1.0, w, p),
        lambda w, p: sn.secure_planar_one(1.0, 2.0, 100.0, w, p),
        lambda w, p: sn.secure_rr_one(1, 1.0, 5, w, p),
    ]
    for call in calls:
        ref = call(full, 0)
        need = ref[-1]
        assert need > 0
        for length in range(0, need + 3):
            res = call(full[:length].copy(), 0)
            if length < need:
                assert res[-1] == -1
            else:
                assert res == ref  # reads only the first `need` words
        assert call(full[:0].copy(), 0)[-1] == -1
        assert call(full, len(full))[-1] == -1


def test_invalid_arguments_in_kernels_return_minus_two():
    w = _words(1, 100)
    assert sn.secure_laplace_one(math.nan, 1.0, 1.0, w, 0)[1] == -2
    assert sn.secure_laplace_one(1.0, 0.0, 1.0, w, 0)[1] == -2
    assert sn.secure_laplace_one(1.0, 1.0, -1.0, w, 0)[1] == -2
    assert sn.secure_planar_one(91.0, 0.0, 1.0, w, 0)[2] == -2
    assert sn.secure_rr_one(5, 1.0, 5, w, 0)[1] == -2
    assert sn.secure_rr_one(0, 0.0, 5, w, 0)[1] == -2


def test_reserve_tail_bound_is_astronomically_small():
    assert sn.RESERVE_WORDS == 1024
    assert sn.reserve_tail_log10("numeric") < -120
    assert sn.reserve_tail_log10("location") < -120
    assert sn.reserve_tail_log10("categorical") < -1000
    assert sn.reserve_tail_bound("numeric") == 0.0 or sn.reserve_tail_bound("numeric") < 1e-120


# -------------------------------------------------------------------------------- driver validation


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_value_error_on_bad_eps_or_scale(bad):
    with pytest.raises(ValueError):
        sn.secure_laplace(np.zeros(3), np.array([1.0, bad, 1.0]), 1.0)
    with pytest.raises(ValueError):
        sn.secure_planar(np.zeros((3, 2)), np.array([1.0, 1.0, bad]))
    with pytest.raises(ValueError):
        sn.secure_rr(np.zeros(3, dtype=int), np.array([bad, 1.0, 1.0]), 3)
    with pytest.raises(ValueError):
        opendp_noise.opendp_laplace(np.zeros(3), bad, 1.0)


def test_value_error_on_bad_inputs():
    with pytest.raises(ValueError):
        sn.secure_laplace(np.array([0.0, math.nan]), 1.0, 1.0)
    with pytest.raises(ValueError):
        sn.secure_laplace(np.zeros(2), 1.0, 0.0)
    with pytest.raises(ValueError):
        sn.secure_planar(np.array([[95.0, 0.0]]), 1.0)
    with pytest.raises(ValueError):
        sn.secure_rr(np.array([0, 3]), 1.0, 3)
    with pytest.raises(ValueError):
        sn.secure_laplace(np.zeros(3), np.ones(4), 1.0)


def test_empty_inputs():
    assert sn.secure_laplace(np.zeros(0), 1.0, 1.0).shape == (0,)
    assert sn.secure_planar(np.zeros((0, 2)), 1.0).shape == (0, 2)
    assert sn.secure_rr(np.zeros(0, dtype=int), 1.0, 2).shape == (0,)


def test_cancel_and_progress():
    n = 3 * sn.CHUNK_EVENTS + 5
    seen = []
    calls = {"n": 0}

    def cancel():
        calls["n"] += 1
        return calls["n"] > 2

    with pytest.raises(sn.Cancelled):
        sn.secure_rr(
            np.zeros(n, dtype=int), 1.0, 2, progress=lambda d, t: seen.append((d, t)), should_cancel=cancel
        )
    assert seen == [(sn.CHUNK_EVENTS, n), (2 * sn.CHUNK_EVENTS, n)]
    seen.clear()
    sn.secure_laplace(
        np.zeros(n), 1.0, 1.0, progress=lambda d, t: seen.append((d, t)), should_cancel=lambda: False
    )
    assert seen[-1] == (n, n) and len(seen) == 4
    with pytest.raises(sn.Cancelled):
        opendp_noise.opendp_laplace(np.zeros(10), 1.0, 1.0, should_cancel=lambda: True)


def test_wordsource_api():
    src = sn.WordSource.from_seed(5)
    assert "Philox" in src.description and src.seed == 5
    with pytest.raises(ValueError):
        sn.WordSource.from_seed(-1)
    with pytest.raises(TypeError):
        src.fill(np.zeros(3))
    buf = src.words(10)
    tail = buf[7:].copy()
    assert src.refill(buf, 7) == 0 and np.array_equal(buf[:3], tail)
    assert sn.WordSource.from_os().seed is None


def test_backends_for():
    assert sn.backends_for("numeric")[0] == sn.BACKEND_SNAPPED
    assert sn.BACKEND_OPENDP_LAPLACE in sn.backends_for("numeric")
    assert sn.backends_for("location") == [sn.BACKEND_PLANAR]
    assert sn.backends_for("categorical") == [sn.BACKEND_RR, sn.BACKEND_OPENDP_RR]
    with pytest.raises(ValueError):
        sn.backends_for("video")


# ------------------------------------------------------------------------------------- opendp backend


def test_opendp_laplace_ks_per_scale():
    n = 6000
    scales = np.array([0.5, 3.0])[np.arange(n) % 2]
    x = np.full(n, 10.0)
    y = opendp_noise.opendp_laplace(x, scales, 1.0)
    for s in (0.5, 3.0):
        assert stats.kstest((y[scales == s] - 10.0) / s, "laplace").pvalue > P_MIN


def test_opendp_measurement_certifies_epsilon():
    dp = opendp_noise._dp()
    for scale, sens in ((1.0, 1.0), (3.7, 0.5), (1e-3, 1e-3)):
        meas = opendp_noise._opendp_laplace_measurement(dp, 4, scale, sens, sn.laplace_grid_exponent(sens, scale))
        assert meas.map(sens) <= sens / scale
    for eps, k in ((1.0, 5), (0.01, 2), (3.0, 3)):
        assert opendp_noise._opendp_rr_measurement(dp, k, eps).map(1) <= eps


def test_opendp_rr_chisquare():
    n, k, eps = 3000, 4, 1.0
    out = opendp_noise.opendp_rr(np.zeros(n, dtype=int), eps, k)
    p = math.exp(eps) / (math.exp(eps) + k - 1)
    assert _chi2_p(np.bincount(out, minlength=k), [p] + [(1 - p) / (k - 1)] * (k - 1)) > P_MIN


# ----------------------------------------------------------------------------------------------- slow


@pytest.mark.slow
def test_snapped_laplace_ks_large():
    n = 200_000
    y = sn.secure_laplace(np.zeros(n), 1.7, 1.0, sn.WordSource.from_seed(2024))
    assert stats.kstest(y / 1.7, "laplace").pvalue > P_MIN
    # variance 2 b^2
    assert abs(np.var(y) / (2 * 1.7**2) - 1) < 0.03


@pytest.mark.slow
def test_planar_large_and_rr_large():
    n = 100_000
    out = sn.secure_planar(np.tile([52.0, 13.0], (n, 1)), 300.0, sn.WordSource.from_seed(5))
    dx, dy = _offsets_m(52.0, 13.0, out)
    assert stats.kstest(np.hypot(dx, dy), stats.gamma(a=2, scale=300.0).cdf).pvalue > P_MIN
    codes = sn.secure_rr(np.full(10**6, 2), 0.7, 6, sn.WordSource.from_seed(6))
    p = math.exp(0.7) / (math.exp(0.7) + 5)
    assert _chi2_p(np.bincount(codes, minlength=6), [(1 - p) / 5] * 2 + [p] + [(1 - p) / 5] * 3) > P_MIN


@pytest.mark.slow
def test_words_per_event_empirical_tail():
    w = _words(31, 3_000_000)
    pos = 0
    worst = 0
    for _ in range(20_000):
        p0 = pos
        _, _, pos = sn.secure_planar_one(10.0, 10.0, 100.0, w, pos)
        worst = max(worst, pos - p0)
    assert worst < sn.RESERVE_WORDS // 4
