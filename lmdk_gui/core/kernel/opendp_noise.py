"""The ``opendp`` export backend (DESIGN §5): OpenDP's vetted samplers for numeric (Laplace, batched by distinct scale) and categorical (randomized response) releases. They draw from OpenDP's own OS randomness, so seeds do not apply to them."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .securenoise import CHUNK_EVENTS, Cancelled, _per_event, laplace_grid_exponent, rr_inputs


def _dp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def _opendp_laplace_measurement(dp, m: int, scale: float, sensitivity: float, k: int):
    """A vector Laplace measurement on the public grid ``2**k`` whose own privacy map certifies
    ``ε = Δ/scale``."""
    target = sensitivity / scale
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=m)
    metric = dp.l1_distance(T=float)
    s = scale
    for _ in range(60):
        meas = dp.m.make_laplace(domain, metric, s, k=k)
        got = meas.map(sensitivity)
        if got <= target:
            return meas
        s = s * (got / target) * (1.0 + 2.0**-40)
    raise RuntimeError("could not certify the opendp Laplace scale")  # pragma: no cover


def opendp_laplace(
    x,
    scales,
    sensitivity: float,
    *,
    progress: Callable[[int, int], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    grid_exponent: int | None = None,
) -> np.ndarray:
    """Laplace noise by opendp (its own OS randomness; seeds do not apply), batched by distinct scale.

    Each distinct scale gets one ``make_laplace`` over a vector domain on the public granularity
    ``2**grid_exponent`` (as :func:`secure_laplace`; the same for every scale, so the grid says nothing about
    ``ε_t``), its scale raised (by ~1e-9 relative) until opendp's privacy map gives ``Δ/scale`` or less.
    """
    xs = np.asarray(x, dtype=np.float64)
    if xs.ndim != 1:
        raise ValueError("x must be 1-D")
    n = xs.shape[0]
    sc = _per_event(scales, n, "scale")
    sens = float(sensitivity)
    if not (math.isfinite(sens) and sens > 0):
        raise ValueError("sensitivity must be finite and > 0")
    if n and not np.all(np.isfinite(xs)):
        raise ValueError("x must be finite")
    out = np.empty(n, dtype=np.float64)
    if n == 0:
        return out
    dp = _dp()
    if grid_exponent is None:
        grid_exponent = laplace_grid_exponent(sens, float(sc.min()))
    uniq, inverse = np.unique(sc, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
    done = 0
    for gi, s in enumerate(uniq):
        if should_cancel is not None and should_cancel():
            raise Cancelled("cancelled")
        idx = order[bounds[gi] : bounds[gi + 1]]
        for c0 in range(0, len(idx), CHUNK_EVENTS):
            part = idx[c0 : c0 + CHUNK_EVENTS]
            meas = _opendp_laplace_measurement(dp, len(part), float(s), sens, int(grid_exponent))
            out[part] = np.asarray(meas(xs[part].tolist()), dtype=np.float64)
            done += len(part)
            if progress is not None:
                progress(done, n)
            if should_cancel is not None and should_cancel() and done < n:
                raise Cancelled("cancelled")
    return out


def _opendp_rr_measurement(dp, k: int, eps: float):
    p = math.exp(eps) / (math.exp(eps) + k - 1) if eps < 700 else 1.0
    p = max(p, 1.0 / k)
    for _ in range(200):
        meas = dp.m.make_randomized_response(list(range(k)), p, T=int)
        if meas.map(1) <= eps:
            return meas
        p = max(1.0 / k, math.nextafter(p, 0.0) - p * 2.0**-50)
    raise RuntimeError("could not certify the opendp randomized-response probability")  # pragma: no cover


def opendp_rr(
    codes,
    eps,
    k: int,
    *,
    progress: Callable[[int, int], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> np.ndarray:
    """k-ary randomized response by opendp (one call per event, so slow; its own OS randomness)."""
    cs, ep, k, out = rr_inputs(codes, eps, k, 2, "opendp randomized response needs k >= 2")
    n = cs.shape[0]
    dp = _dp()
    cache: dict[float, Callable[[int], int]] = {}
    for i in range(n):
        if i % 4096 == 0:
            if should_cancel is not None and should_cancel():
                raise Cancelled("cancelled")
            if progress is not None and i:
                progress(i, n)
        e = float(ep[i])
        meas = cache.get(e)
        if meas is None:
            meas = cache[e] = _opendp_rr_measurement(dp, k, e)
        out[i] = meas(int(cs[i]))
    if progress is not None:
        progress(n, n)
    return out
