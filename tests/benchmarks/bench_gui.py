"""Issue 3 figures (offscreen): click → repainted budget and preview plots; opening a 10^6-event file.

Run: ``python tests/benchmarks/bench_gui.py`` — one JSON line per figure.

* ``click_to_repaint_n``: a simulated left click on an event of the series plot (QTest on the viewport), until
  the preview for the new landmark set has arrived and the budget and preview plots have repainted
  (synchronous ``repaint()``). Median of 9 clicks. Baseline: the core recompute alone for the same state
  (what the worker thread does), so the GUI overhead is visible. Target: ≤ 100 ms at 10^5.
* ``open_and_show_1e6``: ``open_series`` of a 10^6-row CSV until the first preview has been painted, next to
  plain ``pandas.read_csv`` of the file.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from lmdk_gui.core.metrics import mae  # noqa: E402
from lmdk_gui.core.noise import UnitNoise  # noqa: E402
from lmdk_gui.core.release import compute_all  # noqa: E402

APP = QApplication.instance() or QApplication([])


def write_csv(path: Path, n: int) -> None:
    t0 = np.datetime64("2000-01-01T00:00:00")
    times = t0 + np.arange(n) * np.timedelta64(60, "s")
    vals = np.round(np.random.default_rng(0).random(n) * 10, 3)
    pd.DataFrame({"timestamp": np.datetime_as_string(times, unit="s"), "kwh": vals}).to_csv(path, index=False)


def wait_until(cond, timeout: float = 120.0) -> None:
    """Run the real event loop (idle waits, no busy spinning that would steal the GIL from the worker
    thread) until ``cond()`` holds."""
    from PySide6.QtCore import QEventLoop, QTimer

    end = time.perf_counter() + timeout
    loop = QEventLoop()
    poll = QTimer()
    poll.setInterval(1)
    poll.timeout.connect(lambda: (cond() or time.perf_counter() > end) and loop.quit())
    poll.start()
    if not cond():
        loop.exec()
    poll.stop()
    if not cond():
        raise TimeoutError


def click_to_repaint(window, n: int) -> dict:
    from tests.ui.helpers import event_point

    s = window.session
    rng = np.random.default_rng(3)
    s.set_landmarks(np.sort(rng.choice(n, n // 5, replace=False)))
    wait_until(s.is_preview_current)
    times, cores = [], []
    noise = UnitNoise(n, s.seed)
    for i in range(9):
        row = int(n // 2 + 37 * i)
        vb = window.series_plot.getPlotItem().vb
        vb.setXRange(row - 50, row + 50, padding=0)
        APP.processEvents()
        pos = event_point(window, row)
        t = time.perf_counter()
        QTest.mouseClick(window.series_plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)
        wait_until(s.is_preview_current)
        window.budget_plot.repaint()
        window.preview_plot.repaint()
        times.append(time.perf_counter() - t)
        t = time.perf_counter()
        rel = compute_all(s.series, s.landmarks, s.settings, noise)
        for r in rel.values():
            mae(s.series, r)
        cores.append(time.perf_counter() - t)
    med, core = statistics.median(times), statistics.median(cores)
    return {"figure": f"click_to_repaint_{n}", "seconds": med, "baseline": "core recompute (same state)",
            "baseline_seconds": core, "ratio": med / core, "target_seconds": 0.1 if n == 10**5 else None}


def main() -> None:
    from lmdk_gui.ui.main_window import MainWindow

    os.environ["LMDK_GUI_SETTINGS"] = str(Path(tempfile.mkdtemp()) / "bench.ini")
    with tempfile.TemporaryDirectory() as d:
        for n in (10**4, 10**5, 10**6):
            path = Path(d) / f"s{n}.csv"
            write_csv(path, n)
            w = MainWindow(load_default=False)
            w.resize(1400, 900)
            w.show()
            APP.processEvents()
            if n == 10**6:
                base = min(_timed(lambda p=path: pd.read_csv(p)) for _ in range(3))
                t = time.perf_counter()
                w.open_series(path)
                wait_until(w.session.is_preview_current)
                w.repaint()
                opened = time.perf_counter() - t
                print(json.dumps({"figure": "open_and_show_1e6", "seconds": opened, "baseline": "pandas.read_csv",
                                  "baseline_seconds": base, "ratio": opened / base}), flush=True)
            else:
                w.open_series(path)
                wait_until(w.session.is_preview_current)
            print(json.dumps(click_to_repaint(w, n)), flush=True)
            w.close()
            APP.processEvents()


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
