"""The ``priority`` mechanism (switched on by the launcher only, see :mod:`lmdk_gui.runtime`): CPU priority of
the worker threads — the GUI thread first, then the newest preview, then the rest.

On two cores a click that interrupts the previous click's denoising or R-run average has the GUI thread, the
preview worker and its second thread competing with those stages; scheduled as equals, each gets a share of
the cores the click needs. Linux keeps a nice value per thread, so a worker lowers its own when it starts
(``runtime.worker_started``, which calls :func:`lower_this_thread`): the preview and the file being opened by
:data:`FOREGROUND`, the helpers that reduce large views by :data:`HELPER`, the later stages (denoise, average,
post) and the long jobs (exports, batch runs, evaluations) by :data:`BACKGROUND`. Alone, a worker still has
all the CPU. A thread can only lower its priority (raising it back needs a privilege), so each worker sets it
once, on its own thread; threads it starts inherit it. Elsewhere (macOS, Windows) this does nothing: their
threads have no nice value of their own. Measured gain: docs/performance.md.
"""

from __future__ import annotations

import os
import sys
import threading

#: What the user is waiting for (the preview of the newest state, a file being opened): just behind the GUI
#: thread, which paints it.
FOREGROUND = 6
#: The helper threads that reduce a large view to what is drawn (the budget bars and preview rows zoomed out
#: over millions of events): after the GUI thread, which paints meanwhile, and before the later stages.
HELPER = 8
#: Later stages (denoising, the R-run average, post stages) and long jobs with a progress bar (exports, batch
#: runs, evaluations): they yield to the GUI thread and to the foreground work.
BACKGROUND = 14

_LINUX = sys.platform.startswith("linux") and hasattr(os, "setpriority")


def lower_this_thread(by: int) -> bool:
    """Add ``by`` to the calling thread's nice value (Linux; nothing elsewhere or when ``by`` ≤ 0). True when
    it was lowered. Never raises: a priority is a hint, and a thread that keeps its own still works."""
    if by <= 0 or not _LINUX:
        return False
    tid = threading.get_native_id()
    try:
        now = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, now + by))
    except OSError:
        return False
    return True


def this_thread_nice() -> int | None:
    """The calling thread's nice value (Linux), else None."""
    if not _LINUX:
        return None
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
