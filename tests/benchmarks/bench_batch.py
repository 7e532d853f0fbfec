"""Issue 16 figures: ``lmdk batch`` throughput on 1 and 2 local Dask workers next to a plain loop.

Run: ``python tests/benchmarks/bench_batch.py [--persons 1000] [--hours 8760] [--scheme uniform]`` — one JSON
line per figure, all measured in the same run on the same synthetic table (P persons × H hourly kWh events,
grouped by person as meter exports are, 3 decimals):

* ``loop``: one process reads the table (pandas, the same pyarrow CSV engine), then for each person
  ``load_dataframe_series`` + ``export_release`` (the export engine alone: no markers, no manifest).
* ``batch_1w`` / ``batch_2w``: ``run_batch`` on a ``LocalCluster`` of 1 / 2 processes (loopback), the
  whole job: checksum, count pass, releases, per-person markers, manifest. Not timed (reported as
  ``startup_s``): starting the cluster and a warm-up batch of 2 small persons, so that every process (the
  loop's too, which reads and releases a small table first) has its modules imported and numba's kernels
  loaded — the steady state of a long job.
* ``peak_rss_mb`` per worker: ``ru_maxrss`` of each worker process after its run, next to its RSS after
  warm-up and the largest person's rows held as text.

Targets (issue 16): 2 workers ≥ 1.7× one; 1 worker ≥ 0.8× the loop; peak memory per worker ≤ 4× the largest
person's data + a constant. On a shared machine the ratios are only as good as the CPU we are given: the
script prints ``cpus`` and the load average next to the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from lmdk_gui.core.batch import BatchOptions, _typed, run_batch  # noqa: E402
from lmdk_gui.core.export import ExportOptions, export_release  # noqa: E402
from lmdk_gui.core.loader import load_dataframe_series  # noqa: E402
from lmdk_gui.core.settings import PrivacySettings  # noqa: E402
from lmdk_gui.core.suggestions import apply_rule  # noqa: E402

RULE = {"above": 3.0}  # landmarks: the hours above 3 kWh (≈ 2 % of events)


def make_table(path: Path, persons: int, hours: int) -> None:
    t = pd.date_range("2013-01-01", periods=hours, freq="h").strftime("%Y-%m-%d %H:%M:%S")
    rng = np.random.default_rng(0)
    with open(path, "w") as f:
        f.write("household,timestamp,kwh\n")
        for p in range(persons):
            pd.DataFrame({"household": f"MAC{p:06d}", "timestamp": t,
                          "kwh": np.round(rng.gamma(2, 0.5, hours), 3)}).to_csv(f, header=False, index=False)


def warm_up() -> int:
    """Load numba's kernels in this process (each worker pays this once); returns RSS after, in bytes."""
    import psutil

    s = load_dataframe_series(pd.DataFrame({"timestamp": ["2013-01-01 00:00:00", "2013-01-01 01:00:00"],
                                            "kwh": [1.0, 4.0]}))
    d = tempfile.mkdtemp()
    for scheme in ("uniform", "skip", "adaptive"):
        export_release(s, np.array([1]), PrivacySettings(), Path(d) / f"{scheme}.csv",
                       ExportOptions(scheme=scheme, seed=1))
    shutil.rmtree(d)
    return psutil.Process().memory_info().rss


def peak_rss() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def loop(path: Path, out: Path, scheme: str, key: bytes) -> int:
    from lmdk_gui.core.batch import export_seed, person_key

    opts = BatchOptions(id_col="household", scheme=scheme, settings=PrivacySettings())
    table = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], engine="pyarrow")
    rows = 0
    for pid, g in table.groupby("household", sort=False):
        s = load_dataframe_series(_typed(g.drop(columns=["household"]), opts), name=f"id {pid}")
        export_release(s, apply_rule(s, "threshold", **RULE), PrivacySettings(), out / f"{pid}.csv",
                       ExportOptions(scheme=scheme, seed=export_seed(person_key(key, str(pid)))))
        rows += s.n
    return rows


def batch(path: Path, small: Path, out: Path, scheme: str, key: bytes, workers: int, blocksize: int) -> dict:
    from distributed import Client, LocalCluster

    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None)
    client = Client(cluster)
    try:
        base = client.run(warm_up)
        opts = BatchOptions(id_col="household", scheme=scheme, settings=PrivacySettings(), key=key,
                            rule="threshold", rule_params=RULE, blocksize=blocksize)
        run_batch(small, out.with_name(out.name + "-warm"), opts, client=client)
        startup = time.perf_counter() - t0
        start = time.perf_counter()
        s = run_batch(path, out, opts, client=client)
        seconds = time.perf_counter() - start
        peaks = client.run(peak_rss)
    finally:
        client.close()
        cluster.close()
    assert s.failed == 0 and s.released == s.persons, s.errors[:3]
    return {"seconds": round(seconds, 2), "rows_per_s": round(s.rows / seconds), "startup_s": round(startup, 1),
            "input_partitions": s.input_partitions, "max_task_rows": s.max_task_rows,
            "rss_after_warmup_mb": sorted(round(v / 2**20) for v in base.values()),
            "peak_rss_mb": sorted(round(v / 2**20) for v in peaks.values())}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--persons", type=int, default=1000)
    ap.add_argument("--hours", type=int, default=8760)
    ap.add_argument("--scheme", default="uniform")
    ap.add_argument("--blocksize-mb", type=float, default=32.0,
                    help="CSV bytes per partition (scale down with --persons so both workers get partitions)")
    a = ap.parse_args()
    key = bytes(range(16))
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        path = d / "meters.csv"
        make_table(path, a.persons, a.hours)
        rows = a.persons * a.hours
        meta = {"persons": a.persons, "hours": a.hours, "rows": rows, "scheme": a.scheme,
                "blocksize_mb": a.blocksize_mb,
                "csv_mb": round(path.stat().st_size / 2**20, 1), "cpus": os.cpu_count(),
                "loadavg_before": [round(x, 1) for x in os.getloadavg()]}
        print(json.dumps({"figure": "batch_setup", **meta}), flush=True)

        make_table(d / "small.csv", 2, 100)
        warm_up()
        (d / "warm").mkdir()
        loop(d / "small.csv", d / "warm", a.scheme, key)
        (d / "loop").mkdir()
        start = time.perf_counter()
        n = loop(path, d / "loop", a.scheme, key)
        t_loop = time.perf_counter() - start
        assert n == rows
        print(json.dumps({"figure": "loop", "seconds": round(t_loop, 2), "rows_per_s": round(rows / t_loop)}),
              flush=True)
        shutil.rmtree(d / "loop")

        res = {}
        for w in (1, 2):
            res[w] = batch(path, d / "small.csv", d / f"b{w}", a.scheme, key, w, int(a.blocksize_mb * 2**20))
            print(json.dumps({"figure": f"batch_{w}w", **res[w]}), flush=True)
            shutil.rmtree(d / f"b{w}")
        person_text_mb = round(pd.read_csv(path, nrows=a.hours, dtype=str).memory_usage(deep=True).sum() / 2**20, 1)
        print(json.dumps({
            "figure": "batch_ratios",
            "two_vs_one": round(res[2]["rows_per_s"] / res[1]["rows_per_s"], 2), "target_two_vs_one": 1.7,
            "one_vs_loop": round(res[1]["rows_per_s"] / (rows / t_loop), 2), "target_one_vs_loop": 0.8,
            "largest_person_text_mb": person_text_mb,
            "loadavg_after": [round(x, 1) for x in os.getloadavg()],
        }), flush=True)


if __name__ == "__main__":
    main()
