"""Benchmark: ``load_series`` on a 10^6-row numeric CSV against plain ``pandas.read_csv`` of the same file.

Run as ``python tests/benchmarks/bench_loader.py`` (pytest does not collect this folder). Prints one JSON
line per figure. Target: ``load_csv_1e6`` ratio <= 1.5, the loader's time including reading and hashing the
file, sniffing, detection, validation, sorting and duplicate checks. The loader is *faster* than a plain
``read_csv`` because the C parser converts the ISO timestamps itself (see lmdk_gui/core/data/loader.py); the
second figure compares with a ``read_csv`` that does the same, to show what the checks cost.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from timing import best_of  # noqa: E402  (tests/benchmarks/timing.py, the scripts' folder)

from lmdk_gui.core.data.loader import load_series

N_ROWS = 1_000_000
REPEATS = 3


def write_numeric_csv(path: Path, n: int = N_ROWS, seed: int = 0) -> None:
    """ISO timestamps (one per minute) and a float value with 3 decimals, like the HUE file."""
    times = pd.date_range("2000-01-01", periods=n, freq="min").strftime("%Y-%m-%d %H:%M:%S")
    values = np.round(np.random.default_rng(seed).gamma(2.0, 0.6, n), 3)
    pd.DataFrame({"timestamp": times, "kwh": values}).to_csv(path, index=False)



def bench_load_csv_1e6(tmp: Path) -> dict[str, object]:
    path = tmp / "numeric_1e6.csv"
    write_numeric_csv(path)
    series = load_series(path)  # warm-up, and a sanity check
    assert series.n == N_ROWS and series.kind == "numeric"
    baseline = best_of(lambda: pd.read_csv(path))
    ours = best_of(lambda: load_series(path))
    return {
        "figure": "load_csv_1e6",
        "rows": N_ROWS,
        "bytes": path.stat().st_size,
        "seconds": round(ours, 4),
        "baseline": "pandas.read_csv",
        "baseline_seconds": round(baseline, 4),
        "ratio": round(ours / baseline, 3),
        "pandas": pd.__version__,
        "python": sys.version.split()[0],
    }


def bench_load_csv_1e6_vs_parse_dates(tmp: Path) -> dict[str, object]:
    """Context figure: against a read_csv that also parses the timestamps (what the loader really does)."""
    path = tmp / "numeric_1e6.csv"
    if not path.exists():
        write_numeric_csv(path)
    baseline = best_of(lambda: pd.read_csv(path, parse_dates=["timestamp"], date_format="ISO8601"))
    ours = best_of(lambda: load_series(path))
    return {
        "figure": "load_csv_1e6_vs_parse_dates",
        "rows": N_ROWS,
        "seconds": round(ours, 4),
        "baseline": "pandas.read_csv(parse_dates=['timestamp'], date_format='ISO8601')",
        "baseline_seconds": round(baseline, 4),
        "ratio": round(ours / baseline, 3),
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for bench in (bench_load_csv_1e6, bench_load_csv_1e6_vs_parse_dates):
            print(json.dumps(bench(Path(tmp))), flush=True)


if __name__ == "__main__":
    main()
