"""The process's identity on the desktop: its name (settings folders, X11 WM_CLASS), the desktop entry it
belongs to and its window icon. ``lmdk-gui`` calls :func:`identify_application` before building a window."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QGuiApplication, QIcon

from ...desktop import APP_ID, ICON_DIR, ICON_SIZES, SVG_NAME, WM_CLASS, png_name


def app_icon() -> QIcon:
    """The icon at every rendered size (crisp in title bars and task switchers), the SVG for the rest."""
    icon = QIcon()
    for n in ICON_SIZES:
        icon.addFile(str(ICON_DIR / png_name(n)), QSize(n, n))
    icon.addFile(str(ICON_DIR / SVG_NAME))
    return icon


def identify_application(app: QGuiApplication) -> None:
    # The application name is also the class of the X11 WM_CLASS, which the entry's StartupWMClass names;
    # the desktop file name is the Wayland app id: both let docks match the window to lmdk-gui.desktop.
    app.setApplicationName(WM_CLASS)
    app.setOrganizationName("lmdk")
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())
