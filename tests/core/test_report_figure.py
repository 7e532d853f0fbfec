"""The release report's figure (issue 45): thinning keeps what a pixel column shows, a long release gives a
small page, and the band and noise circle follow the public settings."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from lmdk_gui.core.publish import report_svg
from lmdk_gui.core.publish.report import PublicRelease, noise_half_width
from lmdk_gui.core.publish.report_html import render_report


def _release(kind, values, **sidecar):
    n = len(values)
    doc = {"epsilon": 2.0, "kind": kind, "scheme": "uniform", "statement": "x", **sidecar}
    return PublicRelease(Path("r.csv"), doc, kind, ("a", "b"), np.arange(n) * 60.0 + 1.6e9, np.asarray(values))


def test_envelope_keeps_every_span_s_extremes_in_time_order():
    rng = np.random.default_rng(1)
    y = rng.normal(size=100_000)
    x = np.arange(y.size, dtype=float)
    tx, ty = report_svg.envelope(x, y, columns=500)
    assert tx.size <= 1000 and np.all(np.diff(tx) > 0)
    assert ty.max() == y.max() and ty.min() == y.min()
    small = np.arange(10.0)
    assert report_svg.envelope(small, small)[0] is small  # short lines are drawn as they are


def test_nice_ticks_are_round_and_cover_the_range():
    assert report_svg.nice_ticks(0.0, 7.3) == [0.0, 2.0, 4.0, 6.0]
    t = report_svg.nice_ticks(-43.1, 31.7)
    assert t[0] >= -43.1 and t[-1] <= 31.7 and len(set(np.round(np.diff(t), 9))) == 1


def test_a_long_release_gives_a_small_page():
    v = np.random.default_rng(2).normal(3.0, 2.0, 300_000)
    html = render_report(_release("numeric", v, sensitivity=1.0, bounds=[0.0, 7.0], units="kWh"))
    assert len(html) < 400_000 and html.count("<circle") <= report_svg.MAX_POINTS + 5


def test_band_from_the_settings_or_the_epsilon_column():
    rel = _release("numeric", np.zeros(5), sensitivity=3.0)
    assert noise_half_width(rel) == math.log(10) * 3.0 / 2.0
    per_event = PublicRelease(rel.path, rel.sidecar, "numeric", None, rel.seconds, rel.values,
                              budgets=np.array([1.0, 0.5, 0.0, 1.0, 2.0]))
    hw = noise_half_width(per_event)
    assert np.isnan(hw[2]) and hw[1] == math.log(10) * 6.0
    dummies = _release("numeric", np.zeros(5), sensitivity=3.0,
                       epsilon_selection={"epsilon": 0.02, "epsilon_release": 1.98})
    assert noise_half_width(dummies) == math.log(10) * 3.0 / 1.98


def test_the_noise_circle_is_drawn_only_when_it_can_be_seen():
    rng = np.random.default_rng(3)
    track = np.column_stack([52.6 + np.cumsum(rng.normal(0, 1e-4, 500)), -8.6 + np.cumsum(rng.normal(0, 1e-4, 500))])
    seen = report_svg.location_figure(track, raw=True, radius90_m=30.0)
    assert "90% noise radius" in seen
    assert "90% noise radius" not in report_svg.location_figure(track, raw=True, radius90_m=0.5)
