"""Issue 12 §2 figures: the denoiser's speed next to numpy drawing 10^6 Laplace samples in the same run.

Run: ``python tests/benchmarks/bench_denoise.py`` — prints one JSON line per figure: min and median of
``REPEATS`` runs (seconds), each run timed right after a run of the baseline (numpy drawing 10^6 Laplace
samples), so both see the same load on a shared machine, and the ratios of the mins and of the medians.
Target: numeric 10^6 ≤ 3× the baseline. Inputs are synthetic releases with 20 % approximated events
(Skip-like), made once before timing.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lmdk_gui.core.analysis.denoise import denoise  # noqa: E402
from lmdk_gui.core.kernel import mechanisms  # noqa: E402

REPEATS = 9
_RNG = np.random.default_rng()


def _once(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def timings(fn) -> dict:
    """Alternate baseline and ``fn`` runs; min and median of each and their ratios."""
    base, run = [], []
    for _ in range(REPEATS):
        base.append(_once(lambda: _RNG.laplace(size=10**6)))
        run.append(_once(fn))
    b_min, b_med, r_min, r_med = min(base), statistics.median(base), min(run), statistics.median(run)
    return {"min": r_min, "median": r_med, "baseline_min": b_min, "baseline_median": b_med,
            "ratio_min": r_min / b_min, "ratio_median": r_med / b_med}


def skip_like(n: int, rng: np.random.Generator, eps: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    approx = rng.random(n) < 0.2
    return np.where(approx, 0.0, eps), approx


def numeric(n: int, bounds) -> dict:
    rng = np.random.default_rng(1)
    x = np.clip(0.5 + np.cumsum(rng.normal(0, 0.02, n)) % 4.0, 0, 5)
    budgets, approx = skip_like(n, rng)
    y = x + rng.laplace(0, 1.0, n) / np.where(approx, 1.0, budgets)
    run = lambda: denoise("numeric", y, budgets, approx, sensitivity=1.0, bounds=bounds)  # noqa: E731
    run()  # warm (numba cache load)
    return timings(run)


def location(n: int) -> dict:
    rng = np.random.default_rng(2)
    ang = np.cumsum(rng.normal(0, 0.05, n))
    east, north = np.cumsum(8 * np.cos(ang)), np.cumsum(8 * np.sin(ang))
    latlon = np.column_stack([52.66 + np.degrees(north / mechanisms.EARTH_RADIUS_M),
                              -8.63 + np.degrees(east / (mechanisms.EARTH_RADIUS_M * 0.6))])
    budgets, approx = skip_like(n, rng)
    scales = np.where(approx, 0.0, 100.0 / np.where(approx, 1.0, budgets))
    y = mechanisms.planar_unit(latlon, scales, rng.gamma(2, 1, n), rng.uniform(0, 2 * np.pi, n))
    run = lambda: denoise("location", y, budgets, approx, radius_m=100.0)  # noqa: E731
    run()
    return timings(run)


def categorical(n: int, k: int = 4) -> dict:
    rng = np.random.default_rng(3)
    switch = rng.random(n) < 0.02
    codes = (np.cumsum(switch * rng.integers(1, k, n)) % k).astype(np.int64)
    budgets, approx = skip_like(n, rng)
    y = mechanisms.rr_unit(codes, budgets, k, rng.random(n), rng.random(n))
    run = lambda: denoise("categorical", y, budgets, approx, n_categories=k)  # noqa: E731
    run()
    return timings(run)


def main() -> None:
    figures = {
        "numeric_1e5_bounds": lambda: numeric(10**5, (0.0, 5.0)),
        "numeric_1e6_bounds": lambda: numeric(10**6, (0.0, 5.0)),
        "numeric_1e6_no_bounds": lambda: numeric(10**6, None),
        "location_1e5": lambda: location(10**5),
        "categorical_1e5_k4": lambda: categorical(10**5),
        "categorical_1e5_k34": lambda: categorical(10**5, 34),  # the stay-or-jump chain
    }
    for name, fn in figures.items():
        print(json.dumps({"figure": name, **{k: round(v, 4) for k, v in fn().items()}}))


if __name__ == "__main__":
    main()
