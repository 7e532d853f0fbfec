"""Distribution tests for every mechanism and noise backend, through the *release* functions (issue 9).

tests/core/test_securenoise.py tests the export samplers one by one (KS/chi-square on ``secure_laplace``,
``secure_planar``, ``secure_rr``, ``opendp_*``). Here the same distributions are tested where a user meets
them: the preview path (:func:`compute_release` — the vectorised formulas and the scalar ``*_unit_one``
functions of :mod:`lmdk_gui.core.kernel.mechanisms` on :class:`UnitNoise`, including inside the Adaptive loop)
and the export path (:func:`export_release` writing a file that is read back, for each backend), with the
per-event budgets each scheme assigns. Noise normalised by its claimed scale must be standard: Laplace(1),
radius Gamma(2, 1) with a uniform angle, randomized response keeping with probability
``e^ε/(e^ε + k − 1)`` and spreading flips evenly.

Fixed seeds, n ≈ 5000 per distribution and rejection only below p = 1e-6 (OpenDP's convention): not flaky.
The opendp backend cannot be seeded; for it a failure has probability ~1e-6 per test.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine.pipeline import compute_release
from lmdk_gui.core.kernel import securenoise as sn
from lmdk_gui.core.kernel.guarantee import allocatable
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import AdaptiveParams, PrivacySettings
from lmdk_gui.core.publish.export import ExportOptions, export_release
from tests.keys import test_key

P_MIN = 1e-6
N = 5000
LANDMARKS = np.arange(100, 5000, 250)  # 20 landmarks → Uniform gives ε/21 everywhere


def _chi2_p(counts, probs) -> float:
    counts = np.asarray(counts, dtype=float)
    probs = np.asarray(probs, dtype=float)
    return float(stats.chisquare(counts, probs / probs.sum() * counts.sum()).pvalue)


def _keep_probability(eps: np.ndarray, k: int) -> np.ndarray:
    return 1.0 / (1.0 + (k - 1) * np.exp(-eps))


# ------------------------------------------------------------------------------------ unit noise
@pytest.mark.parametrize("seed", [0, 12345])
def test_unit_noise_streams(seed):
    u = UnitNoise(N, seed)
    assert stats.kstest(u.laplace, "laplace").pvalue > P_MIN
    assert stats.kstest(u.gamma, stats.gamma(a=2).cdf).pvalue > P_MIN
    assert stats.kstest(u.angle, stats.uniform(0, 2 * np.pi).cdf).pvalue > P_MIN
    for name in ("keep", "other", "sample"):
        assert stats.kstest(getattr(u, name), "uniform").pvalue > P_MIN, name
    # Streams are independent of one another (no shared draws): pairwise rank correlations are tiny.
    arrs = [u.laplace, u.gamma, u.angle, u.keep, u.other, u.sample]
    for i in range(len(arrs)):
        for j in range(i + 1, len(arrs)):
            assert abs(stats.spearmanr(arrs[i], arrs[j]).statistic) < 5 / math.sqrt(N)
    # Common random numbers: a stream does not depend on which other streams were drawn first.
    v = UnitNoise(N, seed)
    _ = v.gamma, v.keep
    np.testing.assert_array_equal(v.laplace, u.laplace)


# ----------------------------------------------------------------------------------------- numeric
def _numeric_series(seed: int = 0) -> Series:
    rng = np.random.default_rng(seed)
    return Series.from_arrays(np.round(rng.normal(50, 20, N), 3))  # varied inputs: noise must not depend


def _assert_laplace_by_budget(noise: np.ndarray, budgets: np.ndarray, sensitivity: float) -> None:
    """Noise of each fresh event divided by its claimed scale Δ/ε_t is Laplace(1); tested per budget value
    (each with enough events) and pooled."""
    fresh = budgets > 0
    z = noise[fresh] * budgets[fresh] / sensitivity
    assert stats.kstest(z, "laplace").pvalue > P_MIN
    for e in np.unique(budgets[fresh]):
        sel = budgets[fresh] == e
        if sel.sum() >= 500:
            assert stats.kstest(z[sel], "laplace").pvalue > P_MIN, e


@pytest.mark.parametrize("scheme", ["uniform", "skip", "adaptive", "event", "user"])
def test_preview_laplace(scheme):
    s = _numeric_series()
    st_ = PrivacySettings(epsilon=0.8, sensitivity=2.5, adaptive=AdaptiveParams(0.2, 0.2, 0.1))
    r = compute_release(s, LANDMARKS, st_, scheme, UnitNoise(N, 3))
    _assert_laplace_by_budget(r.values - s.values, r.budgets, 2.5)
    if scheme == "adaptive":
        assert len(np.unique(r.budgets[r.budgets > 0])) > 1  # the loop really varied ε_t


@pytest.mark.parametrize("scheme,backend", [("uniform", None), ("skip", None), ("adaptive", None),
                                            ("uniform", "opendp"), ("skip", "opendp")])
def test_export_laplace(tmp_path, scheme, backend):
    s = _numeric_series(1)
    st_ = PrivacySettings(epsilon=0.8, sensitivity=2.5, adaptive=AdaptiveParams(0.2, 0.2, 0.1))
    out = tmp_path / "r.csv"
    export_release(s, LANDMARKS, st_, out, ExportOptions(scheme, include_budget=True, backend=backend,
                                                         seed=None if backend else test_key(5), denoise=False))
    df = pd.read_csv(out)
    b = df["epsilon"].to_numpy()
    _assert_laplace_by_budget(df["value"].to_numpy() - s.values, b, 2.5)


# ---------------------------------------------------------------------------------------- location
def _location_series() -> Series:
    rng = np.random.default_rng(2)
    lat = rng.uniform(-60, 60, N)  # across the globe (away from the poles, where the projection degenerates)
    lon = rng.uniform(-179, 179, N)
    return Series.from_arrays(np.column_stack([lat, lon]), kind="location")


def _offsets_m(true: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(east, north) metres of each output from its true point, in the local equirectangular projection
    around the true point (the one both paths apply); longitudes unwrapped across ±180°."""
    dlon = (out[:, 1] - true[:, 1] + 180.0) % 360.0 - 180.0
    north = np.radians(out[:, 0] - true[:, 0]) * sn.R_EARTH_M
    east = np.radians(dlon) * sn.R_EARTH_M * np.cos(np.radians(true[:, 0]))
    return east, north


def _assert_planar_by_budget(true, out, budgets, radius) -> None:
    fresh = budgets > 0
    east, north = _offsets_m(true[fresh], out[fresh])
    r = np.hypot(east, north) * budgets[fresh] / radius  # radius / (r/ε_t) ~ Gamma(2, 1)
    assert stats.kstest(r, stats.gamma(a=2).cdf).pvalue > P_MIN
    ang = np.mod(np.arctan2(north, east), 2 * np.pi)
    assert stats.kstest(ang, stats.uniform(0, 2 * np.pi).cdf).pvalue > P_MIN


@pytest.mark.parametrize("scheme", ["uniform", "skip", "adaptive", "event"])
def test_preview_planar(scheme):
    s = _location_series()
    st_ = PrivacySettings(epsilon=2.0, radius_m=250.0, adaptive=AdaptiveParams(0.3, 0.1, 0.2))
    r = compute_release(s, LANDMARKS, st_, scheme, UnitNoise(N, 4))
    _assert_planar_by_budget(s.values, r.values, r.budgets, 250.0)


@pytest.mark.parametrize("scheme", ["uniform", "skip", "adaptive"])
def test_export_planar(tmp_path, scheme):
    s = _location_series()
    st_ = PrivacySettings(epsilon=2.0, radius_m=250.0, adaptive=AdaptiveParams(0.3, 0.1, 0.2))
    out = tmp_path / "r.csv"
    export_release(s, LANDMARKS, st_, out, ExportOptions(scheme, include_budget=True, seed=test_key(6), denoise=False))
    df = pd.read_csv(out)
    out_ll = df[["lat", "lon"]].to_numpy()
    assert np.all(np.rint(out_ll * 1e7) / 1e7 == out_ll)  # on the public grid
    _assert_planar_by_budget(s.values, out_ll, df["epsilon"].to_numpy(), 250.0)


# ------------------------------------------------------------------------------------- categorical
K = 5
CATS = tuple("abcde")


def _categorical_series() -> Series:
    rng = np.random.default_rng(3)
    return Series.from_arrays(rng.choice(list(CATS), N))


def _assert_rr(true: np.ndarray, out: np.ndarray, budgets: np.ndarray) -> None:
    """Keep/flip rates: per budget value with enough events a chi-square over the K offsets
    (o − x) mod K — offset 0 is 'kept', the K − 1 flips equally likely —, and over all fresh events a
    z-test of the number kept against Σ P_keep(ε_t) (for budgets that vary event by event)."""
    fresh = budgets > 0
    off = (out[fresh] - true[fresh]) % K
    b = budgets[fresh]
    for e in np.unique(b):
        sel = b == e
        if sel.sum() >= 500:
            p = float(_keep_probability(np.array(e), K))
            probs = [p] + [(1 - p) / (K - 1)] * (K - 1)
            assert _chi2_p(np.bincount(off[sel], minlength=K), probs) > P_MIN, e
    p_t = _keep_probability(b, K)
    kept = np.sum(off == 0)
    z = (kept - p_t.sum()) / math.sqrt(np.sum(p_t * (1 - p_t)))
    assert abs(z) < 5.0, z
    flips = off[off != 0]
    assert _chi2_p(np.bincount(flips, minlength=K)[1:], [1.0] * (K - 1)) > P_MIN


@pytest.mark.parametrize("scheme", ["uniform", "skip", "adaptive", "event"])
def test_preview_randomized_response(scheme):
    s = _categorical_series()
    st_ = PrivacySettings(epsilon=1.5, categories=CATS)
    r = compute_release(s, LANDMARKS, st_, scheme, UnitNoise(N, 8))
    _assert_rr(s.values, r.values, r.budgets)


@pytest.mark.parametrize("scheme,backend", [("uniform", None), ("skip", None), ("adaptive", None),
                                            ("uniform", "opendp")])
def test_export_randomized_response(tmp_path, scheme, backend):
    s = _categorical_series()
    st_ = PrivacySettings(epsilon=1.5, categories=CATS)
    out = tmp_path / "r.csv"
    export_release(s, LANDMARKS, st_, out, ExportOptions(scheme, include_budget=True, backend=backend,
                                                         seed=None if backend else test_key(9), denoise=False))
    df = pd.read_csv(out, dtype={"value": str}, keep_default_na=False)
    codes = np.searchsorted(CATS, df["value"].to_numpy())
    _assert_rr(s.values, codes, df["epsilon"].to_numpy())


# ------------------------------------------------------------------------------------------- scale
def test_export_noise_is_not_narrower_than_claimed(tmp_path):
    """The snapped sampler may only widen the noise (by ≤ 1e-6 relative), never narrow it: the empirical
    mean |noise| over 200k draws matches Δ/ε_t within its standard error."""
    n = 200_000
    s = Series.from_arrays(np.zeros(n))
    out = tmp_path / "r.csv"
    export_release(s, [], PrivacySettings(epsilon=0.5, sensitivity=3.0), out, ExportOptions("event", seed=test_key(4), denoise=False))
    noise = pd.read_csv(out)["value"].to_numpy()
    scale = 3.0 / allocatable(0.5, n)
    assert abs(np.mean(np.abs(noise)) / scale - 1.0) < 5 * (1 / math.sqrt(n))
