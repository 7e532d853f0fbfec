"""The exponential mechanism that picks one dummy option (DESIGN §6): utilities in [0, 1] snapped to a public grid and an exact integer rejection sampler (no floating-point noise)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..engine.lazyjit import numba  # the real numba is imported on a kernel's first call (cold start)
from .dummy_options import DummyOptions, _word_source
from .securenoise import RESERVE_WORDS, RandomnessExhausted, WordSource, bernoulli_exp, uniform_below

UTILITIES: tuple[str, ...] = ("count", "distance")


# ----------------------------------------------------------------------- exponential mechanism
def utility_scores(options: DummyOptions, utility: str = "count") -> np.ndarray:
    """Utility of each option in [0, 1], best = 1 (module docstring). Any [0, 1] utility has Δu ≤ 1."""
    m = options.n_options
    if m == 0:
        return np.zeros(0)
    if utility == "count":
        if m == 1:
            return np.ones(1)
        return 1.0 - np.arange(m, dtype=np.float64) / (m - 1)
    if utility == "distance":
        d = options.mean_dummy_distance()
        if not np.all(np.isfinite(d)):  # L = ∅: nothing to be near
            return np.ones(m)
        lo, hi = float(d.min()), float(d.max())
        if hi <= lo:
            return np.ones(m)
        return np.clip((hi - d) / (hi - lo), 0.0, 1.0)
    raise ValueError(f"unknown utility {utility!r}; choose one of {', '.join(UTILITIES)}")


#: Utilities are snapped to the grid ``1/UTILITY_GRID`` before the exact draw (see :func:`exponential_mechanism`).
UTILITY_GRID = 1 << 20


#: The selection's ε is capped here (beyond it every option but the best has probability < e^-500).
_EPS_CAP = float(1 << 30)


def _grid_utilities(utilities, sensitivity: float) -> np.ndarray:
    """``v_i = ⌊K·u_i/Δu + 1/2⌋`` (K = :data:`UTILITY_GRID`), as exact integers: round-half-up commutes with
    integer shifts and is monotone, so utilities that differ by at most Δu between neighbouring inputs give
    grid values that differ by at most K — the snapped utility keeps the sensitivity."""
    u = np.asarray(utilities, dtype=np.float64)
    if u.size == 0:
        raise ValueError("the exponential mechanism needs at least one option")
    if not np.all(np.isfinite(u)):
        raise ValueError("utilities must be finite")
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError(f"the utility's sensitivity must be positive, got {sensitivity}")
    x = u * (UTILITY_GRID / sensitivity)  # exact for Δu = 1 (a power-of-two scaling)
    if np.any(np.abs(x) > 2.0**50):
        raise ValueError("utilities must lie within 2^30 sensitivities of 0")
    k = np.floor(x)
    v = (k + (x - k >= 0.5)).astype(np.int64)  # x − k is exact (Sterbenz)
    return v


def _em_parameters(utilities, epsilon: float, sensitivity: float) -> tuple[np.ndarray, int, int]:
    """``(gaps, N, d)``: the selection draws i with probability ∝ ``exp(−N·gaps_i / 2^d)``, i.e. the
    exponential mechanism with grid utilities ``v`` (``gaps = v_max − v``) at ``ε' = N / 2^s ≤ min(ε, 2^30)``,
    ``d = s + 1 + log2 K``. s is the largest with ``s ≤ 41`` and ``N·max(gaps) < 2^63`` (exact uint64 products,
    ``2^d ≤ 2^62``); rounding ε down only spends less, by a relative 2^-41/ε for utilities in [0, 1]."""
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be ≥ 0, got {epsilon}")
    v = _grid_utilities(utilities, sensitivity)
    gaps = v.max() - v
    gap_bits = max(1, int(gaps.max()).bit_length())
    e = min(float(epsilon), _EPS_CAP)
    s = min(41, 63 - gap_bits - (math.frexp(e)[1] if e > 0 else 0))
    num = int(Fraction(e) * Fraction(2) ** s)  # the floor of an exact product
    return gaps.astype(np.uint64), num, s + UTILITY_GRID.bit_length()


def selection_probabilities(utilities: np.ndarray, epsilon: float, *, sensitivity: float = 1.0) -> np.ndarray:
    """The distribution the selection draws from (≈ ``exp(ε·u/(2Δu))``, normalised; see
    :func:`exponential_mechanism` for the grid utilities and the exact ``ε' ≤ ε`` it uses)."""
    if np.asarray(utilities).size == 0:
        return np.zeros(0)
    gaps, num, d = _em_parameters(utilities, epsilon, sensitivity)
    w = np.exp(-(gaps.astype(np.float64) * (num / 2.0**d)))
    return w / w.sum()


@numba.njit(cache=True, nogil=True)
def _em_trials(gaps, num, den, words, pos, reserve):  # pragma: no cover - compiled
    """Rejection trials: propose i uniformly, accept with probability ``exp(−num·gaps[i]/den)`` (exact
    integer Bernoulli). Returns ``(i, pos)``; ``i = −1`` with ``pos ≥ 0`` when fewer than ``reserve`` words
    are left (refill and call again: trials are independent), ``pos < 0`` when a trial ran out of words."""
    m = gaps.shape[0]
    n = words.shape[0]
    while n - pos >= reserve:
        r, pos = uniform_below(np.uint64(m), words, pos)
        if pos < 0:
            return -1, pos
        i = np.int64(r)
        g = gaps[i]
        if g == 0:
            return i, pos
        b, pos = bernoulli_exp(num * g, den, words, pos)
        if pos < 0:
            return -1, pos
        if b:
            return i, pos
    return -1, pos


def exponential_mechanism(utilities: np.ndarray, epsilon: float, rng: np.random.Generator | None = None, *,
                          sensitivity: float = 1.0, words: WordSource | None = None) -> int:
    """Index drawn with probability ``∝ exp(ε·u/(2Δu))`` (McSherry–Talwar 2007, thesis §2.2.5), exactly.

    No floating-point sampling (issue 17, finding 16; Mironov 2012): the utilities are snapped to the grid
    ``Δu/K`` (:func:`_grid_utilities`, sensitivity kept) and ε rounded *down* to ``ε' = N/2^s``
    (:func:`_em_parameters`), so every weight ``exp(−ε'·(v_max − v_i)/(2K))`` has an exact rational exponent.
    Rejection sampling — propose i uniformly with an exact integer draw, accept with the exact Bernoulli
    ``exp(−num/den)`` of Canonne–Kamath–Steinke (:func:`~.securenoise.bernoulli_exp`) — returns i with
    probability ``w_i / Σ w`` *exactly* (an accepted proposal is i with probability ∝ ``(1/m)·w_i``); the
    best option is always accepted, so at most m trials are expected (≈ 1 at the default ε_sel). This is the
    exponential mechanism with utility ``v/K`` at ``ε' ≤ ε``: ε-DP with no floating-point caveat.

    Random words come from ``words`` (a :class:`~.securenoise.WordSource`: OS entropy for exports) or, when
    it is not given, from the Generator ``rng`` (seeded previews). Each trial is started with at least
    :data:`~.securenoise.RESERVE_WORDS` unread words; one needing more (probability far below 1e-100) raises
    :class:`~.securenoise.RandomnessExhausted`.
    """
    gaps, num, d = _em_parameters(utilities, epsilon, sensitivity)
    source = _word_source(rng, words)
    den = np.uint64(1) << np.uint64(d)
    buf = source.words(2 * RESERVE_WORDS)
    pos = 0
    while True:
        i, pos = _em_trials(gaps, np.uint64(num), den, buf, pos, RESERVE_WORDS)
        if i >= 0:
            return int(i)
        if pos < 0:
            raise RandomnessExhausted(f"one trial of the dummy selection needed more than {RESERVE_WORDS} "
                                      "random words (probability < 1e-100); selection aborted")
        pos = source.refill(buf, pos)
