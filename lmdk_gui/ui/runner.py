"""Background work that must not block the GUI thread.

:class:`LatestOnlyRunner` owns one worker thread and runs *only the newest* submitted job: a burst of edits
submits a burst of jobs, and everything but the last is dropped before it starts (and asked to stop via
``should_cancel`` if it already has). Results come back through Qt signals, queued onto the GUI thread,
tagged with the job's generation so listeners can ignore stale ones.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal


class LatestOnlyRunner(QObject):
    finished = Signal(int, object)  # generation, result   (emitted on the GUI thread)
    failed = Signal(int, str)  # generation, message        (emitted on the GUI thread)
    # Internal: the worker thread only ever emits an int across threads; the Python result object is handed
    # over through ``_results`` under the lock (queued signals carrying Python objects from non-Qt threads
    # have crashed PySide6 with refcount errors).
    _ready = Signal(int)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cond = threading.Condition()
        self._pending: tuple[int, Callable[..., Any], tuple, dict] | None = None
        self._generation = 0
        self._running_generation = 0
        self._stop = False
        self._busy = False
        self._results: dict[int, tuple[bool, object]] = {}
        self._ready.connect(self._deliver)
        self._thread = threading.Thread(target=self._loop, name=f"lmdk-{name}", daemon=True)
        self._thread.start()

    # --------------------------------------------------------------------------------------- API
    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> int:
        """Queue ``fn(*args, should_cancel=…, **kwargs)``; returns its generation number."""
        with self._cond:
            self._generation += 1
            self._pending = (self._generation, fn, args, kwargs)
            self._cond.notify()
            return self._generation

    def cancel(self) -> None:
        """Drop the pending job and ask the running one to stop."""
        with self._cond:
            self._generation += 1
            self._pending = None

    @property
    def generation(self) -> int:
        return self._generation

    def is_current(self, generation: int) -> bool:
        return generation == self._generation

    def is_idle(self) -> bool:
        with self._cond:
            return self._pending is None and not self._busy

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Stop the thread (after its current job notices the cancel). True if it ended in time."""
        with self._cond:
            self._stop = True
            self._generation += 1
            self._pending = None
            self._cond.notify()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    # ------------------------------------------------------------------------------------ thread
    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                assert self._pending is not None
                gen, fn, args, kwargs = self._pending
                self._pending = None
                self._busy = True
            try:
                result = fn(*args, should_cancel=lambda g=gen: g != self._generation or self._stop, **kwargs)
            except Exception as e:  # noqa: BLE001 - reported to the GUI, never swallowed silently
                traceback.print_exc()
                outcome: tuple[bool, object] = (False, f"{type(e).__name__}: {e}")
            else:
                outcome = (True, result)
            with self._cond:
                self._busy = False
                if gen != self._generation or self._stop:
                    continue
                self._results[gen] = outcome
            try:
                self._ready.emit(gen)
            except RuntimeError:  # the QObject is being destroyed during shutdown
                return

    def _deliver(self, gen: int) -> None:
        with self._cond:
            outcome = self._results.pop(gen, None)
        if outcome is None or gen != self._generation:
            return
        ok, value = outcome
        if ok:
            self.finished.emit(gen, value)
        else:
            self.failed.emit(gen, str(value))
