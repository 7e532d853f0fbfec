"""Issue 42, findings 5, 7 and 9: the sidecar is a function of public settings only (never of |L|), bounds
taken from the data are said to be, and denoised Skip says what its interpolated runs show."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.kernel.dummies import DummySettings
from lmdk_gui.core.kernel.settings import PrivacySettings
from lmdk_gui.core.publish.export import ExportOptions, export_release
from tests.cli.helpers import run
from tests.conftest import SAMPLES

ENERGY = SAMPLES / "energy_hue_2013_jan.csv"


@pytest.fixture(scope="module")
def energy():
    return load_series(ENERGY)


def _doc(path):
    doc = json.loads(path.with_name(path.name + ".json").read_text())
    doc.pop("created")
    return doc


def _landmarks(m: int, n: int) -> np.ndarray:
    """m landmarks ending at the last event (Adaptive's published sum was m/(m+1) then)."""
    return np.arange(n - m, n)


@pytest.mark.parametrize("dummies", [False, True])
@pytest.mark.parametrize("scheme", ["uniform", "skip", "adaptive", "balanced", "user"])
def test_the_sidecar_is_the_same_for_37_and_38_landmarks(tmp_path, energy, scheme, dummies):
    opts = ExportOptions(scheme, denoise=False,
                         dummies=DummySettings(share=0.2) if dummies else None)
    docs = []
    for m in (37, 38):
        out = tmp_path / f"r{m}.csv"
        export_release(energy, _landmarks(m, energy.n), PrivacySettings(epsilon=1.0), out, opts)
        docs.append(_doc(out))
    assert docs[0] == docs[1]
    expected = 1.0 if not dummies else docs[0]["epsilon_selection"]["epsilon_release"]
    assert docs[0]["landmark_sum"] == pytest.approx(expected)


@pytest.mark.parametrize("scheme", ["uniform", "skip", "adaptive"])
def test_the_denoised_sidecar_holds_no_figure_estimated_from_the_release(tmp_path, energy, scheme):
    """Denoised: post_processing describes the method; no count and no figure estimated from the raw
    release with its L-dependent budgets."""
    docs = []
    for m in (37, 38):
        out = tmp_path / f"d{m}.csv"
        export_release(energy, _landmarks(m, energy.n), PrivacySettings(epsilon=1.0, bounds=(0.0, 2.0)), out,
                       ExportOptions(scheme))
        docs.append(_doc(out))
    assert docs[0] == docs[1]
    assert all(isinstance(v, str | bool) or v is None for v in docs[0]["post_processing"].values())


def test_bounds_from_data_are_flagged_in_the_sidecar_and_statement(tmp_path, energy):
    lo, hi = float(energy.values.min()), float(energy.values.max())
    out = tmp_path / "r.csv"
    export_release(energy, [3], PrivacySettings(bounds=(lo, hi), bounds_from_data=True), out,
                   ExportOptions("uniform"))
    doc = _doc(out)
    assert doc["bounds"] == [lo, hi] and doc["bounds_from_data"] is True
    assert "the data's own minimum and maximum" in doc["statement"]
    export_release(energy, [3], PrivacySettings(bounds=(0.0, 5.0)), out, ExportOptions("uniform", force=True))
    doc = _doc(out)
    assert doc["bounds_from_data"] is False and "own minimum" not in doc["statement"]


def test_the_cli_uses_data_bounds_only_when_told(capsys, tmp_path, energy):
    lo, hi = float(energy.values.min()), float(energy.values.max())
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, "export", str(ENERGY), "-o", str(out), "--scheme", "uniform", "--epsilon", "1")
    assert code == 0, err
    doc = _doc(out)
    assert doc["bounds"] is None and doc["bounds_from_data"] is False
    code, _, err = run(capsys, "export", str(ENERGY), "-o", str(out), "--scheme", "uniform", "--epsilon", "1",
                       "--bounds-from-data", "--force")
    assert code == 0, err
    doc = _doc(out)
    assert doc["bounds"] == [lo, hi] and doc["bounds_from_data"] is True
    assert "minimum and maximum" in err  # the warning, where the choice is made
    code, _, err = run(capsys, "export", str(ENERGY), "-o", str(out), "--scheme", "uniform", "--epsilon", "1",
                       "--bounds-from-data", "--bounds", "0", "5", "--force")
    assert code == 2 and "--bounds" in err


@pytest.mark.parametrize("dummies", [False, True])
def test_denoised_skip_says_its_interpolated_runs_show_the_landmarks(tmp_path, energy, dummies):
    out = tmp_path / "r.csv"
    export_release(energy, [3, 4, 5, 40], PrivacySettings(), out,
                   ExportOptions("skip", dummies=DummySettings(share=0.2) if dummies else None))
    statement = _doc(out)["statement"]
    assert "straight-line stretches (interpolated runs)" in statement
    assert ("dummy landmarks" in statement.split("interpolated runs")[1])
    export_release(energy, [3, 4, 5, 40], PrivacySettings(), out, ExportOptions("skip", denoise=False,
                                                                                  force=True))
    assert "interpolated runs" not in _doc(out)["statement"]


def test_projects_keep_the_bounds_from_data_flag(tmp_path, energy):
    from lmdk_gui.core.data.project import Project, load_project, save_project

    st = PrivacySettings(bounds=(0.0, 3.0), bounds_from_data=True)
    save_project(tmp_path / "p.lmdk.json", Project.from_series(energy, [3], st))
    assert load_project(tmp_path / "p.lmdk.json").settings.bounds_from_data is True
    save_project(tmp_path / "q.lmdk.json", Project.from_series(energy, [3], st.with_(bounds_from_data=False)))
    assert load_project(tmp_path / "q.lmdk.json").settings.bounds_from_data is False


def _near_zero(tmp_path):
    """An energy-like series: non-negative, mostly near 0 (standby), so a noisy release dips below 0."""
    rng = np.random.default_rng(7)
    t = np.datetime64("2024-01-01T00:00") + np.arange(500) * np.timedelta64(1, "h")
    v = np.abs(rng.normal(0.0, 0.05, t.size)).round(3)
    path = tmp_path / "standby.csv"
    path.write_text("timestamp,kwh\n" + "".join(f"{a},{b}\n" for a, b in zip(t.astype(str), v, strict=True)))
    return path


def test_a_non_negative_series_gets_the_question_and_the_bound_is_public(capsys, tmp_path):
    """Issue 44: `lmdk export` of an all-non-negative series asks about a public lower bound 0 (a hint, nothing
    derived); given, the denoised release has no negative value and the sidecar says the bound, which is
    the user's public fact, not the data's minimum."""
    src = _near_zero(tmp_path)
    out = tmp_path / "r.csv"
    args = ("export", str(src), "-o", str(out), "--scheme", "uniform", "--epsilon", "0.2")
    code, _, err = run(capsys, *args)
    assert code == 0, err
    assert "values cannot be negative?" in err and "--lower-bound 0" in err
    assert _doc(out)["lower_bound"] is None
    code, _, err = run(capsys, *args, "--lower-bound", "0", "--force")
    assert code == 0, err
    assert "values cannot be negative?" not in err
    doc = _doc(out)
    assert doc["lower_bound"] == 0.0 and doc["bounds"] is None and doc["bounds_from_data"] is False
    assert np.loadtxt(out, delimiter=",", skiprows=1, usecols=1).min() >= 0.0
    code, _, err = run(capsys, *args, "--bounds", "0", "1", "--force")
    assert code == 0 and "values cannot be negative?" not in err


@pytest.mark.parametrize("lower, aggregate, kept", [(0.0, "sum", 0.0), (0.0, "mean", 0.0), (0.02, "sum", None),
                                                    (0.02, "mean", 0.02)])
def test_a_period_release_keeps_a_lower_bound_only_where_it_holds(tmp_path, lower, aggregate, kept):
    """Per period: a mean of values ≥ lo is ≥ lo; a sum of non-negative values is ≥ 0, but lo·|P_j| differs
    per period, so a sum keeps a lower bound only when it is 0."""
    from lmdk_gui.core.data.periods import apply_resolution

    series = load_series(_near_zero(tmp_path))
    per, lm, st = apply_resolution(series, [5], PrivacySettings(lower_bound=lower), "1D", aggregate)
    assert st.lower_bound == kept
    out = tmp_path / "p.csv"
    export_release(per, lm, st, out, ExportOptions("uniform"))
    assert _doc(out)["lower_bound"] == kept
    if kept is not None:
        assert np.loadtxt(out, delimiter=",", skiprows=1, usecols=1).min() >= kept
