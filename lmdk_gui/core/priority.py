"""CPU priority of the worker threads (issue 15: the GUI thread must not wait for the CPU).

On a 2-core machine a click at 10^7 events has the preview worker, the previous click's denoising and the
R-run average runnable at once; scheduled as equals, the GUI thread got a third of a core while it painted
(stalls of 60–110 ms with 20–40 ms of its own CPU time). Linux keeps a nice value per thread, so a worker
lowers its own (:func:`lower_this_thread`) when it starts: the later stages (denoise, average) and the long
jobs (exports) by :data:`BACKGROUND`, so that the GUI and the preview of the newest state run first when
they compete, and take all the CPU when they do not. A thread can only lower its priority (raising it back needs a
privilege), which is why each worker sets it once, on its own thread. Elsewhere (macOS, Windows) this does
nothing: their threads have no nice value of their own.
"""

from __future__ import annotations

import os
import sys
import threading

#: What the user is waiting for (the preview of the newest state, a file being opened): the GUI's priority.
FOREGROUND = 0
#: Later stages (denoising, the R-run average, post stages) and long jobs with a progress bar (exports, batch
#: runs, evaluations): they yield to the GUI thread and to the foreground work.
BACKGROUND = 10

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
