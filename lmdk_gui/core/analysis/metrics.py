"""Error of a release against the original series (DESIGN §2, issue 2).

* numeric      mean absolute error in the data's units; relative error = MAE / mean |x|
* location     mean great-circle distance in metres (haversine)
* categorical  mismatch rate (share of events whose published category differs)

Missing published values (nothing was ever released and there is no public fallback) count as the worst
case: they are excluded from the mean but reported through ``missing_share``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..data.series import Series
from ..engine.pipeline import KINDS, abs_error_sums, block_sums, compute_release, denoised_values
from ..engine.release import Release, category_space
from ..kernel.noise import UnitNoise
from ..kernel.settings import ALL_SCHEMES, PrivacySettings
from .denoise import Denoised

UNITS = {"numeric": "", "location": "m", "categorical": "share"}


def error_per_event(series: Series, release: Release, settings: PrivacySettings | None = None,
                    rows: slice = slice(None)) -> np.ndarray:
    """Per-event error (NaN where the release has no value): the kind's error metric, at ``rows`` only
    when given (every metric is per event: the errors of a span are those of the whole series there)."""
    codes = None
    if series.kind == "categorical" and release.categories is not None and series.categories is not None and \
            tuple(release.categories) != tuple(series.categories):
        codes, _, _ = category_space(series, settings or PrivacySettings(categories=release.categories))
        codes = codes[rows]
    return KINDS[series.kind].error(series.values[rows], release.values[rows], codes)


def mae(series: Series, release: Release, settings: PrivacySettings | None = None) -> float:
    return mae_and_sums(series, release, settings)[0]


#: Errors are summed in blocks of this many events, each block in one fixed order, then the blocks' sums
#: (numpy's pairwise sum would do for a whole pass, but not for a patched one): a release patched in a few
#: rows (Skip's click) has only those blocks summed again, and its MAE is the same bits as the whole sum's.
ERROR_BLOCK = 4096


def n_blocks(n: int) -> int:
    """How many error blocks n events make (the last one may be short)."""
    return -(-n // ERROR_BLOCK)


def blocks_of(rows: tuple[int, int]) -> tuple[int, int]:
    """The blocks (k0, k1) holding rows a..b-1 (none for an empty span)."""
    a, b = rows
    return (a // ERROR_BLOCK, (b - 1) // ERROR_BLOCK + 1) if b > a else (0, 0)


def error_sums(series: Series, release: Release, settings: PrivacySettings | None = None,
               blocks: tuple[int, int] | None = None) -> np.ndarray:
    """The per-event errors' sum over each block k0..k1-1 (default: every block). Numeric errors are summed
    as they are computed (:func:`.pipeline.abs_error_sums`: no per-event array, one pass over the values and
    the series instead of three); other kinds sum :func:`error_per_event` of the blocks' rows."""
    n = series.n
    k0, k1 = blocks if blocks is not None else (0, n_blocks(n))
    out = np.empty(max(k1 - k0, 0))
    if out.size == 0:
        return out
    rows = slice(k0 * ERROR_BLOCK, min(k1 * ERROR_BLOCK, n))
    if series.kind == "numeric" and release.values.ndim == 1 and release.values.shape == series.values.shape:
        abs_error_sums(np.asarray(release.values, dtype=np.float64), np.asarray(series.values, dtype=np.float64),
                       k0, ERROR_BLOCK, out)
    else:
        block_sums(error_per_event(series, release, settings, rows), ERROR_BLOCK, out)
    return out


def mae_and_sums(series: Series, release: Release, settings: PrivacySettings | None = None,
                 patch: tuple[np.ndarray, tuple[int, int]] | None = None) -> tuple[float, np.ndarray]:
    """The release's MAE and its :func:`error_sums`. ``patch`` = (sums, (a, b)): the error sums of an earlier
    release of the same series and settings whose values this release keeps outside rows a..b-1 (the
    preview's memo and :func:`.pipeline.run_preview_patched`, which knows the rows it rewrote): only the
    blocks holding those rows are summed again (a Skip click) — the same sums, so the same bits."""
    if patch is not None and patch[0].shape[0] == n_blocks(series.n):
        sums, rows = patch
        k0, k1 = blocks_of(rows)
        if k1 > k0:
            sums = sums.copy()
            sums[k0:k1] = error_sums(series, release, settings, (k0, k1))
    else:
        sums = error_sums(series, release, settings)
    return _mean_of(sums, series.n, lambda: error_per_event(series, release, settings)), sums


def mean_error(err: np.ndarray) -> float:
    """``nanmean`` of per-event errors (NaN when there is none), summed as :func:`error_sums` sums them, so
    the same bits as :func:`mae` of the release they came from."""
    sums = np.empty(n_blocks(err.size))
    block_sums(np.ascontiguousarray(err, dtype=np.float64), ERROR_BLOCK, sums)
    return _mean_of(sums, err.size, lambda: err)


def _mean_of(sums: np.ndarray, n: int, errors) -> float:
    """The mean of n errors from their block sums. The total is NaN exactly when some error is NaN (errors
    are ≥ 0, so no inf − inf): only then are the errors (``errors()``) looked at, for ``nanmean``."""
    if n == 0:
        return float("nan")
    total = float(np.sum(sums))
    if not np.isnan(total):
        return total / n
    err = errors()
    if np.isnan(err).all():
        return float("nan")
    return float(np.nanmean(err))


def denoised_mae(series: Series, release: Release, settings: PrivacySettings, *,
                 consume: bool = False) -> tuple[Denoised | None, float]:
    """The release's post-processing (:func:`.pipeline.denoised_values`: released values, budgets, flags and
    public settings only) and its MAE against the true series; (None, NaN) when the kind has no denoiser.
    ``consume``: the caller lets go of the release (its values may hold the denoised ones afterwards)."""
    den = denoised_values(release, settings, consume=consume)
    if den is None:
        return None, float("nan")
    return den, denoised_error(series, release, settings, den)


def denoised_error(series: Series, release: Release, settings: PrivacySettings, den: Denoised) -> float:
    """The MAE of ``den``, the release's post-processing, against the true series."""
    return mae(series, dataclasses.replace(release, values=den.values), settings)


def relative_error(series: Series, release: Release) -> float | None:
    """MAE divided by the mean absolute value (numeric only; None where it does not make sense)."""
    if series.kind != "numeric":
        return None
    denom = float(np.mean(np.abs(series.values))) if series.n else 0.0
    if denom == 0.0:
        return None
    return mae(series, release) / denom


def readable_number(x: float | None, digits: int = 4) -> str:
    """An error or a spread for people, the one way every view writes it: ``digits`` significant digits,
    never an exponent from 10^``digits`` to 10^9 ("4420", "430,647" rather than "4.42e+03", "4.31e+05": GPS
    errors in metres), "—" for none."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    # the ranges are those of the rounded value: 99.7 at two digits is 100, which "g" writes "1e+02"
    r = float(f"{x:.{digits}g}")
    if 1e4 <= abs(r) < 1e9:
        return f"{x:,.0f}" if digits >= 4 else f"{r:,.0f}"
    if 10 ** digits <= abs(r) < 1e4:  # e.g. 690 rather than 6.9e+02
        return f"{r:.0f}"
    return f"{x:.{digits}g}"


def compact_count(k: int) -> str:
    """A count for a narrow note: "12,345" below 100,000, else three digits and k / M / G ("412k", "4.12M")."""
    if abs(k) < 100_000:
        return f"{k:,}"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        v = float(f"{k / div:.3g}")  # (999,999 is "1M", not "1e+03k")
        if 1 <= abs(v) < 1000:
            return f"{v:g}{suffix}"
    return f"{k / 1e9:.3g}G"


def share(k: int, n: int) -> str:
    """k of n as a percentage for people: "9.9%", never "0.0%" for one landmark of 2,144 ("<0.1%") nor
    "100.0%" for all but one (">99.9%")."""
    pct = 100.0 * k / n if n else 0.0
    if 0 < k and pct < 0.05:
        return "<0.1%"
    if k < n and pct >= 99.95:
        return ">99.9%"
    return f"{pct:.1f}%"


def unit_label(series: Series) -> str:
    """The errors' unit: a numeric series' own, else what its value column's name says (the sidecar's
    :func:`~.writers.value_units`: "kwh" → kWh, "Verbrauch (kWh)" → kWh), else that name."""
    if series.kind == "numeric":
        unit = series._cache.get("unit_label")  # (asked some ten times a click; a series is immutable)
        if unit is None:
            from ..publish.writers import value_units  # (writers needs nothing of this module)

            unit = series._cache["unit_label"] = series.unit or value_units(series) or \
                (series.value_columns[0] if series.value_columns else "units")
        return unit
    return {"location": "m", "categorical": "mismatch rate"}[series.kind]


@dataclass(frozen=True)
class RunStats:
    mean: float
    std: float
    runs: int
    # The same over the denoised releases of the same runs (NaN when denoising was not asked for).
    mean_denoised: float = float("nan")
    std_denoised: float = float("nan")
    # The spread of the per-run MAEs: their 10th and 90th percentiles (:data:`SPREAD_PERCENTILES`), raw and
    # denoised. One release is one draw: the mean alone hides how far a single release may land from it.
    p10: float = float("nan")
    p90: float = float("nan")
    p10_denoised: float = float("nan")
    p90_denoised: float = float("nan")


#: The percentiles of the per-run errors shown as an expected error's spread ("0.21 (0.15–0.30)").
SPREAD_PERCENTILES = (10.0, 90.0)


def run_stats(raw: Iterable[float], denoised: Iterable[float] = ()) -> RunStats:
    """Mean, population std and 10th/90th percentiles (linear interpolation) of per-run MAEs (NaN runs left
    out; ``runs`` counts every run)."""
    nan = float("nan")

    def ms(vals) -> tuple[float, float, int, float, float]:
        a = np.asarray(list(vals), dtype=np.float64)
        ok = a[np.isfinite(a)]
        if not ok.size:
            return nan, nan, int(a.size), nan, nan
        lo, hi = np.percentile(ok, SPREAD_PERCENTILES)
        return float(ok.mean()), float(ok.std()), int(a.size), float(lo), float(hi)
    m, s, r, lo, hi = ms(raw)
    md, sd, _, lod, hid = ms(denoised)
    return RunStats(m, s, r, md, sd, lo, hi, lod, hid)


def spread_text(mean: float, lo: float, hi: float, digits: int = 3, band_digits: int | None = None) -> str:
    """An expected error with its spread over the runs (10th–90th percentile), the one way every view writes
    it: "0.206 (0.15–0.3)"; the mean alone when the spread is unknown, "—" when the mean is. ``band_digits``
    (default ``digits``): the percentiles' significant digits."""
    if mean is None or not math.isfinite(mean):
        return "—"
    m = readable_number(mean, digits)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return m
    b = digits if band_digits is None else band_digits
    return f"{m} ({readable_number(lo, b)}–{readable_number(hi, b)})"


# ------------------------------------------------------------------------------------ the constant yardstick
def constant_release(series: Series) -> np.ndarray:
    """The one value a release could publish at every event without looking at the noise: the series'
    median (numeric), its geometric median (location, :func:`geometric_median`), its mode (categorical, as a
    code). Guidance computed on the true data, never published."""
    v = series.values
    if series.kind == "numeric":
        x = np.asarray(v, dtype=np.float64)
        x = x[np.isfinite(x)]
        return np.array(float(np.median(x)) if x.size else float("nan"))
    if series.kind == "location":
        return geometric_median(np.asarray(v, dtype=np.float64))
    codes = np.asarray(v, dtype=np.int64)
    codes = codes[codes >= 0]
    return np.array(int(np.argmax(np.bincount(codes))) if codes.size else -1)


#: :func:`geometric_median` iterates on at most this many evenly spaced points (any constant's error is a
#: valid yardstick; the error itself is then taken over every event)
MEDIAN_SAMPLE = 100_000


def geometric_median(points: np.ndarray, iterations: int = 50) -> np.ndarray:
    """The point with the least mean distance to ``points`` (lat, lon in degrees): Weiszfeld's iteration on
    a local equirectangular projection (metres are what the error counts; at a track's scale the projection's
    distortion is far below the noise), started at the coordinate-wise median. Whichever of the two has the
    lower mean haversine distance is returned, so it is never worse than the coordinate-wise median. A long
    track is thinned to :data:`MEDIAN_SAMPLE` evenly spaced points first."""
    if points.shape[0] > MEDIAN_SAMPLE:
        points = points[:: -(-points.shape[0] // MEDIAN_SAMPLE)]
    ok = points[np.isfinite(points).all(axis=1)] if points.size else points.reshape(0, 2)
    if not ok.size:
        return np.array([np.nan, np.nan])
    start = np.median(ok, axis=0)
    scale = np.array([1.0, math.cos(math.radians(float(start[0])))])
    xy = ok * scale
    y = start * scale
    for _ in range(iterations):
        d = np.hypot(*(xy - y).T)
        w = 1.0 / np.maximum(d, 1e-12)
        nxt = (xy * w[:, None]).sum(axis=0) / w.sum()
        if np.hypot(*(nxt - y)) < 1e-10:
            y = nxt
            break
        y = nxt
    cand = y / scale
    return min((start, cand), key=lambda c: float(np.mean(_distances(ok, c))))


def _distances(points: np.ndarray, at: np.ndarray) -> np.ndarray:
    return KINDS["location"].error(points, np.broadcast_to(at, points.shape))


def constant_error(series: Series) -> float:
    """The yardstick of every expected error (issue 44): the error of publishing :func:`constant_release` at
    every event, by the kind's own metric (numeric: MAE of the median; location: mean distance in metres of
    the geometric median; categorical: mismatch rate of the mode). A release whose expected error is not
    clearly below it (:func:`.advice.informative`) tells no more than that one number. NaN for an empty
    series. Computed once per series (a series is immutable)."""
    hit = series._cache.get("constant_error")
    if hit is not None:
        return hit
    if series.n == 0:
        return float("nan")
    c = constant_release(series)
    truth = series.values
    if series.kind == "location":
        shaped = np.broadcast_to(c, truth.shape)
    else:
        shaped = np.full(truth.shape, c, dtype=truth.dtype if series.kind == "categorical" else np.float64)
    err = KINDS[series.kind].error(truth, np.ascontiguousarray(shaped))
    ok = err[np.isfinite(err)]
    value = float(ok.mean()) if ok.size else float("nan")
    series._cache["constant_error"] = value
    return value


def known_constant_error(series: Series) -> float | None:
    """:func:`constant_error` when it has been computed for ``series`` already, else None (a view asks this
    rather than compute it on its thread: at 10^7 events it takes about half a second)."""
    return None if series.n and "constant_error" not in series._cache else constant_error(series)


def adaptive_last(schemes: tuple[str, ...]) -> tuple[str, ...]:
    """``schemes`` with Adaptive last: only its release reads the sampling uniforms, and once the last release
    of a run is made the run's unit noise can go before that release is scored and denoised (a scheme's error
    does not depend on the order: each reads its own streams)."""
    return tuple(sorted(schemes, key=lambda s: s == "adaptive"))


def mae_over_runs(series: Series, landmarks, settings: PrivacySettings, *, runs: int = 20, seed: int = 0,
                  schemes: Iterable[str] = ALL_SCHEMES, should_cancel=None,
                  denoise: bool = False) -> dict[str, RunStats]:
    """MAE of each scheme averaged over ``runs`` independent draws of the unit noise (seeds seed+1 …);
    with ``denoise``, also the MAE of each run's denoised release (``RunStats.mean_denoised``).

    ``should_cancel()`` is polled before every run and after every release, MAE and denoising (on a large
    series each is a long step, which a click's preview would otherwise wait for); when it
    returns True the function stops and returns the complete runs it has (``runs`` then tells how many were
    done).
    """
    schemes = tuple(schemes)
    acc: dict[str, list[float]] = {s: [] for s in schemes}
    acc_d: dict[str, list[float]] = {s: [] for s in schemes}

    def stop() -> bool:
        return should_cancel is not None and bool(should_cancel())

    for r in range(runs):
        noise = UnitNoise(series.n, seed + 1 + r)
        one: dict[str, float] = {}
        one_d: dict[str, float] = {}
        order = adaptive_last(schemes)
        for s in order:
            # polled around every step, not only per scheme: on a large series a release, its MAE and its
            # denoising are each a long step, and a click's preview must not wait for them
            if stop():
                break
            rel = compute_release(series, landmarks, settings, s, noise)
            if s == order[-1]:
                noise.forget_all()  # the run's last release is made (a series-sized array per stream)
            if stop():
                break
            one[s] = mae(series, rel, settings)
            if denoise:
                if stop():
                    break
                one_d[s] = denoised_mae(series, rel, settings, consume=True)[1]  # (its raw error is in)
            del rel  # at most one release of this run alive (values, budgets and flags: series-sized)
        if len(one) < len(schemes) or (denoise and len(one_d) < len(schemes)):
            break  # cancelled inside the run: only complete runs count
        del noise
        for s in schemes:
            acc[s].append(one[s])
            if denoise:
                acc_d[s].append(one_d[s])
    with np.errstate(invalid="ignore"):
        return {s: run_stats(acc[s], acc_d[s]) for s in schemes}
