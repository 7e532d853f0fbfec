"""The Balanced scheme (issue 12 part 3): B*/k per landmark, ε − B* per regular event, B* = ε·k/(k + √(n−k))."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_gui import cli
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine.pipeline import compute_release
from lmdk_gui.core.engine.release import balanced_budgets, balanced_landmark_total, fixed_budgets
from lmdk_gui.core.kernel.guarantee import allocatable, check_guarantee
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import LANDMARK_SCHEMES, SCHEME_LABELS, PrivacySettings
from lmdk_gui.core.publish.export import ExportOptions, export_release
from tests.privacy.exact import exact_worst


def _total_scale(n: int, k: int, eps: float, b: float) -> float:
    """Σ_t 1/ε_t (the expected absolute Laplace error over Δ) when the landmarks share B equally."""
    return k * k / b + (n - k) / (eps - b)


def test_is_a_landmark_private_scheme_with_a_label():
    assert "balanced" in LANDMARK_SCHEMES and SCHEME_LABELS["balanced"] == "Balanced"


@pytest.mark.parametrize("n,k", [(2, 1), (5, 1), (5, 2), (8, 3), (10, 9), (12, 4), (30, 5), (40, 20)])
def test_closed_form_is_the_brute_force_minimum(n, k):
    eps = 1.0
    grid = np.linspace(0.0, eps, 200_001)[1:-1]
    vals = _total_scale(n, k, eps, grid)
    b_star = balanced_landmark_total(n, k, eps)
    assert b_star == pytest.approx(eps * k / (k + math.sqrt(n - k)))
    assert abs(grid[int(np.argmin(vals))] - b_star) <= 2 * (grid[1] - grid[0])
    assert _total_scale(n, k, eps, b_star) <= vals.min() * (1 + 1e-12)
    # and the mean error is Δ(k + √(n−k))²/(nε)
    assert _total_scale(n, k, eps, b_star) / n == pytest.approx((k + math.sqrt(n - k)) ** 2 / (n * eps))


@pytest.mark.parametrize("n,k", [(6, 2), (9, 4), (15, 3)])
def test_no_other_feasible_allocation_has_less_total_noise(n, k):
    """Brute force over unequal allocations too: any budgets meeting the landmark-sum constraint with
    equality (random landmark shares, the rest to the regular events) do no better than Balanced."""
    rng = np.random.default_rng(n * 100 + k)
    lm = np.arange(k)
    best = float(np.sum(1.0 / balanced_budgets(n, lm, 1.0)))
    for _ in range(20_000):
        shares = rng.dirichlet(np.ones(k)) * rng.uniform(0.01, 0.99)
        b = np.full(n, 1.0 - shares.sum())
        b[lm] = shares
        assert float(np.sum(1.0 / b)) >= best * (1 - 1e-12)


def test_edge_cases():
    eps_a = allocatable(1.0, 10)
    none = fixed_budgets("balanced", 10, np.zeros(0, np.int64), eps_a)
    np.testing.assert_array_equal(none, fixed_budgets("event", 10, np.zeros(0, np.int64), eps_a))
    every = fixed_budgets("balanced", 10, np.arange(10), eps_a)
    np.testing.assert_array_equal(every, np.full(10, eps_a / 10))
    assert check_guarantee(every, np.arange(10), 1.0).holds
    b = fixed_budgets("balanced", 1000, np.arange(0, 1000, 20), 1.0)
    assert b[0] == pytest.approx(50 / (50 + math.sqrt(950)) / 50) and b[1] == pytest.approx(1 - 50 / (50 + math.sqrt(950)))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(1, 300), eps=st.floats(1e-3, 50.0))
def test_guarantee_holds_exactly_for_any_landmark_set(data, n, eps):
    lm = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=n))), dtype=np.int64)
    b = fixed_budgets("balanced", n, lm, allocatable(eps, n))
    assert np.all(b > 0)
    assert check_guarantee(b, lm, eps).holds
    assert exact_worst(b, lm) <= eps


def test_preview_release_and_error():
    rng = np.random.default_rng(2)
    s = Series.from_arrays(rng.random(1000))
    lm = np.arange(0, 1000, 20)
    noise = UnitNoise(s.n, 1)
    rel = compute_release(s, lm, PrivacySettings(), "balanced", noise)
    uni = compute_release(s, lm, PrivacySettings(), "uniform", noise)
    assert rel.guarantee.holds and not rel.approximated.any()
    # The same unit noise, smaller scales: Balanced's error is far below Uniform's (6.5 vs 51 Δ/ε expected).
    err_b = np.abs(rel.values - s.values).mean()
    err_u = np.abs(uni.values - s.values).mean()
    assert err_b < err_u / 4


def test_export_of_balanced_passes_the_check(tmp_path):
    rng = np.random.default_rng(3)
    s = Series.from_arrays(np.round(rng.random(400) * 3, 3))
    out = tmp_path / "b.csv"
    lm = [1, 2, 3, 100, 399]
    res = export_release(s, lm, PrivacySettings(epsilon=0.5), out,
                         ExportOptions("balanced", include_budget=True, chunk_rows=128))
    assert res.guarantee.holds
    df = pd.read_csv(out)
    assert exact_worst(df["epsilon"].to_numpy(), lm) <= 0.5
    side = json.loads((tmp_path / "b.csv.json").read_text())
    assert side["scheme"] == "balanced" and side["guarantee_holds"] is True


def _input(tmp_path):
    src = tmp_path / "in.csv"
    pd.DataFrame({"timestamp": pd.date_range("2020-01-01", periods=200, freq="h").strftime("%Y-%m-%d %H:%M:%S"),
                  "kwh": np.linspace(0, 2, 200)}).to_csv(src, index=False)
    return src


def test_cli_export_compare_evaluate_balanced(tmp_path, capsys):
    src = _input(tmp_path)
    out = tmp_path / "r.csv"
    assert cli.main(["export", str(src), "-o", str(out), "--scheme", "balanced", "--epsilon", "1",
                     "--landmark-rows", "3,7,10-20"]) == 0
    assert json.loads((tmp_path / "r.csv.json").read_text())["scheme"] == "balanced"
    capsys.readouterr()
    assert cli.main(["compare", str(src), "--landmark-rows", "3,7,10-20", "--runs", "3", "--json"]) == 0
    rows = {r["scheme"]: r for r in json.loads(capsys.readouterr().out)["schemes"]}
    assert rows["balanced"]["guarantee_holds"] and rows["balanced"]["mae"] < rows["uniform"]["mae"]
    assert cli.main(["evaluate", str(src), "--percentages", "0,50", "--runs", "3", "--schemes", "balanced,skip",
                     "--csv", str(tmp_path / "e.csv")]) == 0
    df = pd.read_csv(tmp_path / "e.csv")
    assert set(df["scheme"]) == {"balanced", "skip"} and df["mae_mean"].notna().all()
