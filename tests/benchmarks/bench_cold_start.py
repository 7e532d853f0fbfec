"""Issue 15: cold start to the first drawn preview, next to the bare-import floor measured in the same run.

Run: ``python tests/benchmarks/bench_cold_start.py [--before DIR] [--repeats 5] [--large]`` — one JSON line
per figure. Each figure is a fresh process, alternating with the floor (and with ``--before DIR``, the same
command run from another checkout, e.g. the main branch: the before/after of a change in one run).

* ``cold_start_first_preview``: ``python -m lmdk_gui --sample energy --smoke-test`` offscreen, timed from
  the launch until the child prints its success line, i.e. until the preview plot has painted the first
  preview (the smoke test's criterion; process teardown is not counted). ``*_series``: until it printed
  that the series plot had painted the series (a line the smoke test prints since issue 15; a checkout
  without it has no such figure).
* floor: ``import PySide6.QtWidgets, pyqtgraph, numpy, pandas``, timed until it prints after the imports.
* ``cold_start_screenshot`` (the figure issue 15 was filed with): ``--screenshot`` to process exit. That
  path waits for the preview *and* the R-run average, then 200 ms, so it measures more than the first paint.
* ``--large``: ``python -m lmdk_gui FILE --smoke-test`` on a 10^6-event CSV (cold start and opening).

Every process gets bytecode caches in a private folder (``PYTHONPYCACHEPREFIX``; a round before the timed
ones fills it and numba's cache), as an installed package would have, even where the environment sets
``PYTHONDONTWRITEBYTECODE``. Target (issue 15): first drawn preview ≤ 1.5× the floor.
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
FLOOR = "import PySide6.QtWidgets, pyqtgraph, numpy, pandas; print('imported', flush=True)"


def _env(tree: Path, scratch: Path) -> dict[str, str]:
    """The child's environment; it also runs in ``tree`` (``python -m`` puts the working directory first on
    the path, so the checkout must be the working directory, not only on PYTHONPATH)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(tree), QT_QPA_PLATFORM="offscreen", PYTHONPYCACHEPREFIX=str(scratch / "pyc"),
               LMDK_GUI_SETTINGS=str(scratch / "settings.ini"))  # no last file reopened, no saved geometry
    return env


def until_lines(cmd: list[str], env: dict[str, str], markers: tuple[str, ...], timeout: float = 120.0) -> dict:
    """Seconds from launching ``cmd`` until it printed a line starting with each of ``markers`` (those it
    printed); the first marker is required."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            cwd=env["PYTHONPATH"])
    assert proc.stdout is not None
    seen: dict[str, float] = {}
    for line in proc.stdout:
        now = time.perf_counter() - start
        for m in markers:
            if line.startswith(m) and m not in seen:
                seen[m] = now
    proc.wait(timeout)
    if markers[0] not in seen:
        raise RuntimeError(f"{' '.join(cmd)} never printed {markers[0]!r} (exit code {proc.returncode})")
    return seen


def to_exit(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=120, cwd=env["PYTHONPATH"])
    return time.perf_counter() - start


def write_csv(path: Path, n: int) -> None:
    import numpy as np
    import pandas as pd

    times = np.datetime64("2000-01-01T00:00:00") + np.arange(n) * np.timedelta64(60, "s")
    vals = np.round(np.random.default_rng(0).random(n) * 10, 3)
    pd.DataFrame({"timestamp": np.datetime_as_string(times, unit="s"), "kwh": vals}).to_csv(path, index=False)


def figure(name: str, runs: dict[str, list[float]], note: str, target: float | None = None) -> dict:
    floor = statistics.median(runs["floor"])
    out: dict = {"figure": name, "what": note, "floor": "import PySide6.QtWidgets, pyqtgraph, numpy, pandas",
                 "floor_min": min(runs["floor"]), "floor_median": floor}
    for key in ("after", "after_series", "before", "before_series"):
        if key in runs:
            med = statistics.median(runs[key])
            out |= {f"{key}_min": min(runs[key]), f"{key}_median": med, f"{key}_ratio": med / floor}
    if target is not None:
        out["target_ratio"] = target
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}


#: the smoke test's lines: the preview drawn (its success line) and, since issue 15, the series drawn
PREVIEW, SERIES = "smoke test: window", "smoke test: series drawn"


def measure(trees: dict[str, Path], repeats: int, scratch: Path, args: list[str], smoke: bool) -> dict:
    """Alternate floor, before and after ``repeats`` times (after one untimed round). With ``smoke``, the
    times to the smoke test's lines (``after``, ``after_series``, …); otherwise to the process's exit."""
    py = sys.executable
    envs = {k: _env(t, scratch / k) for k, t in trees.items()}
    floor_env = _env(ROOT, scratch / "after")
    runs: dict[str, list[float]] = {}
    for i in range(repeats + 1):
        got = {"floor": until_lines([py, "-c", FLOOR], floor_env, ("imported",))["imported"]}
        for key in trees:
            cmd = [py, "-m", "lmdk_gui", *args]
            if smoke:
                seen = until_lines(cmd, envs[key], (PREVIEW, SERIES))
                got[key] = seen[PREVIEW]
                if SERIES in seen:
                    got[f"{key}_series"] = seen[SERIES]
            else:
                got[key] = to_exit(cmd, envs[key])
        if i:  # the first round fills the bytecode and numba caches
            for k, v in got.items():
                runs.setdefault(k, []).append(v)
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", type=Path, help="another checkout to time the same way (e.g. /work/main)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--large", action="store_true", help="also cold-open a 10^6-event CSV")
    ap.add_argument("--no-screenshot", action="store_true", help="skip the --screenshot figure")
    a = ap.parse_args()
    trees = {"after": ROOT} | ({"before": a.before.resolve()} if a.before else {})
    with tempfile.TemporaryDirectory() as d:
        scratch = Path(d)
        runs = measure(trees, a.repeats, scratch, ["--sample", "energy", "--smoke-test"], True)
        print(json.dumps(figure("cold_start_first_preview", runs, "--sample energy (744 events) offscreen, "
                                "launch → the preview plot painted the first preview", 1.5)), flush=True)
        if not a.no_screenshot:
            shot = str(scratch / "shot.png")
            runs = measure(trees, a.repeats, scratch, ["--sample", "energy", "--screenshot", shot], False)
            print(json.dumps(figure("cold_start_screenshot", runs, "--screenshot to exit: waits for the "
                                    "preview, the R-run average and 200 ms")), flush=True)
        if a.large:
            big = scratch / "events_1e6.csv"
            write_csv(big, 10**6)
            runs = measure(trees, a.repeats, scratch, [str(big), "--smoke-test"], True)
            print(json.dumps(figure("cold_start_first_preview_1e6", runs, "a 10^6-event CSV, launch → "
                                    "first preview painted")), flush=True)


if __name__ == "__main__":
    main()
