"""Render the application icon's PNGs from its SVG: ``python -m tests.render_icons`` (from the repository root).

lmdk_gui/icons/lmdk-gui.svg is the source; lmdk-gui-<N>.png are its renderings at the hicolor sizes in
``lmdk_gui.desktop.ICON_SIZES``, made with Qt's own SVG renderer (QtSvg, part of PySide6-Essentials) so that
no other tool is needed. tests/ui/test_desktop_icon.py checks the committed PNGs against a fresh rendering.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from lmdk_gui.desktop import ICON_DIR, ICON_SIZES, SVG_NAME, png_name


def render(svg: Path, size: int):
    """The SVG drawn on a transparent ``size``×``size`` image (QImage, premultiplied ARGB)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg}: not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    return image


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # fonts and image I/O need one
    for size in ICON_SIZES:
        out = ICON_DIR / png_name(size)
        if not render(ICON_DIR / SVG_NAME, size).save(str(out)):
            print(f"could not write {out}", file=sys.stderr)
            return 1
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
