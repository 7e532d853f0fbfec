"""Benchmark: the utility evaluation (issue 8), 6 percentages × 5 schemes × 100 runs on 10^4 events.

Run as ``python tests/benchmarks/bench_evaluation.py`` (pytest does not collect this folder). Prints one JSON
line per figure. Target (brief): at most 2× the *floor*, measured in the same run:

    floor = Σ over (percentage, scheme) of the time of one ``compute_release`` + ``mae``  ×  runs

i.e. the time of one release computation and its error, times the number of releases (3,000). The floor's
releases use unit noise drawn beforehand, so drawing the 100 runs' noise is not in the floor but is in our
time. Each (percentage, scheme) release is timed as the best of a few repeats. Also reported: the naive loop
itself (fresh ``UnitNoise`` per run, then ``compute_release`` + ``mae`` for every release: what
``mae_over_runs`` does per landmark set), and ``evaluate`` with two threads.

Numeric, location and categorical series are measured; numeric is the brief's figure. Landmark sets: the
uniform synthetic placement (seeded).

``python tests/benchmarks/bench_evaluation.py --figures resources/figures [--runs 100]`` instead runs the
thesis' Figure 5.1 experiment on the three bundled real data sets (the same as the ``lmdk evaluate``
commands in notes/evaluation.md), prints one JSON line per data set and writes ``eval_energy.png``,
``eval_gps.png``, ``eval_contacts.png``. It also prints the thesis' *binary* contact encoding (the
randomized attribute is "the current contact is on the landmark list", k = 2) for comparison.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from timing import best_of  # noqa: E402  (tests/benchmarks/timing.py, the scripts' folder)

from lmdk_gui.core.analysis.evaluation import DEFAULT_PERCENTAGES, evaluate, landmark_sets
from lmdk_gui.core.analysis.metrics import mae
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine.pipeline import compute_release
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, PrivacySettings

N = 10_000
RUNS = 100
REPEATS = 3



def make_series(kind: str, n: int = N) -> Series:
    rng = np.random.default_rng(0)
    times = (np.datetime64("2020-01-01T00:00:00") + np.arange(n) * np.timedelta64(60, "s")).astype("datetime64[ns]")
    if kind == "numeric":
        return Series("numeric", times, rng.gamma(2.0, 0.5, n), name="synthetic energy", unit="kWh")
    if kind == "location":
        steps = rng.normal(0.0, 2e-4, (n, 2))
        return Series("location", times, np.array([52.66, -8.63]) + np.cumsum(steps, axis=0), name="synthetic track",
                      unit="deg")
    cats = tuple(f"c{i}" for i in range(20))
    codes = np.minimum(rng.geometric(0.3, n) - 1, 19).astype(np.int64)
    return Series("categorical", times, codes, categories=cats, name="synthetic contacts")


def floor_seconds(series: Series, settings: PrivacySettings) -> tuple[float, dict[str, float]]:
    sets = landmark_sets(series, DEFAULT_PERCENTAGES, placement="uniform", seed=0)
    noise = UnitNoise(series.n, 1)
    noise.laplace, noise.gamma, noise.angle, noise.keep, noise.other, noise.sample  # noqa: B018 - pre-draw
    per_scheme = dict.fromkeys(ALL_SCHEMES, 0.0)
    for ls in sets:
        for s in ALL_SCHEMES:
            per_scheme[s] += best_of(lambda ls=ls, s=s: mae(series, compute_release(series, ls.rows, settings, s, noise),
                                                            settings), 5)
    total_one_each = sum(per_scheme.values())  # one release of every (percentage, scheme)
    return total_one_each * RUNS, {s: v / len(sets) for s, v in per_scheme.items()}


def naive_loop(series: Series, settings: PrivacySettings) -> float:
    sets = landmark_sets(series, DEFAULT_PERCENTAGES, placement="uniform", seed=0)
    start = time.perf_counter()
    for ls in sets:
        for r in range(RUNS):
            noise = UnitNoise(series.n, 1 + r)
            for s in ALL_SCHEMES:
                mae(series, compute_release(series, ls.rows, settings, s, noise), settings)
    return time.perf_counter() - start


ROOT = Path(__file__).resolve().parents[2]
#: (figure name, file, load options, evaluate options) — the README figures
REAL = (
    ("energy", ROOT / "tests" / "data" / "energy_hue_residential1_2013.csv", {"duplicates": "first"},
     {"rule": "threshold", "vary": "below"}),
    ("gps", ROOT / "tests" / "data" / "gps_bus_limerick_2019-02-18.csv", {},
     {"rule": "stay", "vary": "duration_min", "rule_params": {"distance_m": 50.0}}),
    ("contacts", ROOT / "resources" / "samples" / "contacts_person1672.csv",
     {"kind": "categorical", "duplicates": "first"}, {"rule": "category"}),
)


def figures(folder: Path, runs: int) -> None:
    from lmdk_gui.core.data.loader import load_series
    from lmdk_gui.ui.views.evalplot import render_png

    settings = PrivacySettings()
    for name, path, load_opts, opts in REAL:
        series = load_series(path, **load_opts)
        res = evaluate(series, settings, DEFAULT_PERCENTAGES, runs=runs, **opts)
        render_png(res, folder / f"eval_{name}.png")
        print(json.dumps({"figure": f"eval_{name}", **{k: v for k, v in res.to_dict().items()
                                                         if k not in ("elapsed_s",)}}), flush=True)
        print(res.table_text(), file=sys.stderr)
        if name == "contacts":
            binary_contacts(series, res, runs)


def binary_contacts(series: Series, res, runs: int) -> None:
    """The thesis' Copenhagen encoding: each event's value is whether its contact is on the landmark list
    (binary randomized response, p = e^ε/(e^ε+1)); the landmarks are the events whose value is 1."""
    from lmdk_gui.core.analysis.evaluation import LandmarkSet

    settings = PrivacySettings(categories=("0", "1"))
    rows = []
    for ls in res.sets:
        bits = np.zeros(series.n, dtype=np.int64)
        bits[ls.rows] = 1
        binary = Series("categorical", series.times, bits, categories=("0", "1"), name="contact on the list")
        r = evaluate(binary, settings, runs=runs, sets=[LandmarkSet(ls.target, ls.rows, series.n, ls.params)])
        rows.append({"percentage": ls.target, "actual_percentage": ls.percentage,
                     **{s: None if np.isnan(r.mean[0, j]) else round(float(r.mean[0, j]), 4)
                        for j, s in enumerate(r.schemes)}})
    print(json.dumps({"figure": "contacts, thesis' binary encoding (mismatch rate)", "rows": rows}), flush=True)


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--figures"]:
        runs = int(args[args.index("--runs") + 1]) if "--runs" in args else RUNS
        folder = Path(args[1])
        folder.mkdir(parents=True, exist_ok=True)
        figures(folder, runs)
        return
    kinds = args or ["numeric", "location", "categorical"]
    settings = PrivacySettings()
    for kind in kinds:
        series = make_series(kind)
        evaluate(series, settings, [0, 50], runs=2)  # compile the kernels outside the timing
        floor, per_release = floor_seconds(series, settings)
        ours = best_of(lambda series=series: evaluate(series, settings, DEFAULT_PERCENTAGES, placement="uniform",
                                                      runs=RUNS))
        threads = best_of(lambda series=series: evaluate(series, settings, DEFAULT_PERCENTAGES, placement="uniform",
                                                         runs=RUNS, workers=2))
        naive = naive_loop(series, settings)
        print(json.dumps({
            "figure": f"evaluate 6 percentages x 5 schemes x {RUNS} runs, n = {N}, {kind}",
            "seconds": round(ours, 4),
            "floor_seconds": round(floor, 4),
            "ratio_to_floor": round(ours / floor, 3),
            "target_ratio": 2.0,
            "meets_target": ours <= 2.0 * floor,
            "seconds_2_threads": round(threads, 4),
            "naive_loop_seconds": round(naive, 4),
            "one_release_plus_mae_ms": {s: round(1e3 * v, 4) for s, v in per_release.items()},
            "cpus": os.cpu_count(),
        }), flush=True)


if __name__ == "__main__":
    main()
