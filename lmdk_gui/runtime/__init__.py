"""Process-wide tuning: the one place that changes the collector, the C allocator, thread priorities or Qt's
environment switches, and only when the ``lmdk-gui`` launcher says so.

Each change is a named mechanism in :data:`MECHANISMS`. Nothing is on until :func:`switch_on` (called only by
``lmdk_gui/app.py``); library code (the window, the session, the runners, the views) calls the hooks below at
the points where a mechanism acts (a window was built, a worker thread started, a job finished, a series was
set), and each hook does nothing unless its mechanism is on. A notebook, a script or a test that builds a
window therefore keeps its interpreter, its environment, its allocator and its threads as they were.

The launcher's choice: ``--runtime-tuning SPEC`` or, without it, the environment variable ``LMDK_RUNTIME``
(default ``default``). SPEC is ``default`` (every mechanism in :data:`DEFAULT`), ``off`` (none), or a comma
list of names, where ``default`` adds the default ones and ``-name`` removes one: ``default,-gui-gc``.
The measured gain of each is in docs/performance.md, "Runtime tuning (launcher only)".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

#: the environment variable the launcher reads when ``--runtime-tuning`` is not given
ENV = "LMDK_RUNTIME"


@dataclass(frozen=True)
class Mechanism:
    """A switchable process-wide change: ``what`` it does; ``on``/``off``, what switching it on does at
    once and how that is undone (most act only through the hooks below)."""

    what: str
    on: Callable[[], None] = lambda: None
    off: Callable[[], None] = lambda: None


def _gc_off() -> None:
    import gc

    gc.disable()


def _gc_back() -> None:
    import gc

    gc.unfreeze()
    gc.enable()


_QT_FILLS = "QT_NO_GUI_THREADPOOL"
_fills_before: list[str | None] = []


def _serial_fills() -> None:
    # read by Qt at the first fill of the process: set before any window paints (a value the user set is kept)
    _fills_before.append(os.environ.get(_QT_FILLS))
    os.environ.setdefault(_QT_FILLS, "1")


def _pooled_fills() -> None:
    before = _fills_before.pop() if _fills_before else None
    if before is None:
        os.environ.pop(_QT_FILLS, None)
    else:
        os.environ[_QT_FILLS] = before


MECHANISMS: dict[str, Mechanism] = {
    "gui-gc": Mechanism("collect cyclic garbage only on the GUI thread (pyqtgraph's GarbageCollector, every "
                        "1 s) so that no worker thread destroys Qt objects held in cycles"),
    "freeze": Mechanism("no automatic collections while the launcher imports; freeze what is alive when the "
                        "window is built out of every later collection", _gc_off, _gc_back),
    "serial-fills": Mechanism("QT_NO_GUI_THREADPOOL=1: Qt's raster engine fills on the painting thread, never "
                              "in pieces on its GUI thread pool", _serial_fills, _pooled_fills),
    "priority": Mechanism("worker threads lower their own nice value when they start (Linux)"),
    "heap": Mechanism("glibc: blocks of 1 MB or more mapped on their own for a large series (mallopt), the "
                      "free heap trimmed after each job of a process over 1 GiB (malloc_trim)"),
}
#: what ``lmdk-gui`` switches on unless told otherwise
DEFAULT: frozenset[str] = frozenset(MECHANISMS)

_on: set[str] = set()


def parse(spec: str) -> frozenset[str]:
    """The mechanisms ``spec`` names (see the module's docstring); ValueError naming an unknown one."""
    names: set[str] = set()
    for part in (p.strip() for p in spec.split(",")):
        if part in ("", "off"):
            continue
        if part == "default":
            names |= DEFAULT
        elif part.startswith("-") and part[1:] in MECHANISMS:
            names.discard(part[1:])
        elif part in MECHANISMS:
            names.add(part)
        else:
            raise ValueError(f"unknown runtime tuning {part!r} (expected off, default or some of "
                             f"{', '.join(MECHANISMS)})")
    return frozenset(names)


def from_environment() -> frozenset[str]:
    """The launcher's default: ``LMDK_RUNTIME`` parsed, or :data:`DEFAULT`."""
    spec = os.environ.get(ENV)
    return DEFAULT if spec is None else parse(spec)


def switch_on(names: Iterable[str]) -> None:
    """Switch these mechanisms on (the launcher, once, before it imports Qt)."""
    for name in names:
        if name not in _on:
            MECHANISMS[name].on()
            _on.add(name)


def switch_off() -> None:
    """Undo what switching on did at once (tests); what a hook did since stays done (a lowered thread
    priority cannot be raised again)."""
    for name in sorted(_on):
        MECHANISMS[name].off()
    _on.clear()


def active() -> frozenset[str]:
    """The mechanisms switched on (none unless the launcher ran in this process)."""
    return frozenset(_on)


# ------------------------------------------------------------------------------------------------ hooks
def window_built() -> None:
    """A main window was built: with ``freeze``, what is alive now is frozen; with ``gui-gc``, collection is
    handed to the GUI thread's collector."""
    if not _on & {"freeze", "gui-gc"}:
        return
    from . import collector

    collector.window_built(freeze="freeze" in _on, gui_thread="gui-gc" in _on)


def worker_started(nice: int) -> None:
    """A worker thread started (called on it): with ``priority``, it lowers its nice value by ``nice``
    (:mod:`.priority`)."""
    if "priority" in _on:
        from .priority import lower_this_thread

        lower_this_thread(nice)


def job_finished() -> None:
    """A worker's job finished and its result is on its way: with ``heap``, a large process returns its free
    heap to the system (:func:`.heap.release_free_heap`)."""
    if "heap" in _on:
        from .heap import release_free_heap

        release_free_heap()


def series_set(large: bool) -> None:
    """A session took a series (``large``: it keeps lean): with ``heap``, glibc maps large blocks on their own
    while it is large (:func:`.heap.map_large_blocks`)."""
    if "heap" in _on:
        from .heap import map_large_blocks

        map_large_blocks(large)

