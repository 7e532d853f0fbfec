"""Issue 42 on ``lmdk batch``: a master key reused on next month's table, and the batch's ledger entries.

Each of these failed before the fix: every household got the same noise in every run of one key, and the
ledger entries had no input digest and a made-up input path, so a repeated run was never noted.
The workers run as threads of this process (they write the test's own private ledger).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.publish import ledger
from lmdk_gui.core.publish.keys import series_digest
from tests.keys import test_key

from .helpers import run

distributed = pytest.importorskip("distributed")

KEY = test_key(77)
HOUSES = ["h1", "h2", "h3", "h4"]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _table(path, start: str, seed: int = 0):
    """Hourly kWh of four households; the same readings whatever the month (only the times move)."""
    rng = np.random.default_rng(seed)
    t = pd.date_range(start, periods=120, freq="h").strftime("%Y-%m-%d %H:%M:%S")
    pd.concat([pd.DataFrame({"household": h, "timestamp": t, "kwh": np.round(rng.gamma(2, 0.5, t.size), 3)})
               for h in HOUSES]).to_csv(path, index=False)
    return path


def _batch(capsys, table, out, client, *extra, key=KEY):
    seed = ("--seed", key) if key else ()
    return run(capsys, "batch", str(table), "-o", str(out), "--id-col", "household", "--scheme", "uniform",
               "--epsilon", "1", *seed, "--scheduler", client.scheduler.address, *extra)


def _values(out, house):
    return pd.read_csv(out / f"{house}.csv")["kwh"].to_numpy()


def test_next_months_table_gets_independent_noise(capsys, tmp_path, client):
    jan = _table(tmp_path / "jan.csv", "2024-01-01")
    feb = _table(tmp_path / "feb.csv", "2024-02-01")  # the same readings, a month later
    for table, out in ((jan, "o1"), (feb, "o2")):
        code, _, err = _batch(capsys, table, tmp_path / out, client)
        assert code == 0, err
    for h in HOUSES:
        a, b = _values(tmp_path / "o1", h), _values(tmp_path / "o2", h)
        # before: the same noise on the same readings, so the same released values
        assert np.mean(a == b) < 0.05, h


def test_a_repeated_run_is_noted_in_the_ledger(capsys, tmp_path, client):
    table = _table(tmp_path / "meters.csv", "2024-01-01")
    code, _, err = _batch(capsys, table, tmp_path / "o1", client, key=None)
    assert code == 0 and "sequential composition" not in err
    entries = ledger.entries()
    assert len(entries) == len(HOUSES)
    for e in entries:  # one entry per person, with the digest of that person's series as one file reads it
        alone = load_series(table, id_col="household", person_id=e["person_id"])
        assert e["input_digest"] == series_digest(alone)
        assert e["input_path"] == str(table.resolve()) and e["input_paths"] == [str(table.resolve())]
    code, _, err = _batch(capsys, table, tmp_path / "o2", client, key=None)
    assert code == 0, err
    assert ("lmdk: note: 4 persons of this run were released before from the same data (up to 1 time, total "
            "ε up to 1); with this run, anyone holding all of a person's releases faces up to ε = 2 "
            "(sequential composition)") in err
    # one person's data again, alone, through lmdk export: the same input for the ledger
    pd.read_csv(table).query("household == 'h2'").drop(columns="household").to_csv(tmp_path / "h2.csv",
                                                                                   index=False)
    code, _, err = run(capsys, "export", str(tmp_path / "h2.csv"), "-o", str(tmp_path / "h2r.csv"), "--scheme",
                       "uniform", "--epsilon", "1")
    assert code == 0 and "released 2 times before (total ε = 2)" in err
    for side in (tmp_path / "o2").glob("*.csv.json"):  # the public sidecars name no input and hold no digest
        text = side.read_text()
        assert "meters" not in text and not any(e["input_digest"] in text for e in entries)


def test_a_repeated_keyed_run_is_the_same_release(capsys, tmp_path, client):
    table = _table(tmp_path / "meters.csv", "2024-01-01")
    for out in ("o1", "o2"):
        code, _, err = _batch(capsys, table, tmp_path / out, client)
        assert code == 0 and "sequential composition" not in err
    for h in HOUSES:  # the same key, data and settings: the same release, bit for bit, and no new ε
        assert (tmp_path / "o1" / f"{h}.csv").read_bytes() == (tmp_path / "o2" / f"{h}.csv").read_bytes()
    first, again = ledger.entries()[:4], ledger.entries()[4:]
    assert [e["reexport_of"] for e in again] == [e["id"] for e in first]
    assert ledger.composition(first[0]["input_digest"]) == (1, 1.0)


def test_a_batch_person_can_be_exported_again_from_the_ledger(capsys, tmp_path, client):
    table = _table(tmp_path / "meters.csv", "2024-01-01")
    code, _, err = _batch(capsys, table, tmp_path / "o", client, "--include-budget")
    assert code == 0, err
    entry = next(e for e in ledger.entries() if e["person_id"] == "h3")
    code, out, err = run(capsys, "ledger", "reexport", entry["id"], "-o", str(tmp_path / "again.csv"))
    assert code == 0, err
    assert (tmp_path / "again.csv").read_bytes() == (tmp_path / "o" / "h3.csv").read_bytes()
    code, text, _ = run(capsys, "ledger", "list")
    assert "(id h3)" in text
