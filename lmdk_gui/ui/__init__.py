"""Qt views of lmdk_gui. ``from lmdk_gui.ui import MainWindow`` is the automation entry point."""

from __future__ import annotations

__all__ = ["MainWindow"]


def __getattr__(name: str):
    if name == "MainWindow":
        from .window.main_window import MainWindow

        return MainWindow
    raise AttributeError(name)
