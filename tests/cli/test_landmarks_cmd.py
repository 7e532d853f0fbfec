"""``lmdk landmarks`` end to end on the bundled data (issue 5)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lmdk_gui.core.analysis import suggestions as sg
from lmdk_gui.core.data.landmark_files import read_landmark_file
from lmdk_gui.core.data.loader import load_series
from tests.cli.helpers import run
from tests.conftest import DATA, SAMPLES

ENERGY = str(DATA / "energy_hue_residential1_2013.csv")
GPS = str(DATA / "gps_bus_limerick_2019-02-18.csv")
CONTACTS = str(SAMPLES / "contacts_person1672.csv")
CONTACT_OPTS = ["--kind", "categorical", "--duplicates", "first"]


@pytest.fixture(scope="module")
def energy():
    return load_series(ENERGY, duplicates="first")


def test_threshold_prints_count_and_first_timestamps(capsys, energy):
    code, out, err = run(capsys, "landmarks", ENERGY, "--duplicates", "first", "--rule", "threshold",
                         "--above", "2")
    assert code == 0 and err == ""
    k = sg.threshold(energy, above=2).size
    lines = out.splitlines()
    assert f"{k} of {energy.n} events are landmarks ({100 * k / energy.n:.2f}%)" in lines[0]
    assert "above=2" in lines[0]
    assert lines[1].startswith("first landmarks: 2013-01-01 18:00:00, ")
    assert f"and {k - 5} more" in lines[1]


def test_output_file_is_a_landmark_file(tmp_path, capsys, energy):
    out_file = tmp_path / "lm.csv"
    code, out, _ = run(capsys, "landmarks", ENERGY, "--duplicates", "first", "--rule", "threshold", "--below",
                       "0.3", "-o", str(out_file))
    assert code == 0 and f"wrote {out_file}" in out
    text = out_file.read_text()
    assert text.startswith("timestamp,row,rule\n")  # the rule's label on every row
    assert all(line.endswith(",Value threshold") for line in text.splitlines()[1:])
    np.testing.assert_array_equal(read_landmark_file(out_file, energy), sg.threshold(energy, below=0.3))
    # refuses to overwrite without --force
    code, _, err = run(capsys, "landmarks", ENERGY, "--duplicates", "first", "--rule", "threshold", "--below",
                       "0.5", "-o", str(out_file))
    assert code == 2 and "--force" in err and len(err.strip().splitlines()) == 1
    code, _, _ = run(capsys, "landmarks", ENERGY, "--duplicates", "first", "--rule", "threshold", "--below",
                     "0.5", "-o", str(out_file), "--force")
    assert code == 0
    np.testing.assert_array_equal(read_landmark_file(out_file, energy), sg.threshold(energy, below=0.5))


def test_landmark_file_feeds_compare(tmp_path, capsys):
    out_file = tmp_path / "stay.csv"
    assert run(capsys, "landmarks", GPS, "--rule", "stay", "--distance", "50", "--duration", "1", "-o",
               str(out_file))[0] == 0
    code, out, err = run(capsys, "compare", GPS, "--landmarks", str(out_file), "--runs", "1", "--json")
    assert code == 0, err
    gps = load_series(GPS)
    assert json.loads(out)["landmarks"] == sg.stay_points(gps, distance_m=50, duration_min=1).size


def test_stay_defaults_and_json(capsys):
    code, out, _ = run(capsys, "landmarks", GPS, "--rule", "stay", "--distance", "50", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["params"] == {"distance_m": 50.0, "duration_min": 30.0}
    assert doc["kind"] == "location" and doc["rows"] == 2144 and doc["output"] is None
    assert doc["landmarks"] == sg.stay_points(load_series(GPS), distance_m=50, duration_min=30).size


def test_category_and_changepoints(tmp_path, capsys, energy):
    code, out, _ = run(capsys, "landmarks", CONTACTS, *CONTACT_OPTS, "--rule", "category", "--values",
                       "1651, 1164")
    assert code == 0 and "65 of 2271 events" in out
    # epoch timestamps are written back as epoch seconds and read back to the same rows
    out_file = tmp_path / "c.csv"
    assert run(capsys, "landmarks", CONTACTS, *CONTACT_OPTS, "--rule", "category", "--values", "1651,1164",
               "-o", str(out_file))[0] == 0
    assert out_file.read_text().splitlines()[1] == "1353408380,223,Category membership"
    contacts = load_series(CONTACTS, kind="categorical", duplicates="first")
    np.testing.assert_array_equal(read_landmark_file(out_file, contacts),
                                  sg.category_membership(contacts, ["1651", "1164"]))
    code, out, _ = run(capsys, "landmarks", ENERGY, "--duplicates", "first", "--rule", "changepoints", "--json")
    doc = json.loads(out)
    assert doc["landmarks"] == sg.change_points(energy).size
    assert doc["params"]["penalty"] == pytest.approx(sg.default_penalty(energy.n))
    code, out, _ = run(capsys, "landmarks", ENERGY, "--duplicates", "first", "--rule", "changepoints",
                       "--penalty", "1e9")
    assert code == 0 and "0 of 8759 events" in out and "first landmarks" not in out


def test_target_percentage(capsys, energy):
    code, out, _ = run(capsys, "landmarks", ENERGY, "--duplicates", "first", "--rule", "threshold", "--target",
                       "20", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["percent"] == pytest.approx(20, abs=0.2) and "below" in doc["params"]
    # --above alone with --target sweeps the upper threshold instead
    code, out, _ = run(capsys, "landmarks", ENERGY, "--duplicates", "first", "--rule", "threshold", "--above",
                       "1", "--target", "20", "--json")
    doc = json.loads(out)
    assert list(doc["params"]) == ["above"] and doc["percent"] == pytest.approx(20, abs=0.1)
    code, out, _ = run(capsys, "landmarks", GPS, "--rule", "stay", "--target", "40", "--json")
    doc = json.loads(out)
    assert doc["params"]["duration_min"] == 30 and doc["percent"] == pytest.approx(40, abs=0.5)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([ENERGY, "--duplicates", "first", "--rule", "threshold"], "needs --below X and/or --above X"),
        ([ENERGY, "--duplicates", "first", "--rule", "threshold", "--distance", "3"],
         "--distance applies to --rule stay"),
        ([ENERGY, "--duplicates", "first", "--rule", "stay"], "needs a location series"),
        ([GPS, "--rule", "stay", "--distance", "-5"], "distance_m must be at least 0"),
        ([GPS, "--rule", "stay", "--target", "101"], "between 0 and 100"),
        ([CONTACTS, *CONTACT_OPTS, "--rule", "category"], "needs --values"),
        ([CONTACTS, *CONTACT_OPTS, "--rule", "category", "--values", "1651,nobody"], "unknown label(s) 'nobody'"),
        ([ENERGY, "--duplicates", "first", "--rule", "changepoints", "--penalty", "-1"], "penalty must be"),
        ([ENERGY, "--rule", "threshold", "--below", "1"], "energy_hue_residential1_2013.csv"),  # duplicates
        ([str(DATA / "nope.csv"), "--rule", "threshold", "--below", "1"], "nope.csv"),
    ],
)
def test_bad_parameters_exit_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, "landmarks", *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_argparse_errors_exit_2(capsys):
    code, _, err = run(capsys, "landmarks", GPS, "--rule", "stay", "--distance", "abc")
    assert code == 2 and "expected a number, got 'abc'" in err
    code, _, err = run(capsys, "landmarks", GPS, "--rule", "wobble")
    assert code == 2 and "invalid choice" in err


def test_a_rule_made_file_is_said_so_by_the_export(tmp_path, capsys, energy):
    """Landmarks a rule found on the values tell which events passed it wherever a release shows where they
    are: a file from 'lmdk landmarks' says so to 'lmdk export', which warns (without dummies) and writes it
    in the sidecar's statement; a plain list says nothing."""
    from tests.keys import test_key

    lm = tmp_path / "lm.csv"
    assert run(capsys, "landmarks", ENERGY, "--duplicates", "first", "--rule", "threshold", "--above", "2",
               "-o", str(lm))[0] == 0
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, "export", ENERGY, "--duplicates", "first", "--landmarks", str(lm), "--scheme",
                       "skip", "--epsilon", "1", "--seed", test_key(3), "-o", str(out))
    assert code == 0, err
    assert "says its landmarks were found by a rule on the values (Value threshold)" in err
    statement = json.loads((tmp_path / "r.csv.json").read_text())["statement"]
    assert "the landmarks were found by a rule on these values (Value threshold)" in statement
    plain = tmp_path / "plain.csv"
    plain.write_text("row\n" + "\n".join(map(str, sg.threshold(energy, above=2))) + "\n")
    code, _, err = run(capsys, "export", ENERGY, "--duplicates", "first", "--landmarks", str(plain),
                       "--scheme", "skip", "--epsilon", "1", "--seed", test_key(3), "-o", str(tmp_path / "p.csv"))
    assert code == 0, err
    assert "found by a rule" not in err
    assert "found by a rule" not in json.loads((tmp_path / "p.csv.json").read_text())["statement"]


def test_a_target_the_rule_cannot_reach_is_said(tmp_path, capsys):
    """Stay points come in whole stays: on the bus ride no distance gives 10 % (0 % or 37.8 %). The closest
    setting is still written, and the command says that it is not the share asked for."""
    out_file = tmp_path / "stay.csv"
    code, out, err = run(capsys, "landmarks", GPS, "--rule", "stay", "--target", "10", "-o", str(out_file))
    assert code == 0 and f"wrote {out_file}" in out
    assert "no setting of the rule gives 10% on this series; the closest gives" in err
    code, out, err = run(capsys, "landmarks", ENERGY, "--duplicates", "first", "--rule", "threshold",
                         "--target", "10")
    assert code == 0 and err == ""  # a threshold comes within a point of it
