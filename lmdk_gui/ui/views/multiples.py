"""Small multiples under the series plot: one budget row and one preview row per shown scheme.

Both widgets share one column grid — [scheme name | plot | notes] — with fixed widths, so every row lines
up with the series plot above (pyqtgraph's x link aligns views by their on-screen position).

What is drawn is reduced to the pixel columns in view, never the whole series: when more events are in
view than there are columns, each column gets a summary of its events (bars: the column's highest budget,
drawn as a flat step, so a step never turns into a ramp; values: the middle 80 % of a sample of 64 events
per column as a band, the original's median as a line). Redrawn on every x-range change: a few
``reduceat`` passes over the rows in view, and small arrays handed to pyqtgraph.

Preview rows share one y range that fits the *original* data — the public bounds when set, else the
0.5–99.5 percentile range of the original, padded — so a very noisy release runs off the chart instead of
flattening every row; values beyond it are marked at the edge (▲/▼ per column) and counted in the row's
note. Republished (approximated) events are rings (zoomed out: one ring per column, its last republished
value). A denoised line per scheme can be drawn over faint raw points with :meth:`PreviewPlot.set_denoised`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSizeF, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QTransform

from ... import runtime
from ...core.analysis.metrics import compact_count, readable_number, unit_label
from ...core.data.series import Series
from ...core.kernel.settings import ALL_SCHEMES, LANDMARK_SCHEMES, SCHEME_LABELS
from ...runtime.priority import HELPER
from .curve import CurveItem, DotsItem
from .plots import (
    AXIS_W,
    LABEL_W,
    NOTE_W,
    CategoryAxis,
    TextLines,
    TimeAxis,
    cache_axes,
    display_values,
    robust_range,
    series_range,
    set_data,
    step_runs,
    y_label,
)
from .theme import (
    DUMMY_COLOR,
    EPSILON_LINE_COLOR,
    LANDMARK_COLOR,
    OFFCHART_COLOR,
    ORIGINAL_PREVIEW_COLOR,
    SCHEME_COLORS,
    css,
    darker,
    rgba,
)

#: pixel columns per reduced bin (1 = one envelope per screen column)
PX_PER_BIN = 1.0


# ------------------------------------------------------------------------------------- reduction
def column_bins(a: int, b: int, width_px: float) -> np.ndarray | None:
    """Start rows of equal bins covering rows ``a..b`` with about one bin per pixel column, or None when
    there are no more rows than columns (then every row is drawn itself)."""
    count = b - a + 1
    ncols = max(1, int(width_px / PX_PER_BIN))
    if count <= ncols:
        return None
    k = math.ceil(count / ncols)
    return np.arange(a, b + 1, k, dtype=np.int64)


#: events drawn one by one up to this many per pixel column; beyond, one summary per column
EVENTS_PER_PX = 3.0


def view_bins(a: int, b: int, width_px: float) -> np.ndarray | None:
    """The bins a view draws: None (every event itself) while at most :data:`EVENTS_PER_PX` events share a
    pixel column, else one bin per column."""
    if b - a + 1 <= EVENTS_PER_PX * max(width_px, 1.0):
        return None
    return column_bins(a, b, width_px)


def bin_edges(starts: np.ndarray, b: int) -> np.ndarray:
    """x of the bins' left edges plus the last right edge (rows sit at integers, bars span ±0.5)."""
    return np.append(starts, b + 1).astype(np.float64) - 0.5


def bar_steps(values: np.ndarray, a: int, b: int, starts: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Step outline of ``values[a..b]``; with bins, each bin's highest value as one flat top."""
    seg = values[a:b + 1]
    if starts is None:
        x, y = step_runs(seg)
        return x + a, y
    top = np.maximum.reduceat(seg, starts - a)
    return step_runs(top, bin_edges(starts, b))


def split_bars(b: np.ndarray, is_lm: np.ndarray, is_dm: np.ndarray | None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Budgets ``b`` split into regular, landmark and (with dummies) dummy bars (0 where not that kind)."""
    lmk = np.where(is_lm, b, 0.0)
    if is_dm is None:
        return np.where(is_lm, 0.0, b), lmk, None
    return np.where(is_lm | is_dm, 0.0, b), lmk, np.where(is_dm, b, 0.0)


def _shifted(xy: tuple[np.ndarray, np.ndarray], a: int) -> tuple[np.ndarray, np.ndarray]:
    return xy[0] + a, xy[1]


def mark_positions(rows: np.ndarray, a: int, b: int, starts: np.ndarray | None) -> np.ndarray:
    """x of one mark per row in ``a..b`` among sorted ``rows``, or per bin holding at least one of them."""
    i0, i1 = np.searchsorted(rows, [a, b + 1])
    vis = rows[i0:i1]
    if starts is None or vis.size == 0:
        return vis.astype(np.float64)
    k = int(starts[1] - starts[0]) if starts.size > 1 else b - a + 1
    cols = (vis - a) // k
    cols = cols[np.r_[True, cols[1:] != cols[:-1]]]  # rows are sorted: one per column without a sort
    return starts[cols] + (k - 1) / 2.0


def last_true_per_bin(mask: np.ndarray, a: int, starts: np.ndarray) -> np.ndarray:
    """Index (into ``mask`` = rows a..) of the last True of each bin that has one, without an index array
    the size of the series."""
    k = int(starts[1] - starts[0]) if starts.size > 1 else mask.size
    full = mask.size // k
    blocks = mask[:full * k].reshape(full, k)
    has = blocks.any(axis=1)
    last = (k - 1 - np.argmax(blocks[:, ::-1], axis=1)) + np.arange(full) * k
    out = last[has]
    rest = np.flatnonzero(mask[full * k:])
    if rest.size:
        out = np.append(out, full * k + rest[-1])
    return out


def mask_positions(mask: np.ndarray, a: int, starts: np.ndarray | None) -> np.ndarray:
    """x of one mark per True in ``mask`` (rows a..), or per bin holding at least one."""
    if starts is None:
        return (np.flatnonzero(mask) + a).astype(np.float64)
    k = int(starts[1] - starts[0]) if starts.size > 1 else mask.size
    hit = np.logical_or.reduceat(mask, starts - a) if mask.size else np.zeros(0, dtype=bool)
    return starts[hit] + (k - 1) / 2.0


def envelope(seg: np.ndarray, a: int, b: int, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bin centres, min, max) per bin of ``seg`` = the values of rows ``a..b``; NaN where a bin holds no
    finite value."""
    idx = starts - a
    with np.errstate(invalid="ignore"):
        lo = np.fmin.reduceat(seg, idx)
        hi = np.fmax.reduceat(seg, idx)
    k = int(starts[1] - starts[0]) if starts.size > 1 else b - a + 1
    centres = starts + np.minimum(k, b + 1 - starts) / 2.0 - 0.5
    return centres, lo, hi


#: events per pixel column sampled (evenly spaced) for a column's quantiles
QUANTILE_SAMPLE = 64


def column_quantiles(seg: np.ndarray, a: int, b: int, starts: np.ndarray,
                     qs: tuple[float, ...] = (10.0, 50.0, 90.0)) -> tuple[np.ndarray, np.ndarray]:
    """(bin centres, quantiles × bins) of ``seg`` = the values of rows ``a..b``, from at most
    :data:`QUANTILE_SAMPLE` evenly spaced events per bin: a column's spread at a glance without sorting
    10^6 values on every pan."""
    ncols = starts.size
    k = int(starts[1] - starts[0]) if ncols > 1 else seg.size
    take = np.unique(np.linspace(0, k - 1, min(k, QUANTILE_SAMPLE)).astype(np.int64))
    full = seg.size // k  # whole bins: a reshaped view, so only the sample is copied
    sub = seg[:full * k].reshape(full, k)[:, take]
    if full < ncols:  # the last, shorter bin: its own values, repeated up to the sample's width
        rest = seg[full * k:]
        sub = np.vstack((sub, rest[np.minimum(take, rest.size - 1)]))
    if np.isnan(sub).any():
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (category gaps) stay NaN
            q = np.nanpercentile(sub, qs, axis=1)
    else:  # nearest rank on the sorted sample: a few times faster than np.percentile along an axis
        srt = np.sort(sub, axis=1)
        ranks = np.rint(np.asarray(qs) / 100.0 * (srt.shape[1] - 1)).astype(np.int64)
        q = srt[:, ranks].T
    centres = starts + np.minimum(k, b + 1 - starts) / 2.0 - 0.5
    return centres, q


def segments(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, min_len: float) -> tuple[np.ndarray, np.ndarray]:
    """Vertical segments lo→hi at x (for ``connect='pairs'``), at least ``min_len`` tall so single values
    still show; bins without values are dropped."""
    ok = np.isfinite(lo)
    x, lo, hi = x[ok], lo[ok], hi[ok]
    mid = (lo + hi) / 2
    half = np.maximum((hi - lo) / 2, min_len / 2)
    xs = np.repeat(x, 2)
    ys = np.empty(xs.size)
    ys[0::2] = mid - half
    ys[1::2] = mid + half
    return xs, ys


def peak_line(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A connected line through each bin's min and max (what pyqtgraph's 'peak' downsampling draws)."""
    xs = np.repeat(x, 2)
    ys = np.empty(xs.size)
    ys[0::2] = lo
    ys[1::2] = hi
    return xs, ys


def triangles(x: np.ndarray, base: float, height: float, half_width: float) -> tuple[np.ndarray, np.ndarray]:
    """One polyline through a triangle per x (apex ``height`` above ``base``; negative: below), joined along
    the base: filled down to ``base`` it draws them all in one item — far cheaper than a scatter item when
    there is a mark in every pixel column."""
    if x.size == 0:
        return np.zeros(0), np.zeros(0)
    xs = np.empty(3 * x.size)
    xs[0::3], xs[1::3], xs[2::3] = x - half_width, x, x + half_width
    ys = np.empty(3 * x.size)
    ys[0::3] = ys[2::3] = base
    ys[1::3] = base + height
    return xs, ys


def _fmt_scale(top: float, epsilon: float) -> str:
    if top >= epsilon * 0.999:
        return "= ε"
    ratio = epsilon / top
    return f"= ε/{ratio:.0f}" if ratio >= 10 else f"= {top / epsilon:.2g}·ε"


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
        self._master = view
        for r in self.rows.values():
            r["plot"].setXLink(view)
        view.sigXRangeChanged.connect(self._on_xrange)
        view.sigResized.connect(self._on_xrange)

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

    def _reduce_later(self, ready, gen: int, fn, args: tuple) -> None:
        """``ready.emit(gen, fn(*args))`` on the helper thread, unless a newer redraw came before it started:
        a stale job's result is never drawn, and it would keep its preview's arrays alive while it waits (at
        10^7 events, ≈ 80 MB each)."""
        def job() -> None:
            if gen == self._generation:
                ready.emit(gen, fn(*args))
        self._pool.submit(job)


# ------------------------------------------------------------------------------------------ budgets
#: the top of a budget row's view, in units of its scale: room above the largest bar for its tick label
ROW_TOP = 1.4


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


class BudgetPlot(_Rows):
    """ε_t as bars, one row per landmark scheme, each on its own scale (stated on its axis and in its note);
    landmark events as marks under the zero line at any zoom; a dashed line at the total ε when in scale."""

    # (generation, bar_data result) from the helper thread; delivered queued on the GUI thread
    _barsReady = Signal(int, object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._generation = 0
        self._pool = _helper_pool("budget-bars")
        self._barsReady.connect(self._apply)
        self.setObjectName("budgetPlot")
        self._tick_font = QFont()  # kept alive here: the axes hold it only by reference
        self._tick_font.setPointSize(7)
        self.time_labels = False  # the preview rows below carry them
        self.ROW_MIN = 35  # two lines of note
        self._times: np.ndarray | None = None
        self._dummies = np.zeros(0, dtype=np.int64)
        self._landmarks = np.zeros(0, dtype=np.int64)
        self._epsilon = 1.0
        self._tops: dict[str, float] = {}
        self._split: dict[str, np.ndarray] = {}  # the shown rows' budgets
        self._set_header()
        self._layout(list(LANDMARK_SCHEMES))

    def _new_row(self, scheme: str) -> dict:
        color = SCHEME_COLORS[scheme]
        axis = TimeAxis(orientation="bottom")
        axis.setLabel("")
        axis.set_times(self._times)
        plot = pg.PlotItem(axisItems={"bottom": axis}, enableMenu=False)  # no menus (_make_row)
        row = self._make_row(scheme, plot, named=False)  # a thin row: the name goes in the note
        plot.showGrid(x=False, y=True, alpha=0.15)
        # the row's scale on its axis even in a thin row (the top label may reach into the row above)
        plot.getAxis("left").setStyle(hideOverlappingLabels=False, textFillLimits=[(0, 1.5)],
                                      tickFont=self._tick_font)
        regular = CurveItem(pen=pg.mkPen(color), fillLevel=0.0, brush=pg.mkBrush(rgba(color, 150)))
        landmark = CurveItem(pen=pg.mkPen(darker(LANDMARK_COLOR)), fillLevel=0.0,
                             brush=pg.mkBrush(rgba(LANDMARK_COLOR, 210)))
        dummy = CurveItem(pen=pg.mkPen(darker(DUMMY_COLOR)), fillLevel=0.0, brush=pg.mkBrush(rgba(DUMMY_COLOR, 200)))
        # marks as vertical segments (one item, cheap with a mark in every pixel column)
        lm_marks = CurveItem(pen=pg.mkPen(LANDMARK_COLOR, width=2), connect="pairs")
        dm_marks = CurveItem(pen=pg.mkPen(DUMMY_COLOR, width=2), connect="pairs")
        eps_line = pg.InfiniteLine(angle=0, movable=False,
                                   pen=pg.mkPen(EPSILON_LINE_COLOR, width=1, style=Qt.PenStyle.DashLine))
        for item in (regular, landmark, dummy, lm_marks, dm_marks):
            plot.addItem(item)
        plot.addItem(eps_line, ignoreBounds=True)
        row.update({"axis": axis, "regular": regular, "landmark": landmark, "dummy": dummy,
                    "lm_marks": lm_marks, "dm_marks": dm_marks, "eps": eps_line})
        plot.setYRange(-0.35, ROW_TOP, padding=0)  # in units of the row's scale (_scale_row)
        row["note"].setToolTip("This row's bars are drawn on their own scale so that small budgets stay visible")
        return row

    def _set_header(self) -> None:
        # (each key in <nobr>: a narrow window wraps the header between keys, not inside one)
        dm = (f" · <nobr><span style='color:{css(DUMMY_COLOR)}'>■ dummy landmarks (dummies violet)</span></nobr>"
              if self._dummies.size else "")
        self.header.setText(
            "<b>Budget ε<sub>t</sub> per event</b>, a scale per row · "
            f"<nobr><span style='color:{css(LANDMARK_COLOR)}'>■ │ landmarks</span></nobr>{dm} · "
            "<nobr>dashed = total ε</nobr>")

    def set_series(self, series: Series) -> None:
        self._times = series.times
        for r in self.rows.values():
            r["axis"].set_times(series.times)
            for key in ("regular", "landmark", "dummy", "lm_marks", "dm_marks"):
                set_data(r[key], [], [])
        self._split = {}
        self._landmarks = np.zeros(0, dtype=np.int64)
        self._dummies = np.zeros(0, dtype=np.int64)
        self._set_header()

    def set_dummies(self, rows: np.ndarray) -> None:
        """Dummy landmarks (issue 6): remembered for the next :meth:`set_budgets` (which the preview that
        carries them triggers); not redrawn here, so one preview draws the bars once."""
        self._dummies = np.asarray(rows, dtype=np.int64)
        self._set_header()

    def set_budgets(self, budgets: dict[str, np.ndarray | None], landmarks: np.ndarray, epsilon: float,
                    visible: set[str], tops: dict[str, float] | None = None) -> None:
        """Draw ``budgets[scheme]`` for the visible schemes; ``tops``: their largest budgets, when known
        (``Release.max_budget``, computed on the preview worker). A scheme whose budgets are None (a lean
        session let go of them: :meth:`let_go`) keeps its row as drawn until they come."""
        self._landmarks = np.asarray(landmarks, dtype=np.int64)
        self._epsilon = float(epsilon)
        shown = [s for s in LANDMARK_SCHEMES if s in visible and s in budgets
                 and (budgets[s] is not None or s in self.shown())]
        self._layout(shown)
        # The split into regular / landmark / dummy bars is made in redraw() for the rows in view only, the
        # landmark and dummy masks too (bar_data): series-sized masks cost ≈ 14 ms per preview at 10^7 events.
        self._split = {scheme: np.asarray(b, dtype=np.float64) for scheme in shown
                       if (b := budgets[scheme]) is not None}
        for scheme, b in self._split.items():
            top = tops[scheme] if tops is not None and scheme in tops else float(b.max()) if b.size else 0.0
            self._scale_row(scheme, top if top > 0 else self._epsilon)
        self.redraw()

    def let_go(self, preview: dict) -> None:
        """Drop the budgets that ``preview`` no longer has (a lean session's landmark edit let go of them)
        without redrawing: those rows stay as drawn until their new preview."""
        self._split = {k: b for k, b in self._split.items()
                       if (p := preview.get(k)) is not None and p.release.budgets_kept}

    def _scale_row(self, scheme: str, top: float) -> None:
        """Put a row on the scale 0 – ``top``. The view's y range stays fixed (0 – 1 is the row's bar space):
        the bars are scaled by their items' transform, so a new scale repaints the bars only. Re-ranging the
        view re-ticked the axis and its grid and laid the row out again: two paints of the whole budget plot,
        ≈ 15 ms of a 10^5 click, since most clicks change Uniform's, Skip's or Adaptive's largest budget."""
        r = self.rows[scheme]
        eps = self._epsilon
        if self._tops.get(scheme) == top and r.get("scaled_eps") == eps:
            return
        self._tops[scheme] = top
        r["scaled_eps"] = eps
        scale = QTransform.fromScale(1.0, 1.0 / top)
        for key in ("regular", "landmark", "dummy", "lm_marks", "dm_marks"):
            r[key].setTransform(scale)
        r["eps"].setPos(eps / top)
        r["eps"].setVisible(eps <= ROW_TOP * top)
        label = f"{top:.2g}"
        if r.get("tick") != label:  # an axis re-renders (ticks and grid) on every setTicks
            r["tick"] = label
            r["plot"].getAxis("left").setTicks([[(0.0, "0"), (1.0, label)]])
        name = f"<b style='color:{css(SCHEME_COLORS[scheme])}'>{SCHEME_LABELS[scheme]}</b>"
        r["note"].setText(f"{name} 0 – {top:.3g}<br>({_fmt_scale(top, eps)})")

    def scale(self, scheme: str) -> float:
        """The budget drawn at the top of the row's bar space (its largest budget, or ε when all are 0)."""
        return self._tops[scheme]

    def redraw(self) -> None:
        if not self._split:
            return
        n = next(iter(self._split.values())).size
        if n == 0:
            return
        a, b, width = self._view_rows(n)
        if a > b:
            return
        starts = view_bins(a, b, width)
        self._generation += 1
        dm = self._dummies
        fits = dm.size and dm[-1] < n  # (the dummies of another series until the next preview brings its own)
        args = (dict(self._split), self._landmarks, dm if fits else None, dict(self._tops), a, b, starts)
        if b - a + 1 <= ASYNC_ROWS:
            self._apply(self._generation, bar_data(*args))
            return
        # Zoomed out over millions of events, the split into regular / landmark / dummy bars is O(rows in
        # view) (≈ 0.2 s per row at 10^7): a helper thread computes it (numpy leaves the GIL) and the newest
        # result is drawn when it arrives, so the window never waits for it.
        self._reduce_later(self._barsReady, self._generation, bar_data, args)

    def _apply(self, generation: int, data: dict) -> None:
        if generation != self._generation:
            return  # a newer view or preview was asked for meanwhile
        self._applied_generation = generation
        for scheme, items in data.items():
            if scheme not in self.rows:
                continue
            r = self.rows[scheme]
            for key, xy in items.items():
                set_data(r[key], *xy)


#: above this many rows in view the budget bars and preview rows are reduced on a helper thread (at 10^6 in
#: view the budget rows alone held the GUI thread ≈ 55 ms per preview; at this size ≈ 14 ms)
ASYNC_ROWS = 250_000


def bar_data(split: dict, landmarks: np.ndarray, dummies: np.ndarray | None, tops: dict, a: int, b: int,
             starts: np.ndarray | None) -> dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """What each budget row draws for rows ``a..b`` (``split``: each row's budgets; ``starts``: one bin per
    pixel column, or None): the regular / landmark / dummy bar outlines and the landmark / dummy marks under
    the zero line (no dummy bars nor marks when ``dummies`` is None)."""
    local = None if starts is None else starts - a
    empty = (np.zeros(0), np.zeros(0))
    is_lm = view_mask(landmarks, a, b)
    is_dm = None if dummies is None else view_mask(dummies, a, b)
    out: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    edges = None if local is None else bin_edges(local, b - a)
    for scheme, bud in split.items():
        top = tops[scheme]
        seg = bud[a:b + 1]
        reg, lmk, dmy = split_bars(seg, is_lm, is_dm) if local is None else bin_tops(seg, is_lm, is_dm, local)
        row = {"regular": _shifted(step_runs(reg, edges), a), "landmark": _shifted(step_runs(lmk, edges), a),
               "dummy": empty, "dm_marks": empty}
        del reg, lmk
        if dmy is not None:
            assert dummies is not None
            row["dummy"] = _shifted(step_runs(dmy, edges), a)
            x = mark_positions(dummies, a, b, starts)
            row["dm_marks"] = segments(x, np.full(x.size, -0.17 * top), np.full(x.size, -0.17 * top), 0.16 * top)
        x = mark_positions(landmarks, a, b, starts)
        row["lm_marks"] = segments(x, np.full(x.size, -0.17 * top), np.full(x.size, -0.17 * top), 0.16 * top)
        out[scheme] = row
    return out


#: rows split at a time by :func:`bin_tops` (its temporaries are a few MB, not the rows in view)
SPLIT_ROWS = 1 << 20


def bin_tops(seg: np.ndarray, is_lm: np.ndarray, is_dm: np.ndarray | None, local: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Per bin (``local``: the bins' starts in ``seg``) the highest of each kind of bar of
    ``split_bars(seg, is_lm, is_dm)``, split a group of whole bins at a time: the same maxima without its
    three arrays the size of the view (≈ 230 MB with 10^7 events in view)."""
    k = int(local[1] - local[0]) if local.size > 1 else seg.size
    group = max(1, SPLIT_ROWS // max(k, 1))
    parts = []
    for i in range(0, local.size, group):
        s = int(local[i])
        e = int(local[i + group]) if i + group < local.size else seg.size
        bars = split_bars(seg[s:e], is_lm[s:e], None if is_dm is None else is_dm[s:e])
        parts.append([None if x is None else np.maximum.reduceat(x, local[i:i + group] - s) for x in bars])
    reg, lmk, dmy = (None if parts[0][j] is None else np.concatenate([p[j] for p in parts]) for j in range(3))
    assert reg is not None and lmk is not None
    return reg, lmk, dmy


def view_mask(rows: np.ndarray, a: int, b: int) -> np.ndarray:
    """Whether each row of ``a..b`` is among the sorted ``rows``."""
    mask = np.zeros(b - a + 1, dtype=bool)
    i0, i1 = np.searchsorted(rows, [a, b + 1])
    mask[rows[i0:i1] - a] = True
    return mask


# ------------------------------------------------------------------------------------------ preview
def preview_rows(values: dict, approx: dict, lines: dict, y_original: np.ndarray, yrange: tuple[float, float],
                 a: int, b: int, width: float, starts: np.ndarray | None) -> dict:
    """What each preview row draws for rows ``a..b`` (``starts``: one bin per pixel column, or None): per
    scheme, each item's ``(xy, options)``, its denoised line (or None), the off-chart counts and mark x; under
    the key None, the number of events in view. Pure (numpy only): it may run on a helper thread."""
    orig = original_xy(y_original, yrange, a, b, starts)
    out: dict = {None: b - a + 1}
    for scheme, released in values.items():
        row = row_xy(released[a:b + 1], approx[scheme][a:b + 1], yrange, a, b, width, starts)
        row["original"] = ((orig[0], orig[1]), {"connect": "finite"})
        row["original_band"] = ((orig[2], orig[3]) if len(orig) > 2 else ([], []), {})
        row["denoised"] = line_xy(lines[scheme], a, b, starts) if scheme in lines else None
        out[scheme] = row
    return out


def original_xy(y: np.ndarray, yrange: tuple[float, float], a: int, b: int,
                starts: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """The original as drawn: every event, or per column its median line and its 10–90 % band."""
    if starts is None:
        return np.arange(a, b + 1, dtype=np.float64), y[a:b + 1]
    x, q = column_quantiles(y[a:b + 1], a, b, starts)
    lo, hi = yrange
    band = segments(x, np.clip(q[0], lo, hi), np.clip(q[2], lo, hi), 0.0)
    return x, q[1], *band


def line_xy(line: np.ndarray, a: int, b: int, starts: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """A denoised line as drawn: every event, or per column its extremes (a peak line)."""
    if starts is None:
        return np.arange(a, b + 1, dtype=np.float64), line[a:b + 1]
    return peak_line(*envelope(line[a:b + 1], a, b, starts))


def row_xy(v: np.ndarray, approx: np.ndarray, yrange: tuple[float, float], a: int, b: int, width: float,
           starts: np.ndarray | None) -> dict:
    """One row's released values in view ``v`` (rows ``a..b``) as drawn: fresh dots and republished rings
    (zoomed out: a band per column and one ring per column), the ▲/▼ marks and their counts."""
    lo, hi = yrange
    none = (([], []), {})
    with np.errstate(invalid="ignore"):
        above = v > hi
        below = v < lo
    row: dict = {"offchart": (int(np.count_nonzero(above)), int(np.count_nonzero(below)))}
    if starts is None:
        inside = ~(above | below) & np.isfinite(v)
        x = np.arange(a, b + 1, dtype=np.float64)
        fresh, rep = inside & ~approx, inside & approx
        row.update(dots=((x[fresh], v[fresh]), {}), rings=((x[rep], v[rep]), {}), dense=none)
    else:
        # The middle 80 % of the released values per column, clipped to the chart (off-chart values are
        # counted and marked below); columns whose band lies wholly off the chart draw nothing.
        xc, q = column_quantiles(v, a, b, starts, (10.0, 90.0))
        on = (q[1] >= lo) & (q[0] <= hi)
        dense = segments(xc[on], np.clip(q[0][on], lo, hi), np.clip(q[1][on], lo, hi), 0.012 * (hi - lo))
        # Republished events: one ring per column, at its last republished value on the chart (Skip's flat
        # runs read as a dotted line at the repeated value).
        last = last_true_per_bin(approx, a, starts)
        last = last[(v[last] >= lo) & (v[last] <= hi)]
        row.update(dots=none, rings=(((last + a).astype(np.float64), v[last]), {}), dense=(dense, {}))
    # ▲/▼: one mark per ~4 px holding an off-chart value (finer marks would merge into a bar anyway)
    mark_bins = column_bins(a, b, width / 4.0)
    xa, xb = mask_positions(above, a, mark_bins), mask_positions(below, a, mark_bins)
    row["offchart_x"] = (xa, xb)
    span = hi - lo
    half_w = 3.0 * (b - a + 1) / max(width, 1.0)  # about 3 px
    row["above"] = (triangles(xa, hi - 0.06 * span, 0.055 * span, half_w), {"fillLevel": hi - 0.06 * span})
    row["below"] = (triangles(xb, lo + 0.06 * span, -0.055 * span, half_w), {"fillLevel": lo + 0.06 * span})
    return row


class PreviewPlot(_Rows):
    """One row per shown scheme: the original in grey and the scheme's noisy release on a y range fitted
    to the original (off-chart values marked and counted); republished events as rings."""

    ROW_MIN = 48  # three lines of note (_note); with four, the last row ran below a 1280×800 screen's edge

    _rowsReady = Signal(int, object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("previewPlot")
        self._generation = 0
        self._pool = _helper_pool("preview-rows")
        self._rowsReady.connect(self._apply)
        self.series: Series | None = None
        self._y_original = np.zeros(0)
        self._yrange = (0.0, 1.0)
        self._bounds: tuple[float, float] | None = None
        self._preview: dict = {}
        self._values: dict[str, np.ndarray] = {}
        self._sources: dict[str, np.ndarray] = {}  # the preview's arrays ``_values`` were made from
        self._approx: dict[str, np.ndarray] = {}
        self._denoised: dict[str, np.ndarray] = {}
        self._set_header("")
        self._layout([])

    def _new_row(self, scheme: str) -> dict:
        color = SCHEME_COLORS[scheme]
        axis = TimeAxis(orientation="bottom")
        axis.setLabel("")
        left = CategoryAxis(orientation="left")  # category names for categorical series
        plot = pg.PlotItem(axisItems={"bottom": axis, "left": left}, enableMenu=False)
        row = self._make_row(scheme, plot)
        plot.showGrid(x=True, y=True, alpha=0.12)
        original = CurveItem(pen=pg.mkPen(ORIGINAL_PREVIEW_COLOR, width=1))
        original_band = CurveItem(pen=pg.mkPen(rgba(ORIGINAL_PREVIEW_COLOR, 60), width=1), connect="pairs")
        dots = DotsItem(size=4, pen=None, brush=pg.mkBrush(color))
        rings = DotsItem(size=5, pen=pg.mkPen(darker(color, 0.75), width=1), brush=None)
        dense = CurveItem(pen=pg.mkPen(rgba(color, 150), width=1), connect="pairs")
        denoised = CurveItem(pen=pg.mkPen(darker(color, 0.85), width=2))
        above = CurveItem(pen=None, brush=pg.mkBrush(OFFCHART_COLOR))
        below = CurveItem(pen=None, brush=pg.mkBrush(OFFCHART_COLOR))
        for z, item in enumerate((original_band, dense, original, dots, rings, denoised, above, below)):
            plot.addItem(item)
            item.setZValue(z)
        row["note"].setToolTip("error: the mean absolute error of this preview (one seed), of the raw release "
                               "and, with Denoise on, of the denoised line; beyond the chart: "
                               "released values outside the y range, marked by triangles at the edge")
        row.update({"axis": axis, "left": left, "original": original, "original_band": original_band,
                    "dots": dots, "rings": rings, "dense": dense, "denoised": denoised, "above": above,
                    "below": below, "offchart": (0, 0), "offchart_x": (np.zeros(0), np.zeros(0))})
        if self.series is not None:  # shown for the first time with a series open: its times and scale
            self._series_into(row, self.series)
            plot.setYRange(*self._yrange, padding=0)
        return row

    def _set_header(self, what: str) -> None:
        self.header.setText(
            f"<b>Noisy preview</b>{what}, same random luck for all · "
            f"<nobr><span style='color:{css(ORIGINAL_PREVIEW_COLOR)}'>━ original</span></nobr> · "
            "<nobr>● released</nobr> · <nobr>○ republished</nobr> · <nobr>▲▼ beyond the chart</nobr> · "
            "<nobr>bands: middle 80 %</nobr>")

    # ------------------------------------------------------------------------------------ data
    def set_series(self, series: Series) -> None:
        self.series = series
        self._preview = {}
        self._values, self._sources = {}, {}
        self._approx = {}
        self._denoised = {}
        self._y_original = display_values(series, series.values)
        self._set_header(f" of {y_label(series)}")  # ("of distance from start (m)": no parentheses in parentheses)
        for r in self.rows.values():
            self._series_into(r, series)
            for key in ("original", "original_band", "dots", "rings", "dense", "denoised", "above", "below"):
                set_data(r[key], [], [])
            r["note"].setText("")
            r["offchart"] = (0, 0)
        self._bounds = None
        self._fit_y()  # (the rows stay as laid out, empty, until this series' first preview fills them)

    @staticmethod
    def _series_into(row: dict, series: Series) -> None:
        """A row's axes for ``series``: its timestamps, and category names for a categorical one."""
        row["axis"].set_times(series.times)
        row["left"].set_labels(series.categories if series.kind == "categorical" else None)

    def _fit_y(self) -> None:
        s = self.series
        if s is None:
            return
        if s.kind == "categorical":
            k = len(s.categories or ()) or int(np.nanmax(self._y_original, initial=0)) + 1
            self._yrange = (-0.6, k - 0.4)
        else:
            bounds = self._bounds if s.kind == "numeric" else None
            self._yrange = robust_range(self._y_original, bounds) if bounds is not None else series_range(s)
        lo, hi = self._yrange
        for r in self.rows.values():
            r["plot"].setYRange(lo, hi, padding=0)

    def set_preview(self, preview: dict, visible: set[str], bounds: tuple[float, float] | None = None) -> None:
        """Draw ``preview[scheme]`` (``.values``, ``.approximated``) for the visible schemes; ``bounds`` are
        the public bounds (the y range) when set."""
        if self.series is None:
            return
        if bounds != self._bounds:
            self._bounds = tuple(bounds) if bounds is not None else None  # type: ignore[assignment]
            self._fit_y()
        self._preview = preview
        # A row whose values a lean session let go of (:meth:`let_go`) stays as drawn until its new preview; a
        # scheme shown again after they were let go while it was hidden gets its row with its new preview.
        shown = [s for s in ALL_SCHEMES if s in visible and (p := preview.get(s)) is not None
                 and (p.release.values_kept or s in self.shown())]
        kept = [s for s in shown if preview[s].release.values_kept]
        self._sources = {s: preview[s].values for s in kept}
        self._values = {s: display_values(self.series, v) for s, v in self._sources.items()}
        self._approx = {s: np.asarray(preview[s].approximated, dtype=bool) for s in kept}
        self._layout(shown)
        self.redraw()

    def set_denoised(self, denoised: dict[str, np.ndarray | None], preview: dict | None = None, *,
                     redraw: bool = True) -> None:
        """A denoised release per scheme (post-processing of the released values): drawn as the row's line,
        with the raw noisy points faint behind it. ``None`` or a missing scheme removes its line. ``preview``
        (the same releases, now with ``mae_denoised``) feeds the row notes. Only the lines, the fading and the
        notes are redrawn (the points stay); ``redraw=False`` leaves it to the next :meth:`set_preview`."""
        self._denoised = {s: v if v.dtype == np.float32 else np.asarray(v, dtype=np.float64)
                          for s, v in denoised.items() if v is not None}
        if preview is not None:
            self._preview = preview
        if redraw:
            self.redraw_denoised()

    def let_go(self, preview: dict) -> None:
        """Drop the raw and denoised values that ``preview`` no longer has (a lean session's landmark edit let
        go of them) without redrawing: those rows stay as drawn (their items hold the reduced points only)
        until their new preview; a redraw meanwhile (a zoom) leaves them as they are."""
        self._denoised = {k: v for k, v in self._denoised.items()
                          if (p := preview.get(k)) is not None and p.denoised is not None}
        for k in list(self._values):
            p = preview.get(k)
            if p is None or not p.release.values_kept:
                del self._values[k], self._approx[k], self._sources[k]
            elif p.values is not self._sources[k]:  # the same release kept another way (at float32)
                self._values[k], self._sources[k] = display_values(self.series, p.values), p.values
        self._preview = preview

    # ------------------------------------------------------------------------------------ drawing
    def _in_view(self) -> tuple[int, int, float, np.ndarray | None] | None:
        """The rows in view, the width in pixels and the column bins; None when there is nothing to draw."""
        s = self.series
        if s is None or not self._values or s.n == 0:
            return None
        a, b, width = self._view_rows(s.n)
        return None if a > b else (a, b, width, view_bins(a, b, width))

    def redraw(self) -> None:
        """Every shown row at the current view. Over millions of events in view the reductions run on a
        helper thread (the budget rows' pattern): the newest result is drawn when it arrives."""
        view = self._in_view()
        if view is None:
            return
        a, b, width, starts = view
        lines = {k: v for k, v in self._denoised.items() if k in self._values and v.size == self._values[k].size}
        args = (dict(self._values), dict(self._approx), lines, self._y_original, self._yrange, a, b, width, starts)
        self._generation += 1
        if b - a + 1 <= ASYNC_ROWS:
            self._apply(self._generation, preview_rows(*args))
            return
        self._reduce_later(self._rowsReady, self._generation, preview_rows, args)

    def redraw_denoised(self) -> None:
        """The denoised lines, the points' fading and the notes, over points drawn by :meth:`redraw` (large
        views: a whole redraw on the helper thread; the points it hands again are unchanged, so not redrawn)."""
        view = self._in_view()
        if view is None:
            return
        a, b, _width, starts = view
        if b - a + 1 > ASYNC_ROWS:
            self.redraw()
            return
        self._generation += 1  # a large view's redraw still on the helper thread is out of date
        self._applied_generation = self._generation
        for scheme in self._values:
            line = self._denoised.get(scheme)
            ok = line is not None and line.size == self._values[scheme].size
            self._apply_line(scheme, line_xy(line, a, b, starts) if ok else None)
            self._note(scheme, *self.rows[scheme]["offchart"], b - a + 1)

    def _apply(self, generation: int, data: dict) -> None:
        if generation != self._generation:
            return  # a newer view or preview was asked for meanwhile
        self._applied_generation = generation
        in_view = data.pop(None)
        for scheme, row in data.items():
            if scheme not in self.rows:
                continue
            r = self.rows[scheme]
            self._apply_line(scheme, row.pop("denoised"))  # before the points: their fading is set with it
            r["offchart"], r["offchart_x"] = row.pop("offchart"), row.pop("offchart_x")
            for key, (xy, kw) in row.items():
                set_data(r[key], *xy, **kw)
            self._note(scheme, *r["offchart"], in_view)

    def _apply_line(self, scheme: str, xy: tuple | None) -> None:
        r = self.rows[scheme]
        # the points fade under a line: the item's opacity (setBrush would restyle every point, ≈ 2.5 ms a row
        # for 2,000 points, twice a click when the lines come later)
        r["dots"].setOpacity((70 if xy is not None else 230) / 255)
        if xy is None:
            set_data(r["denoised"], [], [])
        else:
            set_data(r["denoised"], *xy, connect="finite")

    def _note(self, scheme: str, n_above: int, n_below: int, in_view: int) -> None:
        r = self.rows[scheme]
        p = self._preview.get(scheme)
        lines = []
        mae = getattr(p, "mae", None)
        if mae is not None and math.isfinite(mae) and self.series is not None:
            den = getattr(p, "mae_denoised", None) if scheme in self._denoised else None
            shown = den is not None and math.isfinite(den)
            if self.series.kind == "categorical":
                # ("wrong category 95 % → 53 %" was wider than the notes column; labels: the start screen's word)
                lines.append(f"wrong label {100 * mae:.0f}%" + (f" → {100 * den:.0f}%" if shown else ""))
            else:
                unit = unit_label(self.series)
                # raw → denoised (the tooltip says so): short enough for the note column at 1280 px
                raw = readable_number(mae, 3)  # (not "4.42e+03 m": a GPS error)
                lines.append(f"error {raw} → {readable_number(den, 3)} {unit}" if shown else f"mean error {raw} {unit}")
        off = n_above + n_below
        if off:
            # three lines in all (ROW_MIN): "196 of 744 beyond" / "the chart: ▲29 ▼167" ("412k" in a million)
            arrows = " ".join(t for t in (f"▲{compact_count(n_above)}" if n_above else "",
                                          f"▼{compact_count(n_below)}" if n_below else "") if t)
            lines.append(f"<span style='color:#a00000'><b>{compact_count(off)}</b> of {compact_count(in_view)} "
                         f"beyond</span><br>the chart: {arrows}")
        else:
            lines.append("all values on the chart")
        r["note"].setText("<br>".join(lines))

    def offchart(self, scheme: str) -> tuple[int, int]:
        """(above, below): released values in view beyond the chart's top and bottom."""
        return self.rows[scheme]["offchart"]

    def offchart_marks(self, scheme: str) -> tuple[np.ndarray, np.ndarray]:
        """x of the ▲ and ▼ marks (one per event, or per pixel column when zoomed out)."""
        return self.rows[scheme]["offchart_x"]

    def yrange(self) -> tuple[float, float]:
        return self._yrange

    def note_text(self, scheme: str) -> str:
        return self.rows[scheme]["note"].text
