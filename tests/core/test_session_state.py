"""The session's evented state (core/engine/state.py) without Qt: one event per changed field, none for a no-op."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine.state import SessionState, frozen_rows
from lmdk_gui.core.kernel.dummies import DummySettings


def _record(state: SessionState) -> list[tuple[str, object, object]]:
    seen: list[tuple[str, object, object]] = []
    for name in state.events:
        state.events[name].connect(lambda new, old, name=name: seen.append((name, new, old)))
    return seen


def test_one_event_per_changed_field_and_none_for_a_no_op():
    state = SessionState()
    seen = _record(state)
    series = Series.from_arrays(np.arange(10.0))
    state.series = series
    state.landmarks = frozen_rows(np.array([2, 5], dtype=np.int64))
    state.settings = state.settings.with_(epsilon=2.0)
    state.dummy_settings = DummySettings(generator="heuristic")
    state.visible_schemes = state.visible_schemes | {"event"}
    assert [name for name, _, _ in seen] == ["series", "landmarks", "settings", "dummy_settings", "visible_schemes"]
    assert seen[2][1].epsilon == 2.0 and seen[2][2].epsilon == 1.0  # (new, old)
    seen.clear()
    state.series = series
    state.landmarks = frozen_rows(np.array([2, 5], dtype=np.int64))  # another array, the same rows
    state.settings = state.settings.with_(epsilon=2.0)
    state.dummy_settings = DummySettings(generator="heuristic")
    state.visible_schemes = frozenset(state.visible_schemes)
    state.seed = state.seed
    assert seen == []
    state.landmarks = frozen_rows(np.array([2, 6], dtype=np.int64))
    assert [name for name, _, _ in seen] == ["landmarks"]


def test_values_are_immutable_and_the_snapshot_shares_them():
    state = SessionState(series=Series.from_arrays(np.arange(10.0)))
    state.landmarks = frozen_rows(np.array([1, 3], dtype=np.int64))
    with pytest.raises(ValueError):
        state.landmarks[0] = 4
    with pytest.raises(FrozenInstanceError):
        state.settings.epsilon = 3.0  # type: ignore[misc]
    state.dummies_enabled = True
    snap = state.snapshot()
    assert snap.landmarks is state.landmarks and snap.settings is state.settings
    assert snap.dummies == state.dummy_settings and snap.seed == state.seed and snap.runs == state.runs
    state.dummies_enabled = False
    assert state.snapshot().dummies is None
    with pytest.raises(ValueError):
        SessionState().snapshot()
