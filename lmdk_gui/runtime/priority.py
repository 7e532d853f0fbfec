"""CPU priority of the worker threads (issue 15: the GUI thread first, then the newest preview).

On two cores a click that interrupts the previous click's denoising or R-run average has the GUI thread,
the preview worker and its second thread competing with those stages; scheduled as equals, each got a share
of the cores the click needed. Linux keeps a nice value per thread, so a worker lowers its own
(:func:`lower_this_thread`) when it starts: the preview and the file being opened by :data:`FOREGROUND`, the
later stages (denoise, average, post) and the long jobs (exports, batch runs, evaluations) by
:data:`BACKGROUND`. When they compete, the GUI thread runs first, then the preview of the newest state;
alone, a worker still has all the CPU (measured: tests/benchmarks/bench_busy_clicks.py, docs/performance.md).
A thread can only lower its priority (raising it back needs a privilege), so each worker sets it once, on
its own thread; threads it starts inherit it (the preview's second thread is started by the preview worker).
Elsewhere (macOS, Windows) this does nothing: their threads have no nice value of their own.
"""

from __future__ import annotations

import os
import sys
import threading

#: What the user is waiting for (the preview of the newest state, a file being opened): just behind the GUI
#: thread, which paints it. At the GUI's own priority, the preview's two threads had the GUI thread wait for a
#: core 14-25 ms per click at 10^7 events (medians; up to 116 ms), against 5-14 ms six levels lower (schedstat
#: run-queue waits, 10 clicks × 3 runs alternating; at 10^6 7-8 → 4-5 ms; issue 15, docs/performance.md).
FOREGROUND = 6
#: The helper threads that reduce a large view to what is drawn (the budget bars and preview rows zoomed out
#: over millions of events): after the GUI thread, which paints meanwhile (at 10^7 events the first preview's
#: rows were laid out and painted while both helpers ran, with the GUI thread waiting for a core), and before
#: the later stages.
HELPER = 8
#: Later stages (denoising, the R-run average, post stages) and long jobs with a progress bar (exports, batch
#: runs, evaluations): they yield to the GUI thread and to the foreground work (eight levels behind the
#: preview: ≈ 6 to 1 when they compete, as 10 levels behind the GUI's own priority were ≈ 9 to 1).
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
