"""Regression guard (issue 15), run by hand: exits 1 when click → repainted at 10^6 events exceeds 3× its
recorded baseline.

The figure is taken as a ratio to numpy drawing 10^6 Laplace samples in the same run (so a slower or busier
machine does not trip it); ``BASELINE_RATIO`` is that ratio as measured when the click path was last tuned
(docs/performance.md). Run: ``python tests/benchmarks/bench_click_regression.py`` (≈ 1 minute).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.benchmarks import bench_gui  # noqa: E402

#: median click → repainted / median numpy laplace(10^6), measured on the 2-core machine (issue 15; since the
#: second session of 2026-11-25 "repainted" waits for the plots' viewports to paint: 4.7-5.3 in two runs;
#: third session: 4.0 in two A/B runs, 4.7 in a later one)
BASELINE_RATIO = 4.0
N = 10**6


def main() -> int:
    import numpy as np

    from lmdk_gui.core.data.series import Series
    from lmdk_gui.ui.window.main_window import MainWindow

    os.environ["LMDK_GUI_SETTINGS"] = str(Path(tempfile.mkdtemp()) / "bench.ini")
    w = MainWindow(load_default=False)
    w.resize(1400, 900)
    w.show()
    bench_gui.APP.processEvents()
    w.session.set_series(Series.from_arrays(np.round(np.random.default_rng(0).random(N) * 10, 3)))
    bench_gui.wait_until(w.session.is_preview_current)
    fig = bench_gui.click_to_repaint(w, N, clicks=7)
    w.close()
    limit = 3.0 * BASELINE_RATIO
    fig["limit_ratio"] = limit
    print(json.dumps(fig), flush=True)
    if fig["ratio"] > limit:
        print(f"REGRESSION: click → repainted at 10^6 is {fig['ratio']:.1f}× the numpy floor "
              f"(recorded {BASELINE_RATIO}×, limit {limit:.1f}×)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
