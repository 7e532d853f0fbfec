"""The core stays Qt-free (DESIGN §10): importing every core module and the command pulls in no Qt."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import lmdk_gui.core

QT = ("PySide6", "pyqtgraph", "superqt", "qtpy", "PyQt5", "PyQt6")


def test_core_and_command_import_no_qt():
    mods = [m.name for m in pkgutil.walk_packages(lmdk_gui.core.__path__, "lmdk_gui.core.")]
    # (state: psygnal, no Qt; lean: the session's memory decisions)
    assert {"lmdk_gui.core.engine.release", "lmdk_gui.core.engine.state", "lmdk_gui.core.engine.lean"} <= set(mods)
    code = (
        "import importlib, sys\n"
        f"for m in {mods + ['lmdk_gui.cli', 'lmdk_gui.cli.common', 'lmdk_gui.cli.export_cmd']!r}:\n"
        "    importlib.import_module(m)\n"
        f"bad = sorted(k for k in sys.modules if k.split('.')[0] in {QT!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"Qt imported by the core: {out.stdout}"


def test_core_sources_have_no_qt_imports():
    import pathlib
    import re

    root = pathlib.Path(lmdk_gui.core.__file__).parent
    pat = re.compile(r"^\s*(from|import)\s+(" + "|".join(QT) + r")\b", re.M)
    offenders = [p.name for p in root.rglob("*.py") if pat.search(p.read_text())]
    assert offenders == []
