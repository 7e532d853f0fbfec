"""The scheme registry (issue 43): every registered scheme has what the views, the export and the check
need, every list of schemes derives from it, and a new scheme module is picked up by itself (the worked
example of docs/development.md is run here)."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from lmdk_gui.core.analysis import evaluation
from lmdk_gui.core.engine.release import fixed_budgets
from lmdk_gui.core.kernel import schemes
from lmdk_gui.core.kernel.guarantee import allocatable, check_guarantee
from lmdk_gui.core.kernel.schemes import SCHEMES, Scheme
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, BASELINES, LANDMARK_SCHEMES, SCHEME_LABELS
from lmdk_gui.core.publish import export

DOC = Path(__file__).resolve().parents[2] / "docs" / "development.md"


def _landmark_sets(n: int, rng: np.random.Generator):
    yield np.zeros(0, np.int64)
    yield np.arange(n, dtype=np.int64)
    yield np.array([0], np.int64)
    yield np.array([n - 1], np.int64)
    yield np.arange(1, n, dtype=np.int64)
    for share in (0.05, 0.3, 0.9):
        yield np.sort(rng.choice(n, max(1, int(n * share)), replace=False)).astype(np.int64)


def _has_what_the_views_need(s: Scheme) -> None:
    assert re.fullmatch(r"[a-z][a-z0-9_]*", s.name), s.name
    assert s.label.strip() and s.prose_name.strip()
    assert len(s.color) == 3 and all(isinstance(c, int) and 0 <= c <= 255 for c in s.color)
    what, example = s.help
    assert len(what) > 20 and len(example) > 10
    assert isinstance(s.position, int) and s.position >= 0
    assert s.budgets is not None or s.landmark_private  # (a drawn scheme is checked after drawing)


def _fixed_budgets_hold(s: Scheme) -> None:
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 100, 2000):
        for lm in _landmark_sets(n, rng):
            eps = float(rng.choice([1e-3, 0.5, 1.0, 40.0]))
            assert s.budgets is not None
            b = np.asarray(s.budgets(n, lm, allocatable(eps, n)))
            assert b.shape == (n,) and np.all(np.isfinite(b)) and np.all(b >= 0), s.name
            g = check_guarantee(b, lm, eps)
            if s.landmark_private:
                assert g.holds, (s.name, n, lm.size, g.reason)
            if not s.uses_landmarks:
                np.testing.assert_array_equal(b, s.budgets(n, np.zeros(0, np.int64), allocatable(eps, n)))


@pytest.mark.parametrize("name", list(SCHEMES))
def test_every_scheme_has_what_the_views_need(name):
    _has_what_the_views_need(SCHEMES[name])


@pytest.mark.parametrize("name", [k for k, s in SCHEMES.items() if s.budgets is not None])
def test_every_fixed_scheme_is_well_formed_and_private_ones_hold(name):
    _fixed_budgets_hold(SCHEMES[name])


def test_the_lists_of_schemes_derive_from_the_registry():
    assert ALL_SCHEMES == tuple(SCHEMES) == ("uniform", "skip", "adaptive", "event", "user", "balanced")
    assert LANDMARK_SCHEMES == ("uniform", "skip", "adaptive", "balanced") and BASELINES == ("event", "user")
    assert list(SCHEME_LABELS) == list(LANDMARK_SCHEMES + BASELINES)  # landmark-private ones first
    assert set(evaluation.FIXED_SCHEMES) == {k for k, s in SCHEMES.items() if s.budgets is not None}
    assert export.REPUBLISHING_SCHEMES == ("skip", "adaptive")
    positions = [s.position for s in SCHEMES.values()]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    assert len({s.color for s in SCHEMES.values()}) == len(SCHEMES)


def test_fixed_budgets_is_each_schemes_own_function():
    lm = np.array([2, 5], np.int64)
    for name, s in SCHEMES.items():
        if s.budgets is None:
            with pytest.raises(ValueError):
                fixed_budgets(name, 10, lm, 0.9)
        else:
            np.testing.assert_array_equal(fixed_budgets(name, 10, lm, 0.9), s.budgets(10, lm, 0.9))
    with pytest.raises(ValueError, match="unknown scheme"):
        fixed_budgets("nope", 10, lm, 0.9)


def _doc_example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    [code] = [b for b in blocks if 'name="geometric"' in b]
    return code


def test_a_new_scheme_module_is_registered_by_itself(tmp_path, monkeypatch):
    """docs/development.md's Geometric, saved as a module of the package (here in a temporary folder added to
    its path), is found, placed last, has what the views need and holds the guarantee."""
    (tmp_path / "geometric.py").write_text(_doc_example(), encoding="utf-8")
    monkeypatch.setattr(schemes, "__path__", [*schemes.__path__, str(tmp_path)])
    try:
        found = schemes._discover()
    finally:
        sys.modules.pop("lmdk_gui.core.kernel.schemes.geometric", None)
        importlib.invalidate_caches()
    assert list(found) == [*SCHEMES, "geometric"]
    geo = found["geometric"]
    _has_what_the_views_need(geo)
    _fixed_budgets_hold(geo)
    assert geo.color not in {s.color for s in SCHEMES.values()}


def test_two_modules_cannot_share_a_name(tmp_path, monkeypatch):
    (tmp_path / "uniform_again.py").write_text("from .uniform import SCHEME\n", encoding="utf-8")
    monkeypatch.setattr(schemes, "__path__", [*schemes.__path__, str(tmp_path)])
    try:
        with pytest.raises(RuntimeError, match="share a name"):
            schemes._discover()
    finally:
        sys.modules.pop("lmdk_gui.core.kernel.schemes.uniform_again", None)
