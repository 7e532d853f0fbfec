"""Issue 12 §2 speed target through the pipeline: the preview path with denoising at 10^6 events.

Run: ``python tests/benchmarks/bench_preview_denoise.py [n]`` — one JSON line per figure. For a Skip release
of a numeric series with public bounds (20 % landmarks): the preview release alone
(:func:`~lmdk_gui.core.engine.pipeline.run_preview`), its denoising through the kind's slot
(:func:`~lmdk_gui.core.engine.pipeline.denoised_values`, what the session and ``lmdk compare`` call), and numpy
drawing 10^6 Laplace samples, each timed alternately in the same run (min and median of ``REPEATS``).
Target: the denoise part ≤ 3× the numpy floor. Then the whole window preview (every scheme,
:func:`~lmdk_gui.core.engine.preview.compute_preview`) with denoising off and on, best of two.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lmdk_gui.core.data.series import Series  # noqa: E402
from lmdk_gui.core.engine.pipeline import denoised_values, plan, run_preview  # noqa: E402
from lmdk_gui.core.engine.preview import NoiseCache, Snapshot, compute_preview  # noqa: E402
from lmdk_gui.core.kernel.noise import UnitNoise  # noqa: E402
from lmdk_gui.core.kernel.settings import PrivacySettings  # noqa: E402
from tests.benchmarks.timing import best_of  # noqa: E402

REPEATS = 7


def _t(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main(n: int = 10**6) -> None:
    rng = np.random.default_rng(3)
    x = np.clip(1.0 + np.cumsum(rng.normal(0, 0.02, n)) % 3.0, 0, 5)
    series = Series.from_arrays(x, name="bench")
    lm = np.flatnonzero(x < np.quantile(x, 0.2))
    st = PrivacySettings(epsilon=1.0, sensitivity=1.0, bounds=(0.0, 5.0))
    noise = UnitNoise(n, 1)
    noise.laplace  # noqa: B018 - drawn once, outside the timing (the session caches it)
    p = plan(series, lm, st, "skip")
    rel = run_preview(p, noise)
    denoised_values(rel, st)  # warm (numba cache load)
    base, raw, den = [], [], []
    for _ in range(REPEATS):
        base.append(_t(lambda: np.random.default_rng().laplace(size=10**6)))
        raw.append(_t(lambda: run_preview(p, noise)))
        den.append(_t(lambda: denoised_values(rel, st)))
    out = {"n": n, "scheme": "skip", "landmarks": int(lm.size)}
    for name, v in (("laplace_floor", base), ("preview_release", raw), ("denoise", den)):
        out[name] = {"min": min(v), "median": statistics.median(v)}
    out["denoise_over_floor_min"] = min(den) / min(base)
    out["denoise_over_floor_median"] = statistics.median(den) / statistics.median(base)
    print(json.dumps(out))
    cache = NoiseCache()
    off = Snapshot(series, lm, st.with_(denoise=False), 1)
    on = Snapshot(series, lm, st, 1)
    compute_preview(off, cache)
    t_off = best_of(lambda: compute_preview(off, cache), 2)
    t_on = best_of(lambda: compute_preview(on, cache), 2)
    print(json.dumps({"n": n, "compute_preview_all_schemes_s": {"denoise_off": t_off, "denoise_on": t_on}}))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10**6)
