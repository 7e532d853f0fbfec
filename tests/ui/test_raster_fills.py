"""The launcher's ``serial-fills`` (lmdk_gui/runtime): Qt's GUI thread pool, which takes every fill of 96 or more
spans in pieces while the painting thread waits, is never started; a window built without the launcher leaves
Qt's default."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

FILL_AND_LIST_THREADS = """
import glob, os, sys
os.environ.pop("QT_NO_GUI_THREADPOOL", None)  # this test's own process may have set it
os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ["LMDK_GUI_SETTINGS"] = sys.argv[2]
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication
if sys.argv[1] == "launcher":
    from lmdk_gui import runtime
    runtime.switch_on({"serial-fills"})  # as lmdk_gui/app.py does, before Qt starts
app = QApplication([])
from lmdk_gui.ui.window.main_window import MainWindow
window = MainWindow(load_default=False)
image = QImage(800, 800, QImage.Format.Format_ARGB32_Premultiplied)
painter = QPainter(image)
painter.setRenderHint(QPainter.RenderHint.Antialiasing)
painter.setBrush(QColor(255, 0, 0, 128))
painter.drawEllipse(0, 0, 800, 800)  # 800 antialiased spans
painter.end()
print(sum(open(f).read().strip() == "Thread (pooled)" for f in glob.glob("/proc/self/task/*/comm")))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread names are read from /proc")
@pytest.mark.parametrize("tuned_by", ["launcher", "nobody"])
def test_a_large_fill_starts_no_gui_thread_pool_once_the_launcher_said_so(tuned_by, tmp_path):
    out = subprocess.run([sys.executable, "-c", FILL_AND_LIST_THREADS, tuned_by, str(tmp_path / "s.ini")],
                         capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[2])
    pooled = int(out.stdout.split()[-1])
    # with the window alone, the same fill starts Qt's pool: the count is a real observation
    assert (pooled == 0) if tuned_by == "launcher" else (pooled > 0), out.stdout
