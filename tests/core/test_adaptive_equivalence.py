"""The product's Adaptive loop against the loops it replaced (issue 43), bit for bit.

``adaptive_reference`` is a frozen copy of the four pre-issue-43 loops and their cached wrappers. For every
kind, on the preview path (unit noise) and on the export path (secure samplers through a
:class:`~lmdk_gui.core.kernel.securenoise.WordBuffer`, refilled mid-chunk as the export does), on random n,
landmark sets, budgets, adaptation parameters, resumed states and chunkings, the kernels the runners call
(``KINDS[kind].preview_kernel`` / ``export_kernel``) must give the reference's values, budgets, flags, final
state and word positions exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from lmdk_gui.core.engine.pipeline import KINDS
from lmdk_gui.core.kernel import adaptive, securenoise
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import PrivacySettings

from . import adaptive_reference as ref

SEEDS = range(16)


def _case(kind: str, seed: int):
    """Random inputs of one kernel call: (x, is_lm, u, eps_a, base, inc, dec, rmin, param, state, settings)."""
    rng = np.random.default_rng(1000 * seed + len(kind))
    n = int(rng.integers(1, 2500))
    share = [0.0, 0.01, 0.2, 0.7, 1.0][seed % 5]
    is_lm = rng.random(n) < share
    m = int(is_lm.sum())
    eps_a = float(rng.uniform(0.05, 5.0))
    # seeds ≥ 12: a base so large that regular events get ε_t ≤ 0 once few landmarks were sampled
    base = eps_a / (m + 1) if seed < 12 else eps_a / max(m, 1) * 1.5
    inc, dec, rmin = (float(v) for v in rng.uniform(0.01, 0.5, 3))
    state = adaptive.new_state(m)
    if kind == "numeric":
        x = rng.normal(0, float(rng.uniform(0.1, 10)), n)
        param = float(rng.uniform(0.1, 3))
        settings = PrivacySettings(epsilon=eps_a * 1.01, sensitivity=param)
    elif kind == "location":
        x = np.column_stack([45 + rng.random(n) * 0.01, 7 + rng.random(n) * 0.01])
        param = float(rng.uniform(10, 500))
        settings = PrivacySettings(epsilon=eps_a * 1.01, radius_m=param)
    else:
        k = int(rng.integers(1, 6))
        x = rng.integers(0, k, n).astype(np.int64)
        param = k
        settings = PrivacySettings(epsilon=eps_a * 1.01)
    if seed % 3 == 2:  # resumed: a rate and a last release
        last = x[0] if kind != "location" else x[0, 0]
        state[:] = [0.4, 1.0, float(last), float(x[0, 1]) if kind == "location" else 0.0, 0.0, float(m)]
    u = rng.random(n)
    return x, is_lm, u, eps_a, base, inc, dec, rmin, param, state, settings


def _chunks(n: int, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    cuts = sorted({0, *(int(c) for c in rng.integers(0, n, seed % 4)), n})
    return cuts


def _preview(kernel, kind, case, seed):
    x, is_lm, u, eps_a, base, inc, dec, rmin, param, state, _ = case
    n = is_lm.shape[0]
    aux = KINDS[kind].unit_aux(UnitNoise(n, seed))
    state = state.copy()
    out_v, out_eps, out_fresh = np.full_like(x, -7), np.full(n, -7.0), np.zeros(n, np.bool_)
    cuts = _chunks(n, seed)
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):  # as run_adaptive_preview: chunk views, positions local
        t, pos = kernel(x[a:b], is_lm[a:b], u[a:b], eps_a, base, inc, dec, rmin, param, aux[a:b], 0, 0, b - a,
                        1 << 62, state, out_v[a:b], out_eps[a:b], out_fresh[a:b])
        assert (t, pos) == (b - a, 0)
    return out_v, out_eps, out_fresh, state


def _export(kernel, kind, case, seed):
    x, is_lm, u, eps_a, base, inc, dec, rmin, param, state, settings = case
    n = is_lm.shape[0]
    wb = securenoise.WordBuffer(securenoise.WordSource.from_seed(seed), 2 * securenoise.RESERVE_WORDS)
    aux = KINDS[kind].kernel_aux(wb.words, settings)
    state = state.copy()
    out_v, out_eps, out_fresh = np.full_like(x, -7), np.full(n, -7.0), np.zeros(n, np.bool_)
    trace = []  # every (t, pos) a call returned: where it stopped for a refill, and the words it used
    cuts = _chunks(n, seed)
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):  # as ExportRunner._adaptive_chunk
        t = a
        while t < b:
            wb.ensure()
            t, pos = kernel(x, is_lm, u, eps_a, base, inc, dec, rmin, param, aux, wb.pos, t, b, wb.limit, state,
                            out_v, out_eps, out_fresh)
            trace.append((t, pos))
            if pos < 0:
                return out_v, out_eps, out_fresh, state, trace
            wb.check(pos, t)
    return out_v, out_eps, out_fresh, state, trace


def _same(want, got):
    for w, g in zip(want, got, strict=True):
        if isinstance(w, np.ndarray):
            assert w.dtype == g.dtype
            np.testing.assert_array_equal(g, w)
        else:
            assert g == w


@pytest.mark.parametrize("kind", ["numeric", "location", "categorical"])
@pytest.mark.parametrize("seed", SEEDS)
def test_preview_loop_equals_the_old_one(kind, seed):
    case = _case(kind, seed)
    want = _preview(ref.PREVIEW[kind], kind, case, seed)
    _same(want, _preview(KINDS[kind].preview_kernel, kind, case, seed))
    assert want[2].any() or not case[1].size  # something was released


@pytest.mark.parametrize("kind", ["numeric", "location", "categorical"])
@pytest.mark.parametrize("seed", SEEDS)
def test_export_loop_equals_the_old_one(kind, seed):
    case = _case(kind, seed)
    want = _export(ref.EXPORT[kind], kind, case, seed)
    _same(want, _export(KINDS[kind].export_kernel, kind, case, seed))
    if kind != "categorical" and case[1].shape[0] > 1500 and seed < 12:
        assert len(want[4]) > len(_chunks(case[1].shape[0], seed)) - 1  # a refill stopped a chunk midway


@pytest.mark.parametrize("kind", ["numeric", "categorical"])
def test_export_stops_at_the_same_invalid_event(kind):
    """A sampler's -2 (bad input) stops both loops at the same event with the same state."""
    case = list(_case(kind, 3))
    x = case[0].copy()
    bad = x.shape[0] // 2
    x[bad:] = np.nan if kind == "numeric" else case[8] + 3  # non-finite value / a code outside [0, k)
    case[0] = x
    case[2] = np.zeros_like(case[2])  # every event sampled, so the bad one is drawn
    want = _export(ref.EXPORT[kind], kind, tuple(case), 3)
    assert want[4][-1] == (bad, -2)
    _same(want, _export(KINDS[kind].export_kernel, kind, tuple(case), 3))
