"""Issue 15 (offscreen): clicks that arrive while the previous click's later stages still run.

``bench_gui.py --clicks`` waits for each click's denoised stage before the next one, so its clicks never
meet the background work. A user marking events one after another does: each click interrupts the
previous click's denoising or R-run average, and on two cores the GUI thread, the preview worker and its
second thread compete with them. This is the figure the worker threads' priorities (the launcher's
``priority``, ``runtime/priority.py``) are for: ``LMDK_RUNTIME=default,-priority`` measures without them.

Run: ``python tests/benchmarks/bench_busy_clicks.py [n] [gap_seconds]`` (default 10^6, 0.3 s; ≈ 30 s) —
one JSON line: click → repainted (min / median / max of 16 clicks, each ``gap`` after the previous repaint)
and, alternating with the clicks, numpy drawing n Laplace samples (the issue's floor). For a before/after,
run it from two checkouts in turn (``PYTHONPATH=<checkout>``).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from tests.benchmarks.bench_gui import (  # noqa: E402
    APP,
    PaintWatch,
    idle,
    laplace_floor,
    timed_click,
    wait_until,
)


def main() -> None:
    from lmdk_gui.core.data.series import Series
    from lmdk_gui.ui.window.main_window import MainWindow
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**6
    gap = float(sys.argv[2]) if len(sys.argv) > 2 else 0.3
    os.environ["LMDK_GUI_SETTINGS"] = str(Path(tempfile.mkdtemp()) / "bench.ini")
    w = MainWindow(load_default=False)
    w.resize(1400, 900)
    w.show()
    APP.processEvents()
    s = w.session
    s.set_series(Series.from_arrays(np.round(np.random.default_rng(0).random(n) * 10, 3)))
    wait_until(s.is_preview_current)
    s.set_landmarks(np.sort(np.random.default_rng(3).choice(n, n // 5, replace=False)))
    wait_until(s.is_denoised_current)
    watch = PaintWatch(w)
    times, floors = [], []
    for i in range(16):
        times.append(timed_click(w, watch, int(n // 2 + 37 * i))[1])
        floors.append(laplace_floor(n))
        idle(gap)  # the later stages start and run meanwhile
    print(json.dumps({"figure": f"busy_click_to_repaint_{n}", "gap_seconds": gap, "seconds_min": min(times),
                      "seconds": statistics.median(times), "seconds_max": max(times),
                      "baseline": "numpy laplace(n) (same run)", "baseline_seconds": statistics.median(floors),
                      "ratio": statistics.median(times) / statistics.median(floors)}), flush=True)
    w.close()


if __name__ == "__main__":
    main()
