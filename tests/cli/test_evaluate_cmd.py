"""``lmdk evaluate`` end to end on the bundled samples (issue 8)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.analysis.evaluation import evaluate
from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, PrivacySettings
from tests.cli.helpers import run
from tests.conftest import SAMPLES

ENERGY = str(SAMPLES / "energy_hue_2013_jan.csv")
GPS = str(SAMPLES / "gps_bus_limerick.csv")
CONTACTS = str(SAMPLES / "contacts_person1672.csv")


def test_csv_and_plot(capsys, tmp_path):
    out_csv, out_png = tmp_path / "eval.csv", tmp_path / "eval.png"
    code, out, err = run(capsys, "evaluate", ENERGY, "--percentages", "0,20,40,60,80,100", "--rule", "threshold",
                         "--runs", "5", "--seed", "2", "--csv", str(out_csv), "--plot", str(out_png),
                         "--size", "900x560")
    assert code == 0, err
    assert "744 events" in out and "value threshold rule" in out and "MAE (kWh) over 5 runs" in out
    for label in ("Uniform", "Skip", "Adaptive", "Event-level", "User-level", "no release"):
        assert label in out
    df = pd.read_csv(out_csv)
    assert list(df.columns) == ["percentage", "scheme", "mae_mean", "mae_std", "runs"]
    m = len(ALL_SCHEMES)  # issue 12 added Balanced
    assert len(df) == 6 * m and list(df["scheme"][:m]) == list(ALL_SCHEMES)
    assert sorted(set(df["percentage"])) == [0, 20, 40, 60, 80, 100]
    # the same numbers through the core
    series = load_series(ENERGY)
    res = evaluate(series, PrivacySettings(), [0, 20, 40, 60, 80, 100], rule="threshold", runs=5, seed=2)
    np.testing.assert_array_equal(df["mae_mean"].to_numpy(), res.mean.ravel())
    assert np.isnan(df.query("percentage == 100 and scheme == 'skip'")["mae_mean"]).all()
    # a real picture: PNG signature, the requested size, not a blank image
    data = out_png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 15_000
    from PySide6.QtGui import QImage

    img = QImage(str(out_png))
    assert (img.width(), img.height()) == (900, 560)
    colours = {img.pixelColor(x, y).name() for x in range(0, 900, 9) for y in range(0, 560, 7)}
    from lmdk_gui.ui.views.theme import SCHEME_COLORS

    hexes = {s: "#{:02x}{:02x}{:02x}".format(*SCHEME_COLORS[s]) for s in ("uniform", "skip")}
    assert hexes["uniform"] in colours and hexes["skip"] in colours  # Uniform and Skip bars are drawn


def test_placement_json_location(capsys):
    code, out, err = run(capsys, "evaluate", GPS, "--placement", "bimodal", "--percentages", "0,50",
                         "--runs", "3", "--schemes", "uniform,skip", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "location" and doc["unit"] == "m" and doc["runs_done"] == 3
    assert doc["landmarks_from"] == "bimodal placement"
    assert [r["scheme"] for r in doc["results"]] == ["uniform", "skip", "uniform", "skip"]
    assert doc["sets"][1]["landmarks"] == round(0.5 * doc["rows"])


def test_categorical_rule_and_log_plot(capsys, tmp_path):
    png = tmp_path / "c.png"
    code, out, err = run(capsys, "evaluate", CONTACTS, "--kind", "categorical", "--duplicates", "first",
                         "--rule", "category", "--percentages", "0,40", "--runs", "2", "--plot", str(png), "--log")
    assert code == 0, err
    assert "(got 44.2%)" in out and png.stat().st_size > 10_000


def test_stay_options(capsys):
    code, out, err = run(capsys, "evaluate", GPS, "--rule", "stay", "--vary", "duration", "--distance", "50",
                         "--percentages", "0,40", "--runs", "2", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["sets"][1]["params"]["distance_m"] == 50 and "duration_min" in doc["sets"][1]["params"]


@pytest.mark.parametrize("argv,message", [
    (["--rule", "stay"], "needs a location series"),
    (["--rule", "threshold", "--vary", "distance"], "--vary distance applies to --rule stay"),
    (["--rule", "threshold", "--duration", "5"], "--duration applies to --rule stay"),
    (["--percentages", "10,120"], "between 0 and 100"),
    (["--runs", "0"], "at least 1 run"),
    (["--schemes", "uniform,bogus"], "unknown scheme"),
    (["--placement", "uniform", "--rule", "threshold"], "not allowed with"),
    (["--plot", "x.png", "--size", "big"], "size must look like"),
])
def test_bad_options(capsys, argv, message):
    code, out, err = run(capsys, "evaluate", ENERGY, *argv)
    assert code == 2 and message in err and out == ""


def test_denoise_both_adds_columns_equal_to_the_preview_path(capsys, tmp_path):
    """--denoise both: two more CSV columns; each is the denoised MAE the preview's average reports on that
    landmark set (the same release, the same denoiser), and the raw columns do not change."""
    from lmdk_gui.core.analysis.metrics import mae_over_runs

    out_csv = tmp_path / "e.csv"
    args = ("evaluate", GPS, "--percentages", "0,40", "--rule", "stay", "--runs", "2", "--seed", "1",
            "--schemes", "skip,adaptive,balanced", "--denoise", "both", "--csv", str(out_csv))
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "denoised (post-processing" in out
    df = pd.read_csv(out_csv)
    assert list(df.columns) == ["percentage", "scheme", "mae_mean", "mae_std", "runs", "mae_denoised_mean",
                                "mae_denoised_std"]
    series = load_series(GPS)
    st = PrivacySettings()
    res = evaluate(series, st, [0, 40], rule="stay", runs=2, seed=1, schemes=("skip", "adaptive", "balanced"),
                   denoise=True)
    plain = evaluate(series, st, [0, 40], rule="stay", runs=2, seed=1, schemes=("skip", "adaptive", "balanced"))
    np.testing.assert_array_equal(res.mean, plain.mean)
    np.testing.assert_array_equal(df["mae_denoised_mean"].to_numpy(), res.mean_denoised.ravel())
    ref = mae_over_runs(series, res.sets[1].rows, st, runs=2, seed=1, schemes=("skip", "adaptive", "balanced"),
                        denoise=True)
    for j, s in enumerate(res.schemes):
        assert res.mean_denoised[1, j] == pytest.approx(ref[s].mean_denoised, rel=1e-9)
    # with no landmarks every scheme is the event-level release, which smoothing improves (with a long stay
    # block of landmarks it need not: Skip republishes one point there and the smoother cannot bridge it)
    assert (res.mean_denoised[0] < res.mean[0]).all()
