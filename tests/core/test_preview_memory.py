"""Issue 15's memory target: a landmark click's preview allocates few series-sized arrays. Measured with
tracemalloc (numpy reports its arrays to it; each is allocated the same way every time, so the figure is
deterministic up to the side thread's timing): what a click allocates besides the previous preview, the
noise and the memo, which the window keeps. Equal budgets as one float (release.constant_budgets), no memo
entry for Adaptive and one kind input for every scheme took it from ≈ 8.5 to ≈ 5.4 times the values' bytes
(with public bounds, whose clamped copy each plan made, from ≈ 14.3 to ≈ 6.3)."""

from __future__ import annotations

import tracemalloc

import numpy as np

from lmdk_gui.core.preview import NoiseCache, Snapshot, compute_preview
from lmdk_gui.core.series import Series
from lmdk_gui.core.settings import PrivacySettings

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
