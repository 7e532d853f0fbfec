"""Per-kind mechanisms (DESIGN §3) on *unit* noise, for previews and evaluation.

Previews use common random numbers (DESIGN §5): the unit draws of :class:`~lmdk_gui.core.kernel.noise.UnitNoise`
are fixed per (series, seed) and scaled here by each event's budget, so two schemes differ only through
their budgets. Scalar ``njit`` versions serve the Adaptive loop; vectorised numpy versions serve the
schemes whose budgets are known up front. Both compute the same formulas.

The export path does not use these functions: it draws floating-point-safe noise from
:mod:`lmdk_gui.core.kernel.securenoise`.
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.lazyjit import numba  # the real numba is imported on a kernel's first call (cold start)

EARTH_RADIUS_M = 6_371_008.8  # mean Earth radius (IUGG)
_DEG = 180.0 / math.pi
_RAD = math.pi / 180.0


# ---------------------------------------------------------------------------------------------- numeric
def clamp(x: np.ndarray, bounds: tuple[float, float] | None) -> np.ndarray:
    if bounds is None:
        return x
    return np.clip(x, bounds[0], bounds[1])


@numba.njit(cache=True, nogil=True)
def laplace_unit_one(x, scale, sens, t, aux, pos):  # pragma: no cover - compiled
    """o = x + Lap(scale) from the standard Laplace draw ``aux[t]``."""
    return x + aux[t] * scale, pos


# --------------------------------------------------------------------------------------------- location
@numba.njit(cache=True, nogil=True)
def offset_latlon(lat, lon, east_m, north_m):  # pragma: no cover - compiled
    """Move a point by (east, north) metres in the local equirectangular projection around it."""
    c = math.cos(lat * _RAD)
    if c < 1e-12:
        c = 1e-12
    return fold_latlon(lat + north_m / EARTH_RADIUS_M * _DEG, lon + east_m / (EARTH_RADIUS_M * c) * _DEG)


@numba.njit(cache=True, nogil=True)
def fold_latlon(lat, lon):  # pragma: no cover - compiled
    """A latitude past a pole folded back over it (on the meridian great circle), the longitude wrapped to
    [-180, 180): the one rule every location mechanism applies after moving a point."""
    if lat > 90.0:
        lat = 180.0 - lat
        lon += 180.0
    elif lat < -90.0:
        lat = -180.0 - lat
        lon += 180.0
    return lat, ((lon + 180.0) % 360.0) - 180.0


@numba.njit(cache=True, nogil=True)
def haversine_one(lat1, lon1, lat2, lon2):  # pragma: no cover - compiled
    p1 = lat1 * _RAD
    p2 = lat2 * _RAD
    dp = p2 - p1
    dl = (lon2 - lon1) * _RAD
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    if a > 1.0:
        a = 1.0
    return 2.0 * EARTH_RADIUS_M * math.asin(math.sqrt(a))


def haversine(latlon_a: np.ndarray, latlon_b: np.ndarray) -> np.ndarray:
    """Great-circle distance in metres between rows of two (n, 2) [lat, lon] arrays."""
    p1 = np.radians(latlon_a[:, 0])
    p2 = np.radians(latlon_b[:, 0])
    dl = np.radians(latlon_b[:, 1] - latlon_a[:, 1])
    a = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return 2.0 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.minimum(a, 1.0)))


@numba.njit(cache=True, nogil=True)
def planar_unit_one(lat, lon, scale_m, t, aux, pos):  # pragma: no cover - compiled
    """Planar Laplace from unit draws: radius = aux[t, 0]·scale (aux[t, 0] ~ Gamma(2, 1)), angle aux[t, 1]."""
    r = aux[t, 0] * scale_m
    th = aux[t, 1]
    nlat, nlon = offset_latlon(lat, lon, r * math.cos(th), r * math.sin(th))
    return nlat, nlon, pos


@numba.njit(cache=True, nogil=True)
def _planar_unit_vec(latlon, scales_m, gam, ang, out):  # pragma: no cover - compiled
    for i in range(latlon.shape[0]):
        r = gam[i] * scales_m[i]
        out[i, 0], out[i, 1] = offset_latlon(latlon[i, 0], latlon[i, 1], r * math.cos(ang[i]),
                                             r * math.sin(ang[i]))


def planar_unit(latlon: np.ndarray, scales_m: np.ndarray, gamma_unit: np.ndarray,
                angle: np.ndarray) -> np.ndarray:
    out = np.empty_like(latlon)
    _planar_unit_vec(np.ascontiguousarray(latlon), np.ascontiguousarray(scales_m, dtype=np.float64),
                     np.ascontiguousarray(gamma_unit), np.ascontiguousarray(angle), out)
    return out


# ------------------------------------------------------------------------------------------ categorical
@numba.njit(cache=True, nogil=True)
def rr_keep_probability(eps, k):  # pragma: no cover - compiled
    """k-ary randomized response: P(keep) = e^ε / (e^ε + k − 1), written to stay finite for large ε."""
    if k <= 1:
        return 1.0
    return 1.0 / (1.0 + (k - 1) * math.exp(-eps))


@numba.njit(cache=True, nogil=True)
def rr_unit_one(code, eps, k, t, aux, pos):  # pragma: no cover - compiled
    """Keep when aux[t, 0] < P(keep); otherwise the other category indexed by aux[t, 1] ∈ [0, 1)."""
    if aux[t, 0] < rr_keep_probability(eps, k):
        return code, pos
    j = int(aux[t, 1] * (k - 1))
    if j >= k - 1:
        j = k - 2
    return (code + 1 + j) % k, pos


def rr_unit(codes: np.ndarray, eps: np.ndarray, k: int, u_keep: np.ndarray, u_other: np.ndarray) -> np.ndarray:
    if k <= 1:
        return codes.copy()
    keep_p = 1.0 / (1.0 + (k - 1) * np.exp(-eps))
    j = np.minimum((u_other * (k - 1)).astype(np.int64), k - 2)
    other = (codes + 1 + j) % k
    return np.where(u_keep < keep_p, codes, other)
