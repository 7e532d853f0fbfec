"""Empirical privacy-loss audit (issue 9): measure the privacy loss of released outputs from many runs on
neighbouring inputs and check it against the claim — and show that the same audit flags broken mechanisms.

Neighbours (DESIGN §2, thesis Def. 8):

* *event*: one regular event ``t`` changed by Δ — the loss of ``o_t`` must be at most ``ε_t`` (per budget
  stratum for Adaptive, see :mod:`tests.privacy.audit`);
* *landmark*: the landmarks and one regular event changed by Δ — the loss of the joint output over
  ``L ∪ {t}`` must be at most ε. The marginal at one landmark ``l`` of the same runs gives the per-event
  check at a landmark (claim ``ε_l``: 0 for Skip).

Runs are seeded (preview: one ``UnitNoise`` seed per run; export: one seeded word source), so every number
here is reproducible; the significance level is ``audit.ALPHA = 1e-6``. The measured figures are printed
(``pytest -s``) and, with ``LMDK_AUDIT_REPORT=path``, written as a markdown table.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.data.series import Series
from lmdk_gui.core.engine import release as release_mod
from lmdk_gui.core.engine.pipeline import compute_release
from lmdk_gui.core.kernel import securenoise as sn
from lmdk_gui.core.kernel.guarantee import allocatable
from lmdk_gui.core.kernel.noise import UnitNoise
from lmdk_gui.core.kernel.settings import PrivacySettings
from lmdk_gui.core.publish import export as export_mod
from lmdk_gui.core.publish.export import ExportOptions, export_release
from tests.keys import test_key

from .audit import (
    Audit,
    audit_samples,
    audit_strata,
    export_runs,
    laplace_llr,
    local_metres,
    planar_llr,
    preview_runs,
)

# The audited series: n = 8, landmarks {2, 5}, the regular event t = 4 between them, ε = 1, Δ = 1.
X = np.array([1.0, 1.3, 0.8, 1.1, 0.9, 1.2, 1.0, 0.7])
LANDMARKS = [2, 5]
T = 4
L_EVENT = 2
U = [2, 4, 5]  # L ∪ {t}
EPS = 1.0
DELTA = 1.0
SETTINGS = PrivacySettings(epsilon=EPS, sensitivity=DELTA)
RUNS = {"preview": 6_000, "export": 20_000}
#: Runs for the preview half of the "teeth" tests (the preview path costs ~0.15 ms per release).
TEETH_PREVIEW_RUNS = 8_000

RESULTS: list[tuple[str, str, str, Audit]] = []


def _record(path: str, scheme: str, what: str, a: Audit) -> None:
    RESULTS.append((path, scheme, what, a))
    print(f"[audit] {path:8s} {scheme:9s} {what:34s} {a.row()}")


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    if not RESULTS:
        return
    lines = ["| path | scheme | neighbours / event | claimed ε | measured ε̂ | lower bound (α=1e-6) | runs | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for path, scheme, what, a in RESULTS:
        verdict = "FLAGGED" if a.flagged else "ok"
        lines.append(f"| {path} | {scheme} | {what} | {a.claimed:.3f} | {a.estimate:.3f} | {a.lower:.3f} | "
                     f"{a.n1}+{a.n2} | {verdict} |")
    table = "\n".join(lines)
    print("\n" + table)
    target = os.environ.get("LMDK_AUDIT_REPORT")
    if target:
        Path(target).write_text(table + "\n", encoding="utf-8")


def _shift(rows) -> np.ndarray:
    x = X.copy()
    x[rows] += DELTA
    return x


def _runs(path: str, x: np.ndarray, scheme: str, n_runs: int, seed: int):
    if path == "preview":
        return preview_runs(x, LANDMARKS, SETTINGS, scheme, n_runs, seed)
    return export_runs(x, LANDMARKS, SETTINGS, scheme, n_runs, seed)


# -------------------------------------------------------------------------------------- the runner
@pytest.mark.parametrize("scheme", ["uniform", "skip", "adaptive"])
def test_export_runner_draws_what_export_writes(tmp_path, scheme):
    """The audit's export runner is the export path: one seeded run equals the file export_release writes."""
    seed = 987
    out = tmp_path / "r.csv"
    s = Series.from_arrays(X)
    export_release(s, LANDMARKS, SETTINGS, out, ExportOptions(scheme, seed=test_key(seed), chunk_rows=s.n,
                                                              include_budget=True, denoise=False))
    df = pd.read_csv(out)  # pandas ≥ 3 parses floats exactly (round trip)
    vals, buds = export_runs(X, LANDMARKS, SETTINGS, scheme, 1, seed)
    # the file prints the values on the public decimal grid (issue 14): the same post-processing here
    printed = export_mod.format_values(vals[0], export_mod.value_decimals("numeric", SETTINGS)).astype(float)
    np.testing.assert_array_equal(df["value"].to_numpy(), printed)
    np.testing.assert_array_equal(df["epsilon"].to_numpy(), buds[0])


# ------------------------------------------------------------------------------------ scheme audits
@pytest.mark.slow
@pytest.mark.parametrize("path", ["export", "preview"])
@pytest.mark.parametrize("scheme", ["uniform", "skip", "adaptive"])
def test_scheme_audit(path, scheme):
    n_runs = RUNS[path]
    v0, b0 = _runs(path, X, scheme, n_runs, 1)
    vt, bt = _runs(path, _shift([T]), scheme, n_runs, 10**6)
    vL, bL = _runs(path, _shift(U), scheme, n_runs, 2 * 10**6)

    # One regular event changed: the loss of o_t is at most ε_t, in every budget stratum.
    per_event = audit_strata(v0[:, T], b0[:, T], vt[:, T], bt[:, T])
    # The marginal at a landmark of the landmark-neighbour runs: at most ε_l (0 for Skip).
    at_landmark = audit_strata(v0[:, L_EVENT], b0[:, L_EVENT], vL[:, L_EVENT], bL[:, L_EVENT])
    # The landmarks and one regular event changed: the joint output over L ∪ {t}, projected on the claimed
    # mechanism's log-likelihood ratio, loses at most ε.
    joint = audit_samples(laplace_llr(v0[:, U], b0[:, U], X[U], DELTA, DELTA),
                          laplace_llr(vL[:, U], bL[:, U], X[U], DELTA, DELTA), EPS)

    for e, a in per_event.items():
        _record(path, scheme, f"event t={T}, ε_t={e:.3f} ({np.mean(b0[:, T] == e):.0%} of runs)", a)
    for e, a in at_landmark.items():
        _record(path, scheme, f"landmark l={L_EVENT}, ε_l={e:.3f} ({np.mean(b0[:, L_EVENT] == e):.0%})", a)
    _record(path, scheme, "landmarks + t, joint over L ∪ {t}", joint)

    assert per_event and at_landmark
    for a in (*per_event.values(), *at_landmark.values(), joint):
        assert not a.flagged, a
    # The audit is sharp, not blind: where the claim is attained, it measures close to it.
    main = max(per_event, key=lambda e: np.sum(b0[:, T] == e))
    assert per_event[main].estimate > 0.6 * main
    assert joint.estimate > 0.6 * EPS
    if scheme == "skip":
        assert list(at_landmark) == [0.0]


# --------------------------------------------------------------------------------------- its teeth
@pytest.mark.slow
@pytest.mark.parametrize("path", ["export", "preview"])
def test_audit_flags_halved_noise(path, monkeypatch):
    """Laplace noise at half the scale it claims (a typo'd Δ/ε_t) doubles the loss: flagged."""
    if path == "preview":
        monkeypatch.setattr(UnitNoise, "laplace", property(lambda self: self._get("laplace") * 0.5))
    else:
        real = sn.secure_laplace
        monkeypatch.setattr(sn, "secure_laplace", lambda x, scales, sens, source=None, **k:
                            real(x, np.asarray(scales) * 0.5, sens, source, **k))
    n_runs = TEETH_PREVIEW_RUNS if path == "preview" else RUNS[path]
    v0, b0 = _runs(path, X, "uniform", n_runs, 1)
    vt, bt = _runs(path, _shift([T]), "uniform", n_runs, 10**6)
    per_event = audit_strata(v0[:, T], b0[:, T], vt[:, T], bt[:, T])
    (e, a), = per_event.items()
    _record(path, "BROKEN", "uniform, noise scale halved: event t", a)
    assert a.flagged, a
    assert a.lower > 1.3 * e


@pytest.mark.slow
@pytest.mark.parametrize("path", ["export", "preview"])
def test_audit_flags_landmark_overspend(path, monkeypatch):
    """A scheme that gives the landmarks too much budget: the joint loss over L ∪ {t} exceeds ε: flagged.

    Export: Uniform dividing by |L| instead of |L| + 1 (loss 1.5 ε — a subtle off-by-one), audited with
    100k runs. Preview: Skip that forgets to zero the landmarks (loss 3 ε)."""
    if path == "export":
        real = export_mod.fixed_budgets

        def off_by_one(scheme, n, landmarks, eps_a):
            return np.full(n, eps_a / max(len(landmarks), 1)) if scheme == "uniform" else real(
                scheme, n, landmarks, eps_a)

        monkeypatch.setattr(export_mod, "fixed_budgets", off_by_one)
        scheme, n_runs, label = "uniform", 100_000, "uniform dividing by |L| (landmarks overspend)"
    else:
        real = release_mod.fixed_budgets
        monkeypatch.setattr(release_mod, "fixed_budgets", lambda scheme, n, lm, eps_a: real(
            "event" if scheme == "skip" else scheme, n, lm, eps_a))
        scheme, n_runs, label = "skip", 4_000, "skip not zeroing landmarks"
    v0, b0 = _runs(path, X, scheme, n_runs, 1)
    vL, bL = _runs(path, _shift(U), scheme, n_runs, 2 * 10**6)
    joint = audit_samples(laplace_llr(v0[:, U], b0[:, U], X[U], DELTA, DELTA),
                          laplace_llr(vL[:, U], bL[:, U], X[U], DELTA, DELTA), EPS)
    _record(path, "BROKEN", f"{label}: joint", joint)
    assert joint.flagged, joint


# ------------------------------------------------------------------------------- mechanism audits
# One release of a long constant series under the event-level scheme is many independent runs of the
# per-event mechanism at ε_t = allocatable(ε, n): the real preview (compute_release) and the real export
# (export_release, a file read back) paths, with many runs in one call.
N_MECH = 100_000


def _event_budget(n: int) -> float:
    return allocatable(EPS, n)


def _preview_event(values, kind: str | None = None, **settings):
    s = Series.from_arrays(values, kind=kind)
    return compute_release(s, [], PrivacySettings(epsilon=EPS, **settings), "event", UnitNoise(s.n, 7)).values


def _export_event(tmp_path: Path, name: str, values, kind: str | None = None, backend: str | None = None,
                  seed: int | None = 11, **settings) -> pd.DataFrame:
    s = Series.from_arrays(values, kind=kind)
    out = tmp_path / f"{name}.csv"
    export_release(s, [], PrivacySettings(epsilon=EPS, **settings), out,
                   ExportOptions("event", seed=None if seed is None else test_key(seed), backend=backend, denoise=False))
    return pd.read_csv(out, dtype={"value": str} if s.kind == "categorical"
                       else None, keep_default_na=False)


def _numeric_pair(path: str, tmp_path: Path, backend: str | None = None, n: int = N_MECH):
    x0 = np.full(n, 3.25)
    x1 = x0 + DELTA
    if path == "preview":
        o0 = _preview_event(x0)
        o1 = _preview_event(x1)
    else:
        o0 = _export_event(tmp_path, "a", x0, backend=backend, seed=None if backend else 11)["value"].to_numpy()
        o1 = _export_event(tmp_path, "b", x1, backend=backend, seed=None if backend else 12)["value"].to_numpy()
    return o0, o1


@pytest.mark.slow
@pytest.mark.parametrize("path,backend", [("preview", None), ("export", None), ("export", "opendp")])
def test_laplace_mechanism_audit(tmp_path, path, backend):
    o0, o1 = _numeric_pair(path, tmp_path, backend)
    a = audit_samples(o0, o1, _event_budget(N_MECH))
    _record(path + (f" ({backend})" if backend else ""), "event", "numeric Laplace, x vs x+Δ", a)
    assert not a.flagged, a
    assert a.estimate > 0.85 * EPS


@pytest.mark.slow
@pytest.mark.parametrize("path", ["preview", "export"])
def test_laplace_mechanism_audit_flags_halved_noise(tmp_path, path, monkeypatch):
    if path == "preview":
        monkeypatch.setattr(UnitNoise, "laplace", property(lambda self: self._get("laplace") * 0.5))
    else:
        real = sn.secure_laplace
        monkeypatch.setattr(sn, "secure_laplace", lambda x, scales, sens, source=None, **k:
                            real(x, np.asarray(scales) * 0.5, sens, source, **k))
    o0, o1 = _numeric_pair(path, tmp_path, n=20_000)
    a = audit_samples(o0, o1, _event_budget(20_000))
    _record(path, "BROKEN", "numeric Laplace, noise scale halved", a)
    assert a.flagged and a.lower > 1.5 * EPS, a


ORIGIN = (52.6647, -8.6231)  # Limerick (the bus track's city)
RADIUS = 100.0


def _location_pair(path: str, tmp_path: Path, n: int = N_MECH):
    """Outputs for P and for P' = P moved RADIUS metres north (so the claimed loss is ε_t · d / r = ε_t)."""
    p1 = (ORIGIN[0] + np.degrees(RADIUS / sn.R_EARTH_M), ORIGIN[1])
    pts0 = np.tile(ORIGIN, (n, 1))
    pts1 = np.tile(p1, (n, 1))
    if path == "preview":
        o0 = _preview_event(pts0, kind="location", radius_m=RADIUS)
        o1 = _preview_event(pts1, kind="location", radius_m=RADIUS)
    else:
        o0 = _export_event(tmp_path, "a", pts0, kind="location", radius_m=RADIUS)[["lat", "lon"]].to_numpy()
        o1 = _export_event(tmp_path, "b", pts1, kind="location", seed=12, radius_m=RADIUS)[["lat", "lon"]].to_numpy()
    shift = tuple(local_metres(np.array(p1), ORIGIN))
    return o0, o1, shift


@pytest.mark.slow
@pytest.mark.parametrize("path", ["preview", "export"])
def test_planar_mechanism_audit(tmp_path, path):
    o0, o1, shift = _location_pair(path, tmp_path)
    e = _event_budget(N_MECH)
    a = audit_samples(planar_llr(o0, ORIGIN, shift, e, RADIUS), planar_llr(o1, ORIGIN, shift, e, RADIUS), e)
    _record(path, "event", "location planar Laplace, d = r", a)
    assert not a.flagged, a
    assert a.estimate > 0.5 * e  # half-planes do not attain ε·d/r (only the ray behind P does)


@pytest.mark.slow
def test_planar_mechanism_audit_flags_halved_noise(tmp_path, monkeypatch):
    real = sn.secure_planar
    monkeypatch.setattr(sn, "secure_planar", lambda ll, scales, source=None, **k:
                        real(ll, np.asarray(scales) * 0.5, source, **k))
    o0, o1, shift = _location_pair("export", tmp_path, n=30_000)
    e = _event_budget(30_000)
    a = audit_samples(planar_llr(o0, ORIGIN, shift, e, RADIUS), planar_llr(o1, ORIGIN, shift, e, RADIUS), e)
    _record("export", "BROKEN", "location planar, radius scale halved", a)
    assert a.flagged, a


CATS = ["a", "b", "c", "d"]


def _categorical_pair(path: str, tmp_path: Path, n: int, backend: str | None = None):
    """Randomized response on 'a' vs 'b' (k = 4): the claimed loss is ε_t."""
    v0 = np.array(["a"] * n)
    v1 = np.array(["b"] * n)
    if path == "preview":
        o0 = _preview_event(v0, categories=tuple(CATS))
        o1 = _preview_event(v1, categories=tuple(CATS))
    else:
        seed = None if backend else 11
        o0 = np.searchsorted(CATS, _export_event(tmp_path, "a", v0, backend=backend, seed=seed,
                                                 categories=tuple(CATS))["value"].to_numpy())
        o1 = np.searchsorted(CATS, _export_event(tmp_path, "b", v1, backend=backend, seed=seed and 12,
                                                 categories=tuple(CATS))["value"].to_numpy())
    return o0, o1


@pytest.mark.slow
@pytest.mark.parametrize("path,backend,n", [("preview", None, N_MECH), ("export", None, N_MECH),
                                            ("export", "opendp", 5_000)])
def test_rr_mechanism_audit(tmp_path, path, backend, n):
    o0, o1 = _categorical_pair(path, tmp_path, n, backend)
    a = audit_samples(o0, o1, _event_budget(n))
    _record(path + (f" ({backend})" if backend else ""), "event", "categorical RR k=4, a vs b", a)
    assert not a.flagged, a
    assert a.estimate > 0.85 * EPS


@pytest.mark.slow
def test_rr_mechanism_audit_flags_doubled_epsilon(tmp_path, monkeypatch):
    real = sn.secure_rr
    monkeypatch.setattr(sn, "secure_rr", lambda codes, eps, k, source=None, **kw:
                        real(codes, np.asarray(eps) * 2.0, k, source, **kw))
    o0, o1 = _categorical_pair("export", tmp_path, 20_000)
    a = audit_samples(o0, o1, _event_budget(20_000))
    _record("export", "BROKEN", "categorical RR with 2ε_t", a)
    assert a.flagged and a.lower > 1.5 * EPS, a


# ------------------------------------------------------------------------------------ the low bits
@pytest.mark.slow
def test_low_bits(tmp_path):
    """Mironov's floating-point attack, as the audit sees it: the *unrounded* log-likelihood statistic of
    the preview's textbook float Laplace (x + b·Lap) tells x from x + Δ through rounding patterns; the
    export's snapped discrete Laplace (outputs on a public grid) gives it nothing beyond ε. The preview is
    never published, so only the export half is a requirement; the preview figure is recorded."""
    for path in ("export", "preview"):
        o0, o1 = _numeric_pair(path, tmp_path, n=20_000)
        x = np.array([3.25])
        e = _event_budget(20_000)
        a = audit_samples(laplace_llr(o0[:, None], np.array([e]), x, DELTA, DELTA, digits=None),
                          laplace_llr(o1[:, None], np.array([e]), x, DELTA, DELTA, digits=None), e)
        _record(path, "event", "numeric, unrounded LLR (low bits)", a)
        if path == "export":
            assert not a.flagged, a
