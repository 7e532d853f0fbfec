"""``lmdk export --dummies …`` and ``lmdk compare --dummies …`` end to end on a bundled sample (issue 6)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.kernel.dummies import (
    DummySettings,
    select_for_release,
    split_budget,
)
from lmdk_gui.core.kernel.guarantee import check_guarantee
from lmdk_gui.core.kernel.settings import PrivacySettings
from lmdk_gui.core.publish import ledger
from lmdk_gui.core.publish.export import ExportOptions, export_key, key_selection_words, release_digest
from lmdk_gui.core.publish.writers import SIDECAR_KEYS
from tests.cli.helpers import run
from tests.conftest import SAMPLES
from tests.keys import test_key

ENERGY = str(SAMPLES / "energy_hue_2013_jan.csv")
GPS = str(SAMPLES / "gps_bus_limerick.csv")
ROWS = "10-40,300,500-505"
LM = np.r_[np.arange(10, 41), 300, np.arange(500, 506)]


def test_export_with_dummies(capsys, tmp_path):
    out = tmp_path / "r.csv"
    code, text, err = run(capsys, "export", ENERGY, "-o", str(out), "--scheme", "skip", "--epsilon", "2",
                          "--landmark-rows", ROWS, "--dummies", "partitioned", "--dummy-share", "2%",
                          "--dummy-utility", "distance", "--seed", test_key(9), "--include-budget")
    assert code == 0, err
    assert "hidden among dummy landmarks (partitioned, distance utility)" in text
    assert "ε_sel = 0.04" in text and "ε − ε_sel = 1.96" in text
    assert "seeded" in err and "dummy selection" in err
    eps_sel, eps_rem = split_budget(2.0, 0.02)
    series = load_series(ENERGY)
    d = DummySettings("partitioned", 0.02, "distance")
    # the key is bound to the release: the settings the command used are those the private ledger kept
    settings = PrivacySettings.from_dict(ledger.entries()[-1]["recipe"]["settings"])
    digest = release_digest(series, LM, settings, ExportOptions("skip", dummies=d))
    sel = select_for_release(series.n, LM, 2.0, d, words=key_selection_words(export_key(test_key(9)), digest))
    b = pd.read_csv(out)["epsilon"].to_numpy()
    assert np.array_equal(np.flatnonzero(b == 0), sel.landmarks)
    assert check_guarantee(b, sel.landmarks, eps_rem).holds
    side = json.loads((tmp_path / "r.csv.json").read_text())
    assert tuple(side) == SIDECAR_KEYS and side["epsilon"] == 2.0
    assert side["epsilon_selection"] == {"epsilon": eps_sel, "share": 0.02, "mechanism": "exponential",
                                         "generator": "partitioned", "utility": "distance",
                                         "epsilon_release": eps_rem}


def test_export_default_is_off_and_gps_works(capsys, tmp_path):
    code, _, err = run(capsys, "export", ENERGY, "-o", str(tmp_path / "a.csv"), "--scheme", "uniform",
                       "--epsilon", "1", "--landmark-rows", ROWS)
    assert code == 0, err
    assert json.loads((tmp_path / "a.csv.json").read_text())["epsilon_selection"] is None
    code, text, err = run(capsys, "export", GPS, "-o", str(tmp_path / "g.csv"), "--scheme", "adaptive",
                          "--epsilon", "1", "--landmark-rows", "100-300", "--dummies", "heuristic")
    assert code == 0, err
    assert list(pd.read_csv(tmp_path / "g.csv").columns) == ["timestamp", "lat", "lon"]
    side = json.loads((tmp_path / "g.csv.json").read_text())
    assert side["epsilon_selection"]["generator"] == "heuristic" and side["guarantee_holds"]


@pytest.mark.parametrize("argv, message", [
    (["--dummies", "optimal"], "Optimal dummy selection is exhaustive"),
    (["--dummies", "partitioned", "--dummy-share", "1.5"], "strictly between 0 and 1"),
    (["--dummies", "sometimes"], "invalid choice"),
])
def test_export_refusals(capsys, tmp_path, argv, message):
    code, _, err = run(capsys, "export", ENERGY, "-o", str(tmp_path / "r.csv"), "--scheme", "uniform",
                       "--epsilon", "1", "--landmark-rows", ROWS, *argv)
    assert code == 2 and message in err
    assert list(tmp_path.iterdir()) == []


def test_export_event_level_with_dummies_fails_the_check(capsys, tmp_path):
    code, _, err = run(capsys, "export", ENERGY, "-o", str(tmp_path / "r.csv"), "--scheme", "event",
                       "--epsilon", "1", "--dummies", "partitioned")
    assert code == 3 and "landmark-privacy check" in err
    assert list(tmp_path.iterdir()) == []


def test_compare_with_and_without_dummies(capsys):
    code, text, err = run(capsys, "compare", ENERGY, "--landmark-rows", ROWS, "--runs", "3",
                          "--dummies", "partitioned")
    assert code == 0, err
    assert "dummy landmarks: partitioned, count utility, ε_sel = 0.01" in text
    for label in ("Uniform", "Skip", "Adaptive", "Event-level", "User-level"):
        assert label in text and f"{label} + dummies" in text
    code, js, err = run(capsys, "compare", ENERGY, "--landmark-rows", ROWS, "--runs", "3",
                        "--dummies", "partitioned", "--json")
    doc = json.loads(js)
    code2, js_plain, _ = run(capsys, "compare", ENERGY, "--landmark-rows", ROWS, "--runs", "3", "--json")
    plain = json.loads(js_plain)
    assert "dummies" not in plain and all("with_dummies" not in r for r in plain["schemes"])
    d = doc["dummies"]
    assert d["generator"] == "partitioned" and d["epsilon_selection"] == 0.01
    assert LM.size < d["landmarks_with_dummies_this_seed"] <= 744
    assert LM.size < d["mean_landmarks_with_dummies"] <= 744
    for r, p in zip(doc["schemes"], plain["schemes"], strict=True):
        # The "without" numbers are exactly those of the plain command (same noise runs).
        assert {k: v for k, v in r.items() if k != "with_dummies"} == p
        w = r["with_dummies"]
        assert w["epsilon"] == d["epsilon_release"] and w["runs"] == 3
        if r["scheme"] in ("uniform", "skip", "adaptive", "user"):
            assert w["guarantee_holds"] and w["landmark_sum"] <= w["epsilon"]
    uni = doc["schemes"][0]
    assert uni["with_dummies"]["mean_epsilon_t"] < uni["mean_epsilon_t"]  # more landmarks, less each
