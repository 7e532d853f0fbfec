"""The real ``lmdk-gui`` on a real X server (Xvfb) with Qt's xcb platform (issue 13).

The rest of the suite draws offscreen, which needs none of the system libraries the xcb platform loads; this
test starts the installed entry point the way a desktop launcher does and fails if the window cannot be
shown, never draws its preview, does not close cleanly, or prints a traceback. Skipped when ``xvfb-run`` is
missing (``.ci/run`` installs it, so CI always runs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from lmdk_gui.app import SAMPLE_FILES
from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="xvfb-run is not installed")


def run_gui(settings, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.update(QT_QPA_PLATFORM="xcb", LMDK_GUI_SETTINGS=str(settings), PYTHONPATH=str(ROOT))
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24",
           sys.executable, "-m", "lmdk_gui", *args, "--smoke-test"]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


def check(out: subprocess.CompletedProcess, shown: str) -> None:
    report = f"exit {out.returncode}\nstdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    assert out.returncode == 0, report
    assert "Traceback" not in out.stderr, report
    assert f"shown with its {shown}" in out.stdout and "on xcb" in out.stdout, report
    # 90 % of the 1280×800 screen (the window asks to be maximized there: Xvfb has no window manager to do it)
    assert "1152×720" in out.stdout, report


@pytest.mark.parametrize("sample", sorted(SAMPLE_FILES))
def test_each_sample_on_xcb(tmp_path, sample):
    check(run_gui(tmp_path / "s.ini", "--sample", sample), "preview")


def test_no_argument_on_xcb_fresh_then_reopening_the_last_file(tmp_path):
    settings = tmp_path / "s.ini"
    check(run_gui(settings), "empty state")
    check(run_gui(settings, "--sample", "gps"), "preview of 2,144 events")
    check(run_gui(settings), "preview of 2,144 events")  # `lmdk-gui` reopens the last file
