"""Issue 15: the preview's reuse across edits (a memo per series and seed: releases reused when no budget
changed, patched where few did, their error sums patched likewise) gives, bit for bit, what a full
recompute of the same state gives, after any sequence of clicks, range edits, clears, ε, bounds, public
categories, radius, sensitivity, seed and dummy changes, for every kind and scheme."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_gui.core.analysis import metrics
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine import pipeline
from lmdk_gui.core.engine.preview import (
    DenoiseMemo,
    NoiseCache,
    OptionsCache,
    SchemePreview,
    Snapshot,
    compute_preview,
    denoise_preview,
)
from lmdk_gui.core.kernel.dummies import DummySettings
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, PrivacySettings

from .kinds import KINDS, example_series

N = 60


def _series(kind: str, n: int) -> Series:
    return example_series(kind, n, seed=5)


SERIES = {k: _series(k, N) for k in KINDS}
LONG = {k: _series(k, 2000) for k in KINDS}  # long enough for a click to be patched (a span ≤ n/16)


@pytest.fixture(autouse=True, scope="module")
def small_error_blocks():
    """Error sums in blocks of 64 events here, so that patched spans start, end and lie inside blocks of these
    short series (the app's 4096 would make every series here one block)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(metrics, "ERROR_BLOCK", 64)
        yield


def _edits(n: int):
    return st.one_of(
        st.tuples(st.just("toggle"), st.integers(0, n - 1)),
        st.tuples(st.just("toggle"), st.integers(0, n - 1)),
        st.tuples(st.just("range"), st.integers(0, n - 1)),
        st.tuples(st.just("unrange"), st.integers(0, n - 1)),
        st.tuples(st.just("clear"), st.just(0)),
        st.tuples(st.just("eps"), st.sampled_from([0.3, 1.0, 2.5])),
        st.tuples(st.just("public"), st.booleans()),  # bounds / public categories / radius / Δ
        st.tuples(st.just("dummies"), st.booleans()),
        st.tuples(st.just("seed"), st.integers(1, 3)),
    )


def _apply(kind: str, n: int, state: dict, op: str, arg) -> None:
    lm, ps = state["lm"], state["ps"]
    if op == "toggle":
        state["lm"] = np.setxor1d(lm, [arg]).astype(np.int64)
    elif op == "range":
        state["lm"] = np.union1d(lm, np.arange(arg, min(n, arg + 7))).astype(np.int64)
    elif op == "unrange":
        state["lm"] = np.setdiff1d(lm, np.arange(arg, min(n, arg + 5))).astype(np.int64)
    elif op == "clear":
        state["lm"] = np.zeros(0, dtype=np.int64)
    elif op == "eps":
        state["ps"] = ps.with_(epsilon=arg)
    elif op == "public":
        if kind == "numeric":  # bounds clamp x and give a public fallback; Δ scales the noise
            state["ps"] = ps.with_(bounds=(2.0, 8.0) if arg else None, sensitivity=2.0 if arg else 1.0)
        elif kind == "categorical":  # a public list: another category space and a fallback
            state["ps"] = ps.with_(categories=("a", "b", "c", "d") if arg else None)
        else:
            state["ps"] = ps.with_(radius_m=250.0 if arg else 100.0)
    elif op == "dummies":
        state["dummies"] = DummySettings() if arg else None
    elif op == "seed":
        state["seed"] = arg
    state["lm"].setflags(write=False)  # as the session's sets are (Skip's budgets are then shared, skip_span)


def _same(a: SchemePreview, b: SchemePreview) -> None:
    ra, rb = a.release, b.release
    for name in ("values", "budgets", "approximated", "landmarks"):
        x, y = getattr(ra, name), getattr(rb, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name
    assert ra.guarantee == rb.guarantee
    assert ra.categories == rb.categories and ra.epsilon == rb.epsilon
    assert (a.mae == b.mae) or (np.isnan(a.mae) and np.isnan(b.mae))
    assert a.relative == b.relative or (a.relative is not None and np.isnan(a.relative) and np.isnan(b.relative))


def _run(kind: str, series: Series, steps) -> None:
    cache, opts = NoiseCache(), OptionsCache()
    state = {"lm": np.zeros(0, dtype=np.int64), "ps": PrivacySettings(denoise=False), "seed": 1, "dummies": None}
    for op, arg in steps:
        _apply(kind, series.n, state, op, arg)
        snap = Snapshot(series, state["lm"], state["ps"], state["seed"], dummies=state["dummies"])
        inc = compute_preview(snap, cache, opts)
        full = compute_preview(snap, NoiseCache(), OptionsCache())
        assert inc is not None and full is not None
        assert inc.dummy_error == full.dummy_error
        for s in ALL_SCHEMES:
            _same(inc.preview[s], full.preview[s])
            _same(inc.plain[s], full.plain[s])


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(KINDS), steps=st.lists(_edits(N), min_size=1, max_size=8))
def test_incremental_preview_equals_full_recompute(kind, steps):
    _run(kind, SERIES[kind], steps)


@settings(max_examples=12, deadline=None)
@given(kind=st.sampled_from(KINDS), steps=st.lists(_edits(2000), min_size=1, max_size=12))
def test_incremental_preview_equals_full_recompute_on_a_long_series(kind, steps):
    _run(kind, LONG[kind], steps)


@pytest.mark.parametrize("kind", KINDS)
def test_clicks_are_patched_and_still_equal_a_full_recompute(kind, monkeypatch):
    """The equivalence above must cover the patching itself: count that clicks (at the start, before the first
    fresh event, inside and at the end of runs of landmarks, next to each other) were patched, not recomputed."""
    patched, errors = [], []
    real_patch, real_sums = pipeline._patched, metrics.error_sums

    def spy_patch(p, noise, prev):
        out = real_patch(p, noise, prev)
        patched.append(out is not None and out[1] is not prev.values)
        return out

    def spy_sums(series, release, settings=None, blocks=None):
        errors.append(blocks is not None)
        return real_sums(series, release, settings, blocks)

    spans: list[bool] = []
    real_span = pipeline.skip_span

    def spy_span(*args):
        out = real_span(*args)
        spans.append(out is not None)
        return out

    monkeypatch.setattr(pipeline, "_patched", spy_patch)
    monkeypatch.setattr(metrics, "error_sums", spy_sums)
    monkeypatch.setattr(pipeline, "skip_span", spy_span)
    series = LONG[kind]
    rows = [0, 1, 2, 0, 1999, 1998, 500, 501, 502, 501, 2, 700, 1999, 0, 3]
    steps = [("range", 495), ("range", 1990)] + [("toggle", r) for r in rows] + \
        [("public", True), ("toggle", 600), ("toggle", 601), ("seed", 2), ("toggle", 602), ("clear", 0),
         ("toggle", 5)]
    _run(kind, series, steps)
    assert sum(patched) >= 10 and sum(errors) >= 10, (sum(patched), sum(errors))
    assert sum(spans) >= 10, spans  # Skip's spans came from its landmark sets


@settings(max_examples=200, deadline=None)
@given(a=st.sets(st.integers(0, 40)), b=st.sets(st.integers(0, 40)))
def test_the_span_of_two_landmark_sets_bounds_every_row_in_only_one(a, b):
    """Skip's patch span from the two landmark sets (release._sets_span): every row in exactly one set lies
    within it, and its ends are such rows; (−1, −1) for the same set."""
    from lmdk_gui.core.engine.release import _sets_span

    x, y = np.array(sorted(a), dtype=np.int64), np.array(sorted(b), dtype=np.int64)
    lo, hi = _sets_span(x, y)
    only = sorted(a ^ b)
    assert (lo, hi) == ((only[0], only[-1]) if only else (-1, -1))


def test_skip_span_only_for_budgets_made_for_those_sets():
    """An allocation of the caller's own (an audit's) is compared value by value: skip_span answers only for
    the arrays fixed_budgets shared for those very landmark sets and ε_a."""
    from lmdk_gui.core.engine.release import fixed_budgets, normalize_landmarks, skip_span

    lm1, lm2 = np.array([3, 9, 30]), np.array([3, 30])
    for lm in (lm1, lm2):
        lm.setflags(write=False)
    lm1, lm2 = normalize_landmarks(lm1, 100), normalize_landmarks(lm2, 100)
    b1, b2 = fixed_budgets("skip", 100, lm1, 1.0), fixed_budgets("skip", 100, lm2, 1.0)
    assert skip_span(b1, lm1, b2, lm2, 1.0) == (9, 9) == pipeline.budget_span(b1, b2)
    assert skip_span(b1, lm1, b1, lm1, 1.0) == (-1, -1)
    assert skip_span(b1.copy(), lm1, b2, lm2, 1.0) is None  # not the shared array
    assert skip_span(b1, lm2, b2, lm2, 1.0) is None  # not its landmark set
    assert skip_span(b1, lm1, b2, lm2, 0.5) is None  # another ε_a


def test_the_memo_keeps_error_sums_per_block_not_per_event():
    """Between clicks a fixed scheme's memo holds its errors' block sums (2 KB at 10^6 events, where per-event
    errors were 8 MB, and 80 MB at 10^7), and the MAE patched from them is a fresh recompute's, click after
    click."""
    steps = [("range", 495)] + [("toggle", r) for r in (500, 501, 700, 3, 1999)]
    series = LONG["numeric"]
    cache = NoiseCache()
    state = {"lm": np.zeros(0, dtype=np.int64), "ps": PrivacySettings(denoise=False), "seed": 1, "dummies": None}
    for op, arg in steps:
        _apply("numeric", series.n, state, op, arg)
        out = compute_preview(Snapshot(series, state["lm"], state["ps"], 1), cache)
        assert out is not None
        fresh = compute_preview(Snapshot(series, state["lm"], state["ps"], 1), NoiseCache())
        assert fresh is not None and out.preview["skip"].mae == fresh.preview["skip"].mae
        sums = cache.memo(series, 1)[("error_sums", "skip")]
        assert sums.shape == (-(-series.n // metrics.ERROR_BLOCK),)


def _same_denoised(a: SchemePreview, b: SchemePreview) -> None:
    assert (a.denoised is None) == (b.denoised is None)
    if a.denoised is not None and b.denoised is not None:
        x, y = a.denoised.values, b.denoised.values
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind == "f")
        assert a.denoised.params == b.denoised.params
    assert a.mae_denoised == b.mae_denoised or (np.isnan(a.mae_denoised) and np.isnan(b.mae_denoised))
    assert a.relative_denoised == b.relative_denoised


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(KINDS), steps=st.lists(_edits(N), min_size=1, max_size=8))
def test_memoised_denoise_stage_equals_a_fresh_one(kind, steps):
    """The session's path (raw preview, then the denoise stage with its own memo) gives, bit for bit, what
    the one-shot ``compute_preview`` of the same state gives, after any sequence of edits."""
    series = SERIES[kind]
    cache, opts, memo = NoiseCache(), OptionsCache(), DenoiseMemo()
    state = {"lm": np.zeros(0, dtype=np.int64), "ps": PrivacySettings(), "seed": 1, "dummies": None}
    for op, arg in [("toggle", 0), *steps]:
        _apply(kind, series.n, state, op, arg)
        snap = Snapshot(series, state["lm"], state["ps"], state["seed"], dummies=state["dummies"])
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


def test_a_cancelled_denoise_stage_forgets_what_it_made(monkeypatch):
    """A click cancels the stage: the denoised values it made for the old state (a click changes those
    releases) are let go when it stops, not kept until the next stage starts; reused entries stay."""
    from lmdk_gui.core.engine import preview as preview_mod

    series = SERIES["numeric"]
    cache, memo = NoiseCache(), DenoiseMemo()
    first = Snapshot(series, np.array([3, 9]), PrivacySettings(), 1)
    second = Snapshot(series, np.array([3, 9, 30]), PrivacySettings(), 1)
    assert denoise_preview(first, compute_preview(first, cache, denoise=False), memo=memo) is not None
    raw = compute_preview(second, cache, denoise=False)
    assert raw is not None
    made: list[int] = []
    real = preview_mod.denoised_values
    monkeypatch.setattr(preview_mod, "denoised_values", lambda *a: (made.append(1), real(*a))[1])
    assert denoise_preview(second, raw, memo=memo, should_cancel=lambda: len(made) >= 2) is None
    assert len(made) == 2  # Uniform's and Skip's were made, then the click came
    assert set(memo._items) == {("plain", "event"), ("plain", "user")}  # unchanged releases: still reusable
    again = denoise_preview(second, raw, memo=memo)
    assert again is not None and len(made) == 2 + 4
    assert again.preview["event"].denoised is not None


#: edits that reach every reuse path: a range, clicks at both ends and inside, ε, dummies, public settings,
#: another seed, a clear
STEPS = [("range", 495), ("toggle", 3), ("toggle", 1999), ("eps", 2.5), ("dummies", True), ("toggle", 700),
         ("public", True), ("toggle", 701), ("seed", 2), ("clear", 0), ("toggle", 5)]


def _previews_after(kind: str, steps, interpret: bool = False) -> list:
    """The raw previews of the long series after each step, incremental (one cache for the sequence)."""
    series = LONG[kind]
    cache, opts = NoiseCache(), OptionsCache()
    state = {"lm": np.zeros(0, dtype=np.int64), "ps": PrivacySettings(denoise=False), "seed": 1, "dummies": None}
    out = []
    for op, arg in steps:
        _apply(kind, series.n, state, op, arg)
        out.append(compute_preview(Snapshot(series, state["lm"], state["ps"], state["seed"],
                                            dummies=state["dummies"]), cache, opts, interpret=interpret))
    return out


def _same_runs(first: list, second: list) -> None:
    for a, b in zip(first, second, strict=True):
        assert a is not None and b is not None and a.dummy_error == b.dummy_error
        for s in ALL_SCHEMES:
            _same(a.preview[s], b.preview[s])
            _same(a.plain[s], b.plain[s])


@pytest.mark.parametrize("kind", KINDS)
def test_the_side_thread_gives_the_same_previews(kind, monkeypatch):
    """Large series run the data-dependent schemes on a second thread (preview.PARALLEL_MIN): the same
    function on the same inputs, so the previews, incremental or not, equal the one-thread ones bit for bit."""
    import threading

    from lmdk_gui.core.engine import preview

    threads: set[str] = set()
    real = preview._scheme_preview

    def spy(series, p, *args):
        threads.add(f"{p.scheme}@{threading.current_thread().name}")
        return real(series, p, *args)

    monkeypatch.setattr(preview, "_scheme_preview", spy)
    runs = {}
    for parallel_min in (0, 10**12):
        monkeypatch.setattr(preview, "PARALLEL_MIN", parallel_min)
        runs[parallel_min] = _previews_after(kind, STEPS)
    _same_runs(runs[0], runs[10**12])
    assert any(t.startswith("adaptive@lmdk-preview-side") for t in threads), threads
    assert not any(t.startswith("uniform@lmdk-preview-side") for t in threads), threads


@pytest.mark.parametrize("kind", KINDS)
def test_interpreted_kernels_give_the_same_previews(kind, monkeypatch):
    """Asked to (a small series' opening preview: core/engine/lazyjit.py, preview.INTERPRET_MAX), the raw
    previews are computed by the kernels run as the Python functions they are: with and without dummies,
    incremental, they equal the compiled kernels' bit for bit. Whether numba has been imported changes
    nothing: the call decides, not the process' history."""
    from lmdk_gui.core.engine import lazyjit, preview

    assert LONG[kind].n <= preview.INTERPRET_MAX
    lazyjit.real_numba()
    interpreted = []
    real = lazyjit._interpret
    monkeypatch.setattr(lazyjit, "_interpret", lambda: interpreted.append(real()) or interpreted[-1])
    runs = {}
    for mode, numba_before in (("compiled", None), ("interpreted", True), ("interpreted-early", False)):
        if numba_before is False:
            monkeypatch.setattr(lazyjit, "_numba", None)  # as in a process that has not imported numba yet
        runs[mode] = _previews_after(kind, STEPS, interpret=mode != "compiled")
        assert interpreted and (all(interpreted) if mode != "compiled" else not any(interpreted))
        interpreted.clear()
    monkeypatch.setattr(lazyjit, "_numba", None)
    _previews_after(kind, STEPS[:2])  # not asked: compiled even before numba is imported
    assert interpreted and not any(interpreted)
    _same_runs(runs["compiled"], runs["interpreted"])
    _same_runs(runs["compiled"], runs["interpreted-early"])
