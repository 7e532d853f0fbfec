"""The session answers its evented state (core/engine/state.py): each gesture — a setter, an undo step, a new series
that sets several fields — gives one submitted preview and one of each Qt signal it concerns, whether it came
through a setter or a direct assignment to ``session.state``."""

from __future__ import annotations

import numpy as np
import pytest

from lmdk_gui.core.data.series import Series
from lmdk_gui.ui.window.session import Session

SIGNALS = ("seriesChanged", "landmarksChanged", "settingsChanged", "dummiesChanged", "resolutionChanged")


@pytest.fixture
def counted(qtbot, monkeypatch):
    s = Session()
    counts = dict.fromkeys((*SIGNALS, "submits"), 0)
    for name in SIGNALS:
        getattr(s, name).connect(lambda name=name: counts.__setitem__(name, counts[name] + 1))
    submit = s._submit

    def counting_submit(*args) -> None:
        counts["submits"] += 1
        submit(*args)
    monkeypatch.setattr(s, "_submit", counting_submit)
    yield s, counts
    s.shutdown()


def _taken(counts: dict[str, int]) -> dict[str, int]:
    got = {k: v for k, v in counts.items() if v}
    for k in counts:
        counts[k] = 0
    return got


def test_a_new_series_is_one_gesture(counted):
    s, counts = counted
    rng = np.random.default_rng(0)
    s.set_series(Series.from_arrays(rng.random(300)), landmarks=[3, 9], settings=s.settings.with_(epsilon=2.0),
                 seed=7)
    assert _taken(counts) == {"seriesChanged": 1, "landmarksChanged": 1, "settingsChanged": 1, "submits": 1}
    assert s.seed == 7 and s.epsilon == 2.0 and s.landmarks.tolist() == [3, 9] and not s.is_dirty()
    s.set_series(s.series)  # opened again: a new start all the same (empty landmarks, no undo history)
    assert _taken(counts) == {"seriesChanged": 1, "landmarksChanged": 1, "settingsChanged": 1, "submits": 1}
    assert s.landmarks.size == 0


def test_each_setter_and_undo_step_answers_once_and_a_no_op_not_at_all(counted):
    s, counts = counted
    s.set_series(Series.from_arrays(np.random.default_rng(1).random(300)), landmarks=[3])
    _taken(counts)
    s.toggle_landmark(5)
    assert _taken(counts) == {"landmarksChanged": 1, "submits": 1}
    s.undo_stack.undo()
    assert _taken(counts) == {"landmarksChanged": 1, "submits": 1} and s.landmarks.tolist() == [3]
    s.undo_stack.redo()
    assert _taken(counts) == {"landmarksChanged": 1, "submits": 1} and s.landmarks.tolist() == [3, 5]
    s.set_landmarks([3, 5])
    s.set_epsilon(s.epsilon)
    s.set_seed(s.seed)
    s.set_dummy_settings(s.dummy_settings)
    s.set_scheme_visible("uniform", "uniform" in s.visible_schemes)
    assert _taken(counts) == {} and s.undo_stack.count() == 1
    s.set_epsilon(3.0)
    assert _taken(counts) == {"settingsChanged": 1, "submits": 1} and s.is_dirty()
    s.set_dummies_enabled(True)
    assert _taken(counts) == {"dummiesChanged": 1, "submits": 1}
    s.set_resolution("10s")
    assert _taken(counts) == {"resolutionChanged": 1, "submits": 1}


def test_assigning_the_state_directly_drives_the_session(counted, qtbot):
    s, counts = counted
    s.set_series(Series.from_arrays(np.random.default_rng(2).random(300)))
    qtbot.waitUntil(s.is_preview_current, timeout=30_000)
    _taken(counts)
    s.mark_clean()
    s.state.seed = 11
    assert _taken(counts) == {"settingsChanged": 1, "submits": 1}
    assert s.is_dirty() and not s.is_preview_current()
    qtbot.waitUntil(s.is_preview_current, timeout=30_000)
    assert s.snapshot().seed == 11


def test_landmarks_assigned_directly_drop_the_undo_steps(counted):
    s, counts = counted
    s.set_series(Series.from_arrays(np.random.default_rng(3).random(300)))
    s.toggle_landmark(4)
    s.mark_clean()
    s.state.landmarks = np.array([7, 8], dtype=np.int64)
    assert s.undo_stack.count() == 0 and s.is_dirty()  # undoing the click's rows would no longer apply
    assert s.landmarks.tolist() == [7, 8]
