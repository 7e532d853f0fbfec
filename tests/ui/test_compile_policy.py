"""Compile or interpret (core/engine/lazyjit.py) is decided by the call, never by the process' history: a
small series' opening preview runs its kernels as Python, every later preview compiled, whether or not numba
was imported meanwhile; the opening preview leaves denoising to the later stage."""

from __future__ import annotations

import numpy as np

from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine import lazyjit, preview
from lmdk_gui.ui.window import session as session_mod
from lmdk_gui.ui.window.session import Session


def _recording(monkeypatch) -> list[dict]:
    calls: list[dict] = []
    real = session_mod.compute_preview

    def compute(*args, **kwargs):
        calls.append({"interpret": kwargs.get("interpret", False), "denoise": kwargs.get("denoise", True),
                      "n": args[0].series.n})
        return real(*args, **kwargs)

    monkeypatch.setattr(session_mod, "compute_preview", compute)
    return calls


def test_only_the_opening_preview_of_a_small_series_is_interpreted(qtbot, monkeypatch):
    calls = _recording(monkeypatch)
    s = Session()
    small = Series.from_arrays(np.random.default_rng(1).normal(10, 2, preview.INTERPRET_MAX // 2))
    with qtbot.waitSignal(s.previewChanged, timeout=60_000):
        s.set_series(small)
    assert calls == [{"interpret": True, "denoise": False, "n": small.n}]
    for numba_now in (lazyjit.imported(), True):  # with numba imported or not: the same decision
        if numba_now:
            lazyjit.real_numba()
        with qtbot.waitSignal(s.previewChanged, timeout=60_000):
            s.toggle_landmark(5)
        assert calls[-1]["interpret"] is False
    s.shutdown()


def test_a_large_series_is_never_interpreted(qtbot, monkeypatch):
    calls = _recording(monkeypatch)
    interpreted: list[bool] = []
    real = lazyjit._interpret
    monkeypatch.setattr(lazyjit, "_interpret", lambda: interpreted.append(real()) or interpreted[-1])
    s = Session()
    with qtbot.waitSignal(s.previewChanged, timeout=60_000):
        s.set_series(Series.from_arrays(np.random.default_rng(2).normal(10, 2, preview.INTERPRET_MAX + 1)))
    with qtbot.waitSignal(s.previewChanged, timeout=60_000):
        s.toggle_landmark(5)
    assert calls[0]["interpret"] is True and interpreted and not any(interpreted)  # asked, but too large
    s.shutdown()
