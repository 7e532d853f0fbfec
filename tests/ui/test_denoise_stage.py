"""Denoising as a later stage of the preview (issue 15): previewChanged announces the raw releases, then
denoisedChanged the same releases with their denoised values — bit for bit the one-shot core path's
(``compute_preview``) — and a new state never shows the previous state's denoised lines."""

from __future__ import annotations

import threading
import weakref

import numpy as np
import pytest

from lmdk_gui.core.engine import preview as preview_mod
from lmdk_gui.core.engine.memory import MemoryPolicy
from lmdk_gui.core.engine.preview import NoiseCache, compact_denoised, compute_preview
from lmdk_gui.core.kernel.settings import ALL_SCHEMES
from lmdk_gui.ui.window import session as session_mod

from .conftest import alive_at_preview_start, wait_denoised


@pytest.fixture(autouse=True)
def _later_stage(monkeypatch):
    """The sample is small enough to be denoised in the preview's own job: these tests use the later stage
    (what a long series gets); the last test checks the small-series path."""
    monkeypatch.setattr(session_mod, "DENOISE_INLINE_MAX", 0)


def _same_denoised(a, b) -> None:
    for s in ALL_SCHEMES:
        p, q = a[s], b[s]
        assert p.denoised_values is not None, s
        assert np.array_equal(p.denoised_values, q.denoised_values, equal_nan=True), s
        assert p.mae_denoised == q.mae_denoised and p.relative_denoised == q.relative_denoised, s
        assert np.array_equal(p.values, q.values, equal_nan=True), s


def _gated_stage(monkeypatch, after=lambda: None) -> tuple[threading.Event, threading.Event]:
    """Make each denoising wait for ``gate`` (set ``started`` on entry, call ``after`` once let through)."""
    gate, started = threading.Event(), threading.Event()
    real = preview_mod.denoised_values

    def slow(*args):
        started.set()
        gate.wait(10)
        after()
        return real(*args)

    monkeypatch.setattr(preview_mod, "denoised_values", slow)
    return gate, started


def _kept(q, lean: bool = True) -> np.ndarray:
    """The denoised values a (lean) window keeps of the one-shot path's preview ``q``: float32 (drawn only)."""
    return compact_denoised(q.denoised).values if lean else q.denoised_values


def _lines(window) -> dict:
    pp = window.preview_plot
    return {s: pp.rows[s]["denoised"].getData()[1] for s in pp.shown()}


def test_raw_preview_first_then_the_denoised_values_of_the_one_shot_path(qtbot, window):
    s = window.session
    wait_denoised(qtbot, window)
    order: list[tuple[str, bool]] = []
    s.previewChanged.connect(lambda: order.append(("raw", s.preview["skip"].denoised_values is None)))
    s.denoisedChanged.connect(lambda: order.append(("denoised", s.preview["skip"].denoised_values is None)))
    with qtbot.waitSignal(s.denoisedChanged, timeout=30_000):
        s.add_range(40, 90)
    assert order == [("raw", True), ("denoised", False)]
    ref = compute_preview(s.snapshot(), NoiseCache())
    assert ref is not None
    _same_denoised(s.preview, ref.preview)
    assert s.preview_plain is s.preview  # dummies off: one dict, as before
    for scheme, y in _lines(window).items():  # the rows draw exactly those lines
        np.testing.assert_allclose(y, s.preview[scheme].denoised_values)
    assert window.metrics_table.item(0, 9).text() not in ("—", "computing…", "")


def test_an_edit_while_the_stage_runs_leaves_no_stale_denoised_result(qtbot, window, monkeypatch):
    s = window.session
    wait_denoised(qtbot, window)
    gate, started = _gated_stage(monkeypatch)
    landed: list[np.ndarray] = []
    s.denoisedChanged.connect(lambda: landed.append(s.landmarks.copy()))
    s.toggle_landmark(200)
    qtbot.waitUntil(started.is_set, timeout=30_000)  # the raw preview is drawn, its stage is running
    assert s.is_preview_current() and not s.is_denoised_current()
    assert _lines(window) and all(y is None or len(y) == 0 for y in _lines(window).values())
    assert window.metrics_table.item(0, 9).text() == "computing…"
    # the R-run average waits for the stage (it would compete with it for the two cores)
    assert s.average is None and not s._average_timer.isActive()
    s.toggle_landmark(201)  # a new state while the old stage runs
    gate.set()
    wait_denoised(qtbot, window)
    assert [lm.tolist() for lm in landed] == [s.landmarks.tolist()]  # only the current state's arrived
    assert 200 in s.landmarks and 201 in s.landmarks
    qtbot.waitUntil(lambda: s.average is not None, timeout=30_000)  # and starts after it
    ref = compute_preview(s.snapshot(), NoiseCache())
    assert ref is not None
    _same_denoised(s.preview, ref.preview)


def test_denoise_off_clears_the_lines_and_on_brings_the_current_ones(qtbot, window):
    s = window.session
    wait_denoised(qtbot, window)
    assert any(y is not None and len(y) for y in _lines(window).values())
    s.set_denoise(False)
    assert all(y is None or len(y) == 0 for y in _lines(window).values())  # at once, before any preview
    wait_denoised(qtbot, window)
    assert all(p.denoised_values is None for p in s.preview.values())
    assert all(y is None or len(y) == 0 for y in _lines(window).values())
    with qtbot.waitSignal(s.denoisedChanged, timeout=30_000):
        s.set_denoise(True)
    ref = compute_preview(s.snapshot(), NoiseCache())
    assert ref is not None
    _same_denoised(s.preview, ref.preview)


def test_a_small_series_gets_its_denoised_lines_with_the_raw_points(qtbot, window, monkeypatch):
    """Up to DENOISE_INLINE_MAX events the preview job also denoises (the same denoise_preview): previewChanged
    already carries the denoised values, the rows draw points and lines in one pass (the lines never vanish
    on a click), and the values are the one-shot core path's."""
    monkeypatch.setattr(session_mod, "DENOISE_INLINE_MAX", 20_000)
    s = window.session
    wait_denoised(qtbot, window)
    order: list[tuple[str, bool]] = []
    lines_at_preview: list[bool] = []
    s.previewChanged.connect(lambda: order.append(("raw", s.preview["skip"].denoised_values is None)))
    s.previewChanged.connect(lambda: lines_at_preview.append(bool(_lines(window))))
    s.denoisedChanged.connect(lambda: order.append(("denoised", s.preview["skip"].denoised_values is None)))
    redrawn: list[int] = []  # the lines drawn again after the preview's slot drew them (a second paint)
    real_redraw = window.preview_plot.redraw_denoised
    monkeypatch.setattr(window.preview_plot, "redraw_denoised", lambda: (redrawn.append(1), real_redraw()))
    with qtbot.waitSignal(s.denoisedChanged, timeout=30_000):
        s.add_range(40, 90)
    assert order == [("raw", False), ("denoised", False)] and lines_at_preview == [True]
    assert not redrawn
    assert s.is_denoised_current()
    one_shot = compute_preview(s.snapshot(), NoiseCache())
    assert one_shot is not None
    _same_denoised(s.preview, one_shot.preview)


def test_a_lean_session_keeps_the_shown_rows_denoised_values_and_every_error(qtbot, window, monkeypatch):
    """A lean session (its memory policy says so) the stage keeps the denoised values of the shown schemes only;
    the hidden ones keep their error (the metrics table shows it), and ticking one denoises it again: the
    same bits as the one-shot path, drawn in its row."""
    window.session.set_memory_policy(MemoryPolicy("lean"))
    s = window.session
    with qtbot.waitSignal(s.denoisedChanged, timeout=30_000):
        s.add_range(40, 90)
    ref = compute_preview(s.snapshot(), NoiseCache())
    assert ref is not None
    hidden = [x for x in ALL_SCHEMES if x not in s.visible_schemes]
    assert hidden and "event" in hidden
    for scheme in ALL_SCHEMES:
        p, q = s.preview[scheme], ref.preview[scheme]
        assert p.mae_denoised == q.mae_denoised and p.relative_denoised == q.relative_denoised, scheme
        assert p.denoised_scored
        if scheme in hidden:
            assert p.denoised is None, scheme
        else:
            assert p.denoised_values.dtype == _kept(q).dtype, scheme
            assert np.array_equal(p.denoised_values, _kept(q), equal_nan=True), scheme
    row = ALL_SCHEMES.index("event")
    assert window.metrics_table.item(row, 9).text() not in ("—", "computing…", "")
    with qtbot.waitSignal(s.denoisedChanged, timeout=30_000):
        window.settings_panel.scheme_checks["event"].setChecked(True)
    assert np.array_equal(s.preview["event"].denoised_values, _kept(ref.preview["event"]))
    np.testing.assert_allclose(_lines(window)["event"], ref.preview["event"].denoised_values, rtol=1e-6)


@pytest.mark.parametrize("lean", [True, False])
def test_a_lean_preview_starts_once_the_cancelled_stage_let_go(qtbot, window, monkeypatch, lean):
    """Lean (peak memory at 10^7 events), a click's preview waits until the denoising it cancelled has returned
    (its arrays gone) instead of computing beside it; a full one does not wait."""
    window.session.set_memory_policy(MemoryPolicy("lean" if lean else "full"))
    s = window.session
    wait_denoised(qtbot, window)
    order: list[str] = []
    gate, started = _gated_stage(monkeypatch, lambda: order.append("stage out"))
    real_preview = session_mod.compute_preview

    def preview(*args, **kwargs):
        order.append("preview in")
        return real_preview(*args, **kwargs)

    monkeypatch.setattr(session_mod, "compute_preview", preview)
    waiting = threading.Event()
    real_wait = s._denoise_runner.wait_stopped

    def wait_stopped(give_up):
        waiting.set()
        real_wait(give_up)

    monkeypatch.setattr(s._denoise_runner, "wait_stopped", wait_stopped)
    s.toggle_landmark(200)
    qtbot.waitUntil(started.is_set, timeout=30_000)  # its stage is running (blocked)
    started.clear()
    order.clear()
    if lean:
        s.toggle_landmark(201)
        qtbot.waitUntil(waiting.is_set, timeout=10_000)
        assert order == []  # the preview waits ...
        gate.set()
        qtbot.waitUntil(s.is_preview_current, timeout=30_000)
        assert order[:2] == ["stage out", "preview in"]  # ... for the cancelled stage to return
    else:
        with qtbot.waitSignal(s.previewChanged, timeout=30_000):
            s.toggle_landmark(201)
        assert order[:1] == ["preview in"] and not waiting.is_set()
        gate.set()
    wait_denoised(qtbot, window)


def test_a_scheme_shown_while_a_lean_stage_runs_gets_its_denoised_values(qtbot, window, monkeypatch):
    """The stage keeps the schemes visible at its start; one ticked while it runs is denoised once it is in."""
    window.session.set_memory_policy(MemoryPolicy("lean"))
    s = window.session
    wait_denoised(qtbot, window)
    gate, started = _gated_stage(monkeypatch)
    s.toggle_landmark(200)
    qtbot.waitUntil(started.is_set, timeout=30_000)
    window.settings_panel.scheme_checks["user"].setChecked(True)
    gate.set()
    qtbot.waitUntil(lambda: s.is_denoised_current() and s.preview["user"].denoised is not None, timeout=30_000)
    ref = compute_preview(s.snapshot(), NoiseCache())
    assert ref is not None
    assert np.array_equal(s.preview["user"].denoised_values, _kept(ref.preview["user"]))
    assert s.preview["event"].denoised is None and s.preview["event"].denoised_scored  # still hidden


@pytest.mark.parametrize("lean", [True, False])
def test_a_lean_landmark_edit_lets_go_of_the_denoised_values_it_replaces(qtbot, window, monkeypatch, lean):
    """Lean (peak memory at 10^7 events), a landmark edit lets go of the denoised values of the schemes whose
    release it replaces before the new preview is made: the session, the preview plot and the stage's memo no
    longer hold them (a shown Event row, whose release a click keeps, keeps its line); Adaptive's uniforms are
    not held between previews; the new values are the one-shot path's. A full session changes nothing."""
    window.session.set_memory_policy(MemoryPolicy("lean" if lean else "full"))
    s = window.session
    wait_denoised(qtbot, window)
    s.toggle_landmark(200)  # (a stage of this leanness: the window opened the file before the patch)
    wait_denoised(qtbot, window)
    window.settings_panel.scheme_checks["event"].setChecked(True)
    qtbot.waitUntil(lambda: s.preview["event"].denoised_values is not None, timeout=30_000)
    replaced = [x for x in s.visible_schemes if x != "event"]
    old = {x: weakref.ref(s.preview[x].denoised_values) for x in replaced}
    event_line = s.preview["event"].denoised_values
    alive_at_start = alive_at_preview_start(monkeypatch, old)
    s.toggle_landmark(300)
    kept = {x for x in replaced if s.preview[x].denoised_values is not None}
    assert kept == (set() if lean else set(replaced))
    assert s.preview["event"].denoised_values is event_line
    drawn = set(window.preview_plot._denoised)
    assert "event" in drawn and (drawn.isdisjoint(replaced) if lean else drawn.issuperset(replaced))
    wait_denoised(qtbot, window)
    assert alive_at_start[0] == ([] if lean else sorted(replaced))
    one_shot = compute_preview(s.snapshot(), NoiseCache())
    assert one_shot is not None
    for x in s.visible_schemes:
        assert np.array_equal(s.preview[x].denoised_values, _kept(one_shot.preview[x], lean)), x
    assert all(s.preview[x].mae_denoised == one_shot.preview[x].mae_denoised for x in ALL_SCHEMES)
    assert s.preview["event"].denoised_values is event_line  # (reused from the memo)
    np.testing.assert_allclose(_lines(window)["skip"], one_shot.preview["skip"].denoised_values, rtol=1e-6)
    # Adaptive's uniforms are not held between previews (drawn again, the same draws: the one-shot values)
    assert ("sample" in s._noise_cache.get(s.series, s.seed)._cache) is not lean
