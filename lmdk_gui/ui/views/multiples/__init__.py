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

The parts, each a module of this package (the window and the tests import them from ``views.multiples``):

* ``binning`` — numpy only: bins of about one pixel column and what each bin draws;
* ``grid`` — the [name | plot | note] grid both widgets are (:class:`_Rows`), its notes, its helper thread,
  the ``ASYNC_ROWS`` size beyond which a view is reduced there, and :class:`AfterPaint`;
* ``curve`` — the light line and dot items the rows draw with;
* ``budget`` — :class:`BudgetPlot` and :func:`bar_data`;
* ``preview`` — :class:`PreviewPlot` and :func:`preview_rows`.
"""

from __future__ import annotations

from ..axes import AXIS_W, LABEL_W, NOTE_W, CategoryAxis, TimeAxis, cache_axes
from ..envelopes import step_runs
from ..items import set_data
from ..text import TextLines
from ..values import display_values, robust_range, series_range, y_label
from .binning import (
    EVENTS_PER_PX,
    PX_PER_BIN,
    QUANTILE_SAMPLE,
    _shifted,
    bar_steps,
    bin_edges,
    column_bins,
    column_quantiles,
    envelope,
    last_true_per_bin,
    mark_positions,
    mask_positions,
    peak_line,
    segments,
    split_bars,
    triangles,
    view_bins,
)
from .budget import ROW_TOP, SPLIT_ROWS, BudgetPlot, _fmt_scale, bar_data, bin_tops, view_mask
from .grid import (
    ASYNC_ROWS,
    AfterPaint,
    NoteItem,
    _HeaderLabel,
    _helper_pool,
    _Label,
    _NameLabel,
    _Rows,
)
from .preview import PreviewPlot, line_xy, original_xy, preview_rows, row_xy

__all__ = [
    "AfterPaint",
    "ASYNC_ROWS",
    "AXIS_W",
    "bar_data",
    "bar_steps",
    "bin_edges",
    "bin_tops",
    "BudgetPlot",
    "cache_axes",
    "CategoryAxis",
    "column_bins",
    "column_quantiles",
    "display_values",
    "envelope",
    "EVENTS_PER_PX",
    "_fmt_scale",
    "_HeaderLabel",
    "_helper_pool",
    "_Label",
    "LABEL_W",
    "last_true_per_bin",
    "line_xy",
    "mark_positions",
    "mask_positions",
    "_NameLabel",
    "NOTE_W",
    "NoteItem",
    "original_xy",
    "peak_line",
    "preview_rows",
    "PreviewPlot",
    "PX_PER_BIN",
    "QUANTILE_SAMPLE",
    "robust_range",
    "ROW_TOP",
    "row_xy",
    "_Rows",
    "segments",
    "series_range",
    "set_data",
    "_shifted",
    "split_bars",
    "SPLIT_ROWS",
    "step_runs",
    "TextLines",
    "TimeAxis",
    "triangles",
    "view_bins",
    "view_mask",
    "y_label",
]
