"""Throughput of the export-path noise (lmdk_gui.core.kernel.securenoise); run as a script, not collected by pytest.

    /work/venv/bin/python tests/benchmarks/bench_securenoise.py [--sizes 100000 1000000] [--source os|seed]

Prints one JSON line per figure: {"bench": ..., "n": ..., "seconds": ..., "per_s": ...}. Numba compile time
is excluded from throughput (every kernel is warmed up first) and reported once as "compile". Baselines in
the same run: numpy ``rng.laplace`` (textbook float Laplace, NOT floating-point safe) and pandas
``DataFrame.to_csv`` of an n-row (timestamp, value) frame.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lmdk_gui.core.kernel import opendp_noise  # noqa: E402
from lmdk_gui.core.kernel import securenoise as sn  # noqa: E402


def emit(bench: str, n: int, seconds: float, **extra) -> None:
    rec = {"bench": bench, "n": n, "seconds": round(seconds, 4), "per_s": round(n / seconds) if n else None}
    rec.update(extra)
    print(json.dumps(rec), flush=True)


def timed(fn, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--source", choices=["os", "seed"], default="os")
    ap.add_argument("--opendp-max", type=int, default=1_000_000, help="largest n for the opendp backend")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    def src() -> sn.WordSource:
        return sn.WordSource.from_os() if args.source == "os" else sn.WordSource.from_seed(1)

    # --- compile: cold (fresh numba cache dir, in a subprocess) and warm (this process, cache on disk)
    with tempfile.TemporaryDirectory() as cache:
        code = (
            "import time, numpy as np; from lmdk_gui.core.kernel import securenoise as sn; t0 = time.perf_counter();"
            "sn.secure_laplace(np.zeros(4), 1.0, 1.0); sn.secure_planar(np.zeros((4, 2)), 10.0);"
            "sn.secure_rr(np.zeros(4, dtype=np.int64), 1.0, 3); print(time.perf_counter() - t0)"
        )
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        root = str(Path(__file__).resolve().parents[2])
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True)
        if out.returncode == 0:
            emit("compile (first call, cold numba cache, all three kernels)", 0, float(out.stdout.strip()))
    t0 = time.perf_counter()
    sn.secure_laplace(np.zeros(4), 1.0, 1.0, src())
    sn.secure_planar(np.zeros((4, 2)), 10.0, src())
    sn.secure_rr(np.zeros(4, dtype=np.int64), 1.0, 3, src())
    emit("first call, warm numba cache, all three kernels", 0, time.perf_counter() - t0)
    opendp_noise.opendp_laplace(np.zeros(4), 1.0, 1.0)  # import/enable opendp outside the timings

    rng = np.random.default_rng(0)
    for n in args.sizes:
        bench_size(n, args, src, rng)


def bench_size(n: int, args, src, rng) -> None:
    x = rng.normal(5.0, 2.0, n)
    one_scale = np.full(n, 2.0)
    many_scales = rng.choice(np.geomspace(0.1, 100.0, 1000), n)
    latlon = np.column_stack([rng.uniform(47, 49, n), rng.uniform(10, 12, n)])
    scales_m = np.full(n, 100.0)
    codes = rng.integers(0, 8, n)
    eps = np.full(n, 1.0)
    r = args.repeat

    emit("numpy rng.laplace (baseline, not fp-safe)", n, timed(lambda: x + rng.laplace(0.0, 2.0, n), r))
    emit("os.urandom 8 bytes/value (entropy alone)", n, timed(lambda: sn.WordSource.from_os().words(n), r))
    emit(
        "secure_laplace, 1 scale",
        n,
        timed(lambda: sn.secure_laplace(x, one_scale, 1.0, src()), r),
        source=args.source,
    )
    emit(
        "secure_laplace, 1000 distinct scales",
        n,
        timed(lambda: sn.secure_laplace(x, many_scales, 1.0, src()), r),
        source=args.source,
    )
    emit(
        "secure_planar",
        n,
        timed(lambda: sn.secure_planar(latlon, scales_m, src()), r),
        source=args.source,
    )
    emit("secure_rr (k=8)", n, timed(lambda: sn.secure_rr(codes, eps, 8, src()), r), source=args.source)
    emit(
        "secure_laplace, 1 scale, seeded Philox",
        n,
        timed(lambda: sn.secure_laplace(x, one_scale, 1.0, sn.WordSource.from_seed(1)), r),
    )
    if n <= args.opendp_max:
        emit("opendp_laplace, 1 scale", n, timed(lambda: opendp_noise.opendp_laplace(x, one_scale, 1.0), 1))
        emit(
            "opendp_laplace, 1000 distinct scales",
            n,
            timed(lambda: opendp_noise.opendp_laplace(x, many_scales, 1.0), 1),
        )
    m = min(n, 20_000)
    emit("opendp_rr (k=8), per-event calls", m, timed(lambda: opendp_noise.opendp_rr(codes[:m], eps[:m], 8), 1))

    import pandas as pd

    frame = pd.DataFrame(
        {
            "timestamp": pd.date_range("2024-01-01", periods=n, freq="min").strftime("%Y-%m-%dT%H:%M:%S"),
            "value": x,
        }
    )
    emit(
        "pandas DataFrame.to_csv (timestamp, value)",
        n,
        timed(lambda: frame.to_csv(io.StringIO(), index=False), 1),
    )


if __name__ == "__main__":
    main()
