"""The "which scheme is best" rule and the noise warning (issue 14, guidance)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lmdk_gui.core.analysis.advice import best_scheme, data_range, errors_of, noise_warning
from lmdk_gui.core.analysis.metrics import RunStats
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.kernel.settings import PrivacySettings


def test_lowest_error_among_passing_schemes():
    verdicts = {"uniform": "", "skip": "", "adaptive": "", "event": "fails the check", "user": "", "balanced": ""}
    errors = {"uniform": 80.0, "skip": 0.99, "adaptive": 21.0, "event": 0.5, "user": 700.0, "balanced": 15.0}
    assert best_scheme(verdicts, errors) == "skip"  # event is lower but fails
    errors["skip"] = math.nan  # not computed: never advised
    assert best_scheme(verdicts, errors) == "balanced"


def test_ties_go_to_landmark_private_schemes_and_bools_work():
    # no landmarks: Uniform, Balanced and Event-level are the same release
    verdicts = {"event": True, "balanced": True, "uniform": True, "user": True}
    errors = {"event": 1.0, "balanced": 1.0, "uniform": 1.0 + 1e-13, "user": 9.0}
    assert best_scheme(verdicts, errors) == "uniform"
    assert best_scheme({"event": True, "user": True}, {"event": 1.0, "user": 1.0}) == "event"
    assert best_scheme({"skip": False}, {"skip": 1.0}) is None
    assert best_scheme({}, {}) is None


def test_errors_of_rows_runstats_and_a_denoised_field():
    rows = {"skip": {"mae": 2.0, "mae_denoised": 0.5}, "uniform": {"mae": 1.0, "mae_denoised": 0.9}}
    assert errors_of(rows) == {"skip": 2.0, "uniform": 1.0}
    assert errors_of(rows, "mae_denoised") == {"skip": 0.5, "uniform": 0.9}
    assert best_scheme({"skip": "", "uniform": ""}, errors_of(rows, "mae_denoised")) == "skip"
    assert errors_of({"skip": RunStats(3.0, 0.1, 20)}) == {"skip": 3.0}
    # a raw average never stands in for a denoised error
    assert math.isnan(errors_of({"skip": RunStats(3.0, 0.1, 20)}, "mae_denoised")["skip"])
    assert errors_of({"skip": {"mae_denoised": RunStats(0.7, 0.1, 20)}}, "mae_denoised") == {"skip": 0.7}


def test_noise_warning_against_the_constant_yardstick():
    s = Series.from_arrays(np.linspace(0.1, 5.5, 100))  # the median's MAE: a quarter of the range, 1.35
    plain = PrivacySettings()
    assert data_range(s, plain) == pytest.approx(5.4)  # (still the scale of a target in percent)
    assert noise_warning(1.0, s, plain, "kWh") == ""  # 1.0 ≤ 0.9 × 1.35
    msg = noise_warning(1.3, s, plain, "kWh", "skip")
    assert msg.startswith("this release (Skip) is no better than publishing a constant: expected error 1.3 kWh vs "
                          "1.36 kWh, publishing the series' median at every event — larger ε")
    assert noise_warning(82.4, s, plain.with_(bounds=(0.0, 100.0)), "kWh") != ""  # bounds change no yardstick
    assert noise_warning(math.nan, s, plain, "kWh") == ""


def test_location_and_categorical_ranges():
    loc = Series.from_arrays(np.array([[52.0, -8.0], [52.01, -8.0]]), kind="location")
    assert 1100 < data_range(loc, PrivacySettings()) < 1120  # 0.01° of latitude ≈ 1.11 km
    cat = Series.from_arrays(["a", "b", "c", "d"], kind="categorical")
    assert data_range(cat, PrivacySettings()) == 0.75  # a random guess among 4
    assert "no better than publishing a constant" in noise_warning(0.8, cat, PrivacySettings(), "mismatch rate")
