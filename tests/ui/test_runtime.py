"""Process-wide tuning (lmdk_gui/runtime) is the launcher's alone (issue 43): a window built in a test process
leaves the collector, the environment, the C allocator and the threads' priorities as they were; ``lmdk-gui``
applies each mechanism when switched on and none when switched off."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from lmdk_gui import runtime
from lmdk_gui.core.data.series import Series
from lmdk_gui.runtime import heap
from tests.conftest import ROOT


def _thread_nices() -> dict[int, int]:
    """Every thread of this process → its nice value (Linux keeps one per thread)."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            out[int(tid)] = os.getpriority(os.PRIO_PROCESS, int(tid))
        except OSError:  # ended meanwhile
            pass
    return out


def _refuse(what: str):
    def fail(*_a, **_k):
        raise AssertionError(f"library code called {what}")
    return fail


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values, glibc")
def test_a_window_changes_nothing_process_wide(qtbot, monkeypatch):
    """Built, fed a series large enough to keep lean, clicked through its preview, later stages and helper
    threads: the collector, the environment, glibc's settings and every thread's priority are unchanged, and
    none of the setters was called (each is made to fail)."""
    import superqt  # noqa: F401 - (its qtpy sets QT_API when first imported: not ours to undo)

    from lmdk_gui.core.engine import memory as memory_mod
    from lmdk_gui.ui.window.main_window import MainWindow

    assert runtime.active() == frozenset()
    collector = (gc.isenabled(), gc.get_freeze_count(), gc.get_threshold())
    environ = dict(os.environ)
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    earlier = set(_thread_nices())  # (threads an earlier test started with the runtime switched on are not ours)
    mapped = heap._mapped
    for name in ("disable", "freeze", "set_threshold"):
        monkeypatch.setattr(gc, name, _refuse(f"gc.{name}"))
    monkeypatch.setattr(os, "setpriority", _refuse("os.setpriority"))
    monkeypatch.setattr(heap, "_set_option", _refuse("mallopt"))
    monkeypatch.setattr(heap, "_trim", _refuse("malloc_trim"))
    monkeypatch.setattr(heap, "TRIM_ABOVE_BYTES", 0)  # (would trim after every job if switched on)
    monkeypatch.setattr(memory_mod, "LEAN_MIN", 1000)  # a lean session (auto): where the heap hook acts

    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    s = w.session
    with qtbot.waitSignal(s.previewChanged, timeout=60_000):
        s.set_series(Series.from_arrays(np.random.default_rng(0).normal(10, 2, 5000)))
    assert s.lean
    s.set_landmarks([10, 20, 30])
    qtbot.waitUntil(lambda: s.is_denoised_current() and s.average is not None, timeout=60_000)
    for view in (w.budget_plot, w.preview_plot):  # the helper threads that reduce large views
        view._pool.submit(lambda: None).result(timeout=10)
    threads = {tid: v for tid, v in _thread_nices().items() if tid not in earlier}

    assert (gc.isenabled(), gc.get_freeze_count(), gc.get_threshold()) == collector
    assert dict(os.environ) == environ
    assert heap._mapped == mapped
    assert len(threads) > 4  # the window's runners and helpers did start threads ...
    assert set(threads.values()) == {nice}  # ... all at the process' priority
    assert runtime.active() == frozenset()
    w.close()


LAUNCH = r"""
import gc, json, os, sys, threading
from lmdk_gui import app, runtime
seen = {}
real = runtime.window_built
def built():
    real()
    seen["gc_enabled"] = gc.isenabled()
    seen["frozen"] = gc.get_freeze_count() > 0
runtime.window_built = built
nices = {}
finished = runtime.job_finished
def job_finished():  # on the worker, after each job: its priority as it ran
    nices[threading.current_thread().name] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    finished()
runtime.job_finished = job_finished
code = app.main(sys.argv[1:])
seen.update(code=code, active=sorted(runtime.active()), fills=os.environ.get("QT_NO_GUI_THREADPOOL"),
            gui=os.getpriority(os.PRIO_PROCESS, 0), preview=nices["lmdk-preview"])
print(json.dumps(seen))
"""


def _launch(tmp_path, spec: str | None, *args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (runtime.ENV, "QT_NO_GUI_THREADPOOL")}
    env.update(PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen", LMDK_GUI_SETTINGS=str(tmp_path / "s.ini"))
    if spec is not None:
        env[runtime.ENV] = spec
    out = subprocess.run([sys.executable, "-c", LAUNCH, "--sample", "energy", "--smoke-test", *args], env=env,
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values")
def test_the_launcher_applies_the_tuning_only_when_switched_on(tmp_path):
    on = _launch(tmp_path, None)  # the default
    assert on["code"] == 0 and on["active"] == sorted(runtime.DEFAULT)
    if "gui-gc" in runtime.DEFAULT:
        assert on["gc_enabled"] is False  # pyqtgraph's GUI-thread collector collects instead
    if "freeze" in runtime.DEFAULT:
        assert on["frozen"] is True
    if "serial-fills" in runtime.DEFAULT:
        assert on["fills"] == "1"
    if "priority" in runtime.DEFAULT:
        assert on["preview"] == min(19, on["gui"] + runtime.priority.FOREGROUND)

    for off in (_launch(tmp_path, "off"), _launch(tmp_path, "default", "--runtime-tuning", "off")):
        assert off["code"] == 0 and off["active"] == []
        assert off["gc_enabled"] is True and off["frozen"] is False
        assert off["fills"] is None
        assert off["preview"] == off["gui"]


def test_a_tuning_spec_names_known_mechanisms():
    assert runtime.parse("off") == frozenset() == runtime.parse("")
    assert runtime.parse("default") == runtime.DEFAULT
    some = sorted(runtime.DEFAULT)[0]
    assert runtime.parse(f"default,-{some}") == runtime.DEFAULT - {some}
    assert runtime.parse(some) == {some}
    with pytest.raises(ValueError, match="unknown runtime tuning 'turbo'"):
        runtime.parse("default,turbo")


def test_switching_off_undoes_what_switching_on_did_at_once():
    fills, collecting = os.environ.pop("QT_NO_GUI_THREADPOOL", None), gc.isenabled()
    try:
        runtime.switch_on({"serial-fills", "freeze"})
        assert os.environ["QT_NO_GUI_THREADPOOL"] == "1" and not gc.isenabled()
        assert runtime.active() == {"serial-fills", "freeze"}
        runtime.switch_off()
        assert "QT_NO_GUI_THREADPOOL" not in os.environ and gc.isenabled()
        assert runtime.active() == frozenset()
    finally:
        runtime.switch_off()
        if fills is not None:
            os.environ["QT_NO_GUI_THREADPOOL"] = fills
        if collecting:
            gc.enable()


def test_a_bad_tuning_spec_ends_in_one_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen", runtime.ENV: "turbo"}
    for args in (["--runtime-tuning", "turbo"], []):
        out = subprocess.run([sys.executable, "-m", "lmdk_gui", "--smoke-test", *args], env=env, cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert "unknown runtime tuning 'turbo'" in out.stderr
