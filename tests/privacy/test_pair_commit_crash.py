"""Issue 42, finding 8: a crash at any instant of the CSV/sidecar commit never leaves a CSV without the
sidecar that describes it.

``lmdk export`` runs in a subprocess whose ``writers.between_renames`` hook SIGKILLs the process right after
one step of :func:`lmdk_gui.core.publish.writers.commit_pair`; the folder is then checked: every CSV in it has
its sidecar, and the sidecar's columns and row count are that CSV's. The next export into the folder removes
what the killed one left (the old CSV moved aside, the part files).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLES

ROOT = Path(__file__).resolve().parents[2]
ENERGY = SAMPLES / "energy_hue_2013_jan.csv"
STEPS = ("start", "old-csv-moved", "sidecar-renamed", "csv-renamed")
KILLER = """
import os, signal, sys
from lmdk_gui.core.publish import writers

def hook(step):
    if step == sys.argv[1]:
        os.kill(os.getpid(), signal.SIGKILL)

writers.between_renames = hook
from lmdk_gui.cli import main
sys.exit(main(sys.argv[2:]))
"""
pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")]
#: (step, an old pair in the folder): with no old CSV there is none to move aside
CASES = [(step, old) for step in STEPS for old in (True, False) if old or step != "old-csv-moved"]


def _export(step: str, src: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", KILLER, step, "export", str(src), "-o", str(out), "--scheme",
                           "uniform", "--epsilon", "1", "--landmark-rows", "3,7", "--force", *extra],
                          capture_output=True, text=True, env=env, cwd=out.parent, timeout=300)


def _check_pairs(folder: Path) -> dict[str, tuple[int, list[str]]]:
    """Every CSV has its sidecar, and the sidecar describes it: {name: (rows, columns)}."""
    seen = {}
    for csv_path in sorted(folder.glob("*.csv")):
        side = csv_path.with_name(csv_path.name + ".json")
        assert side.is_file(), f"{csv_path.name} has no sidecar: {sorted(p.name for p in folder.iterdir())}"
        lines = csv_path.read_text().splitlines()
        doc = json.loads(side.read_text())
        assert doc["columns"] == lines[0].split(","), f"{side.name} describes another CSV"
        assert doc["rows_released"] == len(lines) - 1, f"{side.name} describes another CSV"
        seen[csv_path.name] = (len(lines) - 1, lines[0].split(","))
    return seen


@pytest.fixture
def small(tmp_path) -> Path:
    """The first 100 events of the energy sample: the old release differs in rows and columns."""
    path = tmp_path / "small.csv"
    path.write_text("\n".join(ENERGY.read_text().splitlines()[:101]) + "\n")
    return path


@pytest.mark.parametrize(("step", "old_pair"), CASES)
def test_sigkill_between_the_renames_never_leaves_a_csv_without_its_sidecar(tmp_path, small, step, old_pair):
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "r.csv"
    if old_pair:
        done = _export("never", small, out, "--include-budget")
        assert done.returncode == 0, done.stderr
        assert _check_pairs(folder) == {"r.csv": (100, ["timestamp", "kwh", "epsilon"])}
    killed = _export(step, ENERGY, out)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = _check_pairs(folder)
    if step == "csv-renamed":  # the new pair is complete
        assert left == {"r.csv": (744, ["timestamp", "kwh"])}
    elif step == "start" and old_pair:  # nothing renamed yet: the old pair as it was
        assert left == {"r.csv": (100, ["timestamp", "kwh", "epsilon"])}
    else:
        assert left == {}
    # the next export into the folder completes its pair and removes the killed one's leftovers
    again = _export("never", ENERGY, folder / "other.csv")
    assert again.returncode == 0, again.stderr
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".lmdk-")]
    _check_pairs(folder)
