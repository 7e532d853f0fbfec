"""Fresh processes (issue 9): numba's on-disk cache must be hit, not grown, by a second process.

Found while running this suite: the Adaptive kernels took the per-event noise function as a first-class
argument *and* were compiled with ``cache=True``. The cache key then holds the function's type, which is
unpickled as a new object in every process, so the cache never hit: every process recompiled the kernel and
appended another entry to the index (141 entries after an hour of the team's test runs), and once the index
outgrew numba's memo of 128 rebuilt functions, saving it raised ``ReferenceError: underlying object has
vanished`` from inside ``compute_release`` (seen here from the hypothesis guarantee test). Fixed in 839339e
(those kernels are no longer disk-cached). This test keeps any cached kernel from regressing: two processes
that run every preview and export kernel leave the cache the same size, and neither fails.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import sys, tempfile, os
import numpy as np
from lmdk_gui.core.publish.export import ExportOptions, export_release
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.engine.pipeline import compute_all
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.kernel.settings import PrivacySettings
from tests.keys import test_key

rng = np.random.default_rng(0)
series = [Series.from_arrays(rng.random(50)),
          Series.from_arrays(np.column_stack([rng.uniform(50, 51, 50), rng.uniform(8, 9, 50)]), kind="location"),
          Series.from_arrays(rng.choice(["a", "b", "c"], 50))]
d = tempfile.mkdtemp()
for i, s in enumerate(series):
    compute_all(s, [3, 4, 10], PrivacySettings(), UnitNoise(s.n, 1))
    for scheme in ("uniform", "skip", "adaptive"):
        export_release(s, [3, 4, 10], PrivacySettings(), os.path.join(d, f"{i}{scheme}.csv"),
                       ExportOptions(scheme, seed=test_key(1), categories_from_data=s.kind == "categorical"))
print("ok")
"""


def _cache_files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc"))


@pytest.mark.slow
def test_second_process_hits_the_numba_cache(tmp_path):
    cache = tmp_path / "numba_cache"
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(cache)}
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
        runs.append(_cache_files(cache))
    assert runs[0], "nothing was cached at all"
    grown = sorted(set(runs[1]) - set(runs[0]))
    assert not grown, f"the second process compiled again and added {grown}"
