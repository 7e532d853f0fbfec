"""Equal budgets (Uniform, Event, User; Skip and Balanced without landmarks) are one float seen n times, a
read-only zero-stride view (``release.constant_budgets``), to keep series-sized arrays out of every preview.
The independent check's verdict, the preview release and its flags, summaries, error and denoised values,
and a keyed export are bit for bit those of the same budgets as a materialised array."""

from __future__ import annotations

import numpy as np
import pytest

from lmdk_gui.core.analysis import metrics
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine import pipeline, release
from lmdk_gui.core.engine.lazyjit import interpreted
from lmdk_gui.core.kernel.guarantee import allocatable, check_guarantee
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import PrivacySettings
from lmdk_gui.core.publish import export as export_mod
from lmdk_gui.core.publish.export import ExportOptions, export_release
from tests.keys import test_key

from .kinds import example_series

N = 400
FIXED = ("uniform", "skip", "balanced", "event", "user")
LANDMARKS = {"none": np.zeros(0, np.int64), "some": np.array([0, 7, 8, 150, 399])}


def materialised(scheme, n, landmarks, eps_a):
    """The same allocation as separate floats (what fixed_budgets returned before)."""
    return np.ascontiguousarray(release.fixed_budgets(scheme, n, landmarks, eps_a))


def _series(kind: str) -> Series:
    return example_series(kind, N, seed=11)


def _settings(kind: str, public: bool) -> PrivacySettings:
    if not public:
        return PrivacySettings(epsilon=0.8)
    extra = {"numeric": {"bounds": (2.0, 8.0)}, "location": {"radius_m": 50.0},
             "categorical": {"categories": ("a", "b", "c", "d")}}[kind]
    return PrivacySettings(epsilon=0.8, **extra)


@pytest.mark.parametrize("which", list(LANDMARKS))
@pytest.mark.parametrize("scheme", FIXED)
def test_equal_budgets_are_a_read_only_view(scheme, which):
    lm = LANDMARKS[which]
    b = release.fixed_budgets(scheme, N, lm, 0.9)
    constant = scheme in ("uniform", "event", "user") or which == "none"
    assert release.is_constant(b) == constant
    assert b.strides == ((0,) if constant else (8,)) and b.dtype == np.float64 and b.shape == (N,)
    if constant:
        assert not b.flags.writeable
    assert np.array_equal(b, materialised(scheme, N, lm, 0.9))


@pytest.mark.parametrize("value", [0.9 / 6, 0.9, 0.9 / N, 2.0, 0.0])
def test_check_gives_the_same_verdict(value):
    lm = LANDMARKS["some"]
    view = release.constant_budgets(N, value)
    assert check_guarantee(view, lm, 1.0) == check_guarantee(np.full(N, value), lm, 1.0)
    assert check_guarantee(view, lm[:0], 1.0) == check_guarantee(np.full(N, value), lm[:0], 1.0)


def _same_release(a: release.Release, b: release.Release) -> None:
    assert a.values.dtype == b.values.dtype and a.values.tobytes() == b.values.tobytes()
    assert np.array_equal(a.approximated, b.approximated) and np.array_equal(a.budgets, b.budgets)
    assert a.guarantee == b.guarantee
    for name in ("mean_budget", "max_budget", "approximated_share"):
        assert np.float64(getattr(a, name)).tobytes() == np.float64(getattr(b, name)).tobytes(), name


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("public", [False, True])
@pytest.mark.parametrize("kind", ["numeric", "location", "categorical"])
def test_preview_error_and_denoising_are_the_same(kind, public, interpret):
    series, settings = _series(kind), _settings(kind, public)
    noise = UnitNoise(N, 3)
    with interpreted(interpret):
        for scheme in FIXED:
            for lm in LANDMARKS.values():
                view = pipeline.run_preview(pipeline.plan(series, lm, settings, scheme), noise)
                full = pipeline.run_preview(pipeline.plan(series, lm, settings, scheme, budgets_fn=materialised),
                                            noise)
                _same_release(view, full)
                ev, ef = metrics.mae_and_sums(series, view, settings), metrics.mae_and_sums(series, full, settings)
                assert np.float64(ev[0]).tobytes() == np.float64(ef[0]).tobytes()
                assert ev[1].tobytes() == ef[1].tobytes()
                dv, df = pipeline.denoised_values(view, settings), pipeline.denoised_values(full, settings)
                assert dv is not None and df is not None and dv.values.tobytes() == df.values.tobytes()


def test_a_patched_preview_is_the_same():
    """The preview's memo compares and patches budgets (Skip after a click): a view against a materialised
    previous release, and the reverse, give the full recompute's bits."""
    series, settings = _series("numeric"), _settings("numeric", True)
    noise = UnitNoise(N, 3)
    for scheme in FIXED:
        for a, b in ((release.fixed_budgets, materialised), (materialised, release.fixed_budgets)):
            prev = pipeline.run_preview(pipeline.plan(series, [], settings, scheme, budgets_fn=a), noise)
            p = pipeline.plan(series, [5], settings, scheme, budgets_fn=b)
            _same_release(pipeline.run_preview(p, noise, prev), pipeline.run_preview(p, noise))


@pytest.mark.parametrize("scheme,landmarks", [("uniform", [3, 40]), ("user", [3, 40]), ("event", []),
                                              ("skip", []), ("balanced", [])])
def test_keyed_export_is_the_same(tmp_path, monkeypatch, scheme, landmarks):
    series = _series("numeric")
    opts = ExportOptions(scheme, seed=test_key(5))
    export_release(series, landmarks, PrivacySettings(), tmp_path / "view.csv", opts)
    monkeypatch.setattr(export_mod, "fixed_budgets", materialised)
    export_release(series, landmarks, PrivacySettings(), tmp_path / "full.csv", opts)
    assert (tmp_path / "view.csv").read_bytes() == (tmp_path / "full.csv").read_bytes()
    assert release.is_constant(release.fixed_budgets(scheme, N, np.array(landmarks, np.int64),
                                                     allocatable(1.0, N)))


@pytest.mark.parametrize("values", [(0.25, 0.25), (0.25, 0.5), (np.nan, np.nan), (0.0, -0.0), (np.inf, np.inf)])
def test_equal_budget_views_compare_and_bound_as_their_arrays(values):
    """The shortcuts for views of one value (a click compares Event's and User's budgets with the last ones,
    and the summaries take extremes) give what the passes over the materialised arrays give; the check, which
    has no shortcut, gives one verdict for both."""
    a, b = (release.constant_budgets(N, v) for v in values)
    full_a, full_b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    assert release.is_constant(a) and not release.is_constant(full_a)
    assert pipeline.budget_span(a, b) == pipeline.diff_span(full_a, full_b)
    assert pipeline.budget_span(a, full_b) == pipeline.diff_span(full_a, full_b)
    lm = np.array([3, 40], np.int64)
    ga, gf = check_guarantee(a, lm, 1.0), check_guarantee(full_a, lm, 1.0)
    assert (ga.holds, ga.worst_row, ga.reason) == (gf.holds, gf.worst_row, gf.reason)
