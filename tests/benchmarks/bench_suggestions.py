"""Benchmark: landmark suggestion rules at GUI scale (n = 10^6), each against a baseline run in the same process.

Run as ``python tests/benchmarks/bench_suggestions.py`` (pytest does not collect this folder). Prints one JSON
line per figure. Figures:

* ``stay_points_1e6``: :func:`stay_points` on a synthetic 1 Hz bus-like track (moving ~8 m/s with GPS
  jitter, stops of 10-300 s) for several (Δl, Δt); baseline: the same compiled scan *without* the
  path-length skip (every following event tested), i.e. a straight numba port of Li et al.'s loop;
* ``stay_points_python_2e4``: ours vs the literal pure-Python loop on the first 20,000 points;
* ``threshold_count_1e6``: :func:`count` vs ``np.count_nonzero(x < v)``;
* ``change_points_1e6``: first call (tree build) and a later call at another penalty (cached tree);
  baseline: one pass of ``np.cumsum`` over the data (a floor for any O(n) method);
* ``change_points_ruptures_1e4``: ours vs ``ruptures.Binseg(model="l2")`` on 10^4 points (if installed);
* ``rule_for_percentage_1e6``: time to find the setting for 20 % landmarks per rule.
"""

from __future__ import annotations

import json
import math
import sys
import time

import numba
import numpy as np
from timing import best_of  # noqa: E402  (tests/benchmarks/timing.py, the scripts' folder)

from lmdk_gui.core.analysis import suggestions as sg
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.kernel.mechanisms import haversine_one

N = 1_000_000
REPEATS = 3



def bus_track(n: int = N, seed: int = 0) -> Series:
    rng = np.random.default_rng(seed)
    moving = np.ones(n, bool)
    i = 0
    while i < n:
        i += int(rng.integers(60, 600))
        stop = int(rng.integers(10, 300))
        moving[i:i + stop] = False
        i += stop
    step = np.where(moving, 8.0, 0.0) + rng.normal(0, 1.5, n)
    ang = np.cumsum(rng.normal(0, 0.05, n))
    east, north = np.cumsum(step * np.cos(ang)), np.cumsum(step * np.sin(ang))
    lat = 52.6 + north / 111_000
    lon = -8.6 + east / (111_000 * np.cos(np.radians(52.6)))
    times = np.datetime64("2020-01-01", "ns") + np.arange(n) * np.timedelta64(1, "s")
    return Series.from_arrays(np.column_stack([lat, lon]), times=times)


@numba.njit(cache=True)
def _plain_scan(latlon, t_ns, dist_m, dur_ns, out):  # pragma: no cover - compiled
    """Baseline: Li et al.'s loop compiled, haversine on every pair, no skipping."""
    n = latlon.shape[0]
    i = 0
    while i < n:
        j = i + 1
        while j < n and haversine_one(latlon[i, 0], latlon[i, 1], latlon[j, 0], latlon[j, 1]) <= dist_m:
            j += 1
        if t_ns[j - 1] - t_ns[i] >= dur_ns:
            out[i:j] = True
            i = j
        else:
            i += 1


def plain_stays(s: Series, d: float, dur_min: float) -> np.ndarray:
    out = np.zeros(s.n, np.bool_)
    _plain_scan(np.ascontiguousarray(s.values), s.times.astype(np.int64), d, int(round(dur_min * 6e10)), out)
    return np.flatnonzero(out)


def python_stays(s: Series, d: float, dur_min: float) -> np.ndarray:
    lat, lon = s.values[:, 0].tolist(), s.values[:, 1].tolist()
    t = s.times.astype(np.int64).tolist()
    dur = round(dur_min * 6e10)
    r = 6_371_008.8
    rad = math.pi / 180

    def hav(a: int, b: int) -> float:
        p1, p2 = lat[a] * rad, lat[b] * rad
        h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin((lon[b] - lon[a]) * rad / 2) ** 2
        return 2 * r * math.asin(math.sqrt(min(h, 1.0)))

    n, out, i = len(t), [], 0
    while i < n:
        j = i + 1
        while j < n and hav(i, j) <= d:
            j += 1
        if t[j - 1] - t[i] >= dur:
            out.extend(range(i, j))
            i = j
        else:
            i += 1
    return np.array(out, dtype=np.int64)


def emit(doc: dict) -> None:
    doc.setdefault("python", sys.version.split()[0])
    print(json.dumps(doc), flush=True)


def bench_stays(track: Series) -> None:
    sg.stay_points(track, distance_m=10, duration_min=1)  # compile/load + cache the per-series arrays
    plain_stays(bus_track(1000), 10, 1)  # compile the baseline
    for d, dur in ((50, 1), (200, 5), (2000, 30), (5000, 30)):
        ours_rows = sg.stay_points(track, distance_m=d, duration_min=dur)
        base_rows = plain_stays(track, d, dur)
        assert np.array_equal(ours_rows, base_rows)
        ours = best_of(lambda d=d, dur=dur: sg.stay_points(track, distance_m=d, duration_min=dur))
        base = best_of(lambda d=d, dur=dur: plain_stays(track, d, dur), repeats=1)
        emit({"figure": "stay_points_1e6", "rows": track.n, "distance_m": d, "duration_min": dur,
              "landmark_percent": round(100 * ours_rows.size / track.n, 2), "seconds": round(ours, 4),
              "baseline": "numba literal scan (no skip)", "baseline_seconds": round(base, 4),
              "speedup": round(base / ours, 1)})
    small = bus_track(20_000, seed=1)
    sg.stay_points(small, distance_m=10, duration_min=1)
    for d, dur in ((50, 1), (2000, 30)):
        assert np.array_equal(sg.stay_points(small, distance_m=d, duration_min=dur), python_stays(small, d, dur))
        ours = best_of(lambda d=d, dur=dur: sg.stay_points(small, distance_m=d, duration_min=dur))
        base = best_of(lambda d=d, dur=dur: python_stays(small, d, dur), repeats=1)
        emit({"figure": "stay_points_python_2e4", "rows": small.n, "distance_m": d, "duration_min": dur,
              "seconds": round(ours, 5), "baseline": "pure-Python literal loop", "baseline_seconds": round(base, 3),
              "speedup": round(base / ours, 1)})


def bench_threshold(x: Series) -> None:
    v = float(np.quantile(x.values, 0.2))
    ours = best_of(lambda: sg.count(x, "threshold", below=v))
    base = best_of(lambda: np.count_nonzero(x.values < v))
    emit({"figure": "threshold_count_1e6", "rows": x.n, "seconds": round(ours, 5),
          "baseline": "np.count_nonzero(x < v)", "baseline_seconds": round(base, 5), "ratio": round(ours / base, 2)})


def numeric_series(n: int, seed: int = 0) -> Series:
    """Piecewise-constant mean (segments of 50-2000 events) plus unit noise."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(50, 2000, n // 50)
    levels = np.repeat(rng.normal(0, 2, lengths.size), lengths)[:n]
    times = np.datetime64("2000-01-01", "ns") + np.arange(n) * np.timedelta64(60, "s")
    return Series.from_arrays(levels + rng.normal(0, 1, n), times=times)


def bench_changepoints(x: Series) -> None:
    sg.change_points(Series.from_arrays(np.arange(10.0)))  # compile/load
    fresh = Series.from_arrays(x.values, times=x.times)
    start = time.perf_counter()
    rows = sg.change_points(fresh)
    first = time.perf_counter() - start
    later = best_of(lambda: sg.change_points(fresh, penalty=100.0))
    base = best_of(lambda: np.cumsum(x.values))
    emit({"figure": "change_points_1e6", "rows": x.n, "changes_default_penalty": int(rows.size),
          "first_call_seconds": round(first, 4), "cached_call_seconds": round(later, 5),
          "baseline": "np.cumsum (one O(n) pass)", "baseline_seconds": round(base, 5),
          "ratio_first_call": round(first / base, 1)})
    try:
        import ruptures as rpt
    except ImportError:
        return
    small = numeric_series(10_000, seed=2)
    z = (small.values - small.values.mean()) / sg._noise_scale(small.values)
    pen = sg.default_penalty(small.n)
    start = time.perf_counter()
    bk = rpt.Binseg(model="l2", min_size=1, jump=1).fit(z.reshape(-1, 1)).predict(pen=pen)
    base = time.perf_counter() - start
    ours = best_of(lambda: sg.change_points(Series.from_arrays(small.values, times=small.times)))
    assert np.array_equal(sg.change_points(small), np.array(bk[:-1]))
    emit({"figure": "change_points_ruptures_1e4", "rows": small.n, "changes": len(bk) - 1,
          "seconds": round(ours, 4), "baseline": f"ruptures {rpt.__version__} Binseg l2",
          "baseline_seconds": round(base, 3), "speedup": round(base / ours, 1)})


def bench_percentage(track: Series, x: Series) -> None:
    for rule, s in (("threshold", x), ("changepoints", x), ("stay", track)):
        start = time.perf_counter()
        params, rows = sg.rule_for_percentage(s, rule, 20)
        secs = time.perf_counter() - start
        emit({"figure": "rule_for_percentage_1e6", "rule": rule, "rows": s.n, "target_percent": 20,
              "got_percent": round(100 * rows.size / s.n, 3),
              "params": {k: round(v, 4) for k, v in params.items()}, "seconds": round(secs, 3)})


def main() -> None:
    track = bus_track()
    x = numeric_series(N)
    bench_stays(track)
    bench_threshold(x)
    bench_changepoints(x)
    bench_percentage(track, x)


if __name__ == "__main__":
    main()
