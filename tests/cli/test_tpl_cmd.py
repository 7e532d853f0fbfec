"""``lmdk tpl`` end to end on a bundled sample (issue 7)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.analysis.correlation import CorrelationModel, landmark_tpl
from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.engine.pipeline import compute_all
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, PrivacySettings
from tests.cli.helpers import run
from tests.conftest import SAMPLES

ENERGY = str(SAMPLES / "energy_hue_2013_jan.csv")
LANDMARKS = ["--landmark-rows", "10-20,300,500-505"]


def test_table(capsys):
    code, out, err = run(capsys, "tpl", ENERGY, *LANDMARKS, "--s", "0.1")
    assert code == 0 and err == ""
    assert "744 events, 18 landmarks" in out and "s = 0.1" in out
    for label in ("Uniform", "Skip", "Adaptive", "Event-level", "User-level"):
        assert label in out


def test_json_matches_core_and_curve(capsys, tmp_path):
    curve = tmp_path / "curve.csv"
    code, out, err = run(capsys, "tpl", ENERGY, *LANDMARKS, "--s", "0.01", "--seed", "3", "--epsilon", "2",
                         "--json", "--curve", str(curve))
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["correlation"]["s"] == 0.01 and doc["correlation"]["states"] == 2
    assert [r["scheme"] for r in doc["schemes"]] == list(ALL_SCHEMES)
    # the same computation through the core API
    series = load_series(ENERGY)
    lm = np.r_[10:21, 300, 500:506]
    rel = compute_all(series, lm, PrivacySettings(epsilon=2.0), UnitNoise(series.n, 3))
    model = CorrelationModel.smoothed(0.01)
    df = pd.read_csv(curve)
    assert list(df.columns) == ["row", *ALL_SCHEMES]
    np.testing.assert_array_equal(df["row"], np.arange(series.n))
    for r in doc["schemes"]:
        c = landmark_tpl(rel[r["scheme"]].budgets, lm, model)
        assert r["max_tpl"] == pytest.approx(c.max(), rel=1e-12)
        assert r["max_tpl_row"] == int(np.argmax(c))
        assert r["epsilon"] == 2.0
        np.testing.assert_allclose(df[r["scheme"]], c, rtol=1e-15)
    by = {r["scheme"]: r for r in doc["schemes"]}
    assert by["uniform"]["no_correlation_max"] <= 2.0
    assert by["event"]["no_correlation_max"] == pytest.approx(2.0 * 19, rel=1e-9)
    assert all(r["max_tpl"] >= r["no_correlation_max"] - 1e-12 for r in doc["schemes"])


def test_matrix_files(capsys, tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("0.99,0.01\n0.01,0.99\n")
    code, out, _ = run(capsys, "tpl", ENERGY, *LANDMARKS, "--matrix", str(csv), "--json")
    assert code == 0
    from_csv = json.loads(out)
    code, out, _ = run(capsys, "tpl", ENERGY, *LANDMARKS, "--s", str(0.01 / 0.98), "--json")
    smoothed = json.loads(out)  # (1 + s)/(1 + 2s) = 0.99 for this s
    for a, b in zip(from_csv["schemes"], smoothed["schemes"], strict=True):
        assert a["max_tpl"] == pytest.approx(b["max_tpl"], rel=1e-9)
    js = tmp_path / "m.json"
    js.write_text(json.dumps({"backward": [[0.9, 0.1], [0.2, 0.8]], "forward": [[0.7, 0.3], [0.3, 0.7]]}))
    code, out, _ = run(capsys, "tpl", ENERGY, "--matrix", str(js), "--json")
    assert code == 0
    assert json.loads(out)["correlation"]["backward"] == [[0.9, 0.1], [0.2, 0.8]]


def test_three_states(capsys):
    code, out, _ = run(capsys, "tpl", ENERGY, *LANDMARKS, "--s", "0.1", "--states", "3", "--json")
    assert code == 0 and json.loads(out)["correlation"]["states"] == 3


@pytest.mark.parametrize("args, message", [
    (["--matrix", "{tmp}/bad.csv"], "row 0 sums to 1.1"),
    (["--matrix", "{tmp}/missing.csv"], "no such matrix file"),
    (["--matrix", "{tmp}/ok.csv", "--states", "3"], "--states applies to the smoothed chain"),
    (["--s", "0.1", "--states", "1"], "--states must be at least 2"),
    (["--s", "0.1", "--landmark-rows", "9999"], ""),
])
def test_bad_input_exit_2_one_line(capsys, tmp_path, args, message):
    (tmp_path / "bad.csv").write_text("0.6,0.5\n0.5,0.5\n")
    (tmp_path / "ok.csv").write_text("0.6,0.4\n0.5,0.5\n")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    code, out, err = run(capsys, "tpl", ENERGY, *args)
    assert code == 2 and out == ""
    assert err.startswith("lmdk: error: ") and err.count("\n") == 1
    assert message in err


@pytest.mark.parametrize("args", [[], ["--s", "0.1", "--matrix", "x.csv"], ["--s", "-1"], ["--s", "abc"]])
def test_argparse_errors(capsys, args):
    code, _, err = run(capsys, "tpl", ENERGY, *args)
    assert code == 2 and "error" in err


def test_unwritable_curve(capsys, tmp_path):
    code, _, err = run(capsys, "tpl", ENERGY, "--s", "1", "--curve", str(tmp_path / "no" / "dir" / "c.csv"))
    assert code == 2 and err.count("\n") == 1 and "cannot write" in err
