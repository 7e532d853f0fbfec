"""The preview's later-stage hook (issue 15): raw releases are announced by previewChanged first; a stage set
as ``Session.post_stage`` runs afterwards on its own thread and arrives with postChanged, for the current
state only."""

from __future__ import annotations

import threading

import numpy as np

from lmdk_gui.core.data.series import Series
from lmdk_gui.ui.window.session import Session


def test_post_stage_arrives_after_the_raw_preview(qtbot):
    s = Session()
    gate = threading.Event()
    order: list[str] = []
    s.previewChanged.connect(lambda: order.append("preview"))
    s.postChanged.connect(lambda: order.append("post"))

    def stage(snap, result, *, should_cancel):
        gate.wait(10)  # a slow stage must not hold back the raw preview
        return {k: float(np.mean(v.values)) for k, v in result.preview.items()}, snap.landmarks.copy()

    s.post_stage = stage
    s.set_series(Series.from_arrays(np.arange(200.0)), landmarks=[3, 50])
    qtbot.waitUntil(s.is_preview_current, timeout=30_000)
    assert order == ["preview"] and s.post is None  # drawn while the stage still runs
    gate.set()
    with qtbot.waitSignal(s.postChanged, timeout=30_000):
        pass
    means, lm = s.post
    assert order == ["preview", "post"]
    assert np.array_equal(lm, [3, 50]) and set(means) == set(s.preview)
    s.toggle_landmark(7)  # a new state forgets the old stage's result
    assert s.post is None or not s.is_preview_current()
    qtbot.waitUntil(lambda: s.post is not None and 7 in s.post[1], timeout=30_000)
    s.shutdown()
