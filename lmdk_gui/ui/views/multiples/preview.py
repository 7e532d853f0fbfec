"""The preview rows (:class:`PreviewPlot`): each shown scheme's noisy release over the original, and
:func:`preview_rows`, what each row draws for the rows in view (pure numpy: it may run on the rows' helper
thread).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal

from ....core.analysis.metrics import compact_count, readable_number, unit_label
from ....core.data.series import Series
from ....core.kernel.settings import ALL_SCHEMES
from ..axes import CategoryAxis, TimeAxis
from ..items import set_data
from ..theme import OFFCHART_COLOR, ORIGINAL_PREVIEW_COLOR, SCHEME_COLORS, css, darker, rgba
from ..values import display_values, robust_range, series_range, y_label
from .binning import (
    column_bins,
    column_quantiles,
    envelope,
    last_true_per_bin,
    mask_positions,
    peak_line,
    segments,
    triangles,
    view_bins,
)
from .curve import CurveItem, DotsItem
from .grid import _helper_pool, _Rows


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
                 and (p.whole or s in self.shown())]
        kept = [s for s in shown if preview[s].whole]
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
            if p is None or not p.whole:
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
        if not self._on_helper(a, b):
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
        if self._on_helper(a, b):
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
