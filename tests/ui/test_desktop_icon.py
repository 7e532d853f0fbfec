"""The application icon: the committed PNGs are renderings of the SVG, and the launcher's set-up gives the
application (and so every window) that icon and the desktop entry's name."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QImage

from lmdk_gui import desktop
from tests.render_icons import render


def pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    return rows[:, : 4 * image.width()].reshape(image.height(), image.width(), 4).astype(int)


@pytest.mark.parametrize("size", desktop.ICON_SIZES)
def test_each_png_is_the_svg_rendered_at_its_size(qapp, size):
    committed = QImage(str(desktop.ICON_DIR / desktop.png_name(size)))
    assert (committed.width(), committed.height()) == (size, size)
    fresh = pixels(render(desktop.ICON_DIR / desktop.SVG_NAME, size))
    # a little slack for anti-aliasing differences between Qt versions; a changed SVG differs far more
    # (re-render with `python -m tests.render_icons`)
    assert np.abs(pixels(committed) - fresh).mean() < 2.0
    assert pixels(committed)[..., 3].max() == 255  # not blank


def test_the_launcher_set_up_gives_the_app_its_icon_and_desktop_entry(qapp, qtbot):
    from lmdk_gui.ui import MainWindow
    from lmdk_gui.ui.window.identity import identify_application

    saved = qapp.applicationName(), qapp.organizationName(), qapp.desktopFileName(), qapp.windowIcon()
    try:
        identify_application(qapp)
        assert not qapp.windowIcon().isNull()
        sizes = {s.width() for s in qapp.windowIcon().availableSizes()}
        assert set(desktop.ICON_SIZES) <= sizes
        assert qapp.desktopFileName() == desktop.APP_ID
        assert qapp.applicationName() == desktop.WM_CLASS  # the entry's StartupWMClass
        w = MainWindow(load_default=False)
        qtbot.addWidget(w)
        assert not w.windowIcon().isNull()
        assert w.windowIcon().cacheKey() == qapp.windowIcon().cacheKey()
    finally:
        qapp.setApplicationName(saved[0])
        qapp.setOrganizationName(saved[1])
        qapp.setDesktopFileName(saved[2])
        qapp.setWindowIcon(saved[3])
