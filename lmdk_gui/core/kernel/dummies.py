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

Cost and limits (measured by tests/benchmarks/bench_dummies.py; the figures are in docs/dummies.md):
Optimal enumerates ``m!`` chains and refuses ``m > OPTIMAL_MAX_REGULAR``; Heuristic is ``O(m·n)`` worst
case after the incremental evaluation of each candidate in O(1); Partitioned is ``O(m·B₊)`` with ``B₊`` the
number of bins holding landmarks (≤ ``n^(3/5)``), the fastest of the three.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from ..engine.release import normalize_landmarks

# The generators and the mechanism live in their own modules; their public names are this module's too.
from .dummy_mechanism import (  # noqa: F401
    UTILITIES,
    UTILITY_GRID,
    _em_parameters,
    _grid_utilities,
    exponential_mechanism,
    selection_probabilities,
    utility_scores,
)
from .dummy_options import (  # noqa: F401
    HEURISTIC_COMFORT_N,
    OPTIMAL_MAX_REGULAR,
    DummyOptions,
    HistogramOptions,
    RowOptions,
    _prepare,
    _word_source,
    evaluate_sequence,
    fd_bin_width,
    heuristic,
    landmark_distance,
    nearest_anchor_distance,
    optimal,
    partitioned,
)
from .securenoise import WordSource

GENERATORS: tuple[str, ...] = ("partitioned", "heuristic", "optimal")


GENERATOR_LABELS = {"partitioned": "Partitioned", "heuristic": "Heuristic", "optimal": "Optimal"}


UTILITY_LABELS = {"count": "Fewer dummies", "distance": "Dummies near landmarks"}


#: Default share of ε spent on the selection (thesis §5.3.2: 1 % or less).
DEFAULT_SHARE = 0.01


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
    from ..engine.pipeline import compute_release
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
