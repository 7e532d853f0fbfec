"""The GUI survives a burst of 1,000 random user steps with the guarantee holding after every one (issue 9).

Steps (seeded): clicks on event markers, Shift-drags (mark a range), Ctrl-drags (unmark), plain drags (pan),
zooms, undo/redo through the window's actions, ε / Adaptive-parameter edits in the settings panel, Re-roll,
Clear and Invert. After **every** step the session's current landmarks are checked independently: the
budgets that :func:`compute_release` gives them for each landmark-private scheme pass the landmark-sum check
and an exact (rational) brute force. Every 10th step and at the end the test waits until the preview for
the current state is ready (``session.is_preview_current``) and checks that the GUI's own preview holds and
is the one for the current state. At the end the whole history is undone and redone.
"""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import pytest
from PySide6.QtCore import Qt

from lmdk_gui.core.engine.pipeline import compute_release
from lmdk_gui.core.kernel.guarantee import check_guarantee
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import LANDMARK_SCHEMES
from tests.privacy.exact import exact_worst

from .conftest import wait_preview
from .helpers import fake_click, fake_drag

STEPS = 1000
ACTIONS = {  # relative weights
    "click": 30, "shift_drag": 10, "ctrl_drag": 8, "pan": 4, "zoom": 6, "undo": 18, "redo": 10,
    "epsilon": 5, "adaptive": 3, "reroll": 2, "clear": 1, "invert": 1,
}
EPSILONS = [0.001, 0.01, 0.05, 0.3, 1.0, 2.5, 10.0, 100.0, 1000.0]


class _Checker:
    """The independent check of the session's current state (no GUI code involved)."""

    def __init__(self, session) -> None:
        self.session = session
        self._noise: dict[int, UnitNoise] = {}
        self.checks = 0

    def releases(self):
        s = self.session
        lm = s.landmarks
        n = s.series.n
        assert lm.dtype.kind == "i" and np.all(np.diff(lm) > 0) and (lm.size == 0 or (lm[0] >= 0 and lm[-1] < n))
        noise = self._noise.get(s.seed)
        if noise is None:
            noise = self._noise[s.seed] = UnitNoise(n, s.seed)
        return {sch: compute_release(s.series, lm, s.settings, sch, noise) for sch in LANDMARK_SCHEMES}

    def check(self) -> dict:
        rels = self.releases()
        eps = self.session.settings.epsilon
        for name, r in rels.items():
            b = r.budgets
            assert np.all(b >= 0) and not np.any(np.isnan(b)), name
            assert check_guarantee(b, r.landmarks, eps).holds, (name, r.guarantee)
            assert exact_worst(b, r.landmarks) <= Fraction(eps), name
        self.checks += 1
        return rels

    def check_preview(self, qtbot, window) -> None:
        wait_preview(qtbot, window)
        s = window.session
        rels = self.check()
        for name in LANDMARK_SCHEMES:
            p = s.preview[name]
            assert p.guarantee.holds, (name, p.guarantee)
            assert np.array_equal(p.release.landmarks, s.landmarks), name  # the preview is for this state
            assert p.release.epsilon == s.settings.epsilon
            np.testing.assert_array_equal(p.budgets, rels[name].budgets, err_msg=name)


def _visible_rows(window) -> tuple[int, int]:
    (x0, x1), _ = window.series_plot.getPlotItem().vb.viewRange()
    n = window.session.n
    return max(0, int(np.ceil(x0))), min(n - 1, int(np.floor(x1)))


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_burst_of_random_steps_keeps_the_guarantee(qtbot, window):
    rng = np.random.default_rng(2024)
    s = window.session
    n = s.n
    vb = window.series_plot.getPlotItem().vb
    panel = window.settings_panel
    checker = _Checker(s)
    names = list(ACTIONS)
    weights = np.array([ACTIONS[a] for a in names], dtype=float)
    counts = dict.fromkeys(names, 0)
    vb.setXRange(0, 150, padding=0)
    qtbot.wait(10)
    t0 = time.perf_counter()
    for step in range(STEPS):
        action = names[rng.choice(len(names), p=weights / weights.sum())]
        counts[action] += 1
        before = s.landmarks.copy()
        lo, hi = _visible_rows(window)
        if action == "click":
            row = int(rng.integers(lo, hi + 1))
            fake_click(qtbot, window, row)
            changed = np.setxor1d(before, s.landmarks)
            assert changed.size == 1, (step, row, changed)  # exactly one event toggled ...
            if hi - lo <= 200:
                assert changed[0] == row, (step, row, changed)  # ... the clicked one, when it can be told apart
        elif action in ("shift_drag", "ctrl_drag"):
            a, b = sorted(rng.uniform(lo, hi, 2))
            mods = Qt.KeyboardModifier.ShiftModifier if action == "shift_drag" else Qt.KeyboardModifier.ControlModifier
            fake_drag(window, a, b, mods)
            px = vb.viewPixelSize()[0]  # the drag lands on whole pixels: allow one pixel at each end
            rows = np.arange(int(np.ceil(a + px)), int(np.floor(b - px)) + 1)
            rows = rows[(rows >= 0) & (rows < n)]
            if action == "shift_drag":
                assert np.all(np.isin(rows, s.landmarks)), step
            else:
                assert not np.any(np.isin(rows, s.landmarks)), step
        elif action == "pan":
            a = float(rng.uniform(lo, hi))
            fake_drag(window, a, a + float(rng.uniform(-50, 50)), Qt.KeyboardModifier.NoModifier)
            assert np.array_equal(before, s.landmarks), step  # panning never edits
        elif action == "zoom":
            width = float(rng.choice([20, 60, 150, 400, n]))
            start = float(rng.uniform(-10, max(n - width, 0)))
            vb.setXRange(start, start + width, padding=0)
        elif action == "undo":
            window.undo_action.trigger()
        elif action == "redo":
            window.redo_action.trigger()
        elif action == "epsilon":
            panel.eps_spin.setValue(float(rng.choice(EPSILONS)))
        elif action == "adaptive":
            spin = [panel.inc_spin, panel.dec_spin, panel.min_spin][int(rng.integers(3))]
            spin.setValue(float(rng.uniform(spin.minimum(), spin.maximum())))
        elif action == "reroll":
            panel.reroll_button.click()
        elif action == "clear":
            window.clear_action.trigger()
        elif action == "invert":
            window.invert_action.trigger()
        checker.check()
        if step % 10 == 9:
            checker.check_preview(qtbot, window)
        elif step % 3 == 0:
            qtbot.wait(1)  # let the event loop run now and then, as a user's pauses would
    checker.check_preview(qtbot, window)
    elapsed = time.perf_counter() - t0
    print(f"\n[burst] {STEPS} steps in {elapsed:.1f} s: {counts}; {checker.checks} independent checks, "
          f"{s.landmarks.size} landmarks, undo stack {s.undo_stack.count()}")
    assert all(counts[a] > 0 for a in names), counts

    # The whole history unwinds to the empty start and replays to the same end state.
    final = s.landmarks.copy()
    while s.undo_stack.canUndo():
        window.undo_action.trigger()
        checker.check()
    assert s.landmarks.size == 0
    while s.undo_stack.canRedo():
        window.redo_action.trigger()
    assert np.array_equal(s.landmarks, final)
    checker.check_preview(qtbot, window)
    # Still alive and drawing.
    assert not window.grab().isNull()
