"""Benchmark and evaluation of dummy landmark selection (issue 6; thesis §4.2, §5.3.3).

Run as ``python tests/benchmarks/bench_dummies.py`` (pytest does not collect this folder). Prints one JSON
line per figure, each with a baseline measured in the same run (``numpy.sort`` of n random floats).

* ``partitioned_select_1e5``: select_dummies with Partitioned at n = 10^5 and 20 % landmarks (target ≤ 2 s).
* ``heuristic_*``: Heuristic generation times (scattered landmarks; worst case without landmarks).
* ``optimal_m*``: Optimal generation times per number of regular events m (the limit is
  ``OPTIMAL_MAX_REGULAR``); ``--slow`` adds m = 12.
* ``--figure56 [--runs R]``: the thesis' Figure 5.6 on the bundled real data (tests/data): MAE of Uniform,
  Skip and Adaptive without and with the module (Partitioned, share 1 %, count utility), averaged over R
  runs (default 30), at 0–100 % landmarks; one JSON line per (data set, landmark %, scheme).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from timing import best_of  # noqa: E402  (tests/benchmarks/timing.py, the scripts' folder)

from lmdk_gui.core.analysis.metrics import mae_over_runs
from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.kernel import dummies as dm
from lmdk_gui.core.kernel import mechanisms
from lmdk_gui.core.kernel.settings import LANDMARK_SCHEMES, PrivacySettings

DATA = Path(__file__).resolve().parent.parent / "data"



def sort_baseline(n: int) -> float:
    x = np.random.default_rng(0).random(n)
    return best_of(lambda: np.sort(x), 5)


def emit(d: dict) -> None:
    print(json.dumps(d), flush=True)


def warm_up() -> None:
    """Compile (or load from numba's cache) every kernel so that timings exclude compilation."""
    dm.heuristic(12, [3])
    dm.optimal(6, [2])
    dm.partitioned(12, [2, 3, 9])


# ---------------------------------------------------------------------------------- speed
def bench_partitioned() -> None:
    n = 100_000
    rng = np.random.default_rng(1)
    lm = np.flatnonzero(rng.random(n) < 0.2)
    gen = best_of(lambda: dm.partitioned(n, lm))
    for utility in dm.UTILITIES:
        sel = best_of(lambda u=utility: dm.select_dummies(n, lm, epsilon=1.0, utility=u,
                                                         rng=np.random.default_rng(2)))
        base = sort_baseline(n)
        emit({"figure": f"partitioned_select_1e5_{utility}", "n": n, "landmarks": int(lm.size),
              "seconds": round(sel, 4), "generation_seconds": round(gen, 4), "target_seconds": 2.0,
              "baseline": "numpy.sort(n floats)", "baseline_seconds": round(base, 5),
              "ratio": round(sel / base, 1)})
    # Clustered landmarks: one block of 20 % in the middle (small IQR -> many bins).
    lm = np.arange(40_000, 60_000)
    gen = best_of(lambda: dm.partitioned(n, lm))
    emit({"figure": "partitioned_generate_1e5_block", "n": n, "landmarks": int(lm.size),
          "bins": dm.partitioned(n, lm).n_bins, "seconds": round(gen, 4),
          "baseline": "numpy.sort(n floats)", "baseline_seconds": round(sort_baseline(n), 5)})


def bench_heuristic() -> None:
    rng = np.random.default_rng(3)
    for n, p in ((10_000, 0.2), (30_000, 0.2), (100_000, 0.2), (10_000, 0.0), (20_000, 0.0)):
        lm = np.flatnonzero(rng.random(n) < p)
        sec = best_of(lambda n=n, lm=lm: dm.heuristic(n, lm), 1)
        emit({"figure": f"heuristic_n{n}_{int(p * 100)}pct", "n": n, "landmarks": int(lm.size),
              "seconds": round(sec, 4), "baseline": "numpy.sort(n floats)",
              "baseline_seconds": round(sort_baseline(n), 5)})


def bench_optimal(slow: bool) -> None:
    for m in (9, 10, 11, *((12,) if slow else ())):
        n = m + 3
        sec = best_of(lambda n=n, m=m: dm.optimal(n, [0, 4, n - 1], max_regular=m), 1)
        emit({"figure": f"optimal_m{m}", "regular_events": m, "chains": int(np.prod(np.arange(1, m + 1))),
              "seconds": round(sec, 4), "limit": dm.OPTIMAL_MAX_REGULAR,
              "baseline": "numpy.sort(1e5 floats)", "baseline_seconds": round(sort_baseline(100_000), 5)})


# ---------------------------------------------------------------------------------- Figure 5.6
PCTS = (0, 20, 40, 60, 80, 100)
ROWS = 1000  # the thesis samples the first 1,000 entries of each data set (§5.1.2)


def lowest(values: np.ndarray, pct: int) -> np.ndarray:
    """The pct % events with the lowest values (stable order): the thesis' threshold rule (§5.1.3)."""
    k = int(round(values.size * pct / 100))
    return np.sort(np.argsort(values, kind="stable")[:k]).astype(np.int64)


def energy() -> dict[int, tuple[Series, np.ndarray]]:
    s = load_series(DATA / "energy_hue_residential1_2013.csv", duplicates="first")
    s = Series.from_arrays(s.values[:ROWS], times=s.times[:ROWS])
    return {p: (s, lowest(s.values, p)) for p in PCTS}


def gps() -> dict[int, tuple[Series, np.ndarray]]:
    """Landmarks: the events where the bus moves slowest (speed to the next fix), a simple stand-in for
    stay points (thesis: Li et al.'s stay-point detection on T-drive)."""
    s = load_series(DATA / "gps_bus_limerick_2019-02-18.csv")
    xy, t = s.values[:ROWS], s.times[:ROWS].astype("int64") / 1e9
    dist = mechanisms.haversine(xy[:-1], xy[1:])
    speed = dist / np.maximum(np.diff(t), 1.0)
    speed = np.append(speed, speed[-1])
    series = Series.from_arrays(xy, times=s.times[:ROWS])
    return {p: (series, lowest(speed, p)) for p in PCTS}


def contacts() -> dict[int, tuple[Series, np.ndarray]]:
    """As the thesis does for Copenhagen (§5.1.3): landmarks are the contacts with a chosen set of persons,
    and the released value is binary, "is the current contact a landmark contact?" (randomized response over
    the public categories 0/1). The set of persons grows greedily (most frequent first, skipping any that
    overshoots the target share by more than 2 points), as the thesis extends its list of devices."""
    df = pd.read_csv(DATA / "contacts_highschool2012_person1672.csv")
    df = df.drop_duplicates("timestamp", keep="first").head(ROWS)
    other = np.where(df["i"] == 1672, df["j"], df["i"])
    times = pd.to_datetime(df["timestamp"], unit="s").to_numpy()
    counts = pd.Series(other).value_counts()
    out = {}
    for p in PCTS:
        target = other.size * p / 100
        chosen, total = [], 0
        for person, c in counts.items():
            if total + c <= target + 0.02 * other.size:
                chosen.append(person)
                total += c
        is_lm = np.isin(other, chosen)
        series = Series.from_arrays(is_lm.astype(np.int64), kind="categorical", times=times,
                                    categories=("0", "1"))
        out[p] = (series, np.flatnonzero(is_lm).astype(np.int64))
    return out


def _nanmean(values: list[float]) -> float:
    a = np.asarray(values, dtype=np.float64)
    return float(np.nanmean(a)) if np.any(np.isfinite(a)) else float("nan")


def figure56(runs: int) -> list[dict]:
    """Without the module: MAE over ``runs`` noise draws on L with ε. With it: per run, a fresh dummy
    selection (seeded) and a release on L' with ε − ε_sel. Skip publishes nothing when every event is a
    landmark (no public fallback), so its MAE is then undefined: those runs are left out and counted."""
    eps = 1.0
    rows = []
    for name, cases, settings in (
        ("HUE energy (kWh)", energy(), PrivacySettings(epsilon=eps)),
        ("Limerick bus GPS (m)", gps(), PrivacySettings(epsilon=eps, radius_m=100.0)),
        ("SocioPatterns contacts (mismatch rate)", contacts(), PrivacySettings(epsilon=eps, categories=("0", "1"))),
    ):
        for pct, (series, lm) in cases.items():
            schemes = (*LANDMARK_SCHEMES, "user")
            without = mae_over_runs(series, lm, settings, runs=runs, seed=0, schemes=schemes)
            acc: dict[str, list[float]] = {s: [] for s in LANDMARK_SCHEMES}
            sizes = []
            for r in range(runs):
                sel = dm.select_dummies(series.n, lm, epsilon=eps, share=0.01, generator="partitioned",
                                        utility="count", rng=np.random.default_rng(1000 + r))
                sizes.append(sel.landmarks.size)
                with_ = mae_over_runs(series, sel.landmarks, settings.with_(epsilon=sel.epsilon_remaining),
                                      runs=1, seed=r, schemes=LANDMARK_SCHEMES)
                for s in LANDMARK_SCHEMES:
                    acc[s].append(with_[s].mean)
            for s in LANDMARK_SCHEMES:
                row = {"figure": "figure56", "data": name, "n": series.n, "target_pct": pct,
                       "landmark_pct": round(100 * lm.size / series.n, 1),
                       "landmark_pct_with_dummies": round(100 * float(np.mean(sizes)) / series.n, 1),
                       "scheme": s, "mae": without[s].mean, "mae_with_module": _nanmean(acc[s]),
                       "runs_undefined_with_module": int(np.sum(~np.isfinite(acc[s]))),
                       "user_level_mae": without["user"].mean, "runs": runs}
                rows.append(row)
                emit(row)
    return rows


def markdown_table(rows: list[dict]) -> str:
    lines = ["| data | landmarks % | with dummies % | Uniform | Uniform + module | Skip | Skip + module "
             "| Adaptive | Adaptive + module | User-level |", "|---|---|---|---|---|---|---|---|---|---|"]
    key = {}
    for r in rows:
        key.setdefault((r["data"], r["target_pct"]), {})[r["scheme"]] = r
    for (data, _), d in key.items():
        u = d["uniform"]
        cells = [data, f"{u['landmark_pct']:.0f}", f"{u['landmark_pct_with_dummies']:.0f}"]
        for s in LANDMARK_SCHEMES:
            undefined = d[s]["runs_undefined_with_module"]
            note = f" ({undefined}/{d[s]['runs']} runs: nothing released)" if undefined else ""
            cells += [f"{d[s]['mae']:.3g}", f"{d[s]['mae_with_module']:.3g}{note}"]
        cells.append(f"{u['user_level_mae']:.3g}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--figure56", action="store_true", help="reproduce Figure 5.6 instead of timing")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--slow", action="store_true", help="also time Optimal at 12 regular events (~10 s)")
    args = ap.parse_args(argv)
    warm_up()
    if args.figure56:
        with warnings.catch_warnings():  # nan means of Skip with every event a landmark
            warnings.simplefilter("ignore", RuntimeWarning)
            rows = figure56(args.runs)
        print(markdown_table(rows), file=sys.stderr)
        return
    bench_partitioned()
    bench_heuristic()
    bench_optimal(args.slow)


if __name__ == "__main__":
    main()
