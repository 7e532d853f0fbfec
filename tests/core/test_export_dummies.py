"""Export with dummy landmarks (issue 6): L' and ε − ε_sel everywhere, fresh selection, a sidecar that says
what was spent and never which events are dummies."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.kernel.dummies import (
    DummySettings,
    release_record,
    select_for_release,
    split_budget,
)
from lmdk_gui.core.kernel.guarantee import GuaranteeError, check_guarantee
from lmdk_gui.core.kernel.settings import PrivacySettings
from lmdk_gui.core.publish.export import (
    Cancelled,
    ExportError,
    ExportOptions,
    export_key,
    export_release,
    key_selection_words,
    release_digest,
)
from lmdk_gui.core.publish.writers import SIDECAR_KEYS
from tests.conftest import SAMPLES
from tests.keys import test_key

ENERGY = SAMPLES / "energy_hue_2013_jan.csv"
LM = np.r_[np.arange(10, 60), np.arange(300, 320)]
RECORD_KEYS = {"epsilon", "share", "mechanism", "generator", "utility", "epsilon_release"}


@pytest.fixture(scope="module")
def energy():
    return load_series(ENERGY)


def expected_selection(series, lm, eps, dummies, seed, scheme):
    """The selection a keyed export draws (its stream is derived from the key test_key(seed) bound to the
    release: the series, landmarks, settings, scheme and dummies)."""
    digest = release_digest(series, lm, PrivacySettings(epsilon=eps), ExportOptions(scheme, dummies=dummies))
    return select_for_release(series.n, lm, eps, dummies,
                              words=key_selection_words(export_key(test_key(seed)), digest))


def numbers_in(doc) -> list[float]:
    out = []
    if isinstance(doc, dict):
        for v in doc.values():
            out += numbers_in(v)
    elif isinstance(doc, list):
        for v in doc:
            out += numbers_in(v)
    elif isinstance(doc, (int, float)) and not isinstance(doc, bool):
        out.append(doc)
    return out


@pytest.mark.parametrize("scheme", ["uniform", "skip", "adaptive"])
def test_release_uses_lprime_and_remaining_epsilon(tmp_path, energy, scheme):
    out = tmp_path / "r.csv"
    d = DummySettings("partitioned", 0.01, "count")
    res = export_release(energy, LM, PrivacySettings(epsilon=1.0), out,
                         ExportOptions(scheme, include_budget=True, seed=test_key(11), dummies=d))
    sel = expected_selection(energy, LM, 1.0, d, 11, scheme)
    assert sel.dummies.size > 0
    eps_sel, eps_rem = split_budget(1.0, 0.01)
    b = pd.read_csv(out)["epsilon"].to_numpy()
    # The guarantee against L' and ε − ε_sel, and so against L and ε.
    g = check_guarantee(b, sel.landmarks, eps_rem)
    assert g.holds and res.guarantee.holds and res.guarantee.epsilon == eps_rem
    assert res.guarantee.worst == pytest.approx(g.worst)
    assert check_guarantee(b, LM, 1.0).holds
    if scheme == "skip":  # the zeros are exactly L': the release ran on L', not on L
        assert np.array_equal(np.flatnonzero(b == 0), sel.landmarks)
    if scheme == "uniform":
        assert b[0] == pytest.approx(eps_rem / (sel.landmarks.size + 1), rel=1e-9)
    side = json.loads((tmp_path / "r.csv.json").read_text())
    assert tuple(side) == SIDECAR_KEYS
    assert side["epsilon"] == 1.0
    assert side["epsilon_selection"] == release_record(sel) == res.dummies
    assert set(side["epsilon_selection"]) == RECORD_KEYS
    assert side["epsilon_selection"]["epsilon"] == eps_sel
    assert side["epsilon_selection"]["epsilon_release"] == eps_rem
    assert side["landmark_sum"] <= eps_rem and side["guarantee_holds"] is True


def test_sidecar_and_file_never_show_the_dummies(tmp_path, energy):
    out = tmp_path / "r.csv"
    d = DummySettings("heuristic", 0.05, "distance")
    export_release(energy, LM, PrivacySettings(), out, ExportOptions("adaptive", seed=test_key(5), dummies=d))
    sel = expected_selection(energy, LM, 1.0, d, 5, "adaptive")
    assert list(pd.read_csv(out).columns) == ["timestamp", "kwh"]  # the usual columns only
    text = (tmp_path / "r.csv.json").read_text()
    side = json.loads(text)
    public_counts = {"rows_released"}  # the release's own row count (issue 14)
    for word in ("dummies", "landmarks", "rows_", "option"):
        assert word not in json.dumps([k for k in _keys(side) if k not in public_counts])
    # No number in the sidecar is a count of dummies, of L' or of L, nor a dummy's row.
    nums = set(numbers_in(side))
    assert nums.isdisjoint({int(sel.dummies.size), int(sel.landmarks.size), int(LM.size)})
    ints = {x for x in numbers_in(side) if isinstance(x, int)}
    assert ints == {energy.n}  # the row count is the only integer written
    assert side["epsilon_selection"]["generator"] == "heuristic"
    assert side["epsilon_selection"]["utility"] == "distance"
    assert side["epsilon_selection"]["share"] == 0.05


def _keys(doc):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield k
            yield from _keys(v)


def test_without_dummies_the_sidecar_says_null(tmp_path, energy):
    export_release(energy, LM, PrivacySettings(), tmp_path / "r.csv", ExportOptions("uniform"))
    side = json.loads((tmp_path / "r.csv.json").read_text())
    assert side["epsilon_selection"] is None and side["epsilon"] == 1.0


def test_unseeded_exports_draw_fresh_selections_seeded_ones_repeat(tmp_path, energy):
    d = DummySettings()
    zeros = []
    for name in ("a", "b"):
        export_release(energy, LM, PrivacySettings(), tmp_path / f"{name}.csv",
                       ExportOptions("skip", include_budget=True, dummies=d))
        zeros.append(np.flatnonzero(pd.read_csv(tmp_path / f"{name}.csv")["epsilon"].to_numpy() == 0))
    assert not np.array_equal(zeros[0], zeros[1])
    for z in zeros:
        assert np.all(np.isin(LM, z))  # L ⊂ L'
    for name in ("c", "e"):
        res = export_release(energy, LM, PrivacySettings(), tmp_path / f"{name}.csv",
                             ExportOptions("skip", seed=test_key(3), dummies=d))
        assert any("dummy selection" in w for w in res.warnings)
    assert (tmp_path / "c.csv").read_text() == (tmp_path / "e.csv").read_text()


def test_optimal_refusal_is_an_export_error_and_writes_nothing(tmp_path, energy):
    with pytest.raises(ExportError, match="Optimal"):
        export_release(energy, LM, PrivacySettings(), tmp_path / "r.csv",
                       ExportOptions("uniform", dummies=DummySettings(generator="optimal")))
    assert list(tmp_path.iterdir()) == []


def test_optimal_on_a_tiny_series(tmp_path):
    src = tmp_path / "tiny.csv"
    src.write_text("timestamp,value\n" + "".join(f"2020-01-01 00:{i:02d}:00,{i % 3}\n" for i in range(12)))
    s = load_series(src)
    d = DummySettings(generator="optimal")
    res = export_release(s, [2, 7], PrivacySettings(), tmp_path / "r.csv",
                         ExportOptions("skip", include_budget=True, seed=test_key(1), dummies=d))
    sel = expected_selection(s, [2, 7], 1.0, d, 1, "skip")
    b = pd.read_csv(tmp_path / "r.csv")["epsilon"].to_numpy()
    assert np.array_equal(np.flatnonzero(b == 0), sel.landmarks)
    assert res.dummies["generator"] == "optimal"


def test_event_level_is_refused_once_dummies_are_added(tmp_path, energy):
    # Without landmarks the event-level baseline passes; with dummies L' is not empty and it fails.
    export_release(energy, [], PrivacySettings(), tmp_path / "ok.csv", ExportOptions("event"))
    with pytest.raises(GuaranteeError):
        export_release(energy, [], PrivacySettings(), tmp_path / "r.csv",
                       ExportOptions("event", dummies=DummySettings()))
    assert not (tmp_path / "r.csv").exists() and not (tmp_path / "r.csv.json").exists()


def test_every_event_a_landmark_still_sets_the_share_aside(tmp_path, energy):
    res = export_release(energy, np.arange(energy.n), PrivacySettings(), tmp_path / "r.csv",
                         ExportOptions("uniform", include_budget=True, dummies=DummySettings()))
    eps_sel, eps_rem = split_budget(1.0, 0.01)
    assert res.dummies["epsilon"] == eps_sel and res.guarantee.epsilon == eps_rem
    b = pd.read_csv(tmp_path / "r.csv")["epsilon"].to_numpy()
    assert b[0] == pytest.approx(eps_rem / (energy.n + 1), rel=1e-9)


def test_bad_dummy_settings_and_cancel(tmp_path, energy):
    with pytest.raises(ExportError, match="share"):
        export_release(energy, LM, PrivacySettings(), tmp_path / "r.csv",
                       ExportOptions("uniform", dummies=DummySettings(share=1.5)))
    with pytest.raises(Cancelled):
        export_release(energy, LM, PrivacySettings(), tmp_path / "r.csv",
                       ExportOptions("uniform", dummies=DummySettings()), should_cancel=lambda: True)
    assert list(tmp_path.iterdir()) == []
