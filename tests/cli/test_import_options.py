"""Issue 13 in the command: --duplicates drop-exact, --skip-missing, --pair-cols/--person/--pair-class-cols,
and load errors that name, in the command's words, every flag needed to read the file in one go."""

from __future__ import annotations

import json

from tests.cli.helpers import run
from tests.conftest import DATA, SAMPLES
from tests.keys import test_key

PAIRS = str(DATA / "contact_pairs_synthetic.csv")


def test_contact_log_for_one_person(capsys, tmp_path):
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, "export", PAIRS, "-o", str(out), "--scheme", "uniform", "--epsilon", "1",
                       "--pair-cols", "i,j", "--person", "1005", "--duplicates", "first", "--seed", test_key(1), "--categories-from-data",
                       "--landmark-rows", "0-3")
    assert code == 0, err
    header = out.read_text().splitlines()[0]
    assert header.startswith("timestamp,contact")
    sidecar = json.loads(out.with_name(out.name + ".json").read_text())
    assert "1005" not in json.dumps(sidecar)  # the person followed is not published


def test_one_pass_remedy_names_every_flag(capsys):
    code, _, err = run(capsys, "compare", PAIRS, "--landmark-rows", "3")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "(to read it: --person ID (most rows: 1005) --duplicates first|last)" in err
    code, _, err = run(capsys, "compare", PAIRS, "--person", "1005", "--landmark-rows", "3")
    assert code == 2 and err.rstrip().endswith("(to read it: --duplicates first|last)")
    code, out, err = run(capsys, "compare", PAIRS, "--person", "1005", "--duplicates", "last",
                         "--landmark-rows", "3")
    assert code == 0 and "Adaptive" in out, err


def test_skip_missing_and_drop_exact(capsys, tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("timestamp,kwh\n2013-01-01 00:00:00,1\n2013-01-01 01:00:00,\n2013-01-01 02:00:00,3\n"
                    "2013-01-01 02:00:00,3\n2013-01-01 03:00:00,4\n")
    code, _, err = run(capsys, "compare", str(path), "--landmark-rows", "1")
    assert code == 2 and "(to read it: --skip-missing (1 row) --duplicates drop-exact|first|last|mean)" in err
    code, out, err = run(capsys, "compare", str(path), "--landmark-rows", "1", "--skip-missing",
                         "--duplicates", "drop-exact")
    assert code == 0, err
    assert "skipped 1 row with missing values" in err and "dropped 1 exact duplicate row" in err


def test_mean_refused_for_a_gps_track(capsys):
    code, _, err = run(capsys, "compare", str(SAMPLES / "gps_bus_limerick.csv"), "--duplicates", "mean",
                       "--landmark-rows", "1")
    assert code == 2 and "mean is not possible for locations" in err
    assert "(to read it:" not in err or "mean" not in err.split("(to read it:")[1]
