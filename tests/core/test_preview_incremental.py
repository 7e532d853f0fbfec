"""Issue 15: the preview's reuse across edits (a memo per series and seed) gives, bit for bit, what a full
recompute of the same state gives, after any sequence of clicks, range edits, ε, bounds and dummy changes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_gui.core.dummies import DummySettings
from lmdk_gui.core.preview import NoiseCache, OptionsCache, SchemePreview, Snapshot, compute_preview
from lmdk_gui.core.series import Series
from lmdk_gui.core.settings import ALL_SCHEMES, PrivacySettings

N = 60


def _series(kind: str) -> Series:
    rng = np.random.default_rng(5)
    if kind == "numeric":
        return Series.from_arrays(np.round(rng.random(N) * 10, 3))
    if kind == "location":
        return Series.from_arrays(np.column_stack([45 + rng.random(N) * 0.01, 7 + rng.random(N) * 0.01]),
                                  kind="location")
    return Series.from_arrays(rng.integers(0, 3, N), kind="categorical", categories=("a", "b", "c"))


SERIES = {k: _series(k) for k in ("numeric", "location", "categorical")}

edits = st.one_of(
    st.tuples(st.just("toggle"), st.integers(0, N - 1)),
    st.tuples(st.just("range"), st.integers(0, N - 1)),
    st.tuples(st.just("eps"), st.sampled_from([0.3, 1.0, 2.5])),
    st.tuples(st.just("bounds"), st.booleans()),
    st.tuples(st.just("dummies"), st.booleans()),
    st.tuples(st.just("seed"), st.integers(1, 3)),
)


def _same(a: SchemePreview, b: SchemePreview) -> None:
    ra, rb = a.release, b.release
    for name in ("values", "budgets", "approximated", "landmarks"):
        x, y = getattr(ra, name), getattr(rb, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name
    assert ra.guarantee == rb.guarantee
    assert (a.mae == b.mae) or (np.isnan(a.mae) and np.isnan(b.mae))
    assert a.relative == b.relative or (a.relative is not None and np.isnan(a.relative) and np.isnan(b.relative))


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(sorted(SERIES)), steps=st.lists(edits, min_size=1, max_size=8))
def test_incremental_preview_equals_full_recompute(kind, steps):
    series = SERIES[kind]
    cache, opts = NoiseCache(), OptionsCache()
    lm = np.zeros(0, dtype=np.int64)
    ps = PrivacySettings()
    seed, dummies = 1, None
    for op, arg in steps:
        if op == "toggle":
            lm = np.setxor1d(lm, [arg]).astype(np.int64)
        elif op == "range":
            lm = np.union1d(lm, np.arange(arg, min(N, arg + 7))).astype(np.int64)
        elif op == "eps":
            ps = ps.with_(epsilon=arg)
        elif op == "bounds" and kind == "numeric":
            ps = ps.with_(bounds=(2.0, 8.0) if arg else None)  # clamps: changes x, not budgets
        elif op == "dummies":
            dummies = DummySettings() if arg else None
        elif op == "seed":
            seed = arg
        snap = Snapshot(series, lm, ps, seed, dummies=dummies)
        inc = compute_preview(snap, cache, opts)
        full = compute_preview(snap, NoiseCache(), OptionsCache())
        assert inc is not None and full is not None
        assert inc.dummy_error == full.dummy_error
        for s in ALL_SCHEMES:
            _same(inc.preview[s], full.preview[s])
            _same(inc.plain[s], full.plain[s])
