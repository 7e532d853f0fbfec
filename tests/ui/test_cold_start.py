"""Issue 15, cold start: what the first paint does not need stays out of the window's imports.

numba (and the scipy it imports) load on a kernel's first call (core/engine/lazyjit.py), off the GUI thread; the
raw preview of a small series does not wait for it (its kernels run as Python until then); the export and import dialogs load where
first used; ``lmdk-gui`` imports numpy and pandas before PySide6 (which reads the source of every module
imported after it). These checks run in fresh processes, so an import added anywhere on the way fails them.
"""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

#: not imported by ``import lmdk_gui.ui.window.main_window`` (numba brings scipy and llvmlite)
DEFERRED = ("numba", "scipy", "llvmlite", "lmdk_gui.ui.dialogs.export_dialog", "lmdk_gui.core.publish.export", "lmdk_gui.ui.dialogs.import_dialog")

#: Build the window, open a file, draw it and its first preview, wait for the denoised lines and the R-run
#: average; print the threads that imported numba.
BUILD_AND_OPEN = r"""
import os, sys, threading
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from lmdk_gui.core.engine import lazyjit
importers = set()
real = lazyjit.real_numba
def watched():
    importers.add(threading.current_thread().name)
    return real()
lazyjit.real_numba = watched
from PySide6.QtWidgets import QApplication
from lmdk_gui.ui.window.main_window import SAMPLES, MainWindow
from lmdk_gui.app import SAMPLE_FILES
app = QApplication([])
w = MainWindow(load_default=False)
assert "numba" not in sys.modules and "lmdk_gui.ui.dialogs.export_dialog" not in sys.modules
w.show()
assert w.open_series(SAMPLES / SAMPLE_FILES["energy"][0])
while not (w.session.is_denoised_current() and w.session.average is not None):
    app.processEvents()
w.preview_plot.repaint()
assert "numba" in sys.modules  # the denoised lines and the average needed it ...
print(",".join(sorted(importers)))  # ... and these threads imported it
w.close()
"""


def _run(code: str, tmp_path) -> str:
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT), "LMDK_GUI_SETTINGS": str(tmp_path / "s.ini")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""


def test_importing_the_window_imports_no_numba_scipy_or_export(tmp_path):
    code = f"import sys\nimport lmdk_gui.ui.window.main_window\nprint(','.join(m for m in {DEFERRED!r} if m in sys.modules))"
    assert _run(code, tmp_path) == ""


def test_the_first_preview_needs_no_numba_and_the_gui_thread_never_imports_it(tmp_path):
    """Building the window, opening the 744-event sample and drawing its first preview: the preview worker
    does not import numba (preview.INTERPRET_MAX); the denoise stage or the average imports it, on their
    threads, never the GUI thread."""
    threads = set(_run(BUILD_AND_OPEN, tmp_path).split(","))
    assert threads and threads <= {"lmdk-denoise", "lmdk-average"}, threads


def test_importing_every_core_module_imports_no_numba(tmp_path):
    """The kernels' modules define their kernels without numba; the first call imports it."""
    code = ("import importlib, pkgutil, sys, lmdk_gui.core\n"
            "for m in pkgutil.walk_packages(lmdk_gui.core.__path__, 'lmdk_gui.core.'):\n"
            "    importlib.import_module(m.name)\n"
            "print(','.join(m for m in ('numba', 'scipy', 'llvmlite') if m in sys.modules))")
    assert _run(code, tmp_path) == ""


def test_lmdk_gui_imports_pandas_before_pyside6(tmp_path):
    """sys.modules keeps import order: pandas must come before PySide6 (and numba after the window)."""
    code = ("import os, sys\n"
            "os.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
            "from lmdk_gui.app import main\n"
            "assert main(['--sample', 'energy', '--smoke-test']) == 0\n"
            "mods = list(sys.modules)\n"
            "print(mods.index('pandas') < mods.index('PySide6') < mods.index('numba') if 'numba' in mods else\n"
            "      mods.index('pandas') < mods.index('PySide6'))")
    assert _run(code, tmp_path) == "True"


def test_the_window_lmdk_gui_builds_imports_no_superqt(tmp_path):
    """superqt's package imports every widget it has (≈ 45 ms): the window ``lmdk-gui`` builds (deferred
    tabs) leaves it to the first dialog or tab that needs it."""
    code = ("import os, sys\n"
            "os.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
            "from PySide6.QtWidgets import QApplication\n"
            "from lmdk_gui.ui.window.main_window import MainWindow\n"
            "app = QApplication([])\n"
            "w = MainWindow(load_default=False, defer_tabs=True)\n"
            "print(','.join(m for m in ('superqt',) if m in sys.modules))")
    # (importlib.metadata is psygnal's, which the session's state needs: docs/performance.md)
    assert _run(code, tmp_path) == ""


def test_lmdk_gui_collects_no_garbage_before_its_window(tmp_path):
    """With the launcher's ``freeze`` (lmdk_gui/runtime), the imports' automatic collections are skipped:
    collection stays off until the window is built and what is alive then is frozen."""
    code = ("import gc, os\n"
            "os.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
            "runs, marks = [], []\n"
            "gc.callbacks.append(lambda phase, info: runs.append(info['generation']) if phase == 'stop' else None)\n"
            "from lmdk_gui import app\n"
            "imports = app._import_numerics_before_qt\n"
            "app._import_numerics_before_qt = lambda: (marks.append(len(runs)), imports())\n"
            "freeze = gc.freeze\n"
            "gc.freeze = lambda: (marks.append(len(runs)), freeze())  # the window takes collection over\n"
            "assert app.main(['--sample', 'energy', '--smoke-test']) == 0\n"
            "print(marks[1] - marks[0])")
    assert _run(code, tmp_path) == "0"
