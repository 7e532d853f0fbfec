"""The independent landmark-sum check (thesis Theorem 7, DESIGN §2).

A release is (ε, L)-landmark private when, for every event t, ``sum(ε_i for i in L ∪ {t}) ≤ ε``.
This module checks that on the *budgets alone*, knowing nothing of how a scheme produced them, so that a
bug in a scheme cannot vouch for itself. It runs in O(n): the sum over ``L ∪ {t}`` is the landmark sum
``S_L`` plus ``ε_t`` when ``t ∉ L``, and just ``S_L`` when ``t ∈ L``.

Floating point can only make the verdict *stricter*: the float sum of m non-negative numbers, in any
order, is within a factor ``(1 ± γ_m)``, ``γ_m = m·u/(1 − m·u)`` (u = 2⁻⁵³) of the exact sum (Higham,
*Accuracy and Stability of Numerical Algorithms*, §4.2). The verdict is "holds" only if the computed worst
sum *inflated by that bound* is ≤ ε, so "holds" implies the exact real sum of the budgets is ≤ ε.
The schemes therefore allocate from ``allocatable(ε, n)``, a hair below ε, which leaves room for that
inflation (relative cost ≤ 10⁻⁹ at a million events).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine.lazyjit import numba  # the real numba is imported on a kernel's first call (cold start)

_U = 2.0**-53


def _gamma(m: int) -> float:
    mu = m * _U
    return mu / (1.0 - mu)


def allocatable(epsilon: float, n: int) -> float:
    """The total every scheme allocates against: ε shrunk by a margin larger than the check's rounding
    allowance for n events (so that correct allocations always pass the conservative check)."""
    margin = max(1e-12, 8.0 * (n + 8) * _U)
    return epsilon * (1.0 - margin)


@dataclass(frozen=True)
class GuaranteeResult:
    epsilon: float
    landmark_sum: float  # S_L = sum of ε_i over the landmarks
    worst: float  # max over t of sum(ε_i, i in L ∪ {t}) as computed
    worst_row: int  # an event achieving the worst sum (-1 for an empty series)
    holds: bool
    reason: str = ""

    def as_text(self) -> str:
        mark = "holds" if self.holds else "VIOLATED"
        return f"landmark sum {self.worst:.6g} ≤ ε = {self.epsilon:.6g}: {mark}"


def landmark_sums(budgets: np.ndarray, landmarks: np.ndarray) -> np.ndarray:
    """Per-event sums ``sum(ε_i, i in L ∪ {t})`` for every t, in O(n)."""
    b = np.asarray(budgets, dtype=np.float64)
    lm = np.asarray(landmarks, dtype=np.int64)
    s_l = float(np.sum(b[lm])) if lm.size else 0.0
    out = s_l + b
    if lm.size:
        out[lm] = s_l
    return out


def check_guarantee(budgets: np.ndarray, landmarks: np.ndarray, epsilon: float) -> GuaranteeResult:
    """Verdict on the budgets alone. Never says "holds" for budgets whose exact sum exceeds ε."""
    b = np.asarray(budgets, dtype=np.float64)
    lm = np.asarray(landmarks, dtype=np.int64)
    n = b.shape[0]
    if b.ndim != 1:
        return GuaranteeResult(epsilon, float("nan"), float("nan"), -1, False, "budgets must be a 1-D array")
    lm = np.ascontiguousarray(lm)
    status = _landmarks_status(lm, n)
    if status == _OUTSIDE:
        return GuaranteeResult(epsilon, float("nan"), float("nan"), -1, False, "landmark outside the series")
    if status == _UNSORTED:
        return GuaranteeResult(epsilon, float("nan"), float("nan"), -1, False,
                               "landmarks must be sorted and distinct")
    if not (np.isfinite(epsilon) and epsilon > 0):
        return GuaranteeResult(epsilon, float("nan"), float("nan"), -1, False, "ε must be positive")
    if n == 0:
        return GuaranteeResult(epsilon, 0.0, 0.0, -1, True)
    lo, hi, at = extremes_at(b)
    # min/max propagate NaN: finite and ≥ 0 bounds prove every budget is, in two reductions without a
    # temporary array; otherwise the checks below find and name the bad event.
    if not (np.isfinite(lo) and np.isfinite(hi) and lo >= 0):
        return _bad_budgets(b, epsilon)
    s_l = _landmark_total(b, lm)
    if lm.size < n:
        # The first regular event with the largest budget: usually the first event holding the overall maximum
        # (``at``) is regular; else a scan that stops at the first regular one holding it; else (only landmarks
        # hold it) the landmarks are masked out on one copy.
        k = int(np.searchsorted(lm, at))
        regular = not (k < lm.size and lm[k] == at)
        worst_row = at if regular else int(_first_regular_at(b, lm, hi))  # (any strides: views not copied)
        if worst_row < 0:
            masked = b.copy()
            masked[lm] = -1.0
            worst_row = int(np.argmax(masked))
        worst = s_l + float(b[worst_row])
    else:
        worst_row = int(lm[int(np.argmax(b[lm]))])
        worst = s_l
    # m + 1 float additions went into `worst`, one multiplication into the inflated bound.
    inflated = worst * (1.0 + _gamma(int(lm.size) + 3))
    holds = bool(inflated <= epsilon)
    reason = "" if holds else f"the sum over L ∪ {{{worst_row}}} is {worst:.17g} > ε = {epsilon:.17g}"
    return GuaranteeResult(epsilon, s_l, worst, worst_row, holds, reason)


def is_constant(a: np.ndarray) -> bool:
    """Whether ``a`` is one value seen many times: a zero-stride view, such as the budgets of a scheme that
    gives every event the same ε_t (release.constant_budgets). A property of the array, not of a scheme."""
    return a.ndim == 1 and a.shape[0] > 1 and a.strides[0] == 0


def extremes_at(b: np.ndarray) -> tuple[float, float, int]:
    """(min, max, the first event holding the max) of a non-empty 1-D array (NaN: NaN, NaN and the first NaN).
    A zero-stride view (equal budgets stored as one float) holds one value at every event: that value, read
    once, and event 0. Otherwise numpy's two passes: argmax instead of max costs the same and spares the
    check a scan for that event (Adaptive's largest budget is often near the end: ≈ 1 ms at 10^6 events)."""
    if is_constant(b):
        v = float(b[0])
        return v, v, 0
    at = int(np.argmax(b))
    return float(b.min()), float(b[at]), at


def _landmark_total(b: np.ndarray, lm: np.ndarray) -> float:
    """S_L = the sum of the landmarks' budgets, numpy's pairwise sum of ``b[lm]``. A zero-stride ``b`` holds
    its one value at every landmark: that value seen m times is summed without gathering m floats first
    (the same pairwise order over the same values, so the same bits; 0.1 against 0.3–0.5 ms for 2·10^5
    landmarks, three times a click)."""
    if not lm.size:
        return 0.0
    if is_constant(b):
        return float(np.sum(np.broadcast_to(b[0], lm.shape)))
    return float(np.sum(b[lm]))


_OK, _OUTSIDE, _UNSORTED = 0, 1, 2


@numba.njit(cache=True, nogil=True)
def _landmarks_status(lm, n):  # pragma: no cover - compiled
    """_OUTSIDE when a row is outside [0, n), else _UNSORTED when the rows are not strictly increasing
    (accumulated without branches, so the loop vectorises)."""
    outside = False
    unsorted = False
    for j in range(lm.shape[0]):
        outside |= (lm[j] < 0) | (lm[j] >= n)
    for j in range(1, lm.shape[0]):
        unsorted |= lm[j] <= lm[j - 1]
    return _OUTSIDE if outside else (_UNSORTED if unsorted else _OK)


@numba.njit(cache=True, nogil=True)
def _first_regular_at(b, lm, value):  # pragma: no cover - compiled
    """The first event t ∉ lm (sorted) with b[t] == value, or −1. Only an event holding ``value`` is looked
    up among the landmarks (a pointer that only moves forward), so the scan has one predictable branch."""
    j = 0
    m = lm.shape[0]
    for t in range(b.shape[0]):
        if b[t] == value:
            while j < m and lm[j] < t:
                j += 1
            if j == m or lm[j] != t:
                return t
    return -1


def _bad_budgets(b: np.ndarray, epsilon: float) -> GuaranteeResult:
    """The verdict on budgets that are not all finite and ≥ 0, naming the first bad event."""
    if not np.all(np.isfinite(b)):
        return GuaranteeResult(epsilon, float("nan"), float("inf"), int(np.argmin(np.isfinite(b))), False,
                               "a budget is NaN or infinite")
    if np.any(b < 0):
        return GuaranteeResult(epsilon, float("nan"), float("nan"), int(np.argmax(b < 0)), False,
                               "a budget is negative")
    raise AssertionError("unreachable: min/max said a budget was NaN, infinite or negative")


class GuaranteeError(RuntimeError):
    """Raised when something tries to publish budgets that fail the landmark-sum check."""

    def __init__(self, result: GuaranteeResult, scheme: str = "") -> None:
        what = f"{scheme} " if scheme else ""
        super().__init__(
            f"refusing to release: the {what}budgets fail the landmark-privacy check "
            f"({result.reason or result.as_text()})"
        )
        self.result = result
