"""The Adaptive loop per kind and path, next to the pre-issue-43 loops (tests/core/adaptive_reference.py).

Run: ``python tests/benchmarks/bench_adaptive.py [n]`` — one JSON line per (kind, path): the product's kernel
and the frozen reference on the same inputs, best of 5 each, alternating (compare the ratio, not seconds).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lmdk_gui.core.engine.pipeline import KINDS  # noqa: E402
from lmdk_gui.core.kernel import adaptive, securenoise  # noqa: E402
from lmdk_gui.core.kernel.noise import UnitNoise  # noqa: E402
from lmdk_gui.core.kernel.settings import PrivacySettings  # noqa: E402
from tests.core import adaptive_reference as ref  # noqa: E402


def _inputs(kind: str, n: int):
    rng = np.random.default_rng(1)
    if kind == "numeric":
        x, param = rng.random(n) * 5, 1.0
    elif kind == "location":
        x, param = np.column_stack([45 + rng.random(n) * 0.01, 7 + rng.random(n) * 0.01]), 100.0
    else:
        x, param = rng.integers(0, 3, n).astype(np.int64), 3
    is_lm = np.zeros(n, np.bool_)
    is_lm[rng.choice(n, n // 5, replace=False)] = True
    return x, is_lm, rng.random(n), param, int(is_lm.sum())


def _run(kernel, kind, path, n, inp):
    x, is_lm, u, param, m = inp
    eps_a = 1.0
    out_v, out_eps, out_fresh = np.empty_like(x), np.empty(n), np.empty(n, np.bool_)
    state = adaptive.new_state(m)
    t0 = time.perf_counter()
    if path == "preview":
        aux = KINDS[kind].unit_aux(UnitNoise(n, 0))
        t0 = time.perf_counter()
        kernel(x, is_lm, u, eps_a, eps_a / (m + 1), 0.1, 0.1, 0.1, param, aux, 0, 0, n, 1 << 62, state, out_v,
               out_eps, out_fresh)
    else:
        wb = securenoise.WordBuffer(securenoise.WordSource.from_seed(0), 1 << 20)
        aux = KINDS[kind].kernel_aux(wb.words, PrivacySettings())
        t = 0
        while t < n:
            wb.ensure()
            t, pos = kernel(x, is_lm, u, eps_a, eps_a / (m + 1), 0.1, 0.1, 0.1, param, aux, wb.pos, t, n, wb.limit,
                            state, out_v, out_eps, out_fresh)
            wb.check(pos, t)
    return time.perf_counter() - t0


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10**6
    for path, new, old in (("preview", "preview_kernel", ref.PREVIEW), ("export", "export_kernel", ref.EXPORT)):
        for kind in ("numeric", "location", "categorical"):
            inp = _inputs(kind, n)
            k_new, k_old = getattr(KINDS[kind], new), old[kind]
            _run(k_new, kind, path, 1000, _inputs(kind, 1000))  # compile
            _run(k_old, kind, path, 1000, _inputs(kind, 1000))
            ours, theirs = [], []
            for _ in range(5):
                ours.append(_run(k_new, kind, path, n, inp))
                theirs.append(_run(k_old, kind, path, n, inp))
            print(json.dumps({"figure": f"adaptive_{path}_{kind}_{n}", "seconds": min(ours),
                              "old_seconds": min(theirs), "ratio": min(ours) / min(theirs)}), flush=True)


if __name__ == "__main__":
    main()
