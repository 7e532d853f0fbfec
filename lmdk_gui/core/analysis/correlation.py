"""Temporal privacy loss under temporal correlation (DESIGN §7; thesis §2.3.4, §4.1.3 Definition 10).

Model (Cao et al., "Quantifying differential privacy under temporal correlations", ICDE 2017, as used by
the thesis). An individual's value follows a Markov chain with a *backward* matrix
``P^B_ij = Pr[x_{t-1} = j | x_t = i]`` and a *forward* matrix ``P^F_ij = Pr[x_{t+1} = j | x_t = i]``. The
adversary knows the chain, so a release at one event also leaks about its neighbours. The leakage
propagates through the *loss function* of a matrix,

    L(a) = max over row pairs (q, d) and state subsets S of  ln((1 + (e^a - 1)·q_S) / (1 + (e^a - 1)·d_S)),

and the backward / forward / temporal privacy loss of a budget vector ``ε_t`` are

    BPL_t = L_B(BPL_{t-1}) + ε_t   (BPL_0 = ε_0),   FPL_t = L_F(FPL_{t+1}) + ε_t   (FPL_{n-1} = ε_{n-1}),
    TPL_t = BPL_t + FPL_t - ε_t.

Landmark temporal privacy loss (thesis Definition 10). For every event t let ``U = L ∪ {t}`` (sorted). For
each ``i ∈ U`` with predecessor ``i⁻`` and successor ``i⁺`` in U, run BPL *fresh* over the releases
``i⁻+1 .. i`` and FPL fresh over ``i⁺-1 .. i``; ``α_i = BPL + FPL - ε_i``; the value at t is
``Σ_{i ∈ U} α_i``. When i is the first (last) element of U the run starts at the series start (end).

*Our reading of the boundaries.* The thesis' Eq. (4.1) writes the outputs as ``o_{[i⁻, i]}`` (closed
interval), but its prose says the releases "until the timestamp i⁻ that is exactly before i", the paper
draft (``papers/landmark-solution-draft.tex``) writes them explicitly as ``o_{i⁻+1}, …, o_i`` and
``o_{i⁺-1}, …, o_i`` with ``i⁻ = 0`` / ``i⁺ = max(T)+1`` (1-based) at the ends, and the Markov argument
given just before (knowing the data at ``i⁻`` stops the propagation) needs ``i⁻`` itself excluded — its
release is already counted in ``α_{i⁻}``. We therefore *exclude* ``i⁻`` and ``i⁺``. (The releases strictly
between two consecutive elements of U still enter two terms, the FPL of the left one and the BPL of the
right one; that is the definition.) With ``L = ∅`` this gives ``TPL_t``; for ``t ∈ L`` it gives the
landmark-only total.

Speed. A literal evaluation costs O(n·|L|·n). Here all n values cost O(n) (the GUI can call it live):

* for t strictly between consecutive landmarks ``l < t < r`` only ``α_l``, ``α_r`` and the new ``α_t``
  differ from the landmark-only total ``T_L``. ``α_t`` needs one forward BPL run from ``l+1`` and one
  backward FPL run from ``r-1`` per gap; ``α_l`` needs the FPL at ``l`` of a run that *starts* at ``t-1``,
  and ``α_r`` the BPL at r of a run starting at ``t+1`` — a different run for every t.
* Those runs are compositions ``F_l ∘ F_{l+1} ∘ … ∘ F_{t-1}(0)`` with ``F_k(a) = L(a) + ε_k``. Writing
  ``x = e^a``, every candidate term of L is a Möbius map ``x ↦ (q_S·x + 1 - q_S)/(d_S·x + 1 - d_S)`` and
  adding ``ε_k`` multiplies by ``e^{ε_k}``: when L consists of a *single* Möbius map (always for m = 2 — see
  :class:`LossFunction` — and for every smoothed matrix) each F_k is a non-negative 2×2 matrix and the
  composition is a matrix product, so all the runs of a gap are prefix products: O(1) each. Products are
  kept in the log domain (log-sum-exp "matrix products", renormalised every step), which never
  overflows: losses of thousands of nats (e.g. a perfectly correlated chain) come out exactly.
* Otherwise (m ≥ 3 matrices whose optimal state subset changes with a) the runs of one gap are advanced
  together and two runs are merged as soon as their states are *bitwise equal* (they then stay equal),
  which is exact; it costs O(gap · number of distinct states), i.e. O(n·H) where H is the number of steps
  after which the chain forgets its start (tens to a few thousand), and O(gap²) for chains that never
  forget (zero entries making L(a) = a).

Numerical tolerances. The loss function is evaluated in a form that never overflows (``expm1``/``log1p``
below a = 30, ``ln(q_S + 1/c) − ln(d_S + 1/c)`` with ``ln c = a + log1p(−e^{−a})`` above, so that
no two huge logarithms are subtracted). Candidate Möbius maps that another candidate
dominates for every a ≥ 0 are dropped; a candidate that can exceed a kept one by at most
``PRUNE_TOLERANCE`` = 1e-12 nats (float noise, e.g. the two row orders of a 2×2 matrix) is dropped too and
the worst such excess is reported in :attr:`LossFunction.prune_error` (0 or ~1e-16 in practice). Both
pruning decisions are taken in exact rational arithmetic (the excess's stationary points in 60-digit
decimals), never from float signs: with entries ≲ 1e-12 float noise once dropped the largest candidate.
Nothing else is approximated.
"""

from __future__ import annotations

import decimal
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..engine.lazyjit import numba  # the real numba is imported on a kernel's first call (cold start)
from ..engine.release import normalize_landmarks
from ..kernel.guarantee import landmark_sums

if TYPE_CHECKING:  # pragma: no cover
    from ..engine.release import Release

#: rows of a user-given matrix must sum to 1 within this (they are then renormalised)
ROW_SUM_TOLERANCE = 1e-9
#: a candidate Möbius map is dropped when it can exceed a kept one by at most this many nats
PRUNE_TOLERANCE = 1e-12
#: below this a the loss is computed with expm1/log1p, above it in the log domain
_LOG_SWITCH = 30.0

#: landmark distributions of the thesis' synthetic data (§5.1.3)
DISTRIBUTIONS: tuple[str, ...] = ("skewed", "symmetric", "bimodal", "uniform")


# ---------------------------------------------------------------------------------------------- matrices
def smoothed_matrix(m: int = 2, s: float = 0.1) -> np.ndarray:
    """The thesis' Laplacian-smoothed m-state matrix (§5.1.3, after Cao et al.):
    ``P_ij = (I_ij + s) / Σ_k (I_ik + s) = (I_ij + s) / (1 + m·s)``.

    Smaller s means stronger correlation (s → 0: the identity, a chain that never changes state;
    s → ∞: independent events). The thesis uses m = 2 and s = 1 (weak), 0.1 (moderate), 0.01 (strong).
    """
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 2:
        raise ValueError(f"the number of states m must be an integer ≥ 2, got {m!r}")
    try:
        s = float(s)
    except (TypeError, ValueError):
        raise ValueError(f"the smoothing degree s must be a number, got {s!r}") from None
    if not (math.isfinite(s) and s >= 0.0):
        raise ValueError(f"the smoothing degree s must be finite and ≥ 0, got {s!r}")
    m = int(m)
    p = (np.eye(m) + s) / (1.0 + m * s)
    p.setflags(write=False)
    return p


def validate_matrix(matrix, name: str = "matrix") -> np.ndarray:
    """A validated copy of a row-stochastic matrix: square, finite, non-negative, rows summing to 1 within
    :data:`ROW_SUM_TOLERANCE` (then divided by their sums). Raises ValueError with a clear message."""
    try:
        p = np.array(matrix, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"the {name} must be a square table of numbers") from None
    if p.ndim != 2 or p.shape[0] != p.shape[1] or p.shape[0] == 0:
        raise ValueError(f"the {name} must be square (m × m, m ≥ 1), got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        i, j = np.argwhere(~np.isfinite(p))[0]
        raise ValueError(f"the {name} has a non-finite entry at row {i}, column {j}")
    if np.any(p < 0):
        i, j = np.argwhere(p < 0)[0]
        raise ValueError(f"the {name} has a negative entry at row {i}, column {j}: {p[i, j]!r}")
    sums = p.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > ROW_SUM_TOLERANCE)
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"the {name} must be row-stochastic: row {i} sums to {sums[i]:.12g}, not 1")
    p = p / sums[:, None]
    p.setflags(write=False)
    return p


def reversed_chain(forward, stationary=None) -> np.ndarray:
    """The backward matrix of a stationary chain with forward matrix ``P^F`` (Bayes' rule):
    ``P^B_ij = π_j · P^F_ji / π_i``, with π the stationary distribution (computed when not given)."""
    f = validate_matrix(forward, "forward matrix")
    m = f.shape[0]
    if stationary is None:
        w, v = np.linalg.eig(f.T)
        k = int(np.argmin(np.abs(w - 1.0)))
        pi = np.real(v[:, k])
        pi = pi / pi.sum()
    else:
        pi = np.asarray(stationary, dtype=np.float64)
        if pi.shape != (m,):
            raise ValueError(f"the stationary distribution must have {m} entries")
    if not (np.all(np.isfinite(pi)) and np.all(pi > 0)):
        raise ValueError("the chain needs a stationary distribution with every state positive")
    pi = pi / pi.sum()
    b = pi[None, :] * f.T / pi[:, None]
    return validate_matrix(b / b.sum(axis=1, keepdims=True), "backward matrix")


# --------------------------------------------------------------------------------------- loss function
def _log_expm1(a: np.ndarray) -> np.ndarray:
    """``ln(e^a - 1)`` for a ≥ 0 without overflow (−inf at a = 0)."""
    a = np.asarray(a, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        small = np.log(np.expm1(np.minimum(a, _LOG_SWITCH)))
        large = a + np.log1p(-np.exp(-a))
    return np.where(a < _LOG_SWITCH, small, large)


def _pair_value(a: np.ndarray, q: np.ndarray | float, d: np.ndarray | float) -> np.ndarray:
    """``ln((1 + (e^a-1)q) / (1 + (e^a-1)d))`` broadcast over a and (q, d), overflow-free."""
    a = np.asarray(a, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        c = np.expm1(np.minimum(a, _LOG_SWITCH))
        small = np.log1p(c * q) - np.log1p(c * d)
        lc = _log_expm1(a)
        # ln(1 + c·q) − ln(1 + c·d) = ln(q + 1/c) − ln(d + 1/c): no difference of two huge logs
        large = np.logaddexp(np.log(q), -lc) - np.logaddexp(np.log(d), -lc)
    return np.where(a < _LOG_SWITCH, small, large)


def cao_loss(matrix, a: float) -> float:
    """The loss function of Cao et al. (2017) by their closed form, for one scalar ``a ≥ 0``.

    For each ordered pair of rows (q, d): start from ``J = {j : q_j > d_j}``, compute
    ``v = (Σ_J q·(e^a−1) + 1) / (Σ_J d·(e^a−1) + 1)``, drop every j with ``q_j/d_j ≤ v``, repeat until J
    stops changing. ``L(a) = ln max v`` (0 when no pair has a non-empty J). Ratios and v are compared in
    the log domain, so any a works (``e^a`` itself is never formed). This is the readable reference; the
    fast evaluator is :class:`LossFunction`.
    """
    p = validate_matrix(matrix)
    a = float(a)
    if not (math.isfinite(a) and a >= 0.0):
        raise ValueError(f"the loss function needs a finite a ≥ 0, got {a!r}")
    m = p.shape[0]
    best = 0.0
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    for i in range(m):
        for k in range(m):
            if i == k:
                continue
            q, d = p[i], p[k]
            J = [j for j in range(m) if q[j] > d[j]]
            if not J:
                continue
            while True:
                qs = float(np.sum(q[J]))
                ds = float(np.sum(d[J]))
                log_v = float(_pair_value(np.array(a), qs, ds))
                keep = [j for j in J if logp[i, j] - logp[k, j] > log_v]  # ratio > v  (d_j = 0: +inf)
                if keep == J or not keep:
                    break
                J = keep
            best = max(best, log_v)
    return best


def _candidates(p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """All (q_S, 1−q_S, d_S, 1−d_S) that can be optimal for some a.

    For a pair (q, d) the optimal subset is ``{j : q_j/d_j > v*}`` (adding j raises the ratio iff its own
    ratio exceeds the current value), i.e. a prefix of J sorted by decreasing ``q_j/d_j``; so the loss
    function is the maximum of at most m²(m−1) Möbius maps. Complements are summed directly (not
    ``1 − q_S``) to keep full relative precision for ``q_S`` near 1.
    """
    m = p.shape[0]
    rows: list[tuple[float, float, float, float]] = []
    for i in range(m):
        for k in range(m):
            if i == k:
                continue
            q, d = p[i], p[k]
            inj = q > d
            J = np.flatnonzero(inj)
            if not J.size:
                continue
            with np.errstate(divide="ignore"):
                ratio = np.where(d[J] > 0, q[J] / np.where(d[J] > 0, d[J], 1.0), np.inf)
            order = J[np.argsort(-ratio, kind="stable")]
            q_out = float(np.sum(q[~inj]))
            d_out = float(np.sum(d[~inj]))
            for n_in in range(1, order.size + 1):
                sel, rest = order[:n_in], order[n_in:]
                rows.append((float(np.sum(q[sel])), q_out + float(np.sum(q[rest])),
                             float(np.sum(d[sel])), d_out + float(np.sum(d[rest]))))
    if not rows:  # identical rows (or m = 1): no correlation leaks anything, L ≡ 0
        rows.append((0.0, 1.0, 0.0, 1.0))
    arr = np.array(rows, dtype=np.float64)
    _, first = np.unique(arr[:, [0, 2]], axis=0, return_index=True)
    arr = arr[np.sort(first)]
    return arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]


#: digits of the decimal arithmetic that locates and evaluates the stationary points of an excess
_EXCESS_DIGITS = 60


def _sup_excess(q1: float, d1: float, q2: float, d2: float) -> float:
    """``sup_{c ≥ 0} [ln((1+q2·c)/(1+d2·c)) − ln((1+q1·c)/(1+d1·c))]``: how far candidate 2 can rise above
    candidate 1 (c = e^a − 1).

    The excess is ``h(c) = ln(U/V)`` with ``U = (1+q2·c)(1+d1·c)``, ``V = (1+q1·c)(1+d2·c)``, h(0) = 0, and
    h′ has the sign of ``U′V − UV′ = A·c² + B·c + C`` (the c³ terms cancel) with ``a1 = q2+d1``,
    ``a2 = q2·d1``, ``b1 = q1+d2``, ``b2 = q1·d2``: ``A = a2·b1 − a1·b2``, ``B = 2(a2 − b2)``, ``C = a1 − b1``.
    So the supremum is 0 (at c = 0), h at a positive root of that quadratic, or the limit c → ∞. The
    coefficients are computed exactly (the inputs are binary fractions) and the roots and h in 60-digit
    decimals: in floats, entries ≲ 1e-12 turned the cancelling c³ term into rounding noise whose spurious
    cubic lost the real roots, the excess came out 0 and a candidate that was the loss function's maximum
    for large a was pruned (issue 17, finding 6)."""
    fq1, fd1, fq2, fd2 = (Fraction(x) for x in (q1, d1, q2, d2))
    a1, a2, b1, b2 = fq2 + fd1, fq2 * fd1, fq1 + fd2, fq1 * fd2
    deg_u = 2 if a2 > 0 else (1 if a1 > 0 else 0)  # U ~ lead_u · c^deg_u as c → ∞
    deg_v = 2 if b2 > 0 else (1 if b1 > 0 else 0)
    if deg_u > deg_v:
        return math.inf
    ctx = decimal.Context(prec=_EXCESS_DIGITS, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)

    def dec(x: Fraction) -> decimal.Decimal:
        return ctx.divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator))

    best = 0.0
    if deg_u == deg_v and deg_u > 0:
        lead_u = a2 if deg_u == 2 else a1
        lead_v = b2 if deg_v == 2 else b1
        best = max(best, _log_ratio(dec(lead_u), dec(lead_v), ctx))
    A, B, C = a2 * b1 - a1 * b2, 2 * (a2 - b2), a1 - b1
    roots: list[decimal.Decimal] = []
    if A == 0:
        if B != 0:
            roots.append(dec(-C / B))
    else:
        disc = B * B - 4 * A * C
        if disc >= 0:
            # the cancellation-free pair of roots: t = −(B + sign(B)·√disc)/2, c = t/A and C/t
            root = dec(disc).sqrt(ctx)
            t = ctx.divide(ctx.add(dec(B), root if B >= 0 else root.copy_negate()), decimal.Decimal(-2))
            roots.append(ctx.divide(t, dec(A)))
            if t != 0:
                roots.append(ctx.divide(dec(C), t))
    one = decimal.Decimal(1)
    da1, da2, db1, db2 = dec(a1), dec(a2), dec(b1), dec(b2)
    for c in roots:
        if c > 0:
            u = ctx.add(one, ctx.multiply(c, ctx.add(da1, ctx.multiply(da2, c))))
            v = ctx.add(one, ctx.multiply(c, ctx.add(db1, ctx.multiply(db2, c))))
            best = max(best, _log_ratio(u, v, ctx))
    return best


def _log_ratio(u: decimal.Decimal, v: decimal.Decimal, ctx: decimal.Context) -> float:
    """``ln(u/v)`` for u, v > 0 to float precision: ``log1p`` of the decimal ``(u − v)/v`` (accurate also
    when u ≈ v, where the excess is decided), a decimal logarithm only far out of the float range."""
    x = ctx.divide(ctx.subtract(u, v), v)
    if _HALF_DOWN < x < _FLOAT_RANGE:
        return math.log1p(float(x))
    r = ctx.divide(u, v)
    if 1 / _FLOAT_RANGE < r < _FLOAT_RANGE:
        return math.log(float(r))
    return float(r.ln(ctx))


_HALF_DOWN = decimal.Decimal("-0.5")
_FLOAT_RANGE = decimal.Decimal("1e300")


def _dominated(q: np.ndarray, d: np.ndarray, j: int, others: np.ndarray) -> bool:
    """Whether one of the candidates ``others`` (a mask) is ≥ candidate j for every a ≥ 0, decided exactly:
    ``g_i ≥ g_j`` for all c ≥ 0 iff ``(q_i−d_i) − (q_j−d_j) ≥ 0`` and ``q_i·d_j − q_j·d_i ≥ 0``. Both signs
    are taken from floats where the value is clear of its rounding bound, else from exact rationals."""
    alpha = (q - d) - (q[j] - d[j])
    beta = q * d[j] - q[j] * d
    # error bounds of the float expressions (a few ulps of the magnitudes; 1e-300 covers underflow)
    err_a = 1e-15 * (np.abs(q) + np.abs(d) + abs(q[j]) + abs(d[j]))
    err_b = 1e-15 * (q * d[j] + q[j] * d) + 1e-300
    sure = others & (alpha > err_a) & (beta > err_b)
    if sure.any():
        return True
    unsure = others & (alpha >= -err_a) & (beta >= -err_b)
    fj_q, fj_d = Fraction(float(q[j])), Fraction(float(d[j]))
    for i in np.flatnonzero(unsure):
        fq, fd = Fraction(float(q[i])), Fraction(float(d[i]))
        if (fq - fd) - (fj_q - fj_d) >= 0 and fq * fj_d - fj_q * fd >= 0:
            return True
    return False


class LossFunction:
    """The loss function ``L(a)`` of one row-stochastic matrix, ready for fast repeated evaluation.

    ``L`` is stored as the upper envelope of the candidate Möbius maps (see :func:`_candidates`) that
    survive pruning: a candidate is dropped when another one is at least as large for every a ≥ 0
    (exactly: ``g1 ≥ g2`` for all c ≥ 0 iff ``(q1−d1) − (q2−d2) ≥ 0`` and ``q1·d2 − q2·d1 ≥ 0``, since
    ``N1·D2 − N2·D1 = c·[(q1−d1) − (q2−d2)] + c²·[q1·d2 − q2·d1]``), or when it exceeds a kept one by at
    most :data:`PRUNE_TOLERANCE` (recorded in :attr:`prune_error`).

    For a 2×2 matrix with rows (a, 1−a), (b, 1−b) the two row orders give the maps (a, b) and (1−b, 1−a);
    the formula above shows they never cross (their difference has the sign of ``a(1−a) − b(1−b)``), so a
    single map remains: :attr:`is_mobius` is True and the landmark TPL uses matrix products. The same
    holds for every Laplacian-smoothed matrix.
    """

    def __init__(self, matrix, name: str = "matrix") -> None:
        self.matrix = validate_matrix(matrix, name)
        q, qc, d, dc = _candidates(self.matrix)
        keep = np.ones(q.size, dtype=bool)
        # exact dominance, sequentially so that of two identical maps one survives
        for j in range(q.size):
            others = keep.copy()
            others[j] = False
            if _dominated(q, d, j, others):
                keep[j] = False
        idx = np.flatnonzero(keep)
        prune_error = 0.0
        if idx.size > 1:
            alive = [int(x) for x in idx]
            for j in list(alive):
                for i in alive:
                    if i == j:
                        continue
                    excess = _sup_excess(q[i], d[i], q[j], d[j])
                    if excess <= PRUNE_TOLERANCE:
                        alive.remove(j)
                        prune_error += excess
                        break
            idx = np.array(alive, dtype=np.int64)
        self.q, self.qc, self.d, self.dc = (np.ascontiguousarray(x[idx]) for x in (q, qc, d, dc))
        with np.errstate(divide="ignore"):
            self.lq, self.lqc, self.ld, self.ldc = (np.log(x) for x in (self.q, self.qc, self.d, self.dc))
        for arr in (self.q, self.qc, self.d, self.dc, self.lq, self.lqc, self.ld, self.ldc):
            arr.setflags(write=False)
        #: total excess of the near-duplicates dropped (bound on |our L − exact L| at any a)
        self.prune_error = float(prune_error)

    @property
    def n_maps(self) -> int:
        """Number of Möbius maps in the envelope (1: compositions are matrix products)."""
        return int(self.q.size)

    @property
    def is_mobius(self) -> bool:
        return self.n_maps == 1

    @property
    def sup(self) -> float:
        """``lim_{a→∞} L(a)`` = max ln(q_S/d_S): the most one step of correlation can add (inf when some
        ``d_S = 0``, e.g. a state that can never follow another: then L(a) grows like a)."""
        with np.errstate(divide="ignore"):
            return float(np.max(np.log(self.q) - np.log(self.d)))

    def __call__(self, a):
        """L(a), vectorised over a (a ≥ 0, finite); returns a float for a scalar."""
        arr = np.asarray(a, dtype=np.float64)
        if not (np.all(np.isfinite(arr)) and np.all(arr >= 0)):
            raise ValueError("the loss function needs finite a ≥ 0")
        vals = _pair_value(arr[..., None], self.q, self.d).max(axis=-1)
        vals = np.maximum(vals, 0.0)
        return float(vals) if vals.ndim == 0 else vals

    def __repr__(self) -> str:
        return f"LossFunction(m={self.matrix.shape[0]}, maps={self.n_maps}, sup={self.sup:.6g})"


# ------------------------------------------------------------------------------------- correlation model
@dataclass(frozen=True, eq=False)
class CorrelationModel:
    """Backward and forward transition matrices (same state space) and their loss functions.

    Build with :meth:`smoothed` (the thesis' model), :meth:`from_matrix` (one matrix for both
    directions, as in the thesis and Cao et al.'s experiments), :meth:`from_matrices`, or
    :meth:`from_transition` (a forward chain; the backward matrix by time reversal). Constructing a model
    is cheap for m = 2; keep it while only budgets or landmarks change.
    """

    backward: np.ndarray
    forward: np.ndarray
    description: str = "user-given matrices"
    loss_b: LossFunction = field(init=False, repr=False)
    loss_f: LossFunction = field(init=False, repr=False)

    def __post_init__(self) -> None:
        lb = LossFunction(self.backward, "backward matrix")
        lf = LossFunction(self.forward, "forward matrix")
        if lb.matrix.shape != lf.matrix.shape:
            raise ValueError(f"the backward and forward matrices must have the same size, got "
                             f"{lb.matrix.shape[0]} and {lf.matrix.shape[0]} states")
        object.__setattr__(self, "backward", lb.matrix)
        object.__setattr__(self, "forward", lf.matrix)
        object.__setattr__(self, "loss_b", lb)
        object.__setattr__(self, "loss_f", lf)

    @classmethod
    def smoothed(cls, s: float, m: int = 2) -> CorrelationModel:
        p = smoothed_matrix(m, s)
        return cls(p, p, f"smoothed {m}-state matrix, s = {float(s):g}")

    @classmethod
    def from_matrix(cls, matrix, description: str = "user-given matrix") -> CorrelationModel:
        p = validate_matrix(matrix)
        return cls(p, p, description)

    @classmethod
    def from_matrices(cls, backward, forward, description: str = "user-given matrices") -> CorrelationModel:
        return cls(validate_matrix(backward, "backward matrix"), validate_matrix(forward, "forward matrix"),
                   description)

    @classmethod
    def from_transition(cls, forward, stationary=None,
                        description: str = "user-given chain (backward by time reversal)") -> CorrelationModel:
        f = validate_matrix(forward, "forward matrix")
        return cls(reversed_chain(f, stationary), f, description)

    @property
    def states(self) -> int:
        return int(self.forward.shape[0])

    @property
    def is_fast(self) -> bool:
        """True when both loss functions are single Möbius maps (landmark TPL in O(n))."""
        return self.loss_b.is_mobius and self.loss_f.is_mobius


def read_matrix_file(path: str | os.PathLike) -> CorrelationModel:
    """A correlation model from a file: CSV (or whitespace-separated) numbers — one matrix used in both
    directions — or JSON: a list of rows, ``{"matrix": rows}``, or ``{"backward": rows, "forward": rows}``.
    Raises ValueError naming the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ValueError(f"{p}: no such matrix file") from None
    except OSError as e:
        raise ValueError(f"{p}: cannot read the matrix file ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{p}: the matrix file is not UTF-8 text (bad byte at offset {e.start})") from None
    stripped = text.strip()
    if not stripped:
        raise ValueError(f"{p}: the matrix file is empty")
    try:
        if p.suffix.lower() == ".json" or stripped[0] in "[{":
            try:
                doc = json.loads(stripped)
            except json.JSONDecodeError as e:
                raise ValueError(f"not valid JSON ({e.msg}, line {e.lineno})") from None
            if isinstance(doc, list):
                return CorrelationModel.from_matrix(doc, f"matrix from {p.name}")
            if isinstance(doc, dict):
                if "matrix" in doc:
                    return CorrelationModel.from_matrix(doc["matrix"], f"matrix from {p.name}")
                if "backward" in doc and "forward" in doc:
                    return CorrelationModel.from_matrices(doc["backward"], doc["forward"],
                                                          f"backward/forward matrices from {p.name}")
            raise ValueError('expected a list of rows, {"matrix": rows} or {"backward": rows, "forward": rows}')
        rows = []
        for lineno, line in enumerate(stripped.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            cells = [c for c in line.replace(";", ",").replace(",", " ").split()]
            try:
                rows.append([float(c) for c in cells])
            except ValueError:
                raise ValueError(f"line {lineno} is not a row of numbers: {line[:60]!r}") from None
        if len({len(r) for r in rows}) != 1:
            raise ValueError("the rows have different numbers of entries")
        return CorrelationModel.from_matrix(rows, f"matrix from {p.name}")
    except ValueError as e:
        if str(e).startswith(str(p)):
            raise
        raise ValueError(f"{p}: {e}") from None


# -------------------------------------------------------------------------------------- compiled kernels
@numba.njit(cache=True, nogil=True)
def _lae(x, y):  # pragma: no cover - compiled
    """log(e^x + e^y) with −inf allowed."""
    if x == -np.inf:
        return y
    if y == -np.inf:
        return x
    if x > y:
        return x + math.log1p(math.exp(y - x))
    return y + math.log1p(math.exp(x - y))


@numba.njit(cache=True, nogil=True)
def _loss(a, q, d, lq, ld):  # pragma: no cover - compiled
    """L(a) = max over the candidate maps (overflow-free); L(0) = 0 exactly."""
    best = 0.0
    if a <= 0.0:
        return best
    if a < 30.0:
        c = math.expm1(a)
        for k in range(q.shape[0]):
            v = math.log1p(c * q[k]) - math.log1p(c * d[k])
            if v > best:
                best = v
    else:
        nlc = -(a + math.log1p(-math.exp(-a)))  # −ln(e^a − 1)
        for k in range(q.shape[0]):
            v = _lae(lq[k], nlc) - _lae(ld[k], nlc)  # ln(q + 1/c) − ln(d + 1/c)
            if v > best:
                best = v
    return best


@numba.njit(cache=True, nogil=True)
def _run(eps, start, stop, step, q, d, lq, ld, out):  # pragma: no cover - compiled
    """A fresh BPL (step +1) or FPL (step −1) run over eps[start], eps[start+step], …, up to but not
    including ``stop``; writes the running value to ``out`` (if given) and returns the last one."""
    v = 0.0
    t = start
    while t != stop:
        v = _loss(v, q, d, lq, ld) + eps[t]
        if out.shape[0] > 0:
            out[t] = v
        t += step
    return v


@numba.njit(cache=True, nogil=True)
def _compose_from_zero(e, q, d, lq, ld, mob, out):  # pragma: no cover - compiled
    """``out[j] = F_{g-1} ∘ … ∘ F_j (0)`` for every j, with ``F_k(a) = L(a) + e[k]``.

    Möbius path (``mob`` = [ln q, ln(1−q), ln d, ln(1−d)] of the single map, non-empty): in x = e^a,
    ``F_k`` is the matrix ``[[e^{e_k} q, e^{e_k}(1−q)], [d, 1−d]]``; the suffix products
    ``R_j = M_{g-1} ⋯ M_j`` are built right to left in the log domain and evaluated at x = 1.
    General path: all runs advance together; adjacent runs whose states are bitwise equal are merged
    (exact: they receive the same maps from then on)."""
    g = e.shape[0]
    if g == 0:
        return
    if mob.shape[0] == 4:
        lq1 = mob[0]
        lqc = mob[1]
        ld1 = mob[2]
        ldc = mob[3]
        r00 = 0.0
        r01 = -np.inf
        r10 = -np.inf
        r11 = 0.0
        for j in range(g - 1, -1, -1):
            m00 = e[j] + lq1
            m01 = e[j] + lqc
            n00 = _lae(r00 + m00, r01 + ld1)
            n01 = _lae(r00 + m01, r01 + ldc)
            n10 = _lae(r10 + m00, r11 + ld1)
            n11 = _lae(r10 + m01, r11 + ldc)
            mx = max(max(n00, n01), max(n10, n11))
            r00 = n00 - mx
            r01 = n01 - mx
            r10 = n10 - mx
            r11 = n11 - mx
            v = _lae(r00, r01) - _lae(r10, r11)
            out[j] = v if v > 0.0 else 0.0
        return
    # general path: a stack of groups of consecutive starts; group s covers starts first[s] .. first[s+1]-1
    state = np.empty(g)
    first = np.empty(g, dtype=np.int64)
    top = 0
    for j in range(g):
        for s in range(top):
            state[s] = _loss(state[s], q, d, lq, ld) + e[j]
        state[top] = e[j]
        first[top] = j
        top += 1
        w = 0
        for s in range(1, top):
            if state[s] == state[w]:
                continue  # merge group s into group w (keeps w's first start)
            w += 1
            state[w] = state[s]
            first[w] = first[s]
        top = w + 1
    for s in range(top):
        hi = first[s + 1] if s + 1 < top else g
        for j in range(first[s], hi):
            out[j] = state[s]


@numba.njit(cache=True, nogil=True)
def _landmark_tpl(eps, lm, bq, bd, blq, bld, bmob, fq, fd, flq, fld, fmob, out):  # pragma: no cover
    n = eps.shape[0]
    k = lm.shape[0]
    none = np.empty(0)
    bl = np.empty(k)  # BPL at landmark j over (l_{j-1}, l_j]
    fl = np.empty(k)  # FPL at landmark j over [l_j, l_{j+1})
    total = 0.0
    for j in range(k):
        prev = lm[j - 1] if j > 0 else -1
        nxt = lm[j + 1] if j < k - 1 else n
        bl[j] = _run(eps, prev + 1, lm[j] + 1, 1, bq, bd, blq, bld, none)
        fl[j] = _run(eps, nxt - 1, lm[j] - 1, -1, fq, fd, flq, fld, none)
        total += bl[j] + fl[j] - eps[lm[j]]
    for t in range(n):
        out[t] = total
    bt = np.empty(n)
    ft = np.empty(n)
    tmp = np.empty(n)
    for gi in range(k + 1):
        lo = lm[gi - 1] if gi > 0 else -1
        hi = lm[gi] if gi < k else n
        g = hi - lo - 1
        if g <= 0:
            continue
        _run(eps, lo + 1, hi, 1, bq, bd, blq, bld, bt)  # α_t's BPL: fresh from lo+1
        _run(eps, hi - 1, lo, -1, fq, fd, flq, fld, ft)  # α_t's FPL: fresh from hi-1
        for t in range(lo + 1, hi):
            out[t] += bt[t] + ft[t] - eps[t]
        if lo >= 0:  # the landmark before t: its FPL now runs from t-1 down to lo
            seg = eps[lo:hi - 1][::-1].copy()
            _compose_from_zero(seg, fq, fd, flq, fld, fmob, tmp)
            for j in range(g):
                out[hi - 1 - j] += tmp[j] - fl[gi - 1]
        if hi < n:  # the landmark after t: its BPL now runs from t+1 up to hi
            seg = eps[lo + 2:hi + 1].copy()
            _compose_from_zero(seg, bq, bd, blq, bld, bmob, tmp)
            for j in range(g):
                out[lo + 1 + j] += tmp[j] - bl[gi]


@numba.njit(cache=True, nogil=True)
def _gap_tpl(eps, lm, bq, bd, blq, bld, fq, fd, flq, fld, out):  # pragma: no cover - compiled
    n = eps.shape[0]
    k = lm.shape[0]
    bt = np.empty(n)
    ft = np.empty(n)
    for gi in range(k + 1):
        lo = lm[gi - 1] if gi > 0 else -1
        hi = lm[gi] if gi < k else n
        if hi - lo <= 1:
            continue
        _run(eps, lo + 1, hi, 1, bq, bd, blq, bld, bt)
        _run(eps, hi - 1, lo, -1, fq, fd, flq, fld, ft)
        for t in range(lo + 1, hi):
            out[t] += bt[t] + ft[t] - 2.0 * eps[t]


# ---------------------------------------------------------------------------------------------- public
def _budgets(budgets) -> np.ndarray:
    b = np.ascontiguousarray(budgets, dtype=np.float64)
    if b.ndim != 1:
        raise ValueError("budgets must be a 1-D array")
    if not np.all(np.isfinite(b)):
        raise ValueError("budgets must be finite")
    if np.any(b < 0):
        raise ValueError("budgets must be ≥ 0")
    return b


def _args(loss: LossFunction) -> tuple:
    mob = np.array([loss.lq[0], loss.lqc[0], loss.ld[0], loss.ldc[0]]) if loss.is_mobius else np.empty(0)
    return loss.q, loss.d, loss.lq, loss.ld, mob


def bpl(budgets, model: CorrelationModel) -> np.ndarray:
    """Backward privacy loss ``BPL_t = L_B(BPL_{t-1}) + ε_t`` with ``BPL_0 = ε_0``."""
    b = _budgets(budgets)
    out = np.empty(b.size)
    q, d, lq, ld, _ = _args(model.loss_b)
    _run(b, 0, b.size, 1, q, d, lq, ld, out)
    return out


def fpl(budgets, model: CorrelationModel) -> np.ndarray:
    """Forward privacy loss ``FPL_t = L_F(FPL_{t+1}) + ε_t`` with ``FPL_{n-1} = ε_{n-1}``."""
    b = _budgets(budgets)
    out = np.empty(b.size)
    q, d, lq, ld, _ = _args(model.loss_f)
    _run(b, b.size - 1, -1, -1, q, d, lq, ld, out)
    return out


def tpl(budgets, model: CorrelationModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(BPL, FPL, TPL)`` per event, ``TPL_t = BPL_t + FPL_t − ε_t`` (Cao et al.; thesis Eq. 2.2)."""
    b = _budgets(budgets)
    back = bpl(b, model)
    fwd = fpl(b, model)
    return back, fwd, back + fwd - b


def landmark_tpl(budgets, landmarks, model: CorrelationModel) -> np.ndarray:
    """Landmark temporal privacy loss (thesis Definition 10) at every event t, in O(n) for models with
    :attr:`CorrelationModel.is_fast` (see the module docstring for the algorithm and our reading of the
    boundaries). ``landmarks``: row positions (any order, duplicates ignored)."""
    b = _budgets(budgets)
    lm = normalize_landmarks(landmarks, b.size)
    out = np.empty(b.size)
    if b.size == 0:
        return out
    bq, bd, blq, bld, bmob = _args(model.loss_b)
    fq, fd, flq, fld, fmob = _args(model.loss_f)
    _landmark_tpl(b, lm, bq, bd, blq, bld, bmob, fq, fd, flq, fld, fmob, out)
    return out


def gap_tpl(budgets, landmarks, model: CorrelationModel) -> np.ndarray:
    """A *diagnostic*, not Definition 10: ``Σ_{i ∈ L} ε_i + TPL_t`` where ``TPL_t`` is computed inside t's
    gap between landmarks (fresh runs from the landmark before to the landmark after), i.e. only the
    regular event's own correlation is counted and the landmarks keep their plain budgets. For t ∈ L it is
    the landmark sum. It is what the thesis' explanation of §5.2.2 describes ("the backward/forward
    privacy loss accumulates more over time in wider spaces without landmarks") and it reproduces the
    trends of its Fig. 5.3, which :func:`landmark_tpl` does not (see the notes, tpl.md)."""
    b = _budgets(budgets)
    lm = normalize_landmarks(landmarks, b.size)
    out = landmark_sums(b, lm)
    if b.size:
        bq, bd, blq, bld, _ = _args(model.loss_b)
        fq, fd, flq, fld, _ = _args(model.loss_f)
        _gap_tpl(b, lm, bq, bd, blq, bld, fq, fd, flq, fld, out)
    return out


def no_correlation_value(budgets, landmarks) -> np.ndarray:
    """The landmark sum without correlation, ``Σ_{i ∈ L ∪ {t}} ε_i`` per t (the value Definition 10
    reduces to when the chain is independent, i.e. L ≡ 0)."""
    b = _budgets(budgets)
    return landmark_sums(b, normalize_landmarks(landmarks, b.size))


def landmark_tpl_for_schemes(releases: Mapping[str, Release], model: CorrelationModel) -> dict[str, np.ndarray]:
    """:func:`landmark_tpl` of every release (each with its own budgets and landmark set)."""
    return {name: landmark_tpl(rel.budgets, rel.landmarks, model) for name, rel in releases.items()}


# ------------------------------------------------------------------------------ synthetic landmark sets
def synthetic_landmarks(n: int, fraction: float, distribution: str, seed: int | Sequence[int] | None = None, *,
                        scale_divisor: float = 10.0) -> np.ndarray:
    """A landmark set with ``round(fraction·n)`` events drawn without replacement from a distribution over
    the rows 0..n−1 (thesis §5.1.3, synthetic data):

    * ``"skewed"``: a normal density centred on the first row (a half-normal): landmarks crowd the
      beginning of the series (mirror the rows, ``n−1−L``, for the end);
    * ``"symmetric"``: centred on the middle row;
    * ``"bimodal"``: the mixture of the two mirrored skewed densities (both ends);
    * ``"uniform"``: every row equally likely.

    As in the thesis the scale is the series length over a constant, ``n / scale_divisor``, so the shapes
    do not depend on n. Weighted sampling without replacement uses Efraimidis–Spirakis keys
    (``log(u)/w``, keep the k largest), which is exact successive sampling and O(n log n). Returns sorted
    int64 rows; the same (n, fraction, distribution, seed) always gives the same set.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if not (isinstance(fraction, (int, float, np.floating)) and 0.0 <= float(fraction) <= 1.0):
        raise ValueError(f"the landmark fraction must be between 0 and 1, got {fraction!r}")
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"unknown landmark distribution {distribution!r}; choose one of {', '.join(DISTRIBUTIONS)}")
    if not (math.isfinite(scale_divisor) and scale_divisor > 0):
        raise ValueError("scale_divisor must be positive")
    n = int(n)
    k = int(round(float(fraction) * n))
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    if k == n:
        return np.arange(n, dtype=np.int64)
    t = np.arange(n, dtype=np.float64)
    scale = n / scale_divisor

    def bell(centre: float) -> np.ndarray:
        return np.exp(-0.5 * ((t - centre) / scale) ** 2)

    if distribution == "uniform":
        w = np.ones(n)
    elif distribution == "skewed":
        w = bell(0.0)
    elif distribution == "symmetric":
        w = bell((n - 1) / 2.0)
    else:
        w = bell(0.0) + bell(n - 1.0)
    w = np.maximum(w, np.finfo(np.float64).tiny)
    rng = np.random.default_rng(seed)
    keys = np.log(rng.random(n)) / w
    chosen = np.argpartition(-keys, k - 1)[:k]
    return np.sort(chosen).astype(np.int64)


def regular_distances(n: int, landmarks) -> np.ndarray:
    """For every regular event, the number of events between it and the nearest landmark or series edge
    (thesis Fig. 5.2's distance). Its mean is the "average regular–landmark distance"."""
    lm = normalize_landmarks(landmarks, n)
    t = np.arange(n)
    regular = np.ones(n, dtype=bool)
    regular[lm] = False
    pos = np.searchsorted(lm, t)
    prev = np.where(pos > 0, lm[np.maximum(pos - 1, 0)] if lm.size else -1, -1)
    nxt = np.where(pos < lm.size, lm[np.minimum(pos, max(lm.size - 1, 0))] if lm.size else n, n)
    dist = np.minimum(t - prev - 1, nxt - t - 1)
    return dist[regular]


def synthetic_study(n: int = 100, fractions: Iterable[float] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0),
                    distributions: Iterable[str] = DISTRIBUTIONS, s_values: Iterable[float] = (1.0, 0.1, 0.01),
                    epsilon: float = 1.0, repeats: int = 100, seed: int = 0) -> list[dict]:
    """The thesis' §5.2.2 experiment: Uniform budgets ``ε/(|L|+1)`` on synthetic landmark sets, landmark TPL
    under a smoothed 2-state chain. One record per (s, distribution, fraction) with the means over
    ``repeats`` landmark draws of: the maximum over t of the landmark TPL (``max_tpl``), its mean over t
    (``mean_tpl``), the maximum without correlation (``no_correlation``) and the mean regular-event
    distance (``distance``); ``max_gap_tpl`` is the same maximum for the :func:`gap_tpl` diagnostic."""
    fractions = tuple(fractions)
    distributions = tuple(distributions)
    models = [(float(s), CorrelationModel.smoothed(s)) for s in s_values]
    records = []
    for dist in distributions:
        for fi, frac in enumerate(fractions):
            sets = [synthetic_landmarks(n, frac, dist, seed=[seed, fi, r, DISTRIBUTIONS.index(dist)])
                    for r in range(repeats)]
            budgets = [np.full(n, epsilon / (lm.size + 1)) for lm in sets]
            nc = float(np.mean([no_correlation_value(b, lm).max() for b, lm in zip(budgets, sets, strict=True)]))
            dd = [regular_distances(n, lm) for lm in sets]
            distance = float(np.mean([x.mean() for x in dd if x.size])) if any(x.size for x in dd) else 0.0
            for s, model in models:
                curves = [landmark_tpl(b, lm, model) for b, lm in zip(budgets, sets, strict=True)]
                records.append({
                    "s": s, "distribution": dist, "fraction": float(frac), "landmarks": int(round(frac * n)),
                    "max_tpl": float(np.mean([c.max() for c in curves])),
                    "mean_tpl": float(np.mean([c.mean() for c in curves])),
                    "no_correlation": nc, "distance": distance,
                    "max_gap_tpl": float(np.mean([gap_tpl(b, lm, model).max()
                                                  for b, lm in zip(budgets, sets, strict=True)])),
                })
    return records
