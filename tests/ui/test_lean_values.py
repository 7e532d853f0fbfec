"""A lean window drops its hidden schemes' releases once they are scored (issue 15, peak memory at 10^7
events: Event's and User's releases, 80 MB each), keeping their summaries (issue 43: a release is never
emptied). Their errors, checks and summaries stay, bit for bit the one-shot path's; a click reuses them as they
are; showing one makes it again and draws it. The memory policy comes from the user's preference here."""

from __future__ import annotations

import os
import threading
import weakref

import numpy as np
import pytest
from PySide6.QtCore import QSettings

from lmdk_gui.core.engine.preview import NoiseCache, compact_values, compute_preview
from lmdk_gui.core.engine.release import ReleaseSummary
from lmdk_gui.core.kernel.schemes import REMADE_BY_EDIT
from lmdk_gui.core.kernel.settings import ALL_SCHEMES
from lmdk_gui.ui.window import session as session_mod
from lmdk_gui.ui.window.runner import LatestOnlyRunner

from .conftest import alive_at_preview_start, wait_denoised, wait_preview


@pytest.fixture(autouse=True)
def _lean(monkeypatch, isolated_settings):
    """The user chose ``lean`` (the ``memoryPolicy`` preference the window reads)."""
    prefs = QSettings(os.environ["LMDK_GUI_SETTINGS"], QSettings.Format.IniFormat)
    prefs.setValue("memoryPolicy", "lean")
    prefs.sync()
    monkeypatch.setattr(session_mod, "DENOISE_INLINE_MAX", 0)


def test_the_window_takes_the_preferred_memory_policy(window):
    assert window.session.memory.mode == "lean" and window.session.lean


def _same_scores(session, hidden: list[str]) -> None:
    ref = compute_preview(session.snapshot(), NoiseCache())
    assert ref is not None
    for x in ALL_SCHEMES:
        p, q = session.preview[x], ref.preview[x]
        assert p.mae == q.mae and p.relative == q.relative, x
        assert p.mae_denoised == q.mae_denoised or np.isnan(p.mae_denoised) and np.isnan(q.mae_denoised), x
        assert p.relative_denoised == q.relative_denoised, x
        assert p.guarantee.holds == q.guarantee.holds, x
        assert p.whole == (x not in hidden), x
        for name in ("mean_budget", "max_budget", "approximated_share"):  # (a summary's too)
            assert getattr(p.release, name) == getattr(q.release, name), (x, name)
        if x in hidden:
            assert isinstance(p.release, ReleaseSummary), x
            with pytest.raises(LookupError):
                p.values  # noqa: B018 - dropped, not emptied
            continue
        assert np.array_equal(p.budgets, q.budgets) and np.array_equal(p.approximated, q.approximated), x
        if x not in hidden:  # (the stage keeps REMADE_BY_EDIT's at float32 once scored: compact_values)
            want = q.values if p.values.dtype == q.values.dtype else compact_values(q.values)
            assert p.values.dtype == want.dtype and np.array_equal(p.values, want, equal_nan=True), x


def _memo(session) -> dict:
    memo = session._noise_cache.existing_memo(session.series, session.seed)
    assert memo is not None
    return memo


def test_hidden_schemes_releases_are_dropped_once_scored_and_a_click_keeps_them_so(qtbot, window):
    s = window.session
    wait_denoised(qtbot, window)
    hidden = [x for x in ALL_SCHEMES if x not in s.visible_schemes]
    assert hidden == ["event", "user"]
    raw: dict[str, weakref.ref] = {}

    def on_preview() -> None:  # the raw releases, before the denoise stage scored them
        raw.update({x: weakref.ref(s.preview[x].values) for x in hidden if s.preview[x].whole})

    s.add_range(40, 90)
    wait_denoised(qtbot, window)
    s.previewChanged.connect(on_preview)
    s.set_epsilon(0.5)  # new budgets: Event and User made anew
    wait_denoised(qtbot, window)
    assert set(raw) == set(hidden)
    _same_scores(s, hidden)
    assert all(r() is None for r in raw.values())  # nobody holds them: the session, the memos, the runners
    assert all(isinstance(_memo(s)[x][1], ReleaseSummary) for x in hidden)
    shown = sorted(REMADE_BY_EDIT)  # drawn only until the next edit: float32, the memo forgets them
    assert all(s.preview[x].values.dtype == np.float32 and x not in _memo(s) for x in shown)
    assert all(window.preview_plot._values[x] is s.preview[x].values for x in shown)
    kept = {x: s.preview[x].release.token for x in hidden}  # type: ignore[union-attr]
    s.toggle_landmark(300)
    wait_denoised(qtbot, window)
    _same_scores(s, hidden)
    assert all(s.preview[x].release.token is kept[x] for x in hidden)  # reused, not made again


def test_a_hidden_scheme_shown_again_is_made_again_and_drawn(qtbot, window):
    s = window.session
    s.add_range(40, 90)
    wait_denoised(qtbot, window)
    assert not s.preview["event"].whole
    window.settings_panel.scheme_checks["event"].setChecked(True)
    qtbot.waitUntil(lambda: s.is_denoised_current() and s.preview["event"].denoised is not None, timeout=30_000)
    _same_scores(s, ["user"])
    assert "event" in window.preview_plot._values and "event" in window.preview_plot.shown()
    window.settings_panel.scheme_checks["event"].setChecked(False)  # hidden again: let go at once
    assert not s.preview["event"].whole and s.preview["event"].denoised_scored


def test_without_denoising_the_values_are_let_go_with_the_preview(qtbot, window):
    s = window.session
    wait_denoised(qtbot, window)
    s.set_denoise(False)
    wait_preview(qtbot, window)
    assert not s.preview["user"].whole and s.preview["uniform"].whole
    _same_scores(s, ["event", "user"])


def test_a_runner_does_not_keep_its_last_jobs_arguments(qtbot):
    runner = LatestOnlyRunner("test")
    try:
        arg = np.ones(10)
        ref = weakref.ref(arg)
        done = threading.Event()
        with qtbot.waitSignal(runner.finished, timeout=10_000):
            runner.submit(lambda a, should_cancel: (done.set(), float(a.sum()))[1], arg)
        del arg
        qtbot.waitUntil(lambda: ref() is None, timeout=5_000)
    finally:
        runner.shutdown()


def test_a_landmark_edit_lets_go_of_the_raw_values_it_replaces_at_once(qtbot, window, monkeypatch):
    """The releases a click makes anew whole (REMADE_BY_EDIT) are dropped before the new ones are made:
    nobody holds their values when the preview job starts; their rows stay as drawn (a redraw meanwhile
    leaves them); Skip's release, the next one's patch source, stays."""
    s = window.session
    s.add_range(40, 90)
    wait_denoised(qtbot, window)
    remade = sorted(REMADE_BY_EDIT)
    old = {x: weakref.ref(s.preview[x].values) for x in remade}
    old.update({x + " budgets": weakref.ref(s.preview[x].budgets) for x in ("balanced", "adaptive")})
    skip_values = s.preview["skip"].values
    alive = alive_at_preview_start(monkeypatch, old)
    rows, bars = window.preview_plot, window.budget_plot
    drawn = {x: rows.rows[x]["dots"].getData()[1].copy() for x in remade}
    drawn_bars = {x: bars.rows[x]["regular"].getData()[1].copy() for x in remade}
    s.toggle_landmark(300)
    assert all(isinstance(s.preview[x].release, ReleaseSummary) for x in remade)
    assert s.preview["skip"].values is skip_values
    assert set(remade) <= set(rows.shown()) and not set(remade) & set(rows._values)
    assert set(remade) <= set(bars.shown()) and not set(remade) & set(bars._split)
    assert "Adaptive: ε<sub>t</sub> = …" in window.hover_html(300)  # (its budgets are coming)
    window._on_settings()  # a redraw of both plots before the new preview (a zoom, a setting)
    assert all(np.array_equal(rows.rows[x]["dots"].getData()[1], drawn[x], equal_nan=True) for x in remade)
    assert all(np.array_equal(bars.rows[x]["regular"].getData()[1], drawn_bars[x], equal_nan=True) for x in remade)
    assert set(remade) <= set(rows.shown()) and set(remade) <= set(bars.shown())
    wait_denoised(qtbot, window)
    assert alive == [[]]
    _same_scores(s, ["event", "user"])
    assert set(remade) <= set(rows._values) and set(remade) <= set(bars._split)
    assert "Adaptive: ε<sub>t</sub> = …" not in window.hover_html(300)


def test_the_later_stages_and_an_export_run_without_the_previews_unit_noise(qtbot, window, monkeypatch, tmp_path):
    """The denoise stage and the R-run average do not read the preview's unit noise, an export draws its own: a
    lean session lets go of it (80 MB per stream at 10^7 events) when they start; the next preview draws it
    again, the same draws."""
    s = window.session
    wait_denoised(qtbot, window)
    noise = s._noise_cache.existing(s.series, s.seed)
    assert noise is not None and not noise._cache
    held: list[tuple[str, bool]] = []
    real_average, real_denoise = session_mod.compute_average, session_mod.denoise_preview

    def average(*args, **kwargs):
        held.append(("average", "laplace" in noise._cache))
        return real_average(*args, **kwargs)

    def denoise(*args, **kwargs):
        held.append(("denoise", "laplace" in noise._cache))
        return real_denoise(*args, **kwargs)

    monkeypatch.setattr(session_mod, "compute_average", average)
    monkeypatch.setattr(session_mod, "denoise_preview", denoise)
    with qtbot.waitSignal(s.metricsChanged, timeout=30_000):
        s.toggle_landmark(300)
    assert held == [("denoise", False), ("average", False)] and not noise._cache
    _same_scores(s, ["event", "user"])  # (the preview drew it again: the one-shot path's releases)
    noise.laplace  # noqa: B018 - as a preview leaves it
    job = window.export_release(tmp_path / "out.csv", "skip", force=True)
    assert "laplace" not in noise._cache
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
