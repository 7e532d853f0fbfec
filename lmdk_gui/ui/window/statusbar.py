"""The window's status bar: a message never runs under the permanent widgets (the counts, the guarantee, the
person chooser). Qt cuts a long temporary message where those widgets begin ("Released 3 of 3 persons into
/tmp/s1"); here it is elided in its middle, where a path's least telling part is, and the whole message is
the tooltip and what :meth:`currentMessage` returns."""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QStatusBar, QWidget


class ElidingStatusBar(QStatusBar):
    #: px kept free between the message and the first permanent widget
    GAP = 12

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("statusBar")
        self._permanent: list[QWidget] = []
        self._full = ""
        self._until: float | None = None  # when a timed message ends (monotonic seconds)
        self.messageChanged.connect(lambda text: text or self.setToolTip(""))  # (cleared, or timed out)

    def addPermanentWidget(self, widget: QWidget, stretch: int = 0) -> None:  # noqa: N802 - Qt naming
        self._permanent.append(widget)
        super().addPermanentWidget(widget, stretch)

    def insertPermanentWidget(self, index: int, widget: QWidget, stretch: int = 0) -> int:  # noqa: N802
        self._permanent.append(widget)
        return super().insertPermanentWidget(index, widget, stretch)

    def showMessage(self, text: str, timeout: int = 0) -> None:  # noqa: N802 - Qt naming
        self._full = text
        self._until = time.monotonic() + timeout / 1000 if timeout > 0 else None
        self._show(timeout)

    def currentMessage(self) -> str:  # noqa: N802 - Qt naming
        return self._full if super().currentMessage() else ""

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().resizeEvent(event)
        self._refit()

    def event(self, event) -> bool:
        done = super().event(event)
        if event.type() == QEvent.Type.LayoutRequest:  # a permanent widget grew or shrank, or one was shown
            self._refit()
        return done

    def _refit(self) -> None:
        """The room changed: the same message, fitted again (a timed one for the time it has left)."""
        if super().currentMessage():
            left = 0 if self._until is None else max(1, int(1000 * (self._until - time.monotonic())))
            self._show(left)

    def _show(self, timeout: int) -> None:
        text = self._full
        room = self._room()
        shown = text if room is None else self.fontMetrics().elidedText(text, Qt.TextElideMode.ElideMiddle, room)
        self.setToolTip(text if shown != text else "")
        super().showMessage(shown, timeout)

    def _room(self) -> int | None:
        """The message's width before the first shown permanent widget; None before the bar is laid out."""
        if not self.isVisible():
            return None
        lefts = [w.geometry().left() for w in self._permanent if w.isVisible()]
        return max(40, (min(lefts) if lefts else self.width()) - self.GAP)
