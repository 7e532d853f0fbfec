"""A click where the pointer already is does no second hover pass (issue 15): pyqtgraph looked up the items
near the pointer again after every release, ≈ 3.7 ms of a click at 10^5 events."""

from __future__ import annotations

from PySide6.QtCore import Qt

from .conftest import wait_preview
from .helpers import event_point


def _hover_lookups(monkeypatch, scene) -> list[bool]:
    calls: list[bool] = []
    near = scene.itemsNearEvent

    def spy(event, *args, **kwargs):
        calls.append(bool(kwargs.get("hoverable")))
        return near(event, *args, **kwargs)

    monkeypatch.setattr(scene, "itemsNearEvent", spy)
    return calls


def test_click_where_the_pointer_rests_skips_the_hover_pass_and_still_toggles(qtbot, window, monkeypatch):
    s, plot = window.session, window.series_plot
    plot.getPlotItem().vb.setXRange(150, 250, padding=0)
    qtbot.wait(10)
    pos = event_point(window, 200)
    calls = _hover_lookups(monkeypatch, plot.scene())
    qtbot.mouseMove(plot.viewport(), pos)
    qtbot.waitUntil(lambda: True in calls)  # the move's hover pass, at the new place
    calls.clear()
    with qtbot.waitSignal(s.previewChanged, timeout=10_000):
        qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert s.landmarks.tolist() == [200]
    assert calls == [False]  # the click's own search for its item, no hover pass
    wait_preview(qtbot, window)


def test_a_release_elsewhere_still_sends_hover_events(qtbot, window, monkeypatch):
    plot = window.series_plot
    plot.getPlotItem().vb.setXRange(150, 250, padding=0)
    qtbot.wait(10)
    a, b = event_point(window, 180), event_point(window, 220)
    qtbot.mouseMove(plot.viewport(), a)
    calls = _hover_lookups(monkeypatch, plot.scene())
    qtbot.mouseRelease(plot.viewport(), Qt.MouseButton.LeftButton, pos=b)  # (no press: a release that moved)
    assert True in calls


def test_a_click_lays_no_part_of_the_main_window_out(qtbot, window):
    """The status bar's texts change at every click (the landmark count, "computing…", the verdict); labels
    that could change size asked the whole window for a layout each time. Fixed in size, they do not, and
    they still say the new count and verdict. No other widget of the window is laid out again either."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication, QWidget

    s, plot = window.session, window.series_plot
    plot.getPlotItem().vb.setXRange(150, 250, padding=0)
    for row in (150, 160):  # (the first texts of each kind size the labels)
        with qtbot.waitSignal(s.previewChanged, timeout=10_000):
            s.toggle_landmark(row)
        wait_preview(qtbot, window)
    qtbot.wait(50)

    class Count(QObject):
        laid: list[str] = []

        def eventFilter(self, obj, ev):  # noqa: N802 - Qt naming
            if ev.type() == QEvent.Type.LayoutRequest and isinstance(obj, QWidget) and obj.window() is window:
                Count.laid.append(obj.objectName() or type(obj).__name__)
            return False

    counter = Count()
    app = QApplication.instance()
    app.installEventFilter(counter)
    try:
        with qtbot.waitSignal(s.previewChanged, timeout=10_000):
            qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=event_point(window, 200))
        wait_preview(qtbot, window)
        qtbot.wait(50)
    finally:
        app.removeEventFilter(counter)
    # (nor a hidden dock: the dummy panel's readout said the landmark count, and was laid out at every click)
    assert Count.laid == []
    assert window.status_landmarks.text().startswith("3 landmarks")
    assert "holds" in window.status_guarantee.text()


def _verdicts(monkeypatch, window) -> list[str]:
    from lmdk_gui.ui.window import statusbar as mw

    said: list[str] = []
    real = mw._set_status

    def spy(label, text):
        if label is window.status_guarantee:
            said.append(text)
        real(label, text)

    monkeypatch.setattr(mw, "_set_status", spy)
    return said


def test_a_preview_that_comes_at_once_is_not_announced_as_computing(qtbot, window, monkeypatch):
    """The hover box and the verdict are said by the click's preview; "computing…" (and the box with the old
    budgets) only when the preview is late (issue 15: ≈ 1 ms of a click and a repaint of both)."""
    s, plot = window.session, window.series_plot
    window._stale_readouts.setInterval(60_000)  # (the preview is never late here, however slow the machine)
    plot.getPlotItem().vb.setXRange(150, 250, padding=0)
    window._on_hover((plot.mapToScene(event_point(window, 200)),))
    said = _verdicts(monkeypatch, window)
    with qtbot.waitSignal(s.previewChanged, timeout=10_000):
        s.toggle_landmark(200)
        assert "landmark" not in plot.info.toPlainText() and window.status_landmarks.text().startswith("1 ")
    wait_preview(qtbot, window)
    assert "landmark" in plot.info.toPlainText() and "computing…" not in said and "holds" in said[-1]


def test_a_late_preview_is_announced_as_computing(qtbot, window, monkeypatch):
    import time

    from lmdk_gui.ui.window import session as session_mod

    s, plot = window.session, window.series_plot
    window._stale_readouts.setInterval(20)
    plot.getPlotItem().vb.setXRange(150, 250, padding=0)
    window._on_hover((plot.mapToScene(event_point(window, 200)),))
    real = session_mod.compute_preview
    monkeypatch.setattr(session_mod, "compute_preview", lambda *a, **k: (time.sleep(0.5), real(*a, **k))[1])
    said = _verdicts(monkeypatch, window)
    s.toggle_landmark(200)
    qtbot.waitUntil(lambda: "computing…" in said, timeout=5_000)
    assert not s.is_preview_current() and "landmark" in plot.info.toPlainText()  # (the box says the edit)
    wait_preview(qtbot, window)
    qtbot.waitUntil(lambda: "holds" in said[-1], timeout=5_000)


def test_the_hover_box_goes_when_the_pointer_leaves_the_plot(qtbot, window):
    """A newcomer found the box staying after the pointer left, over the plot."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    plot = window.series_plot
    plot.getPlotItem().vb.setXRange(150, 250, padding=0)
    window._on_hover((plot.mapToScene(event_point(window, 200)),))
    assert plot.info.isVisible() and plot.target.isVisible()
    QApplication.sendEvent(plot, QEvent(QEvent.Type.Leave))
    assert not plot.info.isVisible() and not plot.target.isVisible()


def test_the_hover_box_never_covers_the_event_it_describes(qtbot, window):
    """Near the plot's left edge the box moves to the top-right corner: it covered the landmark just marked."""
    plot = window.series_plot
    vb = plot.getPlotItem().vb
    vb.setXRange(150, 250, padding=0)
    qtbot.waitUntil(lambda: vb.width() > 0)
    for row in (152, 248):
        window._on_hover((plot.mapToScene(event_point(window, row)),))
        box = plot.info.geometry()
        x = event_point(window, row).x()
        assert not (box.left() - 6 <= x <= box.right() + 6), (row, x, box)


def test_a_click_just_off_the_line_says_why_nothing_happened(qtbot, window):
    from PySide6.QtCore import QPoint

    from lmdk_gui.ui.window.main_window import OFF_LINE_HINT

    s, plot = window.session, window.series_plot
    plot.getPlotItem().vb.setXRange(150, 250, padding=0)
    far = QPoint(0, 40) if event_point(window, 200).y() < plot.viewport().height() / 2 else QPoint(0, -40)
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=event_point(window, 200) + far)
    assert s.landmarks.tolist() == []
    assert window.statusBar().currentMessage() == OFF_LINE_HINT


def test_the_hover_box_and_the_landmark_list_number_an_event_alike(qtbot, window, tmp_path):
    """One numbering (issue 44): the hover box's "event N" is the number the landmark list's 'row' column (and
    --landmark-rows) gives the same event."""
    import pandas as pd

    s, plot = window.session, window.series_plot
    plot.getPlotItem().vb.setXRange(150, 250, padding=0)
    qtbot.wait(10)
    pos = event_point(window, 200)
    qtbot.mouseMove(plot.viewport(), pos)
    with qtbot.waitSignal(s.previewChanged, timeout=10_000):
        qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    qtbot.waitUntil(lambda: "landmark" in plot.info.toPlainText())
    shown = plot.info.toPlainText()
    assert shown.startswith("event 200 · ") and "row" not in shown
    path = tmp_path / "lm.csv"
    assert window.extensions["landmarks_ui"].export_landmarks(path)
    listed = pd.read_csv(path, dtype=str)
    assert listed["row"].tolist() == ["200"]
    assert listed["timestamp"].iloc[0][:16] in shown  # the same event: its time as the box shows it
    wait_preview(qtbot, window)
