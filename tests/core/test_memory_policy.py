"""The memory policy (issue 43): one Qt-free object decides whether a session keeps lean, and a lean session
drops releases (keeping their summaries) rather than emptying them."""

from __future__ import annotations

import numpy as np
import pytest

from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine import memory
from lmdk_gui.core.engine.memory import LEAN_MIN, MemoryPolicy
from lmdk_gui.core.engine.preview import NoiseCache, Snapshot, compute_preview, drop_releases
from lmdk_gui.core.engine.release import Release, ReleaseSummary
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, PrivacySettings


def test_lean_and_full_force_the_choice():
    assert MemoryPolicy("lean").resolve(1) and MemoryPolicy("lean").resolve(10**8)
    assert not MemoryPolicy("full").resolve(1) and not MemoryPolicy("full").resolve(10**9)


def test_auto_is_lean_from_lean_min_on_a_roomy_machine():
    roomy = MemoryPolicy(memory_bytes=64 * 2**30)
    assert not roomy.resolve(LEAN_MIN - 1) and roomy.resolve(LEAN_MIN)


def test_auto_is_lean_earlier_when_the_arrays_would_crowd_a_small_machine():
    small = MemoryPolicy(memory_bytes=2**30)  # an eighth of 1 GiB over 112 bytes per event: ≈ 1.2·10^6 events
    first = small.lean_from()
    assert first == 2**30 // 8 // memory.BYTES_PER_EVENT < LEAN_MIN
    assert not small.resolve(first - 1) and small.resolve(first)


def test_auto_reads_the_machines_memory(monkeypatch):
    monkeypatch.setattr(memory.os, "sysconf", lambda name: {"SC_PHYS_PAGES": 2**18, "SC_PAGE_SIZE": 4096}[name])
    assert memory.physical_memory() == 2**30
    assert MemoryPolicy().lean_from() == 2**30 // 8 // memory.BYTES_PER_EVENT

    def refuse(name):
        raise ValueError(name)
    monkeypatch.setattr(memory.os, "sysconf", refuse)
    assert memory.physical_memory() == memory.DEFAULT_MEMORY_BYTES


def test_a_mode_is_named_or_refused():
    assert MemoryPolicy.parse(" Lean ").mode == "lean" and MemoryPolicy().mode == "auto"
    with pytest.raises(ValueError, match="choose one of auto, lean, full"):
        MemoryPolicy.parse("tiny")
    with pytest.raises(ValueError):
        MemoryPolicy("tiny")  # type: ignore[arg-type]


def test_dropped_releases_stay_whole_and_a_click_makes_or_reuses_them_as_the_one_shot_path():
    rng = np.random.default_rng(3)
    series = Series.from_arrays(np.round(rng.random(600) * 10, 3))
    settings = PrivacySettings(denoise=False)
    cache = NoiseCache()
    first = compute_preview(Snapshot(series, np.array([10, 20]), settings, 1), cache, denoise=False)
    assert first is not None
    dropped_schemes = ["event", "user", "skip", "uniform"]
    dropped = drop_releases(first.plain, dropped_schemes, cache.memo(series, 1), None, "plain")
    for x in dropped_schemes:
        rel, summary = first.plain[x].release, dropped[x].release
        assert isinstance(rel, Release) and rel.values.shape[0] == rel.budgets.shape[0] == 600  # untouched
        assert isinstance(summary, ReleaseSummary) and not dropped[x].whole and dropped[x].mae == first.plain[x].mae
        assert (summary.mean_budget, summary.max_budget, summary.approximated_share) == \
            (rel.mean_budget, rel.max_budget, rel.approximated_share)
        with pytest.raises(LookupError, match="summary only"):
            dropped[x].values  # noqa: B018
    clicked = np.array([10, 20, 30])
    after = compute_preview(Snapshot(series, clicked, settings, 1), cache, denoise=False)
    ref = compute_preview(Snapshot(series, clicked, settings, 1), NoiseCache(), denoise=False)
    assert after is not None and ref is not None
    for x in ALL_SCHEMES:
        p, q = after.plain[x], ref.plain[x]
        assert p.mae == q.mae and p.guarantee.holds == q.guarantee.holds, x
        assert p.release.mean_budget == q.release.mean_budget, x
        if x in ("event", "user"):  # their budgets ignore the landmarks: the summary is reused, with the new set
            assert p.release.token is dropped[x].release.token  # type: ignore[union-attr]
            assert np.array_equal(p.release.landmarks, clicked)
        else:  # made whole again
            assert p.whole and np.array_equal(p.values, q.values, equal_nan=True), x
