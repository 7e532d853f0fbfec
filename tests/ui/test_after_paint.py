"""What the window does after its plots have painted (issue 15): the preview's later stages (denoising, the
average) start once the plots show the raw preview (started before, they competed with the paint for the
GIL) and never wait for a paint that cannot come; a zoom paints each scene once; the first series is drawn
in the pass after the plots took the empty state's place, and its preview after the series painted."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject

from lmdk_gui.ui.views.multiples import AfterPaint
from lmdk_gui.ui.window import session as session_mod

from .conftest import wait_denoised


@pytest.fixture(autouse=True)
def _later_stage(monkeypatch):
    """The sample is denoised in the preview's own job unless told otherwise: these tests use the later
    stage, as a long series does."""
    monkeypatch.setattr(session_mod, "DENOISE_INLINE_MAX", 0)


def test_denoising_starts_after_both_plots_painted_the_preview(qtbot, window):
    s = window.session
    wait_denoised(qtbot, window)
    order: list[str] = []
    submit = s._denoise_runner.submit
    s._denoise_runner.submit = lambda *a, **k: (order.append("denoise submitted"), submit(*a, **k))[1]
    before = s.preview_generation
    # each paint stamped with the preview the session holds (the window paints the rows in its own
    # previewChanged slot, before a slot connected here would run)
    paints = _PaintLog(order, {window.budget_plot.viewport(): lambda: f"budget painted {s.preview_generation}",
                               window.preview_plot.viewport(): lambda: f"preview painted {s.preview_generation}"})
    with qtbot.waitSignal(s.denoisedChanged, timeout=30_000):
        s.add_range(40, 90)
    assert s.preview_generation != before
    stage = order.index("denoise submitted")
    now = s.preview_generation
    assert {f"budget painted {now}", f"preview painted {now}"} <= set(order[:stage]), order
    assert order.count("denoise submitted") == 1
    del paints


def test_the_later_stages_do_not_wait_for_rows_painted_in_the_preview_slot(qtbot, window):
    """The window paints the rows in its previewChanged slot: the gate must not then wait for another paint
    (none comes until something else changes; the gate's latest moment is made a minute here)."""
    s = window.session
    wait_denoised(qtbot, window)
    window._preview_drawn._timer.setInterval(60_000)
    with qtbot.waitSignal(s.denoisedChanged, timeout=10_000):
        s.add_range(40, 90)


class _PaintLog(QObject):
    """Logs the viewports' paint events (or another event type) as they arrive (an event filter sees them
    before the views' ``painted`` signal, which the window's gate is connected to first)."""

    def __init__(self, log: list[str], names: dict, event_type=QEvent.Type.Paint) -> None:
        super().__init__()
        self.log, self.names, self.event_type = log, names, event_type
        for v in names:
            v.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt naming
        if event.type() == self.event_type:
            name = self.names[obj]
            self.log.append(name() if callable(name) else name)
        return False


def test_an_edit_while_the_plots_paint_drops_the_old_preview_stages(qtbot, window):
    s = window.session
    wait_denoised(qtbot, window)
    submitted: list[object] = []
    submit = s._denoise_runner.submit
    s._denoise_runner.submit = lambda fn, snap, *a, **k: (submitted.append(snap.landmarks), submit(fn, snap, *a, **k))[1]
    s.previewChanged.connect(lambda: s.landmarks.size < 60 and s.add_range(100, 140))  # once, before any paint
    with qtbot.waitSignal(s.denoisedChanged, timeout=30_000):
        s.add_range(40, 90)
    wait_denoised(qtbot, window)
    assert [lm.size for lm in submitted] == [s.landmarks.size]  # only the state that stayed


def test_hidden_plots_run_at_once_and_an_unpainted_view_runs_at_the_latest(qtbot, window):
    gate = AfterPaint([window.budget_plot, window.preview_plot])
    ran: list[int] = []
    window.preview_plot.hide()
    window.budget_plot.hide()
    gate(lambda: ran.append(1))
    assert ran == [1]
    window.preview_plot.show()
    qtbot.waitExposed(window.preview_plot)
    gate(lambda: ran.append(2))  # waits for a paint (or LATEST_MS)
    assert ran == [1]
    qtbot.waitUntil(lambda: ran == [1, 2], timeout=5 * AfterPaint.LATEST_MS)
    gate(lambda: ran.append(3))
    gate(lambda: ran.append(4))  # replaces the waiting one
    window.preview_plot.viewport().update()
    qtbot.waitUntil(lambda: ran == [1, 2, 4], timeout=5 * AfterPaint.LATEST_MS)


def test_a_zoom_sets_every_linked_view_transform_before_the_paint(qtbot, window):
    """pyqtgraph applies a new range's transform in the paint, which marks every item dirty again: each zoom
    painted the three scenes twice. The views now take their transform when the range changes."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QGraphicsView

    wait_denoised(qtbot, window)
    views = [it for v in window.findChildren(QGraphicsView) if v.isVisible() and v.scene() is not None
             for it in v.scene().items() if isinstance(it, pg.ViewBox) and it.isVisible()]
    assert len(views) >= 5  # the series plot and the budget and preview rows
    window.series_plot.getPlotItem().vb.setXRange(100, 200, padding=0)
    pending = [vb for vb in views if vb._matrixNeedsUpdate]
    assert pending == []
    ranges = {tuple(round(x) for x in vb.viewRange()[0]) for vb in views}
    assert ranges == {(100, 200)}


def test_the_first_series_is_drawn_after_the_plots_took_their_place(qtbot):
    from lmdk_gui.ui import MainWindow
    from tests.conftest import SAMPLES

    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    assert w.central_stack.currentIndex() == 0  # the empty state
    seen: list[tuple[int, bool]] = []
    w.central_stack.currentChanged.connect(lambda i: seen.append((i, w.session.series is None)))
    resized: list[str] = []
    log = _PaintLog(resized, {w.series_plot: "series", w.budget_plot: "budget", w.preview_plot: "preview"},
                    QEvent.Type.Resize)
    with qtbot.waitSignal(w.seriesLoaded, timeout=30_000):
        w.open_series_async(str(SAMPLES / "energy_hue_2013_jan.csv"))
    assert seen == [(1, True)]  # the plots were shown before the session had the series
    # the docks came back first, so the plots were not laid out at the whole width and then again narrower
    # (each was resized 4-5 times): once from the hidden page's old layout, once to its final size
    assert all(resized.count(k) <= 2 for k in ("series", "budget", "preview")), resized
    del log
    assert w.session.series is not None and w.session.series.n == 744
    with qtbot.waitSignal(w.seriesLoaded, timeout=30_000):  # a second file: no empty state in between
        w.open_series_async(str(SAMPLES / "energy_hue_2013_jan.csv"))
    assert seen == [(1, True)]
    w.close()


@pytest.mark.parametrize("compiled", [True, False])
def test_opening_the_first_series_leaves_the_event_loop_a_turn_between_its_steps(qtbot, monkeypatch, compiled):
    """Showing the docks and the plots, drawing the series and computing its preview are steps with input and
    timers in between: the docks paint, a timer's turn comes, the plots paint, another turn, the series is set
    and painted, then the preview is submitted (at 10^7 events each step is tens of ms; back to back they were one stall, and a preview
    worker started with the series' paint took a core and the GIL from it). A series small enough for its
    preview to run as Python (a few ms, no compiler to load) is computed while the series paints."""
    from PySide6.QtCore import QTimer

    from lmdk_gui.ui import MainWindow
    from tests.conftest import SAMPLES

    if compiled:  # (the sample's 744 events stand for a series whose preview loads the compiled kernels)
        monkeypatch.setattr(session_mod, "INTERPRET_MAX", 100)

    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    order: list[str] = []
    log = _PaintLog(order, {w.series_plot.viewport(): "painted", w.settings_dock: "docks painted"})
    w.central_stack.currentChanged.connect(lambda i: order.append(f"page {i}"))
    tick = QTimer(w)
    tick.setInterval(0)
    tick.timeout.connect(lambda: order[-1:] != ["tick"] and order.append("tick"))
    tick.start()
    w.session.seriesChanged.connect(lambda: order.append("series"))
    submit = w.session._preview_runner.submit
    w.session._preview_runner.submit = lambda *a, **k: (order.append("submit"), submit(*a, **k))[1]
    with qtbot.waitSignal(w.session.previewChanged, timeout=30_000):
        w.open_series_async(str(SAMPLES / "energy_hue_2013_jan.csv"))
    tick.stop()
    del log
    docks, page = order.index("docks painted"), order.index("page 1")
    assert docks < page and "tick" in order[docks:page], order  # the docks' paint, a turn, the plots
    first = order.index("painted")
    series = order.index("series")
    assert page < first and "tick" in order[first:series], order  # the plots' paint, a turn, the series
    submitted = order.index("submit")
    assert ("painted" in order[series:submitted]) == compiled, order  # the series painted, then its preview
    assert order.count("submit") == 1
    w.close()


def test_a_click_paints_the_series_plot_once(qtbot, window):
    """The click's marker is painted; the preview that follows announces its (unchanged, here empty) dummy
    selection, which used to redraw the markers and paint the series plot a second time per click."""
    from .helpers import fake_click

    s = window.session
    wait_denoised(qtbot, window)
    log: list[str] = []
    paints = _PaintLog(log, {window.series_plot.viewport(): "series", window.budget_plot.viewport(): "budget",
                             window.preview_plot.viewport(): "preview"})
    s.denoisedChanged.connect(lambda: log.append("denoised"))
    for row in (100, 200):
        log.clear()
        fake_click(qtbot, window, row)
        # the passes after the raw preview are over once the denoised lines (a later stage) have been painted
        qtbot.waitUntil(lambda: "denoised" in log and "preview" in log[log.index("denoised"):], timeout=30_000)
        assert log.count("series") == 1, log
    del paints
