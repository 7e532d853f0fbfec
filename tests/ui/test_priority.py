"""Worker threads' CPU priority, the launcher's ``priority`` mechanism (lmdk_gui/runtime): the later stages
yield the cores to the GUI thread and the preview. Library code alone leaves them alone (tests/ui/test_runtime.py)."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

from lmdk_gui import runtime
from lmdk_gui.core.data.series import Series
from lmdk_gui.runtime import priority
from lmdk_gui.ui.window.runner import LatestOnlyRunner, WorkerJob
from lmdk_gui.ui.window.session import Session

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's")


@pytest.fixture
def launcher_priorities(monkeypatch):
    """As ``lmdk-gui`` runs with ``priority`` switched on (only the hook's state; switching on does nothing
    at once). Afterwards the threads it lowered go back to the process' priority where allowed (root), so
    that threads they start later for other tests do not inherit theirs (tests/ui/test_runtime.py)."""
    import os

    monkeypatch.setattr(runtime, "_on", {"priority"})
    yield
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    for tid in os.listdir("/proc/self/task") if sys.platform.startswith("linux") else ():
        try:
            if os.getpriority(os.PRIO_PROCESS, int(tid)) != nice:
                os.setpriority(os.PRIO_PROCESS, int(tid), nice)
        except OSError:  # ended meanwhile, or not allowed to raise a priority
            pass


def _nice_of(run_on) -> int | None:
    """The nice value seen by a job run through ``run_on(job)``."""
    seen: list[int | None] = []
    run_on(lambda: seen.append(priority.this_thread_nice()))
    return seen[0]


def test_lowering_by_nothing_changes_nothing():
    before = priority.this_thread_nice()
    assert priority.lower_this_thread(0) is False
    assert priority.lower_this_thread(-5) is False  # never raises a priority (nor fails trying)
    assert priority.this_thread_nice() == before


@linux_only
def test_lower_this_thread_affects_only_the_calling_thread():
    main_before = priority.this_thread_nice()
    assert main_before is not None
    seen: list[tuple[bool, int | None]] = []

    def work() -> None:
        before = priority.this_thread_nice()
        ok = priority.lower_this_thread(priority.BACKGROUND)
        seen.append((ok, None if before is None else priority.this_thread_nice() - before))

    t = threading.Thread(target=work)
    t.start()
    t.join()
    ok, delta = seen[0]
    assert ok and delta == min(priority.BACKGROUND, 19 - main_before)
    assert priority.this_thread_nice() == main_before


@linux_only
def test_runners_run_background_jobs_behind_the_gui_thread(qtbot, launcher_priorities):
    gui = priority.this_thread_nice()
    assert gui is not None

    def through(runner: LatestOnlyRunner):
        def run(job):
            with qtbot.waitSignal(runner.finished, timeout=10_000):
                runner.submit(lambda should_cancel: job())
        return run

    fg, bg = LatestOnlyRunner("fg-test"), LatestOnlyRunner("bg-test", nice=priority.BACKGROUND)
    try:
        assert _nice_of(through(fg)) == min(19, gui + priority.FOREGROUND)
        assert _nice_of(through(bg)) == min(19, gui + priority.BACKGROUND)
    finally:
        fg.shutdown()
        bg.shutdown()


@linux_only
def test_long_jobs_run_in_the_background(qtbot, launcher_priorities):
    gui = priority.this_thread_nice()
    assert gui is not None

    class Probe(WorkerJob):
        def work(self, progress, should_cancel):
            return priority.this_thread_nice()

        def _emit_finished(self) -> None:
            pass

    job = Probe("probe").start()
    assert job.wait(10)
    assert job.result == min(19, gui + priority.BACKGROUND)


@linux_only
def test_the_session_computes_the_preview_first_and_its_later_stages_in_the_background(qtbot, launcher_priorities):
    """The preview of the newest state runs just behind the GUI thread; denoising and the R-run average (which
    a click interrupts anyway) behind it, so that a click's preview does not share the cores with them."""
    s = Session()
    try:
        with qtbot.waitSignal(s.previewChanged, timeout=30_000):  # (submitted after the series' first paint)
            s.set_series(Series.from_arrays(np.random.default_rng(0).normal(10, 2, 50_000)))
        gui = priority.this_thread_nice()
        assert gui is not None
        for runner, expected in ((s._preview_runner, gui + priority.FOREGROUND),
                                 (s._denoise_runner, gui + priority.BACKGROUND),
                                 (s._average_runner, gui + priority.BACKGROUND),
                                 (s._post_runner, gui + priority.BACKGROUND)):
            seen: list[int | None] = []
            with qtbot.waitSignal(runner.finished, timeout=10_000):
                runner.submit(lambda should_cancel, seen=seen: seen.append(priority.this_thread_nice()))
            assert seen == [min(19, expected)], runner
    finally:
        s.shutdown()


@linux_only
def test_the_rows_reduce_large_views_after_the_gui_thread_and_before_the_later_stages(qtbot, launcher_priorities):
    """Zoomed out over millions of events, the budget bars and preview rows are reduced on helper threads
    while the GUI thread lays out and paints (the first preview at 10^7 events: it waited for a core)."""
    from lmdk_gui.ui.views.multiples import BudgetPlot, PreviewPlot

    gui = priority.this_thread_nice()
    assert gui is not None
    for view in (BudgetPlot(), PreviewPlot()):
        qtbot.addWidget(view)
        nice = view._pool.submit(priority.this_thread_nice).result(timeout=10)
        assert nice == min(19, gui + priority.HELPER)
    assert 0 < priority.FOREGROUND < priority.HELPER < priority.BACKGROUND
