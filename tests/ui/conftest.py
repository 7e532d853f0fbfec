from __future__ import annotations

import pytest

from tests.conftest import SAMPLES


@pytest.fixture(autouse=True, scope="session")
def _no_mouse_rate_limit():
    """pyqtgraph drops mouse moves closer than 1/100 s; synthetic drags send them back to back."""
    import pyqtgraph as pg

    pg.setConfigOption("mouseRateLimit", -1)


@pytest.fixture(autouse=True)
def _collect_garbage_on_the_gui_thread():
    """Closed windows' Python-owned Qt objects are freed here, on the GUI thread, after every test, rather than
    by whichever collection a worker thread triggers next: a test process keeps Python's automatic collection
    (the launcher's ``gui-gc``, lmdk_gui/runtime/collector.py, is not switched on here)."""
    yield
    import gc

    gc.collect()


@pytest.fixture(autouse=True)
def _closing_cancels_a_running_export(monkeypatch):
    """A window closed at a test's end while an export still runs (a slow machine) cancels it, as answering
    Yes would: the question box is modal, and its event loop keeps pytest-timeout's alarm from ever firing
    (the suite hung in a teardown). Tests of the question set ``confirm_cancel_export`` on their window."""
    from lmdk_gui.ui.window.main_window import MainWindow

    monkeypatch.setattr(MainWindow, "confirm_cancel_export", lambda self: True)


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path_factory, monkeypatch):
    """Never read or write the user's real preferences (recent files, last file)."""
    monkeypatch.setenv("LMDK_GUI_SETTINGS", str(tmp_path_factory.mktemp("settings") / "lmdk_gui_test.ini"))


@pytest.fixture
def window(qtbot):
    from lmdk_gui.ui import MainWindow

    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.session.previewChanged, timeout=30_000):
        assert w.open_series(SAMPLES / "energy_hue_2013_jan.csv")
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


def wait_preview(qtbot, window, timeout: int = 30_000) -> None:
    """Wait until the preview for the current state is ready."""
    qtbot.waitUntil(window.session.is_preview_current, timeout=timeout)


def wait_denoised(qtbot, window, timeout: int = 30_000) -> None:
    """Wait until the preview for the current state also carries its denoised values (a later stage since
    issue 15: previewChanged announces the raw releases first)."""
    qtbot.waitUntil(window.session.is_denoised_current, timeout=timeout)


def alive_at_preview_start(monkeypatch, refs: dict) -> list[list[str]]:
    """For each preview job from now on, the names of ``refs`` (weak references) still alive when it starts
    computing (arrays are freed by their count: no collection needed on the worker thread)."""
    from lmdk_gui.ui.window import session as session_mod

    alive: list[list[str]] = []
    real = session_mod.compute_preview

    def preview(*args, **kwargs):
        alive.append(sorted(x for x, r in refs.items() if r() is not None))
        return real(*args, **kwargs)

    monkeypatch.setattr(session_mod, "compute_preview", preview)
    return alive
