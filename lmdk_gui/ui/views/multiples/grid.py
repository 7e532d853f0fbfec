"""What the budget rows and the preview rows share: the [name | plot | note] grid of one row per shown scheme
(:class:`_Rows`), its labels and notes, its helper thread, and :class:`AfterPaint`, the gate that waits for
the rows to paint.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSizeF, Qt, QTimer, Signal

from .... import runtime
from ....core.kernel.settings import ALL_SCHEMES, SCHEME_LABELS
from ....runtime.priority import HELPER
from ..axes import AXIS_W, LABEL_W, NOTE_W, cache_axes
from ..text import TextLines
from ..theme import SCHEME_COLORS

#: above this many rows in view the budget bars and preview rows are reduced on a helper thread (at 10^6 in
#: view the budget rows alone held the GUI thread ≈ 55 ms per preview; at this size ≈ 14 ms)
ASYNC_ROWS = 250_000


class _Label(pg.LabelItem):
    """A label that ignores a text it already shows, and asks for a new layout only when its size changed:
    pyqtgraph's setText invalidates the grid three times, and a click rewrites every row's error note (same
    size, other digits), so the whole window was laid out again on each click (issue 15)."""

    _quiet = False

    def setText(self, text, **args):  # noqa: N802 - pyqtgraph naming
        if not args and text == getattr(self, "text", None):
            return
        hint = getattr(self, "_sizeHint", None)
        self._quiet = True
        try:
            super().setText(text, **args)
        finally:
            self._quiet = False
        if self._sizeHint != hint:
            self.updateGeometry()

    def updateGeometry(self):  # noqa: N802 - Qt naming
        if not self._quiet:
            super().updateGeometry()


class _NameLabel(_Label):
    """A rotated scheme name that never forces its row taller than the row's own minimum, in a column of
    LABEL_W whatever its font (pyqtgraph sets the minimum to the text's size: the rows moved off the series
    plot's x)."""

    def updateMin(self):  # noqa: N802 - pyqtgraph naming
        super().updateMin()
        self.setMinimumHeight(0)
        self.setMinimumWidth(LABEL_W)


class _HeaderLabel(_Label):
    """A header that wraps at its width in a narrow window (cut at the right, it lost the key of the marks:
    at 1280×800 the preview's "▲▼ beyond the chart · bands") instead of widening the whole layout."""

    def updateMin(self):  # noqa: N802 - pyqtgraph naming
        super().updateMin()
        self.setMinimumWidth(0)

    def resizeEvent(self, ev):  # noqa: N802 - Qt naming
        width = self.rect().width()
        if width > 0 and self.item.textWidth() != width:
            self.item.setTextWidth(width)
            if self.itemRect().height() != self.minimumHeight():  # one line more or less: a new layout
                self.updateMin()
        super().resizeEvent(ev)


class NoteItem(pg.GraphicsWidget):
    """The notes column: a few short lines (:class:`.plots.TextLines`), exactly NOTE_W wide. pyqtgraph's
    LabelItem is a QGraphicsTextItem that parses and lays out its HTML on every text (≈ 0.35 ms each, eight a
    click: issue 15). ``text`` is the markup shown. Its height follows the number of lines: only a new
    number of lines asks for a new layout, not new digits."""

    def __init__(self) -> None:
        self._height = 0.0  # (before the base class asks for its size hint)
        super().__init__()
        self._text = TextLines()
        self.setMinimumWidth(NOTE_W)
        self.setMaximumWidth(NOTE_W)

    @property
    def text(self) -> str:
        return self._text.markup

    def setText(self, text: str) -> None:  # noqa: N802 - pyqtgraph naming
        rows = len(self._text.lines)
        if not self._text.set(text):
            return
        if len(self._text.lines) != rows:
            self._height = self._text.height()
            self.updateGeometry()
        self.update()

    def sizeHint(self, which, constraint=QSizeF()):  # noqa: N802, B008 - Qt naming; an immutable default
        if which in (Qt.SizeHint.MinimumSize, Qt.SizeHint.PreferredSize):
            return QSizeF(NOTE_W, self._height)
        return super().sizeHint(which, constraint)

    def paint(self, p, *args) -> None:
        p.save()
        p.setClipRect(self.rect())
        self._text.paint(p)
        p.restore()


class _Rows(pg.GraphicsLayoutWidget):
    """A header line and rows of [label | plot | note]; rows are laid out again when the shown set changes
    (hidden items would still take their space in a QGraphicsGridLayout). A scheme's row is built the first
    time it is shown (:meth:`_new_row`): the preview's Event and User rows are hidden by default, and each
    row is ≈ 8 ms of a cold start (issue 15)."""

    #: minimum height of one row and of the header + time axis (px)
    ROW_MIN, EXTRA_MIN = 30, 22
    painted = Signal()  # the viewport has been painted (AfterPaint)
    # set by the subclasses: their redraw counter and the helper thread of their large views
    _generation: int
    _pool: ThreadPoolExecutor

    def paintEvent(self, ev) -> None:  # noqa: N802 - Qt naming
        super().paintEvent(ev)
        self._painted_generation = self._applied_generation
        self.painted.emit()

    def has_painted_latest(self) -> bool:
        """Whether the view has painted what its latest redraw asked for (a large view's rows come from the
        helper thread: not before they have arrived)."""
        return self._painted_generation == self._generation

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.ci.setSpacing(0)
        self.ci.setContentsMargins(0, 2, 0, 2)
        self.header = _HeaderLabel("", size="8pt", justify="left")
        self.rows: dict[str, dict] = {}
        self._shown: list[str] | None = None
        #: rows the height is kept for while none is shown yet (before the first series' rows are laid out)
        self._expected = 0
        self._master: pg.ViewBox | None = None
        #: whether the last row shows the time axis
        self.time_labels = True
        # the redraw whose rows the items hold, and the one the last paint showed (has_painted_latest)
        self._applied_generation = self._painted_generation = -1

    def _make_row(self, scheme: str, plot: pg.PlotItem, named: bool = True) -> dict:
        color = SCHEME_COLORS[scheme]
        label = _NameLabel(f"<b>{SCHEME_LABELS[scheme]}</b>" if named else "", angle=-90, color=color, size="7pt")
        label.setFixedWidth(LABEL_W)
        note = NoteItem()
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setMouseEnabled(x=True, y=False)
        plot.getAxis("left").setWidth(AXIS_W)
        plot.getViewBox().setDefaultPadding(0.0)
        plot.setMinimumHeight(24)
        plot.getAxis("left").setMinimumHeight(10)
        cache_axes(plot)
        return {"plot": plot, "label": label, "note": note}

    def _new_row(self, scheme: str) -> dict:  # pragma: no cover - overridden
        """``scheme``'s row, built now and brought to the widget's current series and scale."""
        raise NotImplementedError

    def _row(self, scheme: str) -> dict:
        if scheme not in self.rows:
            self.rows[scheme] = self._new_row(scheme)
            if self._master is not None:
                self.rows[scheme]["plot"].setXLink(self._master)
        return self.rows[scheme]

    def prepare(self, schemes) -> None:
        """Build the rows of ``schemes`` now, hidden until shown, and keep their height: before the window is
        shown, not when the first preview arrives (building a row in a shown scene costs several times as
        much, and a taller minimum laid the window out again, issue 15)."""
        for scheme in ALL_SCHEMES:
            if scheme in schemes and scheme not in self.rows:
                r = self._row(scheme)
                for key in ("label", "plot", "note"):
                    r[key].setParentItem(self.ci)
                    r[key].setVisible(False)
        self._expected = sum(1 for s in ALL_SCHEMES if s in schemes)
        self.setMinimumHeight(self._min_height(self._expected))

    def expect(self, shown: list[str]) -> bool:
        """Show the rows of ``shown`` before their data comes (a new series' first preview fills them); True
        when that changed the layout."""
        before = self._shown
        self._layout(shown)
        if self._shown == before:
            return False
        # The rows' own layouts (their plots' axes, labels) settle now, not in three more passes of the event
        # loop each with a repaint of the whole view.
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        return True

    def _min_height(self, rows: int) -> int:
        """Never clip a scheme's row: the rows' own minimum (and, in :meth:`_layout`, what the layout of the
        items needs)."""
        axis_h = 24 if self.time_labels and rows else 0
        return self.EXTRA_MIN + axis_h + self.ROW_MIN * max(rows, 1)

    def _layout(self, shown: list[str]) -> None:
        """Show the rows of ``shown``."""
        if shown == self._shown:
            return
        self._shown = shown
        self._grid(shown)
        self._expected = len(shown)
        self.setMinimumHeight(max(self._min_height(self._expected), int(self.ci.minimumHeight()) + 2))
        for scheme, r in self.rows.items():
            vis = scheme in shown
            for key in ("plot", "label", "note"):
                r[key].setVisible(vis)

    def _grid(self, shown: list[str]) -> None:
        """The header and the shown rows in the grid. Items leave the grid, not the scene: pyqtgraph's
        GraphicsLayout.clear/addItem take a plot out of the scene and back (every item it holds re-parented)
        and lay the whole grid out after each item (≈ 30 ms of the first preview's four rows, issue 15)."""
        grid = self.ci.layout
        while grid.count():
            grid.removeAt(grid.count() - 1)
        grid.addItem(self.header, 0, 0, 1, 3)
        for i, scheme in enumerate(shown):
            r = self._row(scheme)
            for col, key in enumerate(("label", "plot", "note")):
                grid.addItem(r[key], i + 1, col)
            r["plot"].showAxis("bottom", i == len(shown) - 1 and self.time_labels)  # time labels once, at the end
        grid.activate()  # the rows' sizes now: the redraw that follows bins by their width

    def shown(self) -> list[str]:
        return list(self._shown or [])

    def plots(self) -> list[pg.PlotItem]:
        return [r["plot"] for r in self.rows.values()]

    def link_x(self, view: pg.ViewBox) -> None:
        """The rows follow ``view``'s x range (the series plot's: one x per event)."""
        if self._master is view:
            return
        self.unlink_x()
        self._master = view
        for r in self.rows.values():
            r["plot"].setXLink(view)
        view.sigXRangeChanged.connect(self._on_xrange)
        view.sigResized.connect(self._on_xrange)

    def unlink_x(self, n: int | None = None) -> None:
        """The rows get an x of their own — at a coarser release resolution one x per *period*, which the
        series plot's events do not share — showing rows 0 … ``n`` − 1 whole."""
        if self._master is not None:
            self._master.sigXRangeChanged.disconnect(self._on_xrange)
            self._master.sigResized.disconnect(self._on_xrange)
            self._master = None
            for r in self.rows.values():
                r["plot"].setXLink(None)
        if n is not None:
            for r in self.rows.values():
                r["plot"].setXRange(-0.5, max(n, 1) - 0.5, padding=0.01)

    def _view_rows(self, n: int) -> tuple[int, int, float]:
        """First and last row in view and the plot width in pixels."""
        if self._master is not None:
            (x0, x1), _ = self._master.viewRange()
        else:
            x0, x1 = 0.0, float(n - 1)
        a = max(0, int(math.floor(x0)))
        b = min(n - 1, int(math.ceil(x1)))
        width = 800.0
        for scheme in self._shown or []:
            w = self.rows[scheme]["plot"].getViewBox().width()
            if w > 0:
                width = w
                break
        return a, b, width

    def _on_xrange(self, *_args) -> None:
        # The rows follow the master's range (already theirs when it announces it): their transforms are set
        # now, not in the paint, as the master's (plots.EagerViewBox says why).
        for r in self.rows.values():
            r["plot"].getViewBox().updateMatrix()
        self.redraw()

    def redraw(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    @staticmethod
    def _on_helper(a: int, b: int) -> bool:
        """Whether a view of rows ``a..b`` is reduced on the helper thread (more than :data:`ASYNC_ROWS`)."""
        return b - a + 1 > ASYNC_ROWS

    def _reduce_later(self, ready, gen: int, fn, args: tuple) -> None:
        """``ready.emit(gen, fn(*args))`` on the helper thread, unless a newer redraw came before it started:
        a stale job's result is never drawn, and it would keep its preview's arrays alive while it waits (at
        10^7 events, ≈ 80 MB each)."""
        def job() -> None:
            if gen == self._generation:
                ready.emit(gen, fn(*args))
        self._pool.submit(job)


def _helper_pool(name: str) -> ThreadPoolExecutor:
    """The one thread a view reduces its large views on (at :data:`~lmdk_gui.runtime.priority.HELPER` priority
    when the launcher switched ``priority`` on)."""
    return ThreadPoolExecutor(1, thread_name_prefix=name, initializer=runtime.worker_started, initargs=(HELPER,))


class AfterPaint(QObject):
    """Runs a callback once every visible one of some views has painted (the session's later stages wait
    for the plots to show a new preview, ``Session.after_draw``); at once when none is visible, and after
    ``LATEST_MS`` at the latest (a window that is not exposed gets no paint). A newer callback replaces a
    waiting one (the session ignores a superseded preview's stages anyway)."""

    LATEST_MS = 250

    def __init__(self, views: list[_Rows], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._views = views
        self._waiting: set[_Rows] = set()
        self._fn: Callable[[], None] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(self.LATEST_MS)
        self._timer.timeout.connect(self._run)
        for v in views:
            v.painted.connect(lambda v=v: self._painted(v))

    def __call__(self, fn: Callable[[], None], views: list[_Rows] | None = None) -> None:
        """``fn`` once every visible one of ``views`` (default: all of this gate's) has painted."""
        self._fn = fn
        self._waiting = {v for v in (self._views if views is None else views) if v.isVisible()}
        if self._waiting:
            self._timer.start()
        else:
            self._run()

    def _painted(self, view: _Rows) -> None:
        self._waiting.discard(view)
        if self._fn is not None and not self._waiting:
            self._run()

    def _run(self) -> None:
        self._timer.stop()
        fn, self._fn = self._fn, None
        if fn is not None:
            fn()

