"""Errors summed per block (issue 15): the numeric kernel that sums |value − truth| as it goes gives the very
sums of the per-event errors, the MAE of a release patched in some rows is its whole sum's, bit for bit, and
the sum stays as accurate as numpy's."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from lmdk_gui.core.analysis import metrics
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine import pipeline
from lmdk_gui.core.engine.release import Release


def _release(values: np.ndarray) -> Release:
    n = values.shape[0]
    return Release(scheme="uniform", kind="numeric", epsilon=1.0, landmarks=np.zeros(0, np.int64),
                   budgets=np.full(n, 0.5), values=values, approximated=np.zeros(n, np.bool_), guarantee=None)


@pytest.mark.parametrize("n", [1, 3, 4, 5, 4095, 4096, 4097, 10_001])
def test_numeric_sums_equal_the_sums_of_the_per_event_errors(n):
    rng = np.random.default_rng(n)
    x, v = rng.normal(0, 10, n), rng.normal(0, 10, n)
    k = -(-n // metrics.ERROR_BLOCK)
    fused, plain = np.empty(k), np.empty(k)
    pipeline.abs_error_sums(v, x, 0, metrics.ERROR_BLOCK, fused)
    pipeline.block_sums(pipeline.KINDS["numeric"].error(x, v), metrics.ERROR_BLOCK, plain)
    assert fused.tobytes() == plain.tobytes()
    s = Series.from_arrays(x)
    got = metrics.mae(s, _release(v))
    assert got == metrics.mean_error(np.abs(v - x))
    assert got == pytest.approx(float(np.mean(np.abs(v - x))), rel=1e-13)


def test_a_patched_release_scores_as_a_whole_one_and_nan_is_left_out():
    rng = np.random.default_rng(3)
    n = 3 * metrics.ERROR_BLOCK + 17
    s = Series.from_arrays(rng.normal(0, 1, n))
    a = _release(rng.normal(0, 1, n))
    mae_a, sums_a = metrics.mae_and_sums(s, a)
    for lo, hi in [(0, 1), (4090, 4100), (n - 5, n), (100, 2 * metrics.ERROR_BLOCK + 3), (5, 5)]:
        values = a.values.copy()
        values[lo:hi] += 1.0
        b = dataclasses.replace(a, values=values)
        patched = metrics.mae_and_sums(s, b, patch=(sums_a, (lo, hi)))
        whole = metrics.mae_and_sums(s, b)
        assert patched[0] == whole[0] and patched[1].tobytes() == whole[1].tobytes()
        assert (patched[0] == mae_a) == (hi == lo)
    values = a.values.copy()
    values[7] = np.nan
    err = np.abs(values - s.values)
    assert metrics.mae(s, dataclasses.replace(a, values=values)) == pytest.approx(float(np.nanmean(err)), rel=1e-15)
    assert np.isnan(metrics.mean_error(np.full(3, np.nan))) and np.isnan(metrics.mean_error(np.zeros(0)))
