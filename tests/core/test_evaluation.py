"""The utility evaluation (issue 8): numbers, the 0 %/100 % anchors, landmark sets, CSV, progress, cancel."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from lmdk_gui.core.analysis.correlation import synthetic_landmarks
from lmdk_gui.core.analysis.evaluation import (
    CSV_COLUMNS,
    PLACEMENTS,
    evaluate,
    fmt_mean_std,
    landmark_sets,
    parse_percentages,
)
from lmdk_gui.core.analysis.metrics import mae
from lmdk_gui.core.analysis.suggestions import rule_for_percentage
from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine.pipeline import compute_release
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, PrivacySettings
from tests.conftest import SAMPLES


def _slice(series: Series, n: int) -> Series:
    return Series(series.kind, series.times[:n], series.values[:n], categories=series.categories,
                  name=series.name, unit=series.unit)


@pytest.fixture(scope="module")
def energy() -> Series:
    return load_series(SAMPLES / "energy_hue_2013_jan.csv")


@pytest.fixture(scope="module")
def small_series() -> dict[str, Series]:
    energy = load_series(SAMPLES / "energy_hue_2013_jan.csv")
    gps = load_series(SAMPLES / "gps_bus_limerick.csv")
    contacts = load_series(SAMPLES / "contacts_person1672.csv", kind="categorical", duplicates="first")
    return {"numeric": _slice(energy, 150), "location": _slice(gps, 150), "categorical": _slice(contacts, 150)}


def direct_loop(series, settings, rows, runs, seed):
    """The definition: compute_release + mae for every run, scheme by scheme."""
    out = {}
    for s in ALL_SCHEMES:
        vals = np.array([mae(series, compute_release(series, rows, settings, s, UnitNoise(series.n, seed + 1 + r)),
                             settings) for r in range(runs)])
        ok = ~np.isnan(vals)
        out[s] = (vals[ok].mean() if ok.any() else np.nan, vals[ok].std() if ok.any() else np.nan, int(ok.sum()))
    return out


@pytest.mark.parametrize("kind,settings", [
    ("numeric", PrivacySettings()),
    ("numeric", PrivacySettings(epsilon=0.5, sensitivity=0.3, bounds=(0.2, 2.0))),
    ("location", PrivacySettings(radius_m=50.0)),
    ("categorical", PrivacySettings(epsilon=2.0)),
])
@pytest.mark.parametrize("placement", ["skewed", "uniform"])
def test_matches_direct_loop(small_series, kind, settings, placement):
    series = small_series[kind]
    if kind == "categorical" and settings.bounds is None and placement == "uniform":
        settings = settings.with_(categories=tuple(sorted(series.categories)))  # a public list: fallback code 0
    res = evaluate(series, settings, [0, 10, 55, 100], placement=placement, runs=6, seed=4)
    assert res.runs_done == 6 and not res.cancelled
    assert res.schemes == ALL_SCHEMES
    for i, ls in enumerate(res.sets):
        ref = direct_loop(series, settings, ls.rows, 6, 4)
        for j, s in enumerate(ALL_SCHEMES):
            m, sd, k = ref[s]
            assert res.runs[i, j] == k
            if np.isnan(m):
                assert np.isnan(res.mean[i, j])
                continue
            assert res.mean[i, j] == pytest.approx(m, rel=1e-10, abs=1e-12), (ls.target, s)
            assert res.std[i, j] == pytest.approx(sd, rel=1e-8, abs=1e-10), (ls.target, s)


def test_zero_percent_is_event_level_and_full_uniform_is_user_level(energy):
    res = evaluate(energy, PrivacySettings(), [0, 100], runs=12, seed=2)
    per = res.per_run
    u, sk, ev, us = (res.schemes.index(s) for s in ("uniform", "skip", "event", "user"))
    # 0 % landmarks: Uniform and Skip have event-level's budgets, so on common random numbers the same error
    assert np.array_equal(per[0, u], per[0, ev]) and np.array_equal(per[0, sk], per[0, ev])
    # 100 %: Uniform spends ε/(n+1), user-level ε/n; the Laplace error scales with 1/ε_t exactly
    n = energy.n
    np.testing.assert_allclose(per[1, u], per[1, us] * (n + 1) / n, rtol=1e-10)
    # event and user-level do not depend on the landmarks
    assert np.array_equal(per[0, ev], per[1, ev]) and np.array_equal(per[0, us], per[1, us])


def test_skip_with_everything_approximated(energy):
    # nothing fresh and no public fallback: no value at all, and the CSV says so
    res = evaluate(energy, PrivacySettings(), [100], runs=3, schemes=("skip", "event"))
    assert np.isnan(res.mean[0, 0]) and res.runs[0, 0] == 0 and res.runs[0, 1] == 3
    assert "100,skip,nan,nan,0" in res.csv_text()
    assert fmt_mean_std(res.mean[0, 0], res.std[0, 0]) == "no release"
    # with public bounds, the midpoint is published everywhere
    st = PrivacySettings(bounds=(0.0, 6.0))
    res = evaluate(energy, st, [100], runs=3, schemes=("skip",))
    assert res.mean[0, 0] == pytest.approx(float(np.mean(np.abs(3.0 - energy.values))), rel=1e-12)
    assert res.std[0, 0] == pytest.approx(0.0, abs=1e-12)


def test_landmark_sets_from_rules_and_placements(energy):
    sets = landmark_sets(energy, [0, 20, 40], rule="threshold", vary="above")
    for ls in sets:
        _, rows = rule_for_percentage(energy, "threshold", ls.target, vary="above")
        assert np.array_equal(ls.rows, rows)
        assert ls.params["rule"] == "threshold" and "above" in ls.params
    assert [round(s.percentage) for s in sets] == [0, 20, 40]
    for p in PLACEMENTS:
        sets = landmark_sets(energy, [10, 30, 60], placement=p, seed=5)
        assert np.array_equal(sets[1].rows, synthetic_landmarks(energy.n, 0.3, p, 5))
        # one seed for every percentage: the sets nest
        assert set(sets[0].rows) <= set(sets[1].rows) <= set(sets[2].rows)
    with pytest.raises(ValueError, match="either a placement or a rule"):
        landmark_sets(energy, [10], placement="uniform", rule="threshold")
    with pytest.raises(ValueError, match="location"):
        landmark_sets(energy, [10], rule="stay")
    with pytest.raises(ValueError, match="placement"):
        landmark_sets(energy, [10], placement="diagonal")


def test_rule_evaluation_records_actual_percentages():
    contacts = load_series(SAMPLES / "contacts_person1672.csv", kind="categorical", duplicates="first")
    res = evaluate(contacts, PrivacySettings(), [0, 20, 100], rule="category", runs=2)
    assert res.percentages == (0.0, 20.0, 100.0)
    assert res.actual[0] == 0.0 and res.actual[2] == 100.0
    assert res.actual[1] != 20.0  # two contacts hold ~89 % of the events: 20 % cannot be reached exactly
    assert res.to_dict()["sets"][1]["actual_percentage"] == res.actual[1]
    assert "category membership rule" in res.source


def test_csv_format(energy, tmp_path):
    res = evaluate(energy, PrivacySettings(), [0, 50], runs=4, seed=1)
    text = res.csv_text()
    assert text.splitlines()[0] == "percentage,scheme,mae_mean,mae_std,runs"
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert len(rows) == 2 * len(ALL_SCHEMES)
    m = len(ALL_SCHEMES)  # issue 12 added Balanced: one row per scheme, however many there are
    assert [r["percentage"] for r in rows[:m]] == ["0"] * m and rows[m]["percentage"] == "50"
    assert [r["scheme"] for r in rows[:m]] == list(ALL_SCHEMES)
    for r in rows:
        i = res.percentages.index(float(r["percentage"]))
        j = res.schemes.index(r["scheme"])
        assert float(r["mae_mean"]) == res.mean[i, j]  # full precision
        assert float(r["mae_std"]) == res.std[i, j]
        assert int(r["runs"]) == 4
    out = tmp_path / "eval.csv"
    out.write_text("old")
    res.write_csv(out)
    assert out.read_text() == text
    assert [p.name for p in tmp_path.iterdir()] == ["eval.csv"]  # no temporary file left behind


def test_progress_and_cancel(energy):
    seen = []
    res = evaluate(energy, PrivacySettings(), [0, 50, 100], runs=20, progress=lambda d, t: seen.append((d, t)))
    done = [d for d, _ in seen]
    assert done == sorted(done) and seen[-1][0] == seen[-1][1]
    calls = {"n": 0}

    def cancel_after_some() -> bool:
        calls["n"] += 1
        return calls["n"] > 8

    res = evaluate(energy, PrivacySettings(), [0, 50, 100], runs=100, should_cancel=cancel_after_some)
    assert res.cancelled and 0 < res.runs_done < 100
    assert res.per_run.shape[2] == res.runs_done
    assert np.all(res.runs <= res.runs_done)
    # cancelled while building the landmark sets: nothing computed
    res = evaluate(energy, PrivacySettings(), [10, 20], rule="threshold", runs=5, should_cancel=lambda: True)
    assert res.cancelled and res.runs_done == 0 and res.sets == ()


def test_threads_give_the_same_numbers(energy):
    a = evaluate(energy, PrivacySettings(), [0, 30], runs=20, seed=9)
    b = evaluate(energy, PrivacySettings(), [0, 30], runs=20, seed=9, workers=2)
    assert np.array_equal(a.per_run, b.per_run)


def test_bad_arguments(energy):
    with pytest.raises(ValueError, match="runs"):
        evaluate(energy, PrivacySettings(), [0], runs=0)
    with pytest.raises(ValueError, match="scheme"):
        evaluate(energy, PrivacySettings(), [0], schemes=("uniform", "nope"))
    assert parse_percentages("40, 0,20%,20") == (0.0, 20.0, 40.0)
    for bad in ("", "a,b", "120", "-5"):
        with pytest.raises(ValueError):
            parse_percentages(bad)
