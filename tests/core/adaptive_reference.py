"""FROZEN reference: the Adaptive loops as they were before issue 43 unified them (lmdk_gui/core/kernel/
adaptive.py and the cached wrappers of engine/pipeline.py at ef8ff3d), kept verbatim apart from imports and
``cache=False`` everywhere (a test module must not leave entries in numba's on-disk cache).

tests/core/test_adaptive_equivalence.py pins the product's one loop to these outputs bit for bit. Do not edit
this file to make that test pass: it is the record of the old behaviour.
"""

# ruff: noqa
# mypy: ignore-errors
from __future__ import annotations

import numpy as np

from lmdk_gui.core.engine.lazyjit import numba
from lmdk_gui.core.kernel import mechanisms, securenoise
from lmdk_gui.core.kernel.mechanisms import haversine_one


def new_state(n_landmarks: int) -> np.ndarray:
    return np.array([1.0, 0.0, 0.0, 0.0, 0.0, float(n_landmarks)])


@numba.njit(cache=False, nogil=True)
def _adapt(rate, moved, inc, dec, rmin):  # pragma: no cover - compiled
    if moved:
        rate = rate + inc
        return 1.0 if rate > 1.0 else rate
    rate = rate - dec
    return rmin if rate < rmin else rate


@numba.njit(cache=False, nogil=True, inline="always")
def _load_numeric(state):  # pragma: no cover - compiled
    """The numeric loops' state: rate, whether a value was released, the last one, landmarks sampled, left."""
    return state[0], state[1] > 0.0, state[2], int(state[4]), int(state[5])


@numba.njit(cache=False, nogil=True, inline="always")
def _save_numeric(state, rate, has_last, last, n_s, left):  # pragma: no cover - compiled
    state[0] = rate
    state[1] = 1.0 if has_last else 0.0
    state[2] = last
    state[4] = n_s
    state[5] = left


# The kernels take the noise function ``f`` as an argument, and numba's on-disk cache cannot serve such
# signatures: the key holds the type of *this process's* dispatcher object, so the cache never hits (every
# process appended one more entry to the index), and re-pickling an index with entries whose dispatchers
# are gone fails with "ReferenceError: underlying object has vanished". So these are not cached.
@numba.njit(cache=False, nogil=True)
def adaptive_numeric(f, x, is_lm, u, eps_a, base, inc, dec, rmin, sens, aux, pos, start, stop, pos_limit,
                     state, out_v, out_eps, out_fresh):  # pragma: no cover - compiled
    rate, has_last, last, n_s, left = _load_numeric(state)
    t = start
    while t < stop:
        if pos > pos_limit:
            break
        sample = (not has_last) or u[t] < rate
        if is_lm[t]:
            left -= 1
            if sample:
                e = base
                n_s += 1
            else:
                e = 0.0
        elif sample:
            e = eps_a - (n_s + left) * base
        else:
            e = 0.0
        if sample and e > 0.0:
            scale = sens / e
            o, pos = f(x[t], scale, sens, t, aux, pos)
            if pos < 0:
                return t, pos  # -1 out of words, -2 invalid input: the caller tells them apart
            if has_last:
                rate = _adapt(rate, abs(o - last) > scale, inc, dec, rmin)
            last = o
            has_last = True
            out_v[t] = o
            out_fresh[t] = True
            out_eps[t] = e
        else:
            out_v[t] = last
            out_fresh[t] = False
            out_eps[t] = 0.0
        t += 1
    _save_numeric(state, rate, has_last, last, n_s, left)
    return t, pos


@numba.njit(cache=False, nogil=True)  # see the note above adaptive_numeric
def adaptive_location(f, x, is_lm, u, eps_a, base, inc, dec, rmin, radius, aux, pos, start, stop, pos_limit,
                      state, out_v, out_eps, out_fresh):  # pragma: no cover - compiled
    rate = state[0]
    has_last = state[1] > 0.0
    last0 = state[2]
    last1 = state[3]
    n_s = int(state[4])
    left = int(state[5])
    t = start
    while t < stop:
        if pos > pos_limit:
            break
        sample = (not has_last) or u[t] < rate
        if is_lm[t]:
            left -= 1
            if sample:
                e = base
                n_s += 1
            else:
                e = 0.0
        elif sample:
            e = eps_a - (n_s + left) * base
        else:
            e = 0.0
        if sample and e > 0.0:
            scale = radius / e
            o0, o1, pos = f(x[t, 0], x[t, 1], scale, t, aux, pos)
            if pos < 0:
                return t, pos  # -1 out of words, -2 invalid input: the caller tells them apart
            if has_last:
                rate = _adapt(rate, haversine_one(o0, o1, last0, last1) > scale, inc, dec, rmin)
            last0 = o0
            last1 = o1
            has_last = True
            out_v[t, 0] = o0
            out_v[t, 1] = o1
            out_fresh[t] = True
            out_eps[t] = e
        else:
            out_v[t, 0] = last0
            out_v[t, 1] = last1
            out_fresh[t] = False
            out_eps[t] = 0.0
        t += 1
    state[0] = rate
    state[1] = 1.0 if has_last else 0.0
    state[2] = last0
    state[3] = last1
    state[4] = n_s
    state[5] = left
    return t, pos


@numba.njit(cache=False, nogil=True)  # see the note above adaptive_numeric
def adaptive_categorical(f, x, is_lm, u, eps_a, base, inc, dec, rmin, k, aux, pos, start, stop, pos_limit,
                         state, out_v, out_eps, out_fresh):  # pragma: no cover - compiled
    rate = state[0]
    has_last = state[1] > 0.0
    last = int(state[2])
    n_s = int(state[4])
    left = int(state[5])
    t = start
    while t < stop:
        if pos > pos_limit:
            break
        sample = (not has_last) or u[t] < rate
        if is_lm[t]:
            left -= 1
            if sample:
                e = base
                n_s += 1
            else:
                e = 0.0
        elif sample:
            e = eps_a - (n_s + left) * base
        else:
            e = 0.0
        if sample and e > 0.0:
            o, pos = f(x[t], e, k, t, aux, pos)
            if pos < 0:
                return t, pos  # -1 out of words, -2 invalid input: the caller tells them apart
            if has_last:
                # The categorical "noise scale" test: did the released category change?
                rate = _adapt(rate, o != last, inc, dec, rmin)
            last = o
            has_last = True
            out_v[t] = o
            out_fresh[t] = True
            out_eps[t] = e
        else:
            out_v[t] = last
            out_fresh[t] = False
            out_eps[t] = 0.0
        t += 1
    state[0] = rate
    state[1] = 1.0 if has_last else 0.0
    state[2] = float(last)
    state[4] = n_s
    state[5] = left
    return t, pos


@numba.njit(cache=False, nogil=True, error_model="numpy")
def adaptive_numeric_unit(x, is_lm, u, eps_a, base, inc, dec, rmin, sens, lap, pos, start, stop, pos_limit,
                          state, out_v, out_eps, out_fresh):  # pragma: no cover - compiled
    """:func:`adaptive_numeric` with :func:`.mechanisms.laplace_unit_one` (the preview's common random numbers),
    bit for bit (tests/core/test_adaptive_unit.py), written without branches: whether an event is sampled is
    a coin flip the processor cannot predict, and its mispredictions were a third of the loop (issue 15:
    ≈ 15 → 10 ms at 10^6 events). Every event's draw is computed and kept only where it is released (the
    unit noise has no side effect; ε_t = 0 gives an unused ±inf or NaN, numpy's error model)."""
    if pos > pos_limit:  # (the unit draws never move ``pos``)
        return start, pos
    rate, has_last, last, n_s, left = _load_numeric(state)
    # (The statements' form matters: LLVM turns these into selects only as written here; a nested
    # conditional expression for the rate, for one, compiled to branches again and ran twice as long.)
    t = start
    while t < stop:
        lmk = is_lm[t]
        sample = (not has_last) or u[t] < rate
        left -= lmk
        e = base if lmk else eps_a - (n_s + left) * base
        n_s += sample and lmk
        fresh = sample and e > 0.0
        scale = sens / e
        o = x[t] + lap[t] * scale
        moved = abs(o - last) > scale
        up = rate + inc
        up = 1.0 if up > 1.0 else up
        down = rate - dec
        down = rmin if down < rmin else down
        adapted = up if moved else down
        rate = adapted if (fresh and has_last) else rate
        last = o if fresh else last
        has_last = has_last or fresh
        out_v[t] = last
        out_fresh[t] = fresh
        out_eps[t] = e if fresh else 0.0
        t += 1
    _save_numeric(state, rate, has_last, last, n_s, left)
    return stop, pos


KERNELS = {
    "numeric": adaptive_numeric,
    "location": adaptive_location,
    "categorical": adaptive_categorical,
}


# ----------------------------------------------------------- old engine/pipeline.py wrappers
@numba.njit(cache=False, nogil=True)
def _sec_laplace(x, scale, sens, t, aux, pos):  # pragma: no cover - compiled
    # aux = (words, public grid exponent): every event of the release on the same grid (finding 3)
    return securenoise.secure_laplace_grid_one(x, scale, sens, aux[1], aux[0], pos)


@numba.njit(cache=False, nogil=True)
def _sec_planar(lat, lon, scale_m, t, words, pos):  # pragma: no cover - compiled
    return securenoise.secure_planar_one(lat, lon, scale_m, words, pos)


@numba.njit(cache=False, nogil=True)
def _sec_rr(code, eps, k, t, words, pos):  # pragma: no cover - compiled
    return securenoise.secure_rr_one(code, eps, k, words, pos)


# ------------------------------------------------------------------------------- cached Adaptive kernels
# The Adaptive loops of :mod:`.adaptive` take the noise function as an argument, which numba's disk cache
# cannot key (every process compiled them: 1.0–1.3 s of every cold start). Each wrapper below passes one
# fixed function and has no function-typed argument, so it is cached on disk; the loop is still the one in
# adaptive.py, compiled into the wrapper, so the draws are the same bit for bit. (The numeric preview's is
# adaptive_numeric_unit itself, its branch-free copy: called through a wrapper it lost its selects
# and ran at twice its time.) The export's wrappers are
# not cached: the exact samplers use globals numba cannot cache ("dynamic globals"); an export compiles
# them once, as before, and the cold start needs only the preview's.
@numba.njit(cache=False, nogil=True)  # see below
def _export_numeric(x, is_lm, u, eps_a, base, inc, dec, rmin, param, aux, pos, start, stop, pos_limit, state,
        out_v, out_eps, out_fresh):  # pragma: no cover - compiled
    return adaptive_numeric(_sec_laplace, x, is_lm, u, eps_a, base, inc, dec, rmin, param, aux, pos,
        start, stop, pos_limit, state, out_v, out_eps, out_fresh)


@numba.njit(cache=False, nogil=True)
def _preview_location(x, is_lm, u, eps_a, base, inc, dec, rmin, param, aux, pos, start, stop, pos_limit, state,
        out_v, out_eps, out_fresh):  # pragma: no cover - compiled
    return adaptive_location(mechanisms.planar_unit_one, x, is_lm, u, eps_a, base, inc, dec, rmin, param, aux, pos,
        start, stop, pos_limit, state, out_v, out_eps, out_fresh)


@numba.njit(cache=False, nogil=True)  # see below
def _export_location(x, is_lm, u, eps_a, base, inc, dec, rmin, param, aux, pos, start, stop, pos_limit, state,
        out_v, out_eps, out_fresh):  # pragma: no cover - compiled
    return adaptive_location(_sec_planar, x, is_lm, u, eps_a, base, inc, dec, rmin, param, aux, pos,
        start, stop, pos_limit, state, out_v, out_eps, out_fresh)


@numba.njit(cache=False, nogil=True)
def _preview_categorical(x, is_lm, u, eps_a, base, inc, dec, rmin, param, aux, pos, start, stop, pos_limit, state,
        out_v, out_eps, out_fresh):  # pragma: no cover - compiled
    return adaptive_categorical(mechanisms.rr_unit_one, x, is_lm, u, eps_a, base, inc, dec, rmin, param, aux, pos,
        start, stop, pos_limit, state, out_v, out_eps, out_fresh)


@numba.njit(cache=False, nogil=True)  # see below
def _export_categorical(x, is_lm, u, eps_a, base, inc, dec, rmin, param, aux, pos, start, stop, pos_limit, state,
        out_v, out_eps, out_fresh):  # pragma: no cover - compiled
    return adaptive_categorical(_sec_rr, x, is_lm, u, eps_a, base, inc, dec, rmin, param, aux, pos,
        start, stop, pos_limit, state, out_v, out_eps, out_fresh)



PREVIEW = {"numeric": adaptive_numeric_unit, "location": _preview_location, "categorical": _preview_categorical}
EXPORT = {"numeric": _export_numeric, "location": _export_location, "categorical": _export_categorical}
