"""An empirical privacy-loss audit in the spirit of StatDP (Ding et al., CCS 2018) and DP-Sniper (Bichsel et
al., S&P 2021), and the runners that feed it releases from the preview and the export paths.

The audit sees only samples: outputs of a mechanism run many times on an input ``D`` and on a neighbour
``D'``. For a family of candidate output sets ``S`` it bounds the privacy loss

    ln P[M(D) ∈ S] − ln P[M(D') ∈ S]        (and the same with D, D' swapped)

from below with one-sided Clopper–Pearson bounds: ``ln(p1_lo / p2_hi)``. With a Bonferroni correction over
all sets, directions and bounds, the largest of these lower bounds exceeds the true loss of the mechanism
with probability at most ``alpha`` (the two samples need not be independent of each other: each bound holds
on its own and the union bound does the rest). So ``lower > claimed ε`` is statistical evidence, at level
``alpha``, that the mechanism is *not* ε-DP for these neighbours: the audit "flags" it.

Candidate sets come from a scalar statistic of the output: its quantiles (pooled over both samples) give
edges ``c``; the sets are the threshold sets ``{s < c}``, ``{s ≤ c}``, ``{s > c}``, ``{s ≥ c}`` (DP-Sniper's
threshold classifiers), the atoms ``{s = c}`` and the histogram bins between neighbouring edges. For one
released value the statistic is the value itself (the loss of Laplace noise is attained by a threshold set);
for a joint release over ``L ∪ {t}`` it is the log-likelihood ratio of the claimed mechanism, the
Neyman–Pearson optimal projection (:func:`laplace_llr`), computed from the released budgets.

The point estimate reported next to the bound is held out (DP-Sniper): the set is chosen on half of the
runs and its loss measured on the other half, so it is not biased upward by the choice.

Budgets that vary from run to run (Adaptive) are handled by *strata*: the released budget of the audited
event is public and its distribution does not depend on the audited value (it is a function of the public
sampling draws and of earlier releases), so the loss on ``{ε_t = e, o_t ∈ S}`` must be at most ``e``;
:func:`audit_strata` audits each budget value separately against its own claim.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine.pipeline import KINDS, compute_release
from lmdk_gui.core.engine.release import landmark_mask, normalize_landmarks
from lmdk_gui.core.kernel import adaptive
from lmdk_gui.core.kernel import securenoise as sn
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import PrivacySettings
from lmdk_gui.core.publish import export as export_mod
from lmdk_gui.core.publish import keys
from tests.keys import test_key

#: Family-wise error level of one audit (as strict as OpenDP's own statistical tests).
ALPHA = 1e-6
#: Sets with fewer hits than this in either half-sample are not candidates for the point estimate.
MIN_COUNT = 100


@dataclass(frozen=True)
class Audit:
    """What one audit measured. ``lower`` is the one the verdict is based on."""

    claimed: float  # the ε the mechanism claims for these neighbours
    estimate: float  # held-out point estimate of the loss (see audit_samples)
    lower: float  # max over sets of the Clopper–Pearson lower confidence bound of the loss
    n1: int
    n2: int
    sets: int

    @property
    def flagged(self) -> bool:
        """True when the samples prove, at level ALPHA, a loss larger than claimed."""
        return self.lower > self.claimed

    def row(self) -> str:
        return (f"claimed {self.claimed:.4f}  estimate {self.estimate:.4f}  lower bound {self.lower:.4f}  "
                f"runs {self.n1}/{self.n2}  sets {self.sets}")


def cp_lower(k: np.ndarray, n: int, a: float) -> np.ndarray:
    """One-sided Clopper–Pearson lower bound (level 1 − a) on a binomial proportion with k hits of n."""
    k = np.asarray(k, dtype=np.float64)
    lo = stats.beta.ppf(a, np.maximum(k, 1.0), n - k + 1.0)
    return np.where(k > 0, lo, 0.0)


def cp_upper(k: np.ndarray, n: int, a: float) -> np.ndarray:
    """One-sided Clopper–Pearson upper bound (level 1 − a)."""
    k = np.asarray(k, dtype=np.float64)
    hi = stats.beta.ppf(1.0 - a, k + 1.0, np.maximum(n - k, 1.0))
    return np.where(k < n, hi, 1.0)


def candidate_edges(s1: np.ndarray, s2: np.ndarray, n_edges: int = 40) -> np.ndarray:
    """Edges of the candidate sets: pooled quantiles, or every value of a discrete output."""
    pooled = np.concatenate([np.asarray(s1, dtype=np.float64), np.asarray(s2, dtype=np.float64)])
    if np.unique(pooled).size <= n_edges:  # discrete outputs: every value is an edge (and an atom)
        return np.unique(pooled)
    return np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, n_edges + 1)[1:-1]))


def set_counts(s: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Hits of every candidate set in one sample: {s < c}, {s ≤ c}, {s > c}, {s ≥ c}, {s = c} for each edge
    c, then the bins [c_j, c_{j+1}) and (c_j, c_{j+1})."""
    s = np.sort(np.asarray(s, dtype=np.float64))
    n = s.size
    lt = np.searchsorted(s, edges, side="left")
    le = np.searchsorted(s, edges, side="right")
    return np.concatenate([lt, le, n - le, n - lt, le - lt, np.diff(lt), lt[1:] - le[:-1]])


def audit_counts(c1: np.ndarray, n1: int, c2: np.ndarray, n2: int, claimed: float, *,
                 alpha: float = ALPHA) -> Audit:
    """The confidence bound on given hit counts of the candidate sets (both directions); ``estimate`` is
    left at the in-sample maximum (``audit_samples`` replaces it by a held-out one)."""
    c1 = np.asarray(c1, dtype=np.float64)
    c2 = np.asarray(c2, dtype=np.float64)
    keep = (c1 + c2) > 0
    c1, c2 = c1[keep], c2[keep]
    m = c1.size
    a = alpha / (4.0 * max(m, 1))  # m sets × 2 directions × 2 one-sided bounds
    with np.errstate(divide="ignore"):
        lo12 = np.log(cp_lower(c1, n1, a)) - np.log(cp_upper(c2, n2, a))
        lo21 = np.log(cp_lower(c2, n2, a)) - np.log(cp_upper(c1, n1, a))
        enough = (c1 >= MIN_COUNT) & (c2 >= MIN_COUNT)
        est = np.abs(np.log(c1[enough] / n1) - np.log(c2[enough] / n2))
    lower = float(max(lo12.max(initial=-np.inf), lo21.max(initial=-np.inf)))
    return Audit(float(claimed), float(est.max(initial=0.0)), lower, int(n1), int(n2), int(m))


def _held_out_estimate(s1: np.ndarray, m1: np.ndarray, s2: np.ndarray, m2: np.ndarray,
                       edges: np.ndarray) -> float:
    """DP-Sniper's split: pick the set (and direction) on the even-indexed runs — the one with the best
    *lower confidence bound* there, which favours sets with enough mass over lucky small ones — then measure
    that one set on the odd-indexed runs: an unbiased estimate of its loss, free of the upward bias of a
    maximum over hundreds of noisy estimates."""
    def half(s, m, parity):
        sel = m & (np.arange(s.size) % 2 == parity)
        return set_counts(s[sel], edges).astype(np.float64), (s.size + 1 - parity) // 2

    a1, na1 = half(s1, m1, 0)
    a2, na2 = half(s2, m2, 0)
    b1, nb1 = half(s1, m1, 1)
    b2, nb2 = half(s2, m2, 1)
    ok = (a1 >= MIN_COUNT) & (a2 >= MIN_COUNT)
    if not ok.any():
        return 0.0
    a = 0.05 / (4.0 * a1.size)
    with np.errstate(divide="ignore"):
        lo12 = np.where(ok, np.log(cp_lower(a1, na1, a)) - np.log(cp_upper(a2, na2, a)), -np.inf)
        lo21 = np.where(ok, np.log(cp_lower(a2, na2, a)) - np.log(cp_upper(a1, na1, a)), -np.inf)
    if lo12.max() >= lo21.max():
        j, sign = int(np.argmax(lo12)), 1.0
    else:
        j, sign = int(np.argmax(lo21)), -1.0
    loss_b = np.log(max(b1[j], 0.5) / nb1) - np.log(max(b2[j], 0.5) / nb2)
    return float(sign * loss_b)


def _audit(s1, m1, s2, m2, claimed: float, alpha: float) -> Audit:
    edges = candidate_edges(s1[m1], s2[m2])
    res = audit_counts(set_counts(s1[m1], edges), s1.size, set_counts(s2[m2], edges), s2.size, claimed,
                       alpha=alpha)
    return replace(res, estimate=_held_out_estimate(s1, m1, s2, m2, edges))


def audit_samples(s1: np.ndarray, s2: np.ndarray, claimed: float, *, alpha: float = ALPHA) -> Audit:
    """The audit of a scalar statistic of the output, sampled on D (``s1``) and on D' (``s2``): the
    confidence bound on all runs, the point estimate held out."""
    s1 = np.asarray(s1, dtype=np.float64)
    s2 = np.asarray(s2, dtype=np.float64)
    return _audit(s1, np.ones(s1.size, bool), s2, np.ones(s2.size, bool), claimed, alpha)


def audit_strata(s1: np.ndarray, g1: np.ndarray, s2: np.ndarray, g2: np.ndarray,
                 claimed_of: Callable[[float], float] = float, *, alpha: float = ALPHA,
                 min_runs: int = 500) -> dict[float, Audit]:
    """Audit ``{g = e, s ∈ S}`` for each stratum value ``e`` (e.g. the released budget ε_t), each against its
    own claim ``claimed_of(e)``. The loss of such a set is ``ln(P1[g=e]·P1[s∈S | e] / (P2[g=e]·P2[s∈S | e]))``
    and ``P1[g=e] = P2[g=e]`` when the stratum does not depend on the changed value; the counts are those
    joint hits (over all runs). Strata with fewer than ``min_runs`` runs in either sample are skipped."""
    s1 = np.asarray(s1, dtype=np.float64)
    s2 = np.asarray(s2, dtype=np.float64)
    values = [v for v in np.intersect1d(np.unique(g1), np.unique(g2))
              if np.sum(g1 == v) >= min_runs and np.sum(g2 == v) >= min_runs]
    return {float(v): _audit(s1, g1 == v, s2, g2 == v, claimed_of(float(v)), alpha / max(len(values), 1))
            for v in values}


#: Statistics are rounded to this many decimals. The audit measures a mechanism's loss up to floating-point
#: resolution: the *unrounded* statistic of the preview's textbook float Laplace is distinguishable through
#: its low bits (Mironov 2012) — which is exactly what the export path's snapped samplers prevent, and what
#: ``test_audit.test_low_bits`` shows — so the scheme audits look past it.
DIGITS = 9


def laplace_llr(values: np.ndarray, budgets: np.ndarray, x: np.ndarray, delta: np.ndarray,
                sensitivity: float, *, digits: int | None = DIGITS) -> np.ndarray:
    """Per run: the log-likelihood ratio ln p(o | x) − ln p(o | x + δ) of independent Laplace releases with
    the given per-event budgets (events with budget 0 — approximations — contribute nothing). This is the
    privacy loss random variable of the claimed mechanism, so its threshold sets are Neyman–Pearson optimal
    for the claimed mechanism (and stay informative for a broken one)."""
    b = np.asarray(budgets, dtype=np.float64)
    scale = np.where(b > 0, b, 0.0) / sensitivity
    llr = np.sum(scale * (np.abs(values - (x + delta)) - np.abs(values - x)), axis=-1)
    return llr if digits is None else np.round(llr, digits)


def local_metres(latlon: np.ndarray, origin: tuple[float, float]) -> np.ndarray:
    """(east, north) metres of points in the local equirectangular projection around ``origin`` (the
    projection both mechanisms use, DESIGN §3)."""
    lat0, lon0 = origin
    north = np.radians(latlon[..., 0] - lat0) * sn.R_EARTH_M
    east = np.radians(latlon[..., 1] - lon0) * sn.R_EARTH_M * np.cos(np.radians(lat0))
    return np.stack([east, north], axis=-1)


def planar_llr(latlon: np.ndarray, origin: tuple[float, float], shift_m: tuple[float, float],
               budget: float, radius_m: float, *, digits: int | None = DIGITS) -> np.ndarray:
    """ln p(o | P) − ln p(o | P') of planar Laplace with budget ε_t and radius r, for P = ``origin`` and P'
    displaced by ``shift_m`` (east, north) metres: ``ε_t (|o − P'| − |o − P|) / r``."""
    m = local_metres(latlon, origin)
    d0 = np.hypot(m[..., 0], m[..., 1])
    d1 = np.hypot(m[..., 0] - shift_m[0], m[..., 1] - shift_m[1])
    llr = budget / radius_m * (d1 - d0)
    return llr if digits is None else np.round(llr, digits)


# --------------------------------------------------------------------------------------------- runners
def preview_runs(x: np.ndarray, landmarks, settings: PrivacySettings, scheme: str, runs: int,
                 seed0: int) -> tuple[np.ndarray, np.ndarray]:
    """``runs`` preview releases (the GUI's path: :func:`compute_release` on :class:`UnitNoise`), one seed
    each. Returns values and budgets, shape ``(runs, n)``."""
    s = Series.from_arrays(np.asarray(x, dtype=np.float64))
    n = s.n
    vals = np.empty((runs, n))
    buds = np.empty((runs, n))
    for i in range(runs):
        r = compute_release(s, landmarks, settings, scheme, UnitNoise(n, seed0 + i))
        vals[i] = r.values
        buds[i] = r.budgets
    return vals, buds


def _fill_index(fresh: np.ndarray) -> np.ndarray:
    """Index of the release each event publishes: itself when fresh, else the previous fresh one, else the
    first fresh one (the export's rule without a public fallback)."""
    n = fresh.size
    idx = np.where(fresh, np.arange(n), -1)
    np.maximum.accumulate(idx, out=idx)
    first = int(np.argmax(fresh)) if fresh.any() else 0
    return np.where(idx < 0, first, idx)


def export_runs(x: np.ndarray, landmarks, settings: PrivacySettings, scheme: str, runs: int, seed: int, *,
                backend: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``runs`` numeric releases drawn exactly as :func:`export_release` draws them — its own budget
    functions, its own noise hooks (``_fresh_noise`` for the fixed-budget schemes; the Adaptive kernel with
    ``_SEC_ONE``, the public uniforms and the word buffer for Adaptive) and a seeded word source — without
    the file writing and without the guarantee checks (so that a deliberately broken allocation can be
    audited), and without the printing on the public decimal grid (post-processing). The word source is the
    one a keyed export with ``test_key(seed)`` uses. ``test_audit.test_export_runner_draws_what_export_writes`` checks that one run is bit-for-bit
    the file ``export_release`` writes with the same seed."""
    x = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
    n = x.size
    lm = normalize_landmarks(landmarks, n)
    eps_a = export_mod.allocatable(settings.epsilon, n)
    bk = export_mod.resolve_backend("numeric", backend)
    # as a keyed export of this series (one chunk) draws: the key bound to the release's digest
    digest = export_mod.release_digest(Series.from_arrays(x), lm, settings,
                                       export_mod.ExportOptions(scheme, backend=backend, chunk_rows=n))
    source = keys.noise_words(export_mod.export_key(test_key(seed)), digest)
    if scheme == "adaptive":
        mask = landmark_mask(lm, n)
        base = eps_a / (lm.size + 1)
        kern = KINDS["numeric"].export_kernel  # (the export's loop, its sampler export_mod._SEC_ONE compiled in)
        p = settings.adaptive
        # The export's buffer protocol (ExportRunner): a WordBuffer of max(4·RESERVE, 16·chunk) words (chunk =
        # n here), refilled whenever fewer than RESERVE_WORDS unread words are left; runs share the stream.
        wb = sn.WordBuffer(source, max(4 * sn.RESERVE_WORDS, 16 * n))
        aux = export_mod.kernel_aux("numeric", wb.words, settings)
        vals = np.empty((runs, n))
        buds = np.empty((runs, n))
        fresh = np.empty(n, dtype=np.bool_)
        for i in range(runs):
            u = export_mod.public_uniforms(source, n)
            state = adaptive.new_state(int(lm.size))
            t = 0
            while t < n:
                wb.ensure()
                t, pos = kern(x, mask, u, eps_a, base, p.inc, p.dec, p.min_rate, settings.sensitivity, aux,
                              wb.pos, t, n, wb.limit, state, vals[i], buds[i], fresh)
                wb.check(pos, t)
        return vals, buds
    budgets = export_mod.fixed_budgets(scheme, n, lm, eps_a)
    fresh = budgets > 0
    xs = np.tile(x, (runs, 1))
    bs = np.tile(budgets, (runs, 1))
    fr = np.tile(fresh, (runs, 1))
    vals = np.full((runs, n), np.nan)
    if fresh.any():
        vals[fr] = export_mod._fresh_noise("numeric", xs[fr], bs[fr], settings, 0, bk, source)
        vals = vals[:, _fill_index(fresh)]
    return vals, bs
