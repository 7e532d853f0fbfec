"""One release pipeline (issue 12): per-kind mechanisms, a ``plan`` step, and three runners over it.

* :class:`Kind` — one object per kind of series (``KINDS["numeric" | "location" | "categorical"]``) owns its
  mechanism: the input it protects, the preview noise on common random numbers, the export's
  floating-point-safe noise, the Adaptive kernel, the error metric, the CSV value columns, the public
  fallback, and a ``denoise`` slot for post-processing (:func:`denoise_release` by default; None = publish
  the raw release).
* :func:`plan` — (series, landmarks, settings, scheme, dummies) → :class:`Plan`: the landmark set used, the
  release's ε, the budgets (or, for Adaptive, what its loop needs) and the pre-check verdict of the
  independent landmark-sum check. The session, the export dialog, the export, ``lmdk compare`` and
  ``lmdk evaluate`` all start here.
* Runners: :func:`run_preview` (plain arrays on :class:`~.noise.UnitNoise`), :class:`ExportRunner` (secure
  noise, chunk by chunk) and the batched kernels of :mod:`.evaluation` (which read ``Plan.budgets``).

The allocation functions are parameters of :func:`plan` so that a caller's own names are used (the privacy
audits replace ``export.fixed_budgets`` / ``export.allocatable`` to prove a broken allocation is refused).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ..analysis.denoise import Denoised, denoise
from ..data.series import Series
from ..kernel import adaptive, mechanisms, opendp_noise, securenoise
from ..kernel.guarantee import GuaranteeResult, allocatable, check_guarantee
from ..kernel.noise import NoiseAt, UnitNoise
from ..kernel.settings import ALL_SCHEMES, PrivacySettings
from . import release as release_mod
from .lazyjit import numba  # the real numba is imported on a kernel's first call (cold start)
from .release import (
    Release,
    category_space,
    fill_approximations,
    fixed_budgets,
    fresh_flags,
    is_constant,
    landmark_mask,
    noise_budgets,
    normalize_landmarks,
    public_fallback,
    skip_span,
)

#: Our own exact-integer samplers (numba); they can run inside the Adaptive loop and can be seeded.
NUMBA_BACKENDS = (securenoise.BACKEND_SNAPPED, securenoise.BACKEND_PLANAR, securenoise.BACKEND_RR)


# ------------------------------------------------------------------------------ the export's grid
def grid_exponent(settings: PrivacySettings) -> int:
    """The snapped sampler's grid exponent for a numeric release: from Δ and the release's ε only (every
    event's ε_t ≤ ε), the same for every event (issue 17, finding 3)."""
    return securenoise.laplace_grid_exponent(settings.sensitivity, settings.sensitivity / settings.epsilon)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _laplace_release(x, lap, budgets, sens, out):  # pragma: no cover - compiled
    # No branch, so it vectorises: ε_t = 0 gives ±inf or NaN (numpy's error model), never read.
    for t in range(x.shape[0]):
        out[t] = x[t] + lap[t] * (sens / budgets[t])


@numba.njit(cache=True, nogil=True)
def _laplace_release_scaled(x, lap, scale, out):  # pragma: no cover - compiled
    # _laplace_release for equal budgets: Δ/ε divided once, the value the per-event division gives everywhere
    for t in range(x.shape[0]):
        out[t] = x[t] + lap[t] * scale


@numba.njit(cache=True, nogil=True)
def _abs_error(values, truth, out):  # pragma: no cover - compiled
    # |value − truth| in one pass (numpy's subtract then abs: the same two operations, so the same bits)
    for t in range(values.shape[0]):
        out[t] = abs(values[t] - truth[t])


# The one summing order of the metrics' block sums (a numeric MAE is the same bits whether its errors were
# summed here or kept per event first: tests/core/test_error_sums.py): each block in four interleaved partial
# sums (so the additions overlap: a single running sum waits for each one), then those four pairwise, then
# its tail.
@numba.njit(cache=True, nogil=True)
def abs_error_sums(values, truth, k0, block, out):  # pragma: no cover - compiled
    """Sums of |value − truth| over blocks k0, k0+1, … of ``block`` events, one per slot of ``out``."""
    n = values.shape[0]
    for j in range(out.shape[0]):
        lo = (k0 + j) * block
        hi = min(lo + block, n)
        s0 = s1 = s2 = s3 = 0.0
        t = lo
        while t + 4 <= hi:
            s0 += abs(values[t] - truth[t])
            s1 += abs(values[t + 1] - truth[t + 1])
            s2 += abs(values[t + 2] - truth[t + 2])
            s3 += abs(values[t + 3] - truth[t + 3])
            t += 4
        s = (s0 + s1) + (s2 + s3)
        while t < hi:
            s += abs(values[t] - truth[t])
            t += 1
        out[j] = s


def block_sums(err: np.ndarray, block: int, out: np.ndarray) -> None:
    """Sums of ``err`` (starting at a block's first event) over its blocks of ``block`` events, in
    :func:`abs_error_sums`' order: that kernel against a zero truth (errors are ≥ 0 or NaN, so |e − 0| is e,
    the same bits), one summing loop for both."""
    abs_error_sums(err, np.broadcast_to(0.0, err.shape), 0, block, out)


@numba.njit(cache=True, nogil=True)
def _haversines(a, b, out):  # pragma: no cover - compiled
    for t in range(a.shape[0]):
        out[t] = mechanisms.haversine_one(a[t, 0], a[t, 1], b[t, 0], b[t, 1])


@numba.njit(cache=True, nogil=True)
def _planar_release(x, budgets, radius, gam, cs, out):  # pragma: no cover - compiled
    # mechanisms._planar_unit_vec with scale R/ε_t at fresh events, 0 elsewhere (replaced later, never read)
    for i in range(x.shape[0]):
        b = budgets[i]
        r = gam[i] * (radius / b if b > 0.0 else 0.0)
        out[i, 0], out[i, 1] = mechanisms.offset_latlon(x[i, 0], x[i, 1], r * cs[i, 0], r * cs[i, 1])


@numba.njit(cache=True, nogil=True)
def _angle_cos_sin_kernel(ang, out):  # pragma: no cover - compiled
    for i in range(ang.shape[0]):
        out[i, 0] = math.cos(ang[i])
        out[i, 1] = math.sin(ang[i])


def _angle_cos_sin(noise: UnitNoise) -> np.ndarray:
    out = np.empty((noise.n, 2))
    _angle_cos_sin_kernel(noise.angle, out)
    return out


#: Adaptive's sampling uniforms u_t (public, data-independent), from the export's own word source.
public_uniforms = securenoise.public_uniforms


# ---------------------------------------------------------------------------------------------- kinds
@dataclass(frozen=True, eq=False)
class KindInput:
    """What the mechanism protects: ``x`` (numeric clamped to the public bounds; categorical codes in the
    release's category space), the category labels and their number ``k``, and the public fallback."""

    x: np.ndarray
    labels: tuple[str, ...] | None
    k: int
    fallback: Any


class Kind:
    """A kind's mechanism. Subclasses fill in the per-kind parts; instances live in :data:`KINDS`."""

    name = ""
    # Adaptive's kernels and their noise functions, from :mod:`.adaptive` (set below, per instance: a
    # compiled function read from a class would be bound to the kind object as a method).
    unit_one: Any = None  # on unit noise (the preview's loop)
    secure_one: Any = None  # on secure words (the export's loop)
    preview_kernel: Any = None
    export_kernel: Any = None
    #: Post-processing of a release (issue 12 part 2): ``denoise(release, settings) -> Denoised`` using only
    #: the released values, budgets, flags and public settings (default :func:`denoise_release`, set below
    #: on every instance so that it is not bound as a method). None = publish the raw release.
    denoise: Callable[[Release, PrivacySettings], Denoised] | None = None

    def prepare(self, series: Series, settings: PrivacySettings) -> KindInput:
        return KindInput(series.values, None, 0, public_fallback(series, settings))

    def param(self, settings: PrivacySettings, k: int) -> float:
        """The kernel's per-kind parameter: Δ, the radius r, or the number of categories."""
        raise NotImplementedError

    def unit_aux(self, noise: UnitNoise) -> np.ndarray:
        raise NotImplementedError

    def preview_noise(self, x: np.ndarray, budgets: np.ndarray, fresh: np.ndarray, noise: UnitNoise | NoiseAt,
                      settings: PrivacySettings, k: int) -> np.ndarray:
        """Releases of every event on common random numbers (values at non-fresh events are replaced)."""
        raise NotImplementedError

    def secure_noise(self, x: np.ndarray, budgets: np.ndarray, settings: PrivacySettings, k: int,
                     backend: str, source) -> np.ndarray:
        """Floating-point-safe releases of the events ``x`` with budgets ``budgets`` (all > 0). ``settings``
        are the release's (ε − ε_sel with dummies): any grid is taken from them, never from ``budgets``."""
        raise NotImplementedError

    def kernel_aux(self, words: np.ndarray, settings: PrivacySettings) -> Any:
        """What the Adaptive kernel passes to :attr:`secure_one`: the word buffer (numeric: with the public
        grid exponent of ``settings``)."""
        return words

    def empty_values(self, x: np.ndarray) -> np.ndarray:
        """An output array shaped like ``x``: NaN for real values, uninitialised codes."""
        out = np.empty_like(x)
        if out.dtype.kind == "f":
            out[...] = np.nan
        return out

    def error(self, truth: np.ndarray, values: np.ndarray, codes: np.ndarray | None = None) -> np.ndarray:
        """Per-event error of released ``values`` against the true values (NaN where nothing is published)."""
        raise NotImplementedError

    def value_columns(self, series: Series) -> list[str]:
        src = series.source
        if src is not None and src.value_cols:
            return list(src.value_cols)
        return ["value"]


class NumericKind(Kind):
    name = "numeric"

    def prepare(self, series, settings):
        return KindInput(mechanisms.clamp(series.values, settings.clip_range()), None, 0,
                         public_fallback(series, settings))

    def param(self, settings, k):
        return settings.sensitivity

    def unit_aux(self, noise):
        return noise.laplace

    def preview_noise(self, x, budgets, fresh, noise, settings, k):
        # One compiled pass, x + laplace·(Δ/ε_t) (the same operations, so the same bits, as numpy's three
        # passes). Non-fresh events (ε_t = 0 → ±inf) are replaced by fill_approximations, which never reads them.
        out = np.empty(x.shape[0])
        b = np.asarray(budgets, dtype=np.float64)
        if is_constant(b):  # (Uniform, Event, User) one division instead of one per event
            with np.errstate(divide="ignore"):  # ε_t = 0 everywhere: ±inf, as the kernel's own division gives
                scale = np.float64(settings.sensitivity) / b[0]
            _laplace_release_scaled(x, noise.laplace, float(scale), out)
        else:  # (asarray, not a contiguous copy: a zero-stride view of one float stays one)
            _laplace_release(x, noise.laplace, b, float(settings.sensitivity), out)
        return out

    def secure_noise(self, x, budgets, settings, k, backend, source):
        scales = settings.sensitivity / budgets
        e = grid_exponent(settings)  # public settings only, the same for every event (finding 3)
        if backend not in NUMBA_BACKENDS:
            return opendp_noise.opendp_laplace(x, scales, settings.sensitivity, grid_exponent=e)
        return securenoise.secure_laplace(x, scales, settings.sensitivity, source, grid_exponent=e)

    def kernel_aux(self, words, settings):
        return (words, np.int64(grid_exponent(settings)))

    def error(self, truth, values, codes=None):
        v, x = np.asarray(values, dtype=np.float64), np.asarray(truth, dtype=np.float64)
        if v.ndim != 1 or v.shape != x.shape:  # (the kernel does not check bounds: numpy broadcasts or refuses)
            d = np.subtract(values, truth)
            return np.abs(d, out=d)
        out = np.empty(v.shape[0])
        _abs_error(v, x, out)
        return out


class LocationKind(Kind):
    name = "location"

    def param(self, settings, k):
        return settings.radius_m

    def unit_aux(self, noise):
        return noise.location_aux()

    def preview_noise(self, x, budgets, fresh, noise, settings, k):
        # planar_unit's arithmetic with the angles' cosines and sines computed once per noise: two of its three
        # transcendental calls per event, the same values (the same math.cos/sin), so the same bits.
        out = np.empty((x.shape[0], 2))
        _planar_release(np.ascontiguousarray(x, dtype=np.float64), np.asarray(budgets, dtype=np.float64),
                        float(settings.radius_m), noise.gamma, noise.derived("angle_cos_sin", _angle_cos_sin), out)
        return out

    def secure_noise(self, x, budgets, settings, k, backend, source):
        return securenoise.secure_planar(x, settings.radius_m / budgets, source)

    def error(self, truth, values, codes=None):
        # haversine_one per event, compiled: one pass instead of numpy's fifteen
        out = np.empty(truth.shape[0])
        _haversines(np.ascontiguousarray(truth, dtype=np.float64), np.ascontiguousarray(values, dtype=np.float64),
                    out)
        return out

    def value_columns(self, series):
        src = series.source
        if src is not None and src.value_cols:
            return list(src.value_cols)
        return ["lat", "lon"]


class CategoricalKind(Kind):
    name = "categorical"

    def prepare(self, series, settings):
        codes, labels, _ = category_space(series, settings)
        return KindInput(codes, labels, len(labels), public_fallback(series, settings))

    def param(self, settings, k):
        return k

    def unit_aux(self, noise):
        return noise.categorical_aux()

    def preview_noise(self, x, budgets, fresh, noise, settings, k):
        return mechanisms.rr_unit(x, budgets, k, noise.keep, noise.other)

    def secure_noise(self, x, budgets, settings, k, backend, source):
        if backend not in NUMBA_BACKENDS:
            return opendp_noise.opendp_rr(x, budgets, k)
        return securenoise.secure_rr(x, budgets, k, source)

    def error(self, truth, values, codes=None):
        """Mismatch against ``codes`` (the true codes in the release's category space; default ``truth``)."""
        err = (values != (truth if codes is None else codes)).astype(np.float64)
        err[values < 0] = np.nan
        return err


def denoise_release(release: Release, settings: PrivacySettings, *, consume: bool = False) -> Denoised:
    """The denoiser of :mod:`.denoise` on a release: its own released values, budgets and approximated flags
    (with dummies on: the release on L′) and the public settings only — never the true data. ``consume``:
    the release's values may be written over (:func:`.denoise.denoise`)."""
    k = len(release.categories) if release.categories is not None else None
    return denoise(release.kind, release.values, release.noise_budgets(), release.approximated,
                   sensitivity=settings.sensitivity, bounds=settings.bounds, radius_m=settings.radius_m,
                   lower_bound=settings.lower_bound, n_categories=k, consume=consume)


KINDS: dict[str, Kind] = {k.name: k for k in (NumericKind(), LocationKind(), CategoricalKind())}
for _k in KINDS.values():
    _k.denoise = denoise_release
    _k.preview_kernel, _k.export_kernel = adaptive.PREVIEW[_k.name], adaptive.EXPORT[_k.name]
    _k.unit_one, _k.secure_one = adaptive.UNIT_NOISE[_k.name], adaptive.SECURE_NOISE[_k.name]


def kind_of(series: Series) -> Kind:
    return KINDS[series.kind]


# ----------------------------------------------------------------------------------------------- plan
@dataclass(frozen=True, eq=False)
class Plan:
    """Everything about a release that is decided before any noise is drawn.

    ``settings.epsilon`` is the release's ε (ε − ε_sel with dummies) and ``landmarks`` the set the release
    and its check use (L' with dummies). ``budgets`` is None for Adaptive (its budgets depend on its
    sampling); ``precheck`` is then None too and the check runs on the budgets the loop produced.
    """

    series: Series
    settings: PrivacySettings
    scheme: str
    kind: Kind
    landmarks: np.ndarray
    eps_a: float  # the allocatable ε the budgets are drawn from
    inp: KindInput
    budgets: np.ndarray | None

    # Computed on first use (a frozen dataclass still has a __dict__ for cached_property): the evaluation's
    # batched kernels plan every scheme and set but need neither.
    @cached_property
    def precheck(self) -> GuaranteeResult | None:
        """The independent landmark-sum check on the planned budgets (None for Adaptive)."""
        if self.budgets is None:
            return None
        return check_guarantee(self.budgets, self.landmarks, self.settings.epsilon)

    @cached_property
    def landmark_mask(self) -> np.ndarray:
        return landmark_mask(self.landmarks, self.n)

    @cached_property
    def noise_scale(self) -> np.ndarray | None:
        """A period series (DESIGN §12): each period's S_j/Δ for this plan's landmark set (L' with dummies;
        dummy periods get a landmark period's S_j: sound, and their noise does not single them out). None for
        a series of events (the scalar Δ)."""
        per = self.series.periods
        if per is None:
            return None
        return per.multipliers(self.landmarks)

    @cached_property
    def kernel_x(self) -> np.ndarray:
        """What Adaptive's loop (one scalar Δ) releases: the input, or for a period series z_j = y_j·Δ/S_j,
        whose neighbours differ by at most Δ; its releases are scaled back by :func:`periods_from_kernel`."""
        m = self.noise_scale
        return self.inp.x if m is None else self.inp.x / m

    def noise_budgets(self, budgets: np.ndarray) -> np.ndarray:
        """The budgets the scalar-Δ noise functions get (:func:`~.release.noise_budgets`)."""
        return noise_budgets(budgets, self.noise_scale)

    @property
    def n(self) -> int:
        return self.series.n

    @property
    def epsilon(self) -> float:
        return self.settings.epsilon

    @property
    def is_adaptive(self) -> bool:
        return self.budgets is None

    @property
    def fresh(self) -> np.ndarray:
        assert self.budgets is not None
        return self.budgets > 0

    @property
    def holds(self) -> bool | None:
        """The pre-check verdict: True/False, or None when it can only be known after drawing (Adaptive)."""
        return None if self.precheck is None else self.precheck.holds

    # Adaptive's loop parameters
    @property
    def adaptive_base(self) -> float:
        return self.eps_a / (self.landmarks.size + 1)

    def adaptive_args(self) -> tuple:
        """(mask, eps_a, base, inc, dec, min_rate, param): the kernel's arguments after ``u``."""
        p = self.settings.adaptive
        return (self.landmark_mask, self.eps_a, self.adaptive_base, p.inc, p.dec,
                p.min_rate, self.kind.param(self.settings, self.inp.k))


def plan(series: Series, landmarks, settings: PrivacySettings, scheme: str, dummies=None, *,
         budgets_fn: Callable = fixed_budgets, allocatable_fn: Callable = allocatable,
         inp: KindInput | None = None) -> Plan:
    """The release's plan (see :class:`Plan`). ``dummies`` is a drawn
    :class:`~.dummies.DummySelection` (the plan then uses its ``L'`` and ``ε − ε_sel``) or None.

    ``inp`` lets a caller that plans several schemes of one series prepare the kind's input once.
    Raises ValueError for bad settings, an unknown scheme or landmarks outside the series."""
    settings.validate()
    if scheme not in ALL_SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; choose one of {', '.join(ALL_SCHEMES)}")
    n = series.n
    if dummies is not None:
        lm = normalize_landmarks(dummies.landmarks, n)
        settings = settings.with_(epsilon=dummies.epsilon_remaining)
    else:
        lm = normalize_landmarks(landmarks, n)
    kind = kind_of(series)
    if series.periods is not None and series.kind != "numeric":
        raise ValueError("a coarser resolution works on numeric series only")
    if inp is None:
        inp = kind.prepare(series, settings)
    eps_a = allocatable_fn(settings.epsilon, n)
    budgets = None if scheme == "adaptive" else budgets_fn(scheme, n, lm, eps_a)
    return Plan(series, settings, scheme, kind, lm, eps_a, inp, budgets)


def export_verdicts(series: Series, landmarks, settings: PrivacySettings, dummies=None) -> dict[str, str]:
    """Scheme → the reason the export refuses it ('' when it can be exported), from the plans' pre-checks.

    ``dummies`` are the (not yet drawn) dummy settings: the export's ``L'`` has at least one dummy when there
    is a regular event, so L plus the first regular event stands for it (the fixed schemes' verdicts depend
    only on whether there is one, not on which). Adaptive is always '' (checked after drawing)."""
    n = series.n
    lm = normalize_landmarks(landmarks, n)
    padded = _smallest_superset(lm, n) if dummies is not None else lm
    out = {}
    for s in ALL_SCHEMES:
        if s == "adaptive":
            out[s] = ""
            continue
        g = precheck(s, n, padded, settings.epsilon)
        plain = precheck(s, n, lm, settings.epsilon) if dummies is not None else None
        assert g is not None
        if g.holds:
            out[s] = ""
        elif plain is not None and plain.holds:
            out[s] = "fails the landmark-sum check once dummies are added"
        else:
            out[s] = f"fails the landmark-sum check ({g.worst:.4g} > ε = {settings.epsilon:g})"
    return out


def precheck(scheme: str, n: int, landmarks, epsilon: float) -> GuaranteeResult | None:
    """The pre-check verdict of a scheme on n events, landmarks and ε without a series (no input is
    prepared); None for Adaptive, whose budgets are known only after drawing."""
    if scheme == "adaptive":
        return None
    lm = normalize_landmarks(landmarks, n)
    return check_guarantee(fixed_budgets(scheme, n, lm, allocatable(epsilon, n)), lm, epsilon)


def _smallest_superset(lm: np.ndarray, n: int) -> np.ndarray:
    if lm.size >= n:
        return lm
    free = np.flatnonzero(np.isin(np.arange(min(n, lm.size + 1)), lm, invert=True))
    return np.union1d(lm, free[:1])


# ------------------------------------------------------------------------------------ preview runner
#: Adaptive's sampling uniforms are drawn this many events at a time when not already drawn (UnitNoise.sample_chunks)
SAMPLE_CHUNK = 1 << 21


def run_adaptive_preview(p: Plan, noise: UnitNoise) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Adaptive's compiled loop on common random numbers: (values, budgets, fresh). Run over chunks of the
    sampling uniforms, its state carried from one to the next: the same loop over the same draws."""
    n = p.n
    x = p.kernel_x
    out_v = np.empty_like(x)
    out_eps = np.empty(n)
    out_fresh = np.empty(n, dtype=np.bool_)
    mask, eps_a, base, inc, dec, rmin, param = p.adaptive_args()
    aux = p.kind.unit_aux(noise)
    state = adaptive.new_state(int(p.landmarks.size))
    for a, u in noise.sample_chunks(SAMPLE_CHUNK):
        b = a + u.shape[0]
        t, _ = p.kind.preview_kernel(x[a:b], mask[a:b], u, eps_a, base, inc, dec, rmin, param, aux[a:b], 0, 0, b - a,
                                     1 << 62, state, out_v[a:b], out_eps[a:b], out_fresh[a:b])
        assert t == b - a
    if p.noise_scale is not None:
        out_v = periods_from_kernel(out_v, out_fresh, p.noise_scale, p.inp.fallback)
    return out_v, out_eps, out_fresh


def periods_from_kernel(z: np.ndarray, fresh: np.ndarray, scale: np.ndarray, carry) -> np.ndarray:
    """A period series' Adaptive releases back in the data's units, in place: y'_j = z'_j·S_j/Δ at fresh
    periods (post-processing by the public S_j), and skipped periods republish the previous y' (``carry``
    before the first), as every release does."""
    z[fresh] *= scale[fresh]
    return fill_approximations(z, fresh, carry)


def run_preview(p: Plan, noise: UnitNoise, previous: Release | None = None) -> Release:
    """The preview release of a plan on common random numbers (DESIGN §5); raw values (no denoising).

    ``previous``: a release of a fixed scheme on the same series, unit noise and settings (the preview's
    memo), for a landmark click: when the budgets differ only in a short span (Skip: the clicked event), the
    release is that one patched there — the same noise function on the same draws, and the same
    ``fill_approximations`` over the run that republishes the span — so it equals the full recompute bit for
    bit; when no budget changed (Event, User), it is that one. The check is never taken from it."""
    return run_preview_patched(p, noise, previous)[0]


def run_preview_patched(p: Plan, noise: UnitNoise,
                        previous: Release | None = None) -> tuple[Release, tuple[int, int] | None]:
    """:func:`run_preview` and the events ``(a, b)`` outside of which its values are ``previous``'s (rows
    a..b-1 were patched); None when the release was made whole. The preview's error is patched over that
    span without comparing the two releases' values again (a pass over both whole arrays per click)."""
    if noise.n != p.n:
        raise ValueError("the unit noise was drawn for another series length")
    span = None
    if p.budgets is None:
        values, budgets, fresh = run_adaptive_preview(p, noise)
        guarantee = check_guarantee(budgets, p.landmarks, p.epsilon)
        approximated = ~fresh
    else:
        assert p.precheck is not None
        guarantee = p.precheck
        patched = _patched(p, noise, previous) if previous is not None else None
        if patched is not None:
            budgets, values, approximated, span = patched
        else:
            budgets = p.budgets
            fresh, approximated = fresh_flags(budgets)
            values = p.kind.preview_noise(p.inp.x, p.noise_budgets(budgets), fresh, noise, p.settings, p.inp.k)
            values = fill_approximations(values, fresh, p.inp.fallback)
    return Release(scheme=p.scheme, kind=p.kind.name, epsilon=p.epsilon, landmarks=p.landmarks, budgets=budgets,
                   values=values, approximated=approximated, guarantee=guarantee, categories=p.inp.labels,
                   sensitivity_scale=p.noise_scale), span


#: The longest span of changed budgets (as a share of n) worth patching; beyond it the full pass is cheaper.
PATCH_SHARE = 1 / 16


def _patched(p: Plan, noise: UnitNoise, prev: Release) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple] | None:
    """(budgets, values, approximated, the patched rows (a, b)) of ``p`` from ``prev`` (see :func:`run_preview`),
    or None when the budgets changed in too long a span (Uniform, Balanced: every budget) or ``prev`` does not
    fit."""
    b, old, n = p.budgets, prev.budgets, p.n
    assert b is not None
    if prev.kind != p.kind.name or old.shape != b.shape or p.noise_scale is not None:
        return None  # (a period series: its noise scales change with the landmark periods)
    span = skip_span(old, prev.landmarks, b, p.landmarks, p.eps_a) if p.scheme == "skip" else None
    lo, hi = span if span is not None else budget_span(old, b)
    if lo < 0:  # the same budgets: the same release
        return old, prev.values, prev.approximated, (0, 0)
    if hi - lo > n * PATCH_SHARE:
        return None
    # Only the span's flags are new: elsewhere the budgets, so the flags (ε_t > 0), are prev's. Series-wide
    # flags made anew were two passes over n events per click.
    fresh_span = b[lo:hi + 1] > 0
    # Events after the span republish it until the next fresh event, whose value (and all after) is unchanged.
    stop = min(_next_fresh(b, hi + 1) + 1, n)
    if stop - lo > n * PATCH_SHARE:
        return None
    # Before the first fresh event the values depend on it: with none before the span, redo that prefix too.
    start = lo if _next_fresh(b, 0) < lo else 0
    values = prev.values.copy()
    idx = lo + np.flatnonzero(fresh_span & (old[lo:hi + 1] != b[lo:hi + 1]))
    if idx.size:
        values[idx] = p.kind.preview_noise(p.inp.x[idx], b[idx], np.ones(idx.size, np.bool_), noise.at(idx),
                                           p.settings, p.inp.k)
    carry = values[start - 1] if start > 0 else p.inp.fallback
    values[start:stop] = fill_approximations(values[start:stop], b[start:stop] > 0, carry)
    approximated = np.array(prev.approximated, dtype=np.bool_)  # (a copy; constant flags materialised)
    approximated[lo:hi + 1] = ~fresh_span
    return b, values, approximated, (start, stop)  # (idx lies in lo..hi, within start..stop-1)


def budget_span(a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
    """:func:`diff_span` of two budget arrays of one length; two equal-budget views (zero stride: one value
    each, Uniform, Event and User on a click) are compared by that value, not over n events."""
    if is_constant(a) and is_constant(b):
        return (-1, -1) if a[0] == b[0] else (0, a.shape[0] - 1)  # NaN ≠ NaN: a difference, as diff_span
    return diff_span(a, b)


@numba.njit(cache=True, nogil=True)
def diff_span(a, b):  # pragma: no cover - compiled
    """(first, last) index where a and b differ (NaN counts as a difference), or (−1, −1)."""
    lo = _first_diff(a, b, 1)
    if lo < 0:
        return -1, -1
    return lo, _first_diff(a, b, -1)


@numba.njit(cache=True, nogil=True)
def _first_diff(a, b, step):  # pragma: no cover - compiled
    """The first (step 1) or last (step −1) index where a and b differ, or −1: blocks of 256 compared
    without a branch, so equal arrays cost one vectorised pass and a difference near the start stops there."""
    n = a.shape[0]
    nb = (n + 255) // 256
    for k in range(nb):
        blk = k if step > 0 else nb - 1 - k
        s, e = blk * 256, min(blk * 256 + 256, n)
        d = False
        for t in range(s, e):
            d |= a[t] != b[t]
        if d:
            for i in range(e - s):
                t = s + i if step > 0 else e - 1 - i
                if a[t] != b[t]:
                    return t
    return -1


@numba.njit(cache=True, nogil=True)
def _next_fresh(b, start):  # pragma: no cover - compiled
    """The first index ≥ start whose budget is positive (a fresh release), or len(b)."""
    for t in range(start, b.shape[0]):
        if b[t] > 0.0:
            return t
    return b.shape[0]


def denoised_values(release: Release, settings: PrivacySettings, *, consume: bool = False) -> Denoised | None:
    """The kind's post-processing of a release, or None when the kind has no denoiser (raw is published).
    The release must be the one published (its budgets are the plan's, or Adaptive's as drawn). ``consume``:
    the caller lets go of the release, whose values the default denoiser may then write over."""
    fn = KINDS[release.kind].denoise
    if fn is None:
        return None
    # (the slot's form stays (release, settings): a replaced denoiser, as the tests' and audits' are, is not
    # asked to consume anything)
    return fn(release, settings, consume=True) if consume and fn is denoise_release else fn(release, settings)


# ------------------------------------------------------------------------------------- export runner
class ExportRunner:
    """Draws a plan's release with floating-point-safe noise, chunk by chunk.

    ``chunks()`` yields ``(a, b, values, approximated)`` for rows a..b-1; ``budgets`` is complete once the
    iteration ends (Adaptive fills it as it goes) and is what the final independent check must examine.
    Random words are consumed in the export's fixed order (Adaptive's public uniforms, or the first fresh
    release when events before it republish it, then the chunks), so a keyed export is reproducible.

    Adaptive's loop draws through a :class:`~.securenoise.WordBuffer`, which tells a sampler's failures
    apart: bad input raises ValueError naming the event (``describe(i)``, e.g. its file row), running out of
    words raises :class:`~.securenoise.RandomnessExhausted`."""

    def __init__(self, p: Plan, backend: str, source, chunk_rows: int,
                 describe: Callable[[int], str] | None = None, *, keep: bool = False) -> None:
        self.plan = p
        self.backend = backend
        self.source = source
        self.describe = describe
        self.chunk = max(1, int(chunk_rows))
        n = p.n
        #: with ``keep``, the whole release, of which each chunk is a view (the denoised export needs it whole:
        #: no copy of it is made)
        self.values: np.ndarray | None = p.kind.empty_values(p.inp.x) if keep else None
        # Fixed budgets are the plan's own array (a copy held them twice; equal budgets
        # stay one float seen n times); Adaptive's loop fills its own.
        self.budgets: np.ndarray = np.empty(n) if p.budgets is None else p.budgets
        self.fresh = np.empty(n, dtype=np.bool_) if p.budgets is None else np.ascontiguousarray(p.budgets > 0)
        self._first: tuple[int, Any] | None = None
        self._carry: Any = p.inp.fallback
        if p.budgets is None:
            self._u = public_uniforms(source, n)
            self._wb = securenoise.WordBuffer(source, max(4 * securenoise.RESERVE_WORDS, 16 * self.chunk))
            self._aux = p.kind.kernel_aux(self._wb.words, p.settings)  # refills keep the same array
            self._out_v = self.values if self.values is not None else np.empty_like(p.inp.x)
            self._state = adaptive.new_state(int(p.landmarks.size))
            self._args = p.adaptive_args()
        else:
            fr = self.fresh
            if p.inp.fallback is None and n and not fr[0] and fr.any():
                # Events before the first fresh release republish it (post-processing): draw it now, once.
                j = int(np.argmax(fr))
                sc = p.noise_scale
                v = self._noise(p.inp.x[j:j + 1], self.budgets[j:j + 1], None if sc is None else sc[j:j + 1])
                self._first = (j, v[0])
                self._carry = v[0]

    def _noise(self, x: np.ndarray, budgets: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
        p = self.plan
        if scale is None:
            return p.kind.secure_noise(x, budgets, p.settings, p.inp.k, self.backend, self.source)
        # A period series: the mechanism on z = y·Δ/S_j, whose neighbours differ by at most Δ (so the snapped
        # sampler's own accounting holds as it is), then z'·S_j/Δ: post-processing by the public S_j.
        return p.kind.secure_noise(x / scale, budgets, p.settings, p.inp.k, self.backend, self.source) * scale

    def chunks(self) -> Iterator[tuple[int, int, np.ndarray, np.ndarray]]:
        n = self.plan.n
        for a in range(0, n, self.chunk):
            b = min(n, a + self.chunk)
            vals = self._adaptive_chunk(a, b) if self.plan.budgets is None else self._fixed_chunk(a, b)
            yield a, b, vals, ~self.fresh[a:b]
        if self.plan.budgets is None:  # (chunks() runs once) the loop's public uniforms are not needed after it:
            del self._u  # a series-sized array, else held while a denoised export denoises

    def _adaptive_chunk(self, a: int, b: int) -> np.ndarray:
        p = self.plan
        mask, eps_a, base, inc, dec, rmin, param = self._args
        wb = self._wb
        t = a
        while t < b:
            wb.ensure()
            t, pos = p.kind.export_kernel(p.kernel_x, mask, self._u, eps_a, base, inc, dec, rmin, param, self._aux,
                                          wb.pos, t, b, wb.limit, self._state, self._out_v, self.budgets,
                                          self.fresh)
            wb.check(pos, t, self.describe)  # -2: ValueError naming event t; -1: RandomnessExhausted
        if p.noise_scale is None:
            return self._out_v[a:b]
        fr = self.fresh[a:b]
        vals = periods_from_kernel(self._out_v[a:b], fr, p.noise_scale[a:b], self._carry)
        if fr.any():
            self._carry = vals[int(np.flatnonzero(fr)[-1])]
        return vals

    def _fixed_chunk(self, a: int, b: int) -> np.ndarray:
        x = self.plan.inp.x
        fr = self.fresh[a:b]
        vals = self.plan.kind.empty_values(x[a:b]) if self.values is None else self.values[a:b]
        idx = np.flatnonzero(fr)
        if self._first is not None:
            j, v = self._first
            if a <= j < b:
                vals[j - a] = v
                idx = idx[idx != j - a]
        if idx.size:
            sc = self.plan.noise_scale
            vals[idx] = self._noise(x[a:b][idx], self.budgets[a:b][idx], None if sc is None else sc[a:b][idx])
        # Rows before this chunk's first fresh one republish the previous chunk's last release (the carry),
        # the public fallback, or — before any release — the pre-drawn first one.
        vals = fill_approximations(vals, fr, self._carry)
        if fr.any():
            self._carry = vals[int(np.flatnonzero(fr)[-1])]
        return vals


# ------------------------------------------------------------------------------------ previews, one call
def compute_release(series: Series, landmarks, settings: PrivacySettings, scheme: str,
                    noise: UnitNoise) -> Release:
    """A preview release on common random numbers (DESIGN §5): :func:`plan` then :func:`run_preview`, with
    the allocation functions looked up in :mod:`.release` when called (so a fault injected there shows)."""
    if noise.n != series.n:
        raise ValueError("the unit noise was drawn for another series length")
    return run_preview(plan(series, landmarks, settings, scheme, budgets_fn=release_mod.fixed_budgets,
                            allocatable_fn=release_mod.allocatable), noise)


def compute_all(series: Series, landmarks, settings: PrivacySettings, noise: UnitNoise,
                schemes: Iterable[str] = ALL_SCHEMES) -> dict[str, Release]:
    landmarks = normalize_landmarks(landmarks, series.n)
    return {s: compute_release(series, landmarks, settings, s, noise) for s in schemes}
