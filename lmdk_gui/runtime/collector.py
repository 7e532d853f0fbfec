"""The ``gui-gc`` and ``freeze`` mechanisms (switched on by the launcher only, see
:mod:`lmdk_gui.runtime`).

``gui-gc``: pyqtgraph's GarbageCollector switches automatic collection off and collects on a 1 s timer of the
GUI thread, so that a collection triggered by an allocation on a worker thread never destroys Qt objects held
in Python cycles (pyqtgraph's menus) off the GUI thread. ``freeze``: no automatic collection while the
launcher imports, and what is alive when the window is built (modules, classes, functions that live as long as
the process) is frozen out of every later collection.
"""

from __future__ import annotations

import gc
from typing import Any

_GC: Any = None  # the GUI thread's collector, once the first window was built
_done = False


def window_built(*, freeze: bool, gui_thread: bool) -> None:
    """The first window was built (later ones change nothing): freeze (``freeze``), then hand collection to
    the GUI thread (``gui_thread``); with ``freeze`` alone, automatic collection (off while the launcher
    imported) resumes."""
    global _GC, _done
    if _done:
        return
    _done = True
    if freeze:
        gc.freeze()
    if gui_thread:
        from pyqtgraph.util.garbage_collector import GarbageCollector

        _GC = GarbageCollector(interval=1.0)
    elif freeze:
        gc.enable()
