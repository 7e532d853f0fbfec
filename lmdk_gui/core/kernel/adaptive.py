"""The Adaptive scheme's sequential loop (DESIGN §4, thesis §4.1.3): one source for every kind and path.

The loop is inherently sequential: whether event t is sampled depends on a rate that depends on earlier
*releases*, and a regular event's budget depends on which earlier landmarks were sampled. It is compiled:
as a Python loop over a million events it would hold up every click.

:func:`_make_loop` is the only place the budget logic is written. What differs between kinds and paths is
passed in as hooks and compiled into each kernel: how a kind keeps its last release in the state (``load``,
``save``, ``store``), how it draws one event and decides whether the data moved (``draw``), and the noise
function ``f`` — common random numbers for previews (:mod:`.mechanisms`), the floating-point-safe samplers
for export (:mod:`.securenoise`). :data:`PREVIEW` and :data:`EXPORT` hold the six kernels the runners call.

Budget arithmetic is written so the landmark sum stays exact up to two roundings: with ``m = |L|`` and
``base = ε_a/(m + 1)``, the landmarks spent so far are ``n_s·base`` (one multiplication, not a running
sum), and a sampled regular event gets ``ε_a − (n_s + left)·base`` where ``left`` counts the landmarks
after it. Since the landmarks finally spend at most ``(n_s + left)·base``, every regular event's
``L ∪ {t}`` sum is at most ``ε_a``. (The independent check, :mod:`.guarantee`, verifies that on the budgets.)

Kernels are resumable: they process events ``start .. stop-1`` and stop early, before an event, when
``pos > pos_limit`` (the caller refills the word buffer of the secure samplers) and keep their state in the
float64 array ``state``: ``[rate, has_last, last0, last1, n_sampled_landmarks, landmarks_left]``. A noise
function reporting a failure (``pos < 0``: -1 out of words, -2 invalid input) stops the kernel with that
``pos``, the state not saved.

Kernel signature (after the hooks are compiled in): ``(x, is_lm, u, eps_a, base, inc, dec, rmin, param, aux,
pos, start, stop, pos_limit, state, out_v, out_eps, out_fresh) -> (t, pos)``; ``param`` is Δ, the radius r or
the number of categories k.
"""

from __future__ import annotations

import numpy as np

from ..engine.lazyjit import numba  # the real numba is imported on a kernel's first call (cold start)
from . import mechanisms, securenoise
from .mechanisms import haversine_one


def new_state(n_landmarks: int) -> np.ndarray:
    return np.array([1.0, 0.0, 0.0, 0.0, 0.0, float(n_landmarks)])


def _make_loop(name: str, hooks: tuple, f, *, always: bool, cache: bool):
    """The Adaptive kernel of one kind and path. ``always``: draw every event and keep the draw only where
    it is released — for a noise function without side effects (the numeric preview), so that whether an
    event is sampled, a coin flip the processor cannot predict, costs no branch (mispredicted branches were
    much of the loop's time). The export's samplers consume words: they draw only fresh
    events. Either way the same draws are kept, so the same bits."""

    load, save, store, draw = hooks

    # The statements' form matters for the ``always`` kernel: LLVM turns the conditional assignments below
    # into selects as written (a nested conditional expression for the rate compiled to branches again).
    def loop(x, is_lm, u, eps_a, base, inc, dec, rmin, param, aux, pos, start, stop, pos_limit, state,
             out_v, out_eps, out_fresh):  # pragma: no cover - compiled
        rate = state[0]
        has_last = state[1] > 0.0
        last = load(state)
        n_s = int(state[4])
        left = int(state[5])
        t = start
        while t < stop:
            if pos > pos_limit:
                break
            # The budget: a landmark gets ``base`` when sampled; a sampled regular event what the landmarks
            # sampled so far and those still ahead leave of ε_a.
            lmk = is_lm[t]
            sample = (not has_last) or u[t] < rate
            left -= lmk
            e = base if lmk else eps_a - (n_s + left) * base
            n_s += sample and lmk
            fresh = sample and e > 0.0
            o, moved, pos = draw(f, always, fresh, x, t, e, param, aux, pos, last)
            if pos < 0:
                return t, pos  # -1 out of words, -2 invalid input: the caller tells them apart
            # The rate: +inc (at most 1) when the released value moved by more than the noise scale, −dec
            # (at least rmin) otherwise; only from the second release on.
            up = rate + inc
            up = 1.0 if up > 1.0 else up
            down = rate - dec
            down = rmin if down < rmin else down
            adapted = up if moved else down
            rate = adapted if (fresh and has_last) else rate
            last = o if fresh else last
            has_last = has_last or fresh
            store(out_v, t, last)
            out_fresh[t] = fresh
            out_eps[t] = e if fresh else 0.0
            t += 1
        state[0] = rate
        state[1] = 1.0 if has_last else 0.0
        save(state, last)
        state[4] = n_s
        state[5] = left
        return t, pos

    loop.__name__ = loop.__qualname__ = name  # its own cache file, and pickled by name (lazyjit)
    # Numba cannot cache the export's samplers ("dynamic globals"): an export compiles its kernel once; the
    # cold start needs only the previews', which are cached (their hooks are compiled in as constants, so
    # the cache key is the same in every process: tests/privacy/test_compiled_cache.py).
    return numba.njit(cache=cache, nogil=True, error_model="numpy")(loop)


# ----------------------------------------------------------------------------------------- kind hooks
# load(state) -> last; save(state, last); store(out_v, t, last);
# draw(f, always, fresh, x, t, e, param, aux, pos, last) -> (release, moved, pos), called on every event:
# it draws (with ``f``) when ``always or fresh``, otherwise returns ``last`` unchanged.
@numba.njit(cache=True, nogil=True, inline="always")
def _load_scalar(state):  # pragma: no cover - compiled
    return state[2]


@numba.njit(cache=True, nogil=True, inline="always")
def _save_scalar(state, last):  # pragma: no cover - compiled
    state[2] = last


@numba.njit(cache=True, nogil=True, inline="always")
def _store_scalar(out_v, t, last):  # pragma: no cover - compiled
    out_v[t] = last


@numba.njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _draw_numeric(f, always, fresh, x, t, e, sens, aux, pos, last):  # pragma: no cover - compiled
    if always or fresh:
        scale = sens / e  # (ε_t ≤ 0 at a draw that is not kept: ±inf or NaN, numpy's error model, never read)
        o, pos = f(x[t], scale, sens, t, aux, pos)
        return o, abs(o - last) > scale, pos
    return last, False, pos


@numba.njit(cache=True, nogil=True, inline="always")
def _load_pair(state):  # pragma: no cover - compiled
    return state[2], state[3]


@numba.njit(cache=True, nogil=True, inline="always")
def _save_pair(state, last):  # pragma: no cover - compiled
    state[2] = last[0]
    state[3] = last[1]


@numba.njit(cache=True, nogil=True, inline="always")
def _store_pair(out_v, t, last):  # pragma: no cover - compiled
    out_v[t, 0] = last[0]
    out_v[t, 1] = last[1]


@numba.njit(cache=True, nogil=True, inline="always")
def _draw_location(f, always, fresh, x, t, e, radius, aux, pos, last):  # pragma: no cover - compiled
    if always or fresh:
        scale = radius / e
        o0, o1, pos = f(x[t, 0], x[t, 1], scale, t, aux, pos)
        return (o0, o1), haversine_one(o0, o1, last[0], last[1]) > scale, pos
    return last, False, pos


@numba.njit(cache=True, nogil=True, inline="always")
def _load_code(state):  # pragma: no cover - compiled
    return int(state[2])


@numba.njit(cache=True, nogil=True, inline="always")
def _save_code(state, last):  # pragma: no cover - compiled
    state[2] = float(last)


@numba.njit(cache=True, nogil=True, inline="always")
def _draw_categorical(f, always, fresh, x, t, e, k, aux, pos, last):  # pragma: no cover - compiled
    if always or fresh:
        o, pos = f(x[t], e, k, t, aux, pos)
        return o, o != last, pos  # the categorical "noise scale" test: did the released category change?
    return last, False, pos


# ----------------------------------------------------------------------------- export noise functions
# The secure samplers with the unit functions' argument order (aux = the word buffer; numeric: with the public
# grid exponent, every event of the release on the same grid: issue 17, finding 3).
@numba.njit(cache=True, nogil=True)
def secure_laplace_one(x, scale, sens, t, aux, pos):  # pragma: no cover - compiled
    return securenoise.secure_laplace_grid_one(x, scale, sens, aux[1], aux[0], pos)


@numba.njit(cache=True, nogil=True)
def secure_planar_one(lat, lon, scale_m, t, words, pos):  # pragma: no cover - compiled
    return securenoise.secure_planar_one(lat, lon, scale_m, words, pos)


@numba.njit(cache=True, nogil=True)
def secure_rr_one(code, eps, k, t, words, pos):  # pragma: no cover - compiled
    return securenoise.secure_rr_one(code, eps, k, words, pos)


_HOOKS = {
    "numeric": (_load_scalar, _save_scalar, _store_scalar, _draw_numeric),
    "location": (_load_pair, _save_pair, _store_pair, _draw_location),
    "categorical": (_load_code, _save_code, _store_scalar, _draw_categorical),
}
UNIT_NOISE = {"numeric": mechanisms.laplace_unit_one, "location": mechanisms.planar_unit_one,
              "categorical": mechanisms.rr_unit_one}
SECURE_NOISE = {"numeric": secure_laplace_one, "location": secure_planar_one, "categorical": secure_rr_one}
#: The numeric preview draws every event (branch-free, see _make_loop); planar's three transcendental calls
#: and randomized response's exponential are dearer than the branch they would save.
_ALWAYS = {"numeric": True, "location": False, "categorical": False}

#: The kernels the runners call: the preview's on unit noise, the export's on secure words.
PREVIEW = {k: _make_loop(f"preview_{k}", _HOOKS[k], UNIT_NOISE[k], always=_ALWAYS[k], cache=True) for k in _HOOKS}
EXPORT = {k: _make_loop(f"export_{k}", _HOOKS[k], SECURE_NOISE[k], always=False, cache=False) for k in _HOOKS}
preview_numeric, preview_location, preview_categorical = (PREVIEW[k] for k in _HOOKS)
export_numeric, export_location, export_categorical = (EXPORT[k] for k in _HOOKS)
