"""Issue 15's memory target: a landmark click's preview allocates few series-sized arrays. Measured with
tracemalloc (numpy reports its arrays to it; each is allocated the same way every time, so the figure is
deterministic up to the side thread's timing): what a click allocates besides the previous preview, the
noise and the memo, which the window keeps. Equal budgets as one float (release.constant_budgets), no memo
entry for Adaptive and one kind input for every scheme took it from ≈ 8.5 to ≈ 5.4 times the values' bytes
(with public bounds, whose clamped copy each plan made, from ≈ 14.3 to ≈ 6.3)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from lmdk_gui.core.analysis import metrics
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine.pipeline import compute_release
from lmdk_gui.core.engine.preview import NoiseCache, Snapshot, compute_preview
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, PrivacySettings
from lmdk_gui.runtime import heap
from tests.core.kinds import KINDS, example_series

N = 200_000  # above PARALLEL_MIN: Adaptive on its side thread, as in the window


def _click_peak(settings: PrivacySettings) -> float:
    rng = np.random.default_rng(0)
    series = Series.from_arrays(np.round(rng.random(N) * 10, 3))
    lm = np.sort(rng.choice(N, N // 5, replace=False))
    cache = NoiseCache()
    before = compute_preview(Snapshot(series, lm, settings, 1), cache, denoise=False)  # noqa: F841 - kept
    clicked = np.union1d(lm, [N // 2 + 1])
    tracemalloc.start()
    try:
        after = compute_preview(Snapshot(series, clicked, settings, 1), cache, denoise=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after is not None
    return peak / (8 * N)


def test_a_click_allocates_few_series_sized_arrays():
    assert _click_peak(PrivacySettings()) <= 6.5  # × 8·n bytes


def test_public_bounds_do_not_copy_the_series_per_scheme():
    assert _click_peak(PrivacySettings(bounds=(1.0, 9.0))) <= 7.5


# ---------------------------------------------------------------------------------- the R-run average
@pytest.mark.parametrize("kind", KINDS)
def test_average_runs_adaptive_last_and_gives_the_same_figures(kind, monkeypatch):
    """Each run computes Adaptive last (only it reads the sampling uniforms) and frees the run's unit noise
    once that release is made, before scoring and denoising it (80 MB per stream at 10^7 events): every
    scheme's figures are those of the releases made one by one, in the usual order, each on the run's full
    unit noise."""
    series = example_series(kind, 300, 1)
    lm = np.arange(0, 300, 9)
    st = PrivacySettings()
    want = {}
    for s in ALL_SCHEMES:
        raw, den = [], []
        for r in range(3):
            rel = compute_release(series, lm, st, s, UnitNoise(series.n, 4 + 1 + r))
            raw.append(metrics.mae(series, rel, st))
            den.append(metrics.denoised_mae(series, rel, st)[1])
        want[s] = metrics.run_stats(raw, den)
    seen: list[tuple[str, bool]] = []
    real_release, real_denoised = metrics.compute_release, metrics.denoised_mae
    noises: list[UnitNoise] = []

    def spy(series, landmarks, settings, scheme, noise):
        seen.append((scheme, "sample" in noise._cache))
        noises.append(noise)
        return real_release(series, landmarks, settings, scheme, noise)

    def denoised(series, rel, settings, **kw):
        seen.append(("denoise " + rel.scheme, bool(noises[-1]._cache)))
        return real_denoised(series, rel, settings, **kw)

    monkeypatch.setattr(metrics, "compute_release", spy)
    monkeypatch.setattr(metrics, "denoised_mae", denoised)
    got = metrics.mae_over_runs(series, lm, st, runs=3, seed=4, denoise=True)
    assert got == want
    assert [s for s, _ in seen if not s.startswith("denoise")][len(ALL_SCHEMES) - 1] == "adaptive"
    assert not any(held for s, held in seen if s != "adaptive" and not s.startswith("denoise"))
    assert ("denoise adaptive", False) in seen and ("denoise adaptive", True) not in seen


@pytest.mark.parametrize("kind", KINDS)
def test_adaptive_over_chunks_of_its_uniforms_is_the_same_release(kind, monkeypatch):
    """Adaptive's loop over chunks of its sampling uniforms drawn one after the other (its state carried) gives
    the release of one pass over the whole stream, bit for bit; the chunks are not kept."""
    from lmdk_gui.core.engine import pipeline

    series = example_series(kind, 1000, 3)
    lm = np.arange(0, 1000, 7)
    whole_noise = UnitNoise(series.n, 5)
    whole_noise.sample  # noqa: B018 - drawn first: one pass
    whole = compute_release(series, lm, PrivacySettings(), "adaptive", whole_noise)
    monkeypatch.setattr(pipeline, "SAMPLE_CHUNK", 64)
    noise = UnitNoise(series.n, 5)
    chunked = compute_release(series, lm, PrivacySettings(), "adaptive", noise)
    assert "sample" not in noise._cache
    for a, b in ((whole.values, chunked.values), (whole.budgets, chunked.budgets),
                 (whole.approximated, chunked.approximated)):
        assert a.tobytes() == b.tobytes()
    chunks = [u for _, u in UnitNoise(series.n, 5).sample_chunks(64)]
    assert len(chunks) == 16 and np.concatenate(chunks).tobytes() == whole_noise.sample.tobytes()


def test_a_landmark_sets_skip_and_balanced_budgets_are_shared_while_held():
    """The R-run average plans every run again: Skip's and Balanced's budgets for the session's landmark set
    are the arrays the preview holds, read-only, not new copies."""
    from lmdk_gui.core.engine.release import fixed_budgets, normalize_landmarks

    lm = np.arange(0, 1000, 7)
    lm.setflags(write=False)
    lm = normalize_landmarks(lm, 1000)
    for scheme in ("skip", "balanced"):
        b = fixed_budgets(scheme, 1000, lm, 0.9)
        assert not b.flags.writeable and fixed_budgets(scheme, 1000, lm, 0.9) is b
        assert fixed_budgets(scheme, 1000, lm, 0.8) is not b
        assert fixed_budgets(scheme, 1000, lm.copy(), 0.9) is not b  # (another set: made anew)
        np.testing.assert_array_equal(fixed_budgets(scheme, 1000, lm.copy(), 0.9), b)


def test_a_forgotten_stream_is_drawn_again_the_same():
    noise = UnitNoise(1000, 7)
    first = noise.sample.copy()
    noise.forget("sample")
    assert "sample" not in noise._cache
    assert np.array_equal(noise.sample, first)


@pytest.mark.skipif(heap._trim is None, reason="glibc's malloc_trim only")
def test_release_free_heap_returns_freed_arrays_to_the_system(monkeypatch):
    """Arrays of a few MB come from glibc's heap once its mmap threshold has risen past them: freed, their
    pages stay resident until :func:`release_free_heap`. The threshold is set as after a large series (32 MB):
    glibc's sliding one depends on what earlier tests freed, and a lean session's 1 MB may be left set."""
    monkeypatch.setattr(heap, "_mapped", True)
    if heap._set_option is not None:
        heap.map_large_blocks(False)
    arrays = [np.ones(2**19) for _ in range(100)]  # 4 MB each, from the heap
    del arrays[::2]  # 200 MB freed between live arrays: the heap cannot shrink from its top
    before = _rss_mb()
    assert heap.release_free_heap(force=True)
    assert before - _rss_mb() > 100
    del arrays


def test_release_free_heap_trims_only_a_large_process(monkeypatch):
    """Freed pages of a small process stay for the next arrays (trimmed after every click, each new array
    faults its pages in again); a large one's are returned."""
    calls: list[int] = []
    monkeypatch.setattr(heap, "_trim", lambda pad: calls.append(pad) or 1)
    monkeypatch.setattr(heap, "TRIM_ABOVE_BYTES", heap.resident_bytes() + (1 << 30))
    assert not heap.release_free_heap() and calls == []
    monkeypatch.setattr(heap, "TRIM_ABOVE_BYTES", heap.resident_bytes() // 2)
    assert heap.release_free_heap() and calls == [0]


def test_map_large_blocks_sets_glibc_thresholds_once_asked(monkeypatch):
    """Nothing is set until a large series asks (glibc's sliding threshold cannot be restored); then blocks of
    1 MB are mapped on their own, and after it the heap keeps blocks up to glibc's own ceiling."""
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(heap, "_set_option", lambda opt, value: calls.append((opt, value)) or 1)
    monkeypatch.setattr(heap, "_mapped", False)
    assert not heap.map_large_blocks(False) and calls == []
    assert heap.map_large_blocks(True)
    assert calls == [(-3, 1 << 20), (-1, 2 << 20)]
    assert not heap.map_large_blocks(True) and len(calls) == 2
    assert heap.map_large_blocks(False)
    assert calls[2:] == [(-3, 32 << 20), (-1, 64 << 20)]


@pytest.mark.skipif(heap._set_option is None, reason="glibc's mallopt only")
def test_mapped_large_blocks_go_back_to_the_system_when_freed(monkeypatch):
    """The arrays of test_release_free_heap_returns_freed_arrays_to_the_system, with large blocks mapped:
    freed, their pages leave at once, without a trim."""
    monkeypatch.setattr(heap, "_mapped", False)
    assert heap.map_large_blocks(True)
    try:
        big = np.ones(2**20)
        del big
        arrays = [np.ones(2**19) for _ in range(100)]
        before = _rss_mb()
        del arrays[::2]
        assert before - _rss_mb() > 150
        del arrays
    finally:
        heap.map_large_blocks(False)


def test_a_large_series_maps_large_blocks(monkeypatch, qapp):
    """With the launcher's ``heap``, the session asks for mapped blocks with a lean series and gives them up
    with the next small one."""
    from lmdk_gui import runtime
    from lmdk_gui.core.engine import memory as memory_mod
    from lmdk_gui.ui.window import session as session_mod

    monkeypatch.setattr(runtime, "_on", {"heap"})
    asked: list[bool] = []
    monkeypatch.setattr(heap, "map_large_blocks", asked.append)
    s = session_mod.Session()
    try:
        s.set_series(Series.from_arrays(np.arange(50.0)))
        monkeypatch.setattr(memory_mod, "LEAN_MIN", 40)  # (auto: lean from 40 events on)
        s.set_series(Series.from_arrays(np.arange(50.0)))
        s.set_series(Series.from_arrays(np.arange(30.0)))
    finally:
        s.shutdown()
    assert asked == [False, True, False]


def _rss_mb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_a_drawn_denoised_line_is_float32_only_within_a_fraction_of_its_range():
    """A large window keeps its rows' denoised lines as float32 (core.preview.compact_denoised) only when
    float32 is within COMPACT_TOLERANCE of the line's range; other kinds and flat lines stay as they are."""
    from lmdk_gui.core.analysis.denoise import Denoised
    from lmdk_gui.core.engine.preview import COMPACT_TOLERANCE, compact_denoised

    v = np.linspace(-3.0, 10.0, 1001)
    v[5] = np.nan
    c = compact_denoised(Denoised(v, "m", {"a": 1}))
    assert c.values.dtype == np.float32 and c.method == "m" and c.params == {"a": 1}
    assert np.nanmax(np.abs(c.values - v)) <= 13.0 * COMPACT_TOLERANCE and np.isnan(c.values[5])
    assert compact_denoised(c) is c
    flat = 2.5866 + np.linspace(0.0, 4e-6, 1001)  # float32 would draw it as steps
    for kept in (flat, np.full(10, np.nan), np.zeros((10, 2)), np.arange(10), np.array([1.0, np.inf]),
                 np.zeros(0)):
        assert compact_denoised(Denoised(kept, "m")).values is kept
