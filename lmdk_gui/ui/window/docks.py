"""The window's docks (Settings, Metrics, Suggest landmarks, Dummy landmarks): one way to add one."""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

D = TypeVar("D", bound=QDockWidget)

#: Every dock moves, floats and closes. Closable: a dock's toggleViewAction (View menu) is disabled for docks
#: that cannot be closed.
DOCK_FEATURES = (QDockWidget.DockWidgetFeature.DockWidgetMovable
                 | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                 | QDockWidget.DockWidgetFeature.DockWidgetClosable)


def new_dock(window: QMainWindow, title: str, name: str, widget: QWidget) -> QDockWidget:
    """A dock named ``name`` (its objectName) holding ``widget``, not yet added to the window."""
    dock = QDockWidget(title, window)
    dock.setObjectName(name)
    dock.setWidget(widget)
    return dock


def add_dock(window: QMainWindow, dock: D, area: Qt.DockWidgetArea, tab_with: QDockWidget | None = None) -> D:
    """Add ``dock`` to the window at ``area`` with the app's features; ``tab_with``: tabbed with that dock."""
    dock.setFeatures(DOCK_FEATURES)
    window.addDockWidget(area, dock)
    if tab_with is not None:
        window.tabifyDockWidget(tab_with, dock)
    return dock
