"""The lean memory decisions without Qt (issue 43, core/engine/lean.py): a landmark edit drops the releases of
``REMADE_BY_EDIT`` and the landmark schemes' denoised values; the hidden schemes' releases go only once scored
and while no job runs; what was let go of is forgotten in the memos by the next preview job; a full policy
drops nothing."""

from __future__ import annotations

import numpy as np
import pytest

from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine.lean import LeanBook
from lmdk_gui.core.engine.memory import MemoryPolicy
from lmdk_gui.core.engine.preview import (
    DenoiseMemo,
    NoiseCache,
    PreviewResult,
    compute_preview,
    denoise_preview,
)
from lmdk_gui.core.engine.release import ReleaseSummary
from lmdk_gui.core.engine.state import SessionState, frozen_rows
from lmdk_gui.core.kernel.schemes import REMADE_BY_EDIT
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, LANDMARK_SCHEMES

N = 400


def _book(mode: str) -> tuple[LeanBook, PreviewResult]:
    """A book on a small series, and its state's preview with the denoised values of every scheme."""
    state = SessionState()
    state.series = Series.from_arrays(np.random.default_rng(3).normal(10, 2, N))
    state.landmarks = frozen_rows(np.arange(5, N, 37, dtype=np.int64))
    book = LeanBook(state, NoiseCache(), DenoiseMemo(), MemoryPolicy(mode))  # type: ignore[arg-type]
    snap = state.snapshot()
    raw = compute_preview(snap, book._noise, denoise=False)
    assert raw is not None
    done = denoise_preview(snap, raw, memo=book._denoise_memo, keep=book.keep(), compact=book.lean,
                           compact_raw=book.compact_raw())
    assert done is not None
    return book, done


def _memo(book: LeanBook) -> dict:
    memo = book._noise.existing_memo(book.state.series, book.state.seed)  # type: ignore[arg-type]
    assert memo is not None
    return memo


def test_the_policy_decides_for_the_series_size():
    assert LeanBook(SessionState(), NoiseCache(), DenoiseMemo(), MemoryPolicy("lean")).lean is False  # no series
    assert _book("lean")[0].lean and not _book("full")[0].lean
    book = _book("auto")[0]
    assert not book.lean
    book.policy = MemoryPolicy("auto", memory_bytes=N * 112 * 8 - 1)  # a machine the series would crowd
    assert book.lean


def test_a_lean_edit_drops_what_its_preview_remakes_and_the_next_job_forgets_it_in_the_memos():
    book, res = _book("lean")
    assert res.preview is res.plain
    shown = book.state.visible_schemes
    assert book.keep() == shown and book.compact_raw() == REMADE_BY_EDIT
    assert all((res.preview[x].denoised is None) == (x not in shown) for x in ALL_SCHEMES)  # (keep)
    memo = _memo(book)
    assert {"skip", "uniform", "balanced"} <= memo.keys()
    assert book.before_preview(book.state.snapshot()) is None  # nothing let go of yet

    dropped = book.on_edit(res.preview, res.plain)
    assert dropped is not None
    preview, plain = dropped
    assert preview is plain  # still one dict
    for x in ALL_SCHEMES:
        p, q = preview[x], res.preview[x]
        assert p.whole == (x not in REMADE_BY_EDIT), x
        assert isinstance(p.release, ReleaseSummary) == (x in REMADE_BY_EDIT), x
        assert p.mae == q.mae and p.mae_denoised == q.mae_denoised, x  # (the errors stay)
        if x in LANDMARK_SCHEMES or x in REMADE_BY_EDIT:
            assert p.denoised is None, x
        else:
            assert p.denoised is q.denoised and p.release is q.release, x
    assert preview["skip"].release is res.preview["skip"].release  # (the next release's patch source)
    assert book.stale_denoised == frozenset(LANDMARK_SCHEMES) and book.stale_values == REMADE_BY_EDIT

    denoise_memo, settings = book._denoise_memo, book.state.settings
    series = book.state.series
    assert series is not None
    assert denoise_memo.get("plain", series, settings, res.plain["skip"].release) is not None
    before = book.before_preview(book.state.snapshot())
    assert before is not None
    before()  # (on the preview job's thread)
    assert not REMADE_BY_EDIT & memo.keys() and "skip" in memo
    assert all(denoise_memo.get("plain", series, settings, res.plain[x].release, False) is None
               for x in LANDMARK_SCHEMES)
    assert denoise_memo.get("plain", series, settings, res.plain["event"].release, False) is not None
    book.preview_arrived()
    assert book.before_preview(book.state.snapshot()) is None


def test_hidden_schemes_are_dropped_only_once_scored_and_while_no_job_runs():
    book, res = _book("lean")
    hidden = [x for x in ALL_SCHEMES if x not in book.state.visible_schemes]
    assert hidden == ["event", "user"]
    assert book.drop_hidden(res.preview, res.plain, scored=False, idle=True) is None
    assert book.drop_hidden(res.preview, res.plain, scored=True, idle=False) is None
    dropped = book.drop_hidden(res.preview, res.plain, scored=True, idle=True)
    assert dropped is not None
    preview, plain = dropped
    assert preview is plain
    assert [x for x in ALL_SCHEMES if not preview[x].whole] == hidden
    memo = _memo(book)
    assert all(isinstance(memo[x][1], ReleaseSummary) for x in hidden)  # (a click reuses them as they are)
    assert all(preview[x].mae == res.preview[x].mae and preview[x].denoised_scored for x in hidden)
    # the float64 copies of the releases the stage kept at float32 (compact_raw) are forgotten
    assert preview["uniform"].values.dtype == np.float32 and "uniform" not in memo and "skip" in memo

    assert book.shown_again(["event", "uniform"], preview) == {"event"}  # made again by the next preview
    before = book.before_preview(book.state.snapshot())
    assert before is not None
    before()
    assert "event" not in memo and "user" in memo


def test_a_full_policy_drops_nothing():
    book, res = _book("full")
    assert book.keep() is None and book.compact_raw() == frozenset()
    assert all(res.preview[x].denoised is not None for x in ALL_SCHEMES)
    assert book.on_edit(res.preview, res.plain) is None
    assert book.drop_hidden(res.preview, res.plain, scored=True, idle=True) is None
    assert book.stale_denoised == book.stale_values == frozenset()
    snap = book.state.snapshot()
    assert book.stage_noise(snap) is None
    noise = book._noise.get(snap.series, snap.seed)
    noise.laplace  # noqa: B018 - as a preview leaves it
    book.let_go_of_preview_noise(idle=True)
    assert "laplace" in noise._cache


@pytest.mark.parametrize("idle", [False, True])
def test_a_lean_book_lets_go_of_the_preview_noise_while_no_preview_runs(idle):
    book, _ = _book("lean")
    snap = book.state.snapshot()
    noise = book._noise.get(snap.series, snap.seed)
    assert book.stage_noise(snap) is noise
    noise.laplace  # noqa: B018
    book.after_preview(snap)()
    assert "sample" not in noise._cache
    book.let_go_of_preview_noise(idle=idle)
    assert ("laplace" in noise._cache) is not idle
