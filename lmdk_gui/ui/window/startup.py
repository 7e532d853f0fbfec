"""Starting the window safely: preferences read defensively, a size that fits the screen, the smoke test.

Preferences may have been written by any earlier version or edited by hand. :func:`read_setting` turns a
value that is missing, of the wrong type or undecodable into its default with one log line, so the app
never fails to start because of its settings file. Window geometry is restored only when it still fits a
screen (monitors change); otherwise the window takes 90 % of the available screen, capped at 1400×900.

:func:`run_smoke_test` backs ``lmdk-gui --smoke-test``: show the real window, wait until it is drawn with
its preview (or its empty state), close it and exit 0; exit 1 on a timeout or an uncaught exception. It
also prints when the series was first drawn (the cold-start benchmark times both lines).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

from PySide6.QtCore import QByteArray, QEvent, QObject, QRect, QSettings, QSize, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QScrollArea

from ...core.data.loader import LOAD_OPTIONS
from ...core.engine.memory import MemoryPolicy

log = logging.getLogger("lmdk_gui.settings")

#: Bumped when the dock layout changes so much that an old saved state should not be applied.
WINDOW_STATE_VERSION = 1
DEFAULT_SIZE = QSize(1400, 900)
SCREEN_FRACTION = 0.9
#: the smoke test looks this often (ms) whether the preview is drawn: fine enough to time a cold start with
SMOKE_POLL_MS = 10


# ------------------------------------------------------------------------------------- preferences
def _as_str(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    raise TypeError("expected text")


def _as_str_list(raw: Any) -> list[str]:
    if isinstance(raw, str):  # an .ini stores a one-element list as plain text
        return [raw] if raw else []
    if isinstance(raw, list | tuple) and all(isinstance(x, str) for x in raw):
        return list(raw)
    raise TypeError("expected a list of text")


def _as_dict(raw: Any) -> dict:
    if isinstance(raw, str):  # written as JSON since 0.1 (older versions stored a Qt map)
        raw = json.loads(raw) if raw else {}
    if isinstance(raw, dict) and all(isinstance(k, str) for k in raw):
        return dict(raw)
    raise TypeError("expected a mapping")


def _as_bytes(raw: Any) -> QByteArray:
    if isinstance(raw, QByteArray):
        return raw
    if isinstance(raw, bytes | bytearray):
        return QByteArray(bytes(raw))
    raise TypeError("expected binary data")


_COERCE = {str: _as_str, list: _as_str_list, dict: _as_dict, bytes: _as_bytes}


def read_setting(settings: QSettings, key: str, default: Any, kind: type) -> Any:
    """``settings[key]`` as ``kind`` (str, list of str, dict or bytes → QByteArray), else ``default``.

    Never raises: a missing key returns ``default`` silently; a value of another type or one Qt cannot
    decode returns ``default`` and logs one line naming the key.
    """
    try:
        raw = settings.value(key, None)
    except Exception as e:  # noqa: BLE001 - an undecodable value must not stop the app
        log.warning("settings: ignoring %s in %s (%s); using the default", key, settings.fileName(), e)
        return default
    if raw is None:
        if settings.contains(key):  # present but Qt could not decode it (an unknown or damaged variant)
            log.warning("settings: ignoring %s in %s (cannot be decoded); using the default", key,
                        settings.fileName())
        return default
    try:
        return _COERCE[kind](raw)
    except (TypeError, ValueError) as e:
        log.warning("settings: ignoring %s=%.60r in %s (%s); using the default", key, raw,
                    settings.fileName(), e)
        return default


def write_options(settings: QSettings, key: str, options: dict) -> None:
    """Store load options as JSON text: readable in the .ini and independent of Qt's variant format."""
    settings.setValue(key, json.dumps(options, sort_keys=True, default=str))  # never fail to remember


def clean_load_options(options: dict, key: str = "lastOptions") -> dict:
    """Keep only options :func:`load_series` accepts, with plain values (text, numbers, lists of text)."""
    accepted = set(LOAD_OPTIONS)
    out = {}
    for k, v in options.items():
        plain = v is None or isinstance(v, str | int | float | bool) or (
            isinstance(v, list) and all(isinstance(x, str) for x in v))
        if k in accepted and plain:
            out[k] = v
        else:
            log.warning("settings: ignoring %s[%r]=%.60r (not an option of this version)", key, k, v)
    return out


# ---------------------------------------------------------------------------------------- geometry
def fitted_geometry(available: QRect, cap: QSize = DEFAULT_SIZE, fraction: float = SCREEN_FRACTION) -> QRect:
    """A rectangle centred on ``available``: ``fraction`` of it, at most ``cap``, never larger than it."""
    w = min(cap.width(), int(available.width() * fraction), available.width())
    h = min(cap.height(), int(available.height() * fraction), available.height())
    rect = QRect(0, 0, max(w, 1), max(h, 1))
    rect.moveCenter(available.center())
    return rect


def fits_a_screen(rect: QRect) -> bool:
    """Whether ``rect`` lies on a screen's available area (its centre on it, its size no larger)."""
    screen = QGuiApplication.screenAt(rect.center())
    if screen is None:
        return False
    avail = screen.availableGeometry()
    return rect.width() <= avail.width() and rect.height() <= avail.height()


#: the window height that holds the series, four budget rows, four preview rows and the metrics without a
#: scroll bar; on a screen whose 90 % is lower (a 1280×800 or 1366×768 laptop) the window starts maximized
ROOMY_HEIGHT = 800


def starts_maximized(available: QRect) -> bool:
    """Whether a first launch on a screen of this available area opens maximized: at 90 % of a laptop's
    screen the preview rows ran below the window's edge (a scroll bar at the first look)."""
    return fitted_geometry(available).height() < ROOMY_HEIGHT


#: the preference holding the memory policy's mode (``auto``, ``lean`` or ``full``: core/engine/memory.py)
MEMORY_KEY = "memoryPolicy"


def memory_preference(settings: QSettings) -> MemoryPolicy:
    """The user's memory policy (the ``memoryPolicy`` preference), ``auto`` when unset; a value that is not a
    mode is ignored with one log line naming it."""
    text = read_setting(settings, MEMORY_KEY, "auto", str)
    try:
        return MemoryPolicy.parse(text)
    except ValueError as e:
        log.warning("settings: ignoring %s in %s (%s); using auto", MEMORY_KEY, settings.fileName(), e)
        return MemoryPolicy()


def restore_window(window, settings: QSettings) -> bool:
    """Apply the saved geometry and dock layout when valid; otherwise size the window to its screen. True when
    the window should start maximized (no saved geometry, and a short screen: :func:`starts_maximized`); the
    launch shows it so (:func:`show_window`), a test's window keeps the size it is given."""
    geometry = read_setting(settings, "windowGeometry", None, bytes)
    restored = geometry is not None and window.restoreGeometry(geometry)
    if geometry is not None and not restored:
        log.warning("settings: ignoring windowGeometry in %s (not a saved window geometry)", settings.fileName())
    maximize = False
    if not restored or not fits_a_screen(window.geometry()):
        screen = window.screen() or QGuiApplication.primaryScreen()
        window.setGeometry(fitted_geometry(screen.availableGeometry()))  # (also the size it returns to)
        maximize = starts_maximized(screen.availableGeometry())
    state = read_setting(settings, "windowState", None, bytes)
    if state is not None and not window.restoreState(state, WINDOW_STATE_VERSION):
        log.warning("settings: ignoring windowState in %s (from another version or damaged)", settings.fileName())
    return maximize


def show_window(window) -> None:
    """Show the launched window: maximized when :func:`restore_window` said so (``window.start_maximized``)."""
    if getattr(window, "start_maximized", False):
        window.showMaximized()
    else:
        window.show()


def save_window(window, settings: QSettings, *, with_state: bool = True) -> None:
    settings.setValue("windowGeometry", window.saveGeometry())
    if with_state:
        settings.setValue("windowState", window.saveState(WINDOW_STATE_VERSION))


# -------------------------------------------------------------------------------------- smoke test
class _PaintCounter(QObject):
    def __init__(self, target, on_paint=None) -> None:
        super().__init__(target)
        self.count = 0
        self._on_paint = on_paint
        target.installEventFilter(self)

    def eventFilter(self, obj, ev) -> bool:  # noqa: N802 - Qt naming
        if ev.type() == QEvent.Type.Paint:
            self.count += 1
            if self._on_paint is not None:
                self._on_paint()
        return False


def _scroll_into_view(widget) -> None:
    """On a screen smaller than the window's content the central area scrolls: bring ``widget`` into view."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QScrollArea):
            parent.ensureWidgetVisible(widget)
        parent = parent.parentWidget()


class _SmokeTest:
    """The steps of :func:`run_smoke_test` and what they share: ``outcome`` holds the exit code, the preview
    plot's paint count from which a paint shows the ready content (``baseline``; ``arrived``: when the preview
    arrived) and when the series was first drawn (``series_at``); ``errors`` the uncaught exceptions."""

    def __init__(self, app, window, timeout_s: float) -> None:
        self.app, self.window, self.timeout_s = app, window, timeout_s
        self.started = time.monotonic()
        self.outcome: dict[str, Any] = {"code": 1, "baseline": None, "arrived": None, "series_at": None}
        self.errors: list[str] = []

    def start(self) -> None:
        """Show the window and count the paints of what it will show (the preview plot, or the empty state)."""
        window = self.window
        show_window(window)
        self.target = window.preview_plot.viewport() if window.session.series is not None or window.is_loading() \
            else window.empty_state
        self.counter = _PaintCounter(self.target,
                                     self._painted if self.target is window.preview_plot.viewport() else None)
        window.session.previewChanged.connect(self._preview_arrived)
        self.series_paints = _PaintCounter(window.series_plot.viewport())

    def _succeed(self) -> None:
        """Report the success now; the window closes on the next pass (this may run inside a paint)."""
        self.outcome["code"] = 0
        elapsed = time.monotonic() - self.started
        self._report_series()
        window, s = self.window, self.window.session
        what = f"preview of {s.n:,} events" if s.series is not None else "empty state"
        print(f"smoke test: window {window.width()}×{window.height()} shown with its {what} on "
              f"{QGuiApplication.platformName()} after {elapsed:.1f} s", flush=True)
        QTimer.singleShot(0, lambda: (window.close(), self.app.quit()))

    def _painted(self) -> None:
        """The preview plot painted: after the preview arrived, that is the success (reported now, not at the
        next poll: the window may have work queued after its first paint, e.g. the deferred tabs)."""
        arrived = self.outcome["arrived"]
        handle = self.window.windowHandle()
        if self.outcome["code"] == 0 or self.errors or arrived is None or self.counter.count <= arrived \
                or handle is None or not handle.isExposed() or not self._content_ready():
            return
        self._succeed()

    def _preview_arrived(self) -> None:  # paints of the preview plot from now on draw this preview
        if self.outcome["baseline"] is None and self.target is self.window.preview_plot.viewport():
            self.outcome["arrived"] = self.counter.count

    def _report_series(self) -> None:  # once: the window and the series are drawn before the first preview
        if self.outcome["series_at"] is None and self.window.session.series is not None and self.series_paints.count:
            self.outcome["series_at"] = time.monotonic() - self.started
            print(f"smoke test: series drawn after {self.outcome['series_at']:.2f} s", flush=True)

    def _content_ready(self) -> bool:
        window, s = self.window, self.window.session
        if window.is_loading():
            return False
        if s.series is None:
            return window.empty_state.isVisible()
        return s.is_preview_current() and bool(s.preview) and window.preview_plot.isVisible()

    def _fail(self, message: str) -> None:
        self.outcome["code"] = 1
        print(message, file=sys.stderr, flush=True)
        self.window.close()
        self.app.quit()

    def poll(self) -> None:
        """Every SMOKE_POLL_MS: fail on an error or the timeout; once the content is ready, ask for the paint
        that shows it (and succeed when it has come)."""
        window, outcome = self.window, self.outcome
        if outcome["code"] == 0:
            return  # _painted reported the success
        if self.errors:
            return self._fail(f"lmdk-gui: smoke test failed: {self.errors[0]}")
        self._report_series()
        elapsed = time.monotonic() - self.started
        if elapsed > self.timeout_s:
            return self._fail(f"lmdk-gui: smoke test timed out after {self.timeout_s:g} s "
                              f"(exposed={window.windowHandle() is not None and window.windowHandle().isExposed()}, "
                              f"loading={window.is_loading()}, preview={window.session.is_preview_current()})")
        handle = window.windowHandle()
        if handle is None or not handle.isExposed() or not self._content_ready():
            QTimer.singleShot(SMOKE_POLL_MS, self.poll)
            return
        wanted = window.preview_plot.viewport() if window.session.series is not None else window.empty_state
        if wanted is not self.target:  # a file finished loading after the window was shown
            self.target, self.counter = wanted, _PaintCounter(wanted)
        if outcome["baseline"] is None:  # the content is ready: the next paint draws it
            arrived = outcome.get("arrived") if self.target is window.preview_plot.viewport() else None
            outcome["baseline"] = self.counter.count if arrived is None else arrived
            _scroll_into_view(self.target)
            self.target.update()
        if self.counter.count > outcome["baseline"]:
            return self._succeed()
        QTimer.singleShot(SMOKE_POLL_MS, self.poll)

    def exit_code(self) -> int:
        if self.outcome["code"] == 0 and self.window.isVisible():
            print("lmdk-gui: smoke test: the window refused to close", file=sys.stderr)
            return 1
        if self.errors and self.outcome["code"] == 0:
            return 1
        return int(self.outcome["code"])


def run_smoke_test(app, window, timeout_s: float = 60.0) -> int:
    """Show ``window``; once it is exposed and has painted its preview (or, with no file, its empty state)
    close it and return 0. Returns 1 on a timeout or an uncaught exception (printed to stderr)."""
    test = _SmokeTest(app, window, timeout_s)
    previous_hook = sys.excepthook

    def hook(kind, value, tb):
        test.errors.append(f"{kind.__name__}: {value}")
        previous_hook(kind, value, tb)

    sys.excepthook = hook
    test.start()
    QTimer.singleShot(0, test.poll)
    try:
        app.exec()
    finally:
        sys.excepthook = previous_hook
    return test.exit_code()
