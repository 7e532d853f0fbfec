"""The R-run average stops within one step of a cancel (issue 15: at 10^7 events a release, an MAE or a
denoising pass each take seconds, and the click that cancelled must not wait for the rest of a scheme)."""

from __future__ import annotations

import numpy as np
import pytest

from lmdk_gui.core.analysis import metrics
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, PrivacySettings


def _series(n: int = 400) -> Series:
    t = (np.datetime64("2020-01-01T00:00:00") + np.arange(n) * np.timedelta64(60, "s")).astype("datetime64[ns]")
    return Series(times=t, values=np.random.default_rng(1).random(n) * 10, kind="numeric")


@pytest.mark.parametrize("cancel_in", ["release", "mae", "denoised_mae"])
@pytest.mark.parametrize("at_call", [1, 4, 6, 9, 12])
def test_no_step_runs_after_cancel(monkeypatch, cancel_in, at_call):
    calls: list[str] = []
    flag = [False]

    def wrap(name, fn):
        def inner(*args, **kwargs):
            assert not flag[0], f"{name} ran after the cancel"
            calls.append(name)
            out = fn(*args, **kwargs)
            if name == cancel_in and calls.count(name) == at_call:
                flag[0] = True  # the click arrives while this step runs
            return out
        return inner

    monkeypatch.setattr(metrics, "compute_release", wrap("release", metrics.compute_release))
    monkeypatch.setattr(metrics, "mae", wrap("mae", metrics.mae))
    monkeypatch.setattr(metrics, "denoised_mae", wrap("denoised_mae", metrics.denoised_mae))
    s = _series()
    lm = np.arange(0, s.n, 7)
    den = cancel_in != "mae"  # (denoised_mae calls mae itself: count the average's own MAE calls alone)
    got = metrics.mae_over_runs(s, lm, PrivacySettings(), runs=4, seed=3, should_cancel=lambda: flag[0],
                                denoise=den)
    assert flag[0]
    # only complete runs count, and they equal an uncancelled average's first runs
    done = got["uniform"].runs
    k = len(ALL_SCHEMES)
    assert done == ((at_call - 1) // k if cancel_in == "release" else at_call // k)  # a run's last step ends it
    monkeypatch.undo()
    if done:
        full = metrics.mae_over_runs(s, lm, PrivacySettings(), runs=done, seed=3, denoise=den)
        for k, v in got.items():
            assert v.mean == full[k].mean
            assert v.mean_denoised == full[k].mean_denoised or np.isnan(full[k].mean_denoised)


def test_uncancelled_average_unchanged():
    s = _series()
    lm = np.arange(0, s.n, 5)
    a = metrics.mae_over_runs(s, lm, PrivacySettings(), runs=3, seed=2, should_cancel=lambda: False)
    b = metrics.mae_over_runs(s, lm, PrivacySettings(), runs=3, seed=2)
    assert {k: (v.mean, v.std, v.runs) for k, v in a.items()} == {k: (v.mean, v.std, v.runs) for k, v in b.items()}
    assert all(v.runs == 3 for v in a.values())
