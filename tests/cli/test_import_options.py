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


def _ambiguous(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("date,kwh\n" + "".join(f"{d:02d}/02/2013,{d}\n" for d in range(1, 11)))
    return path


def test_dates_that_read_either_way_need_date_order(capsys, tmp_path):
    path = _ambiguous(tmp_path)
    code, _, err = run(capsys, "compare", str(path), "--landmark-rows", "1")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "d.csv, column 'date': dates like 01/02/2013 read either way" in err and "--date-order dmy|mdy" in err
    for order, first, second in (("dmy", "2013-02-01", "2013-02-02"), ("mdy", "2013-01-02", "2013-02-02")):
        out = tmp_path / f"{order}.csv"
        code, _, err = run(capsys, "export", str(path), "-o", str(out), "--scheme", "uniform", "--epsilon", "1",
                           "--seed", test_key(1), "--landmark-rows", "0", "--date-order", order)
        assert code == 0, err
        rows = out.read_text().splitlines()
        assert rows[1].startswith(first) and rows[2].startswith(second)


def test_rows_out_of_time_order_are_noted_once(capsys, tmp_path):
    path = tmp_path / "o.csv"
    path.write_text("timestamp,kwh\n2013-01-01 00:00,1\n2013-01-01 02:00,2\n2013-01-01 01:00,3\n"
                    "2013-01-01 03:00,4\n2013-01-01 04:00,\n")
    code, _, err = run(capsys, "compare", str(path), "--landmark-rows", "1", "--skip-missing")
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("lmdk: note:")]
    assert len(notes) == 1 and "skipped 1 row with missing values" in notes[0]
    assert "the rows were not in time order: sorted by time (1 row earlier than the row above)" in notes[0]
    sorted_path = tmp_path / "s.csv"
    sorted_path.write_text("timestamp,kwh\n2013-01-01 00:00,1\n2013-01-01 01:00,2\n2013-01-01 02:00,3\n")
    code, _, err = run(capsys, "compare", str(sorted_path), "--landmark-rows", "1")
    assert code == 0 and "time order" not in err


def test_batch_shares_date_order(tmp_path):
    from lmdk_gui.cli import build_parser
    from lmdk_gui.cli.batch_cmd import options_from_args
    from lmdk_gui.core.publish import batch

    args = build_parser().parse_args(["batch", "in.csv", "-o", str(tmp_path / "out"), "--id-col", "id",
                                      "--scheme", "uniform", "--epsilon", "1", "--date-order", "dmy"])
    options = options_from_args(args)
    assert options.columns.date_order == "dmy" and "date_order" in batch._COLUMN_OPTIONS


def test_ledger_reexport_reads_the_dates_in_the_same_order(capsys, tmp_path):
    from lmdk_gui.core.publish import ledger
    from lmdk_gui.core.publish.reexport import reexport

    path = _ambiguous(tmp_path)
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, "export", str(path), "-o", str(out), "--scheme", "uniform", "--epsilon", "1",
                       "--landmark-rows", "0", "--new-key", "--date-order", "dmy")
    assert code == 0, err
    [entry] = ledger.entries()
    assert entry["recipe"]["columns"]["date_order"] == "dmy"
    reexport(entry["id"], tmp_path / "again.csv")
    assert (tmp_path / "again.csv").read_text() == out.read_text()
