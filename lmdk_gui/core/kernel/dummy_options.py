"""Dummy landmark generators (DESIGN §6, thesis §4.2.3, Algorithms 1–3): nested options L ⊂ L'_1 ⊂ … ⊂ T as an order of rows (Optimal, Heuristic) or of histogram bins (Partitioned). The readings of the thesis are in :mod:`.dummies`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..engine.lazyjit import numba  # the real numba is imported on a kernel's first call (cold start)
from ..engine.release import normalize_landmarks
from .securenoise import RESERVE_WORDS, RandomnessExhausted, WordSource, uniform_below

#: Optimal enumerates |T \ L|! chains, so each regular event more multiplies its time by their number; beyond
#: 11 it would keep the user waiting, and Optimal is refused (tests/benchmarks/bench_dummies.py times it).
OPTIMAL_MAX_REGULAR = 11


#: Up to this many events Heuristic answers within a moment whatever the landmarks (worst case: no landmark,
#: one long gap, O(|T \ L|·n)); with scattered landmarks it is much faster. Larger series are allowed, only
#: slow (tests/benchmarks/bench_dummies.py times it).
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
