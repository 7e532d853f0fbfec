"""``lmdk batch`` (issue 16): many persons on a loopback Dask cluster, each released as ``lmdk export`` would.

One ``LocalCluster`` (2 worker processes, 127.0.0.1) serves the whole module; the SIGKILL test runs the
command in a subprocess with its own one-worker cluster, killed as a whole (process group).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.analysis.suggestions import apply_rule
from lmdk_gui.core.data.loader import load_dataframe_series
from lmdk_gui.core.kernel.settings import PrivacySettings
from lmdk_gui.core.publish.batch import (
    BatchError,
    BatchOptions,
    Cancelled,
    export_seed,
    person_key,
    run_batch,
    safe_name,
)
from lmdk_gui.core.publish.export import ExportOptions, export_release
from tests.keys import test_key

from .helpers import run

distributed = pytest.importorskip("distributed")

KEY = test_key(5)  # 256 bits (a patterned key such as "5eed" * 16 is refused)
IDS = [f"h{i:03d}" for i in range(47)] + ["a/b", "Zoë", "x y"]  # 50 persons, three need encoding


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _table(ids, seed=0) -> pd.DataFrame:
    """Hourly kWh per person (100–300 rows each, values with 3 decimals), grouped by person except the last
    ten persons, whose rows are scattered through the file (they must be shuffled to meet)."""
    rng = np.random.default_rng(seed)
    parts = []
    for pid in ids:
        n = int(rng.integers(100, 300))
        t = pd.date_range("2013-01-01", periods=n, freq="h").strftime("%Y-%m-%d %H:%M:%S")
        parts.append(pd.DataFrame({"household": pid, "timestamp": t, "kwh": np.round(rng.gamma(2, 0.5, n), 3)}))
    df = pd.concat(parts, ignore_index=True)
    scattered = df["household"].isin(ids[-10:]).to_numpy()
    order = np.concatenate([np.flatnonzero(~scattered), np.flatnonzero(scattered)])
    pos = np.sort(rng.choice(len(df), scattered.sum(), replace=False))
    out = np.empty(len(df), dtype=np.int64)
    mask = np.zeros(len(df), dtype=bool)
    mask[pos] = True
    out[mask] = np.flatnonzero(scattered)
    out[~mask] = np.flatnonzero(~scattered)
    assert sorted(out) == sorted(order)
    return df.iloc[out].reset_index(drop=True)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("batch")
    df = _table(IDS)
    df.to_csv(d / "meters.csv", index=False)
    # Landmarks: the hours above 2 kWh, by timestamp, for every person.
    lm = df[df["kwh"] > 2.0][["household", "timestamp"]]
    lm.to_csv(d / "landmarks.csv", index=False)
    return d, df, lm


def _cli_batch(capsys, data_dir: Path, out: Path, client, *extra: str):
    return run(capsys, "batch", str(data_dir / "meters.csv"), "-o", str(out), "--id-col", "household",
               "--scheme", "adaptive", "--epsilon", "1", "--seed", KEY, "--landmarks",
               str(data_dir / "landmarks.csv"), "--scheduler", client.scheduler.address, "--blocksize", "16KB",
               *extra)


@pytest.fixture(scope="module")
def released(data, client, tmp_path_factory):
    """One CSV run of the 50-person table (shared by the tests that only read it)."""
    d, df, lm = data
    out = tmp_path_factory.mktemp("out") / "release"
    pytest_capsys = _Capture()
    code, stdout, stderr = _cli_batch(pytest_capsys, d, out, client)
    return out, code, stdout, stderr


class _Capture:
    """A capsys stand-in for module-scoped fixtures (argparse/print output is not needed there)."""

    def readouterr(self):
        return "", ""


def test_every_person_equals_lmdk_export_alone(data, released, capsys, tmp_path):
    d, df, lm = data
    out, code, _, _ = released
    assert code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["private"] is True and "Private" in manifest["comment"]
    assert manifest["totals"]["released"] == 50 and manifest["totals"]["failed"] == 0
    assert manifest["inputs"][0]["sha256"]
    text = (out / "manifest.json").read_text()
    assert not any(ts in text for ts in lm["timestamp"])  # counts and sums only, never landmark positions
    key = bytes.fromhex(KEY)
    for pid in IDS:
        rows = df[df["household"] == pid][["timestamp", "kwh"]]
        rows.to_csv(tmp_path / "person.csv", index=False)
        lm[lm["household"] == pid][["timestamp"]].to_csv(tmp_path / "lm.csv", index=False)
        code, _, err = run(capsys, "export", str(tmp_path / "person.csv"), "-o", str(tmp_path / "alone.csv"),
                           "--scheme", "adaptive", "--epsilon", "1", "--landmarks", str(tmp_path / "lm.csv"),
                           "--seed", str(export_seed(person_key(key, pid))), "--force")
        assert code == 0, err
        name = safe_name(pid)
        assert urllib.parse.unquote(name) == pid
        assert (out / f"{name}.csv").read_bytes() == (tmp_path / "alone.csv").read_bytes(), pid
        side = json.loads((out / f"{name}.csv.json").read_text())
        alone = json.loads((tmp_path / "alone.csv.json").read_text())
        assert side.pop("created") <= alone.pop("created")  # made by the batch first, then by lmdk export
        assert side == alone
        assert "sha256" not in json.dumps(side)
        entry = next(p for p in manifest["persons"] if p["id"] == pid)
        assert entry["status"] == "released" and entry["verdict"] == "holds"
        assert entry["rows"] == len(rows) and entry["landmarks"] == int((rows["kwh"] > 2.0).sum())
        assert entry["landmark_sum"] <= 1.0


def test_errors_name_the_line_of_the_input_file_among_several(tmp_path, client, capsys):
    """A person whose rows are in two input files, cut across partitions: the bad value is named by its
    line in the file it is in (issue 44), and the other persons are released."""
    ids = [f"q{i}" for i in range(12)]
    df = _table(ids, seed=5)
    df["kwh"] = df["kwh"].astype(object)
    half = len(df) // 2
    first, second = df.iloc[:half], df.iloc[half:].reset_index(drop=True)
    pid = next(q for q in ids if q in set(first["household"]) and (second["household"] == q).sum() > 5)
    bad = second.index[second["household"] == pid][3]
    second.loc[bad, "kwh"] = "n/a"
    (tmp_path / "in").mkdir()
    first.to_csv(tmp_path / "in" / "a.csv", index=False)
    second.to_csv(tmp_path / "in" / "b.csv", index=False)
    code, _, err = run(capsys, "batch", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--id-col",
                       "household", "--scheme", "uniform", "--epsilon", "1", "--scheduler",
                       client.scheduler.address, "--blocksize", "4KB")
    assert code == 1
    assert f"failed: id {pid}, row {bad + 2} of b.csv, column 'kwh': expected a number, got 'n/a'" in err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {p["id"]: p["status"] for p in manifest["persons"]} == {
        q: "failed" if q == pid else "released" for q in ids}


def test_bad_persons_are_listed_and_the_rest_released(tmp_path, client, capsys):
    df = _table([f"p{i}" for i in range(8)], seed=3)
    bad = df.index[df["household"] == "p2"][5]
    df["kwh"] = df["kwh"].astype(object)
    df.loc[bad, "kwh"] = "abc"
    dup = df.index[df["household"] == "p5"][:2]
    df.loc[dup[1], "timestamp"] = df.loc[dup[0], "timestamp"]
    df.to_csv(tmp_path / "t.csv", index=False)
    code, out, err = run(capsys, "batch", str(tmp_path / "t.csv"), "-o", str(tmp_path / "out"), "--id-col",
                         "household", "--scheme", "uniform", "--epsilon", "1", "--rule", "threshold", "--above",
                         "2", "--scheduler", client.scheduler.address, "--blocksize", "8KB")
    assert code == 1
    # the input file's line (header = line 1), not the row's place among p2's rows (issue 44)
    assert f"lmdk: failed: id p2, row {bad + 2} of t.csv, column 'kwh': expected a number, got 'abc'" in err
    assert "failed: id p5, " in err and "repeated timestamp" in err
    assert "landmarks were found by --rule on each person's values" in err  # and where they are shows it
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    status = {p["id"]: p["status"] for p in manifest["persons"]}
    assert status == {f"p{i}": "failed" if i in (2, 5) else "released" for i in range(8)}
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == sorted(["manifest.json", ".lmdk-batch"] + [f"p{i}.csv{s}" for i in range(8) if i not in (2, 5)
                                                                for s in ("", ".json")])
    assert "released 6 of 8 persons" in out


def test_memory_is_bounded_by_partitions_not_the_table(data, client, tmp_path):
    df = data[1]
    df = df[df["household"].isin(IDS[-25:])]  # 15 grouped persons, 10 scattered ones
    df.to_csv(tmp_path / "t.csv", index=False)
    opts = BatchOptions(id_col="household", scheme="uniform", settings=PrivacySettings(epsilon=1.0),
                        key=bytes.fromhex(KEY), blocksize=8 * 1024)
    seen = []
    s = run_batch(tmp_path / "t.csv", tmp_path / "out", opts, client=client, progress=seen.append)
    assert s.released == 25 and s.failed == 0 and s.rows == len(df)
    largest = int(df["household"].value_counts().max())
    assert s.input_partitions >= 8
    # A task holds one input partition or one bucket of straddling persons, never the table.
    assert 0 < s.max_task_rows <= 2 * max(largest, len(df) // s.input_partitions * 2)
    assert s.max_task_rows < len(df) / 3
    last = seen[-1]
    assert last.phase == "done"
    assert last.persons_done == last.persons_total == 25 and last.rows_done == len(df)


def test_parquet_dataset_matches_the_csv_release(data, released, client, tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    pads = pytest.importorskip("pyarrow.dataset")
    import pyarrow as pa

    d, df, lm = data
    out_csv = released[0]
    some = ["h000", "h046", "a/b", "Zoë"]  # the same key gives each person the same release in any company
    df[df["household"].isin(some)].to_csv(tmp_path / "meters.csv", index=False)
    shutil.copy(d / "landmarks.csv", tmp_path / "landmarks.csv")
    code, _, err = _cli_batch(capsys, tmp_path, tmp_path / "pq", client, "--format", "parquet")
    assert code == 0, err
    part = pads.partitioning(pa.schema([("id", pa.string())]), flavor="hive")
    table = pq.read_table(tmp_path / "pq" / "release", partitioning=part).to_pandas()
    assert set(table["id"]) == set(some)
    for pid in some:
        got = table[table["id"] == pid].sort_values("timestamp")
        want = pd.read_csv(out_csv / f"{safe_name(pid)}.csv")
        assert got["kwh"].tolist() == want["kwh"].tolist()
        assert (tmp_path / "pq" / "release" / f"id={safe_name(pid)}" / "_release.json").exists()


def test_resume_after_sigkill_finishes_without_duplicates(tmp_path, client, capsys):
    ids = [f"k{i:02d}" for i in range(30)]
    rng = np.random.default_rng(7)
    n = 8_000
    t = pd.date_range("2013-01-01", periods=n, freq="h").strftime("%Y-%m-%d %H:%M:%S")
    with open(tmp_path / "big.csv", "w") as f:
        f.write("household,timestamp,kwh\n")
        for pid in ids:
            pd.DataFrame({"household": pid, "timestamp": t, "kwh": np.round(rng.gamma(2, 0.5, n), 3)}).to_csv(
                f, header=False, index=False)
    args = ["batch", str(tmp_path / "big.csv"), "-o", str(tmp_path / "out"), "--id-col", "household",
            "--scheme", "skip", "--epsilon", "1", "--rule", "threshold", "--above", "3", "--seed", KEY]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]),
                                                        os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "lmdk_gui.cli", *args, "--workers", "1"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    done = tmp_path / "out" / ".lmdk-batch" / "done"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if done.is_dir() and len(list(done.glob("*.json"))) >= 3:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_after = len(list(done.glob("*.json")))
    assert 3 <= killed_after < len(ids), f"the run was not killed mid-way ({killed_after} persons done)"
    assert not (tmp_path / "out" / "manifest.json").exists()

    code, _, err = run(capsys, *args, "--scheduler", client.scheduler.address)
    assert code == 2 and "--resume" in err  # an interrupted run is not silently mixed with a new one
    code, out, err = run(capsys, *args, "--scheduler", client.scheduler.address, "--resume")
    assert code == 0, err
    assert f"({killed_after} done before)" in out or f"({killed_after - 1} done before)" in out
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == sorted([".lmdk-batch", "manifest.json"] + [f"{i}.csv{s}" for i in ids for s in ("", ".json")])
    assert not list((tmp_path / "out").rglob("*.part"))
    # Seeded: every file, whether written before the kill or after, is the complete release of its person.
    table = pd.read_csv(tmp_path / "big.csv", dtype=str)
    rule = {"above": 3.0}
    for pid, rows in table.groupby("household"):
        series = load_dataframe_series(pd.DataFrame({"timestamp": rows["timestamp"].to_numpy(object),
                                                     "kwh": rows["kwh"].astype(float).to_numpy()}))
        alone = tmp_path / "alone.csv"
        export_release(series, apply_rule(series, "threshold", **rule), PrivacySettings(epsilon=1.0), alone,
                       ExportOptions(scheme="skip", seed=export_seed(person_key(bytes.fromhex(KEY), pid)),
                                     force=True, landmarks_rule="Value threshold"))
        assert (tmp_path / "out" / f"{pid}.csv").read_bytes() == alone.read_bytes(), pid
        side = _sidecar(tmp_path / "out" / f"{pid}.csv.json")
        assert side == _sidecar(tmp_path / "alone.csv.json")
        # landmarks found from the values: where they are tells about the values, and the file says so
        assert "found by a rule on these values (Value threshold)" in side["statement"]


def _sidecar(path):
    """A sidecar without its creation time (the one field two runs of the same release differ in)."""
    doc = json.loads(path.read_text())
    doc.pop("created")
    return doc


def test_cancel_stops_the_run_and_resume_completes(data, client, tmp_path):
    df = data[1]
    df[df["household"].isin(IDS[:20])].to_csv(tmp_path / "t.csv", index=False)
    opts = BatchOptions(id_col="household", scheme="skip", settings=PrivacySettings(epsilon=1.0),
                        key=bytes.fromhex(KEY), blocksize=8 * 1024)
    progress = []
    with pytest.raises(Cancelled):
        run_batch(tmp_path / "t.csv", tmp_path / "out", opts, client=client, progress=progress.append,
                  should_cancel=lambda: bool(progress) and progress[-1].persons_done >= 1)
    assert progress[-1].persons_done < 20
    assert not (tmp_path / "out" / "manifest.json").exists()
    with pytest.raises(BatchError, match="--resume"):
        run_batch(tmp_path / "t.csv", tmp_path / "out", opts, client=client)
    s = run_batch(tmp_path / "t.csv", tmp_path / "out", dataclasses.replace(opts, resume=True), client=client)
    assert s.released == 20 and s.failed == 0 and s.resumed >= 1


def test_safe_names_are_reversible_and_distinct():
    ids = ["a/b", "a%2Fb", ".", "..", ".hidden", "CON", "con.txt", "Zoë", "x y", "plain-1_2.3"]
    names = [safe_name(i) for i in ids]
    assert len(set(names)) == len(ids)
    assert all(urllib.parse.unquote(n) == i for n, i in zip(names, ids, strict=True))
    assert all("/" not in n and not n.startswith(".") and n.split(".")[0].upper() not in ("CON",) for n in names)
    assert safe_name("plain-1_2.3") == "plain-1_2.3"


def test_usage_errors_are_one_line(tmp_path, capsys, data):
    d, _, _ = data
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.txt").write_text("mine")
    base = ["batch", str(d / "meters.csv"), "--id-col", "household", "--scheme", "uniform", "--epsilon", "1"]
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "full"), "--workers", "1")
    assert code == 2 and "not empty" in err and err.count("\n") == 1
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "o"), "--seed", "abc")
    assert code == 2 and "--seed" in err
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "o"), "--above", "3")
    assert code == 2 and "--rule threshold" in err
    code, _, err = run(capsys, *base[:-4], "--scheme", "event", "--epsilon", "1", "-o", str(tmp_path / "o"))
    assert code == 2 and "invalid choice" in err


def test_a_folder_of_parquet_files_keeps_each_person_whole(client, tmp_path):
    t = pd.date_range("2013-01-01", periods=300, freq="h")
    df = pd.concat([pd.DataFrame({"id": "A", "timestamp": t[:50], "v": 1.5}),
                    pd.DataFrame({"id": "B", "timestamp": t, "v": 2.5})], ignore_index=True)
    (tmp_path / "in").mkdir()
    df.iloc[:150].to_parquet(tmp_path / "in" / "a.parquet")  # B straddles the two files
    df.iloc[150:].to_parquet(tmp_path / "in" / "b.parquet")
    s = run_batch(tmp_path / "in", tmp_path / "out", BatchOptions(id_col="id", scheme="uniform",
                                                                 settings=PrivacySettings()), client=client)
    assert (s.released, s.failed) == (2, 0)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {p["id"]: p["rows"] for p in manifest["persons"]} == {"A": 50, "B": 300}
    assert len(pd.read_csv(tmp_path / "out" / "B.csv")) == 300


def test_a_semicolon_table_with_decimal_commas_is_released_as_each_file_alone(client, tmp_path, capsys):
    """A spreadsheet's ';' table with decimal commas and D.M.YYYY times: each person's release is the one
    ``lmdk export`` makes of that person's rows in a file of their own (the batch reads the numbers as the
    single-file loader does; it refused them as text before)."""
    t = pd.date_range("2013-01-01", periods=120, freq="h").strftime("%d.%m.%Y %H:%M")
    rng = np.random.default_rng(5)
    df = pd.concat([pd.DataFrame({"Haushalt": pid, "Zeit": t,
                                  "kWh": [f"{v:.3f}".replace(".", ",") for v in rng.gamma(2, 0.5, t.size)]})
                    for pid in ("A", "B")], ignore_index=True)
    df.to_csv(tmp_path / "eu.csv", sep=";", index=False)

    def alone(pid):
        df[df["Haushalt"] == pid][["Zeit", "kWh"]].to_csv(tmp_path / "one.csv", sep=";", index=False)
        return tmp_path / "one.csv"

    _each_as_alone(capsys, client, tmp_path, tmp_path / "eu.csv", "Haushalt", ("A", "B"), alone)


def _each_as_alone(capsys, client, tmp_path, table, id_col, pids, alone) -> None:
    """``lmdk batch`` of ``table`` (uniform, keyed) releases each person as ``lmdk export`` of ``alone(pid)``."""
    code, _, err = run(capsys, "batch", str(table), "-o", str(tmp_path / "out"), "--id-col", id_col,
                       "--scheme", "uniform", "--epsilon", "1", "--seed", KEY, "--scheduler", client.scheduler.address)
    assert code == 0, err
    key = bytes.fromhex(KEY)
    for pid in pids:
        code, _, err = run(capsys, "export", str(alone(pid)), "-o", str(tmp_path / "alone.csv"), "--scheme",
                           "uniform", "--epsilon", "1", "--force", "--seed", str(export_seed(person_key(key, pid))))
        assert code == 0, err
        assert (tmp_path / "out" / f"{pid}.csv").read_bytes() == (tmp_path / "alone.csv").read_bytes(), pid


@pytest.mark.parametrize("days", [False, True])
def test_an_excel_workbook_is_released_as_each_persons_rows_alone(client, tmp_path, capsys, days):
    """An .xlsx table (times as dates, or as Excel's day numbers): each person's release is the one ``lmdk export`` makes of that
    person's rows in a workbook of their own."""
    openpyxl = pytest.importorskip("openpyxl")

    def book(path, rows):
        wb = openpyxl.Workbook()
        wb.active.append(["meter", "timestamp", "kwh"][-len(rows[0]):])
        for r in rows:
            wb.active.append(r)
        wb.save(path)

    t = pd.date_range("2013-01-01", periods=90, freq="h").to_pydatetime()
    if days:  # a date column not formatted as dates: Excel's day numbers, read as dates in both paths
        t = [41275 + i / 24 for i in range(len(t))]
    rng = np.random.default_rng(2)
    rows = [[pid, ts, round(float(v), 3)] for pid in ("m1", "m2")
            for ts, v in zip(t, rng.gamma(2, 0.5, len(t)), strict=True)]
    book(tmp_path / "all.xlsx", rows)

    def alone(pid):
        book(tmp_path / "one.xlsx", [r[1:] for r in rows if r[0] == pid])
        return tmp_path / "one.xlsx"

    _each_as_alone(capsys, client, tmp_path, tmp_path / "all.xlsx", "meter", ("m1", "m2"), alone)
