"""Schemes (DESIGN §4) and the release: series + landmarks + settings + scheme + randomness → a release.

Every release carries its per-event budgets ``ε_t``, its published values, a per-event ``approximated``
flag, and the verdict of the independent landmark-sum check (:mod:`.guarantee`). The budgets of the schemes
that do not depend on the data are :func:`fixed_budgets`, from the scheme registry (:mod:`..kernel.schemes`,
one module per scheme); the per-kind
mechanisms, the plan and the runners are in :mod:`.pipeline`, which :func:`compute_release` calls.

Approximations. An event with ``ε_t = 0`` publishes nothing data-dependent: it republishes the previous
release (post-processing, free). Before any release exists the *public fallback* is used when there is
one — numeric: the midpoint of the public bounds; categorical: the first category of a user-given public
list. Without a public fallback, events before the first fresh release republish the *first* fresh
release (post-processing too: the whole series is published at once). If nothing is released fresh at all
(Skip with every event a landmark) and there is no fallback, the values are missing (NaN, or code −1).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from ..data.series import Series
from ..kernel.guarantee import GuaranteeResult, allocatable  # noqa: F401  (looked up here when called: the audits replace it)
from ..kernel.schemes import SCHEMES
from ..kernel.schemes import balanced as _balanced
from ..kernel.schemes import constant_budgets as constant_budgets  # (re-exported: the engine's callers' name)
from ..kernel.settings import LANDMARK_SCHEMES, PrivacySettings
from .lazyjit import numba  # the real numba is imported on a kernel's first call (cold start)


@dataclass(frozen=True, eq=False)
class Release:
    scheme: str
    kind: str
    epsilon: float  # the ε the guarantee was checked against
    landmarks: np.ndarray  # sorted rows of the landmark set used
    budgets: np.ndarray  # ε_t per event
    values: np.ndarray  # float (n,) numeric, float (n, 2) location, int codes (n,) categorical (-1 = none)
    approximated: np.ndarray  # bool per event
    guarantee: GuaranteeResult
    categories: tuple[str, ...] | None = None  # categorical: labels of the codes in ``values``
    #: a period release (DESIGN §12): each value's noise was drawn for sensitivity Δ·scale[t] (None: Δ)
    sensitivity_scale: np.ndarray | None = None

    def noise_budgets(self) -> np.ndarray:
        """ε_t·Δ/S_t: the budgets a scalar-Δ Laplace mechanism would need for this release's noise scales
        S_t/ε_t (what the denoiser reads); the budgets themselves without a per-event sensitivity."""
        return noise_budgets(self.budgets, self.sensitivity_scale)

    @property
    def n(self) -> int:
        return int(self.approximated.shape[0])

    # Cached (a release is immutable): the metrics table reads them on every refresh of the GUI thread.
    @cached_property
    def mean_budget(self) -> float:
        return float(self.budgets.mean()) if self.n else 0.0

    @cached_property
    def max_budget(self) -> float:
        if not self.n:
            return 0.0
        return float(self.budgets[0]) if is_constant(self.budgets) else float(self.budgets.max())

    @cached_property
    def approximated_share(self) -> float:
        # the count over n is the mean of the 0/1 flags, bit for bit (the sum of 0/1 is exact), without
        # converting 10^6 flags to floats first; constant flags (a zero-stride view) are counted by their one
        # value (numpy's count walks the view n times)
        a = self.approximated
        if not self.n:
            return 0.0
        return (self.n if a[0] else 0) / self.n if is_constant(a) else np.count_nonzero(a) / self.n

    @property
    def is_landmark_private(self) -> bool:
        return self.guarantee.holds

    def summary(self) -> ReleaseSummary:
        """What this release says without its series-sized arrays (a lean session's hidden scheme, or one a
        landmark edit replaces, issue 43): its scheme, check, landmarks and summaries."""
        return ReleaseSummary(self.scheme, self.kind, self.epsilon, self.landmarks, self.guarantee, self.n,
                              self.mean_budget, self.max_budget, self.approximated_share, self.categories)

    def with_values(self, values: np.ndarray, budgets: np.ndarray | None = None) -> Release:
        """This release holding ``values`` (and ``budgets``) instead, of the same length: the same release kept
        another way (at float32 to be drawn); its summaries are carried over."""
        out = replace(self, values=values, budgets=self.budgets if budgets is None else budgets)
        self.carry_summaries(out)
        return out

    def carry_summaries(self, other: Release) -> None:
        """Give ``other`` (the same budgets and flags) this release's cached summaries, those computed so far
        (cached_property's own slots)."""
        for name in ("mean_budget", "max_budget", "approximated_share"):
            if name in self.__dict__:
                other.__dict__[name] = self.__dict__[name]


@dataclass(frozen=True, eq=False)
class ReleaseSummary:
    """A release's scheme, check, landmarks and summaries without its arrays (:meth:`Release.summary`): what a
    lean session keeps of a release it does not draw. A release is always whole; whoever needs its values
    makes it again. ``token`` identifies the release it summarises across the copies made for a new landmark set
    and check (the preview reuses an Event or User summary on a click: their budgets ignore the landmarks)."""

    scheme: str
    kind: str
    epsilon: float
    landmarks: np.ndarray
    guarantee: GuaranteeResult
    n: int
    mean_budget: float
    max_budget: float
    approximated_share: float
    categories: tuple[str, ...] | None = None
    token: object = field(default_factory=object)

    @property
    def is_landmark_private(self) -> bool:
        return self.guarantee.holds


# ------------------------------------------------------------------------------------------ landmarks
def normalize_landmarks(landmarks: Iterable[int] | np.ndarray | None, n: int) -> np.ndarray:
    """Sorted, distinct int64 row positions within [0, n); raises ValueError otherwise. Checked on every call
    (no memo of arrays seen before: whoever holds one can change it); a caller that already holds the
    normalised set passes it on instead of normalising it again."""
    if landmarks is None:
        return np.zeros(0, dtype=np.int64)
    lm = np.asarray(landmarks if isinstance(landmarks, np.ndarray) else list(landmarks))
    if lm.size == 0:
        return np.zeros(0, dtype=np.int64)
    if lm.ndim != 1:
        raise ValueError("landmarks must be a list of row positions")
    if lm.dtype.kind not in "iu":
        if lm.dtype.kind == "f" and np.all(np.isfinite(lm)) and np.all(lm == np.round(lm)):
            lm = lm.astype(np.int64)
        else:
            raise ValueError("landmarks must be integer row positions")
    lm = lm.astype(np.int64, copy=False)
    if lm.size > 1 and not bool(np.all(lm[1:] > lm[:-1])):
        lm = np.sort(lm)
        lm = lm[np.concatenate(([True], lm[1:] != lm[:-1]))]
    return _in_range(lm, n)


def _in_range(lm: np.ndarray, n: int) -> np.ndarray:
    """``lm`` (sorted) when its rows lie in [0, n)."""
    if lm[0] < 0 or lm[-1] >= n:
        raise ValueError(f"landmark rows must be between 0 and {n - 1}; got {lm[0] if lm[0] < 0 else lm[-1]}")
    return lm


def landmark_mask(landmarks: np.ndarray, n: int) -> np.ndarray:
    mask = np.zeros(n, dtype=np.bool_)
    mask[landmarks] = True
    return mask


# -------------------------------------------------------------------------------------------- budgets
#: Balanced's budgets and B* under the engine's names (the scheme's own module is the one source)
balanced_budgets = _balanced.full_budgets
balanced_landmark_total = _balanced.landmark_total


def fixed_budgets(scheme: str, n: int, landmarks: np.ndarray, eps_a: float) -> np.ndarray:
    """Budgets of a scheme that does not depend on the data (the registry's ``Scheme.budgets``). A read-only
    landmark set's series-sized budgets (Skip's, Balanced's) are shared while held (:func:`_shared`); equal
    budgets are :func:`constant_budgets`."""
    s = SCHEMES.get(scheme)
    if s is None or s.budgets is None:
        fixed = ", ".join(k for k, v in SCHEMES.items() if v.budgets is not None)
        raise ValueError(f"unknown scheme {scheme!r} or one whose budgets are drawn; choose one of {fixed}")
    make = s.budgets
    return _shared(scheme, n, landmarks, eps_a, lambda: make(n, landmarks, eps_a))


#: Skip's and Balanced's budgets per (scheme, n, landmark set, ε_a), held weakly: the R-run average plans each
#: run again, and each plan made its own series-sized copy of what the preview holds. Keyed by the
#: set's identity, and valid only while the set still holds the rows the budgets were made for (a copy of
#: them is kept and compared: an array's holder can change it).
_BUDGETS: dict[tuple, tuple[weakref.ref, weakref.ref, np.ndarray]] = {}


def _shared(scheme: str, n: int, landmarks: np.ndarray, eps_a: float, make) -> np.ndarray:
    """``make()``, or the read-only array it gave for this very landmark set while someone holds it. Only
    series-sized budgets of read-only sets are shared (the session's sets): a set its caller may still
    write is its own business."""
    if landmarks.flags.writeable:
        return make()
    b = _shared_now(scheme, n, landmarks, eps_a)
    if b is not None:
        return b
    b = make()
    if is_constant(b):  # (one float: nothing worth sharing)
        return b
    b.setflags(write=False)
    key = (scheme, n, id(landmarks), eps_a)

    def forget(_ref: weakref.ref) -> None:  # (on whichever thread let go of the last reference)
        if _BUDGETS.get(key) is entry:
            _BUDGETS.pop(key, None)
    entry = (weakref.ref(landmarks, forget), weakref.ref(b, forget), landmarks.copy())
    _BUDGETS[key] = entry
    return b


def _shared_now(scheme: str, n: int, landmarks: np.ndarray, eps_a: float) -> np.ndarray | None:
    """The array :func:`_shared` gave for this very landmark set, if it is still held and the set unchanged."""
    hit = _BUDGETS.get((scheme, n, id(landmarks), eps_a))
    if hit is None or hit[0]() is not landmarks or not np.array_equal(hit[2], landmarks):
        return None
    return hit[1]()


def skip_span(old: np.ndarray, old_lm: np.ndarray, new: np.ndarray, new_lm: np.ndarray,
              eps_a: float) -> tuple[int, int] | None:
    """The rows (first, last) outside which two Skip budget arrays are equal, or (−1, −1) when they are equal
    throughout, found from their landmark sets; None unless both are the arrays :func:`fixed_budgets` made
    here for those very sets and ``eps_a`` (an audit's own allocation is compared value by value). Skip's
    budget of an event depends only on whether it is a landmark, so the sets' first and last differences
    bound the budgets'; the sets are a fraction of the budgets' size, which a click would otherwise read
    whole."""
    n = old.shape[0]
    if _shared_now("skip", n, old_lm, eps_a) is not old or _shared_now("skip", n, new_lm, eps_a) is not new:
        return None
    return _sets_span(old_lm, new_lm)


@numba.njit(cache=True, nogil=True)
def _sets_span(a, b):  # pragma: no cover - compiled
    """(first, last) row in exactly one of the sorted sets a and b, bounds of every such row; (−1, −1) when
    they are the same set. Below the first index where they differ (from the start) both hold the same rows,
    and likewise above the first index where they differ from the end."""
    la, lb = a.shape[0], b.shape[0]
    m = min(la, lb)
    i = 0
    while i < m and a[i] == b[i]:
        i += 1
    if i == m and la == lb:
        return -1, -1
    lo = min(a[i] if i < la else 2**62, b[i] if i < lb else 2**62)
    j = 0
    while j < m and a[la - 1 - j] == b[lb - 1 - j]:
        j += 1
    hi = max(a[la - 1 - j] if j < la else -1, b[lb - 1 - j] if j < lb else -1)
    return lo, hi


def is_constant(a: np.ndarray) -> bool:
    """Whether ``a`` is one value seen many times: a zero-stride view, such as the budgets of a scheme that
    gives every event the same ε_t (:func:`constant_budgets`). A property of the array, not of a scheme."""
    return a.ndim == 1 and a.shape[0] > 1 and a.strides[0] == 0


def fresh_flags(budgets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(fresh, approximated): ``ε_t > 0`` and its negation per event; zero-stride views (one flag seen n
    times) for constant budgets and for budgets that are all positive."""
    if is_constant(budgets):
        one = bool(budgets[0] > 0)
        return np.broadcast_to(one, budgets.shape), np.broadcast_to(not one, budgets.shape)
    if budgets.ndim == 1 and budgets.shape[0] > 1 and budgets.min() > 0:
        # every event fresh (Balanced): constant flags as well, one reduction instead of two series-sized
        # arrays made and held per click; NaN budgets take the general path
        return np.broadcast_to(True, budgets.shape), np.broadcast_to(False, budgets.shape)
    fresh = budgets > 0
    return fresh, ~fresh


# ----------------------------------------------------------------------------------- category spaces
def category_space(series: Series, settings: PrivacySettings) -> tuple[np.ndarray, tuple[str, ...], bool]:
    """The codes of a categorical series in the release's category space, its labels, and whether the
    list came from the data (which leaks which categories occur; the GUI and sidecar say so)."""
    assert series.categories is not None
    if settings.categories is None:
        return series.values, tuple(series.categories), True
    public = tuple(settings.categories)
    index = {c: i for i, c in enumerate(public)}
    missing = [c for c in series.categories if c not in index]
    if missing:
        used = np.unique(series.values)
        missing_used = [series.categories[i] for i in used if series.categories[i] not in index]
        if missing_used:
            shown = ", ".join(repr(c) for c in missing_used[:5])
            more = f" and {len(missing_used) - 5} more" if len(missing_used) > 5 else ""
            raise ValueError(f"the data has categories that are not in the public list: {shown}{more}")
    remap = np.array([index.get(c, -1) for c in series.categories], dtype=np.int64)
    return remap[series.values], public, False


def noise_budgets(budgets: np.ndarray, scale: np.ndarray | None) -> np.ndarray:
    """``budgets / scale`` (ε_t = 0 stays 0), or ``budgets`` when ``scale`` is None: the noise of scale
    S_t/ε_t = Δ·scale[t]/ε_t is that of a scalar-Δ mechanism with budget ε_t/scale[t]."""
    return budgets if scale is None else np.asarray(budgets, dtype=np.float64) / scale


def public_fallback(series: Series, settings: PrivacySettings):
    """The value published before any release exists, or None when there is no public one."""
    if series.kind == "numeric" and settings.bounds is not None:
        return 0.5 * (settings.bounds[0] + settings.bounds[1])
    if series.kind == "categorical" and settings.categories is not None:
        return 0
    return None


def fill_approximations(values: np.ndarray, fresh: np.ndarray, fallback) -> np.ndarray:
    """Republish the previous fresh release at every non-fresh event (see module docstring), in place when
    ``values`` is C-contiguous (the callers' arrays are new); returns the filled array. Values at non-fresh
    events are never read."""
    n = fresh.shape[0]
    if n == 0:
        return values
    if not values.flags.c_contiguous:
        values = np.ascontiguousarray(values)
    # before the copy below: constant flags (a zero-stride view) are not materialised, nor walked (numpy's
    # all() reads the view n times)
    if (bool(fresh[0]) if is_constant(fresh) else fresh.all()):
        return values
    fresh = np.ascontiguousarray(fresh, dtype=np.bool_)
    first = _forward_fill(values.reshape(n, -1), fresh)
    if first > 0:
        if fallback is not None:
            values[:first] = fallback
        elif first < n:
            values[:first] = values[first]
        else:
            values[:] = -1 if values.dtype.kind in "iu" else np.nan
    return values


@numba.njit(cache=True, nogil=True)
def _forward_fill(values, fresh):  # pragma: no cover - compiled
    """Rows after the first fresh one: a non-fresh row copies the row before it. Returns that first index
    (n when nothing is fresh). One pass, nothing allocated (numpy needed five passes and two index arrays)."""
    n = fresh.shape[0]
    first = 0
    while first < n and not fresh[first]:
        first += 1
    if first == n:
        return n
    for c in range(values.shape[1]):
        carry = values[first, c]
        for t in range(first + 1, n):  # selects, not branches: fresh and not interleave at random
            carry = values[t, c] if fresh[t] else carry
            values[t, c] = carry
    return first


# ------------------------------------------------------------------------------------------- release
def require_landmark_private(releases: Mapping[str, Release]) -> None:
    """Raise :class:`GuaranteeError` if any landmark-private scheme's release fails the check."""
    from ..kernel.guarantee import GuaranteeError

    for name, rel in releases.items():
        if name in LANDMARK_SCHEMES and not rel.guarantee.holds:
            raise GuaranteeError(rel.guarantee, name)
