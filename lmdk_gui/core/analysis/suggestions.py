"""Landmark suggestions (DESIGN §8): rules that *propose* landmarks; the choice stays the user's.

Every rule takes a :class:`~lmdk_gui.core.data.series.Series` and returns the sorted, distinct ``int64`` row
positions it proposes. The rules are the ones the thesis used to make landmark sets on its real data sets
(Katsomallos 2021, §5.1.3 "Landmark percentage"), plus change points:

* :func:`threshold`            numeric: values below and/or above a threshold (HUE energy in the thesis);
* :func:`stay_points`          location: stay points of Li et al. 2008 (T-drive taxis in the thesis);
* :func:`category_membership`  categorical: events whose category is in a chosen list (Copenhagen contacts:
  "a landmark represents a timestamp when a specific contact device is registered");
* :func:`change_points`        numeric: first event after each shift of the mean (binary segmentation).

For the GUI: :data:`RULES` describes each rule and its parameters (:class:`Rule`, :class:`ParamSpec`) so
that a parameter form can be built generically; :func:`apply_rule` / :func:`count` run a rule by name
(``count`` is what a live "N landmarks (P %)" label calls while a slider moves); :func:`defaults` and
:func:`ranges` give data-aware starting values and slider ranges; :func:`rule_for_percentage` finds the
parameter that gets closest to a target landmark percentage (the evaluation view, like the thesis' 0–100 %
sweeps).

Speed (2-core laptop-class machine, n = 10^6; see ``tests/benchmarks/bench_suggestions.py``): threshold and
category are single vectorised passes (a few ms); stay points run a compiled (numba) scan; change points
build a binary-segmentation tree once per series (cached on the series) after which any penalty is a
lookup. Caches live in ``Series._cache`` (a series is immutable), under keys starting with
``"suggestions."``.

Nothing here is published: suggestions are computed on the raw data only to help the user pick landmarks.
The landmark list is never written to a release (DESIGN §9), but a release without dummy landmarks shows
where its landmarks are, so landmarks found from the values tell about the values (:data:`RULE_WARNING`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..data.series import Kind, Series
from ..engine.lazyjit import numba  # the real numba is imported on a kernel's first call (cold start)
from ..kernel.mechanisms import EARTH_RADIUS_M, haversine, haversine_one

__all__ = [
    "ParamSpec",
    "RULES",
    "Rule",
    "apply_rule",
    "category_membership",
    "change_points",
    "count",
    "default_penalty",
    "defaults",
    "get_rule",
    "ranges",
    "rule_for_percentage",
    "rules_for_kind",
    "stay_points",
    "threshold",
]

_EMPTY = np.zeros(0, dtype=np.int64)
_NS_PER_MIN = 60_000_000_000


# ------------------------------------------------------------------------------------------- helpers
def _need_kind(series: Series, kind: Kind, rule: str) -> None:
    if series.kind != kind:
        raise ValueError(f"the {rule} rule needs a {kind} series; this one is {series.kind}")


def _number(value: Any, name: str, *, minimum: float | None = None, allow_inf: bool = False) -> float:
    """A parameter as a float; ValueError naming it when it is not a (finite, ≥ minimum) number."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be at least {minimum:g}, got {value!r}")
    return v


def _cache(series: Series) -> dict:
    return series._cache


def _times_ns(series: Series) -> np.ndarray:
    """Event times as int64 nanoseconds; ValueError if they are not in ascending order."""
    key = "suggestions.times_ns"
    t = _cache(series).get(key)
    if t is None:
        t = np.ascontiguousarray(np.asarray(series.times).astype("datetime64[ns]").astype(np.int64))
        if t.size > 1 and bool(np.any(t[1:] < t[:-1])):
            raise ValueError("the series' timestamps are not in ascending order (rows must be sorted by time)")
        _cache(series)[key] = t
    return t


# ------------------------------------------------------------------------------------------ threshold
def threshold(series: Series, *, below: float | None = None, above: float | None = None) -> np.ndarray:
    """Rows whose value is strictly below ``below`` and/or strictly above ``above``.

    Both comparisons are **strict** (``x < below``, ``x > above``), so a threshold equal to the smallest
    value selects nothing, as with the thesis' "0 % landmarks at 0.28 kWh" (the minimum of its HUE sample).
    With both given, a row is a landmark when *either* holds (the two tails; ``below > above`` therefore
    selects everything). ±inf are allowed (``below=inf`` selects every row); NaN is refused.
    """
    _need_kind(series, "numeric", "threshold")
    if below is None and above is None:
        raise ValueError("threshold: give below, above or both")
    x = series.values
    mask: np.ndarray | None = None
    if below is not None:
        mask = x < _number(below, "below", allow_inf=True)
    if above is not None:
        m2 = x > _number(above, "above", allow_inf=True)
        mask = m2 if mask is None else (mask | m2)
    assert mask is not None
    return np.flatnonzero(mask).astype(np.int64, copy=False)


# ---------------------------------------------------------------------------------------- stay points
def _unit_xyz(series: Series) -> np.ndarray:
    """Points on the unit sphere, cached: the great-circle test below works on chord lengths."""
    key = "suggestions.xyz"
    xyz = _cache(series).get(key)
    if xyz is None:
        lat = np.radians(series.values[:, 0])
        lon = np.radians(series.values[:, 1])
        c = np.cos(lat)
        xyz = np.ascontiguousarray(np.column_stack((c * np.cos(lon), c * np.sin(lon), np.sin(lat))))
        _cache(series)[key] = xyz
    return xyz


def _path_length(series: Series) -> np.ndarray:
    """Cumulative great-circle length of the track (metres, ``cum[0] = 0``), cached."""
    key = "suggestions.cum_m"
    cum = _cache(series).get(key)
    if cum is None:
        v = series.values
        cum = np.zeros(series.n, dtype=np.float64)
        if series.n > 1:
            np.cumsum(haversine(v[:-1], v[1:]), out=cum[1:])
        _cache(series)[key] = cum
    return cum


@numba.njit(cache=True, nogil=True)
def _first_above(cum, limit, start, n):  # pragma: no cover - compiled
    """Smallest j >= start with cum[j] > limit (n if none), by galloping then bisection (cum is sorted)."""
    if start >= n or cum[start] > limit:
        return start
    lo = start  # cum[lo] <= limit
    step = 1
    hi = start + 1
    while hi < n and cum[hi] <= limit:
        lo = hi
        step *= 2
        hi = lo + step
    if hi > n:
        hi = n
    while hi - lo > 1:  # invariant: cum[lo] <= limit, (hi == n or cum[hi] > limit)
        mid = (lo + hi) // 2
        if cum[mid] <= limit:
            lo = mid
        else:
            hi = mid
    return hi


@numba.njit(cache=True, nogil=True)
def _stay_scan(xyz, latlon, cum, t_ns, chord2_max, dist_m, dur_ns, out):  # pragma: no cover - compiled
    """Li et al. 2008's scan (see :func:`stay_points`); marks the events of every stay in ``out``.

    Speed-up that changes no result: once event j is known to lie δ ≤ Δl metres from event i, every later
    event reached from j along a path shorter than Δl − δ is also within Δl of i (triangle inequality on
    the sphere), so the scan jumps over them (a search in the cumulative path length ``cum``) and only
    tests the first event that could be outside. A small margin absorbs rounding.
    """
    n = xyz.shape[0]
    if n == 0:
        return 0
    last_t = t_ns[n - 1]
    band = chord2_max * 1e-9 + 1e-24
    margin = 1e-6 + 1e-9 * dist_m
    two_r = 2.0 * EARTH_RADIUS_M
    marked = 0
    i = 0
    while i < n:
        if last_t - t_ns[i] < dur_ns:
            break  # no later event can start a stay that lasts long enough
        xi = xyz[i, 0]
        yi = xyz[i, 1]
        zi = xyz[i, 2]
        j = i + 1
        while j < n:
            dx = xyz[j, 0] - xi
            dy = xyz[j, 1] - yi
            dz = xyz[j, 2] - zi
            c2 = dx * dx + dy * dy + dz * dz
            if c2 > chord2_max + band:
                break
            if c2 >= chord2_max - band:  # too close to call on chords: decide with haversine itself
                if haversine_one(latlon[i, 0], latlon[i, 1], latlon[j, 0], latlon[j, 1]) > dist_m:
                    break
                j += 1
                continue
            h = 0.5 * math.sqrt(c2)
            delta = two_r * math.asin(h if h < 1.0 else 1.0)
            slack = dist_m - delta - margin
            if slack > 0.0:
                j = _first_above(cum, cum[j] + slack, j + 1, n)
            else:
                j += 1
        if t_ns[j - 1] - t_ns[i] >= dur_ns:
            for k in range(i, j):
                out[k] = True
            marked += j - i
            i = j
        else:
            i += 1
    return marked


def _stay_mask(series: Series, distance_m: float, duration_min: float) -> np.ndarray:
    n = series.n
    out = np.zeros(n, dtype=np.bool_)
    if n == 0:
        return out
    t = _times_ns(series)
    xyz = _unit_xyz(series)
    cum = _path_length(series)
    half = min(distance_m, math.pi * EARTH_RADIUS_M) / (2.0 * EARTH_RADIUS_M)
    chord2 = (2.0 * math.sin(half)) ** 2
    dur_ns = int(round(duration_min * _NS_PER_MIN))
    _stay_scan(xyz, np.ascontiguousarray(series.values), cum, t, chord2, float(distance_m), dur_ns, out)
    return out


def stay_points(series: Series, *, distance_m: float, duration_min: float) -> np.ndarray:
    """Rows that belong to a stay (Li et al. 2008, as used for T-drive in the thesis §5.1.3).

    Scan as in Li et al. 2008 ("Mining user similarity based on location history", Algorithm 1): from event
    ``i``, extend ``j = i+1, i+2, …`` while event ``j`` is within ``distance_m`` metres of event ``i``
    (great-circle distance, the same formula as :func:`lmdk_gui.core.kernel.mechanisms.haversine`; inclusive,
    ``≤``). If the events ``i..j-1`` span at least ``duration_min`` minutes (``t[j-1] − t[i] ≥ Δt``,
    inclusive) they form a stay: **all** of them become landmarks and the scan continues at ``j``;
    otherwise it continues at ``i+1``.

    Two deliberate differences from the paper's pseudo-code, both documented choices:

    * the duration is measured to the *last event inside* the radius (the thesis' wording: "the time period
      Δt between the present point and the last subsequent point"), not to the first event outside it,
      which would count the travel time to that event;
    * a stay still running at the end of the track counts (the paper's loop only records a stay when some
      later point leaves the radius, so a vehicle parked at the end of the recording would be missed).

    ``duration_min = 0`` makes every event a landmark (each event is a stay of length 0); with
    ``distance_m = 0`` only repeated positions can form stays. Cost: O(n · w) in the worst case, where w is
    the number of events in a Δt window, in practice a few ms to a few hundred ms for 10^6 events.

    Timestamps must be ascending (a :class:`Series` always is); otherwise ValueError.
    """
    _need_kind(series, "location", "stay")
    d = _number(distance_m, "distance_m", minimum=0.0)
    dur = _number(duration_min, "duration_min", minimum=0.0)
    return np.flatnonzero(_stay_mask(series, d, dur)).astype(np.int64, copy=False)


# ---------------------------------------------------------------------------------------- categories
def _category_codes(series: Series, values: Iterable[Any] | str) -> np.ndarray:
    if isinstance(values, str | int | np.integer):
        values = [values]
    labels = [str(v) for v in values]
    index = _cache(series).get("suggestions.cat_index")
    if index is None:
        assert series.categories is not None
        index = {c: i for i, c in enumerate(series.categories)}
        _cache(series)["suggestions.cat_index"] = index
    unknown = [v for v in dict.fromkeys(labels) if v not in index]
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5
                                                           else "")
        raise ValueError(f"category: unknown label(s) {shown}; the series has {len(index)} categories")
    return np.array(sorted({index[v] for v in labels}), dtype=np.int64)


def category_membership(series: Series, values: Iterable[Any] | str) -> np.ndarray:
    """Rows whose category label is one of ``values`` (labels as text; a single label may be passed alone).

    This is how the thesis made its Copenhagen landmark sets: the timestamps at which chosen contact devices
    were registered (§5.1.3). A label that is not a category of the series raises ValueError naming it
    (a typo must not silently select nothing).
    """
    _need_kind(series, "categorical", "category")
    codes = _category_codes(series, values)
    assert series.categories is not None
    table = np.zeros(len(series.categories), dtype=np.bool_)
    table[codes] = True
    return np.flatnonzero(table[series.values]).astype(np.int64, copy=False)


# ------------------------------------------------------------------------------------- change points
@numba.njit(cache=True, nogil=True)
def _binseg_tree(prefix, floor, pos_out, gain_out):  # pragma: no cover - compiled
    """Binary segmentation of a mean-shift (L2) cost, keeping the splits whose *effective* gain > floor.

    ``prefix`` is the cumulative sum of the (standardised) data with a leading 0. The gain of splitting
    segment [a, b) at k is the drop of the sum of squared residuals, ``nL·nR/n · (mean_L − mean_R)²``
    (written this way rather than as a difference of sums of squares, which cancels badly). The effective
    gain of a split is the minimum gain along its path from the root, so that with penalty p the splits
    binary segmentation makes are exactly those with effective gain > p.
    """
    n = prefix.shape[0] - 1
    m = 0
    stack_a = np.empty(64, dtype=np.int64)
    stack_b = np.empty(64, dtype=np.int64)
    stack_g = np.empty(64, dtype=np.float64)
    top = 0
    stack_a[0] = 0
    stack_b[0] = n
    stack_g[0] = np.inf
    top = 1
    while top > 0:
        top -= 1
        a = stack_a[top]
        b = stack_b[top]
        g_parent = stack_g[top]
        length = b - a
        if length < 2:
            continue
        sa = prefix[a]
        tot = prefix[b] - sa
        best = -1.0
        best_k = -1
        for k in range(a + 1, b):
            nl = k - a
            nr = b - k
            sl = prefix[k] - sa
            d = sl / nl - (tot - sl) / nr
            g = (nl * nr / length) * d * d
            if g > best:
                best = g
                best_k = k
        eff = best if best < g_parent else g_parent
        if not eff > floor:
            continue
        pos_out[m] = best_k
        gain_out[m] = eff
        m += 1
        if top + 2 > stack_a.shape[0]:
            na = np.empty(stack_a.shape[0] * 2, dtype=np.int64)
            nb = np.empty(stack_a.shape[0] * 2, dtype=np.int64)
            ng = np.empty(stack_a.shape[0] * 2, dtype=np.float64)
            na[:top] = stack_a[:top]
            nb[:top] = stack_b[:top]
            ng[:top] = stack_g[:top]
            stack_a = na
            stack_b = nb
            stack_g = ng
        stack_a[top] = a
        stack_b[top] = best_k
        stack_g[top] = eff
        stack_a[top + 1] = best_k
        stack_b[top + 1] = b
        stack_g[top + 1] = eff
        top += 2
    return m


def _noise_scale(x: np.ndarray) -> float:
    """Robust noise standard deviation from first differences: MAD(Δx) / (0.6745·√2).

    Differences cancel the mean shifts themselves (except at the few change points), the MAD ignores those
    few outliers. Falls back to std(Δx)/√2 when more than half the differences are equal (piecewise-
    constant data, typical of hand-made examples), and to 1 when the series is constant.
    """
    if x.size < 2:
        return 1.0
    d = np.diff(x)
    mad = float(np.median(np.abs(d - np.median(d))))
    s = mad / (0.6744897501960817 * math.sqrt(2.0))
    if not s > 0:
        s = float(np.std(d)) / math.sqrt(2.0)
    return s if s > 0 and math.isfinite(s) else 1.0


def _prefix(series: Series) -> np.ndarray:
    key = "suggestions.cp_prefix"
    p = _cache(series).get(key)
    if p is None:
        x = series.values
        z = (x - (float(np.mean(x)) if x.size else 0.0)) / _noise_scale(x)
        p = np.empty(x.size + 1, dtype=np.float64)
        p[0] = 0.0
        np.cumsum(z, out=p[1:])
        _cache(series)[key] = p
    return p


#: Gains (in units of σ̂²) at or below this are rounding noise of the prefix sums, never a change.
_MIN_GAIN = 1e-9


def _cp_tree(series: Series, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """Split positions and effective gains (standardised units) of every split with effective gain > floor
    (and > :data:`_MIN_GAIN`).

    Cached on the series: a tree built with a lower floor answers every higher penalty.
    """
    key = "suggestions.cp_tree"
    cached = _cache(series).get(key)
    if cached is not None and cached[0] <= floor:
        return cached[1], cached[2]
    prefix = _prefix(series)
    n = series.n
    floor = max(floor, _MIN_GAIN)
    pos = np.empty(max(n - 1, 0), dtype=np.int64)
    gain = np.empty(max(n - 1, 0), dtype=np.float64)
    m = _binseg_tree(prefix, float(floor), pos, gain) if n >= 2 else 0
    pos, gain = pos[:m].copy(), gain[:m].copy()
    order = np.argsort(-gain, kind="stable")
    pos, gain = pos[order], gain[order]  # sorted by decreasing effective gain
    _cache(series)[key] = (float(floor), pos, gain)
    return pos, gain


def default_penalty(n: int) -> float:
    """BIC-like default: ``2·ln n`` (two parameters per change, its position and the new mean), in units of
    the noise variance (the data are standardised by the robust noise scale first)."""
    return 2.0 * math.log(max(int(n), 2))


def change_points(series: Series, *, penalty: float | None = None) -> np.ndarray:
    """First row after each shift of the mean, by binary segmentation with a penalty.

    Method (Scott & Knott 1974; Sen & Srivastava 1975; the "Binseg" of the ``ruptures`` package with the
    ``l2`` cost): the series is standardised by a robust noise scale (:func:`_noise_scale`), then a segment is
    split at the position that most reduces the sum of squared residuals around the segment means, as long
    as that reduction exceeds ``penalty``; both halves are then treated the same way. ``penalty`` is in
    units of the noise variance σ̂², default :func:`default_penalty` = 2·ln n (BIC-like); larger → fewer
    changes, 0 → every split that reduces the cost at all. A change between rows k−1 and k proposes row
    **k** as the landmark (the first event of the new regime), so row 0 is never proposed.

    Binary segmentation is greedy (not the global optimum that PELT finds) but costs O(n log n) on typical
    data, where PELT degrades to O(n²) on long stretches without a change; and its splits nest as the
    penalty drops, which makes the live count and :func:`rule_for_percentage` lookups in a cached tree.
    """
    _need_kind(series, "numeric", "changepoints")
    pen = default_penalty(series.n) if penalty is None else _number(penalty, "penalty", minimum=0.0)
    if series.n < 2:
        return _EMPTY.copy()
    pos, gain = _cp_tree(series, pen)
    return np.sort(pos[gain > pen]).astype(np.int64, copy=False)


# ---------------------------------------------------------------------------------------- the registry
@dataclass(frozen=True)
class ParamSpec:
    """One parameter of a rule, enough for a generic form field.

    ``default``/``minimum``/``maximum`` are static; ``None`` means "depends on the data": ask
    :func:`defaults` / :func:`ranges`. ``type`` is ``"float"`` (a number field or slider) or ``"labels"``
    (a multi-select of the series' categories). ``optional`` parameters may be left empty (``None``).
    """

    name: str
    label: str
    default: Any
    minimum: float | None
    maximum: float | None
    unit: str = ""
    type: Literal["float", "labels"] = "float"
    optional: bool = False
    help: str = ""


@dataclass(frozen=True)
class Rule:
    """A suggestion rule: ``func(series, **params) -> rows``; ``main`` is the parameter a sweep varies."""

    name: str
    label: str
    kinds: tuple[Kind, ...]
    params: tuple[ParamSpec, ...]
    main: str
    func: Callable[..., np.ndarray]
    help: str = ""

    @property
    def kind(self) -> Kind:
        return self.kinds[0]

    def supports(self, kind: str) -> bool:
        return kind in self.kinds

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


#: Said wherever a rule's landmarks are applied (the Landmarks menu's panel, Export all persons): the landmark
#: privacy guarantee holds for a given landmark set; one computed from the values carries them.
RULE_WARNING = ("A release shows where its landmarks are unless dummy landmarks hide them (Skip and Adaptive "
                "repeat values there). Landmarks found by a rule on the values then tell anyone which events "
                "passed it (e.g. every hour above a threshold, every place where someone stayed): add dummy "
                "landmarks, or choose landmarks from something public.")

RULES: dict[str, Rule] = {
    r.name: r
    for r in (
        Rule(
            "threshold", "Value threshold", ("numeric",),
            (ParamSpec("below", "Below", None, None, None, optional=True,
                       help="landmark when the value is strictly below this"),
             ParamSpec("above", "Above", None, None, None, optional=True,
                       help="landmark when the value is strictly above this")),
            "below", threshold,
            "Events with a value below and/or above a threshold (thesis: HUE energy).",
        ),
        Rule(
            "stay", "Stay points", ("location",),
            (ParamSpec("distance_m", "Distance Δl", 200.0, 0.0, 50_000.0, "m",
                       help="events within this many metres of the stay's first event"),
             ParamSpec("duration_min", "Duration Δt", 30.0, 0.0, 10_080.0, "min",
                       help="for at least this many minutes")),
            "distance_m", stay_points,
            "Places where the track stays within Δl metres for at least Δt minutes (Li et al. 2008; "
            "thesis: T-drive). Defaults are Li et al.'s 200 m and 30 min.",
        ),
        Rule(
            "category", "Category membership", ("categorical",),
            (ParamSpec("values", "Categories", (), None, None, type="labels",
                       help="events whose category is one of these"),),
            "values", category_membership,
            "Events whose category is in a chosen list (thesis: Copenhagen contacts with chosen devices).",
        ),
        Rule(
            "changepoints", "Change points", ("numeric",),
            (ParamSpec("penalty", "Penalty", None, 0.0, None, "× σ²", optional=True,
                       help="cost of a change in units of the noise variance; empty = 2·ln n (BIC-like)"),),
            "penalty", change_points,
            "First event after each shift of the mean (binary segmentation).",
        ),
    )
}


def get_rule(rule: str | Rule) -> Rule:
    if isinstance(rule, Rule):
        return rule
    try:
        return RULES[rule]
    except KeyError:
        raise ValueError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)}") from None


def rules_for_kind(kind: str) -> list[Rule]:
    """The rules that apply to a series of this kind (for the Landmarks menu)."""
    return [r for r in RULES.values() if r.supports(kind)]


def _params_for(series: Series, r: Rule, params: Mapping[str, Any]) -> dict[str, Any]:
    names = {p.name for p in r.params}
    unknown = [k for k in params if k not in names]
    if unknown:
        raise ValueError(f"the {r.name} rule has no parameter {', '.join(map(repr, unknown))}; "
                         f"it takes {', '.join(sorted(names))}")
    if not r.supports(series.kind):
        raise ValueError(f"the {r.name} rule needs a {' or '.join(r.kinds)} series; this one is {series.kind}")
    out = {p.name: p.default for p in r.params if p.default is not None and not p.optional}
    out.update({k: v for k, v in params.items() if v is not None or r.param(k).optional})
    return out


def apply_rule(series: Series, rule: str | Rule, **params: Any) -> np.ndarray:
    """Run a rule by name; missing parameters take the rule's static defaults. ValueError on bad input."""
    r = get_rule(rule)
    return r.func(series, **_params_for(series, r, params))


def count(series: Series, rule: str | Rule, **params: Any) -> tuple[int, float]:
    """``(number of proposed landmarks, percentage of the series' events)`` for a live count label."""
    k = int(apply_rule(series, rule, **params).size)
    return k, (100.0 * k / series.n if series.n else 0.0)


def _track_extent_m(series: Series) -> float:
    """The largest great-circle distance between corners of the track's lat/lon bounding box: about the
    largest distance between two fixes (exact for city-sized tracks), used as the top of a slider."""
    v = series.values
    la, lo = (v[:, 0].min(), v[:, 0].max()), (v[:, 1].min(), v[:, 1].max())
    corners = np.array([[a, b] for a in la for b in lo])
    i, j = np.triu_indices(4, 1)
    return float(haversine(corners[i], corners[j]).max())


def _track_bound_m(series: Series) -> float:
    """A sure upper bound on the distance between any two fixes: twice the largest distance from the first
    fix (triangle inequality), capped at half the Earth's circumference. A stay radius at or beyond it puts
    every fix within reach of every other."""
    v = series.values
    far = float(haversine(np.broadcast_to(v[:1], v.shape), v).max())
    return min(2.0 * far, math.pi * EARTH_RADIUS_M)


def defaults(series: Series, rule: str | Rule) -> dict[str, Any]:
    """Starting parameters for this series: the static defaults, with data-aware ones where there are none
    (threshold: below the 20th percentile; change points: the BIC-like penalty)."""
    r = get_rule(rule)
    if not r.supports(series.kind):
        raise ValueError(f"the {r.name} rule needs a {' or '.join(r.kinds)} series; this one is {series.kind}")
    if r.name == "threshold":
        below = float(np.quantile(series.values, 0.2)) if series.n else 0.0
        return {"below": below, "above": None}
    if r.name == "category":
        return {"values": []}
    if r.name == "changepoints":
        return {"penalty": default_penalty(series.n)}
    return {p.name: p.default for p in r.params}


def ranges(series: Series, rule: str | Rule) -> dict[str, tuple[float, float]]:
    """Useful slider range of each numeric parameter on this series (beyond it the result does not change):
    threshold → the data's min and max; stay → (0, track extent) metres and (0, time span) minutes;
    change points → (0, the largest split gain), above which nothing is proposed."""
    r = get_rule(rule)
    if not r.supports(series.kind):
        raise ValueError(f"the {r.name} rule needs a {' or '.join(r.kinds)} series; this one is {series.kind}")
    if series.n == 0:
        return {p.name: (p.minimum or 0.0, p.maximum or 0.0) for p in r.params if p.type == "float"}
    if r.name == "threshold":
        lo, hi = float(series.values.min()), float(series.values.max())
        return {"below": (lo, hi), "above": (lo, hi)}
    if r.name == "stay":
        t = _times_ns(series)
        return {"distance_m": (0.0, _track_extent_m(series)),
                "duration_min": (0.0, float(t[-1] - t[0]) / _NS_PER_MIN)}
    if r.name == "changepoints":
        if series.n < 2:
            return {"penalty": (0.0, 0.0)}
        return {"penalty": (0.0, _cp_root_gain(series))}
    return {}


def _cp_root_gain(series: Series) -> float:
    """Gain of the best single split of the whole series: the penalty above which nothing is proposed."""
    p = _prefix(series)
    n = series.n
    k = np.arange(1, n, dtype=np.float64)
    d = p[1:n] / k - (p[n] - p[1:n]) / (n - k)
    return float(np.max(k * (n - k) / n * d * d))


# ------------------------------------------------------------------------------ rule_for_percentage
def _bisect_monotone(values: np.ndarray, counter: Callable[[float], int], target: int,
                     increasing: bool) -> tuple[float, int]:
    """Among sorted candidate ``values`` with a monotone count, the one whose count is closest to target."""
    lo, hi = 0, len(values) - 1
    seen: dict[int, int] = {}

    def c(i: int) -> int:
        if i not in seen:
            seen[i] = counter(float(values[i]))
        return seen[i]

    # first index whose count is >= target (increasing) / <= target (decreasing)
    while lo < hi:
        mid = (lo + hi) // 2
        ok = c(mid) >= target if increasing else c(mid) <= target
        if ok:
            hi = mid
        else:
            lo = mid + 1
    best = min((i for i in (lo - 1, lo) if 0 <= i < len(values)), key=lambda i: (abs(c(i) - target), -i))
    return float(values[best]), c(best)


def _sweep_threshold(series: Series, target: int, vary: str, fixed: dict[str, Any]
                     ) -> tuple[dict[str, Any], np.ndarray]:
    x = series.values
    u = np.unique(x)
    other = {k: v for k, v in fixed.items() if k != vary and v is not None}
    # x < u[k] selects the values below the k-th distinct one (strict), so the data's own values are the
    # candidates; "all" needs one more value beyond the range: the next whole number, which reads well
    if vary == "below":
        cands = np.append(u, math.floor(u[-1]) + 1.0)
        increasing = True
    else:
        cands = np.append(math.ceil(u[0]) - 1.0, u)
        increasing = False

    def counter(v: float) -> int:
        return int(threshold(series, **{vary: v}, **other).size)

    v, _ = _bisect_monotone(cands, counter, target, increasing)
    params = {**other, vary: v}
    return params, threshold(series, **params)


def _sweep_stay(series: Series, target: int, vary: str, fixed: dict[str, Any]
                ) -> tuple[dict[str, Any], np.ndarray]:
    """Grid over the varied parameter, then bisection between the grid points around the target.

    The stay count is not strictly monotone in Δl or Δt (a longer stay can end the scan at a different
    place), so the search keeps the best value it has seen rather than trusting monotonicity. Distances are
    whole metres (the thesis' settings are, e.g. 2095 m); durations are multiples of 0.01 minute
    (0.6 s, finer than 1 Hz GPS sampling).
    """
    params = {"distance_m": 200.0, "duration_min": 30.0, **{k: v for k, v in fixed.items() if v is not None}}
    params = {k: _number(v, k, minimum=0.0) for k, v in params.items()}
    t = _times_ns(series)
    if vary == "distance_m":
        step = 1.0
        hi = max(math.ceil(_track_bound_m(series)) + 1.0, 1.0)
        grid = np.unique(np.concatenate(([0.0], np.round(np.geomspace(1.0, hi, 24)))))
    else:
        step = 0.01
        hi = max(math.ceil(float(t[-1] - t[0]) / _NS_PER_MIN * 100) / 100 + step, step)
        grid = np.unique(np.concatenate(([0.0], np.round(np.geomspace(step, hi, 24), 2))))
    seen: dict[float, int] = {}

    def c(v: float) -> int:
        v = round(v, 6)
        if v not in seen:
            seen[v] = int(np.count_nonzero(_stay_mask(series, *(
                (v, params["duration_min"]) if vary == "distance_m" else (params["distance_m"], v)))))
        return seen[v]

    counts = [c(float(v)) for v in grid]
    # bisect inside every grid interval that brackets the target (count crosses it), keep the best
    for a, b, ca, cb in zip(grid[:-1], grid[1:], counts[:-1], counts[1:], strict=True):
        if (ca - target) * (cb - target) >= 0:  # same side, or a grid point hits the target exactly
            continue
        lo, hi_ = float(a), float(b)
        clo = ca
        while hi_ - lo > step * 1.5:
            mid = round((lo + hi_) / 2 / step) * step
            cm = c(mid)
            if cm == target:
                break
            if (cm - target) * (clo - target) > 0:
                lo, clo = mid, cm
            else:
                hi_ = mid
    best_v = min(seen, key=lambda v: (abs(seen[v] - target), v))
    params[vary] = float(best_v)
    return params, stay_points(series, **params)


def _greedy_fill(freq: np.ndarray, order: np.ndarray, target: int, seed: int | None) -> tuple[list[int], int]:
    """Optionally start with ``seed``, add categories in ``order`` while the total stays ≤ target, then add the
    one category that overshoots least if that is closer than stopping short."""
    chosen = [] if seed is None else [seed]
    total = 0 if seed is None else int(freq[seed])
    for code in order:
        c = int(code)
        f = int(freq[c])
        if f and c != seed and total + f <= target:
            chosen.append(c)
            total += f
    if total < target:
        taken = set(chosen)
        rest = [int(c) for c in order if freq[c] > 0 and int(c) not in taken]
        if rest:
            over = min(rest, key=lambda c: abs(total + int(freq[c]) - target))
            if abs(total + int(freq[over]) - target) < target - total:
                chosen.append(over)
                total += int(freq[over])
    return chosen, total


#: Largest subset-sum table (items × sums, in bits) solved exactly; above it the greedy fill is used.
_SUBSET_BITS = 200_000_000


def _closest_subset(freq: np.ndarray, codes: list[int], target: int) -> list[int] | None:
    """Exact subset sum with Python integers as bitsets: the categories whose counts add up closest to the
    target (ties: the smaller total). ``None`` when the table would exceed :data:`_SUBSET_BITS`."""
    bound = 2 * target  # a total above 2·target is farther than the empty set
    items = [c for c in codes if 0 < int(freq[c]) <= bound]
    if not items or len(items) * (bound + 1) > _SUBSET_BITS:
        return None if items else []
    mask = (1 << (bound + 1)) - 1
    reach = [1]
    for c in items:
        reach.append((reach[-1] | (reach[-1] << int(freq[c]))) & mask)
    final = reach[-1]
    below = final & ((1 << (target + 1)) - 1)
    best = below.bit_length() - 1  # largest reachable total <= target (0 is always reachable)
    above = final >> target
    if above:
        up = target + ((above & -above).bit_length() - 1)  # smallest reachable total >= target
        if up - target < target - best:
            best = up
    chosen = []
    for i in range(len(items), 0, -1):  # walk back: skip item i when the total was reachable without it
        if not (reach[i - 1] >> best) & 1:
            chosen.append(items[i - 1])
            best -= int(freq[items[i - 1]])
    assert best == 0
    return chosen


def _sweep_category(series: Series, target: int) -> tuple[dict[str, Any], np.ndarray]:
    """Categories whose events add up as close as possible to the target: an exact subset sum (bitset
    dynamic programme) when the table is small enough (always for a few hundred categories), otherwise
    greedy fills from the most to the least frequent category, once plainly and once forced to start with
    each of the 64 most frequent ones; the closest total wins, then the fewer categories.

    (The thesis extended its Copenhagen device lists in ascending id order by hand; this finds the closest
    list directly.)"""
    assert series.categories is not None
    freq = np.bincount(series.values, minlength=len(series.categories))
    order = np.argsort(-freq, kind="stable")
    exact = _closest_subset(freq, [int(c) for c in order], target)
    if exact is not None:
        chosen = exact
    else:
        seeds: list[int | None] = [None, *(int(c) for c in order[:64] if freq[c] > 0)]
        best: tuple[list[int], int] | None = None
        for seed in seeds:
            picked, total = _greedy_fill(freq, order, target, seed)
            if best is None or (abs(total - target), len(picked)) < (abs(best[1] - target), len(best[0])):
                best = (picked, total)
            if total == target:
                break
        assert best is not None
        chosen = best[0]
    labels = [series.categories[c] for c in sorted(chosen)]
    params = {"values": labels}
    return params, category_membership(series, labels)


def _sweep_changepoints(series: Series, target: int) -> tuple[dict[str, Any], np.ndarray]:
    """Exact: with penalty p the changes are the tree splits with effective gain > p, so a penalty between
    the (k+1)-th and k-th largest effective gains gives exactly k changes (ties in the gains move together,
    so only some k are achievable; the closest one is taken)."""
    floor = default_penalty(series.n)
    pos, gain = _cp_tree(series, floor)
    while gain.size < target and floor > 1e-9:
        floor /= 16.0
        pos, gain = _cp_tree(series, floor)
    if gain.size < target:
        floor = 0.0
        pos, gain = _cp_tree(series, floor)
    size = int(gain.size)
    achievable = np.ones(size + 1, dtype=np.bool_)
    if size > 1:
        achievable[1:size] = gain[:-1] > gain[1:]
    ks = np.flatnonzero(achievable)
    k = int(ks[np.argmin(np.abs(ks - target))])
    if k == 0:
        pen = float(gain[0]) if size else default_penalty(series.n)
    elif k == size:
        pen = floor  # every split in the tree has effective gain > floor
    else:
        hi, lo = float(gain[k - 1]), float(gain[k])
        pen = math.sqrt(hi * lo) if lo > 0 else hi / 2.0
        if not lo <= pen < hi:  # rounding; the low end is always exact (strict '>')
            pen = lo
    params = {"penalty": pen}
    return params, change_points(series, penalty=pen)


def rule_for_percentage(series: Series, rule: str | Rule, target_percent: float, *, vary: str | None = None,
                        **fixed: Any) -> tuple[dict[str, Any], np.ndarray]:
    """Parameters of ``rule`` whose landmark percentage is as close as possible to ``target_percent``.

    Sweeps one parameter (``vary``, default the rule's main one) while the others keep the values given in
    ``fixed`` (or their defaults), like the thesis' §5.1.3 settings for 0/20/…/100 % landmarks:

    * threshold: ``below`` (or ``vary="above"``) over the data's distinct values, by bisection (the count
      is monotone), so the result is exact up to ties in the data;
    * stay: ``distance_m`` in whole metres (or ``vary="duration_min"`` in 0.01 min steps) with the other
      fixed (default Δt = 30 min as in the thesis' T-drive settings), by a grid then bisection;
    * category: ``values``, a greedy fill by frequency (see :func:`_sweep_category`);
    * changepoints: ``penalty``, read off the nested binary-segmentation splits: the best count any penalty
      can give (binary segmentation stops a whole branch at once, so not every count is reachable).

    Returns ``(params, rows)`` with ``rows == apply_rule(series, rule, **params)``.
    """
    r = get_rule(rule)
    if not r.supports(series.kind):
        raise ValueError(f"the {r.name} rule needs a {' or '.join(r.kinds)} series; this one is {series.kind}")
    pct = _number(target_percent, "target percentage", minimum=0.0)
    if pct > 100.0:
        raise ValueError(f"target percentage must be between 0 and 100, got {target_percent!r}")
    vary = r.main if vary is None else vary
    names = {p.name for p in r.params}
    if vary not in names:
        raise ValueError(f"the {r.name} rule has no parameter {vary!r}; it takes {', '.join(sorted(names))}")
    unknown = [k for k in fixed if k not in names]
    if unknown:
        raise ValueError(f"the {r.name} rule has no parameter {', '.join(map(repr, unknown))}")
    target = int(round(pct / 100.0 * series.n))
    if series.n == 0:
        return {k: v for k, v in defaults(series, r).items() if v is not None}, _EMPTY.copy()
    if r.name == "threshold":
        return _sweep_threshold(series, target, vary, fixed)
    if r.name == "stay":
        return _sweep_stay(series, target, vary, fixed)
    if r.name == "category":
        return _sweep_category(series, target)
    if r.name == "changepoints":
        return _sweep_changepoints(series, target)
    raise ValueError(f"no sweep for the {r.name} rule")  # pragma: no cover
