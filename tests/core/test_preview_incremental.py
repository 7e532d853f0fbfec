"""Issue 15: the preview's reuse across edits (a memo per series and seed) gives, bit for bit, what a full
recompute of the same state gives, after any sequence of clicks, range edits, ε, bounds and dummy changes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_gui.core.dummies import DummySettings
from lmdk_gui.core.preview import (
    DenoiseMemo,
    NoiseCache,
    OptionsCache,
    SchemePreview,
    Snapshot,
    compute_preview,
    denoise_preview,
)
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


def _same_denoised(a: SchemePreview, b: SchemePreview) -> None:
    assert (a.denoised is None) == (b.denoised is None)
    if a.denoised is not None and b.denoised is not None:
        x, y = a.denoised.values, b.denoised.values
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind == "f")
        assert a.denoised.params == b.denoised.params
    assert a.mae_denoised == b.mae_denoised or (np.isnan(a.mae_denoised) and np.isnan(b.mae_denoised))
    assert a.relative_denoised == b.relative_denoised


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(sorted(SERIES)), steps=st.lists(edits, min_size=1, max_size=8))
def test_memoised_denoise_stage_equals_a_fresh_one(kind, steps):
    """The session's path (raw preview, then the denoise stage with its own memo) gives, bit for bit, what
    the one-shot ``compute_preview`` of the same state gives, after any sequence of edits."""
    series = SERIES[kind]
    cache, opts, memo = NoiseCache(), OptionsCache(), DenoiseMemo()
    lm = np.zeros(0, dtype=np.int64)
    ps = PrivacySettings()
    seed, dummies = 1, None
    for op, arg in [("toggle", 0), *steps]:
        if op in ("toggle", "range"):
            lm = (np.setxor1d(lm, [arg]) if op == "toggle" else np.union1d(lm, np.arange(arg, min(N, arg + 7))))
            lm = lm.astype(np.int64)
        elif op == "eps":
            ps = ps.with_(epsilon=arg)
        elif op == "bounds" and kind == "numeric":
            ps = ps.with_(bounds=(2.0, 8.0) if arg else None)
        elif op == "dummies":
            dummies = DummySettings() if arg else None
        elif op == "seed":
            seed = arg
        snap = Snapshot(series, lm, ps, seed, dummies=dummies)
        raw = compute_preview(snap, cache, opts, denoise=False)
        assert raw is not None and all(p.denoised is None for p in raw.preview.values())
        inc = denoise_preview(snap, raw, memo=memo)
        full = compute_preview(snap, NoiseCache(), OptionsCache())
        assert inc is not None and full is not None
        assert (inc.preview is inc.plain) == (full.preview is full.plain)
        for s in ALL_SCHEMES:
            _same(inc.preview[s], full.preview[s])
            _same_denoised(inc.preview[s], full.preview[s])
            _same_denoised(inc.plain[s], full.plain[s])


def test_a_click_reuses_the_denoised_values_of_an_unchanged_release():
    """Event's release does not change on a click (same arrays from the preview memo): its denoised values
    are the same object; Skip's change and are denoised anew."""
    series = SERIES["numeric"]
    cache, memo = NoiseCache(), DenoiseMemo()
    first = Snapshot(series, np.array([3, 9]), PrivacySettings(), 1)
    second = Snapshot(series, np.array([3, 9, 30]), PrivacySettings(), 1)
    a = denoise_preview(first, compute_preview(first, cache, denoise=False), memo=memo)
    b = denoise_preview(second, compute_preview(second, cache, denoise=False), memo=memo)
    assert a is not None and b is not None
    assert b.preview["event"].denoised is a.preview["event"].denoised
    assert b.preview["skip"].denoised is not a.preview["skip"].denoised
    off = Snapshot(series, second.landmarks, PrivacySettings(denoise=False), 1)
    raw = compute_preview(off, cache, denoise=False)
    assert raw is not None and denoise_preview(off, raw, memo=memo) is raw  # Denoise off: nothing to do
