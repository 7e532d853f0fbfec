"""`lmdk export` and `lmdk compare` end to end on the real data copies (issue 2)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from lmdk_gui.core.kernel.guarantee import check_guarantee
from tests.cli.helpers import run
from tests.conftest import DATA
from tests.keys import test_key

HUE = str(DATA / "energy_hue_residential1_2013.csv")
GPS = str(DATA / "gps_bus_limerick_2019-02-18.csv")
CONTACTS = str(DATA / "contacts_highschool2012_person1672.csv")


def test_export_hue_with_budget_column(capsys, tmp_path):
    out = tmp_path / "hue.csv"
    code, stdout, err = run(capsys, "export", HUE, "-o", str(out), "--scheme", "adaptive", "--epsilon", "1",
                            "--duplicates", "first", "--landmark-rows", "0-99,5000-5100", "--include-budget")
    assert code == 0, err
    assert "reveal where the landmarks are" in err and "wrote" in stdout
    df = pd.read_csv(out)
    assert list(df.columns) == ["timestamp", "kwh", "epsilon"] and len(df) == 8759
    lm = np.r_[np.arange(0, 100), np.arange(5000, 5101)]
    assert check_guarantee(df["epsilon"].to_numpy(), lm, 1.0).holds
    side = json.loads((tmp_path / "hue.csv.json").read_text())
    assert side["guarantee_holds"] and side["input"]["rows"] == 8759 and side["seeded"] is False


def test_export_refusals_and_exit_codes(capsys, tmp_path):
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, "export", HUE, "-o", str(out), "--scheme", "uniform", "--epsilon", "1")
    assert code == 2 and "2013-11-03 01:00" in err and "duplicates" in err  # the repeated hour is named
    code, _, err = run(capsys, "export", HUE, "-o", str(out), "--scheme", "event", "--epsilon", "1",
                       "--duplicates", "first", "--landmark-rows", "3")
    assert code == 3 and not out.exists()
    code, _, err = run(capsys, "export", GPS, "-o", str(out), "--scheme", "skip", "--epsilon", "0")
    assert code == 2
    out.write_text("keep me")
    code, _, err = run(capsys, "export", GPS, "-o", str(out), "--scheme", "skip", "--epsilon", "1")
    assert code == 2 and "already exists" in err and out.read_text() == "keep me"
    code, _, _ = run(capsys, "export", GPS, "-o", str(out), "--scheme", "skip", "--epsilon", "1", "--force")
    assert code == 0 and out.read_text().startswith("timestamp,lat,lon")
    code, _, err = run(capsys, "export", GPS, "-o", GPS, "--scheme", "skip", "--epsilon", "1", "--force")
    assert code == 2 and "input" in err


def test_export_contacts_needs_a_value_column_then_works(capsys, tmp_path):
    out = tmp_path / "c.csv"
    code, _, err = run(capsys, "export", CONTACTS, "-o", str(out), "--scheme", "uniform", "--epsilon", "1",
                       "--kind", "categorical", "--duplicates", "first")
    assert code == 2 and "--value-col" in err and "i, j" in err
    code, _, err = run(capsys, "export", CONTACTS, "-o", str(out), "--scheme", "uniform", "--epsilon", "1",
                       "--kind", "categorical", "--duplicates", "first", "--value-col", "j",
                       "--categories-from-data")  # issue 17, finding 5: the data's list only on request
    assert code == 0, err
    df = pd.read_csv(out, dtype=str)
    assert list(df.columns) == ["timestamp", "j"] and df["timestamp"].iloc[0] == "1353304000"


def test_compare_table_and_json(capsys):
    code, out, err = run(capsys, "compare", HUE, "--duplicates", "first", "--landmark-rows", "0-999",
                         "--runs", "3")
    assert code == 0, err
    for label in ("Uniform", "Skip", "Adaptive", "Event-level", "User-level"):
        assert label in out
    assert "FAIL" in out.split("Event-level")[1].splitlines()[0]
    code, out, err = run(capsys, "compare", GPS, "--landmark-rows", "0-99", "--runs", "3", "--json")
    doc = json.loads(out)
    rows = {r["scheme"]: r for r in doc["schemes"]}
    assert doc["mae_unit"] == "m" and rows["user"]["guarantee_holds"] and not rows["event"]["guarantee_holds"]
    assert rows["skip"]["approximated_share"] > 0 and rows["uniform"]["runs"] == 3


def test_compare_json_reports_raw_and_denoised_errors(capsys):
    args = ("compare", GPS, "--landmark-rows", "0-99", "--runs", "2", "--json")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    rows = {r["scheme"]: r for r in json.loads(out)["schemes"]}
    for r in rows.values():  # every scheme keeps its raw error and gains the denoised one
        assert r["mae"] > 0 and r["mae_denoised"] > 0 and r["mae_denoised_std"] >= 0
    assert rows["skip"]["mae_denoised"] < rows["skip"]["mae"]
    code, out, err = run(capsys, *args, "--denoise", "off")
    rows_off = {r["scheme"]: r for r in json.loads(out)["schemes"]}
    assert "mae_denoised" not in rows_off["skip"] and rows_off["skip"]["mae"] == rows["skip"]["mae"]
    code, out, err = run(capsys, "compare", GPS, "--landmark-rows", "0-99", "--runs", "2", "--denoise", "on")
    assert code == 0 and "denoised (p10–p90) m" in out and "MAE (p10–p90)" not in out


def test_export_denoise_flag(capsys, tmp_path):
    """Default on (sidecar names the method); --no-denoise with the same seed writes the raw release, whose
    budgets and verdict are the same."""
    common = (GPS, "--scheme", "skip", "--epsilon", "1", "--landmark-rows", "0-99", "--seed", test_key(7),
              "--include-budget")
    paths = {}
    for flag in ("--denoise", "--no-denoise"):
        out = tmp_path / f"{flag}.csv"
        code, _, err = run(capsys, "export", *common, "-o", str(out), flag)
        assert code == 0, err
        paths[flag] = (pd.read_csv(out), json.loads((tmp_path / f"{flag}.csv.json").read_text()))
    (den, sd), (raw, sr) = paths["--denoise"], paths["--no-denoise"]
    assert sr["post_processing"] is None and sd["post_processing"]["method"].startswith("rts-")
    assert sd["guarantee_holds"] is sr["guarantee_holds"] is True and sd["landmark_sum"] == sr["landmark_sum"]
    np.testing.assert_array_equal(den["epsilon"], raw["epsilon"])
    assert not np.allclose(den["lat"], raw["lat"])
    assert (raw["lat"].iloc[:100] == raw["lat"].iloc[100]).all()  # raw Skip republishes at the landmarks
