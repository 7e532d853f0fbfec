"""Temporal privacy loss (lmdk_gui.core.analysis.correlation) against brute force and a literal Definition 10."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from lmdk_gui.core.analysis.correlation import (
    DISTRIBUTIONS,
    PRUNE_TOLERANCE,
    CorrelationModel,
    LossFunction,
    bpl,
    cao_loss,
    fpl,
    gap_tpl,
    landmark_tpl,
    landmark_tpl_for_schemes,
    no_correlation_value,
    read_matrix_file,
    regular_distances,
    reversed_chain,
    smoothed_matrix,
    synthetic_landmarks,
    synthetic_study,
    tpl,
    validate_matrix,
)

# ----------------------------------------------------------------------------------------- references
_SUBSET_SUMS: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}


def _subset_sums(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    key = p.tobytes() + bytes([p.shape[0]])
    if key not in _SUBSET_SUMS:
        m = p.shape[0]
        qs, ds = [], []
        for i, k in itertools.permutations(range(m), 2):
            for r in range(1, m + 1):
                for S in itertools.combinations(range(m), r):
                    qs.append(p[i, list(S)].sum())
                    ds.append(p[k, list(S)].sum())
        _SUBSET_SUMS[key] = (np.array(qs), np.array(ds))
    return _SUBSET_SUMS[key]


def brute_loss(p: np.ndarray, a: float) -> float:
    """max over ordered row pairs and all state subsets S of ln((1+(e^a−1)q_S)/(1+(e^a−1)d_S))
    (the subset sums are enumerated once per matrix)."""
    qs, ds = _subset_sums(np.asarray(p))
    c = math.expm1(a)
    return max(0.0, float(np.max(np.log1p(c * qs) - np.log1p(c * ds))))


def literal_landmark_tpl(eps, landmarks, pb, pf) -> np.ndarray:
    """Definition 10 as written: for every t and every i in U = L ∪ {t}, fresh runs between neighbours."""
    n = len(eps)
    out = np.empty(n)
    for t in range(n):
        U = sorted(set(int(x) for x in landmarks) | {t})
        total = 0.0
        for idx, i in enumerate(U):
            prev = U[idx - 1] if idx > 0 else -1
            nxt = U[idx + 1] if idx < len(U) - 1 else n
            b = 0.0
            for k in range(prev + 1, i + 1):
                b = brute_loss(pb, b) + eps[k]
            f = 0.0
            for k in range(nxt - 1, i - 1, -1):
                f = brute_loss(pf, f) + eps[k]
            total += b + f - eps[i]
        out[t] = total
    return out


def random_stochastic(rng, m: int, zeros: bool = False) -> np.ndarray:
    p = rng.dirichlet(np.full(m, rng.choice([0.3, 1.0, 3.0])), size=m)
    if zeros:
        p[rng.random((m, m)) < 0.25] = 0.0
        p[np.arange(m), rng.integers(0, m, m)] += 0.1  # keep every row non-zero
        p = p / p.sum(axis=1, keepdims=True)
    return p


# -------------------------------------------------------------------------------------------- matrices
def test_smoothed_matrix_values():
    p = smoothed_matrix(2, 1.0)
    np.testing.assert_allclose(p, [[2 / 3, 1 / 3], [1 / 3, 2 / 3]])
    p = smoothed_matrix(3, 0.01)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert p[0, 0] == pytest.approx(1.01 / 1.03)
    np.testing.assert_array_equal(smoothed_matrix(2, 0.0), np.eye(2))
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="smoothing degree"):
            smoothed_matrix(2, bad)
    with pytest.raises(ValueError, match="states"):
        smoothed_matrix(1, 0.1)


@pytest.mark.parametrize("matrix, message", [
    ([[0.5, 0.5]], "square"),
    ([[1.0]] * 0, "square"),
    ([[0.5, float("nan")], [0.5, 0.5]], "non-finite entry at row 0, column 1"),
    ([[1.2, -0.2], [0.5, 0.5]], "negative entry at row 0, column 1"),
    ([[0.5, 0.5], [0.5, 0.6]], "row 1 sums to 1.1"),
    ([["a", "b"], ["c", "d"]], "numbers"),
])
def test_validate_matrix_messages(matrix, message):
    with pytest.raises(ValueError, match=message):
        validate_matrix(matrix)


def test_validate_matrix_renormalises_within_tolerance():
    p = validate_matrix([[0.3, 0.7 + 5e-10], [0.5, 0.5]])
    assert abs(p[0].sum() - 1.0) < 1e-15


def test_model_shapes_must_agree():
    with pytest.raises(ValueError, match="same size"):
        CorrelationModel.from_matrices(np.eye(2), np.eye(3))


def test_reversed_chain_is_bayes():
    f = np.array([[0.9, 0.1], [0.3, 0.7]])
    pi = np.array([0.75, 0.25])  # stationary: 0.75*0.1 = 0.25*0.3
    b = reversed_chain(f)
    np.testing.assert_allclose(b, pi[None, :] * f.T / pi[:, None])
    model = CorrelationModel.from_transition(f)
    np.testing.assert_allclose(model.backward, b)


# --------------------------------------------------------------------------------------- loss function
@pytest.mark.parametrize("m", [2, 3, 4])
def test_loss_function_matches_brute_force(m):
    rng = np.random.default_rng(m)
    for trial in range(40 if m < 4 else 15):
        p = random_stochastic(rng, m, zeros=trial % 3 == 0)
        lf = LossFunction(p)
        for a in np.concatenate(([0.0], rng.exponential(1.5, 6), [1e-6, 12.0, 29.9, 30.1])):
            ref = brute_loss(lf.matrix, float(a))
            assert cao_loss(lf.matrix, float(a)) == pytest.approx(ref, abs=1e-12)
            assert lf(float(a)) == pytest.approx(ref, abs=1e-12)


def test_loss_function_vectorised_and_validates():
    lf = LossFunction(smoothed_matrix(2, 0.1))
    a = np.linspace(0, 5, 7)
    np.testing.assert_allclose(lf(a), [lf(float(x)) for x in a])
    assert lf(0.0) == 0.0
    with pytest.raises(ValueError):
        lf(-1.0)


def test_two_state_loss_is_a_single_map():
    rng = np.random.default_rng(7)
    for _ in range(100):
        lf = LossFunction(random_stochastic(rng, 2))
        assert lf.is_mobius
        assert lf.prune_error <= PRUNE_TOLERANCE
    for s in (1.0, 0.1, 0.01, 0.0):
        assert CorrelationModel.smoothed(s, m=4).is_fast


def test_smoothed_two_state_closed_form():
    s = 0.1
    p = (1 + s) / (1 + 2 * s)
    lf = LossFunction(smoothed_matrix(2, s))
    for a in (0.3, 2.0, 7.0):
        x = math.exp(a)
        assert lf(a) == pytest.approx(math.log((p * x + 1 - p) / ((1 - p) * x + p)), abs=1e-13)
    assert lf.sup == pytest.approx(math.log(p / (1 - p)))


def test_large_a_no_overflow():
    """Beyond a ≈ 709 e^a overflows; the loss is computed in the log domain."""
    lf = LossFunction(np.eye(2))  # perfect correlation: L(a) = a
    for a in (1.0, 700.0, 710.0, 1e5):
        assert lf(a) == pytest.approx(a, rel=1e-14)
        assert cao_loss(np.eye(2), a) == pytest.approx(a, rel=1e-14)
    p = np.array([[0.6, 0.4], [0.0, 1.0]])  # d_S = 0 for the first row pair: L(a) = ln(1 + 0.6(e^a − 1))
    for a in (800.0, 5000.0):
        assert LossFunction(p)(a) == pytest.approx(a + math.log(0.6), rel=1e-14)
        assert cao_loss(p, a) == pytest.approx(a + math.log(0.6), rel=1e-14)
    lf = LossFunction(smoothed_matrix(2, 0.01))
    assert lf(1e6) == pytest.approx(lf.sup, abs=1e-12)


def test_identical_rows_leak_nothing():
    lf = LossFunction([[0.3, 0.7], [0.3, 0.7]])
    assert lf(5.0) == 0.0
    model = CorrelationModel.from_matrix([[0.3, 0.7], [0.3, 0.7]])
    b = np.array([0.5, 0.2, 0.1, 0.4])
    np.testing.assert_allclose(landmark_tpl(b, [1], model), no_correlation_value(b, [1]))


# ----------------------------------------------------------------------------------------- BPL/FPL/TPL
def test_bpl_fpl_tpl_recursions():
    model = CorrelationModel.smoothed(0.1)
    rng = np.random.default_rng(3)
    eps = rng.random(15)
    back, fwd, total = tpl(eps, model)
    exp_b = np.empty(15)
    v = 0.0
    for t in range(15):
        v = brute_loss(model.backward, v) + eps[t]
        exp_b[t] = v
    exp_f = np.empty(15)
    v = 0.0
    for t in range(14, -1, -1):
        v = brute_loss(model.forward, v) + eps[t]
        exp_f[t] = v
    np.testing.assert_allclose(back, exp_b, atol=1e-12)
    np.testing.assert_allclose(fwd, exp_f, atol=1e-12)
    np.testing.assert_allclose(total, exp_b + exp_f - eps, atol=1e-12)
    assert back[0] == eps[0] and fwd[-1] == eps[-1]
    np.testing.assert_allclose(bpl(eps, model), back)
    np.testing.assert_allclose(fpl(eps, model), fwd)


def test_perfect_correlation_accumulates_everything():
    eps = np.array([300.0, 400.0, 0.0, 250.0])  # sums far beyond e^709
    back, fwd, total = tpl(eps, CorrelationModel.smoothed(0.0))
    np.testing.assert_allclose(back, np.cumsum(eps))
    np.testing.assert_allclose(total, np.full(4, eps.sum()))
    # Definition 10 counts the releases strictly between two elements of U in both of their α (the FPL of
    # the left one and the BPL of the right one): at t = 0, U = {0, 2} and ε_1 is counted twice.
    lt = landmark_tpl(eps, [2], CorrelationModel.smoothed(0.0))
    np.testing.assert_allclose(lt, [1350.0, 950.0, 950.0, 950.0], rtol=1e-13)


def test_budget_validation():
    model = CorrelationModel.smoothed(1.0)
    for bad in ([0.1, -0.1], [0.1, float("nan")], [[0.1]]):
        with pytest.raises(ValueError, match="budgets"):
            landmark_tpl(bad, [], model)
    with pytest.raises(ValueError, match="landmark rows"):
        landmark_tpl([0.1, 0.2], [5], model)
    assert landmark_tpl([], [], model).shape == (0,)


# ------------------------------------------------------------------------------------- landmark TPL
def test_landmark_tpl_special_cases():
    model = CorrelationModel.smoothed(0.01)
    eps = np.random.default_rng(0).random(12)
    # no landmarks: plain TPL
    np.testing.assert_allclose(landmark_tpl(eps, [], model), tpl(eps, model)[2], atol=1e-12)
    # every event a landmark: U = L, neighbours adjacent, α_i = ε_i
    np.testing.assert_allclose(landmark_tpl(eps, np.arange(12), model), np.full(12, eps.sum()), atol=1e-12)
    # landmarks get the landmark-only total, which is what t ∈ L gives in the literal definition
    lt = landmark_tpl(eps, [3, 8], model)
    assert lt[3] == lt[8]
    # independence: s → ∞ gives the no-correlation value
    indep = CorrelationModel.from_matrix(np.full((2, 2), 0.5))
    np.testing.assert_allclose(landmark_tpl(eps, [3, 8], indep), no_correlation_value(eps, [3, 8]), atol=1e-12)
    # correlation can only add loss
    assert np.all(lt >= no_correlation_value(eps, [3, 8]) - 1e-12)


@pytest.mark.parametrize("m", [2, 3])
def test_landmark_tpl_matches_literal_definition(m):
    rng = np.random.default_rng(100 + m)
    paths = set()
    for trial in range(25):
        n = int(rng.integers(1, 31))
        k = int(rng.integers(0, n + 1))
        lm = np.sort(rng.choice(n, size=k, replace=False))
        eps = rng.random(n) * rng.choice([0.05, 1.0, 3.0])
        eps[rng.random(n) < 0.2] = 0.0  # skipped / unsampled events
        if trial % 4 == 0:
            p = smoothed_matrix(m, float(rng.choice([1.0, 0.1, 0.01])))
            model = CorrelationModel.from_matrix(p)
        else:
            model = CorrelationModel.from_matrices(random_stochastic(rng, m, zeros=trial % 5 == 0),
                                                   random_stochastic(rng, m))
        paths.add(model.is_fast)
        got = landmark_tpl(eps, lm, model)
        ref = literal_landmark_tpl(eps, lm, model.backward, model.forward)
        np.testing.assert_allclose(got, ref, atol=1e-9, rtol=0)
    if m == 3:
        assert paths == {True, False}  # both the matrix-product and the merged-runs paths were checked


def test_landmark_tpl_long_series_general_path():
    """On a long series with a strongly correlated 3-state matrix whose loss function is not a single
    Möbius map (merged-runs path), spot-check events against a direct per-t evaluation."""
    rng = np.random.default_rng(5)
    n = 300
    eps = rng.random(n) * 0.3
    lm = np.sort(rng.choice(n, 12, replace=False))
    while True:
        p = 0.7 * np.eye(3) + 0.3 * random_stochastic(rng, 3)
        general = CorrelationModel.from_matrix(p)
        if not general.is_fast:
            break
    got = landmark_tpl(eps, lm, general)
    for t in range(0, n, 37):
        U = sorted(set(lm.tolist()) | {t})
        total = 0.0
        for idx, i in enumerate(U):
            prev = U[idx - 1] if idx > 0 else -1
            nxt = U[idx + 1] if idx < len(U) - 1 else n
            b = 0.0
            for k in range(prev + 1, i + 1):
                b = brute_loss(general.backward, b) + eps[k]
            f = 0.0
            for k in range(nxt - 1, i - 1, -1):
                f = brute_loss(general.forward, f) + eps[k]
            total += b + f - eps[i]
        assert got[t] == pytest.approx(total, abs=1e-9)


def test_landmark_tpl_for_schemes():
    from lmdk_gui.core.data.series import Series
    from lmdk_gui.core.engine.pipeline import compute_all
    from lmdk_gui.core.kernel.noise import UnitNoise
    from lmdk_gui.core.kernel.settings import ALL_SCHEMES, PrivacySettings

    n = 60
    rng = np.random.default_rng(1)
    series = Series.from_arrays(rng.random(n))
    lm = [5, 20, 21, 40]
    rel = compute_all(series, lm, PrivacySettings(epsilon=1.0), UnitNoise(n, 0))
    model = CorrelationModel.smoothed(0.1)
    out = landmark_tpl_for_schemes(rel, model)
    assert set(out) == set(ALL_SCHEMES)
    for name, r in rel.items():
        np.testing.assert_array_equal(out[name], landmark_tpl(r.budgets, r.landmarks, model))
        assert out[name].max() >= no_correlation_value(r.budgets, r.landmarks).max() - 1e-12


# ---------------------------------------------------------------------------------------- matrix files
def test_read_matrix_file_formats(tmp_path):
    (tmp_path / "m.csv").write_text("0.9,0.1\n0.2,0.8\n")
    model = read_matrix_file(tmp_path / "m.csv")
    np.testing.assert_allclose(model.forward, [[0.9, 0.1], [0.2, 0.8]])
    np.testing.assert_allclose(model.backward, model.forward)
    (tmp_path / "w.txt").write_text("# comment\n0.5 0.5\n0.25 0.75\n")
    assert read_matrix_file(tmp_path / "w.txt").states == 2
    (tmp_path / "bf.json").write_text(json.dumps({"backward": [[0.9, 0.1], [0.1, 0.9]],
                                                  "forward": [[0.6, 0.4], [0.4, 0.6]]}))
    model = read_matrix_file(tmp_path / "bf.json")
    assert model.backward[0, 0] == 0.9 and model.forward[0, 0] == 0.6
    (tmp_path / "l.json").write_text("[[1, 0], [0, 1]]")
    assert read_matrix_file(tmp_path / "l.json").loss_f(3.0) == pytest.approx(3.0)


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("0.5,0.5\n0.5\n", "different numbers"),
    ("0.5,x\n0.5,0.5\n", "line 1 is not a row of numbers"),
    ("0.5,0.6\n0.5,0.5\n", "row 0 sums to 1.1"),
    ('{"backward": [[1]]}', "expected a list of rows"),
    ("[[0.5, 0.5], [0.5", "not valid JSON"),
])
def test_read_matrix_file_errors(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as info:
        read_matrix_file(path)
    assert str(info.value).startswith(str(path))
    assert "\n" not in str(info.value)


def test_read_matrix_file_missing(tmp_path):
    with pytest.raises(ValueError, match="no such matrix file"):
        read_matrix_file(tmp_path / "nope.csv")


# ------------------------------------------------------------------------------------ synthetic study
@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_synthetic_landmarks_shapes(dist):
    n = 100
    for frac in (0.0, 0.2, 0.5, 1.0):
        lm = synthetic_landmarks(n, frac, dist, seed=1)
        assert lm.size == round(frac * n)
        assert np.all(np.diff(lm) > 0) and (lm.size == 0 or (lm[0] >= 0 and lm[-1] < n))
        np.testing.assert_array_equal(lm, synthetic_landmarks(n, frac, dist, seed=1))
    means = np.array([synthetic_landmarks(n, 0.2, dist, seed=s).mean() for s in range(50)])
    if dist == "skewed":
        assert means.mean() < 20
    elif dist in ("symmetric", "bimodal", "uniform"):
        assert 40 < means.mean() < 60
    if dist == "bimodal":
        lm = np.concatenate([synthetic_landmarks(n, 0.2, dist, seed=s) for s in range(50)])
        assert np.mean((lm < 25) | (lm >= 75)) > 0.8


def test_synthetic_landmarks_validation():
    with pytest.raises(ValueError, match="distribution"):
        synthetic_landmarks(10, 0.2, "normal")
    with pytest.raises(ValueError, match="fraction"):
        synthetic_landmarks(10, 1.5, "uniform")


def test_regular_distances():
    np.testing.assert_array_equal(regular_distances(7, [3]), [0, 1, 0, 0, 1, 0])
    np.testing.assert_array_equal(regular_distances(5, []), [0, 1, 2, 1, 0])
    assert regular_distances(3, [0, 1, 2]).size == 0


def test_synthetic_study_small():
    rec = synthetic_study(n=30, fractions=(0.0, 0.2, 1.0), distributions=("skewed", "uniform"),
                          s_values=(1.0, 0.01), repeats=3)
    assert len(rec) == 2 * 3 * 2
    for r in rec:
        assert r["max_tpl"] >= r["no_correlation"] - 1e-12
        if r["fraction"] == 1.0:
            assert r["max_tpl"] == pytest.approx(30 / 31)
    strong = {(r["distribution"], r["fraction"]): r["max_tpl"] for r in rec if r["s"] == 0.01}
    weak = {(r["distribution"], r["fraction"]): r["max_tpl"] for r in rec if r["s"] == 1.0}
    assert all(strong[k] >= weak[k] - 1e-12 for k in strong)


def test_gap_tpl_diagnostic():
    model = CorrelationModel.smoothed(0.1)
    eps = np.random.default_rng(2).random(20)
    lm = [4, 5, 12]
    got = gap_tpl(eps, lm, model)
    s_l = eps[lm].sum()
    assert got[4] == got[5] == got[12] == pytest.approx(s_l)
    np.testing.assert_allclose(got[6:12], s_l + tpl(eps[6:12], model)[2], atol=1e-12)
    np.testing.assert_allclose(got[:4], s_l + tpl(eps[:4], model)[2], atol=1e-12)
    np.testing.assert_allclose(gap_tpl(eps, [], model), tpl(eps, model)[2], atol=1e-12)
