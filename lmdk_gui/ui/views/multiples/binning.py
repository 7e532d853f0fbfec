"""The rows' reductions to pixel columns (numpy only, no Qt): bins of about one pixel column, and per bin
its highest bar, its marks, its extremes or quantiles; the segment and triangle outlines the rows draw.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..envelopes import step_runs

#: pixel columns per reduced bin (1 = one envelope per screen column)
PX_PER_BIN = 1.0


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
