"""`lmdk compare`: the advised scheme and `--target-error` (issue 14)."""

from __future__ import annotations

import json

from tests.cli.helpers import run
from tests.conftest import SAMPLES

JAN = str(SAMPLES / "energy_hue_2013_jan.csv")


def test_json_names_the_best_passing_scheme(capsys):
    # --denoise off: the raw release is what the export publishes, so the raw MAE ranks (denoised: below)
    code, out, err = run(capsys, "compare", JAN, "--landmark-rows", "100-180", "--runs", "3", "--json",
                         "--denoise", "off", "--epsilon", "5")
    assert code == 0, err
    doc = json.loads(out)
    rows = {r["scheme"]: r for r in doc["schemes"]}
    passing = {s: r["mae"] for s, r in rows.items() if r["guarantee_holds"] and r["informative"]}
    assert doc["best"] == min(passing, key=passing.get) == "skip"
    assert not rows["event"]["guarantee_holds"] and rows["event"]["mae"] < rows["uniform"]["mae"]


def test_table_marks_the_best_and_shows_the_yardstick(capsys):
    code, out, err = run(capsys, "compare", JAN, "--landmark-rows", "100-180", "--runs", "2", "--epsilon", "5")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].split()[-1] == "best"
    marked = [ln for ln in lines if ln.rstrip().endswith("◀")]
    assert len(marked) == 1
    best = marked[0].split()[0]
    assert f"best: {best}" in out
    assert "constant yardstick: 0.573 kWh, publishing the series' median at every event" in out


def test_table_says_when_no_scheme_beats_a_constant(capsys):
    code, out, err = run(capsys, "compare", JAN, "--landmark-rows", "0-743", "--runs", "2", "--epsilon", "0.01")
    assert code == 0, err
    assert not [ln for ln in out.splitlines() if ln.rstrip().endswith("◀")]
    assert "best: none. No scheme is informative" in out and "no better than publishing one constant" in out


def test_target_error_table_text_and_json(capsys):
    code, out, err = run(capsys, "compare", JAN, "--landmark-rows", "100-180", "--runs", "3",
                         "--target-error", "10%", "--denoise", "off")
    assert code == 0, err
    tail = out.split("smallest ε meeting an expected error ≤ ")[1]
    assert "not itself private" in tail
    assert "Uniform      not reached ≤ 100" in tail
    assert "Skip         ε = 2.72" in tail  # MAE ≤ 0.46 kWh (10 % of 4.6 kWh)
    code, out, err = run(capsys, "compare", JAN, "--landmark-rows", "100-180", "--runs", "3",
                         "--target-error", "0.46", "--json", "--denoise", "off")
    t = json.loads(out)["target_error"]
    assert t["target"] == 0.46 and len(t["grid"]) == 24 and t["smallest"]["uniform"] is None
    assert t["smallest"]["skip"] > 1 and all(e <= 0.46 for e in t["errors"]["skip"][14:])


def test_with_denoising_best_and_target_rank_by_the_denoised_error(capsys):
    """lmdk export denoises by default, so compare's default advice ranks by what it publishes: mae_denoised."""
    code, out, err = run(capsys, "compare", JAN, "--landmark-rows", "100-180", "--runs", "3", "--json",
                         "--target-error", "0.46", "--epsilon", "5")
    assert code == 0, err
    doc = json.loads(out)
    rows = {r["scheme"]: r for r in doc["schemes"]}
    passing = {s: r["mae_denoised"] for s, r in rows.items() if r["guarantee_holds"] and r["informative"]}
    assert doc["best_error_field"] == "mae_denoised"
    assert doc["best"] == min(passing, key=passing.get)
    t = doc["target_error"]
    assert t["error_field"] == "mae_denoised"
    code, out_raw, _ = run(capsys, "compare", JAN, "--landmark-rows", "100-180", "--runs", "3", "--json",
                           "--target-error", "0.46", "--denoise", "off")
    raw = json.loads(out_raw)
    assert raw["best_error_field"] == "mae" and raw["target_error"]["error_field"] == "mae"
    # denoising lowers Uniform's error at every grid ε (the same runs, post-processed)
    assert all(d < r for d, r in zip(t["errors"]["uniform"], raw["target_error"]["errors"]["uniform"], strict=True))
    code, out, _ = run(capsys, "compare", JAN, "--landmark-rows", "100-180", "--runs", "3", "--target-error", "10%",
                       "--epsilon", "5")
    assert "smallest ε meeting an expected error ≤ " in out and "of the denoised release" in out
    assert "lowest denoised MAE" in out


def test_bad_target_is_one_line(capsys):
    code, out, err = run(capsys, "compare", JAN, "--runs", "1", "--target-error", "lots")
    assert code != 0
    assert err.strip().splitlines()[0].startswith("lmdk: error: --target-error: target error 'lots'")
