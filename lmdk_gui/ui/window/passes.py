"""Steps of one gesture in separate passes of the event loop (issue 15: opening 10^7 events without a stall).

A step that makes a widget change asks for a paint, which Qt runs in the loop's next pass. :func:`after_paint`
runs the next step after that paint *and* after the input and timers that fell due meanwhile: a single
timer fires in the same pass as the timers that came due during the paint, before them, so the paint and the
next step were one stall; a queued call or a 0 ms single shot (Qt turns those into queued calls) runs even
before the paint. Two 1 ms timers, the second started by the first, leave the loop that turn.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


def after_paint(context: QObject, fn: Callable[[], object]) -> None:
    """Call ``fn`` once the paint this pass asked for, and a turn of the event loop after it, are done
    (never if ``context`` is destroyed first)."""
    QTimer.singleShot(1, context, lambda: QTimer.singleShot(1, context, fn))
