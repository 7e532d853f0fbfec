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
* ``peak_rss_mb`` per worker: ``ru_maxrss`` of each worker process after its runs, next to its RSS after
  warm-up and the largest person's rows held as text.

The three are run in interleaved rounds (``--rounds``, default 2) and each keeps its best round.

Targets (issue 16): 2 workers ≥ 1.7× one; 1 worker ≥ 0.8× the loop; peak memory per worker ≤ 4× the largest
person's data + a constant. On a shared machine the ratios are only as good as the CPU we are given: the
script prints ``cpus``, the load average and the CPU seconds each worker got next to the figures.
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

from lmdk_gui.core.analysis.suggestions import apply_rule  # noqa: E402
from lmdk_gui.core.data.loader import load_dataframe_series  # noqa: E402
from lmdk_gui.core.kernel.settings import PrivacySettings  # noqa: E402
from lmdk_gui.core.publish.batch import BatchOptions, _typed, run_batch  # noqa: E402
from lmdk_gui.core.publish.export import ExportOptions, export_release, new_export_key  # noqa: E402

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
                       ExportOptions(scheme=scheme, seed=new_export_key()))
    shutil.rmtree(d)
    return psutil.Process().memory_info().rss


def cpu_seconds() -> float:
    import psutil

    t = psutil.Process().cpu_times()
    return t.user + t.system


def peak_rss() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def loop(path: Path, out: Path, scheme: str, key: bytes) -> int:
    from lmdk_gui.core.publish.batch import export_seed, person_key

    opts = BatchOptions(id_col="household", scheme=scheme, settings=PrivacySettings())
    table = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], engine="pyarrow")
    rows = 0
    for pid, g in table.groupby("household", sort=False):
        s = load_dataframe_series(_typed(g.drop(columns=["household"]), opts), name=f"id {pid}")
        export_release(s, apply_rule(s, "threshold", **RULE), PrivacySettings(), out / f"{pid}.csv",
                       ExportOptions(scheme=scheme, seed=export_seed(person_key(key, str(pid)))))
        rows += s.n
    return rows


class Cluster:
    """A LocalCluster of ``workers`` processes, started and warmed up once (not timed: ``startup_s``)."""

    def __init__(self, workers: int, small: Path, out: Path, opts: BatchOptions) -> None:
        from distributed import Client, LocalCluster

        t0 = time.perf_counter()
        self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1",
                                    dashboard_address=None)
        self.client = Client(self.cluster)
        self.base = self.client.run(warm_up)
        run_batch(small, out, opts, client=self.client)
        self.startup = time.perf_counter() - t0

    def run(self, path: Path, out: Path, opts: BatchOptions) -> tuple[float, object]:
        cpu0 = self.client.run(cpu_seconds)
        start, driver0 = time.perf_counter(), time.process_time()
        s = run_batch(path, out, opts, client=self.client)
        seconds = time.perf_counter() - start
        self.driver_cpu = round(time.process_time() - driver0, 1)  # client + in-process scheduler
        cpu1 = self.client.run(cpu_seconds)
        # CPU seconds each worker got during the run: with W workers each should get ≈ 1/W of one worker's
        # total; if the wall time does not shrink as much, the machine did not give us W cores.
        self.cpu = sorted(round(cpu1[k] - cpu0[k], 1) for k in cpu1)
        assert s.failed == 0 and s.released == s.persons, s.errors[:3]
        shutil.rmtree(out)
        return seconds, s

    def close(self) -> dict:
        peaks = self.client.run(peak_rss)
        self.client.close()
        self.cluster.close()
        return {"startup_s": round(self.startup, 1), "worker_cpu_s_last_round": self.cpu,
                "driver_cpu_s_last_round": self.driver_cpu,
                "rss_after_warmup_mb": sorted(round(v / 2**20) for v in self.base.values()),
                "peak_rss_mb": sorted(round(v / 2**20) for v in peaks.values())}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--persons", type=int, default=1000)
    ap.add_argument("--hours", type=int, default=8760)
    ap.add_argument("--scheme", default="uniform")
    ap.add_argument("--blocksize-mb", type=float, default=32.0,
                    help="CSV bytes per partition (scale down with --persons so both workers get partitions)")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds; the best of each is kept")
    a = ap.parse_args()
    key = bytes.fromhex(new_export_key())  # (a patterned key such as bytes(range(16)) is refused)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        path = d / "meters.csv"
        make_table(path, a.persons, a.hours)
        make_table(d / "small.csv", 2, 100)
        rows = a.persons * a.hours
        print(json.dumps({"figure": "batch_setup", "persons": a.persons, "hours": a.hours, "rows": rows,
                          "scheme": a.scheme, "blocksize_mb": a.blocksize_mb, "rounds": a.rounds,
                          "csv_mb": round(path.stat().st_size / 2**20, 1), "cpus": os.cpu_count(),
                          "loadavg_before": [round(x, 1) for x in os.getloadavg()]}), flush=True)
        opts = BatchOptions(id_col="household", scheme=a.scheme, settings=PrivacySettings(), key=key,
                            rule="threshold", rule_params=RULE, blocksize=int(a.blocksize_mb * 2**20))
        warm_up()
        (d / "warm").mkdir()
        loop(d / "small.csv", d / "warm", a.scheme, key)
        clusters = {w: Cluster(w, d / "small.csv", d / f"warm{w}", opts) for w in (1, 2)}
        best = {"loop": float("inf"), 1: float("inf"), 2: float("inf")}
        summary = {}
        # Interleaved rounds: the machine's other load shifts over minutes; each figure keeps its best round.
        for _ in range(a.rounds):
            (d / "loop").mkdir()
            start, cpu0 = time.perf_counter(), time.process_time()
            assert loop(path, d / "loop", a.scheme, key) == rows
            best["loop"] = min(best["loop"], time.perf_counter() - start)
            loop_cpu = time.process_time() - cpu0
            shutil.rmtree(d / "loop")
            for w, c in clusters.items():
                seconds, summary[w] = c.run(path, d / f"b{w}", opts)
                best[w] = min(best[w], seconds)
        print(json.dumps({"figure": "loop", "seconds": round(best["loop"], 2),
                          "rows_per_s": round(rows / best["loop"]), "cpu_s_last_round": round(loop_cpu, 1)}),
              flush=True)
        for w, c in clusters.items():
            s = summary[w]
            print(json.dumps({"figure": f"batch_{w}w", "seconds": round(best[w], 2),
                              "rows_per_s": round(rows / best[w]), "input_partitions": s.input_partitions,
                              "max_task_rows": s.max_task_rows, **c.close()}), flush=True)
        person_text_mb = pd.read_csv(path, nrows=a.hours, dtype=str).memory_usage(deep=True).sum() / 2**20
        print(json.dumps({
            "figure": "batch_ratios",
            "two_vs_one": round(best[1] / best[2], 2), "target_two_vs_one": 1.7,
            "one_vs_loop": round(best["loop"] / best[1], 2), "target_one_vs_loop": 0.8,
            "largest_person_text_mb": round(person_text_mb, 1),
            "loadavg_after": [round(x, 1) for x in os.getloadavg()],
        }), flush=True)


if __name__ == "__main__":
    main()
