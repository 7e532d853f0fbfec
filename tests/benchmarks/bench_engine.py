"""Issue 2 figures: recompute after a landmark toggle, and loading a 10^6-row CSV.

Run: ``python tests/benchmarks/bench_engine.py [toggle_preview [kind]]`` — prints one JSON line per figure, each next to its
baseline measured in the same run (these machines are noisy; compare ratios, not seconds).

* ``recompute_n``: all five allocations + releases + MAE after toggling one landmark (20% landmarks), best of
  7, next to numpy drawing n Laplace samples (the floor). Target: ≤ 10× the floor at n = 10^6.
* ``toggle_preview_n`` (issue 15): what the window's worker does after a click (``compute_preview`` with the
  session's noise cache and memo), min/median of 7 alternating with the floor. Target: ≤ 5× at 10^6.
* ``load_csv_1e6``: ``load_series`` of a 10^6-row numeric CSV next to plain ``pandas.read_csv``. Target ≤ 1.5×.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from timing import best_of  # noqa: E402  (tests/benchmarks/timing.py, the scripts' folder)

from lmdk_gui.core.analysis.metrics import mae  # noqa: E402
from lmdk_gui.core.data.loader import load_series  # noqa: E402
from lmdk_gui.core.data.series import Series  # noqa: E402
from lmdk_gui.core.engine.pipeline import compute_all  # noqa: E402
from lmdk_gui.core.kernel.noise import UnitNoise  # noqa: E402
from lmdk_gui.core.kernel.settings import PrivacySettings  # noqa: E402


def recompute(n: int) -> dict:
    rng = np.random.default_rng(1)
    s = Series.from_arrays(rng.random(n) * 5)
    noise = UnitNoise(n, 0)
    st = PrivacySettings()
    lm = np.sort(rng.choice(n, n // 5, replace=False))
    compute_all(s, lm, st, noise)  # warm: numba compile, unit noise drawn once per (series, seed)
    toggles = iter(range(10**9))

    def one():
        row = next(toggles) * 7919 % n
        lm2 = np.union1d(lm, [row]) if row not in lm else lm[lm != row]
        rel = compute_all(s, lm2, st, noise)
        for r in rel.values():
            mae(s, r)

    t = best_of(one, 7)
    floor = best_of(lambda: np.random.default_rng(2).laplace(0.0, 1.0, n), 7)
    return {"figure": f"recompute_{n}", "seconds": t, "baseline": "numpy Generator.laplace(n)",
            "baseline_seconds": floor, "ratio": t / floor, "target_ratio": 10}


def toggle_preview(n: int, repeats: int = 7, kind: str = "numeric") -> dict:
    """Issue 15: the session's worker after one click (``compute_preview`` with its noise cache and memo, 20 %
    scattered landmarks), alternating with the numpy floor; min and median. The raw preview (denoising off):
    denoising is a later stage of its own."""
    import statistics
    import time

    from lmdk_gui.core.engine.preview import NoiseCache, Snapshot, compute_preview

    rng = np.random.default_rng(1)
    if kind == "numeric":
        s = Series.from_arrays(rng.random(n) * 5)
    elif kind == "location":
        s = Series.from_arrays(np.column_stack([45 + rng.random(n) * 0.01, 7 + rng.random(n) * 0.01]),
                               kind="location")
    else:
        s = Series.from_arrays(rng.integers(0, 3, n), kind="categorical", categories=("a", "b", "c"))
    lm = np.sort(rng.choice(n, n // 5, replace=False))
    ps = PrivacySettings(denoise=False)
    cache = NoiseCache()
    compute_preview(Snapshot(s, lm, ps, 1), cache)  # warm: compile, unit noise, memo
    ours, floors = [], []
    for i in range(repeats):
        row = (i * 7919 + 13) % n
        j = int(np.searchsorted(lm, row))
        lm = np.delete(lm, j) if j < lm.size and lm[j] == row else np.insert(lm, j, row)  # as the session
        t = time.perf_counter()
        compute_preview(Snapshot(s, lm, ps, 1), cache)
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        np.random.default_rng(i).laplace(0.0, 1.0, n)
        floors.append(time.perf_counter() - t)
    med, floor = statistics.median(ours), statistics.median(floors)
    return {"figure": f"toggle_preview_{kind}_{n}" if kind != "numeric" else f"toggle_preview_{n}", "seconds_min": min(ours), "seconds": med,
            "baseline": "numpy Generator.laplace(n), alternating", "baseline_seconds": floor,
            "ratio": med / floor, "target_ratio": 5}


def load(n: int = 10**6) -> dict:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "big.csv"
        t0 = np.datetime64("2000-01-01T00:00:00")
        times = t0 + np.arange(n) * np.timedelta64(60, "s")
        vals = np.random.default_rng(0).random(n) * 10
        pd.DataFrame({"timestamp": np.datetime_as_string(times, unit="s"), "kwh": vals}).to_csv(path, index=False)
        ours = best_of(lambda: load_series(path), 3)
        base = best_of(lambda: pd.read_csv(path), 3)
    return {"figure": "load_csv_1e6", "seconds": ours, "baseline": "pandas.read_csv", "baseline_seconds": base,
            "ratio": ours / base, "target_ratio": 1.5}


def main() -> None:
    if sys.argv[1:2] == ["toggle_preview"]:  # only these: toggle_preview [numeric|location|categorical]
        for n in (10**5, 10**6):
            print(json.dumps(toggle_preview(n, kind=(sys.argv[2:3] or ["numeric"])[0])), flush=True)
        return
    for n in (10**4, 10**5, 10**6):
        print(json.dumps(recompute(n)), flush=True)
    for n in (10**5, 10**6):
        print(json.dumps(toggle_preview(n)), flush=True)
    print(json.dumps(load()), flush=True)


if __name__ == "__main__":
    main()
