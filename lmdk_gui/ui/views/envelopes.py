"""What the long lines and bands hand pyqtgraph: step outlines, and the rows in view reduced to pixel columns.

Pure numpy (no Qt): the series plot's line (:func:`pixel_envelope`, from the min/max pyramid of
:func:`block_extremes`) and its landmark bands (:func:`band_view`), the budget rows' steps (:func:`step_runs`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np


def step_x(n: int) -> np.ndarray:
    """x of a step outline with one flat top per event: (-.5, .5, .5, 1.5, 1.5, …, n-.5)."""
    edges = np.arange(n + 1, dtype=np.float64) - 0.5
    return np.repeat(edges, 2)[1:-1]


def step_y(values: np.ndarray) -> np.ndarray:
    return np.repeat(np.asarray(values, dtype=np.float64), 2)


def step_runs(values: np.ndarray, edges: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The same step outline as ``(step_x(n), step_y(values))`` with one flat top per *run* of equal values:
    Uniform's budgets are one run, Skip's and a landmark band one run per landmark cluster. Far fewer points
    to downsample and bound on every update (x stays non-decreasing, as clip-to-view requires).
    ``edges`` (n + 1 values) gives each value's left edge and the last right edge (default: i ± 0.5)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return np.zeros(0), np.zeros(0)
    change = np.flatnonzero(v[1:] != v[:-1]) + 1
    starts = np.concatenate(([0], change))
    ends = np.concatenate((change, [v.size]))
    x = np.empty(2 * starts.size)
    if edges is None:
        x[0::2] = starts - 0.5
        x[1::2] = ends - 0.5
    else:
        x[0::2] = edges[starts]
        x[1::2] = edges[ends]
    return x, np.repeat(v[starts], 2)


def band_steps(rows: np.ndarray, n: int, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """``step_runs`` of n values that are ``hi`` at the sorted distinct ``rows`` and ``lo`` elsewhere, from the
    rows alone (O(|rows|), not O(n): at 10^6 events the click's band costs no series-sized array)."""
    r = np.asarray(rows, dtype=np.int64)
    if n == 0:
        return np.zeros(0), np.zeros(0)
    if r.size == 0:
        return np.array([-0.5, n - 0.5]), np.array([lo, lo], dtype=np.float64)
    brk = np.flatnonzero(np.diff(r) != 1) + 1
    s = r[np.concatenate(([0], brk))]  # first row of each run of consecutive rows
    e = r[np.concatenate((brk - 1, [r.size - 1]))] + 1  # one past its last row
    starts = np.empty(2 * s.size, dtype=np.int64)
    starts[0::2], starts[1::2] = s, e
    vals = np.empty(2 * s.size)
    vals[0::2], vals[1::2] = hi, lo
    if s[0] > 0:
        starts, vals = np.concatenate(([0], starts)), np.concatenate(([lo], vals))
    if e[-1] == n:
        starts, vals = starts[:-1], vals[:-1]
    x = np.empty(2 * starts.size)
    x[0::2] = starts - 0.5
    x[1::2] = np.append(starts[1:], n) - 0.5
    return x, np.repeat(vals, 2)


#: the series line is drawn event by event up to this many events per pixel column; beyond, as an envelope
EVENTS_PER_COLUMN = 2.0


#: rows per block of the min/max pyramid a long series line keeps (two arrays of n / 256 values)
BLOCK = 256


def block_extremes(y: np.ndarray, block: int = BLOCK) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of each ``block`` rows of ``y`` (NaN-ignoring), each followed by one NaN (so a reduceat
    index may point one past the last block)."""
    idx = np.arange(0, y.size, block)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = np.fmin.reduceat(y, idx) if y.size else np.zeros(0)
        hi = np.fmax.reduceat(y, idx) if y.size else np.zeros(0)
    return np.append(lo, np.nan), np.append(hi, np.nan)


def column_extremes(y: np.ndarray, starts: np.ndarray, end: int,
                    blocks: tuple[np.ndarray, np.ndarray] | None = None,
                    block: int = BLOCK) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of ``y`` over each column ``starts[i] .. starts[i+1]-1`` (the last ends at ``end``),
    NaN-ignoring. With ``blocks`` (:func:`block_extremes`) and columns of at least two blocks, the whole
    blocks inside a column come from the pyramid and only its partial head and tail (< ``block`` rows each)
    from ``y``: O(columns · block) instead of O(rows)."""
    ends = np.append(starts[1:], end + 1)
    if blocks is None or starts.size == 0 or int(np.min(ends - starts)) < 2 * block:
        seg = y[starts[0]:end + 1] if starts.size else y[:0]
        with np.errstate(invalid="ignore"):
            return np.fmin.reduceat(seg, starts - starts[0]), np.fmax.reduceat(seg, starts - starts[0])
    fb = -(-starts // block)  # first whole block of each column
    lb = ends // block  # one past its last whole block (fb < lb: each column spans ≥ 2 blocks)
    idx = np.empty(2 * starts.size, dtype=np.int64)
    idx[0::2], idx[1::2] = fb, lb
    blo, bhi = blocks
    with np.errstate(invalid="ignore"):
        lo = np.fmin.reduceat(blo, idx)[0::2]
        hi = np.fmax.reduceat(bhi, idx)[0::2]
    for first, stop in ((starts, fb * block), (lb * block, ends)):  # partial head and tail of each column
        part_lo, part_hi = _segment_extremes(y, first, stop)
        lo, hi = np.fmin(lo, part_lo), np.fmax(hi, part_hi)
    return lo, hi


def _segment_extremes(y: np.ndarray, first: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """NaN-ignoring min and max of each ``y[first[i]:stop[i]]`` (NaN when empty): one gather of those rows,
    reduced in place (a column's partial blocks padded to a full block each and reduced as a 2-D array took
    ≈ 4 ms of a full draw at 10^7 events)."""
    lens = np.maximum(stop - first, 0)
    lo, hi = np.full(first.size, np.nan), np.full(first.size, np.nan)
    total = int(lens.sum())
    if total == 0:
        return lo, hi
    offs = np.cumsum(lens) - lens  # where each segment starts among the gathered rows
    g = y[np.repeat(first - offs, lens) + np.arange(total)]
    some = lens > 0  # (the non-empty segments lie end to end in g)
    with np.errstate(invalid="ignore"):
        lo[some] = np.fmin.reduceat(g, offs[some])
        hi[some] = np.fmax.reduceat(g, offs[some])
    return lo, hi


def pixel_envelope(y: np.ndarray, a: int, b: int, x0: float, px_w: float,
                   blocks: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The line of rows ``a..b`` of ``y`` as a full draw would show it with one pixel column ``px_w`` rows
    wide starting at view x ``x0``: the rows themselves while at most :data:`EVENTS_PER_COLUMN` share a
    column, else per column its lowest value at the column's first row and its highest at its last
    (:func:`column_extremes`; NaN where a column holds no finite value, a gap with ``connect='finite'``).
    Column borders are the pixel borders, so each column's drawn extremes are the data's extremes in that
    column exactly."""
    if b < a:
        return np.zeros(0), np.zeros(0)
    if px_w <= EVENTS_PER_COLUMN or b - a + 1 <= 2 * EVENTS_PER_COLUMN:
        return np.arange(a, b + 1, dtype=np.float64), np.asarray(y[a:b + 1], dtype=np.float64)
    starts = pixel_columns(a, b, x0, px_w)
    lo, hi = column_extremes(y, starts, b, blocks)
    xs = np.empty(2 * starts.size)
    xs[0::2] = starts
    xs[1::2] = np.append(starts[1:] - 1, b)
    ys = np.empty(2 * starts.size)
    ys[0::2], ys[1::2] = lo, hi
    return xs, ys


def pixel_columns(a: int, b: int, x0: float, px_w: float) -> np.ndarray:
    """First row of each pixel column [x0 + j·px_w, x0 + (j+1)·px_w) that holds rows of ``a..b``."""
    j0 = max(0, math.floor((a - x0) / px_w))
    j1 = math.floor((b - x0) / px_w)
    starts = np.ceil(x0 + np.arange(j0, j1 + 1) * px_w).astype(np.int64)
    starts = np.unique(np.clip(starts, a, b + 1))
    starts = starts[starts <= b]
    if starts.size == 0 or starts[0] != a:
        starts = np.concatenate(([a], starts))
    return starts


def band_view(rows: np.ndarray, a: int, b: int, x0: float, px_w: float, lo: float,
              hi: float) -> tuple[np.ndarray, np.ndarray]:
    """The band of sorted ``rows`` (``hi`` there, ``lo`` elsewhere) over rows ``a..b`` as drawn: event by
    event while few events share a pixel column (:func:`band_steps` of the rows in view), else ``hi`` over
    each pixel column holding a row (what peak downsampling of the full band shows), from ``searchsorted``
    alone: O(columns · log |rows|), so a click at 10^7 events with 2·10^6 landmarks costs no O(|L|) pass."""
    if b < a:
        return np.zeros(0), np.zeros(0)
    if px_w <= EVENTS_PER_COLUMN:
        i0, i1 = np.searchsorted(rows, [a, b + 1])
        x, y = band_steps(np.asarray(rows[i0:i1]) - a, b - a + 1, lo, hi)
        return x + a, y
    starts = pixel_columns(a, b, x0, px_w)
    has = np.diff(np.searchsorted(rows, np.append(starts, b + 1))) > 0
    return step_runs(np.where(has, hi, lo), np.append(starts, b + 1).astype(np.float64) - 0.5)
