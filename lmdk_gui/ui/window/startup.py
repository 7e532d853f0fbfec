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

import inspect
import json
import logging
import sys
import time
from typing import Any

from PySide6.QtCore import QByteArray, QEvent, QObject, QRect, QSettings, QSize, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QScrollArea

from ...core.data.loader import load_series

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
    accepted = set(inspect.signature(load_series).parameters) - {"path"}
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


def run_smoke_test(app, window, timeout_s: float = 60.0) -> int:
    """Show ``window``; once it is exposed and has painted its preview (or, with no file, its empty state)
    close it and return 0. Returns 1 on a timeout or an uncaught exception (printed to stderr)."""
    started = time.monotonic()
    outcome: dict[str, Any] = {"code": 1, "baseline": None, "arrived": None, "series_at": None}
    errors: list[str] = []
    previous_hook = sys.excepthook

    def hook(kind, value, tb):
        errors.append(f"{kind.__name__}: {value}")
        previous_hook(kind, value, tb)

    sys.excepthook = hook

    def succeed() -> None:
        """Report the success now; the window closes on the next pass (this may run inside a paint)."""
        outcome["code"] = 0
        elapsed = time.monotonic() - started
        report_series()
        s = window.session
        what = f"preview of {s.n:,} events" if s.series is not None else "empty state"
        print(f"smoke test: window {window.width()}×{window.height()} shown with its {what} on "
              f"{QGuiApplication.platformName()} after {elapsed:.1f} s", flush=True)
        QTimer.singleShot(0, lambda: (window.close(), app.quit()))

    def painted() -> None:
        """The preview plot painted: after the preview arrived, that is the success (reported now, not at the
        next poll: the window may have work queued after its first paint, e.g. the deferred tabs)."""
        arrived = outcome["arrived"]
        handle = window.windowHandle()
        if outcome["code"] == 0 or errors or arrived is None or counter.count <= arrived or handle is None \
                or not handle.isExposed() or not content_ready():
            return
        succeed()

    show_window(window)
    target = window.preview_plot.viewport() if window.session.series is not None or window.is_loading() \
        else window.empty_state
    counter = _PaintCounter(target, painted if target is window.preview_plot.viewport() else None)

    def preview_arrived() -> None:  # paints of the preview plot from now on draw this preview
        if outcome["baseline"] is None and target is window.preview_plot.viewport():
            outcome["arrived"] = counter.count

    window.session.previewChanged.connect(preview_arrived)
    series_view = window.series_plot.viewport()
    series_paints = _PaintCounter(series_view)

    def report_series() -> None:  # once: the window and the series are drawn before the first preview
        if outcome["series_at"] is None and window.session.series is not None and series_paints.count:
            outcome["series_at"] = time.monotonic() - started
            print(f"smoke test: series drawn after {outcome['series_at']:.2f} s", flush=True)

    def content_ready() -> bool:
        s = window.session
        if window.is_loading():
            return False
        if s.series is None:
            return window.empty_state.isVisible()
        return s.is_preview_current() and bool(s.preview) and window.preview_plot.isVisible()

    def fail(message: str) -> None:
        outcome["code"] = 1
        print(message, file=sys.stderr, flush=True)
        window.close()
        app.quit()

    def poll() -> None:
        nonlocal target, counter
        if outcome["code"] == 0:
            return  # painted() reported the success
        if errors:
            return fail(f"lmdk-gui: smoke test failed: {errors[0]}")
        report_series()
        elapsed = time.monotonic() - started
        if elapsed > timeout_s:
            return fail(f"lmdk-gui: smoke test timed out after {timeout_s:g} s "
                        f"(exposed={window.windowHandle() is not None and window.windowHandle().isExposed()}, "
                        f"loading={window.is_loading()}, preview={window.session.is_preview_current()})")
        handle = window.windowHandle()
        if handle is None or not handle.isExposed() or not content_ready():
            QTimer.singleShot(SMOKE_POLL_MS, poll)
            return
        wanted = window.preview_plot.viewport() if window.session.series is not None else window.empty_state
        if wanted is not target:  # a file finished loading after the window was shown
            target, counter = wanted, _PaintCounter(wanted)
        if outcome["baseline"] is None:  # the content is ready: the next paint draws it
            arrived = outcome.get("arrived") if target is window.preview_plot.viewport() else None
            outcome["baseline"] = counter.count if arrived is None else arrived
            _scroll_into_view(target)
            target.update()
        if counter.count > outcome["baseline"]:
            return succeed()
        QTimer.singleShot(SMOKE_POLL_MS, poll)

    QTimer.singleShot(0, poll)
    try:
        app.exec()
    finally:
        sys.excepthook = previous_hook
    if outcome["code"] == 0 and window.isVisible():
        print("lmdk-gui: smoke test: the window refused to close", file=sys.stderr)
        return 1
    if errors and outcome["code"] == 0:
        return 1
    return int(outcome["code"])
