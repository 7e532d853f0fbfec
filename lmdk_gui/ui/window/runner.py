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

from ... import runtime
from ...runtime.priority import BACKGROUND, FOREGROUND


class LatestOnlyRunner(QObject):
    finished = Signal(int, object)  # generation, result   (emitted on the GUI thread)
    failed = Signal(int, str)  # generation, message        (emitted on the GUI thread)
    # Internal: the worker thread only ever emits an int across threads; the Python result object is handed
    # over through ``_results`` under the lock (queued signals carrying Python objects from non-Qt threads
    # have crashed PySide6 with refcount errors).
    _ready = Signal(int)

    def __init__(self, name: str, parent: QObject | None = None, *, nice: int = FOREGROUND,
                 finished: Callable[[int, Any], object] | None = None,
                 failed: Callable[[int, str], object] | None = None) -> None:
        """``nice``: how much the worker lowers its CPU priority when the launcher switched ``priority`` on
        (:mod:`~lmdk_gui.runtime.priority`): the later stages nobody waits for pass ``BACKGROUND``.
        ``finished``, ``failed``: connected to those signals."""
        super().__init__(parent)
        if finished is not None:
            self.finished.connect(finished)
        if failed is not None:
            self.failed.connect(failed)
        self._nice = nice
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

    def wait_stopped(self, should_give_up: Callable[[], bool] = lambda: False) -> None:
        """Block (another thread) until no job of this runner runs: a cancelled one has returned and let go of
        its arrays. Gives up when ``should_give_up()`` turns True (polled every 20 ms) or at shutdown."""
        with self._cond:
            while self._busy and not self._stop and not should_give_up():
                self._cond.wait(0.02)

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
        runtime.worker_started(self._nice)
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
            outcome: tuple[bool, object]
            try:
                outcome = (True, fn(*args, should_cancel=lambda g=gen: g != self._generation or self._stop,
                                    **kwargs))
            except Exception as e:  # noqa: BLE001 - reported to the GUI, never swallowed silently
                traceback.print_exc()
                outcome = (False, f"{type(e).__name__}: {e}")
            with self._cond:
                current = gen == self._generation and not self._stop
                if current:
                    self._results[gen] = outcome
            # not kept alive by this thread while it waits for the next job (nor the job's arguments: the
            # previous preview's releases, whose values a large window may let go meanwhile)
            del outcome, fn, args, kwargs
            with self._cond:  # (after the del: ``wait_stopped`` means the job's arrays are gone)
                self._busy = False
                self._cond.notify_all()
            if current:
                try:
                    self._ready.emit(gen)
                except RuntimeError:  # the QObject is being destroyed during shutdown
                    return
            # once the result is on its way: the job's temporaries (and the arrays of the results it replaced,
            # freed on the GUI thread) leave freed heap that glibc would keep resident (the launcher's ``heap``)
            runtime.job_finished()

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


_PROGRESS, _DONE, _FAILED, _CANCELLED = range(4)


class WorkerJob(QObject):
    """One long job (an export, an evaluation) on its own thread, with progress and cancel.

    Subclasses implement :meth:`work` and may override :meth:`expected_error` (a clear message for errors that
    are the user's business rather than bugs) and :meth:`was_cancelled`. Signals are emitted on the GUI thread;
    like :class:`LatestOnlyRunner`, only an int crosses threads and the payload travels under a lock.
    Subclasses add their own ``finished`` signal and emit it from :meth:`_emit_finished`.
    """

    progress = Signal(int, int)  # done, total
    failed = Signal(str)  # one clear message
    cancelled = Signal()
    _event = Signal(int)

    #: exceptions that mean "the job stopped because it was asked to"
    cancel_exceptions: tuple[type[BaseException], ...] = ()
    #: appended to the message of an unexpected failure (e.g. "; nothing was written")
    failure_note = ""
    #: how much the job's thread lowers its CPU priority with the launcher's ``priority``
    #: (:mod:`~lmdk_gui.runtime.priority`): the GUI thread and the preview go first when they compete for the
    #: cores; alone, the job has them all
    nice = BACKGROUND

    def __init__(self, name: str, total: int = 0, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.result: Any = None
        self.message = ""
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._done_units = 0
        self._total_units = total
        self._last_permille = -1
        self._state = "running"
        self._event.connect(self._on_event)
        self._thread = threading.Thread(target=self._run, name=f"lmdk-{name}", daemon=True)

    # ----------------------------------------------------------------------------------------- API
    def start(self):
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Ask the job to stop; ``cancelled`` follows once it has cleaned up."""
        self._cancel.set()

    def is_running(self) -> bool:
        return self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def state(self) -> str:
        return self._state

    # ------------------------------------------------------------------------------- to override
    def work(self, progress: Callable[[int, int], None], should_cancel: Callable[[], bool]) -> Any:
        raise NotImplementedError

    def expected_error(self, exc: Exception) -> str | None:
        """The message for an anticipated failure, or None for a bug (reported with its type)."""
        return None

    def was_cancelled(self, result: Any) -> bool:
        """Whether a job that returned normally stopped early because it was cancelled."""
        return False

    def _emit_finished(self) -> None:
        raise NotImplementedError

    # -------------------------------------------------------------------------------------- thread
    def _progress(self, done: int, total: int) -> None:
        permille = 1000 * done // max(total, 1)
        with self._lock:
            self._done_units, self._total_units = done, total
            if permille == self._last_permille and done != total:
                return  # at most ~1000 progress events per job
            self._last_permille = permille
        self._emit(_PROGRESS)

    def _run(self) -> None:
        runtime.worker_started(self.nice)
        try:
            result = self.work(self._progress, self._cancel.is_set)
        except self.cancel_exceptions:
            self._emit(_CANCELLED)
        except Exception as e:  # noqa: BLE001 - any failure ends in one message, never a hang
            msg = self.expected_error(e)
            if msg is None:
                traceback.print_exc()
                msg = f"the {self.name} failed unexpectedly ({type(e).__name__}: {e}){self.failure_note}"
            self.message = msg
            self._emit(_FAILED)
        else:
            with self._lock:
                self.result = result
            self._emit(_CANCELLED if self.was_cancelled(result) else _DONE)

    def _emit(self, code: int) -> None:
        try:
            self._event.emit(code)
        except RuntimeError:  # the receiving window is already gone
            pass

    def _on_event(self, code: int) -> None:
        if code == _PROGRESS:
            with self._lock:
                done, total = self._done_units, self._total_units
            self.progress.emit(done, total)
        elif code == _DONE:
            self._state = "finished"
            self._emit_finished()
        elif code == _FAILED:
            self._state = "failed"
            self.failed.emit(self.message)
        else:
            self._state = "cancelled"
            self.cancelled.emit()
