"""Accuracy first: the smallest ε meeting a target error (issue 14)."""

from __future__ import annotations

import numpy as np
import pytest

from lmdk_gui.core.analysis.accuracy import (
    DEFAULT_GRID,
    ErrorCurves,
    epsilon_for_error,
    error_curves,
    log_grid,
    map_landmarks,
    parse_target,
    smallest_epsilon,
)
from lmdk_gui.core.analysis.denoise import Denoised
from lmdk_gui.core.analysis.metrics import mae_over_runs
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine import pipeline
from lmdk_gui.core.kernel.settings import PrivacySettings

STEP = DEFAULT_GRID[1] / DEFAULT_GRID[0]  # one grid step (a factor ≈ 1.49)


@pytest.fixture(scope="module")
def series():
    return Series.from_arrays(np.random.default_rng(3).normal(10.0, 2.0, 3000))


def test_default_grid():
    assert DEFAULT_GRID.size == 24 and DEFAULT_GRID[0] == pytest.approx(0.01) and DEFAULT_GRID[-1] == pytest.approx(100)
    with pytest.raises(ValueError):
        log_grid(1.0, 0.1)


@pytest.mark.parametrize("delta", [1.0, 2.5])
def test_event_level_matches_the_closed_form_within_a_grid_step(series, delta):
    """Event-level Laplace: MAE = Δ/ε, so the smallest ε meeting T is the first grid point ≥ Δ/T."""
    settings = PrivacySettings(sensitivity=delta)
    for target in (0.05, 0.4, 3.0):
        res = epsilon_for_error(series, [], settings, target, schemes=("event",), runs=20)
        exact = delta / target
        found = res.smallest["event"]
        assert found is not None
        assert exact / STEP <= found <= exact * STEP * 1.01, (target, found, exact)
    curve = res.curves.errors["event"]
    assert np.allclose(curve, delta / DEFAULT_GRID, rtol=0.03)  # 60 000 Laplace draws per point


def test_curves_are_monotone_in_epsilon(series):
    lm = np.r_[100:400, 2000:2100]
    curves = error_curves(series, lm, PrivacySettings(), schemes=("uniform", "balanced", "event", "skip",
                                                                  "adaptive"), runs=5)
    for s in ("uniform", "balanced", "event"):  # every event fresh: each |noise|·Δ/ε_t shrinks with ε
        assert np.all(np.diff(curves.errors[s]) < 0), s
    for s in ("skip", "adaptive"):  # republished events add an error floor; the trend still falls
        e = curves.errors[s]
        assert np.all(np.diff(e) <= 1e-9 * e[:-1] + 0.02 * e[:-1]), s
        assert e[-1] < e[0] / 50


def test_the_curve_at_the_current_epsilon_is_the_metrics_average(series):
    lm = np.arange(500, 560)
    settings = PrivacySettings(epsilon=float(DEFAULT_GRID[12]))
    curves = error_curves(series, lm, settings, runs=4, seed=7)
    avg = mae_over_runs(series, lm, settings, runs=4, seed=7, schemes=("uniform", "skip", "adaptive", "balanced"))
    for s, st in avg.items():
        assert curves.errors[s][12] == pytest.approx(st.mean, rel=1e-12), s


def test_smallest_epsilon_requires_the_target_to_hold_from_there_on():
    grid = np.array([0.1, 1.0, 10.0, 100.0])
    c = ErrorCurves(grid, {"a": np.array([5.0, 0.5, 2.0, 0.4]), "b": np.array([9.0, 8.0, 7.0, 6.0]),
                           "c": np.array([0.1, 0.1, 0.1, 0.1])}, runs=1)
    assert smallest_epsilon(c, 1.0) == {"a": 100.0, "b": None, "c": 0.1}
    with pytest.raises(ValueError):
        smallest_epsilon(c, 0.0)


def test_parse_target():
    assert parse_target("0.5", None) == 0.5
    assert parse_target("5%", 4.6) == pytest.approx(0.23)
    for bad, msg in (("abc", "not a number"), ("-1", "positive"), ("5%", "no range")):
        with pytest.raises(ValueError, match=msg):
            parse_target(bad, None)


def test_map_landmarks_keeps_share_and_positions():
    lm = np.r_[100:200, 900:950]  # 15 % of 1000
    up = map_landmarks(lm, 1000, 2000)
    assert up.size == 300 and up[0] == 200 and up[-1] == 1899
    down = map_landmarks(lm, 1000, 100)
    assert down.size == 15 and down.min() == 10
    assert map_landmarks([], 10, 20).size == 0


def test_denoised_field_needs_a_denoiser(series, monkeypatch):
    # every kind has a denoiser since issue 12 wired it in: take numeric's away to see the refusal
    monkeypatch.setattr(pipeline.KINDS["numeric"], "denoise", None)
    with pytest.raises(ValueError, match="no denoiser"):
        error_curves(series, [], PrivacySettings(), schemes=("event",), runs=1, error_field="mae_denoised")
    # a denoiser that returns the truth exactly: the denoised error is 0 at every ε
    monkeypatch.setattr(pipeline.KINDS["numeric"], "denoise",
                        lambda rel, st: Denoised(series.values.copy(), "truth"))
    c = error_curves(series, [], PrivacySettings(), schemes=("event",), runs=1, error_field="mae_denoised",
                     grid=[0.1, 1.0])
    assert np.all(c.errors["event"] == 0.0)
    with pytest.raises(ValueError, match="unknown error field"):
        error_curves(series, [], PrivacySettings(), runs=1, error_field="rmse")


def test_cancel_returns_none(series):
    assert error_curves(series, [], PrivacySettings(), runs=3, should_cancel=lambda: True) is None
