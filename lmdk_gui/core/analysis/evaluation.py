"""Utility evaluation: the schemes' mean absolute error for 0–100 % landmarks (issue 8).

This reproduces the thesis' utility experiment (Katsomallos 2021, §5.2.1, Figure 5.1) on any series: for
each landmark percentage and each scheme (Uniform, Skip, Adaptive, Balanced and the event-/user-level
baselines), the MAE of the preview release in the data's units (metrics.mae: kWh-like units, metres,
mismatch rate), averaged over R runs of the noise, with its spread (population standard deviation over the
runs, as :func:`lmdk_gui.core.analysis.metrics.mae_over_runs`).

Landmark sets by percentage (thesis §5.1.3):

* ``rule=...``: a suggestion rule with one swept parameter (:func:`suggestions.rule_for_percentage`),
  like the thesis' HUE thresholds, T-drive stay points and Copenhagen device lists. A rule reaches only
  the percentages the data allow; the result records the *actual* percentage of every set.
* ``placement=...``: a synthetic placement (skewed / symmetric / bimodal / uniform,
  :func:`correlation.synthetic_landmarks`). All percentages use the same seed, so the sets are *nested*
  (the Efraimidis–Spirakis keys are the same, and a larger set takes more of the top keys): going from 20 %
  to 40 % only adds landmarks, as the thesis' device lists do.

The landmark set is fixed per percentage; the runs vary the noise only. Run ``r`` uses
``UnitNoise(n, seed + 1 + r)``, the same convention as ``mae_over_runs`` and ``lmdk compare``, so one
percentage of an evaluation reproduces ``mae_over_runs`` on that landmark set exactly (up to summation
order). Every scheme and every percentage of a run share that run's unit noise (common random numbers,
DESIGN §5): differences between bars come from the budgets, not from luck.

Speed. A naive evaluation calls ``compute_release`` + ``mae`` P·S·R times (3,000 for 6 × 5 × 100).
Here the fixed-budget schemes never build a release. Each is planned once per percentage
(:func:`.pipeline.plan`, the same plan as the preview and the export); its release at t is the mechanism
applied to the input at ``src[t]``, the last fresh event up to t (``src = t`` for all but Skip), with the
fresh event's budget (one number for Uniform, Skip and the baselines; two for Balanced: landmarks and
regular events). One compiled kernel per kind then computes the MAE of a chunk of runs at once from the
(runs × n) unit noise and the per-event scales, without materialising any release. Plans with one budget
everywhere (event- and user-level, and a 0 % Uniform/Skip/Balanced) are computed once per run and shared.
Adaptive's sampling is sequential and data-dependent, so it runs the preview's compiled loop
(:func:`.pipeline.run_adaptive_preview`) once per run and percentage. Progress and cancellation are polled
between units of work (a chunk of runs × one percentage).

Denoising (``denoise=True``, issue 12): each run's release of each plan is also materialised by the
preview runner (:func:`.pipeline.run_preview`, bit-identical to the kernels' release), post-processed by the
kind's denoiser (:func:`.pipeline.denoised_values`, the same code as the preview and the export) and its
error recorded in ``mean_denoised``/``std_denoised``. Plans that share a batch key share that work too.

Privacy note: the evaluation uses the true data to measure errors. Its numbers are *not* differentially
private; they are for the data steward choosing a scheme, not for publication.
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..data.series import Series
from ..engine.lazyjit import numba  # the real numba is imported on a kernel's first call (cold start)
from ..engine.pipeline import Plan, denoised_values, kind_of, plan, run_adaptive_preview, run_preview
from ..engine.release import normalize_landmarks
from ..kernel import mechanisms
from ..kernel.noise import UnitNoise
from ..kernel.schemes import SCHEMES
from ..kernel.settings import ALL_SCHEMES, SCHEME_LABELS, PrivacySettings
from .correlation import DISTRIBUTIONS, synthetic_landmarks
from .metrics import SPREAD_PERCENTILES, constant_error, mean_error, unit_label
from .suggestions import get_rule, rule_for_percentage

#: synthetic placements, in the order of the thesis' text (uniform first: the plain default)
PLACEMENTS: tuple[str, ...] = ("uniform", "skewed", "symmetric", "bimodal")
assert set(PLACEMENTS) == set(DISTRIBUTIONS)
DEFAULT_PERCENTAGES: tuple[float, ...] = (0.0, 20.0, 40.0, 60.0, 80.0, 100.0)
DEFAULT_RUNS = 100
CSV_COLUMNS: tuple[str, ...] = ("percentage", "scheme", "mae_mean", "mae_std", "runs")
#: added to the CSV when the evaluation also denoised (``evaluate(denoise=True)``, ``--denoise both``)
CSV_DENOISED_COLUMNS: tuple[str, ...] = ("mae_denoised_mean", "mae_denoised_std")
#: the schemes whose budgets do not depend on the data (the scheme registry)
FIXED_SCHEMES: tuple[str, ...] = tuple(s.name for s in SCHEMES.values() if s.budgets is not None)

#: unit noise elements (runs × events) held per chunk and stream: bounds memory for long series
_CHUNK_ELEMENTS = 1 << 18
#: at most this many runs per chunk, so progress and cancellation stay responsive
_CHUNK_RUNS = 8

ProgressFn = Callable[[int, int], None]
CancelFn = Callable[[], bool]


# ------------------------------------------------------------------------------------ landmark sets
@dataclass(frozen=True, eq=False)
class LandmarkSet:
    """One landmark set of an evaluation: the requested percentage, the rows, and how they were made
    (the rule's parameters, or the placement and its seed)."""

    target: float
    rows: np.ndarray
    n: int
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return int(self.rows.size)

    @property
    def percentage(self) -> float:
        """The actual landmark percentage (a rule may not reach the target exactly)."""
        return 100.0 * self.count / self.n if self.n else 0.0


def parse_percentages(text: str | Iterable[float]) -> tuple[float, ...]:
    """``"0,20,40"`` (or numbers) → sorted distinct percentages in [0, 100]; ValueError otherwise."""
    if isinstance(text, str):
        parts = [p.strip().rstrip("%").strip() for p in text.replace(";", ",").split(",")]
        parts = [p for p in parts if p]
        vals = []
        for p in parts:
            try:
                vals.append(float(p))
            except ValueError:
                raise ValueError(f"percentages must be numbers separated by commas; got {p!r}") from None
    else:
        vals = [float(v) for v in text]
    if not vals:
        raise ValueError("give at least one landmark percentage, e.g. 0,20,40,60,80,100")
    for v in vals:
        if not (math.isfinite(v) and 0.0 <= v <= 100.0):
            raise ValueError(f"landmark percentages must be between 0 and 100; got {v:g}")
    return tuple(sorted(set(vals)))


_PARAM_NAMES = {"below": "threshold below", "above": "threshold above", "distance_m": "Δl",
                "duration_min": "Δt", "values": "category list", "penalty": "penalty"}
_PARAM_UNITS = {"distance_m": " m", "duration_min": " min"}


def describe(placement: str | None, rule: str | None, vary: str | None = None,
             rule_params: Mapping[str, Any] | None = None) -> str:
    """A short phrase naming how the landmark sets were made (for titles and tables), e.g.
    ``"stay points rule (Δt swept, Δl = 50 m)"`` or ``"uniform placement"``."""
    if rule is not None:
        r = get_rule(rule)
        swept = vary or r.main
        parts = [f"{_PARAM_NAMES.get(swept, swept)} swept"]
        for k, v in (rule_params or {}).items():
            if k != swept and v is not None:
                parts.append(f"{_PARAM_NAMES.get(k, k)} = {v:g}{_PARAM_UNITS.get(k, '')}"
                             if isinstance(v, (int, float)) else f"{_PARAM_NAMES.get(k, k)} = {v}")
        return f"{r.label.lower()} rule ({', '.join(parts)})"
    return f"{placement or 'uniform'} placement"


def landmark_sets(series: Series, percentages: Iterable[float], *, placement: str | None = None,
                  rule: str | None = None, vary: str | None = None,
                  rule_params: Mapping[str, Any] | None = None, seed: int = 0,
                  should_cancel: CancelFn | None = None,
                  progress: Callable[[int], None] | None = None) -> list[LandmarkSet] | None:
    """The landmark set for each percentage (see the module docstring). Returns None when cancelled.

    ``rule`` sweeps ``vary`` (default: the rule's main parameter) with ``rule_params`` fixed, exactly as
    :func:`suggestions.rule_for_percentage`; ``placement`` draws ``synthetic_landmarks(n, pct/100,
    placement, seed)``. Give one of the two (default: ``placement="uniform"``).
    """
    if placement is not None and rule is not None:
        raise ValueError("give either a placement or a rule, not both")
    pcts = parse_percentages(percentages)
    n = series.n
    out: list[LandmarkSet] = []
    if rule is not None:
        r = get_rule(rule)
        if not r.supports(series.kind):
            raise ValueError(f"the {r.name} rule needs a {' or '.join(r.kinds)} series; this one is "
                             f"{series.kind}")
        fixed = dict(rule_params or {})
        for i, p in enumerate(pcts):
            if should_cancel is not None and should_cancel():
                return None
            params, rows = rule_for_percentage(series, r, p, vary=vary, **fixed)
            out.append(LandmarkSet(p, normalize_landmarks(rows, n), n, {"rule": r.name, **params}))
            if progress is not None:
                progress(i + 1)
        return out
    placement = placement or "uniform"
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r}; choose one of {', '.join(PLACEMENTS)}")
    if rule_params or vary:
        raise ValueError("rule parameters apply to --rule, not to a synthetic placement")
    for i, p in enumerate(pcts):
        rows = synthetic_landmarks(n, p / 100.0, placement, seed)
        out.append(LandmarkSet(p, rows, n, {"placement": placement, "seed": int(seed)}))
        if progress is not None:
            progress(i + 1)
    return out


# ------------------------------------------------------------------------------------------ result
@dataclass(frozen=True, eq=False)
class EvaluationResult:
    """MAE per landmark percentage (rows) and scheme (columns), in the data's units.

    ``mean``/``std``/``runs`` are (P, S) arrays: mean and population std over the runs that produced a
    value, and how many did (a release with nothing fresh and no public fallback, e.g. Skip at 100 %
    landmarks, has no value: NaN, 0 runs). ``runs_done`` is less than ``runs_requested`` when cancelled.
    """

    sets: tuple[LandmarkSet, ...]
    schemes: tuple[str, ...]
    mean: np.ndarray
    std: np.ndarray
    runs: np.ndarray
    runs_done: int
    runs_requested: int
    cancelled: bool
    kind: str
    unit: str
    epsilon: float
    n: int
    name: str
    source: str  # how the landmark sets were made, e.g. "threshold rule (sweeping below)"
    seed: int
    elapsed_s: float = 0.0
    per_run: np.ndarray | None = field(default=None, repr=False)  # (P, S, runs_done) MAE of every run
    # The same for the denoised releases of the same runs; None when the evaluation did not denoise.
    mean_denoised: np.ndarray | None = None
    std_denoised: np.ndarray | None = None
    per_run_denoised: np.ndarray | None = field(default=None, repr=False)
    # The yardstick (issue 44): the error of publishing one constant at every event (metrics.constant_error);
    # a scheme not clearly below it (advice.informative) tells no more than that one number.
    constant_error: float = float("nan")

    @property
    def denoised(self) -> bool:
        return self.mean_denoised is not None

    def denoised_result(self) -> EvaluationResult:
        """This result with the denoised errors as its means (for the bar chart and its table)."""
        assert self.mean_denoised is not None and self.std_denoised is not None
        return dataclasses.replace(self, mean=self.mean_denoised, std=self.std_denoised,
                                   per_run=self.per_run_denoised, mean_denoised=None, std_denoised=None,
                                   per_run_denoised=None)

    @property
    def percentages(self) -> tuple[float, ...]:
        return tuple(s.target for s in self.sets)

    @property
    def actual(self) -> tuple[float, ...]:
        return tuple(s.percentage for s in self.sets)

    def value(self, percentage: float, scheme: str) -> tuple[float, float, int]:
        """(mean, std, runs) at one requested percentage and scheme."""
        i = self.percentages.index(float(percentage))
        j = self.schemes.index(scheme)
        return float(self.mean[i, j]), float(self.std[i, j]), int(self.runs[i, j])

    def rows(self) -> list[dict[str, Any]]:
        """One dict per (percentage, scheme) with the CSV's columns, plus the actual percentage."""
        out = []
        for i, s in enumerate(self.sets):
            for j, sch in enumerate(self.schemes):
                row = {"percentage": s.target, "actual_percentage": s.percentage, "landmarks": s.count,
                       "scheme": sch, "mae_mean": float(self.mean[i, j]),
                       "mae_std": float(self.std[i, j]), "runs": int(self.runs[i, j])}
                row["mae_p10"], row["mae_p90"] = _spread(self.per_run, i, j)
                if self.mean_denoised is not None and self.std_denoised is not None:
                    row["mae_denoised_mean"] = float(self.mean_denoised[i, j])
                    row["mae_denoised_std"] = float(self.std_denoised[i, j])
                    row["mae_denoised_p10"], row["mae_denoised_p90"] = _spread(self.per_run_denoised, i, j)
                out.append(row)
        return out

    def csv_text(self) -> str:
        """``percentage,scheme,mae_mean,mae_std,runs``: the requested percentage, full-precision floats,
        ``nan`` where no run had a value."""
        from ..publish.writers import neutralise_cell

        buf = io.StringIO()
        extra = CSV_DENOISED_COLUMNS if self.denoised else ()
        buf.write(",".join(CSV_COLUMNS + extra) + "\n")
        for r in self.rows():
            scheme = neutralise_cell(str(r["scheme"]))  # no text cell a spreadsheet would run (issue 17)
            buf.write(f"{_num(r['percentage'])},{scheme},{_num(r['mae_mean'])},{_num(r['mae_std'])},"
                      f"{r['runs']}" + "".join(f",{_num(r[c])}" for c in extra) + "\n")
        return buf.getvalue()

    def write_csv(self, path: str | os.PathLike) -> None:
        """Write :meth:`csv_text` atomically (a temporary file renamed into place)."""
        from ..publish.writers import AtomicFile

        with AtomicFile(path) as af:
            af.file.write(self.csv_text())
            af.commit()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "kind": self.kind, "unit": self.unit, "rows": self.n, "epsilon": self.epsilon,
            "landmarks_from": self.source, "seed": self.seed, "runs": self.runs_requested,
            "runs_done": self.runs_done, "cancelled": self.cancelled, "elapsed_s": self.elapsed_s,
            "constant_error": None if math.isnan(self.constant_error) else self.constant_error,
            "sets": [{"percentage": s.target, "actual_percentage": s.percentage, "landmarks": s.count,
                      "params": _jsonable(s.params)} for s in self.sets],
            "results": [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
                        for r in self.rows()],  # JSON has no NaN: null where no run had a value
        }

    def constant_line(self) -> str:
        """The yardstick in words ('' when unknown)."""
        if math.isnan(self.constant_error):
            return ""
        from .advice import INFORMATIVE_RATIO

        what = {"numeric": "the series' median", "location": "the track's geometric median",
                "categorical": "the most frequent category"}[self.kind]
        return (f"one constant ({what} at every event): {fmt_number(self.constant_error)}"
                f"{'' if self.unit in ('mismatch rate', 'share') else ' ' + self.unit}; an error above "
                f"{INFORMATIVE_RATIO:g} × this is no better than publishing that one number")

    def table_text(self) -> str:
        """A plain-text table: one line per percentage, ``mean ± std`` per scheme."""
        head = f"{'landmarks':<18}" + "".join(f"{SCHEME_LABELS[s]:>22}" for s in self.schemes)
        lines = [head, "-" * len(head)]
        for i, s in enumerate(self.sets):
            lab = f"{s.target:g}%"
            if abs(s.percentage - s.target) >= 0.05:
                lab += f" (got {s.percentage:.1f}%)"
            cells = "".join(f"{fmt_mean_std(self.mean[i, j], self.std[i, j]):>22}"
                            for j in range(len(self.schemes)))
            lines.append(f"{lab:<18}{cells}")
        if self.denoised:
            lines += ["", "denoised (post-processing of the same releases):",
                      *self.denoised_result().table_text().splitlines()]
        return "\n".join(lines)


#: the thousands separator of numbers shown: a narrow space that never breaks (a thin space let a table cell
#: wrap "1 752" into "1" and "752")
THOUSANDS = "\u202f"


def _spread(per_run: np.ndarray | None, i: int, j: int) -> tuple[float | None, float | None]:
    """The 10th and 90th percentile of one cell's run errors (None where no run had a value)."""
    if per_run is None:
        return None, None
    v = per_run[i, j]
    v = v[np.isfinite(v)]
    if not v.size:
        return None, None
    lo, hi = np.percentile(v, SPREAD_PERCENTILES)
    return float(lo), float(hi)


def fmt_number(v: float, digits: int = 4) -> str:
    """``digits`` significant digits, without an exponent between 10⁻³ and 10⁷ (narrow-space thousands)."""
    if not math.isfinite(v):
        return "–"
    if v == 0 or not (1e-3 <= abs(v) < 1e7):
        return f"{v:.{digits}g}"
    exp = math.floor(math.log10(abs(v)))
    places = digits - 1 - exp  # negative: round to tens, hundreds, …
    if abs(round(v, places)) >= 10.0 ** (exp + 1):  # 0.9997 → 1.00, not 1.000
        places -= 1
    text = f"{round(v, places):,.{max(places, 0)}f}"
    return text.replace(",", THOUSANDS)


def fmt_mean_std(m: float, s: float, digits: int = 4) -> str:
    """``mean ± std`` for tables; "no release" when no run had a value."""
    if not math.isfinite(m):
        return "no release"
    return f"{fmt_number(m, digits)} ± {fmt_number(s, 2)}"


def _num(v: float) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if float(v) == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(float(v))


def _jsonable(d: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        if isinstance(v, (np.floating, np.integer)):
            v = v.item()
        elif isinstance(v, (tuple, np.ndarray)):
            v = list(v)
        out[k] = v
    return out


# ------------------------------------------------------------------------------ compiled kernels
@numba.njit(cache=True, nogil=True)
def _mae_fixed(x_in, truth, src, param, k, fallback, u1, u2, out):  # pragma: no cover - compiled
    """Per run r: the mean error over t of the release of x_in[j], j = src[t], against truth[t] (src −1: the
    public fallback; −2: nothing published, not counted). The formulas of ``compute_release``: numeric
    (k = 0) x_in[j] + u1[r, j]·param[j] (Laplace on unit noise, param = Δ/ε_j), error |o − x_t|; categorical
    randomized response of the code x_in[j] (kept when u1[r, j] < param[j], else the other category u2[r, j]
    picks), error 1 where it differs from the true code."""
    runs, n = u1.shape
    for r in range(runs):
        acc = 0.0
        cnt = 0
        for t in range(n):
            j = src[t]
            if j < -1:
                continue
            if k == 0:
                o = fallback if j < 0 else x_in[j] + u1[r, j] * param[j]
                acc += abs(o - truth[t])
            else:
                c = fallback if j < 0 else _rr_code(x_in[j], param[j], k, u1[r, j], u2[r, j])
                if c != truth[t]:
                    acc += 1.0
            cnt += 1
        out[r] = acc / cnt if cnt > 0 else np.nan


@numba.njit(cache=True, nogil=True, inline="always")
def _rr_code(c, keep_p, k, ukeep, uother):  # pragma: no cover - compiled
    """The randomized-response release of code ``c`` from its two unit uniforms (``mechanisms.rr_unit``)."""
    if k > 1 and not (ukeep < keep_p):
        jj = int(uother * (k - 1))
        if jj > k - 2:
            jj = k - 2
        c = (c + 1 + jj) % k
    return c


@numba.njit(cache=True, nogil=True)
def _cos_sin(ang, cth, sth):  # pragma: no cover - compiled
    """cos and sin of the unit angles, once per chunk (shared by every scheme and percentage)."""
    runs, n = ang.shape
    for r in range(runs):
        for t in range(n):
            cth[r, t] = math.cos(ang[r, t])
            sth[r, t] = math.sin(ang[r, t])


@numba.njit(cache=True, nogil=True)
def _coslat(latlon):  # pragma: no cover - compiled
    """cos(latitude) of every point, as ``offset_latlon``/``haversine_one`` compute it."""
    out = np.empty(latlon.shape[0])
    rad = math.pi / 180.0
    for t in range(latlon.shape[0]):
        out[t] = math.cos(latlon[t, 0] * rad)
    return out


@numba.njit(cache=True, nogil=True)
def _mae_location(x_in, coslat, src, scale, gam, cth, sth, out):  # pragma: no cover - compiled
    """Per run: mean great-circle distance (m) between x_t and the planar-Laplace release of x[src[t]].

    The arithmetic of ``mechanisms.offset_latlon`` and ``haversine_one``, with the cosines that do not
    depend on the scheme (of the angles, ``cth``/``sth``, and of the true latitudes, ``coslat``) computed
    once: about half of the transcendental calls per event."""
    runs, n = gam.shape
    R = mechanisms.EARTH_RADIUS_M
    deg = 180.0 / math.pi
    rad = math.pi / 180.0
    for r in range(runs):
        acc = 0.0
        cnt = 0
        for t in range(n):
            j = src[t]
            if j < 0:
                continue
            rr = gam[r, j] * scale[j]
            east = rr * cth[r, j]
            north = rr * sth[r, j]
            lat = x_in[j, 0]
            c = coslat[j]
            if c < 1e-12:
                c = 1e-12
            nlat, nlon = mechanisms.fold_latlon(lat + north / R * deg, x_in[j, 1] + east / (R * c) * deg)
            # haversine(x_t, released)
            p1 = x_in[t, 0] * rad
            p2 = nlat * rad
            dl = (nlon - x_in[t, 1]) * rad
            a = math.sin((p2 - p1) / 2) ** 2 + coslat[t] * math.cos(p2) * math.sin(dl / 2) ** 2
            if a > 1.0:
                a = 1.0
            acc += 2.0 * R * math.asin(math.sqrt(a))
            cnt += 1
        out[r] = acc / cnt if cnt > 0 else np.nan


@numba.njit(cache=True, nogil=True)
def _mean_distance(x, coslat, values):  # pragma: no cover - compiled
    """Mean haversine distance (m) between the true points and released ones (Adaptive's release)."""
    R = mechanisms.EARTH_RADIUS_M
    rad = math.pi / 180.0
    acc = 0.0
    cnt = 0
    for t in range(x.shape[0]):
        p1 = x[t, 0] * rad
        p2 = values[t, 0] * rad
        if p2 != p2:  # NaN: nothing published
            continue
        dl = (values[t, 1] - x[t, 1]) * rad
        a = math.sin((p2 - p1) / 2) ** 2 + coslat[t] * math.cos(p2) * math.sin(dl / 2) ** 2
        if a > 1.0:
            a = 1.0
        acc += 2.0 * R * math.asin(math.sqrt(a))
        cnt += 1
    return acc / cnt if cnt > 0 else np.nan


# ------------------------------------------------------------------------------------- evaluation
@dataclass(frozen=True, eq=False)
class _Batch:
    """What a fixed-budget scheme's batched MAE needs besides the noise: its plan's budgets turned into the
    kernels' per-event arrays."""

    key: tuple  # equal keys give equal MAEs on the same noise (shared between percentages/schemes)
    src: np.ndarray  # the fresh event each event republishes (−1 fallback, −2 nothing)
    scale: np.ndarray  # per event: noise scale (numeric Δ/ε_t, location r/ε_t) or P(keep) (categorical)


class _Context:
    """Per-evaluation constants: the mechanism input, the fallback, the plans of every set and scheme."""

    def __init__(self, series: Series, settings: PrivacySettings, sets: Sequence[LandmarkSet],
                 schemes: Sequence[str]) -> None:
        self.series = series
        self.settings = settings
        self.n = series.n
        self.kind = series.kind
        self.mech = kind_of(series)
        inp = self.mech.prepare(series, settings)
        self.x_in = np.ascontiguousarray(inp.x)
        self.k = inp.k
        self.codes = self.x_in if self.kind == "categorical" else None  # codes in the release's space
        self.fallback = inp.fallback
        self.coslat = _coslat(self.x_in) if self.kind == "location" else None
        self.sets = list(sets)
        self.schemes = tuple(schemes)
        identity = np.arange(self.n, dtype=np.int64)
        self.plans: list[dict[str, Plan]] = []
        self.batches: list[dict[str, _Batch]] = []
        for i, ls in enumerate(self.sets):
            plans: dict[str, Plan] = {}
            batches = {}
            for s in self.schemes:
                # The baselines do not depend on the landmarks: planned without them, they share results.
                lm = ls.rows if SCHEMES[s].uses_landmarks else np.zeros(0, np.int64)
                p = plans[s] = plan(series, lm, settings, s, inp=inp)
                if p.budgets is None:
                    continue
                fresh = p.budgets > 0
                # (a period series: the noise scales S_j/ε_j depend on the set's landmark periods)
                eff = p.noise_budgets(p.budgets)
                lo, hi = (float(p.budgets.min()), float(p.budgets.max())) if self.n else (0.0, 0.0)
                if lo == hi and lo > 0 and p.noise_scale is None:  # one budget everywhere: shared with every plan of that budget
                    batches[s] = _Batch(("all", lo), identity, self._scales(eff, fresh))
                else:
                    batches[s] = _Batch((s, i), self._src(fresh), self._scales(eff, fresh))
            self.plans.append(plans)
            self.batches.append(batches)

    def _scales(self, budgets: np.ndarray, fresh: np.ndarray) -> np.ndarray:
        """The kernels' per-event parameter at fresh events (0 elsewhere: never read)."""
        out = np.zeros(self.n)
        st = self.settings
        if self.kind != "categorical":
            np.divide(st.sensitivity if self.kind == "numeric" else st.radius_m, budgets, out=out, where=fresh)
            return out
        for b in np.unique(budgets[fresh]):  # one or two distinct budgets: the scalar formula, as before
            at = fresh & (budgets == b)
            out[at] = float(1.0 / (1.0 + (self.k - 1) * np.exp(-np.float64(b)))) if self.k > 1 else 1.0
        return out

    def _src(self, fresh: np.ndarray) -> np.ndarray:
        """For each event, the fresh event whose release it republishes (release.fill_approximations):
        −1 = the public fallback, −2 = nothing (no fresh release and no fallback)."""
        n = self.n
        idx = np.where(fresh, np.arange(n), -1)
        np.maximum.accumulate(idx, out=idx)
        before = idx < 0
        if before.any():
            if self.fallback is not None:
                idx[before] = -1
            elif fresh.any():
                idx[before] = int(np.argmax(fresh))
            else:
                idx[:] = -2
        return idx.astype(np.int64)

    # ------------------------------------------------------------------------------------- noise
    def streams(self, run_seeds: Sequence[int], with_adaptive: bool) -> tuple[dict[str, np.ndarray], list]:
        """Unit noise of a chunk of runs, stacked (runs × n) per stream, and the UnitNoise objects."""
        noises = [UnitNoise(self.n, s) for s in run_seeds]
        names = {"numeric": ("laplace",), "location": ("gamma", "angle"), "categorical": ("keep", "other")}
        stacks = {name: np.stack([getattr(u, name) for u in noises]) if noises else np.zeros((0, self.n))
                  for name in names[self.kind]}
        if self.kind == "location" and noises:
            stacks["cos"] = np.empty_like(stacks["angle"])
            stacks["sin"] = np.empty_like(stacks["angle"])
            _cos_sin(stacks["angle"], stacks["cos"], stacks["sin"])
        if with_adaptive:
            for u in noises:
                u.sample  # noqa: B018 - draw now (outside any lock), the adaptive loop reads it
        return stacks, noises

    # ---------------------------------------------------------------------------------- fixed MAE
    def fixed_mae(self, batch: _Batch, stacks: dict[str, np.ndarray]) -> np.ndarray:
        runs = next(iter(stacks.values())).shape[0]
        out = np.empty(runs)
        if self.kind == "numeric":
            fb = float(self.fallback) if self.fallback is not None else 0.0
            lap = stacks["laplace"]
            _mae_fixed(self.x_in, self.series.values, batch.src, batch.scale, 0, fb, lap, lap, out)
        elif self.kind == "location":
            _mae_location(self.x_in, self.coslat, batch.src, batch.scale, stacks["gamma"], stacks["cos"],
                          stacks["sin"], out)
        else:
            fb = int(self.fallback) if self.fallback is not None else 0
            _mae_fixed(self.x_in, self.codes, batch.src, batch.scale, self.k, fb, stacks["keep"], stacks["other"],
                       out)
        return out

    # ------------------------------------------------------------------------------- adaptive MAE
    def adaptive_mae(self, i: int, noise: UnitNoise) -> float:
        values, _, _ = run_adaptive_preview(self.plans[i]["adaptive"], noise)
        if self.kind == "location":
            return float(_mean_distance(self.x_in, self.coslat, values))
        return _mean_error(self.series, self.mech, values, self.codes)


    def denoised_mae(self, i: int, scheme: str, noise: UnitNoise) -> float:
        """Error of the denoised release of set ``i``'s plan for ``scheme`` on this run's noise."""
        p = self.plans[i][scheme]
        den = denoised_values(run_preview(p, noise), p.settings)
        if den is None:
            return float("nan")
        if self.kind == "location":
            return float(_mean_distance(self.x_in, self.coslat, den.values))
        return _mean_error(self.series, self.mech, den.values, self.codes)


def _mean_error(series: Series, mech, values: np.ndarray, codes: np.ndarray | None) -> float:
    """metrics.mae on bare values (no Release object): the kind's error metric, missing values excluded, summed
    as the preview sums it."""
    return mean_error(mech.error(series.values, values, codes))


def _chunk_size(n: int, runs: int) -> int:
    return max(1, min(runs, _CHUNK_RUNS, _CHUNK_ELEMENTS // max(n, 1)))


def evaluate(series: Series, settings: PrivacySettings, percentages: Iterable[float] = DEFAULT_PERCENTAGES, *,
             placement: str | None = None, rule: str | None = None, vary: str | None = None,
             rule_params: Mapping[str, Any] | None = None, sets: Sequence[LandmarkSet] | None = None,
             runs: int = DEFAULT_RUNS, seed: int = 0, schemes: Iterable[str] = ALL_SCHEMES,
             progress: ProgressFn | None = None, should_cancel: CancelFn | None = None,
             workers: int | None = None, denoise: bool = False) -> EvaluationResult:
    """MAE mean and spread over ``runs`` runs for every landmark percentage and scheme.

    Landmark sets come from ``placement`` (synthetic, seeded with ``seed``) or ``rule`` (a suggestion rule
    swept over ``vary`` with ``rule_params`` fixed), or are given ready-made in ``sets``. ``progress(done,
    total)`` is called after each unit of work and ``should_cancel()`` polled between them; when it returns
    True the evaluation stops and returns the runs completed so far (``cancelled=True``).

    ``workers``: threads over chunks of runs (the kernels release the GIL; Adaptive's loop does not).
    None or 1 runs in the calling thread.

    ``denoise``: also the error of every run's denoised release (``mean_denoised``/``std_denoised``).
    """
    t0 = time.perf_counter()
    runs, schemes = _checked(series, settings, runs, schemes)
    if sets is None:
        pcts = parse_percentages(percentages)
        total = len(pcts) * (runs + 1)
        made = landmark_sets(series, pcts, placement=placement, rule=rule, vary=vary, rule_params=rule_params,
                             seed=seed, should_cancel=should_cancel,
                             progress=None if progress is None else (lambda i: progress(i, total)))
        cancelled = made is None
        sets, source, done0 = tuple(made or ()), describe(placement, rule, vary, rule_params), len(made or ())
    else:
        sets, source, done0, cancelled = tuple(sets), "given landmark sets", 0, False
        total = len(sets) * runs
    per_run = np.full((len(sets), len(schemes), 2 if denoise else 1, runs), np.nan)  # [.., 0, r] raw, [.., 1, r] denoised
    runs_done = 0
    if not cancelled and sets:
        runner = _Runs(_Context(series, settings, sets, schemes), runs, seed, denoise, should_cancel)
        runs_done, cancelled = runner.fill(per_run, workers, done0, total, progress)
    per_run = per_run[..., :runs_done]
    mean, std, cnt = _mean_std(per_run)
    extra = {}
    if denoise:
        extra = {"mean_denoised": mean[:, :, 1], "std_denoised": std[:, :, 1], "per_run_denoised": per_run[:, :, 1]}
    return EvaluationResult(
        sets=sets, schemes=schemes, mean=mean[:, :, 0], std=std[:, :, 0], runs=cnt[:, :, 0].astype(np.int64),
        runs_done=runs_done, runs_requested=runs, cancelled=cancelled, kind=series.kind, unit=unit_label(series),
        epsilon=settings.epsilon, n=series.n, name=series.name, source=source, seed=int(seed),
        elapsed_s=time.perf_counter() - t0, per_run=per_run[:, :, 0], constant_error=constant_error(series),
        **extra,
    )


def _checked(series: Series, settings: PrivacySettings, runs: int,
             schemes: Iterable[str]) -> tuple[int, tuple[str, ...]]:
    """The arguments of :func:`evaluate`, checked (one-line ValueErrors)."""
    settings.validate()
    if isinstance(runs, bool) or int(runs) != runs or runs < 1:
        raise ValueError(f"runs must be a positive whole number, got {runs!r}")
    schemes = tuple(schemes)
    for s in schemes:
        if s not in ALL_SCHEMES:
            raise ValueError(f"unknown scheme {s!r}; choose from {', '.join(ALL_SCHEMES)}")
    if not schemes:
        raise ValueError("choose at least one scheme")
    if series.n == 0:
        raise ValueError("the series is empty")
    return int(runs), schemes


def _mean_std(per_run: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, population std and count over the last axis, ignoring NaN (runs not done)."""
    ok = ~np.isnan(per_run)
    cnt = ok.sum(axis=3)
    with np.errstate(invalid="ignore", divide="ignore"):
        filled = np.where(ok, per_run, 0.0)
        mean = np.where(cnt > 0, filled.sum(axis=3) / np.maximum(cnt, 1), np.nan)
        dev = np.where(ok, per_run - mean[..., None], 0.0)
        std = np.where(cnt > 0, np.sqrt((dev * dev).sum(axis=3) / np.maximum(cnt, 1)), np.nan)
    return mean, std, cnt


class _Runs:
    """The runs of an evaluation, in chunks (one thread, or a pool of threads over the chunks)."""

    def __init__(self, ctx: _Context, runs: int, seed: int, denoise: bool,
                 should_cancel: CancelFn | None) -> None:
        self.ctx, self.runs, self.seed, self.denoise = ctx, runs, seed, denoise
        self.should_cancel = should_cancel
        self.chunk = _chunk_size(ctx.series.n, runs)
        self.a_col = ctx.schemes.index("adaptive") if "adaptive" in ctx.schemes else -1

    def work(self, start: int, report: Callable[[int], None] | None) -> np.ndarray | None:
        """The MAE of runs ``start`` … ``start + chunk`` for every set and scheme (None: cancelled)."""
        ctx, denoise = self.ctx, self.denoise
        stop = min(start + self.chunk, self.runs)
        stacks, noises = ctx.streams([self.seed + 1 + r for r in range(start, stop)], self.a_col >= 0 or denoise)
        P, S = len(ctx.sets), len(ctx.schemes)
        res = np.full((P, S, 2 if denoise else 1, stop - start), np.nan)
        memo: dict[tuple, np.ndarray] = {}
        memo_d: dict[tuple, np.ndarray] = {}
        for i in range(P):
            if self.should_cancel is not None and self.should_cancel():
                return None
            for j, s in enumerate(ctx.schemes):
                if j == self.a_col:
                    continue
                batch = ctx.batches[i][s]
                if batch.key not in memo:
                    memo[batch.key] = ctx.fixed_mae(batch, stacks)
                res[i, j, 0] = memo[batch.key]
                if denoise:
                    if batch.key not in memo_d:
                        memo_d[batch.key] = np.array([ctx.denoised_mae(i, s, u) for u in noises])
                    res[i, j, 1] = memo_d[batch.key]
            if self.a_col >= 0:
                for q, u in enumerate(noises):
                    res[i, self.a_col, 0, q] = ctx.adaptive_mae(i, u)
                    if denoise:
                        res[i, self.a_col, 1, q] = ctx.denoised_mae(i, "adaptive", u)
            if report is not None:
                report(stop - start)
        return res

    def fill(self, per_run: np.ndarray, workers: int | None, done: int, total: int,
             progress: ProgressFn | None) -> tuple[int, bool]:
        """Run every chunk into ``per_run``; (runs done, cancelled)."""
        starts = list(range(0, self.runs, self.chunk))
        runs_done = 0
        nthreads = 1 if workers is None else max(1, int(workers))
        if nthreads == 1 or len(starts) == 1:
            for start in starts:
                def report(k: int) -> None:
                    nonlocal done
                    done += k
                    if progress is not None:
                        progress(done, total)
                res = self.work(start, report)
                if res is None:
                    return runs_done, True
                per_run[..., start:start + res.shape[-1]] = res
                runs_done = start + res.shape[-1]
            return runs_done, False
        cancelled = False
        with ThreadPoolExecutor(max_workers=nthreads, thread_name_prefix="lmdk-eval") as pool:
            futures = [pool.submit(self.work, s, None) for s in starts]
            for start, fut in zip(starts, futures, strict=True):
                res = fut.result()
                if res is None or cancelled:
                    cancelled = True
                    continue
                per_run[..., start:start + res.shape[-1]] = res
                runs_done = start + res.shape[-1]
                done += len(self.ctx.sets) * res.shape[-1]
                if progress is not None:
                    progress(done, total)
        return runs_done, cancelled
