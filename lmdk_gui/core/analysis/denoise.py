"""Denoised releases (issue 12 §2): free post-processing of a release by what any reader can compute.

:func:`denoise` sees only the released values, the per-event budgets ``ε_t`` and ``approximated`` flags, and
the public settings (bounds, Δ, radius r, number of categories). It cannot receive the true data, so its
output changes no budget and no guarantee — and it is exactly what an adversary reading the file can do.
Events with ``ε_t = 0`` (approximated) only republish, so they carry no observation; the smoother still
estimates them from their neighbours.

* numeric — state-space local level ``x_t = x_{t−1} + N(0, q)``, observed through the Laplace mechanism
  (variance 2(Δ/ε_t)²). With public bounds the released value is first clipped to them; the clipped value's
  exact conditional mean, slope and variance given the level (closed forms for a clipped Laplace) are used
  in an extended Kalman filter, so clipping removes the wild values without biasing the level towards the
  middle of the bounds; the level's predicted variance is capped at (hi − lo)²/4, the most a value inside
  the bounds can have. Rauch–Tung–Striebel smoother, result clipped again. A public lower bound alone (e.g.
  0: values cannot be negative) keeps the Laplace model and clips the smoothed result to it.
* location — the same on local east/north metres around the mean released point (planar Laplace radius
  ~ Gamma(2, r/ε_t), so each axis has variance 3(r/ε_t)²). Two models, local level and constant velocity
  (white-noise acceleration), each fitted by maximum likelihood; the higher likelihood wins.
* categorical — hidden Markov chain over the k categories; emissions are exactly the k-ary randomized
  response of :mod:`.mechanisms` (keep ``p_t = 1/(1 + (k−1)e^{−ε_t})``, else uniform over the others; an
  approximated event has ``p = 1/k``, i.e. no information). Transitions by Baum–Welch with the emissions
  fixed and a Dirichlet prior of one pseudo-transition per row: a full k×k matrix for k ≤ 8, else a
  "stay or jump" chain (stay in i with probability s_i, else land on j with probability π_j; 2k − 1
  parameters, O(k) per event instead of O(k²)). The output is each event's posterior
  argmax (forward–backward), which minimises the expected number of mismatched events — the error the
  app reports — where Viterbi would maximise the probability of the whole path instead.

Process variance q: maximum likelihood of the Kalman innovations (prediction-error decomposition), over
ln q by a 9-point grid, then golden-section search around the best grid point. Long series fit q (and the
HMM's transitions) on four evenly spaced blocks of 4,096 events, then run one full pass. One time step is
one event: the timestamps are not used.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.lazyjit import numba  # the real numba is imported on a kernel's first call (cold start)
from ..kernel.mechanisms import EARTH_RADIUS_M

KINDS = ("numeric", "location", "categorical")
_LOG_2PI = math.log(2.0 * math.pi)
SEARCH_BLOCK = 4096  # events per block of the q search on long series
SEARCH_BLOCKS = 4
_GRID = 9
_TOL_LOG_Q = 0.1  # golden-section stops when the bracket on ln q is this narrow (≈ 10 % in q)
_LAG = 4  # see _level_filter
_SKIP_OBS = 2  # likelihood conditional on the first two observations (fair between the two location models)
EM_MAX_ITER = 400
EM_TOL = 1e-6  # stop when the log-likelihood gains less than this share of its size
_PRIOR_PER_ROW = 1.0  # Dirichlet pseudo-transitions per row of the transition matrix
FULL_MATRIX_MAX_K = 8  # above, the stay-or-jump chain: O(k) per event instead of O(k²)


@dataclass(frozen=True)
class Denoised:
    values: np.ndarray  # same shape and dtype kind as the release's values
    method: str  # e.g. "clip+rts-local-level", "rts-constant-velocity", "hmm-forward-backward"
    params: dict[str, Any] = field(default_factory=dict)  # public, JSON-able


def denoise(kind: str, released: np.ndarray, budgets: np.ndarray, approximated: np.ndarray, *,
            sensitivity: float | None = None, bounds: tuple[float, float] | None = None,
            radius_m: float | None = None, n_categories: int | None = None, consume: bool = False,
            lower_bound: float | None = None) -> Denoised:
    """The denoised release (see the module docstring). Deterministic: same inputs, same bits. Numeric:
    ``lower_bound`` is a public lower bound alone (without ``bounds``); the result is clipped to it. ``consume``:
    the caller lets go of ``released`` (an R-run average's run): a numeric release's own float64 array then
    holds the result, written over it (one array of n fewer at the caller's peak)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    budgets = np.asarray(budgets, dtype=np.float64)  # constant budgets (zero stride) are read, not copied
    approximated = np.ascontiguousarray(approximated, dtype=np.bool_)
    released = np.asarray(released)
    n = budgets.shape[0]
    want = (n, 2) if kind == "location" else (n,)
    if budgets.ndim != 1 or approximated.shape != (n,) or released.shape != want:
        raise ValueError(f"denoise: released values {released.shape}, budgets {budgets.shape} and flags "
                         f"{approximated.shape} do not describe the same {n} events")
    if kind == "numeric":
        if sensitivity is None or not sensitivity > 0:
            raise ValueError("denoise: numeric releases need the public sensitivity Δ > 0")
        if bounds is not None and not (math.isfinite(bounds[0]) and math.isfinite(bounds[1])
                                       and bounds[0] < bounds[1]):
            raise ValueError(f"denoise: bounds must be two finite numbers lo < hi, got {tuple(bounds)}")
        if lower_bound is not None and (bounds is not None or not math.isfinite(lower_bound)):
            raise ValueError(f"denoise: a lower bound alone must be a finite number without bounds, got "
                             f"{lower_bound} with bounds {bounds}")
        y = released.astype(np.float64, copy=False)
        out = y if consume and y is released and y.flags.c_contiguous and y.flags.writeable else None
        d = _numeric(y, budgets, approximated, float(sensitivity), bounds, out)
        if lower_bound is not None:
            # A one-sided bound has no width, so the filter keeps the Laplace model (the clipped-Laplace
            # moments and the variance cap need both ends); the public fact still clips the result.
            np.maximum(d.values, float(lower_bound), out=d.values)
            d = Denoised(d.values, "clip-lower+" + d.method if d.method != "none" else "none",
                         {**d.params, "lower_bound": float(lower_bound)})
        return d
    if kind == "location":
        if radius_m is None or not radius_m > 0:
            raise ValueError("denoise: location releases need the public radius r > 0 (metres)")
        return _location(released.astype(np.float64, copy=False), budgets, approximated, float(radius_m))
    codes = released.astype(np.int64)
    k = int(n_categories) if n_categories is not None else int(codes.max(initial=-1)) + 1
    if k < 1 or codes.max(initial=-1) >= k:
        raise ValueError(f"denoise: released codes must lie in [0, {k}) (n_categories = {k})")
    return _categorical(codes, budgets, approximated, k)


def _fresh(values: np.ndarray, budgets: np.ndarray, approximated: np.ndarray) -> np.ndarray:
    """Events that carry a new observation: a positive budget, not a republication, and a value."""
    ok = ~approximated & (budgets > 0) & np.isfinite(budgets)
    if values.dtype.kind == "f":
        ok &= np.isfinite(values) if values.ndim == 1 else np.isfinite(values).all(axis=1)
    else:
        ok &= values >= 0
    return ok


# ----------------------------------------------------------------------------------- ML search over q
def ml_search(loglik: Callable[[float], float], lo: float, hi: float) -> tuple[float, float, int]:
    """Maximise ``loglik(ln q)`` on [lo, hi]: a grid, then golden-section search around the best point.

    Returns (ln q, log-likelihood, evaluations). The grid guards against a second local maximum, the
    golden section refines within the best point's two neighbouring cells.
    """
    grid = np.linspace(lo, hi, _GRID)
    vals = [loglik(float(g)) for g in grid]
    best = int(np.argmax(vals))
    a, b = float(grid[max(best - 1, 0)]), float(grid[min(best + 1, _GRID - 1)])
    evals = _GRID
    g = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = loglik(c), loglik(d)
    evals += 2
    while b - a > _TOL_LOG_Q:
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = loglik(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = loglik(d)
        evals += 1
    x, fx = (c, fc) if fc >= fd else (d, fd)
    if vals[best] > fx:  # the grid point itself (e.g. at the edge of the range)
        x, fx = float(grid[best]), float(vals[best])
    return x, fx, evals


def search_blocks(n: int) -> list[tuple[int, int]]:
    """The event ranges the q search runs on: everything for short series, else a few spread blocks."""
    if n <= 2 * SEARCH_BLOCK * SEARCH_BLOCKS:
        return [(0, n)]
    step = (n - SEARCH_BLOCK) / (SEARCH_BLOCKS - 1)
    return [(int(i * step), int(i * step) + SEARCH_BLOCK) for i in range(SEARCH_BLOCKS)]


# --------------------------------------------------------------------------------------------- numeric
def variance_of_copy(a: np.ndarray) -> float:
    """``np.var(a)`` of a float64 array the caller no longer needs, computed in it: numpy's own steps (the
    sum over the count, the squared deviations, their sum over the count), so the same bits, without the
    deviations' second series-sized copy."""
    mean = np.add.reduce(a, keepdims=True)
    np.true_divide(mean, a.size, out=mean)
    np.subtract(a, mean, out=a)
    np.square(a, out=a)
    return float(np.add.reduce(a) / a.size)


@numba.njit(cache=True, nogil=True, inline="always")
def _g(u, e):  # pragma: no cover - compiled
    """g(u) = 1 − (1 + u)e^{−u} given e = e^{−u}; a series where the closed form would cancel."""
    if u < 1e-3:
        u2 = u * u
        return u2 * (0.5 - u / 3.0 + u2 / 8.0 - u2 * u / 30.0)
    return 1.0 - (1.0 + u) * e


@numba.njit(cache=True, nogil=True, inline="always")
def _clipped_laplace(x, b, inv_b, lo, hi, w):  # pragma: no cover - compiled
    """For z = clip(x + Lap(b), lo, hi) with lo ≤ x ≤ hi: (slope dE[z]/dx, E[z] − x, Var z).

    With ua = (x − lo)/b, uc = (hi − x)/b: E[z] − x = (b/2)(e^{−ua} − e^{−uc}), slope 1 − ½e^{−ua} − ½e^{−uc},
    E[(z − x)²] = b²(g(ua) + g(uc)). The variance is kept within (0, (hi − lo)²/4], its exact range.
    ``w`` = e^{−(hi − lo)/b}, so the far side's exponential is w divided by the near side's: one
    ``math.exp`` per event (the filter's main cost) instead of two.
    """
    ua = (x - lo) * inv_b
    uc = (hi - x) * inv_b
    near = min(ua, uc)
    en = 0.0 if near > 700.0 else math.exp(-near)
    ef = w / en if en > 0.0 else 0.0
    ea, ec = (en, ef) if ua <= uc else (ef, en)
    shift = 0.5 * b * (ea - ec)
    r = b * b * (_g(ua, ea) + _g(uc, ec)) - shift * shift
    width2 = 0.25 * (hi - lo) * (hi - lo)
    return 1.0 - 0.5 * (ea + ec), shift, min(max(r, 1e-12 * width2), width2)


@numba.njit(cache=True, nogil=True)
def _level_filter(y, budgets, inv_sens, fresh, q, p_max, m0, p0, lo, hi, skip, start, stop, out_m, out_gain,
                  want_ll):  # pragma: no cover - compiled
    """Local-level (extended) Kalman filter over events start..stop-1; returns the innovations log-lik.

    The predicted variance P_t + q is capped at ``p_max`` (see :func:`_numeric`); stores the filtered means
    and the smoother gains P_t/min(P_t + q, p_max). The Laplace scale is b = Δ/ε_t. With finite bounds the
    observation is the clipped release, whose exact mean, slope and variance (:func:`_clipped_laplace`) the
    filter linearises near the prediction. Without bounds they are x, 1 and 2b². One division per step on
    the dependency chain: the filter is latency-bound.
    """
    bounded = lo > -np.inf
    m = m0
    p = p0
    ll = 0.0
    seen = 0
    # The moments are linearised at the mean of _LAG updates ago (a first-order expansion around it, as
    # the EKF does around the prediction): the level moves far less in a few events than the noise, and
    # it takes the exponential off the step-to-step dependency chain.
    hist = np.full(_LAG, m0)
    last_ib = -1.0
    w = 0.0
    for t in range(start, stop):
        if t > start:
            p = min(p + q, p_max)
        if fresh[t]:
            ib = budgets[t] * inv_sens
            bt = 1.0 / ib  # off the m/p dependency chain
            if bounded:
                x = min(max(hist[seen % _LAG], lo), hi)
                hist[seen % _LAG] = m
                if ib != last_ib:  # budgets repeat (one value per scheme but Adaptive's few)
                    w = math.exp(-(hi - lo) * ib)
                    last_ib = ib
                h, shift, r = _clipped_laplace(x, bt, ib, lo, hi, w)
                pred = x + shift + h * (m - x)
            else:
                h = 1.0
                r = 2.0 * bt * bt
                pred = m
            nu = min(max(y[t], lo), hi) - pred
            ph = p * h
            s = ph * h + r
            inv_s = 1.0 / s
            m += ph * inv_s * nu
            p = p * r * inv_s
            if want_ll and seen >= skip:
                ll -= 0.5 * (_LOG_2PI + math.log(s) + nu * nu * inv_s)
            seen += 1
        out_m[t - start] = m
        out_gain[t - start] = p / min(p + q, p_max)
    return ll


@numba.njit(cache=True, nogil=True)
def _level_smooth(m, gain, lo, hi, out):  # pragma: no cover - compiled
    """RTS backward pass of the local level, x̂_t = m_t + gain_t·(x̂_{t+1} − m_t), then clipped to
    [lo, hi] (infinite without bounds)."""
    n = m.shape[0]
    if n == 0:
        return
    s = m[n - 1]
    out[n - 1] = min(max(s, lo), hi)
    for t in range(n - 2, -1, -1):
        s = m[t] + gain[t] * (s - m[t])
        out[t] = min(max(s, lo), hi)


def _numeric(y: np.ndarray, budgets: np.ndarray, approximated: np.ndarray, sens: float,
             bounds: tuple[float, float] | None, out: np.ndarray | None = None) -> Denoised:
    n = y.shape[0]
    fresh = _fresh(y, budgets, approximated)
    lo, hi = (float(bounds[0]), float(bounds[1])) if bounds is not None else (-np.inf, np.inf)
    if not fresh.any():
        out = np.clip(y, lo, hi) if bounds is not None else y.copy()
        return Denoised(out, "none", {"reason": "no event was released fresh"})
    inv_sens = 1.0 / sens
    if bounds is not None:
        # The level lies in the bounds (the mechanism clamps its input), so its uncertainty never exceeds
        # (hi − lo)²/4, the largest variance of a value confined to them: the predicted variance is capped
        # there. Without the cap a noise-swamped release (tiny ε_t) lets it grow until the clipped
        # observation's slope (≈ 0) makes the gain explode and the level jump from bound to bound.
        m0, p0 = 0.5 * (lo + hi), (hi - lo) ** 2 / 12.0
        scale2 = (hi - lo) ** 2
        p_max = 0.25 * scale2
    else:
        p_max = np.inf  # diffuse start at the first observation; its variance dwarfs any plausible level
        first = int(np.argmax(fresh))
        m0 = float(y[first])
        scale2 = variance_of_copy(y[fresh]) + 1e-300
        p0 = 1e6 * (scale2 + 2.0 * (sens / budgets[first]) ** 2)
    blocks = search_blocks(n)
    buf_m = np.empty(max(e - s for s, e in blocks))
    buf_g = np.empty_like(buf_m)

    def loglik(log_q: float) -> float:
        q = math.exp(log_q)
        return sum(_level_filter(y, budgets, inv_sens, fresh, q, p_max, m0, p0, lo, hi, _SKIP_OBS, s, e, buf_m,
                                 buf_g, True) for s, e in blocks)

    log_q, ll, evals = ml_search(loglik, math.log(scale2) - 25.0, math.log(scale2) + 1.0)
    q = math.exp(log_q)
    # ``out`` may be y itself: the filter reads each observation before it writes that event's mean
    fm = out if out is not None else np.empty(n)
    gain = np.empty(n)
    _level_filter(y, budgets, inv_sens, fresh, q, p_max, m0, p0, lo, hi, _SKIP_OBS, 0, n, fm, gain, False)
    out = fm  # the smoother reads m_t before it writes x̂_t
    _level_smooth(fm, gain, lo, hi, out)
    return Denoised(out, "clip+rts-local-level" if bounds is not None else "rts-local-level", {
        "model": "local-level",
        "observation": "clipped Laplace, exact moments (extended Kalman)" if bounds is not None else
        "Laplace variance 2(Δ/ε_t)²",
        "process_variance": q,
        "level_variance_cap": float(p_max) if bounds is not None else None,
        "q_search": "max likelihood over ln q: grid + golden section",
        "search_events": int(sum(e - s for s, e in blocks)),
        "likelihood_evaluations": evals,
        "log_likelihood": ll,
        "fresh_events": int(fresh.sum()),
    })


# -------------------------------------------------------------------------------------------- location
def _to_metres(latlon: np.ndarray, fresh: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Local east/north metres around the mean released point (equirectangular; fine for a city)."""
    lat0 = float(latlon[fresh, 0].mean())
    ref = float(latlon[fresh, 1][0])
    dlon = (latlon[:, 1] - ref + 180.0) % 360.0 - 180.0
    lon0 = ref + float(dlon[fresh].mean())
    c = max(math.cos(math.radians(lat0)), 1e-12)
    xy = np.empty_like(latlon)
    xy[:, 0] = np.radians((latlon[:, 1] - lon0 + 180.0) % 360.0 - 180.0) * EARTH_RADIUS_M * c
    xy[:, 1] = np.radians(latlon[:, 0] - lat0) * EARTH_RADIUS_M
    return xy, lat0, lon0


def _to_latlon(xy: np.ndarray, lat0: float, lon0: float) -> np.ndarray:
    c = max(math.cos(math.radians(lat0)), 1e-12)
    out = np.empty_like(xy)
    out[:, 0] = np.clip(lat0 + np.degrees(xy[:, 1] / EARTH_RADIUS_M), -90.0, 90.0)
    out[:, 1] = (lon0 + np.degrees(xy[:, 0] / (EARTH_RADIUS_M * c)) + 180.0) % 360.0 - 180.0
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def _planar_nll(s, nx, ny):  # pragma: no cover - compiled
    """−log of the density of the innovation (nx, ny) with variance ``s`` on each (independent) axis."""
    return _LOG_2PI + math.log(s) + 0.5 * (nx * nx + ny * ny) / s


@numba.njit(cache=True, nogil=True)
def _level2_filter(y, r, fresh, q, m0x, m0y, p0, skip, start, stop, out_m, out_p):  # pragma: no cover
    """Local level on both axes at once: equal noise variances r_t, so one shared variance recursion."""
    mx = m0x
    my = m0y
    p = p0
    ll = 0.0
    seen = 0
    for t in range(start, stop):
        if t > start:
            p += q
        if fresh[t]:
            s = p + r[t]
            k = p / s
            nx = y[t, 0] - mx
            ny = y[t, 1] - my
            mx += k * nx
            my += k * ny
            p = p * r[t] / s
            if seen >= skip:
                ll -= _planar_nll(s, nx, ny)
            seen += 1
        out_m[t - start, 0] = mx
        out_m[t - start, 1] = my
        out_p[t - start] = p
    return ll


@numba.njit(cache=True, nogil=True)
def _level2_smooth(m, p, q, out):  # pragma: no cover - compiled
    """RTS backward pass of :func:`_level2_filter` (``m`` has at least one row: the caller denoises only a
    release with a fresh event, as for :func:`_cv_smooth`)."""
    n = m.shape[0]
    out[n - 1, 0] = m[n - 1, 0]
    out[n - 1, 1] = m[n - 1, 1]
    for t in range(n - 2, -1, -1):
        c = p[t] / (p[t] + q)
        out[t, 0] = m[t, 0] + c * (out[t + 1, 0] - m[t, 0])
        out[t, 1] = m[t, 1] + c * (out[t + 1, 1] - m[t, 1])


@numba.njit(cache=True, nogil=True)
def _cv_filter(y, r, fresh, q, m0x, m0y, p0, v0, skip, start, stop, out_m, out_p):  # pragma: no cover
    """Constant velocity per axis, state (position, velocity), F = [[1, 1], [0, 1]], white-noise
    acceleration Q = q·[[1/3, 1/2], [1/2, 1]]. The covariance [[a, c], [c, d]] is shared by both axes.
    ``out_m`` rows: x, vx, y, vy; ``out_p`` rows: a, c, d (filtered)."""
    px = m0x
    vx = 0.0
    py = m0y
    vy = 0.0
    a = p0
    c = 0.0
    d = v0
    ll = 0.0
    seen = 0
    for t in range(start, stop):
        if t > start:
            a = a + 2.0 * c + d + q / 3.0
            c = c + d + 0.5 * q
            d = d + q
            px += vx
            py += vy
        if fresh[t]:
            s = a + r[t]
            k0 = a / s
            k1 = c / s
            nx = y[t, 0] - px
            ny = y[t, 1] - py
            px += k0 * nx
            vx += k1 * nx
            py += k0 * ny
            vy += k1 * ny
            d = d - c * c / s
            c = c * r[t] / s
            a = a * r[t] / s
            if seen >= skip:
                ll -= _planar_nll(s, nx, ny)
            seen += 1
        i = t - start
        out_m[i, 0] = px
        out_m[i, 1] = vx
        out_m[i, 2] = py
        out_m[i, 3] = vy
        out_p[i, 0] = a
        out_p[i, 1] = c
        out_p[i, 2] = d
    return ll


@numba.njit(cache=True, nogil=True)
def _cv_smooth(m, p, q, out):  # pragma: no cover - compiled
    """RTS backward pass: x̂_t = m_t + P_t F' (F P_t F' + Q)^{-1} (x̂_{t+1} − F m_t), positions only out."""
    n = m.shape[0]
    sx = m[n - 1, 0]
    svx = m[n - 1, 1]
    sy = m[n - 1, 2]
    svy = m[n - 1, 3]
    out[n - 1, 0] = sx
    out[n - 1, 1] = sy
    for t in range(n - 2, -1, -1):
        a = p[t, 0]
        c = p[t, 1]
        d = p[t, 2]
        # predicted covariance
        pa = a + 2.0 * c + d + q / 3.0
        pc = c + d + 0.5 * q
        pd = d + q
        det = pa * pd - pc * pc
        # P F' = [[a + c, c], [c + d, d]]
        g00 = ((a + c) * pd - c * pc) / det
        g01 = (c * pa - (a + c) * pc) / det
        g10 = ((c + d) * pd - d * pc) / det
        g11 = (d * pa - (c + d) * pc) / det
        ex = sx - (m[t, 0] + m[t, 1])
        evx = svx - m[t, 1]
        ey = sy - (m[t, 2] + m[t, 3])
        evy = svy - m[t, 3]
        sx = m[t, 0] + g00 * ex + g01 * evx
        svx = m[t, 1] + g10 * ex + g11 * evx
        sy = m[t, 2] + g00 * ey + g01 * evy
        svy = m[t, 3] + g10 * ey + g11 * evy
        out[t, 0] = sx
        out[t, 1] = sy


def _location(latlon: np.ndarray, budgets: np.ndarray, approximated: np.ndarray, radius: float) -> Denoised:
    n = latlon.shape[0]
    fresh = _fresh(latlon, budgets, approximated)
    if not fresh.any():
        return Denoised(latlon.copy(), "none", {"reason": "no event was released fresh"})
    xy, lat0, lon0 = _to_metres(latlon, fresh)
    with np.errstate(divide="ignore"):
        r = np.where(fresh, 3.0 * (radius / np.where(fresh, budgets, 1.0)) ** 2, 0.0)
    first = xy[fresh][0]
    scale2 = float(np.var(xy[fresh], axis=0).sum()) / 2.0 + 1.0
    p0 = 1e6 * (scale2 + float(r[fresh][0]))
    blocks = search_blocks(n)
    size = max(e - s for s, e in blocks)
    bm2, bp1 = np.empty((size, 2)), np.empty(size)
    bm4, bp3 = np.empty((size, 4)), np.empty((size, 3))

    def ll_level(log_q: float) -> float:
        q = math.exp(log_q)
        return sum(_level2_filter(xy, r, fresh, q, first[0], first[1], p0, _SKIP_OBS, s, e, bm2, bp1)
                   for s, e in blocks)

    def ll_cv(log_q: float) -> float:
        q = math.exp(log_q)
        return sum(_cv_filter(xy, r, fresh, q, first[0], first[1], p0, p0, _SKIP_OBS, s, e, bm4, bp3)
                   for s, e in blocks)

    top = math.log(scale2) + 1.0
    lq_l, ll_l, ev_l = ml_search(ll_level, top - 30.0, top)
    lq_c, ll_c, ev_c = ml_search(ll_cv, top - 30.0, top)
    out = np.empty((n, 2))
    if ll_c > ll_l:
        q = math.exp(lq_c)
        fm, fp = np.empty((n, 4)), np.empty((n, 3))
        _cv_filter(xy, r, fresh, q, first[0], first[1], p0, p0, _SKIP_OBS, 0, n, fm, fp)
        _cv_smooth(fm, fp, q, out)
        method, model = "rts-constant-velocity", "constant-velocity"
    else:
        q = math.exp(lq_l)
        fm2, fp1 = np.empty((n, 2)), np.empty(n)
        _level2_filter(xy, r, fresh, q, first[0], first[1], p0, _SKIP_OBS, 0, n, fm2, fp1)
        _level2_smooth(fm2, fp1, q, out)
        method, model = "rts-local-level", "local-level"
    return Denoised(_to_latlon(out, lat0, lon0), method, {
        "model": model,
        "observation": "planar Laplace, per-axis variance 3(r/ε_t)² on local east/north metres",
        "process_variance_m2": q,
        "log_likelihood": {"local-level": ll_l, "constant-velocity": ll_c},
        "process_variance_by_model_m2": {"local-level": math.exp(lq_l), "constant-velocity": math.exp(lq_c)},
        "q_search": "max likelihood over ln q: grid + golden section, per model",
        "search_events": int(sum(e - s for s, e in blocks)),
        "likelihood_evaluations": ev_l + ev_c,
        "origin_latlon": [lat0, lon0],
        "fresh_events": int(fresh.sum()),
    })


# ----------------------------------------------------------------------------------------- categorical
#: The chain the HMM kernels do not use: an empty matrix selects the stay-or-jump chain, and the full chain
#: passes empty stay and jump vectors.
_NO_MATRIX = np.empty((0, 0))
_NO_VECTOR = np.empty(0)


@numba.njit(cache=True, nogil=True, inline="always")
def _emission(o, keep_t, off, j):  # pragma: no cover - compiled
    """Pr[release o | state j] under randomized response: ``keep_t`` if j = o, else ``off`` = (1 − keep_t)/(k − 1);
    no fresh release (o < 0) weighs 1 in every state."""
    return 1.0 if o < 0 else (keep_t if j == o else off)


@numba.njit(cache=True, nogil=True)
def _forward(codes, keep, k, trans, stay, jump, alpha, scale):  # pragma: no cover - compiled
    """The scaled forward pass of both chains: fills the filtered ``alpha`` (n, k) and the scales c_t;
    returns the log-likelihood. The prediction uses the full matrix ``trans`` (k, k), or when that is empty
    (0, 0) the stay-or-jump chain A_ij = s_i·[i = j] + (1 − s_i)·π_j (``stay``, ``jump``) in O(k)."""
    n = codes.shape[0]
    ll = 0.0
    tmp = np.empty(k)
    full = trans.shape[0] > 0
    for t in range(n):
        if t == 0:
            for j in range(k):
                tmp[j] = 1.0 / k
        elif full:
            for j in range(k):
                tmp[j] = 0.0
            for i in range(k):
                ai = alpha[t - 1, i]
                for j in range(k):
                    tmp[j] += ai * trans[i, j]
        else:
            mass = 0.0
            for i in range(k):
                mass += alpha[t - 1, i] * (1.0 - stay[i])
            for j in range(k):
                tmp[j] = alpha[t - 1, j] * stay[j] + jump[j] * mass
        o = codes[t]
        off = (1.0 - keep[t]) / (k - 1) if k > 1 else 1.0
        tot = 0.0
        for j in range(k):
            tmp[j] *= _emission(o, keep[t], off, j)
            tot += tmp[j]
        scale[t] = tot
        ll += math.log(tot)
        for j in range(k):
            alpha[t, j] = tmp[j] / tot
    return ll


@numba.njit(cache=True, nogil=True)
def _backward_weights(codes, keep, k, scale, beta, t, out):  # pragma: no cover - compiled
    """``out[j] = e_t(j) β_t(j) / c_t``: what every transition into event t is weighed by in the backward
    pass of both chains."""
    o = codes[t]
    off = (1.0 - keep[t]) / (k - 1) if k > 1 else 1.0
    for j in range(k):
        out[j] = _emission(o, keep[t], off, j) * beta[j] / scale[t]


@numba.njit(cache=True, nogil=True)
def _hmm_pass(codes, keep, k, trans, stay, jump, alpha, scale, counts, post):  # pragma: no cover - compiled
    """One forward–backward pass with scaling (chains as in :func:`_forward`). Fills the posterior ``post``
    (n, k) and the expected transition counts; returns the log-likelihood. Emission: :func:`_emission`.

    ``counts``: the full chain's (k, k) expected transitions; the stay-or-jump chain's (3, k) rows are the
    expected stays per state, jumps from each state, and jumps to each state (a jump may land on its own)."""
    n = codes.shape[0]
    full = trans.shape[0] > 0
    ll = _forward(codes, keep, k, trans, stay, jump, alpha, scale)
    tmp = np.empty(k)
    beta = np.full(k, 1.0)
    counts[:, :] = 0.0
    post[n - 1, :] = alpha[n - 1, :]
    for t in range(n - 1, 0, -1):
        _backward_weights(codes, keep, k, scale, beta, t, tmp)
        if full:
            for i in range(k):
                acc = 0.0
                ai = alpha[t - 1, i]
                for j in range(k):
                    w = trans[i, j] * tmp[j]
                    acc += w
                    counts[i, j] += ai * w
                beta[i] = acc
        else:
            landing = 0.0  # Σ_j π_j e_t(j) β_t(j) / c_t
            for j in range(k):
                landing += jump[j] * tmp[j]
            mass = 0.0
            for i in range(k):
                mass += alpha[t - 1, i] * (1.0 - stay[i])
            for i in range(k):
                a = alpha[t - 1, i]
                counts[0, i] += a * stay[i] * tmp[i]
                counts[1, i] += a * (1.0 - stay[i]) * landing
                counts[2, i] += jump[i] * tmp[i] * mass
                beta[i] = stay[i] * tmp[i] + (1.0 - stay[i]) * landing
        for i in range(k):
            post[t - 1, i] = alpha[t - 1, i] * beta[i]
    return ll


def _categorical(codes: np.ndarray, budgets: np.ndarray, approximated: np.ndarray, k: int) -> Denoised:
    n = codes.shape[0]
    fresh = _fresh(codes, budgets, approximated)
    if not fresh.any() or k == 1:
        out = codes.copy() if k > 1 else np.zeros(n, dtype=np.int64)
        return Denoised(out, "none", {"reason": "no event was released fresh" if k > 1 else "one category"})
    obs = np.where(fresh, codes, -1).astype(np.int64)
    with np.errstate(over="ignore"):  # same form as mechanisms.rr_keep_probability
        keep = np.where(fresh, 1.0 / (1.0 + (k - 1) * np.exp(-np.where(fresh, budgets, 0.0))), 1.0 / k)
    blocks = search_blocks(n)  # EM on spread blocks (joined end to end) for long series
    e_obs = np.concatenate([obs[a:b] for a, b in blocks])
    e_keep = np.concatenate([keep[a:b] for a, b in blocks])
    m = e_obs.shape[0]
    alpha, scale, post = np.empty((n, k)), np.empty(n), np.empty((n, k))
    full = k <= FULL_MATRIX_MAX_K
    if full:
        counts = np.empty((k, k))
        trans = np.full((k, k), 0.1 / (k - 1))
        np.fill_diagonal(trans, 0.9)  # a sticky start: consecutive events mostly share their category
        params: tuple[np.ndarray, ...] = (trans,)
    else:
        counts = np.empty((3, k))
        params = (np.full(k, 0.9), np.full(k, 1.0 / k))  # stay probabilities, where jumps land

    def e_step(p: tuple[np.ndarray, ...], o, kp, a, sc, po) -> float:
        if full:
            return _hmm_pass(o, kp, k, p[0], _NO_VECTOR, _NO_VECTOR, a, sc, counts, po)
        return _hmm_pass(o, kp, k, _NO_MATRIX, p[0], p[1], a, sc, counts, po)

    def m_step() -> tuple[np.ndarray, ...]:  # MAP with one pseudo-count per row (and per jump vector)
        if full:
            t = counts + _PRIOR_PER_ROW / k
            return (t / t.sum(axis=1, keepdims=True),)
        stay = (counts[0] + 0.5 * _PRIOR_PER_ROW) / (counts[0] + counts[1] + _PRIOR_PER_ROW)
        land = counts[2] + _PRIOR_PER_ROW / k
        return stay, land / land.sum()

    ll_prev = -np.inf
    iters, converged = 0, False
    used = params
    for iters in range(1, EM_MAX_ITER + 1):  # noqa: B007 - the count is reported
        used = params
        ll = e_step(used, e_obs, e_keep, alpha[:m], scale[:m], post[:m])
        if ll - ll_prev <= EM_TOL * abs(ll):
            converged = True
            break
        ll_prev = ll
        params = m_step()
    if m < n:  # the E-step's posterior is the blocks'; one full pass with the fitted transitions
        ll = e_step(used, obs, keep, alpha, scale, post)
    out = np.argmax(post, axis=1).astype(np.int64)
    stay_p = np.diag(used[0]) if full else used[0] + (1.0 - used[0]) * used[1]
    return Denoised(out, "hmm-forward-backward", {
        "emissions": "k-ary randomized response, keep = 1/(1 + (k-1)e^{-ε_t}); approximated: none",
        "transitions": ("full k×k matrix" if full else "stay-or-jump: A_ij = s_i[i=j] + (1-s_i)π_j") +
                       ", Baum-Welch (emissions fixed), one Dirichlet pseudo-count per row",
        "output": "per-event posterior argmax",
        "em_events": int(m),
        "em_iterations": iters,
        "em_converged": converged,
        "log_likelihood": float(ll),
        "stay_probability_mean": float(np.mean(stay_p)),
        "fresh_events": int(fresh.sum()),
    })
