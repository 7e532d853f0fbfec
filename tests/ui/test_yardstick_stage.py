"""The yardstick (the error of publishing one constant, issue 44) of a large series is computed by a later
stage, off the first preview's path (at 10^7 events it took half a second of opening), and never on the GUI
thread: the metrics table says "computing…" until the denoise stage has it, then shows it."""

from __future__ import annotations

import inspect
import threading

import numpy as np

from lmdk_gui.core.analysis import metrics
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine import preview as preview_mod
from lmdk_gui.ui.panels.metrics_panel import CONSTANT_ROW


def test_a_large_series_gets_its_yardstick_from_the_later_stage(qtbot, monkeypatch):
    from lmdk_gui.ui import MainWindow

    monkeypatch.setattr(preview_mod, "YARDSTICK_INLINE_MAX", 100)  # (2,000 events: "large" here)
    threads: list[bool] = []
    callers: list[str] = []
    real = metrics.constant_error

    def recording(series):
        threads.append(threading.current_thread() is threading.main_thread())
        callers.append(inspect.stack()[2].function)  # (recording ← yardstick ← the stage)
        return real(series)

    monkeypatch.setattr(preview_mod, "constant_error", recording)
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    w.show()
    table = w.metrics_table
    series = Series.from_arrays(np.random.default_rng(3).normal(10, 2, 2000))
    seen: list[tuple[str, float | None]] = []
    w.session.previewChanged.connect(lambda: seen.append((table.item(CONSTANT_ROW, 5).text(),
                                                          metrics.known_constant_error(series))))
    with qtbot.waitSignal(w.session.previewChanged, timeout=60_000):
        w.session.set_series(series)
    text, known = seen[0]  # (the denoise stage, on its thread, may already have it)
    assert (text == "computing…") == (known is None)
    qtbot.waitUntil(w.session.is_denoised_current, timeout=60_000)
    qtbot.waitUntil(lambda: table.item(CONSTANT_ROW, 5).text() != "computing…", timeout=10_000)
    assert threads and not any(threads)  # computed, on a worker ...
    assert "compute_preview" not in callers and "denoise_preview" in callers  # ... by the later stage
    assert metrics.known_constant_error(series) == real(series)
    assert table.yardstick() == real(series) and "computing" not in table.item(CONSTANT_ROW, 5).toolTip()
