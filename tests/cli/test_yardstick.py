"""`lmdk compare` and `lmdk export` against the constant yardstick, with every error's spread (issue 44)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.cli.helpers import run
from tests.conftest import SAMPLES

JAN = str(SAMPLES / "energy_hue_2013_jan.csv")


@pytest.fixture
def flat_csv(tmp_path):
    """An hourly series that barely moves (1.0 ± 0.05 kWh): at ε = 1 every release is noisier than its median."""
    rng = np.random.default_rng(7)
    vals = 1.0 + rng.uniform(-0.05, 0.05, 240)
    path = tmp_path / "flat.csv"
    rows = [f"2024-01-{1 + h // 24:02d} {h % 24:02d}:00:00,{v:.4f}" for h, v in enumerate(vals)]
    path.write_text("timestamp,kwh\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return str(path), vals


def test_compare_json_has_the_yardstick_informative_flags_and_spreads(capsys):
    code, out, err = run(capsys, "compare", JAN, "--landmark-rows", "100-180", "--runs", "6", "--epsilon", "5",
                         "--json")
    assert code == 0, err
    doc = json.loads(out)
    vals = np.loadtxt(JAN, delimiter=",", skiprows=1, usecols=1)
    assert doc["constant_error"] == pytest.approx(np.mean(np.abs(vals - np.median(vals))))
    rows = {r["scheme"]: r for r in doc["schemes"]}
    for r in rows.values():
        for f in ("mae", "mae_denoised"):
            lo, mean, hi = r[f"{f}_p10"], r[f], r[f"{f}_p90"]
            assert lo <= mean <= hi  # (not a law for any sample, but for these seeded runs of steady errors)
            assert hi > lo  # six different draws: a spread, not one number repeated
        assert r["informative"] == (r["mae_denoised"] <= 0.9 * doc["constant_error"])
    assert rows["skip"]["informative"] and not rows["user"]["informative"]
    assert doc["best"] == "skip"


def test_compare_best_is_null_when_no_scheme_beats_a_constant(capsys, flat_csv):
    path, _ = flat_csv
    code, out, err = run(capsys, "compare", path, "--landmark-rows", "10-40", "--runs", "3", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["best"] is None
    assert all(r["informative"] is False for r in doc["schemes"])
    assert any(r["guarantee_holds"] for r in doc["schemes"])  # not for want of a passing scheme


def test_compare_with_dummies_reports_the_spread_of_fresh_draws(capsys):
    code, out, err = run(capsys, "compare", JAN, "--landmark-rows", "100-180", "--runs", "5", "--epsilon", "5",
                         "--dummies", "heuristic", "--json")
    assert code == 0, err
    for r in json.loads(out)["schemes"]:
        d = r["with_dummies"]
        assert d["mae_p10"] <= d["mae"] <= d["mae_p90"]
        assert "informative" in d


def test_export_of_an_uninformative_release_says_so_on_stderr(capsys, flat_csv, tmp_path):
    path, _ = flat_csv
    out = tmp_path / "rel.csv"
    code, stdout, err = run(capsys, "export", path, "-o", str(out), "--scheme", "uniform", "--epsilon", "1",
                            "--landmark-rows", "10-40")
    assert code == 0, err
    assert out.exists() and "wrote" in stdout  # a warning, not a refusal
    assert "no better than publishing a constant" in err


def test_export_of_an_informative_release_says_nothing_of_a_constant(capsys, tmp_path):
    out = tmp_path / "rel.csv"
    code, _, err = run(capsys, "export", JAN, "-o", str(out), "--scheme", "skip", "--epsilon", "5",
                       "--landmark-rows", "100-180")
    assert code == 0, err
    assert "no better than publishing a constant" not in err


def test_compare_target_error_plans_for_informative(capsys):
    code, out, err = run(capsys, "compare", JAN, "--landmark-rows", "100-180", "--runs", "2", "--json",
                         "--target-error", "informative")
    assert code == 0, err
    doc = json.loads(out)
    t = doc["target_error"]
    assert t["target"] == pytest.approx(0.9 * doc["constant_error"]) == t["informative_target"]
    code, out, err = run(capsys, "compare", JAN, "--landmark-rows", "100-180", "--runs", "2",
                         "--target-error", "20%")  # 0.92 kWh: the median (0.573) meets it
    assert code == 0, err
    assert "is met by publishing one constant: planning for 0.516 kWh" in out
