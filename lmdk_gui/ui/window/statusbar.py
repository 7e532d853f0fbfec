"""The window's status bar: a message never runs under the permanent widgets (the counts, the guarantee, the
person chooser). Qt cuts a long temporary message where those widgets begin ("Released 3 of 3 persons into
/tmp/s1"); here it is elided in its middle, where a path's least telling part is, and the whole message is
the tooltip and what :meth:`currentMessage` returns.

:class:`StatusReadouts` keeps the bar's permanent readouts: the events, the landmarks and the guarantee's
verdict (``guaranteeStatus``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from ...core.analysis.metrics import share
from ...core.kernel.settings import LANDMARK_SCHEMES, SCHEME_LABELS
from ..views.theme import count_noun

if TYPE_CHECKING:
    from .session import Session


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


class StatusReadouts(QObject):
    """The counts and the verdict at the bar's right end (the window's ``status_events``, ``status_landmarks``,
    ``status_guarantee``), said anew from the session on each change."""

    def __init__(self, bar: QStatusBar, session: Session) -> None:
        super().__init__(bar)
        self.session = session
        self.events = QLabel()
        self.landmarks = QLabel()
        self.guarantee = QLabel()
        self.guarantee.setObjectName("guaranteeStatus")

    def add_to(self, bar: QStatusBar) -> None:
        for w in (self.events, self.landmarks, self.guarantee):
            bar.addPermanentWidget(w)

    def refresh(self) -> None:
        self.update_counts()
        self.update_verdict()

    def update_counts(self) -> None:
        s = self.session
        n = s.n
        k = int(s.landmarks.size)
        _set_status(self.events, count_noun(n, "event"))
        _set_status(self.landmarks, f"{count_noun(k, 'landmark')} ({share(k, n)})" if n else "no landmarks")

    def update_verdict(self) -> None:
        s = self.session
        if not (s.preview and s.is_preview_current()):
            _set_status(self.guarantee, "computing…")
            return
        bad = [SCHEME_LABELS[x] for x in LANDMARK_SCHEMES if not s.preview[x].guarantee.holds]
        if bad:
            text, color = f"✘ landmark privacy (independent events) fails: {', '.join(bad)}", "#c00000"
        else:
            text, color = f"✔ landmark privacy (independent events): holds at ε = {s.epsilon:g}", "#008000"
        # coloured by rich text: a style sheet re-polishes the label, 6-10 ms on every click and preview
        _set_status(self.guarantee, f"<b style='color:{color}'>{text}</b>")
        self.guarantee.setToolTip(
            f"(ε, L)-landmark privacy with ε = {s.epsilon:g}: every landmark scheme's budgets sum to at most ε "
            "over the landmarks plus any one regular event (checked independently of the schemes). It "
            "assumes the events are independent; the Temporal correlation tab shows the loss under a "
            "correlation model you choose.")


def _set_status(label: QLabel, text: str) -> None:
    """A status-bar label's new text, in a width that only grows: a label whose size may change asks the whole
    window for a new layout at every text (the landmark count and the guarantee's "computing…" and verdict, at
    every click: two layout passes of the main window and a repaint of the series plot, issue 15). A fixed
    size does not; the widest text so far keeps its room."""
    if text == label.text():
        return
    label.setText(text)
    hint = label.sizeHint()
    if hint.width() > label.minimumWidth() or label.minimumHeight() != label.maximumHeight():
        label.setFixedSize(max(hint.width(), label.minimumWidth()), hint.height())
