"""``--resample`` / ``--aggregate`` (DESIGN §12) on lmdk compare, export, evaluate and batch."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.cli import build_parser
from lmdk_gui.cli.batch_cmd import options_from_args
from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.data.periods import parse_resolution, to_periods
from tests.cli.helpers import run
from tests.conftest import SAMPLES

HUE_JAN = str(SAMPLES / "energy_hue_2013_jan.csv")
GPS = str(SAMPLES / "gps_bus_limerick.csv")
PRIVACY = ("--epsilon", "1", "--sensitivity", "5", "--bounds", "0", "5")


@pytest.fixture(scope="module")
def days(tmp_path_factory):
    """60 days of hourly use, each hour either a fifth or 1.8 times the day's level, the level a slow wave: an
    hour says little beyond a constant, a day's total follows the wave."""
    rng = np.random.default_rng(3)
    level = 1.5 + 1.2 * np.sin(np.arange(60) * 2 * np.pi / 60)
    x = np.clip(np.repeat(level, 24) * rng.choice([0.2, 1.8], size=60 * 24), 0, 5)
    t = pd.date_range("2024-01-01", periods=60 * 24, freq="h")
    path = tmp_path_factory.mktemp("days") / "days.csv"
    pd.DataFrame({"timestamp": t.strftime("%Y-%m-%d %H:%M:%S"), "kwh": np.round(x, 3)}).to_csv(path, index=False)
    return str(path)


def _compare(capsys, *argv):
    code, out, err = run(capsys, "compare", *argv, *PRIVACY, "--runs", "10", "--json")
    assert code == 0, err
    return json.loads(out)


def test_hourly_is_not_informative_a_day_is(capsys, days):
    hourly = _compare(capsys, days, "--landmark-rows", "30,500")
    assert hourly["best"] is None and "resolution" not in hourly
    daily = _compare(capsys, days, "--landmark-rows", "30,500", "--resample", "1D")
    assert daily["best"] is not None
    assert daily["rows"] == 60 and daily["events"] == 1440 and daily["landmarks"] == 2
    assert daily["resolution"] == "1D" and daily["aggregate"] == "sum" and daily["mae_unit"] == "kWh/day"
    best = next(r for r in daily["schemes"] if r["scheme"] == daily["best"])
    assert best["guarantee_holds"] and best["mae_denoised"] < daily["constant_error"]


def test_sample_hourly_has_no_informative_scheme(capsys):
    """The bundled January: at ε = 1 and Δ = 5 kWh no hourly release beats publishing the median."""
    assert _compare(capsys, HUE_JAN, "--landmark-rows", "205,308")["best"] is None


def test_export_one_row_per_day(capsys, days, tmp_path):
    out = tmp_path / "d.csv"
    code, stdout, err = run(capsys, "export", days, "-o", str(out), "--scheme", "skip", *PRIVACY,
                            "--landmark-rows", "30,500", "--resample", "1D", "--aggregate", "mean")
    assert code == 0, err
    assert "(60 rows, skip" in stdout
    df = pd.read_csv(out)
    assert len(df) == 60 and df["timestamp"].iloc[1] == "2024-01-02 00:00:00"
    assert df["kwh"].between(0, 5).all()  # means, clipped to the events' bounds by the denoiser
    side = json.loads((tmp_path / "d.csv.json").read_text())
    assert (side["resolution"], side["aggregate"], side["bounds"]) == ("1D", "mean", [0.0, 5.0])
    assert "one value per day (the mean of its events)" in side["statement"]


def test_bad_resolutions_get_one_line(capsys, days):
    code, _, err = run(capsys, "compare", days, "--resample", "1ME")
    assert code == 2 and "resolution '1ME'" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "compare", GPS, "--resample", "1D")
    assert code == 2 and "numeric series only" in err and len(err.strip().splitlines()) == 1


def test_evaluate_on_days(capsys, days):
    code, out, err = run(capsys, "evaluate", days, *PRIVACY, "--resample", "1W", "--runs", "2", "--percentages",
                         "0,50", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["rows"] == 9 and doc["unit"] == "kWh/week"  # the landmark sets are sets of weeks
    assert [s["landmarks"] for s in doc["sets"]] == [0, 4]


def test_batch_options_carry_the_resolution():
    args = build_parser().parse_args(["batch", "in.csv", "-o", "out", "--id-col", "id", "--scheme", "skip",
                                      "--epsilon", "1", "--resample", "7D"])
    o = options_from_args(args)
    assert o.resolution == "7D" and o.aggregate == "sum"


def test_periods_are_calendar_bins():
    s = load_series(HUE_JAN)
    v = to_periods(s, np.array([205, 206, 700]), "1W", "sum", sensitivity=5.0, bounds=(0.0, 5.0))
    # 2013-01-01 is a Tuesday: the first week starts on Monday 2012-12-31 and holds 6 days
    assert str(v.series.times[0])[:10] == "2012-12-31" and v.series.periods.counts.tolist() == [144, 168, 168,
                                                                                                 168, 96]
    assert v.landmarks.tolist() == [1, 4] and v.sensitivity.tolist() == [5.0, 5.0 * 168, 5.0, 5.0, 5.0 * 96]
    assert np.isclose(v.series.values.sum(), np.clip(s.values, 0, 5).sum())
    assert parse_resolution("24h") == ("1D", "day") and parse_resolution("7D") == ("7D", "7 days")


def test_batch_releases_each_person_by_day(capsys, days, tmp_path):
    d = pd.read_csv(days).iloc[: 24 * 10]
    table = pd.concat([d.assign(id="a"), d.assign(id="b", kwh=d["kwh"] / 2)])
    src = tmp_path / "table.csv"
    table.to_csv(src, index=False)
    code, out, err = run(capsys, "batch", str(src), "-o", str(tmp_path / "out"), "--id-col", "id", "--scheme",
                         "skip", *PRIVACY, "--resample", "1D", "--aggregate", "mean", "--workers", "1")
    assert code == 0, err
    for person in ("a", "b"):
        assert len(pd.read_csv(tmp_path / "out" / f"{person}.csv")) == 10
        side = json.loads((tmp_path / "out" / f"{person}.csv.json").read_text())
        assert (side["resolution"], side["aggregate"]) == ("1D", "mean")
