"""Each runtime tuning mechanism (lmdk_gui/runtime) switched on and off in the same run, alternating.

Run: ``python tests/benchmarks/bench_runtime.py FIGURE [--mechanisms a,b] [--repeats 3] [--n N]`` — one JSON
line per mechanism: the figure's medians with every default mechanism on (``on``) and with all but that one
(``off``), each a fresh process, in the order on, off, on, off, … (``cold``: after one untimed round).

FIGURE:

* ``cold``: ``python -m lmdk_gui --sample energy --smoke-test``, launch → the first preview painted, and →
  the process's exit (the window closed; what the collector does at exit counts). ``--large``: a 10^6-event
  CSV instead of the sample (numba loads while the window opens it).
* ``click``: click → the budget and preview plots repainted (bench_gui.timed_click) at ``--n`` events (10^6),
  median of ``--clicks``; the child switches its tuning on as the launcher does, before its imports.
* ``memory``: the peak resident size (VmHWM) of a child that opens ``--n`` events (3·10^6, a lean session),
  then clicks ``--clicks`` times waiting for each click's later stages.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import os, statistics, sys, time
from lmdk_gui import runtime
runtime.switch_on(runtime.from_environment())  # as lmdk_gui/app.py does, before numpy, pandas and Qt
import numpy, pandas
sys.path.insert(0, os.environ["ROOT"])
from tests.benchmarks import bench_gui
from lmdk_gui.core.data.series import Series
from lmdk_gui.ui.window.main_window import MainWindow
n, clicks, figure = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
w = MainWindow(load_default=False)
w.resize(1400, 900)
w.show()
bench_gui.APP.processEvents()
w.session.set_series(Series.from_arrays(numpy.round(numpy.random.default_rng(0).random(n) * 10, 3)))
bench_gui.wait_until(w.session.is_preview_current)
s = w.session
s.set_landmarks(numpy.sort(numpy.random.default_rng(3).choice(n, n // 5, replace=False)))
bench_gui.wait_until(s.is_preview_current)
watch = bench_gui.PaintWatch(w)
times = []
for i in range(clicks):
    if figure == "memory":
        bench_gui.wait_until(lambda: s.is_denoised_current() and s.average is not None, 300)
    times.append(bench_gui.timed_click(w, watch, n // 2 + 37 * i)[1])
bench_gui.wait_until(lambda: s.is_denoised_current() and s.average is not None, 300)
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) / 1024
print("RESULT", statistics.median(times) if times else 0.0, peak, flush=True)
w.close()
"""


def _env(spec: str, scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(ROOT), ROOT=str(ROOT), QT_QPA_PLATFORM="offscreen", LMDK_RUNTIME=spec,
               PYTHONPYCACHEPREFIX=str(scratch / "pyc"), LMDK_GUI_SETTINGS=str(scratch / "settings.ini"))
    env.pop("QT_NO_GUI_THREADPOOL", None)
    return env


def cold(spec: str, scratch: Path, a: argparse.Namespace) -> dict[str, float]:
    from tests.benchmarks.bench_cold_start import PREVIEW

    env = _env(spec, scratch)
    start = time.perf_counter()
    what = [str(a.large)] if a.large else ["--sample", "energy"]
    proc = subprocess.Popen([sys.executable, "-m", "lmdk_gui", *what, "--smoke-test"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    assert proc.stdout is not None
    preview = None
    for line in proc.stdout:
        if line.startswith(PREVIEW) and preview is None:
            preview = time.perf_counter() - start
    proc.wait(120)
    if preview is None:
        raise RuntimeError(f"LMDK_RUNTIME={spec}: the smoke test never painted its preview")
    return {"to_preview_s": preview, "to_exit_s": time.perf_counter() - start}


def child(spec: str, scratch: Path, a: argparse.Namespace) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(a.n), str(a.clicks), a.figure], env=_env(spec, scratch),
                         capture_output=True, text=True, timeout=900, cwd=ROOT)
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT")]
    if not line:
        raise RuntimeError(out.stderr[-2000:])
    click, peak = map(float, line[-1].split()[1:])
    return {"click_s": click, "peak_mb": peak} if a.figure == "click" else {"peak_mb": peak, "click_s": click}


def main() -> None:
    from lmdk_gui import runtime

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("figure", choices=("cold", "click", "memory"))
    ap.add_argument("--mechanisms", default=",".join(sorted(runtime.DEFAULT)))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=int, default=0, help="events (click: 10^6, memory: 3·10^6)")
    ap.add_argument("--clicks", type=int, default=5)
    ap.add_argument("--large", action="store_true", help="cold: open a 10^6-event CSV")
    a = ap.parse_args()
    a.n = a.n or (10**6 if a.figure == "click" else 3 * 10**6)
    run = cold if a.figure == "cold" else child
    with tempfile.TemporaryDirectory() as d:
        scratch = Path(d)
        if a.large:
            from tests.benchmarks.bench_cold_start import write_csv

            a.large = scratch / "events_1e6.csv"
            write_csv(a.large, 10**6)
        if a.figure == "cold":
            run("default", scratch, a)  # untimed: bytecode and numba caches (the others warm up in-process)
        for name in a.mechanisms.split(","):
            specs = {"on": "default", "off": f"default,-{name}"}
            runs: dict[str, dict[str, list[float]]] = {"on": {}, "off": {}}
            for _ in range(a.repeats):
                for key, spec in specs.items():
                    for k, v in run(spec, scratch, a).items():
                        runs[key].setdefault(k, []).append(v)
            out: dict = {"figure": a.figure, "mechanism": name, "repeats": a.repeats}
            if a.figure != "cold" or a.large:
                out["n"] = a.n if a.figure != "cold" else 10**6
            for key, got in runs.items():
                for k, vs in got.items():
                    out[f"{key}_{k}"] = [round(v, 4) for v in vs]
                    out[f"{key}_{k}_median"] = round(statistics.median(vs), 4)
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
