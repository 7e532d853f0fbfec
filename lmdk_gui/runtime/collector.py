"""The ``gui-gc``, ``freeze`` and ``numba-freeze`` mechanisms (switched on by the launcher only, see
:mod:`lmdk_gui.runtime`).

``gui-gc``: pyqtgraph's GarbageCollector switches automatic collection off and collects on a 1 s timer of the
GUI thread, so that a collection triggered by an allocation on a worker thread never destroys Qt objects held
in Python cycles (pyqtgraph's menus) off the GUI thread. ``freeze``: what is alive when the window is built
(modules, classes, functions that live as long as the process) is frozen out of every later collection.
``numba-freeze``: the GUI thread's collector skips its checks while numba loads or compiles (peeking at
numba's compiler lock) and freezes what is alive once numba has loaded.
"""

from __future__ import annotations

import gc
from typing import Any

from ..core.engine import lazyjit

_GC: Any = None
_numba_frozen = False


def window_built(*, freeze: bool, gui_thread: bool) -> None:
    """The first window was built: freeze (``freeze``), then hand collection to the GUI thread
    (``gui_thread``); with ``freeze`` alone, automatic collection (off while the launcher imported) resumes."""
    global _GC
    if freeze:
        gc.freeze()
    if gui_thread and _GC is None:
        _GC = _make_collector()
    elif not gui_thread and freeze:
        gc.enable()


def _make_collector() -> Any:
    from pyqtgraph.util.garbage_collector import GarbageCollector

    from . import enabled

    class _Collector(GarbageCollector):
        def check(self) -> None:
            if enabled("numba-freeze"):
                freeze_numba_once()
                if numba_loading():
                    return
            super().check()

    return _Collector(interval=1.0)


def loading_lock() -> Any:
    """The lock a thread holds while it imports numba (lazyjit's) or compiles a kernel or loads it from the
    on-disk cache (numba's own RLock: ``acquire(False)`` only tells whether it is free)."""
    if not lazyjit.imported():
        return lazyjit.import_lock
    from numba.core.compiler_lock import global_compiler_lock

    return global_compiler_lock._lock


def numba_loading() -> bool:
    """Whether a thread is importing numba or compiling a kernel right now."""
    lock = loading_lock()
    if not lock.acquire(False):
        return True
    lock.release()
    return False


def freeze_numba_once() -> None:
    """Once numba has been loaded, what is alive then (its modules, the first compilations' objects) is
    frozen; never while a compilation runs: an unfinished compilation's objects must stay collectable."""
    global _numba_frozen
    if _numba_frozen or not lazyjit.imported():
        return
    lock = loading_lock()
    if not lock.acquire(False):
        return
    try:
        gc.freeze()
        _numba_frozen = True
    finally:
        lock.release()
