"""Dummy landmark selection: hide *which* events are landmarks (DESIGN §6, thesis §4.2).

A release's budgets reveal the landmark set L (thesis Example 4.2.1: Skip's zeros, Uniform's ``ε/(|L|+1)``,
Adaptive's pattern). The module adds *dummy* landmarks from the regular events ``T \\ L`` so that the
scheme runs on a larger set ``L' ⊃ L`` and the true landmarks hide among the dummies. It works in two
steps (thesis §4.2.3):

1. A *generator* returns nested options ``L ⊂ L'_1 ⊂ L'_2 ⊂ … ⊂ L'_m = T`` (``m = |T \\ L|``; option ``i``,
   0-based, has ``i + 1`` dummies). Nested options are exactly an ordering of ``T \\ L``, so they are stored
   compactly as the *order* in which dummies are added (:class:`RowOptions`: Optimal, Heuristic) or, for
   Partitioned, as the order in which histogram bins are incremented (:class:`HistogramOptions`).
2. The *exponential mechanism* with ``ε_sel = share·ε`` (default 1 %, thesis §5.3.2) picks one option with
   probability ∝ ``exp(ε_sel·u/2)``, ``u ∈ [0, 1]`` (so ``Δu = 1``). The release then runs on ``L'`` with
   ``ε − ε_sel`` (sequential composition, thesis Theorem 2): :func:`select_dummies` does both steps.
   The draw is exact (integer rejection sampling on utilities snapped to a 2^-20 grid, no floating-point
   noise; :func:`exponential_mechanism`), as is Partitioned's within-bin draw of rows.

Readings of the thesis that are ours (the thesis leaves them open)
-----------------------------------------------------------------
* **evalSeq** ("the standard deviation of all the distances from the previous/next landmark", §4.2.3):
  the population standard deviation, over the *regular* events ``t ∈ T \\ L'``, of the distance (in rows)
  from ``t`` to its nearest *anchor*, where the anchors are the landmarks and the two series edges (virtual
  anchors at rows −1 and n). This is the thesis' own model of an event's temporal distance in §5.2.2
  ("the nearest landmark or the time series edge"); it is defined for ``L = ∅`` too, and is 0 when there
  is no regular event left. See :func:`evaluate_sequence`.
* **Optimal** (Algorithm 1): a valid option chain is an ordering of ``T \\ L``; its score is
  ``|mean_i evalSeq(L'_i) − evalSeq(L)|`` over its m sets (the pseudo-code's line 7, with the comparison of
  lines 8–11 done once per chain, after the inner loop, as the text describes: "an overall similarity
  score for each option"). The chain with the lowest score wins.
* **Heuristic** (Algorithm 2): greedily adds the regular event whose addition gives the evalSeq closest to
  ``evalSeq(L)``.
* **Partitioned** (Algorithm 3): bins of an integer width ``h`` rows (Freedman–Diaconis width
  ``2·IQR(L)·|L|^(−1/3)`` over the landmark *rows*, rounded up; one bin over T when the IQR is 0, i.e.
  ``|L| ≤ 1``, as numpy's ``'fd'`` rule falls back to a single bin) tile ``T = [0, n)``; the last bin may be
  shorter. The histogram counts landmarks per bin; a bin's capacity is its number of rows (the
  pseudo-code's ``h_i + 1 ≤ h``, with the real size of a shorter last bin). Each step adds one to the
  non-full bin that makes the sum-normalised histogram closest in Euclidean distance to the original one.
  Lines 15–16 belong inside the while loop and ``opts ← opt`` means *append* (otherwise nothing is nested).
* **Ties** (Algorithms 1–3 use a strict ``<`` in a left-to-right loop, so the first candidate wins): the
  lowest row (Heuristic), the lowest bin (Partitioned, decided exactly in integers), the first ordering
  in lexicographic order of rows (Optimal). Floating-point scores within ``1e-9·(1 + evalSeq(L))`` of the
  minimum count as tied, so that mathematically equal scores computed in different orders tie as well.
* **Turning a histogram into rows**: the selected histogram says how many dummies each bin receives; they
  are drawn uniformly without replacement from that bin's regular rows ("sampling without replacement
  from T \\ L according to the selected histogram's probability density function", §4.2.3).
* **Utilities** (§4.2.3 "Utility score function"), both in [0, 1] with the best option at 1:
  ``"count"``: fewer dummies is better, ``u_i = 1 − i/(m − 1)``; ``"distance"``: dummies closer in time to
  the actual landmarks are better: the mean, over the option's dummies, of the distance (rows) to the
  nearest landmark of L, min–max scaled over the options (``u = 1`` for the closest). For Partitioned the
  distance of a bin's dummies is its expected value under the uniform within-bin draw. With ``L = ∅`` there
  is no landmark to be close to and every option gets ``u = 1``.

Caveat (the thesis does not discuss it): the option set itself depends on L (every option contains L),
so the ε_sel-DP statement of the exponential mechanism, which assumes a fixed output range, protects the
*choice among the options*, not membership of L as such; a true landmark is in L' with probability 1.
The module hides which members of L' are the landmarks, as the thesis intends, and spends ε_sel on it.

Cost and limits (measured on the 2-core development machine, see tests/benchmarks/bench_dummies.py):
Optimal enumerates ``m!`` chains and refuses ``m > OPTIMAL_MAX_REGULAR``; Heuristic is ``O(m·n)`` worst
case after the incremental evaluation of each candidate in O(1); Partitioned is ``O(m·B₊)`` with ``B₊`` the
number of bins holding landmarks (≤ ``n^(3/5)``), milliseconds at ``n = 10^5``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from ..engine.lazyjit import numba  # the real numba is imported on a kernel's first call (cold start)
from ..engine.release import normalize_landmarks
from .securenoise import RESERVE_WORDS, RandomnessExhausted, WordSource, bernoulli_exp, uniform_below

GENERATORS: tuple[str, ...] = ("partitioned", "heuristic", "optimal")
UTILITIES: tuple[str, ...] = ("count", "distance")
GENERATOR_LABELS = {"partitioned": "Partitioned", "heuristic": "Heuristic", "optimal": "Optimal"}
UTILITY_LABELS = {"count": "Fewer dummies", "distance": "Dummies near landmarks"}

#: Default share of ε spent on the selection (thesis §5.3.2: 1 % or less).
DEFAULT_SHARE = 0.01

#: Optimal enumerates |T \ L|! chains: 10 regular events take ≈ 0.1 s, 11 ≈ 1 s, 12 ≈ 16 s (measured,
#: tests/benchmarks/bench_dummies.py). Beyond 11 regular events Optimal is refused.
OPTIMAL_MAX_REGULAR = 11

#: Heuristic takes ≤ ≈ 2 s up to this many events whatever the landmarks (worst case: no landmark, one long
#: gap, O(|T \ L|·n)); with scattered landmarks it is much faster (20 % landmarks, n = 10^5: ≈ 1 s).
#: Larger series are allowed, only slow (measured, tests/benchmarks/bench_dummies.py).
HEURISTIC_COMFORT_N = 20_000

_TIE_REL = 1e-9


# ------------------------------------------------------------------------------------- evalSeq
def nearest_anchor_distance(n: int, landmarks: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Distance (rows) from each of ``rows`` to its nearest anchor: a landmark or a series edge (rows −1, n)."""
    anchors = np.concatenate(([-1], np.asarray(landmarks, dtype=np.int64), [n]))
    idx = np.searchsorted(anchors, rows, side="right")
    prev = anchors[idx - 1]
    nxt = anchors[np.minimum(idx, anchors.size - 1)]
    return np.minimum(rows - prev, nxt - rows)


def evaluate_sequence(n: int, landmarks) -> float:
    """``evalSeq`` of the thesis (Algorithms 1–2) for landmark set ``landmarks`` over ``T = 0..n-1``.

    The population standard deviation, over the regular events, of each one's distance to its nearest
    anchor (landmark or series edge, see the module docstring); 0 when no regular event is left. Computed
    from scratch in O(n); the generators update it incrementally.
    """
    lm = normalize_landmarks(landmarks, n)
    regular = np.setdiff1d(np.arange(n, dtype=np.int64), lm, assume_unique=True)
    if regular.size == 0:
        return 0.0
    return float(np.std(nearest_anchor_distance(n, lm, regular)))


def landmark_distance(n: int, landmarks: np.ndarray) -> np.ndarray:
    """Distance (rows) from every row to the nearest landmark (no edges); NaN everywhere when L = ∅."""
    rows = np.arange(n, dtype=np.int64)
    lm = np.asarray(landmarks, dtype=np.int64)
    if lm.size == 0:
        return np.full(n, np.nan)
    idx = np.searchsorted(lm, rows)
    prev = lm[np.maximum(idx - 1, 0)]
    nxt = lm[np.minimum(idx, lm.size - 1)]
    return np.minimum(np.abs(rows - prev), np.abs(nxt - rows)).astype(np.float64)


# ------------------------------------------------------------------------------------- options
@dataclass(frozen=True, eq=False)
class RowOptions:
    """Nested options as the order in which dummies are added: option ``i`` is ``L ∪ order[:i+1]``."""

    generator: str
    n: int
    landmarks: np.ndarray  # L, sorted int64
    order: np.ndarray  # a permutation of T \ L (int64)

    @property
    def n_options(self) -> int:
        return int(self.order.size)

    def sizes(self) -> np.ndarray:
        """|L'| of each option: |L|+1 … n."""
        return self.landmarks.size + np.arange(1, self.n_options + 1, dtype=np.int64)

    def option(self, i: int) -> np.ndarray:
        """The sorted landmark set L' of option ``i`` (0-based; it has ``i + 1`` dummies)."""
        _check_index(i, self.n_options)
        return np.sort(np.concatenate((self.landmarks, self.order[: i + 1])))

    def mean_dummy_distance(self) -> np.ndarray:
        """Per option, the mean distance (rows) of its dummies to the nearest landmark of L (NaN if L = ∅)."""
        d = landmark_distance(self.n, self.landmarks)[self.order]
        return np.cumsum(d) / np.arange(1, d.size + 1)

    def materialise(self, i: int, rng: np.random.Generator | WordSource | None = None) -> np.ndarray:
        """L' of option ``i`` (the rows are already decided; ``rng`` is not used)."""
        return self.option(i)


@dataclass(frozen=True, eq=False)
class HistogramOptions:
    """Partitioned's nested options: histograms of L' over bins of ``bin_width`` rows.

    Option ``i`` is ``hist0 + bincount(bin_order[:i+1])``; it becomes rows by :meth:`materialise`.
    """

    n: int
    landmarks: np.ndarray  # L, sorted int64
    bin_width: int  # h rows (the last bin may be shorter)
    capacity: np.ndarray  # rows per bin
    hist0: np.ndarray  # landmarks per bin
    bin_order: np.ndarray  # the bin incremented at each step (length |T \ L|)
    generator: str = "partitioned"

    @property
    def n_options(self) -> int:
        return int(self.bin_order.size)

    @property
    def n_bins(self) -> int:
        return int(self.capacity.size)

    @property
    def edges(self) -> np.ndarray:
        """Bin edges in rows: bin j covers rows ``edges[j] .. edges[j+1]-1``."""
        return np.minimum(np.arange(self.n_bins + 1, dtype=np.int64) * self.bin_width, self.n)

    def sizes(self) -> np.ndarray:
        return self.landmarks.size + np.arange(1, self.n_options + 1, dtype=np.int64)

    def histogram(self, i: int) -> np.ndarray:
        """Landmarks (true + dummy) per bin in option ``i`` (0-based; ``i + 1`` dummies)."""
        _check_index(i, self.n_options)
        return self.hist0 + np.bincount(self.bin_order[: i + 1], minlength=self.n_bins)

    def mean_dummy_distance(self) -> np.ndarray:
        """Per option, the *expected* mean distance of its dummies to the nearest landmark of L, the dummies
        being drawn uniformly from each bin's regular rows (NaN if L = ∅)."""
        if self.n_options == 0:
            return np.zeros(0)
        d = landmark_distance(self.n, self.landmarks)
        regular = np.ones(self.n, dtype=bool)
        regular[self.landmarks] = False
        bins = np.arange(self.n, dtype=np.int64) // self.bin_width
        free = self.capacity - self.hist0
        with np.errstate(invalid="ignore", divide="ignore"):
            per_bin = np.bincount(bins[regular], weights=d[regular], minlength=self.n_bins) / free
        per_step = per_bin[self.bin_order]
        return np.cumsum(per_step) / np.arange(1, per_step.size + 1)

    def materialise(self, i: int, rng: np.random.Generator | WordSource) -> np.ndarray:
        """L' for option ``i``: each bin's dummies drawn uniformly without replacement from its regular rows,
        by a partial Fisher–Yates shuffle with exact integer draws from ``rng``'s words (a WordSource, or a
        numpy Generator for seeded previews)."""
        added = self.histogram(i) - self.hist0
        regular = np.setdiff1d(np.arange(self.n, dtype=np.int64), self.landmarks, assume_unique=True)
        free = np.bincount(regular // self.bin_width, minlength=self.n_bins).astype(np.int64)
        starts = np.concatenate(([0], np.cumsum(free)[:-1])).astype(np.int64)
        used = np.flatnonzero(added > 0)
        rows = regular.copy()  # sorted, so each bin's regular rows are one contiguous run
        _shuffle_in_bins(rows, starts[used], free[used], added[used].astype(np.int64), _word_source(rng))
        dummies = np.concatenate([rows[a:a + c] for a, c in zip(starts[used], added[used], strict=True)]
                                 or [np.zeros(0, dtype=np.int64)])
        return np.sort(np.concatenate((self.landmarks, dummies)))


@numba.njit(cache=True, nogil=True)
def _fisher_yates(rows, starts, sizes, counts, words, pos, b, j, reserve):  # pragma: no cover - compiled
    """Partial Fisher–Yates in each run ``rows[starts[b] : starts[b]+sizes[b]]``: its first ``counts[b]``
    places get a uniform sample without replacement. Resumable state ``(b, j)``; stops with ``pos ≥ 0`` when
    fewer than ``reserve`` words are left, ``pos < 0`` when a draw ran out of words."""
    n = words.shape[0]
    while b < starts.shape[0]:
        while j < counts[b]:
            if n - pos < reserve:
                return b, j, pos
            r, pos = uniform_below(np.uint64(sizes[b] - j), words, pos)
            if pos < 0:
                return b, j, pos
            a = starts[b] + j
            c = a + np.int64(r)
            tmp = rows[a]
            rows[a] = rows[c]
            rows[c] = tmp
            j += 1
        b += 1
        j = 0
    return b, j, pos


def _shuffle_in_bins(rows, starts, sizes, counts, source: WordSource) -> None:
    if not starts.size:
        return
    buf = source.words(int(min(counts.sum(), 1 << 16)) + 2 * RESERVE_WORDS)
    b, j, pos = 0, 0, 0
    while True:
        b, j, pos = _fisher_yates(rows, starts, sizes, counts, buf, pos, b, j, RESERVE_WORDS)
        if b >= starts.size:
            return
        if pos < 0:
            raise RandomnessExhausted(f"one draw of the dummy rows needed more than {RESERVE_WORDS} random "
                                      "words (probability < 1e-100); selection aborted")
        pos = source.refill(buf, pos)


DummyOptions = RowOptions | HistogramOptions


def _check_index(i: int, m: int) -> None:
    if not 0 <= i < m:
        raise IndexError(f"option index {i} out of range (there are {m} options)")


def _prepare(n: int, landmarks) -> tuple[int, np.ndarray, np.ndarray]:
    n = int(n)
    if n < 0:
        raise ValueError(f"the series length must be ≥ 0, got {n}")
    lm = normalize_landmarks(landmarks, n)
    regular = np.setdiff1d(np.arange(n, dtype=np.int64), lm, assume_unique=True)
    return n, lm, regular


# -------------------------------------------------------------------- Heuristic (Algorithm 2)
@numba.njit(cache=True, nogil=True)
def _f1(g):  # pragma: no cover - compiled
    """Sum of the anchor distances min(k, g+1-k), k = 1..g, of a gap of g regular events."""
    h = g // 2
    if g % 2 == 0:
        return h * (h + 1)
    return (h + 1) * (h + 1)


@numba.njit(cache=True, nogil=True)
def _f2(g):  # pragma: no cover - compiled
    """Sum of their squares."""
    h = g // 2
    s = h * (h + 1) * (2 * h + 1) // 3
    if g % 2 == 1:
        s += (h + 1) * (h + 1)
    return s


@numba.njit(cache=True, nogil=True)
def _sigma(cnt, s1, s2):  # pragma: no cover - compiled
    if cnt <= 0:
        return 0.0
    e1 = s1 / cnt
    var = s2 / cnt - e1 * e1
    return math.sqrt(var) if var > 0.0 else 0.0


@numba.njit(cache=True, nogil=True)
def _gap_add(a, g, cnt, leftmost, act, where, nact):  # pragma: no cover - compiled
    """Register a gap of g ≥ 1 regular events starting after anchor a; returns the number of active sizes."""
    cnt[g] += 1
    if cnt[g] == 1:
        leftmost[g] = a
        where[g] = nact
        act[nact] = g
        return nact + 1
    if a < leftmost[g]:
        leftmost[g] = a
    return nact


@numba.njit(cache=True, nogil=True)
def _gap_remove(g, cnt, act, where, nact):  # pragma: no cover - compiled
    cnt[g] -= 1
    if cnt[g] == 0:
        j = where[g]
        last = act[nact - 1]
        act[j] = last
        where[last] = j
        where[g] = -1
        return nact - 1
    return nact


@numba.njit(cache=True, nogil=True)
def _candidate(g, k, s1, s2, c2, tau):  # pragma: no cover - compiled
    """|evalSeq − τ| after a new anchor at position k (1..g) of a gap of g regular events, and the changes
    of the sums of distances and of squared distances."""
    d1 = _f1(k - 1) + _f1(g - k) - _f1(g)
    d2 = _f2(k - 1) + _f2(g - k) - _f2(g)
    return abs(_sigma(c2, s1 + d1, s2 + d2) - tau), d1, d2


@numba.njit(cache=True, nogil=True)
def _heuristic_order(n, anchors):  # pragma: no cover - compiled
    """Algorithm 2 with O(1) candidate evaluation. ``anchors`` = [-1, *L, n].

    Candidates depend only on the size g of their gap and their position k in it, so each step evaluates
    every *distinct* gap size once (k = 1..⌈g/2⌉: a gap is symmetric) and the winner is placed in the
    leftmost gap of its size (lowest row). Per size the module keeps the number of gaps and the leftmost
    one (rescanned forward along the anchor list when the leftmost is split).
    """
    nxt = np.full(n + 2, -1, dtype=np.int64)  # nxt[a + 1] = next anchor after anchor a
    cnt = np.zeros(n + 1, dtype=np.int64)
    leftmost = np.full(n + 1, -1, dtype=np.int64)
    act = np.zeros(n + 1, dtype=np.int64)
    where = np.full(n + 1, -1, dtype=np.int64)
    mind = np.zeros(n + 1)
    nact = 0
    c = 0
    s1 = 0
    s2 = 0
    for j in range(anchors.size - 1):
        a = anchors[j]
        b = anchors[j + 1]
        nxt[a + 1] = b
        g = b - a - 1
        if g > 0:
            nact = _gap_add(a, g, cnt, leftmost, act, where, nact)
            c += g
            s1 += _f1(g)
            s2 += _f2(g)
    m = c
    tau = _sigma(c, s1, s2)
    tol = 1e-9 * (1.0 + tau)
    order = np.empty(m, dtype=np.int64)
    for step in range(m):
        c2 = c - 1
        best = np.inf
        for j in range(nact):
            g = act[j]
            low = np.inf
            for k in range(1, (g + 1) // 2 + 1):
                diff, d1, d2 = _candidate(g, k, s1, s2, c2, tau)
                if diff < low:
                    low = diff
            mind[g] = low
            if low < best:
                best = low
        thresh = best + tol
        row = n
        bg = 0
        bk = 0
        for j in range(nact):
            g = act[j]
            if mind[g] <= thresh and leftmost[g] + 1 < row:
                for k in range(1, (g + 1) // 2 + 1):
                    diff, d1, d2 = _candidate(g, k, s1, s2, c2, tau)
                    if diff <= thresh:
                        if leftmost[g] + k < row:
                            row = leftmost[g] + k
                            bg = g
                            bk = k
                        break
        a = row - bk
        b = nxt[a + 1]
        diff, d1, d2 = _candidate(bg, bk, s1, s2, c2, tau)
        nact = _gap_remove(bg, cnt, act, where, nact)
        nxt[a + 1] = row
        nxt[row + 1] = b
        if bk - 1 > 0:
            nact = _gap_add(a, bk - 1, cnt, leftmost, act, where, nact)
        if bg - bk > 0:
            nact = _gap_add(row, bg - bk, cnt, leftmost, act, where, nact)
        if cnt[bg] > 0 and leftmost[bg] == a:  # the leftmost gap of this size was split: find the next one
            x = a
            while True:
                y = nxt[x + 1]
                if y - x - 1 == bg:
                    leftmost[bg] = x
                    break
                x = y
        c = c2
        s1 += d1
        s2 += d2
        order[step] = row
    return order


def heuristic(n: int, landmarks) -> RowOptions:
    """Algorithm 2 (Heuristic): add, one at a time, the regular event whose addition keeps ``evalSeq``
    (:func:`evaluate_sequence`) closest to ``evalSeq(L)``; ties go to the lowest row.

    Each candidate is evaluated in O(1): a new anchor splits one gap of g regular events into two, and the
    sums of distances and squared distances of a gap have closed forms, so only the gap's terms change.
    Gaps of equal size give the same candidates (the leftmost wins ties), and a gap is symmetric, so one
    step costs O(Σ over *distinct* gap sizes of g/2) ≤ O(n); the whole run O(|T \\ L|·n) at worst (few
    landmarks, long landmark-free stretches), far less with scattered landmarks, where the gaps are short
    and of few sizes. See :data:`HEURISTIC_COMFORT_N`.
    """
    n, lm, regular = _prepare(n, landmarks)
    if regular.size == 0:
        return RowOptions("heuristic", n, lm, np.zeros(0, dtype=np.int64))
    anchors = np.concatenate(([-1], lm, [n])).astype(np.int64)
    return RowOptions("heuristic", n, lm, _heuristic_order(n, anchors))


# ---------------------------------------------------------------------- Optimal (Algorithm 1)
@numba.njit(cache=True, nogil=True)
def _subset_values(n, lm_prev, lm_next, rows):  # pragma: no cover - compiled
    """evalSeq(L ∪ S) for every subset S (bit mask) of the m regular ``rows``.

    ``lm_prev[j]``/``lm_next[j]``: the nearest anchor of L ∪ edges before/after ``rows[j]``.
    """
    m = rows.size
    out = np.zeros(1 << m)
    for mask in range(1 << m):
        cnt = 0
        s1 = 0.0
        s2 = 0.0
        for j in range(m):
            if (mask >> j) & 1:
                continue
            r = rows[j]
            p = lm_prev[j]
            q = lm_next[j]
            for i in range(m):
                if (mask >> i) & 1:
                    x = rows[i]
                    if p < x < r:
                        p = x
                    elif r < x < q:
                        q = x
            d = min(r - p, q - r)
            cnt += 1
            s1 += d
            s2 += d * d
        out[mask] = _sigma(cnt, s1, s2)
    return out


@numba.njit(cache=True, nogil=True)
def _optimal_scan(v, m, tau, thresh, find, out_perm):  # pragma: no cover - compiled
    """Depth-first enumeration of all m! orderings in lexicographic order.

    ``find=False``: return the lowest score. ``find=True``: stop at the first ordering whose score is
    ≤ ``thresh``, write it to ``out_perm`` and return its score.
    """
    choice = np.zeros(m + 1, dtype=np.int64)
    masks = np.zeros(m + 1, dtype=np.int64)
    sums = np.zeros(m + 1)
    perm = np.zeros(m, dtype=np.int64)
    best = np.inf
    depth = 0
    while depth >= 0:
        if depth == m:
            score = abs(sums[m] / m - tau)
            if find:
                if score <= thresh:
                    out_perm[:] = perm
                    return score
            elif score < best:
                best = score
            depth -= 1
            continue
        c = choice[depth]
        while c < m and (masks[depth] >> c) & 1:
            c += 1
        if c >= m:
            depth -= 1
            continue
        choice[depth] = c + 1
        perm[depth] = c
        masks[depth + 1] = masks[depth] | (1 << c)
        sums[depth + 1] = sums[depth] + v[masks[depth + 1]]
        depth += 1
        choice[depth] = 0
    return best


def optimal(n: int, landmarks, *, max_regular: int = OPTIMAL_MAX_REGULAR) -> RowOptions:
    """Algorithm 1 (Optimal): the option chain (an ordering of ``T \\ L``) whose mean ``evalSeq`` over its
    sets differs least from ``evalSeq(L)``; ties go to the first ordering in lexicographic order of rows.

    Exhaustive over the ``|T \\ L|!`` chains (with ``evalSeq`` of all ``2^|T\\L|`` subsets precomputed), so
    it refuses more than ``max_regular`` regular events (default :data:`OPTIMAL_MAX_REGULAR`, measured).
    """
    n, lm, regular = _prepare(n, landmarks)
    m = int(regular.size)
    if m > max_regular:
        raise ValueError(
            f"Optimal dummy selection is exhaustive over the {m}! orderings of the {m} regular events and "
            f"is limited to {max_regular} regular events (|T \\ L| ≤ {max_regular}, a few seconds); "
            f"this series has {m}. Use the Heuristic or Partitioned generator."
        )
    if m == 0:
        return RowOptions("optimal", n, lm, np.zeros(0, dtype=np.int64))
    anchors = np.concatenate(([-1], lm, [n])).astype(np.int64)
    idx = np.searchsorted(anchors, regular, side="right")
    v = _subset_values(n, anchors[idx - 1], anchors[idx], regular)
    tau = float(v[0])
    perm = np.zeros(m, dtype=np.int64)
    best = _optimal_scan(v, m, tau, 0.0, False, perm)
    _optimal_scan(v, m, tau, best + _TIE_REL * (1.0 + tau), True, perm)
    return RowOptions("optimal", n, lm, regular[perm])


# ------------------------------------------------------------------ Partitioned (Algorithm 3)
def fd_bin_width(n: int, landmarks: np.ndarray) -> int:
    """Integer bin width (rows) from the Freedman–Diaconis rule over the landmark rows.

    ``ceil(2·IQR(L)·|L|^(−1/3))`` (numpy's ``'fd'`` width, percentiles interpolated linearly), at least 1;
    the whole series (one bin) when the IQR is 0 (``|L| ≤ 1``), as numpy's rule falls back to one bin.
    """
    lm = np.asarray(landmarks, dtype=np.int64)
    if n <= 0:
        return 1
    if lm.size < 2:
        return n
    q75, q25 = np.percentile(lm, [75.0, 25.0])
    iqr = float(q75 - q25)
    if iqr <= 0.0:
        return n
    width = 2.0 * iqr / lm.size ** (1.0 / 3.0)
    return int(min(n, max(1, math.ceil(width))))


@numba.njit(cache=True, nogil=True)
def _partition_order(h0, cap, ell, m):  # pragma: no cover - compiled
    """Algorithm 3's greedy with exact integer keys.

    With p = h0/ℓ and s landmarks so far, adding one to bin i gives the normalised histogram
    (H + e_i)/(s+1); its squared Euclidean distance to p is, up to terms common to all i,
    2·(H_i − (s+1)·p_i), so the best bin maximises ``(s+1)·h0_i − ℓ·H_i`` (an integer). Bins without
    landmarks have key −ℓ·H_i, so among them the emptiest-then-lowest wins: they are served round-robin.
    """
    nb = h0.size
    H = h0.copy()
    pos = np.empty(nb, dtype=np.int64)
    zero = np.empty(nb, dtype=np.int64)
    npos = 0
    nz = 0
    for i in range(nb):
        if h0[i] > 0:
            if H[i] < cap[i]:
                pos[npos] = i
                npos += 1
        elif cap[i] > 0:
            zero[nz] = i
            nz += 1
    level = 0
    zp = 0
    s = ell
    out = np.empty(m, dtype=np.int64)
    for step in range(m):
        best = -1
        bestkey = 0
        jbest = -1
        for j in range(npos):
            i = pos[j]
            key = (s + 1) * h0[i] - ell * H[i]
            if best < 0 or key > bestkey:  # bins ascend, so a tie keeps the lower bin
                best = i
                bestkey = key
                jbest = j
        if zp < nz:
            i = zero[zp]
            key = -ell * level
            if best < 0 or key > bestkey or (key == bestkey and i < best):
                best = i
                jbest = -1
        H[best] += 1
        out[step] = best
        s += 1
        if jbest >= 0:
            if H[best] >= cap[best]:  # full: drop it, keeping the list in ascending order
                for j in range(jbest, npos - 1):
                    pos[j] = pos[j + 1]
                npos -= 1
        else:
            zp += 1
            if zp >= nz:  # a round is complete: drop the full bins, next level
                k = 0
                for j in range(nz):
                    if H[zero[j]] < cap[zero[j]]:
                        zero[k] = zero[j]
                        k += 1
                nz = k
                zp = 0
                level += 1
    return out


def partitioned(n: int, landmarks) -> HistogramOptions:
    """Algorithm 3 (Partitioned): nested histograms of L' over Freedman–Diaconis bins (:func:`fd_bin_width`),
    each one adding a landmark to the non-full bin that keeps the sum-normalised histogram closest (Euclidean)
    to L's; ties go to the lowest bin. Deterministic; the rows are drawn by :meth:`HistogramOptions.materialise`.

    Degenerate cases: ``|L| ≤ 1`` → one bin over T (dummies uniform over ``T \\ L``); ``L = T`` → no options.
    Cost O(|T \\ L|·B₊) with B₊ the number of bins that hold landmarks.
    """
    n, lm, regular = _prepare(n, landmarks)
    h = fd_bin_width(n, lm)
    nb = max(1, -(-n // h)) if n else 0
    edges = np.minimum(np.arange(nb + 1, dtype=np.int64) * h, n)
    cap = np.diff(edges).astype(np.int64)
    h0 = np.bincount(lm // h, minlength=nb).astype(np.int64) if nb else np.zeros(0, dtype=np.int64)
    m = int(regular.size)
    if m == 0:
        order = np.zeros(0, dtype=np.int64)
    elif lm.size == 0:  # one bin (fd_bin_width returns n): every step increments it
        order = np.zeros(m, dtype=np.int64)
    else:
        order = _partition_order(h0, cap, int(lm.size), m)
    return HistogramOptions(n=n, landmarks=lm, bin_width=int(h), capacity=cap, hist0=h0, bin_order=order)


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


def _word_source(rng: np.random.Generator | WordSource | None, words: WordSource | None = None) -> WordSource:
    """The random words of a selection: ``words`` if given, else ``rng`` (a WordSource, or a numpy Generator
    whose uniform 64-bit integers become the words: the seeded previews' reproducible path)."""
    if words is not None:
        return words
    if isinstance(rng, WordSource):
        return rng
    if rng is None:
        raise ValueError("the dummy selection needs a random source (rng or words)")
    gen = rng

    def fill(buf: np.ndarray) -> None:
        if buf.shape[0]:
            buf[:] = gen.integers(0, 1 << 64, size=buf.shape[0], dtype=np.uint64)

    return WordSource(fill, "numpy Generator")


def split_budget(epsilon: float, share: float) -> tuple[float, float]:
    """``(ε_sel, ε − ε_sel)`` with ``ε_sel = share·ε``; the second is rounded *down* if needed so that
    the two floats add up to at most ε in exact arithmetic (composition never overspends)."""
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a positive number, got {epsilon}")
    if not (math.isfinite(share) and 0.0 < share < 1.0):
        raise ValueError(f"the selection share must be strictly between 0 and 1, got {share}")
    eps_sel = share * epsilon
    rest = epsilon - eps_sel
    while Fraction(eps_sel) + Fraction(rest) > Fraction(epsilon):
        rest = math.nextafter(rest, 0.0)
    return eps_sel, rest


# ------------------------------------------------------------------------------------ top level
def generate_options(n: int, landmarks, generator: str = "partitioned") -> DummyOptions:
    if generator == "partitioned":
        return partitioned(n, landmarks)
    if generator == "heuristic":
        return heuristic(n, landmarks)
    if generator == "optimal":
        return optimal(n, landmarks)
    raise ValueError(f"unknown generator {generator!r}; choose one of {', '.join(GENERATORS)}")


@dataclass(frozen=True, eq=False)
class DummySelection:
    """The outcome of :func:`select_dummies`. ``landmarks`` (L') and ``dummies`` are private: they reveal
    the true landmarks (L = L' \\ dummies); only :meth:`sidecar_info` may be published."""

    landmarks: np.ndarray  # L' (sorted int64), what the release uses
    dummies: np.ndarray  # L' \ L (sorted int64)
    epsilon: float  # the total ε
    epsilon_selection: float  # ε_sel spent by the exponential mechanism (0 when nothing was selected)
    epsilon_remaining: float  # ε − ε_sel: the release's ε
    share: float
    generator: str
    utility: str
    option_index: int  # 0-based index of the chosen option (it has option_index + 1 dummies); -1 if none
    n_options: int  # = |T \ L|
    note: str = ""  # why nothing was selected, if so

    def sidecar_info(self) -> dict[str, Any]:
        """What the release's sidecar may say about the selection.

        Never the dummies or L', and neither ``option_index`` (the number of dummies) nor ``n_options``
        (= n − |L|, which gives |L| away).
        """
        return {
            "dummy_landmarks": True,
            "generator": self.generator,
            "utility": self.utility,
            "share": self.share,
            "epsilon_total": self.epsilon,
            "epsilon_selection": self.epsilon_selection,
            "epsilon_release": self.epsilon_remaining,
        }


def select_dummies(n: int, landmarks, *, epsilon: float, share: float = DEFAULT_SHARE,
                   generator: str = "partitioned", utility: str = "count",
                   rng: np.random.Generator | None = None, options: DummyOptions | None = None,
                   words: WordSource | None = None) -> DummySelection:
    """Add dummy landmarks privately: generate nested options, pick one with the exponential mechanism at
    ``ε_sel = share·ε``, and return ``L'`` with the ``ε − ε_sel`` the release must then use.

    The random words of both the exponential mechanism and Partitioned's within-bin draw (both exact
    integer samplers) come from ``words``, a :class:`~.securenoise.WordSource` — exports pass the one their
    noise uses (``WordSource.from_os()``) — or, without it, from the Generator ``rng`` (seeded previews).
    When every event is already a landmark there is nothing to add: L is returned, ε_sel = 0.

    ``options`` may pass the generator's output computed earlier for the same ``n``, ``landmarks`` and
    ``generator`` (options are deterministic; only the pick and the within-bin draw are random), so a GUI
    can re-roll without regenerating.
    """
    if generator not in GENERATORS:
        raise ValueError(f"unknown generator {generator!r}; choose one of {', '.join(GENERATORS)}")
    if utility not in UTILITIES:
        raise ValueError(f"unknown utility {utility!r}; choose one of {', '.join(UTILITIES)}")
    eps_sel, eps_rem = split_budget(epsilon, share)
    n, lm, regular = _prepare(n, landmarks)
    if regular.size == 0:
        return DummySelection(
            landmarks=lm, dummies=np.zeros(0, dtype=np.int64), epsilon=epsilon, epsilon_selection=0.0,
            epsilon_remaining=epsilon, share=share, generator=generator, utility=utility, option_index=-1,
            n_options=0,
            note="every event is already a landmark: there is no regular event to add as a dummy, so no "
                 "budget is spent on the selection",
        )
    if options is None:
        options = generate_options(n, lm, generator)
    elif options.generator != generator or options.n != n or not np.array_equal(options.landmarks, lm):
        raise ValueError("the options given were generated for another series, landmark set or generator")
    source = _word_source(rng, words)
    u = utility_scores(options, utility)
    i = exponential_mechanism(u, eps_sel, words=source)
    new = options.materialise(i, source)
    dummies = np.setdiff1d(new, lm, assume_unique=True)
    return DummySelection(
        landmarks=new, dummies=dummies, epsilon=epsilon, epsilon_selection=eps_sel, epsilon_remaining=eps_rem,
        share=share, generator=generator, utility=utility, option_index=i, n_options=options.n_options,
    )


# ------------------------------------------------------------------ glue for the release pipeline
# Used by the GUI (lmdk_gui.ui.window.session), the export (lmdk_gui.core.publish.export) and the commands (``lmdk export``,
# ``lmdk compare``), so that all of them select, seed and report dummies the same way.

#: Tags that keep the selection's random stream apart from every other use of the same seed (the export's
#: noise words, the preview's unit noise): ``SeedSequence([seed, *stream, tag])``.
_SELECTION_TAG = 0x6C6D646B  # "lmdk"
#: The stream of an export's selection (a preview uses the draw number instead).
EXPORT_STREAM = 0x6578  # "ex"


@dataclass(frozen=True)
class DummySettings:
    """The user's choice for dummy landmarks; passing an instance means "on" (``None`` = off)."""

    generator: str = "partitioned"
    share: float = DEFAULT_SHARE
    utility: str = "count"

    def validate(self) -> None:
        if self.generator not in GENERATORS:
            raise ValueError(f"unknown dummy generator {self.generator!r}; choose one of {', '.join(GENERATORS)}")
        if self.utility not in UTILITIES:
            raise ValueError(f"unknown dummy utility {self.utility!r}; choose one of {', '.join(UTILITIES)}")
        if not (math.isfinite(self.share) and 0.0 < self.share < 1.0):
            raise ValueError(f"the share of ε spent on the dummy selection must be strictly between 0 and 1, "
                             f"got {self.share}")

    def describe(self) -> str:
        """One line for summaries: ``Partitioned, fewer dummies, 1% of ε``."""
        return (f"{GENERATOR_LABELS[self.generator]}, {UTILITY_LABELS[self.utility].lower()}, "
                f"{100 * self.share:g}% of ε")

    def to_dict(self) -> dict[str, Any]:
        return {"generator": self.generator, "share": float(self.share), "utility": self.utility}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DummySettings:
        s = cls(generator=str(d.get("generator", "partitioned")), share=float(d.get("share", DEFAULT_SHARE)),
                utility=str(d.get("utility", "count")))
        s.validate()
        return s


def selection_rng(seed: int | None, *stream: int) -> np.random.Generator:
    """The random source of a selection (DESIGN §5).

    ``seed=None`` (an unseeded export): 256 bits from ``os.urandom``. Otherwise a Generator derived from
    ``(seed, *stream)`` through :class:`numpy.random.SeedSequence`, with a tag that keeps it independent of
    the noise drawn from the same seed: the preview uses ``(session seed, draw number)``, run r of an average
    ``(seed, draw number, r + 1)``, a seeded export ``(seed, EXPORT_STREAM)``.
    """
    if seed is None:
        return np.random.default_rng(np.random.SeedSequence(int.from_bytes(os.urandom(32), "little")))
    key = int(seed) if int(seed) >= 0 else int(seed) & 0xFFFFFFFFFFFFFFFF  # a long key is kept whole
    return np.random.default_rng(np.random.SeedSequence([key,
                                                         *(int(s) for s in stream), _SELECTION_TAG]))


def select_for_release(n: int, landmarks, epsilon: float, dummies: DummySettings, *,
                       rng: np.random.Generator | None = None, options: DummyOptions | None = None,
                       words: WordSource | None = None) -> DummySelection:
    """:func:`select_dummies` for a release: the same, except when every event is already a landmark.

    :func:`select_dummies` then spends nothing (``ε_sel = 0``, the release gets all of ε). A release would
    then show it: its ε, and the sidecar's ``epsilon_selection``, would differ exactly when ``L = T``, which
    tells apart ``L = T`` from ``L = T \\ {t}`` (whose only option is ``L' = T``), i.e. whether ``t`` is a
    landmark. Here the share is set aside all the same, so what is published does not depend on it.
    """
    dummies.validate()
    sel = select_dummies(n, landmarks, epsilon=epsilon, share=dummies.share, generator=dummies.generator,
                         utility=dummies.utility, rng=rng, options=options, words=words)
    if sel.option_index < 0:
        eps_sel, eps_rem = split_budget(epsilon, dummies.share)
        sel = replace(sel, epsilon_selection=eps_sel, epsilon_remaining=eps_rem,
                      note=sel.note.replace("so no budget is spent on the selection",
                                            "but the share of ε is still set aside, so that the release "
                                            "does not show it"))
    return sel


def release_record(sel: DummySelection) -> dict[str, Any]:
    """The sidecar's ``epsilon_selection`` object (DESIGN §9): what was spent on the selection and how it
    was made, never which events are dummies nor how many (:meth:`DummySelection.sidecar_info`, minus the
    total ε, which is the sidecar's own ``epsilon``)."""
    return {
        "epsilon": float(sel.epsilon_selection),
        "share": float(sel.share),
        "mechanism": "exponential",
        "generator": sel.generator,
        "utility": sel.utility,
        "epsilon_release": float(sel.epsilon_remaining),
    }


def mae_runs_with_dummies(series, landmarks, settings, dummies: DummySettings, *, runs: int, seed: int,
                          draw: int = 0, options: DummyOptions | None = None, schemes=None,
                          should_cancel=None, denoise: bool = False):
    """MAE of each scheme over ``runs`` runs, without and with dummy landmarks (thesis Figure 5.6).

    Run r draws the unit noise of :func:`lmdk_gui.core.analysis.metrics.mae_over_runs` (``UnitNoise(n, seed+1+r)``,
    so the "without" numbers are exactly that function's) and a new selection from
    ``selection_rng(seed, draw, r + 1)``; both releases of a run use the same noise. ``options`` (the
    generator's output for these landmarks) saves regenerating it each run. Raises ValueError when the
    generator refuses (Optimal beyond its limit).

    With ``denoise``, each run's releases are also denoised (on L' for the "with" line) and
    ``RunStats.mean_denoised`` is filled.

    Returns ``(without, with_dummies, mean |L'|)``: two ``{scheme: RunStats}`` and the mean size of L'.
    """
    from ..analysis.metrics import adaptive_last, denoised_mae, mae, run_stats
    from ..engine.release import compute_release
    from .noise import UnitNoise
    from .settings import ALL_SCHEMES

    schemes = tuple(ALL_SCHEMES if schemes is None else schemes)
    n = series.n
    lm = normalize_landmarks(landmarks, n)
    dummies.validate()
    if options is None and n > lm.size:
        options = generate_options(n, lm, dummies.generator)
    plain: dict[str, list[float]] = {s: [] for s in schemes}
    withd: dict[str, list[float]] = {s: [] for s in schemes}
    plain_d: dict[str, list[float]] = {s: [] for s in schemes}
    withd_d: dict[str, list[float]] = {s: [] for s in schemes}
    sizes: list[int] = []
    for r in range(runs):
        if should_cancel is not None and should_cancel():
            break
        noise = UnitNoise(n, seed + 1 + r)
        sel = select_for_release(n, lm, settings.epsilon, dummies, rng=selection_rng(seed, draw, r + 1),
                                 options=options)
        st = settings.with_(epsilon=sel.epsilon_remaining)
        sizes.append(int(sel.landmarks.size))
        order = adaptive_last(schemes)
        for s in order:
            rp = compute_release(series, lm, settings, s, noise)
            rw = compute_release(series, sel.landmarks, st, s, noise)
            if s == order[-1]:
                noise.forget_all()  # as mae_over_runs
            plain[s].append(mae(series, rp, settings))
            withd[s].append(mae(series, rw, st))
            if denoise:
                plain_d[s].append(denoised_mae(series, rp, settings, consume=True)[1])  # (raw errors are in)
                withd_d[s].append(denoised_mae(series, rw, st, consume=True)[1])
            del rp, rw
        del noise

    return ({s: run_stats(plain[s], plain_d[s]) for s in schemes},
            {s: run_stats(withd[s], withd_d[s]) for s in schemes},
            (float(np.mean(sizes)) if sizes else float("nan")))
