"""``window.extensions``: the feature modules installed into the main window, by name.

Each feature module (``FEATURES``: its name → its module under ``lmdk_gui.ui``) has ``install(window)``, which adds its menus, docks or tabs and
returns its object (``state()``/``restore(d)`` for projects, ``shutdown()`` through ``window.close_guards``,
or :func:`after_close` for a feature that asks nothing on close). The window's controllers and those objects
are :class:`WindowPart` objects (``window``, ``session``).

The tabs that the first paint does not show may install *after* it (``defer=`` names; ``lmdk-gui`` defers
them, cold start, issue 15): one per event-loop pass once :meth:`Extensions.first_painted` is called, in
their order, so the tab bar ends in the same order; any use of the mapping (``[name]``, ``get``, iteration,
adding one) installs the rest at once first, so a caller never sees a partial set.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

#: the feature modules by name (the name is the key of ``window.extensions``)
FEATURES = {
    "landmarks_ui": "panels.landmarks_ui",
    "project_ui": "window.project_ui",
    "dummies_ui": "panels.dummies_ui",
    "correlation_ui": "panels.correlation_ui",
    "evaluation_ui": "panels.evaluation_ui",
    "accuracy_ui": "panels.accuracy_ui",
    "batch_ui": "dialogs.batch_ui",
}
_UI = __package__.rsplit(".", 1)[0]  # lmdk_gui.ui


class WindowPart(QObject):
    """A part of one main window (a controller, or the object a feature module installs): a child of the
    window, with ``window`` and its ``session``."""

    def __init__(self, window) -> None:  # window: the MainWindow (not imported: it imports this module)
        super().__init__(window)
        self.window = window
        self.session = window.session


class _AfterClose(QObject):
    def __init__(self, window: QWidget, fn: Callable[[], object]) -> None:
        super().__init__(window)
        self._window = window
        self._fn = fn
        window.installEventFilter(self)

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:  # noqa: N802 - Qt naming
        # A close guard may still refuse: look once the event loop has handled the close.
        if obj is self._window and ev.type() == QEvent.Type.Close:
            QTimer.singleShot(0, self._after)
        return False

    def _after(self) -> None:
        if not self._window.isVisible():
            self._fn()


def after_close(window: QWidget, fn: Callable[[], object]) -> None:
    """Call ``fn()`` once the window has really closed (every close guard agreed): how a feature that asks
    nothing on close stops its worker threads (the window does not tell its extensions it closes)."""
    _AfterClose(window, fn)


class Extensions(MutableMapping):
    def __init__(self, window, names: tuple[str, ...], defer: tuple[str, ...] = ()) -> None:
        self._window = window
        self._installed: dict[str, Any] = {}
        self._pending = [n for n in names if n in defer]
        self._scheduled = False
        for name in names:
            if name not in defer:
                self._install(name)

    def _install(self, name: str) -> None:
        module = f"{_UI}.{FEATURES.get(name, name)}"
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:  # a feature module not built yet
            if e.name == module:
                return
            raise
        self._installed[name] = mod.install(self._window)

    def first_painted(self) -> None:
        """The window has painted once: install the deferred ones, one per event-loop pass."""
        if self._pending and not self._scheduled:
            self._scheduled = True
            QTimer.singleShot(0, self._install_next)

    def _install_next(self) -> None:
        if self._pending:
            self._install(self._pending.pop(0))
        if self._pending:
            QTimer.singleShot(0, self._install_next)

    def pending(self) -> list[str]:
        """The deferred ones not installed yet (does not install them)."""
        return list(self._pending)

    def install_all(self) -> None:
        while self._pending:
            self._install(self._pending.pop(0))

    def __getitem__(self, name: str) -> Any:
        self.install_all()
        return self._installed[name]

    def __setitem__(self, name: str, ext: Any) -> None:  # an extension made elsewhere (scripts, tests)
        self.install_all()
        self._installed[name] = ext

    def __delitem__(self, name: str) -> None:
        self.install_all()
        del self._installed[name]

    def __iter__(self) -> Iterator[str]:
        self.install_all()
        return iter(dict(self._installed))

    def __len__(self) -> int:
        self.install_all()
        return len(self._installed)
