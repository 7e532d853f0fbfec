"""The numeric preview's branch-free Adaptive loop (issue 15: it draws every event and keeps the draws that are
released) makes the decisions and draws of the same loop drawing only fresh events, as the export's does,
with the unit-noise function, bit for bit: values, budgets, flags and the resumable state."""

from __future__ import annotations

import numpy as np
import pytest

from lmdk_gui.core.kernel import adaptive, mechanisms


def _run(kernel, args, n, chunks=(0,)):
    x, is_lm, u, eps_a, base, inc, dec, rmin, sens, lap, state = args
    state = state.copy()
    out_v, out_eps, out_fresh = np.full(n, -7.0), np.full(n, -7.0), np.zeros(n, np.bool_)
    bounds = [*chunks, n]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        t, pos = kernel(x, is_lm, u, eps_a, base, inc, dec, rmin, sens, lap, 0, a, b, 1 << 62, state,
                        out_v, out_eps, out_fresh)
        assert (t, pos) == (b, 0)
    return out_v, out_eps, out_fresh, state


#: the one loop of adaptive.py with the numeric hooks and unit noise, drawing only where an event is fresh
_generic = adaptive._make_loop("test_numeric_fresh_only", adaptive._HOOKS["numeric"], mechanisms.laplace_unit_one,
                               always=False, cache=False)


@pytest.mark.parametrize("seed", range(12))
def test_branch_free_loop_equals_the_generic_one(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    share = [0.0, 0.01, 0.2, 0.7, 1.0][seed % 5]
    is_lm = rng.random(n) < share
    m = int(is_lm.sum())
    eps_a = float(rng.uniform(0.1, 5.0))
    # seeds ≥ 8: a base so large that regular events get ε_t ≤ 0 once few landmarks were sampled
    base = eps_a / (m + 1) if seed < 8 else eps_a / max(m, 1) * 1.5
    inc, dec, rmin = (float(v) for v in rng.uniform(0.01, 0.5, 3))
    state = adaptive.new_state(m)
    if seed % 3 == 2:  # resumed: a rate and a last release
        state[:] = [0.4, 1.0, float(rng.normal()), 0.0, 0.0, float(m)]
    x = rng.normal(0, float(rng.uniform(0.1, 10)), n)
    args = (x, is_lm, rng.random(n), eps_a, base, inc, dec, rmin, float(rng.uniform(0.1, 3)), rng.laplace(size=n), state)
    want = _run(_generic, args, n)
    got = _run(adaptive.preview_numeric, args, n)
    chunked = _run(adaptive.preview_numeric, args, n, chunks=(0, n // 3, n // 2))
    for w, g, c in zip(want, got, chunked, strict=True):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(c, w)
    assert want[2].any()  # something was released


def test_stops_before_the_first_event_past_the_word_limit():
    n = 5
    state = adaptive.new_state(0)
    out = np.zeros(n), np.zeros(n), np.zeros(n, np.bool_)
    t, pos = adaptive.preview_numeric(np.zeros(n), np.zeros(n, np.bool_), np.zeros(n), 1.0, 0.5, 0.1, 0.1,
                                            0.1, 1.0, np.zeros(n), 3, 0, n, 2, state, *out)
    assert (t, pos) == (0, 3)
