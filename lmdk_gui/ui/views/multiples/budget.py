"""The budget rows (:class:`BudgetPlot`): ε_t as bars, one row per landmark scheme, and :func:`bar_data`, what
each row draws for the rows in view (pure numpy: it may run on the rows' helper thread).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QTransform

from ....core.data.series import Series
from ....core.kernel.settings import LANDMARK_SCHEMES, SCHEME_LABELS
from ..axes import TimeAxis
from ..envelopes import step_runs
from ..items import set_data
from ..theme import DUMMY_COLOR, EPSILON_LINE_COLOR, LANDMARK_COLOR, SCHEME_COLORS, css, darker, rgba
from .binning import _shifted, bin_edges, mark_positions, segments, split_bars, view_bins
from .curve import CurveItem
from .grid import _helper_pool, _Rows


def _fmt_scale(top: float, epsilon: float) -> str:
    if top >= epsilon * 0.999:
        return "= ε"
    ratio = epsilon / top
    return f"= ε/{ratio:.0f}" if ratio >= 10 else f"= {top / epsilon:.2g}·ε"


#: the top of a budget row's view, in units of its scale: room above the largest bar for its tick label
ROW_TOP = 1.4


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
                       if (p := preview.get(k)) is not None and p.whole}

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
        if not self._on_helper(a, b):
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
