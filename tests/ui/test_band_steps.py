"""The series plot's landmark band from the rows alone equals the step outline of the full n-value band."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_gui.ui.views.plots import band_steps, step_runs


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 60), data=st.data())
def test_band_steps_equals_step_runs_of_the_full_band(n, data):
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1)))), dtype=np.int64)
    top = np.full(n, -1.0)
    top[rows] = 2.0
    want = step_runs(top)
    got = band_steps(rows, n, -1.0, 2.0)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
