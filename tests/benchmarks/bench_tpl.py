"""Benchmark: landmark temporal privacy loss (thesis Definition 10) for every event of a long series.

Run as ``python tests/benchmarks/bench_tpl.py`` (pytest does not collect this folder). Prints one JSON line
per figure. Target (brief): n = 10^5, 20% landmarks, m = 2, all n values in ≤ 2 s. Baseline measured in
the same run: one plain BPL + FPL pass over the series (``tpl``), i.e. the cheapest thing that touches
every event with the loss function; the ratio says how many such passes the landmark TPL costs.

Also checks the O(n) algorithm against fresh runs (the literal definition, one t at a time) on a sample
of events, and reports the largest difference.

``python tests/benchmarks/bench_tpl.py --study [--figures resources/figures]`` additionally runs the
thesis' §5.2.2 synthetic study, prints its records as JSON lines and optionally draws
``tpl_study.png`` / ``tpl_study_gap.png`` (pyqtgraph, offscreen).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from timing import best_of  # noqa: E402  (tests/benchmarks/timing.py, the scripts' folder)

from lmdk_gui.core.analysis.correlation import (
    CorrelationModel,
    _run,
    landmark_tpl,
    synthetic_landmarks,
    synthetic_study,
    tpl,
)

N = 100_000
FRACTION = 0.2
REPEATS = 3



def direct_value(eps: np.ndarray, lm: np.ndarray, t: int, model: CorrelationModel) -> float:
    """Definition 10 at one t by fresh runs (compiled loss function, literal structure)."""
    n = eps.size
    U = np.union1d(lm, [t])
    lb, lf = model.loss_b, model.loss_f
    none = np.empty(0)
    total = 0.0
    for idx, i in enumerate(U):
        prev = U[idx - 1] if idx > 0 else -1
        nxt = U[idx + 1] if idx < U.size - 1 else n
        b = _run(eps, prev + 1, i + 1, 1, lb.q, lb.d, lb.lq, lb.ld, none)
        f = _run(eps, nxt - 1, i - 1, -1, lf.q, lf.d, lf.lq, lf.ld, none)
        total += b + f - eps[i]
    return total


def bench_landmark_tpl(s: float, distribution: str, budgets: str) -> dict[str, object]:
    rng = np.random.default_rng(0)
    lm = synthetic_landmarks(N, FRACTION, distribution, seed=0)
    if budgets == "uniform":
        eps = np.full(N, 1.0 / (lm.size + 1))
    else:  # random budgets with zeros (like Adaptive's skipped events)
        eps = rng.random(N) * 0.5
        eps[rng.random(N) < 0.3] = 0.0
    model = CorrelationModel.smoothed(s)
    landmark_tpl(eps[:100], lm[lm < 100], model)  # compile / load the kernels
    tpl(eps[:100], model)
    ours = best_of(lambda: landmark_tpl(eps, lm, model))
    baseline = best_of(lambda: tpl(eps, model))
    model_build = best_of(lambda: CorrelationModel.smoothed(s), 20)
    curve = landmark_tpl(eps, lm, model)
    sample = np.unique(np.concatenate([rng.choice(N, 40, replace=False), lm[:3], [0, N - 1]]))
    err = max(abs(curve[t] - direct_value(eps, lm, int(t), model)) for t in sample)
    return {
        "figure": f"landmark_tpl_1e5_s{s:g}_{distribution}_{budgets}",
        "n": N, "landmarks": int(lm.size), "s": s, "states": 2,
        "seconds": round(ours, 4),
        "target_seconds": 2.0,
        "baseline": "one BPL+FPL pass (tpl)",
        "baseline_seconds": round(baseline, 4),
        "ratio": round(ours / baseline, 2),
        "model_build_seconds": round(model_build, 6),
        "max_tpl": float(curve.max()),
        "max_abs_diff_vs_fresh_runs": float(err),
        "checked_events": int(sample.size),
    }


def bench_general_path() -> dict[str, object]:
    """A 3-state matrix whose loss function is not a single Möbius map (merged-runs path)."""
    p = np.array([[0.8, 0.15, 0.05], [0.1, 0.85, 0.05], [0.2, 0.1, 0.7]])
    model = CorrelationModel.from_matrix(p)
    assert not model.is_fast
    lm = synthetic_landmarks(N, FRACTION, "uniform", seed=0)
    eps = np.full(N, 1.0 / (lm.size + 1))
    landmark_tpl(eps[:100], lm[lm < 100], model)
    ours = best_of(lambda: landmark_tpl(eps, lm, model), 1)
    baseline = best_of(lambda: tpl(eps, model), 1)
    return {"figure": "landmark_tpl_1e5_general_3state_uniform", "n": N, "landmarks": int(lm.size),
            "states": 3, "maps": model.loss_b.n_maps, "seconds": round(ours, 4),
            "baseline": "one BPL+FPL pass (tpl)", "baseline_seconds": round(baseline, 4),
            "ratio": round(ours / baseline, 2)}


def plot_study(records: list[dict], key: str, title: str, path: str) -> None:
    """Three panels (weak / moderate / strong correlation) like the thesis' Fig. 5.3, drawn with pyqtgraph
    offscreen and exported as PNG."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import pyqtgraph as pg
    import pyqtgraph.exporters
    from PySide6.QtCore import Qt

    pg.mkQApp()
    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    win = pg.GraphicsLayoutWidget()
    win.resize(1500, 500)
    win.addLabel(title, row=0, col=0, colspan=3)
    colours = {"skewed": (31, 119, 180), "symmetric": (255, 127, 14), "bimodal": (44, 160, 44),
               "uniform": (214, 39, 40)}
    symbols = {"skewed": "o", "symmetric": "s", "bimodal": "t", "uniform": "d"}
    ymax = max(r[key] for r in records) * 1.05
    for col, (s, name) in enumerate(((1.0, "weak"), (0.1, "moderate"), (0.01, "strong"))):
        plot = win.addPlot(row=1, col=col, title=f"{name} correlation (s = {s:g})")
        plot.addLegend(offset=(-10, 10))
        plot.setLabel("bottom", "landmarks (%)")
        plot.setLabel("left", "max landmark TPL" if col == 0 else "")
        plot.setYRange(0, ymax)
        plot.showGrid(y=True, alpha=0.3)
        for dist, colour in colours.items():
            rows = [r for r in records if r["s"] == s and r["distribution"] == dist]
            x = [100 * r["fraction"] for r in rows]
            plot.plot(x, [r[key] for r in rows], pen=pg.mkPen(colour, width=2), symbol=symbols[dist],
                      symbolBrush=colour, symbolPen=colour, name=dist)
        base = [r for r in records if r["s"] == s and r["distribution"] == "uniform"]
        plot.plot([100 * r["fraction"] for r in base], [r["no_correlation"] for r in base],
                  pen=pg.mkPen("k", width=2, style=Qt.PenStyle.DashLine), name="no correlation")
    win.show()
    for _ in range(3):
        pg.QtWidgets.QApplication.processEvents()
    exporter = pyqtgraph.exporters.ImageExporter(win.scene())
    exporter.parameters()["width"] = 1500
    exporter.export(path)
    win.close()


def main() -> int:
    for s, dist, budgets in ((0.01, "uniform", "uniform"), (0.1, "uniform", "random"),
                             (0.01, "skewed", "uniform"), (1.0, "bimodal", "random")):
        print(json.dumps(bench_landmark_tpl(s, dist, budgets)), flush=True)
    print(json.dumps(bench_general_path()), flush=True)
    if "--study" in sys.argv:
        start = time.perf_counter()
        records = synthetic_study()
        elapsed = time.perf_counter() - start
        for rec in records:
            print(json.dumps({"figure": "study_5_2_2", **rec}), flush=True)
        print(json.dumps({"figure": "study_5_2_2_time", "seconds": round(elapsed, 3)}))
        if "--figures" in sys.argv:
            folder = sys.argv[sys.argv.index("--figures") + 1]
            plot_study(records, "max_tpl", "Landmark temporal privacy loss (Definition 10), Uniform, "
                       "ε = 1, n = 100, mean of 100 landmark draws", f"{folder}/tpl_study.png")
            plot_study(records, "max_gap_tpl", "Diagnostic gap_tpl (landmark sum + the regular event's own "
                       "TPL inside its gap), same setting", f"{folder}/tpl_study_gap.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
