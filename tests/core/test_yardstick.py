"""The constant yardstick, "informative", and the spread of the R-run errors (issue 44)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lmdk_gui.core.analysis import advice, metrics
from lmdk_gui.core.analysis.metrics import constant_error, constant_release, run_stats, spread_text
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine.preview import Snapshot, compute_average
from lmdk_gui.core.kernel import dummies as dummies_mod
from lmdk_gui.core.kernel.dummies import DummySettings
from lmdk_gui.core.kernel.mechanisms import haversine
from lmdk_gui.core.kernel.settings import PrivacySettings


def test_numeric_yardstick_is_the_median_s_mean_absolute_error():
    s = Series.from_arrays(np.array([1.0, 2.0, 3.0, 4.0, 10.0]))
    assert float(constant_release(s)) == 3.0
    assert constant_error(s) == pytest.approx((2 + 1 + 0 + 1 + 7) / 5)  # 2.2
    assert constant_error(Series.from_arrays(np.full(7, 4.2))) == 0.0


def test_categorical_yardstick_is_the_mode_s_mismatch_rate():
    s = Series.from_arrays(["a", "b", "a", "c", "a"], kind="categorical")
    assert int(constant_release(s)) == 0  # "a"
    assert constant_error(s) == pytest.approx(2 / 5)


def test_location_yardstick_is_the_geometric_median_in_metres():
    # three points on a meridian: the geometric median is the middle one; mean distance = (d01 + 0 + d12) / 3
    pts = np.array([[52.0, -8.0], [52.001, -8.0], [52.010, -8.0]])
    s = Series.from_arrays(pts, kind="location")
    c = constant_release(s)
    assert c == pytest.approx([52.001, -8.0], abs=1e-7)
    d = haversine(pts, np.broadcast_to(pts[1], pts.shape))
    assert constant_error(s) == pytest.approx(d.sum() / 3, rel=1e-6)
    # four corners of a small square: the centre, not a corner (the coordinate-wise median is the centre too)
    sq = np.array([[52.0, -8.0], [52.0, -7.99], [52.01, -8.0], [52.01, -7.99]])
    centre = constant_release(Series.from_arrays(sq, kind="location"))
    assert centre == pytest.approx([52.005, -7.995], abs=1e-6)


def test_geometric_median_beats_the_coordinate_wise_one_when_they_differ():
    # an L-shaped track: the coordinate-wise median is no point's neighbour, the geometric one does better
    pts = np.array([[52.0, -8.0]] * 5 + [[52.02, -8.0], [52.0, -7.97], [52.02, -7.97]])
    s = Series.from_arrays(pts, kind="location")
    cw = np.median(pts, axis=0)
    mean_cw = float(np.mean(haversine(pts, np.broadcast_to(cw, pts.shape))))
    assert constant_error(s) <= mean_cw + 1e-9


def test_informative_is_clearly_below_the_yardstick():
    assert advice.INFORMATIVE_RATIO == 0.9
    assert advice.informative(0.9, 1.0) and not advice.informative(0.91, 1.0)
    assert not advice.informative(math.nan, 1.0)
    assert advice.informative(5.0, None) and advice.informative(5.0, math.nan)  # no yardstick judges nothing
    assert not advice.informative(0.0, 0.0)  # a constant series: the constant is perfect


def test_best_scheme_considers_only_informative_schemes():
    verdicts = {"uniform": True, "skip": True, "balanced": True}
    errors = {"uniform": 0.5, "skip": 0.95, "balanced": 0.3}
    assert advice.best_scheme(verdicts, errors, 1.0) == "balanced"
    assert advice.best_scheme(verdicts, errors, 0.6) == "balanced"  # uniform: 0.5 > 0.9 × 0.55
    assert advice.best_scheme(verdicts, errors, 0.3) is None  # 0.3 > 0.9 × 0.3
    assert advice.best_scheme(verdicts, errors) == "balanced"  # without a yardstick, as before


def test_run_stats_percentiles():
    st = run_stats([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, math.nan], [2.0, 4.0])
    assert st.p10 == pytest.approx(np.percentile(np.arange(1, 11), 10)) == pytest.approx(1.9)
    assert st.p90 == pytest.approx(9.1) and st.runs == 11
    assert st.p10_denoised == pytest.approx(2.2) and st.p90_denoised == pytest.approx(3.8)
    assert math.isnan(run_stats([]).p10)
    assert spread_text(0.206, 0.15, 0.3) == "0.206 (0.15–0.3)"
    assert spread_text(0.206, math.nan, math.nan) == "0.206" and spread_text(math.nan, 1, 2) == "—"


def test_average_spread_with_dummies_comes_from_fresh_draws_per_run(monkeypatch):
    """Each run of the R-run average draws its own dummy selection, as each export does: the runs' landmark
    sets differ, and the percentiles are taken over those runs."""
    rng = np.random.default_rng(3)
    s = Series.from_arrays(np.cumsum(rng.normal(0, 1, 400)))
    lm = np.arange(100, 140)
    drawn: list[np.ndarray] = []
    real = dummies_mod.select_for_release

    def spy(*a, **k):
        sel = real(*a, **k)
        drawn.append(sel.landmarks.copy())
        return sel

    monkeypatch.setattr(dummies_mod, "select_for_release", spy)
    snap = Snapshot(s, lm, PrivacySettings(epsilon=2.0, sensitivity=1.0), seed=5, runs=6,
                    dummies=DummySettings(generator="heuristic"))
    res = compute_average(snap)
    assert res is not None and len(drawn) == 6
    assert len({a.tobytes() for a in drawn}) > 1  # not one draw reused
    assert all(np.isin(lm, a).all() for a in drawn)  # each L' ⊇ L
    st = res.average["balanced"]
    assert st.runs == 6 and st.p10 <= st.p90 and st.p10 < st.p90


def test_release_estimate_is_the_mean_of_a_few_runs():
    s = Series.from_arrays(np.linspace(0, 10, 300))
    st = PrivacySettings(epsilon=1.0, sensitivity=1.0, denoise=False)
    est = advice.release_estimate(s, np.arange(0, 30), st, "uniform", runs=4)
    want = metrics.mae_over_runs(s, np.arange(0, 30), st, runs=4, schemes=("uniform",))["uniform"].mean
    assert est == want


def test_the_planner_targets_informative():
    from lmdk_gui.core.analysis import accuracy

    s = Series.from_arrays(np.array([1.0, 2.0, 3.0, 4.0, 10.0]))  # the median's MAE: 2.2
    assert accuracy.informative_target(s) == pytest.approx(0.9 * 2.2)
    assert accuracy.planner_target(None, s) == (pytest.approx(1.98), False)
    assert accuracy.planner_target(5.0, s) == (pytest.approx(1.98), True)  # the median meets 5
    assert accuracy.planner_target(1.0, s) == (1.0, False)
    assert accuracy.parse_target("informative", 9.0, accuracy.informative_target(s)) == pytest.approx(1.98)
    assert accuracy.informative_target(Series.from_arrays(np.full(4, 2.0))) is None
    with pytest.raises(ValueError, match="constant"):
        accuracy.parse_target("informative", 9.0, None)
