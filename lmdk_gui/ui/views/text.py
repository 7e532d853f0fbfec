"""Short texts painted without QGraphicsTextItem: the rows' notes and the series plot's hover box."""

from __future__ import annotations

import html
import math
import re

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QStaticText
from PySide6.QtWidgets import QWidget

#: the markup of notes and the hover box: line breaks, bold, subscript, and colour (of a bold run or a span);
#: anything else is text
_MARKUP = re.compile(r"<br>|<b(?: style='color:([^']*)')?>|</b>|<span style='color:([^']*)'>|</span>|<sub>|</sub>")
_CLOSE = ("</b>", "</span>", "</sub>")

Run = tuple[str, str | None, bool, bool]  # text, colour (None: black), bold, subscript


def markup_runs(markup: str) -> list[list[Run]]:
    """The lines of a markup text as runs of (text, colour, bold, subscript)."""
    lines: list[list[Run]] = [[]]
    style: list[tuple[str | None, bool, bool]] = [(None, False, False)]
    pos = 0
    for m in _MARKUP.finditer(markup):
        if m.start() > pos:
            lines[-1].append((html.unescape(markup[pos:m.start()]), *style[-1]))
        tag, color = m.group(0), m.group(1) or m.group(2)
        c, bold, sub = style[-1]
        if tag == "<br>":
            lines.append([])
        elif tag in _CLOSE:
            if len(style) > 1:
                style.pop()
        else:
            style.append((color or c, bold or tag.startswith("<b"), sub or tag == "<sub>"))
        pos = m.end()
    if pos < len(markup):
        lines[-1].append((html.unescape(markup[pos:]), *style[-1]))
    return lines if markup else []


class TextLines:
    """A few lines of short text runs (:func:`markup_runs`), each laid out once per text (QStaticText, at its
    first paint) and painted with the painter: what the rows' notes and the hover box show. pyqtgraph's
    LabelItem and TextItem are QGraphicsTextItems that parse and lay out their HTML on every new text,
    ≈ 0.35 ms each and several a click (issue 15). A run's layout and width are kept per text, font and size
    for every instance (:attr:`_laid`): a click gives the hover box and the eight row notes new texts, most of
    whose runs ("Uniform: ε", " of 101 beyond") they showed before."""

    #: (text, bold, subscript, point size) → (its QStaticText, its width); cleared when it grows past LAID_MAX
    _laid: dict[tuple[str, bool, bool, float], tuple[QStaticText, float]] = {}
    LAID_MAX = 2048

    def __init__(self, point_size: float = 8.0, margin: float = 4.0) -> None:
        self._size = point_size
        font = QFont()
        font.setPointSizeF(point_size)
        bold = QFont(font)
        bold.setBold(True)
        self._fonts = {(b, sub): QFont(f) for b, f in ((False, font), (True, bold)) for sub in (False, True)}
        for b in (False, True):
            self._fonts[(b, True)].setPointSizeF(point_size * 0.75)
        self._widths = {key: QFontMetricsF(f).horizontalAdvance for key, f in self._fonts.items()}
        metrics = QFontMetricsF(font)
        self._step, self._drop = metrics.lineSpacing(), metrics.ascent() * 0.45
        self.margin = margin
        self.markup = ""
        #: per line, its runs: laid-out text, font, pen, x and y offset
        self.lines: list[list[tuple[QStaticText, QFont, QColor, float, float]]] = []
        self.width = 0.0

    def set(self, markup: str) -> bool:
        """Show ``markup``; False when it already did."""
        if markup == self.markup:
            return False
        self.markup = markup
        laid = [self._layout(runs) for runs in markup_runs(markup)]
        self.lines = [runs for runs, _ in laid]
        self.width = max((end + self.margin for _, end in laid), default=0.0)
        return True

    def _layout(self, runs: list[Run]) -> tuple[list[tuple[QStaticText, QFont, QColor, float, float]], float]:
        out, x = [], self.margin
        for text, color, bold, sub in runs:
            st, width = self._run(text, bold, sub)
            out.append((st, self._fonts[(bold, sub)], QColor(color) if color else QColor(0, 0, 0), x,
                        self._drop if sub else 0.0))
            x += width
        return out, x

    def _run(self, text: str, bold: bool, sub: bool) -> tuple[QStaticText, float]:
        key = (text, bold, sub, self._size)
        hit = self._laid.get(key)
        if hit is None:
            if len(self._laid) >= self.LAID_MAX:
                self._laid.clear()
            st = QStaticText(text)  # (laid out at its first paint, then kept)
            st.setTextFormat(Qt.TextFormat.PlainText)
            hit = self._laid[key] = (st, self._widths[(bold, sub)](text))
        return hit

    def height(self) -> float:
        return 2 * self.margin + self._step * len(self.lines) if self.lines else 0.0

    def plain(self) -> str:
        return "\n".join("".join(st.text() for st, *_ in runs) for runs in self.lines)

    def paint(self, p) -> None:
        for i, runs in enumerate(self.lines):
            y = self.margin + i * self._step
            for st, font, color, x, dy in runs:
                p.setFont(font)  # (the painter's font is the one drawn: the text was laid out for it)
                p.setPen(color)
                p.drawStaticText(QPointF(x, y + dy), st)


class InfoBox(QWidget):
    """The series plot's hover box: :class:`TextLines` on a pale opaque box, a child widget over the plot's
    viewport (in its pixels, which are the scene's). Opaque, it is repainted alone when its text changes: as
    an item on the scene, each click's two new texts repainted the plot's line and markers under it as well
    (≈ 2.5 ms of the click at 10^5, issue 15), and the plot's own repaints skip the area it covers. Mouse
    events go through to the plot (a click under the box marks the event there)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("hoverBox")
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)  # (it paints every pixel it covers)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self._text = TextLines()
        self._fill = QColor(255, 255, 250)
        self._border = QColor(180, 180, 180)

    def setHtml(self, markup: str) -> None:  # noqa: N802 - pyqtgraph's TextItem's name
        if self._text.set(markup):
            self.resize(math.ceil(self._text.width), math.ceil(self._text.height()))
            self.update()

    def toPlainText(self) -> str:  # noqa: N802 - Qt naming
        return self._text.plain()

    def paintEvent(self, ev) -> None:  # noqa: N802 - Qt naming
        p = QPainter(self)
        p.fillRect(self.rect(), self._fill)
        p.setPen(self._border)
        p.drawRect(self.rect().adjusted(0, 0, -1, -1))
        self._text.paint(p)
        p.end()
