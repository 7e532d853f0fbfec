"""Floating-point-safe noise for the export path (DESIGN §3, §5).

Textbook Laplace noise ``x + scale * log(u)`` in floating point is not differentially private: the set of
doubles an output can take depends on ``x`` (Mironov 2012, "On significance of the least significant bits
for differential privacy"), so an attacker can tell neighbouring inputs apart from the low bits. Export
therefore never samples a real-valued distribution with floating-point arithmetic. All randomness is drawn
with *exact integer arithmetic* (numba, ``@njit(cache=True)``) from a buffer of uniformly random ``uint64``
words; floating point is only applied afterwards to exact integers, as deterministic post-processing.

Samplers (all exact)
--------------------
* ``uniform_below(high)`` -- uniform integer in ``[0, high)`` by rejection from 64-bit words: accept a word
  ``w`` iff ``w >= 2**64 mod high``, return ``w % high`` (no modulo bias; rejection probability
  ``< high / 2**64``).
* ``Bernoulli(exp(-num/den))`` -- Canonne, Kamath, Steinke 2020 ("The discrete Gaussian for differential
  privacy"), Algorithm 1, with ``Bernoulli(gamma/K)`` decided by the exact comparison
  ``uniform_below(den*K) < num`` (when ``den*K`` would exceed ``2**62`` it is decided as
  ``Bernoulli(num/den) and Bernoulli(1/K)``, an exact product, so nothing can overflow). ``gamma > 1`` by
  repetition of ``Bernoulli(exp(-1))`` as in CKS.
* ``DLap(t)`` with ``P(z) ∝ exp(-|z|/t)`` for an integer ``t >= 1`` -- CKS Algorithm 2 with ``s = 1``.
  Its first half (``U + t*V``) is an exact geometric ``P(x) ∝ exp(-x/t)`` on ``x >= 0``, used below.

Numeric: snapped discrete Laplace (``secure_laplace_one``, ``secure_laplace_grid_one``)
------------------------------------------------------------------------------------
Public inputs: the event's scale ``b = Δ/ε_t``, the sensitivity ``Δ`` and the grid exponent ``E``. An export
takes ``E`` from *public settings only* (issue 17, finding 3): ``E = laplace_grid_exponent(Δ, Δ/ε)`` with
``ε`` the release's total budget, the same for every event of the release, so the grid a value lies on says
nothing about its own ``ε_t`` (earlier versions used ``ε_t`` here, and the low bits of an Adaptive release
told landmarks from regular events). A stand-alone call (``secure_laplace_one``) uses ``Δ/ε = b``.

* grid ``g = 2**E`` with ``E = min(floor(log2 Δ), ceil(log2(Δ/ε))) - 21``, so ``g <= Δ * 2**-21`` and
  ``g <= (Δ/ε) * 2**-20 <= b * 2**-20`` for every event, because every event's ``ε_t <= ε``;
* ``Δ_k = floor(Δ/g) + 1``, ``t = ceil(Δ_k * (b/Δ) * (1 + 2**-48))``; ``t < 2**55`` is required (so
  ``ε_t`` above about ``2**-34 * max(1, ε)``, i.e. ``6e-11`` for ``ε <= 1``), a smaller ``ε_t`` -- noise ten
  billion times the sensitivity -- is refused as invalid input.

Release: ``k = rint(x/g)`` (``x/g`` is exact because ``g`` is a power of two, so ``|k - x/g| <= 1/2``);
``|k| < 2**61`` is required (``|x|`` below about ``2**40 * min(Δ, Δ/ε)``, a trillion sensitivities for
``ε = 1``; larger values are refused as invalid input). ``Z ~ DLap(t)`` with ``|Z| < 2**62`` (else the
sampler aborts; probability ``< exp(-2**62/t) <= exp(-128)`` per draw), ``n = k + Z`` exactly in int64
(``|n| < 2**63``), output ``g * float64(n)``.

Privacy. Neighbours ``|x - x'| <= Δ`` give ``|k - k'| <= Δ/g + 1``, an integer, so ``<= Δ_k``. For the
exact integer ``n = k + Z``: ``P(n | k) / P(n | k') = exp((|n-k'| - |n-k|)/t) <= exp(Δ_k/t) <= exp(ε_t)``.
The output is a function of ``n`` alone: ``float64(n)`` is the correctly rounded conversion of one integer
and the multiplication by the power of two ``g`` is exact. So the release is ε_t-DP exactly, with no
floating-point caveat; rounding is post-processing. The argument never used ``g``'s relation to ``ε_t``
(a public grid finer than the event's own would have been only makes ``t`` larger): it holds for any
public ``g`` as long as ``t`` and ``k`` stay in the stated ranges. The factor ``(1 + 2**-48)`` absorbs the
(at most five) roundings in computing ``t`` in float, including the caller's own ``b = Δ/ε_t``, so
``t >= Δ_k/ε_t`` holds for the exact real numbers.

Cost: the noise is slightly wider than ``Laplace(b)``; its scale in value units is
``g*t <= b * (1 + g/Δ) * (1 + 2**-48) + g <= b * (1 + 2**-21 + 2**-20 + 2**-47)``, a factor below
``1 + 1.5e-6`` (``effective_laplace_scale`` returns the exact figure). Outputs lie on the public grid
``g·Z`` (for ``|n| >= 2**53``, on the coarser grid of doubles -- still a function of ``n`` alone).

Location: discretised planar Laplace (``secure_planar_one``)
-----------------------------------------------------------
Andrés et al. 2013 (geo-indistinguishability) in polar form: angle uniform on ``[0, 2π)``, radius
``~ Gamma(2, r/ε_t)``. Following their §5 (discretise, then remap to a public grid):

* radius ``= u * (G1 + G2)`` metres with ``u = 2**(ceil(log2 s) - 40)`` (``s = r/ε_t``, so ``u <= s*2**-39``,
  far below a centimetre for any sensible ``s``) and ``G1, G2`` exact geometrics ``P(x) ∝ exp(-x/T)``,
  ``T = ceil(s/u)``: the sum is the exact discrete Gamma(2), ``P(ρ) ∝ (ρ+1) exp(-ρ/T)``, with scale
  ``u*T >= s`` (never less noise; at most ``1 + 2**-39`` more);
* angle ``= 2π a / 2**53`` with ``a`` an exact uniform integer below ``2**53`` (53 bits of one word);
* the offset ``(r cos θ, r sin θ)`` (east, north) is applied in the local equirectangular projection around
  the input point (mean Earth radius ``R_EARTH_M``), latitude folded over the poles, longitude wrapped;
* the output is snapped to the public grid ``LATLON_GRID_DEG = 1e-7`` degrees (≈ 1.1 cm north-south):
  ``rint(v * 1e7) / 1e7``, so the set of possible outputs is the same grid for every input.

Exact: the integer draws (radius index, angle index) have exactly the stated discrete distributions.
Approximate (stated honestly, not proved): the discrete polar lattice replaces the continuous density, and
``cos``/``sin``/the projection are floating point (relative error ~1e-16, i.e. nanometres on Earth). The
radial step ``u <= s*2**-39`` (2e-10 m for s = 100 m), the angular step ``2π/2**53`` and the float error are
all many orders of magnitude below the ~1 cm output cells, so the probability of every output cell should
differ from that of the exact continuous mechanism followed by the same snapping (which is exactly
``ε_t·d/r``-geo-indistinguishable, snapping being post-processing) by a relative error ``η`` of order 1e-7;
the log-likelihood ratio between two inputs at local distance ``d`` is then ``<= ε_t d / r + 2η`` -- the
same shape as the additive term Andrés et al. §5 derive for their discretised mechanism. No ε is inflated
for it. Caveat: longitude cells shrink as ``cos(lat)``, so within ~0.01° of a pole the cells approach the
float resolution and ``η`` is no longer small (and the projection degenerates there anyway). Distances are
those of the local projection around the true point, as DESIGN §3 allows. Because output cells are far
coarser than the float resolution of the noisy point, the low-bit attack of Mironov does not apply: the
reachable set of outputs is the same grid for every input.

Categorical: k-ary randomized response (``secure_rr_one``)
---------------------------------------------------------
Equivalent form of "keep with probability ``p = e^ε/(e^ε + k - 1)``, else a uniformly chosen other code":
with probability ``α = k/(e^ε + k - 1)`` output ``uniform_below(k)`` (which may be the true code), else the
true code; then ``P(keep) = 1 - α(k-1)/k = p`` and each other code has ``α/k = (1-p)/(k-1)``. ``α`` is
represented as ``A / 2**62`` with ``A = ceil(α_float * (1 + 2**-48) * 2**62)`` clamped to ``[1, 2**62]``,
i.e. rounded UP (keep probability rounded DOWN), and decided by the exact comparison ``(w >> 2) < A``. The
effective ``ε_eff = ln(1 + k(1-α_eff)/α_eff) <= ε`` (and ``<= ln(1 + k·2**62)`` even for huge ε).

Randomness and the buffer protocol
----------------------------------
Words come from a :class:`WordSource`: ``from_os()`` (``os.urandom``; the default for exports),
``from_key(key)`` (a secret key of at least 128 bits, expanded with SHAKE-256 in counter mode: a
reproducible export that only the key's holder can reproduce; issue 17, finding 2 — an export passes the
release key that :mod:`lmdk_gui.core.publish.keys` binds to what is released, never the user's key itself,
so one key never gives two releases the same words; issue 42) or ``from_seed(seed)``
(numpy ``Philox`` seeded with a small integer: previews and tests only, never an export).
:class:`WordBuffer` is the one refill loop over a source (``_run`` and the export's Adaptive loop).
Callers of the ``*_one`` functions guarantee at least ``RESERVE_WORDS`` unread words in ``words`` from
``pos`` before each event. A function that would read past the end of ``words`` returns ``pos = -1``
(never reads out of bounds); invalid arguments return ``pos = -2`` (non-finite ``x``, scale or sensitivity
``<= 0``/non-finite or outside ``[1e-300, 1e300]``, a code outside ``[0, k)``, ``ε <= 0``). Either way the
caller must abort the whole export.

How likely is one event to need more than ``RESERVE_WORDS = 1024`` words? A Chernoff bound on the number
of words ``W`` (``P(W > R) <= E[z^W] / z^(R+1)``, with ``E[z^W]`` bounded through the loop structure above
and every rejection probability replaced by its worst case; computed by :func:`reserve_tail_log10`) gives

* numeric (one DLap draw; measured mean 9.6 words, max 62 in 10^6): ``P(W > 1024) < 1e-129`` (for ε_t ≤ 32)
* location (two geometrics + 1 word; mean 18.2, max 77 in 10^6):    ``P(W > 1024) < 1e-125``
* categorical (1 or 2 words unless ``uniform_below(k)`` rejects, probability ``< k/2**64``):
  ``P(W > 1024) < 2**-(32*1023)`` for ``k <= 2**32``

so even 10^12 events fail with probability below 1e-110. The samplers also fail (``pos = -1``) in the
equally impossible case that a draw would leave the range where the integer arithmetic is exact (a
geometric reaching ``2**62``: probability ``< exp(-2**7) ≈ 3e-56`` per draw, as ``t < 2**55``).

Backends (for the sidecar)
--------------------------
``BACKEND_*`` name what produced a release. The opendp backend (``opendp_laplace``/``opendp_rr`` in :mod:`.opendp_noise`) uses
opendp's own OS randomness: seeds do not apply to it. ``opendp_laplace`` batches by distinct scale (one
vector measurement per scale) and nudges the scale up until opendp's own privacy map certifies ``ε_t``;
``opendp_rr`` calls opendp's randomized response once per event (slow: offered for
cross-checking), with ``prob`` nudged down until opendp's privacy map certifies ``ε_t``.

Everything here is Qt-free.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Callable

import numpy as np

from ..engine.lazyjit import numba  # the real numba is imported on a kernel's first call (cold start)
from .mechanisms import fold_latlon

__all__ = [
    "BACKEND_OPENDP_LAPLACE",
    "BACKEND_OPENDP_RR",
    "BACKEND_PLANAR",
    "BACKEND_RR",
    "BACKEND_SNAPPED",
    "Cancelled",
    "LATLON_GRID_DEG",
    "RESERVE_WORDS",
    "R_EARTH_M",
    "RandomnessExhausted",
    "WordBuffer",
    "WordSource",
    "backends_for",
    "bernoulli_exp",
    "discrete_laplace",
    "effective_laplace_scale",
    "geometric",
    "laplace_grid",
    "laplace_grid_exponent",
    "max_abs_value",
    "public_uniforms",
    "reserve_tail_bound",
    "secure_laplace",
    "secure_laplace_grid_one",
    "secure_laplace_one",
    "secure_planar",
    "secure_planar_one",
    "secure_rr",
    "secure_rr_one",
    "uniform_below",
]


#: Unread words a caller must guarantee before starting one event (see module docstring for the bound).
RESERVE_WORDS = 1024


#: Smallest export key, bytes (128 bits), and the SHAKE-256 domain label of the export keystream.
MIN_KEY_BYTES = 16


_KEY_LABEL = b"lmdk export words v1\x00"


#: Public output grid for locations, degrees (≈ 1.1 cm of latitude).
LATLON_GRID_DEG = 1e-7


_LATLON_INV = 1e7  # outputs are rint(v * 1e7) / 1e7: a function of the integer only


#: Mean Earth radius (IUGG), metres, for the local equirectangular projection.
R_EARTH_M = 6371008.8


BACKEND_SNAPPED = "snapped discrete Laplace (exact integer sampling, lmdk numba)"


BACKEND_PLANAR = "discretised planar Laplace, 1e-7 deg grid (exact integer sampling, lmdk numba)"


BACKEND_RR = "k-ary randomized response (exact integer sampling, lmdk numba)"


BACKEND_OPENDP_LAPLACE = "opendp make_laplace (vector, per distinct scale)"


BACKEND_OPENDP_RR = "opendp make_randomized_response"


_BACKENDS = {
    "numeric": [BACKEND_SNAPPED, BACKEND_OPENDP_LAPLACE],
    "location": [BACKEND_PLANAR],
    "categorical": [BACKEND_RR, BACKEND_OPENDP_RR],
}


# Invalid-argument / exhausted codes returned as ``pos``.
POS_EXHAUSTED = -1


POS_INVALID = -2


_U0 = np.uint64(0)


_U1 = np.uint64(1)


_U2 = np.uint64(2)


_LIM62 = np.uint64(1 << 62)


_TWO53 = 9007199254740992.0


_TWO_PI_OVER_2_53 = 2.0 * math.pi / _TWO53  # float(2π) * 2**-53, exact scaling


_MARGIN = 1.0 + 2.0**-48


_MIN_PARAM = 1e-300


_MAX_PARAM = 1e300


#: Events per chunk in the vectorised drivers (progress/cancel granularity).
CHUNK_EVENTS = 65536


def backends_for(kind: str) -> list[str]:
    """Backend names available for a value kind (``numeric``, ``location``, ``categorical``); first = default."""
    try:
        return list(_BACKENDS[kind])
    except KeyError:
        raise ValueError(f"unknown kind {kind!r}; expected one of {sorted(_BACKENDS)}") from None


class Cancelled(Exception):
    """Raised by the vectorised drivers when ``should_cancel()`` returned true between chunks."""


class RandomnessExhausted(RuntimeError):
    """One event needed more random words than ``RESERVE_WORDS`` (astronomically unlikely); abort export."""


class WordSource:
    """A stream of independent uniformly random ``uint64`` words.

    ``from_os()`` reads ``os.urandom`` (fresh OS entropy, the export default). ``from_key(key)`` expands a
    secret key of at least 128 bits (reproducible exports). ``from_seed(seed)`` is numpy ``Philox`` seeded
    with a small integer, raw 64-bit outputs: for previews and tests only (a small seed can be guessed).
    """

    def __init__(self, fill: Callable[[np.ndarray], None], description: str, seed: int | None = None):
        self._fill = fill
        self.description = description
        self.seed = seed

    @classmethod
    def from_os(cls) -> WordSource:
        def fill(buf: np.ndarray) -> None:
            n = buf.shape[0]
            if n:
                buf[:] = np.frombuffer(os.urandom(8 * n), dtype=np.uint64)

        return cls(fill, "os.urandom")

    @classmethod
    def from_key(cls, key: bytes) -> WordSource:
        """A secret export key (``bytes``, at least 16 = 128 bits) expanded by SHAKE-256 in counter mode:
        fill ``i`` is ``SHAKE256(label ‖ len(key) ‖ key ‖ i)``. Reproducible by the key's holder only; the
        description never shows the key."""
        key = bytes(key)
        if len(key) < MIN_KEY_BYTES:
            raise ValueError(f"an export key needs at least {8 * MIN_KEY_BYTES} bits, got {8 * len(key)}")
        prefix = _KEY_LABEL + len(key).to_bytes(4, "big") + key
        counter = [0]

        def fill(buf: np.ndarray) -> None:
            n = buf.shape[0]
            if n:
                block = hashlib.shake_256(prefix + counter[0].to_bytes(8, "big")).digest(8 * n)
                counter[0] += 1
                buf[:] = np.frombuffer(block, dtype="<u8")

        return cls(fill, "SHAKE-256 keystream of a secret export key")

    @classmethod
    def from_seed(cls, seed: int) -> WordSource:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        bitgen = np.random.Philox(int(seed))

        def fill(buf: np.ndarray) -> None:
            n = buf.shape[0]
            if n:
                buf[:] = bitgen.random_raw(n)

        return cls(fill, f"numpy Philox(seed={int(seed)})", seed=int(seed))

    def fill(self, buf: np.ndarray) -> None:
        """Overwrite the 1-D ``uint64`` array ``buf`` with fresh random words."""
        if buf.dtype != np.uint64 or buf.ndim != 1:
            raise TypeError("buf must be a 1-D uint64 array")
        self._fill(buf)

    def words(self, n: int) -> np.ndarray:
        """A new array of ``n`` random words."""
        buf = np.empty(int(n), dtype=np.uint64)
        self.fill(buf)
        return buf

    def refill(self, buf: np.ndarray, pos: int) -> int:
        """Move the unread words ``buf[pos:]`` to the front, fill the rest afresh; return the new ``pos`` (0)."""
        n = buf.shape[0]
        pos = max(0, min(int(pos), n))
        rest = n - pos
        if rest:
            buf[:rest] = buf[pos:].copy()
        self.fill(buf[rest:])
        return 0

    def __repr__(self) -> str:
        return f"WordSource({self.description})"


def public_uniforms(source: WordSource, n: int) -> np.ndarray:
    """``n`` uniforms in [0, 1) on the 2**-53 grid from the same word source as the noise (Adaptive's public
    sampling decisions: data-independent, drawn from the vetted source, never from numpy's float RNGs)."""
    return (source.words(n) >> np.uint64(11)).astype(np.float64) * 2.0**-53


@numba.njit(cache=True, nogil=True)
def uniform_below(high, words, pos):
    """Exact uniform integer in ``[0, high)`` (``1 <= high``, uint64). Returns ``(value: uint64, pos)``."""
    high = np.uint64(high)
    n = words.shape[0]
    thresh = (_U0 - high) % high  # 2**64 mod high
    while True:
        if pos >= n or pos < 0:
            return _U0, -1
        w = words[pos]
        pos += 1
        if w >= thresh:
            return w % high, pos


@numba.njit(cache=True, nogil=True)
def _bern_exp_frac(num, den, words, pos):
    """Bernoulli(exp(-num/den)) for uint64 ``0 <= num <= den``, ``den >= 1`` (CKS Algorithm 1)."""
    k = _U1
    while True:
        # A ~ Bernoulli(num / (den * k)), exactly
        if k <= _LIM62 // den:
            u, pos = uniform_below(den * k, words, pos)
            if pos < 0:
                return False, pos
            a = u < num
        else:
            u, pos = uniform_below(den, words, pos)
            if pos < 0:
                return False, pos
            a = u < num
            if a:
                u, pos = uniform_below(k, words, pos)
                if pos < 0:
                    return False, pos
                a = u == _U0
        if not a:
            break
        k += _U1
    return (k & _U1) == _U1, pos


@numba.njit(cache=True, nogil=True)
def bernoulli_exp(num, den, words, pos):
    """Exact Bernoulli(exp(-num/den)) for integers ``num >= 0``, ``den >= 1``. Returns ``(bool, pos)``."""
    num = np.uint64(num)
    den = np.uint64(den)
    while num > den:
        b, pos = _bern_exp_frac(_U1, _U1, words, pos)
        if pos < 0 or not b:
            return False, pos
        num -= den
    return _bern_exp_frac(num, den, words, pos)


@numba.njit(cache=True, nogil=True)
def geometric(t, words, pos):
    """Exact ``P(x) ∝ exp(-x/t)`` on ``x = 0, 1, ...`` for integer ``t >= 1`` (CKS Alg. 2, first half).

    Returns ``(x: uint64, pos)`` with ``x < 2**62``; ``pos = -1`` also when ``x`` could reach ``2**62``
    (``V >= 2**62 // t - 1``: probability ``< exp(-2**62/t + 2)``).
    """
    t = np.uint64(t)
    while True:
        u, pos = uniform_below(t, words, pos)
        if pos < 0:
            return _U0, pos
        d, pos = _bern_exp_frac(u, t, words, pos)
        if pos < 0:
            return _U0, pos
        if d:
            break
    v = _U0
    while True:
        a, pos = _bern_exp_frac(_U1, _U1, words, pos)
        if pos < 0:
            return _U0, pos
        if not a:
            break
        v += _U1
    if v + _U1 >= np.uint64(1 << 62) // t:
        return _U0, -1
    return u + t * v, pos


@numba.njit(cache=True, nogil=True)
def discrete_laplace(t, words, pos):
    """Exact ``P(z) ∝ exp(-|z|/t)`` on the integers, integer ``t >= 1`` (CKS Algorithm 2, s = 1).

    Returns ``(z: int64, pos)`` with ``|z| < 2**62``; ``pos = -1`` when out of words.
    """
    n = words.shape[0]
    while True:
        x, pos = geometric(t, words, pos)
        if pos < 0:
            return 0, pos
        if pos >= n:
            return 0, -1
        b = (words[pos] >> np.uint64(63)) == _U1
        pos += 1
        if b and x == _U0:
            continue
        z = np.int64(x)
        if b:
            return -z, pos
        return z, pos


@numba.njit(cache=True, nogil=True)
def _ceil_log2(v):
    m, e = math.frexp(v)  # v = m * 2**e, 0.5 <= m < 1
    if m == 0.5:
        return e - 1
    return e


@numba.njit(cache=True, nogil=True)
def _floor_log2(v):
    m, e = math.frexp(v)
    return e - 1


_T_LIMIT = 36028797018963968.0  # 2**55: largest integer noise scale t (see the module docstring)


_K_LIMIT = 2305843009213693952.0  # 2**61: largest |rint(x/g)|


_GRID_SHIFT = 21


@numba.njit(cache=True, nogil=True)
def _grid_exponent(sensitivity, min_scale):
    """``E = min(floor(log2 Δ), ceil(log2(Δ/ε))) - 21`` from public ``Δ`` and ``min_scale = Δ/ε``."""
    return min(_floor_log2(sensitivity), _ceil_log2(min_scale)) - _GRID_SHIFT


@numba.njit(cache=True, nogil=True)
def _laplace_params(scale, sensitivity, e):
    """(grid g, integer scale t) for the event's ``scale = Δ/ε_t``, ``sensitivity = Δ`` and the public grid
    exponent ``e``; ``t = 0`` flags an ε_t too small for the grid (see module docstring)."""
    g = math.ldexp(1.0, e)
    dk = math.floor(sensitivity / g) + 1.0
    q = dk * (scale / sensitivity) * _MARGIN
    if not (q < _T_LIMIT):  # only for ε_t below ~2**-34·max(1, ε) (or NaN); flagged by t = 0
        return g, _U0
    return g, np.uint64(math.ceil(q))


@numba.njit(cache=True, nogil=True)
def _param_ok(v):
    return v >= _MIN_PARAM and v <= _MAX_PARAM  # False for NaN


@numba.njit(cache=True, nogil=True)
def secure_laplace_grid_one(x, scale, sensitivity, e, words, pos):
    """Snapped discrete Laplace release of one real ``x`` with ``scale = Δ/ε_t``, ``Δ`` and the public grid
    exponent ``e`` (:func:`laplace_grid_exponent`). Returns ``(value: float, pos)``; ``pos < 0`` means abort
    (``-1`` out of words, ``-2`` invalid input: non-finite, ``|x|`` too large for the grid, ε_t too small).
    """
    if not (math.isfinite(x) and _param_ok(scale) and _param_ok(sensitivity)) or e < -1060:
        return math.nan, -2
    g, t = _laplace_params(scale, sensitivity, e)
    k = np.rint(x / g)
    if t == _U0 or not (abs(k) < _K_LIMIT):
        return math.nan, -2
    z, pos = discrete_laplace(t, words, pos)
    if pos < 0:
        return math.nan, pos
    n = np.int64(k) + np.int64(z)  # exact: |k| < 2**61, |z| < 2**62
    return g * np.float64(n), pos


@numba.njit(cache=True, nogil=True)
def secure_laplace_one(x, scale, sensitivity, words, pos):
    """:func:`secure_laplace_grid_one` on the grid of a stand-alone release with ``ε = Δ/scale``."""
    if not (_param_ok(scale) and _param_ok(sensitivity)):
        return math.nan, -2
    return secure_laplace_grid_one(x, scale, sensitivity, _grid_exponent(sensitivity, scale), words, pos)


def laplace_grid_exponent(sensitivity: float, min_scale: float) -> int:
    """The public grid exponent for a release whose smallest possible noise scale is ``min_scale = Δ/ε``
    (``ε`` the release's total budget: every event's ``ε_t <= ε``). Depends on public settings only."""
    if not (_MIN_PARAM <= min_scale <= _MAX_PARAM and _MIN_PARAM <= sensitivity <= _MAX_PARAM):
        raise ValueError("scale and sensitivity must be finite and in [1e-300, 1e300]")
    return int(_grid_exponent(float(sensitivity), float(min_scale)))


def laplace_grid(scale: float, sensitivity: float, grid_exponent: int | None = None) -> tuple[float, int]:
    """The grid ``g`` and integer noise scale ``t`` (grid units) used for ``(scale, sensitivity)`` on the
    public grid ``2**grid_exponent`` (default: a stand-alone release, ``Δ/ε = scale``)."""
    e = laplace_grid_exponent(sensitivity, scale) if grid_exponent is None else int(grid_exponent)
    g, t = _laplace_params(float(scale), float(sensitivity), e)
    if t == 0:
        raise ValueError(f"ε = sensitivity/scale = {sensitivity / scale:.3g} is too small for the noise grid "
                         f"(noise above 2**55 grid steps)")
    return float(g), int(t)


def max_abs_value(grid_exponent: int) -> float:
    """The largest ``|x|`` the snapped sampler accepts on the grid ``2**grid_exponent``."""
    return math.ldexp(1.0, int(grid_exponent)) * (_K_LIMIT - 1.0)


def effective_laplace_scale(scale: float, sensitivity: float, grid_exponent: int | None = None) -> float:
    """The actual noise scale ``g*t`` (value units) of the snapped mechanism; ``>= scale``, ≈ ``scale``."""
    g, t = laplace_grid(scale, sensitivity, grid_exponent)
    return g * t


@numba.njit(cache=True, nogil=True)
def _snap_deg(v):
    return np.rint(v * _LATLON_INV) / _LATLON_INV


@numba.njit(cache=True, nogil=True)
def secure_planar_one(lat, lon, scale_m, words, pos):
    """Discretised planar Laplace of one point (degrees), radius scale ``scale_m = r/ε_t`` metres.

    Returns ``(lat, lon, pos)``, outputs on the ``LATLON_GRID_DEG`` grid; ``pos < 0`` means abort.
    """
    if not (math.isfinite(lat) and math.isfinite(lon) and abs(lat) <= 90.0 and _param_ok(scale_m)):
        return math.nan, math.nan, -2
    u = math.ldexp(1.0, _ceil_log2(scale_m) - 40)
    t = np.uint64(math.ceil(scale_m / u))  # scale_m / u is exact (power-of-two division)
    g1, pos = geometric(t, words, pos)
    if pos < 0:
        return math.nan, math.nan, pos
    g2, pos = geometric(t, words, pos)
    if pos < 0:
        return math.nan, math.nan, pos
    if pos >= words.shape[0]:
        return math.nan, math.nan, -1
    a = words[pos] >> np.uint64(11)  # exact uniform below 2**53
    pos += 1
    r = u * np.float64(g1 + g2)
    theta = np.float64(a) * _TWO_PI_OVER_2_53
    dx = r * math.cos(theta)  # east, metres
    dy = r * math.sin(theta)  # north, metres
    lat2 = lat + math.degrees(dy / R_EARTH_M)
    c = max(math.cos(math.radians(lat)), 1e-12)
    lon2 = lon + math.degrees(dx / (R_EARTH_M * c))
    # fold latitude over the poles (on the meridian great circle), then wrap longitude
    lat2 = (lat2 + 180.0) % 360.0 - 180.0  # now in [-180, 180)
    lat2, lon2 = fold_latlon(lat2, lon2)
    olat = _snap_deg(lat2)
    olon = _snap_deg(lon2)
    if olon >= 180.0:
        olon = -180.0
    return olat, olon, pos


@numba.njit(cache=True, nogil=True)
def _rr_threshold(eps, k):
    alpha = k / (math.exp(eps) + (k - 1.0))
    a = math.ceil(alpha * _MARGIN * 4611686018427387904.0)  # * 2**62
    if not (a >= 1.0):  # also catches NaN
        a = 1.0
    if a > 4611686018427387904.0:
        a = 4611686018427387904.0
    return np.uint64(a)


@numba.njit(cache=True, nogil=True)
def secure_rr_one(code, eps, k, words, pos):
    """k-ary randomized response of one code in ``[0, k)``. Returns ``(code: int64, pos)``."""
    if not (math.isfinite(eps) and eps > 0.0) or k < 1 or code < 0 or code >= k:
        return np.int64(-1), -2
    thr = _rr_threshold(eps, np.float64(k))
    if pos >= words.shape[0] or pos < 0:
        return np.int64(-1), -1
    w = words[pos] >> _U2
    pos += 1
    if w >= thr:
        return np.int64(code), pos
    r, pos = uniform_below(np.uint64(k), words, pos)
    if pos < 0:
        return np.int64(-1), pos
    return np.int64(r), pos


@numba.njit(cache=True, nogil=True)
def _laplace_kernel(x, scales, sensitivity, e, out, start, stop, words, pos):
    n = words.shape[0]
    for j in range(start, stop):
        if n - pos < RESERVE_WORDS:
            return j, pos
        v, pos = secure_laplace_grid_one(x[j], scales[j], sensitivity, e, words, pos)
        if pos < 0:
            return j, pos
        out[j] = v
    return stop, pos


@numba.njit(cache=True, nogil=True)
def _planar_kernel(latlon, scales, out, start, stop, words, pos):
    n = words.shape[0]
    for j in range(start, stop):
        if n - pos < RESERVE_WORDS:
            return j, pos
        a, b, pos = secure_planar_one(latlon[j, 0], latlon[j, 1], scales[j], words, pos)
        if pos < 0:
            return j, pos
        out[j, 0] = a
        out[j, 1] = b
    return stop, pos


@numba.njit(cache=True, nogil=True)
def _rr_kernel(codes, eps, k, out, start, stop, words, pos):
    n = words.shape[0]
    for j in range(start, stop):
        if n - pos < RESERVE_WORDS:
            return j, pos
        c, pos = secure_rr_one(codes[j], eps[j], k, words, pos)
        if pos < 0:
            return j, pos
        out[j] = c
    return stop, pos


def _per_event(values, n: int, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(f"{what} must be a scalar or have shape ({n},), got {arr.shape}")
    if n and not (np.all(np.isfinite(arr)) and np.all(arr > 0)):
        raise ValueError(f"every {what} must be finite and > 0 (events with ε_t = 0 must not be passed)")
    return np.ascontiguousarray(arr)


def rr_inputs(codes, eps, k, min_k: int, too_few: str) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Randomized response's checked inputs, for every backend: the codes (1-D int64 in ``[0, k)``), the
    per-event ε (:func:`_per_event`), ``k`` (at least ``min_k``, else ``ValueError(too_few)``), and the
    (uninitialised) int64 array the released codes go to."""
    cs = np.ascontiguousarray(np.asarray(codes, dtype=np.int64))
    if cs.ndim != 1:
        raise ValueError("codes must be 1-D")
    n = cs.shape[0]
    k = int(k)
    if k < min_k:
        raise ValueError(too_few)
    ep = _per_event(eps, n, "eps")
    if n and (cs.min() < 0 or cs.max() >= k):
        raise ValueError(f"codes must lie in [0, {k})")
    return cs, ep, k, np.empty(n, dtype=np.int64)


class WordBuffer:
    """The one refill loop for the ``*_one`` samplers: a word buffer over a :class:`WordSource` that keeps
    at least ``RESERVE_WORDS`` unread words before each event (``ensure``), and turns a sampler's negative
    ``pos`` into the right exception (``check``): bad input is a ``ValueError`` naming the element, never
    "ran out of random words"."""

    def __init__(self, source: WordSource, size: int) -> None:
        self.source = source
        self.words = np.empty(max(int(size), 2 * RESERVE_WORDS), dtype=np.uint64)
        self.pos = len(self.words)  # empty: the first ensure() fills it

    @property
    def limit(self) -> int:
        """Kernels stop before an event once ``pos`` passes this (the caller then calls :meth:`ensure`)."""
        return len(self.words) - RESERVE_WORDS

    def ensure(self) -> None:
        if len(self.words) - self.pos < RESERVE_WORDS:
            self.pos = self.source.refill(self.words, self.pos)

    def check(self, pos: int, element: int, describe: Callable[[int], str] | None = None) -> int:
        """Accept a kernel's new ``pos``; raise for ``POS_INVALID``/``POS_EXHAUSTED``."""
        if pos == POS_INVALID:
            what = describe(element) if describe is not None else f"element {element}"
            raise ValueError(f"invalid input at {what} (non-finite, out of range, or too large for the noise "
                             "grid)")
        if pos < 0:
            raise RandomnessExhausted(f"element {element} needed more than {RESERVE_WORDS} random words "
                                      "(probability < 1e-120); export aborted")
        self.pos = pos
        return pos


def _run(kernel, args, n: int, source: WordSource, words_per_event: int, progress, should_cancel) -> None:
    """Chunking loop shared by the drivers: ``kernel(*args, start, stop, words, pos)`` over a
    :class:`WordBuffer`."""
    if n == 0:
        if progress is not None:
            progress(0, 0)
        return
    buf = WordBuffer(source, min(n, CHUNK_EVENTS) * words_per_event + 2 * RESERVE_WORDS)
    i = 0
    while i < n:
        if should_cancel is not None and should_cancel():
            raise Cancelled("cancelled")
        stop = min(n, i + CHUNK_EVENTS)
        while i < stop:
            buf.ensure()
            j, pos = kernel(*args, i, stop, buf.words, buf.pos)
            buf.check(pos, j)
            i = j
        if progress is not None:
            progress(i, n)


def secure_laplace(
    x,
    scales,
    sensitivity: float,
    source: WordSource | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    grid_exponent: int | None = None,
) -> np.ndarray:
    """Snapped discrete Laplace for a whole array: ``x[i] + DLap`` with ``scales[i] = Δ/ε_i`` (scalar ok).

    All outputs lie on the grid ``2**grid_exponent``: pass :func:`laplace_grid_exponent` of the release's
    *public* settings (an export does); the default takes the smallest scale of the call. ``source``
    defaults to fresh OS entropy. Raises ValueError on non-finite ``x`` or a scale/ε that is ``<= 0`` or
    non-finite, :class:`Cancelled` when ``should_cancel()`` turns true between chunks.
    """
    xs = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
    if xs.ndim != 1:
        raise ValueError("x must be 1-D")
    n = xs.shape[0]
    sc = _per_event(scales, n, "scale")
    sens = float(sensitivity)
    if not (_MIN_PARAM <= sens <= _MAX_PARAM):
        raise ValueError("sensitivity must be finite and in [1e-300, 1e300]")
    if n and not np.all(np.isfinite(xs)):
        raise ValueError("x must be finite (clamp or drop missing values first)")
    if n and not (np.all(sc >= _MIN_PARAM) and np.all(sc <= _MAX_PARAM)):
        raise ValueError("scales must lie in [1e-300, 1e300]")
    out = np.empty(n, dtype=np.float64)
    if grid_exponent is None:
        grid_exponent = laplace_grid_exponent(sens, float(sc.min())) if n else 0
    _run(_laplace_kernel, (xs, sc, sens, np.int64(grid_exponent), out), n, source or WordSource.from_os(), 12,
         progress, should_cancel)
    return out


def secure_planar(
    latlon,
    scales_m,
    source: WordSource | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> np.ndarray:
    """Discretised planar Laplace for an ``(n, 2)`` array of ``[lat, lon]`` degrees; ``scales_m = r/ε_i``."""
    ll = np.ascontiguousarray(np.asarray(latlon, dtype=np.float64))
    if ll.ndim != 2 or ll.shape[1] != 2:
        raise ValueError("latlon must have shape (n, 2)")
    n = ll.shape[0]
    sc = _per_event(scales_m, n, "scale_m")
    if n and not (np.all(np.isfinite(ll)) and np.all(np.abs(ll[:, 0]) <= 90.0)):
        raise ValueError("latitudes must be finite and in [-90, 90], longitudes finite")
    if n and not (np.all(sc >= _MIN_PARAM) and np.all(sc <= _MAX_PARAM)):
        raise ValueError("scales_m must lie in [1e-300, 1e300]")
    out = np.empty((n, 2), dtype=np.float64)
    _run(_planar_kernel, (ll, sc, out), n, source or WordSource.from_os(), 20, progress, should_cancel)
    return out


def secure_rr(
    codes,
    eps,
    k: int,
    source: WordSource | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> np.ndarray:
    """k-ary randomized response for integer ``codes`` in ``[0, k)`` with per-event ``eps`` (scalar ok)."""
    cs, ep, k, out = rr_inputs(codes, eps, k, 1, "k must be >= 1")
    _run(_rr_kernel, (cs, ep, np.int64(k), out), len(cs), source or WordSource.from_os(), 3, progress,
         should_cancel)
    return out


def reserve_tail_bound(kind: str, reserve: int = RESERVE_WORDS) -> float:
    """Chernoff upper bound on P(one event of ``kind`` needs more than ``reserve`` words).

    ``P(W > R) <= min_z E[z^W] / z^(R+1)``. ``E[z^W]`` is bounded through the loop structure:
    a ``uniform_below(h)`` costs a geometric number of words with rejection ``q < h/2**64``
    (``q <= 2**-9`` for ``h = t < 2**55``, ``q <= 1/4`` inside Algorithm 1 where ``h = den*K <= 2**62``);
    (numeric: ``t >= 2**21/ε_t``, so ``t >= 2**16`` for ``ε_t <= 32``, assumed here);
    Algorithm 1 with parameter γ makes ``N`` trials, ``P(N >= K) = γ^(K-1)/(K-1)!``, returning 1 iff ``N``
    is odd; in the geometric sampler γ = U/t is averaged over U (the discrete average of an increasing
    function of γ lies below the integral; a 2**-30 slack covers the rest). Categorical assumes ``k <= 2**32``. Returns a float (it
    underflows to 0.0 for the default reserve; see :func:`reserve_tail_log10`).
    """
    return 10.0 ** reserve_tail_log10(kind, reserve)


def reserve_tail_log10(kind: str, reserve: int = RESERVE_WORDS) -> float:
    """log10 of :func:`reserve_tail_bound` (kept separate because the bound underflows)."""
    if kind == "categorical":
        # one decision word, then uniform_below(k) needs more than one word only after rejections,
        # each of probability < k/2**64 <= 2**-32 for k <= 2**32
        return -(reserve - 1) * 32 * math.log10(2.0)
    if kind not in ("numeric", "location"):
        raise ValueError(kind)

    def f_unif(z: float, q: float) -> float:
        return (1 - q) * z / (1 - q * z)

    def alg1(z: float, gamma: float, den_log2: int) -> tuple[float, float]:
        odd = even = 0.0
        p_ge = 1.0  # P(N >= K)
        cost = 1.0  # E[z^words] of the first K trials: trial K draws uniform_below(den*K)
        for kk in range(1, 400):
            cost *= f_unif(z, min(0.25, kk * 2.0 ** (den_log2 - 64)))
            p_ge_next = p_ge * gamma / kk
            term = cost * (p_ge - p_ge_next)
            if kk % 2:
                odd += term
            else:
                even += term
            p_ge = p_ge_next
            if p_ge == 0.0:
                break
        return odd, even

    def log_mgf(z: float) -> float:
        c1, c0 = alg1(z, 1.0, 0)
        if c1 >= 1:
            return math.inf
        mv = c0 / (1 - c1)
        # average over gamma = U/t of Algorithm 1's odd/even parts: exact integral (∫ γ^(K-1)/(K-1)! = 1/K!)
        o_bar = e_bar = 0.0
        cost = 1.0
        for kk in range(1, 160):
            cost *= f_unif(z, min(0.25, kk * 2.0 ** (55 - 64)))
            term = cost * (1.0 / math.factorial(kk) - 1.0 / math.factorial(kk + 1))
            if kk % 2:
                o_bar += term
            else:
                e_bar += term
        o_bar += 2.0**-30  # slack for the Riemann sum over U vs the integral
        e_bar += 2.0**-30
        fu = f_unif(z, 2.0**-9)
        if kind == "numeric":
            succ = fu * o_bar * mv * z
            fail = fu * e_bar + succ * 2.0**-17  # restart when B = 1 and X = 0 (P <= 1/(2t), t >= 2**16)
            if fail >= 1:
                return math.inf
            return math.log(succ / (1 - fail))
        succ = fu * o_bar * mv
        fail = fu * e_bar
        if fail >= 1:
            return math.inf
        return 2 * math.log(succ / (1 - fail)) + math.log(z)

    best = 0.0
    for i in range(1, 400):
        z = 1.0 + i * 0.005
        lm = log_mgf(z)
        if not math.isfinite(lm):
            break
        best = min(best, (lm - (reserve + 1) * math.log(z)) / math.log(10.0))
    return best
