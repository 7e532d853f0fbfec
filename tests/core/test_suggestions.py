"""Landmark suggestion rules (issue 5): threshold, stay points, category membership, change points."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lmdk_gui.core.analysis import suggestions as sg
from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.kernel.mechanisms import EARTH_RADIUS_M, haversine_one
from tests.conftest import DATA, SAMPLES

T0 = np.datetime64("2020-01-01T00:00:00", "ns")
M_PER_DEG = EARTH_RADIUS_M * math.pi / 180.0  # along a meridian, haversine distance = R·|Δφ|


def minutes(*mins: float) -> np.ndarray:
    return T0 + (np.asarray(mins, dtype=float) * 60e9).astype(np.int64).astype("timedelta64[ns]")


def track(north_m: list[float], mins: list[float]) -> Series:
    """A track along the meridian of lon 10°: north offsets in metres from 50°N."""
    lat = 50.0 + np.asarray(north_m, dtype=float) / M_PER_DEG
    vals = np.column_stack([lat, np.full(len(lat), 10.0)]) if len(lat) else np.zeros((0, 2))
    return Series.from_arrays(vals, kind="location", times=minutes(*mins))


def ref_stays(series: Series, d: float, dur_min: float) -> np.ndarray:
    """Literal reading of the documented algorithm (pure Python, haversine)."""
    lat, lon = series.values[:, 0], series.values[:, 1]
    t = series.times.astype(np.int64)
    n, out, i = series.n, np.zeros(series.n, bool), 0
    dur = round(dur_min * 60e9)
    while i < n:
        j = i + 1
        while j < n and haversine_one(lat[i], lon[i], lat[j], lon[j]) <= d:
            j += 1
        if t[j - 1] - t[i] >= dur:
            out[i:j] = True
            i = j
        else:
            i += 1
    return np.flatnonzero(out)


@pytest.fixture(scope="module")
def energy() -> Series:
    return load_series(DATA / "energy_hue_residential1_2013.csv", duplicates="first")


@pytest.fixture(scope="module")
def energy_jan() -> Series:
    return load_series(SAMPLES / "energy_hue_2013_jan.csv")


@pytest.fixture(scope="module")
def gps() -> Series:
    return load_series(DATA / "gps_bus_limerick_2019-02-18.csv")


@pytest.fixture(scope="module")
def contacts() -> Series:
    return load_series(SAMPLES / "contacts_person1672.csv", kind="categorical", duplicates="first")


def assert_rows(rows: np.ndarray, expected) -> None:
    assert rows.dtype == np.int64
    assert rows.tolist() == list(expected)


# ------------------------------------------------------------------------------------------ threshold
def test_threshold_strict_below_above_and_both():
    s = Series.from_arrays([1.0, 5.0, 3.0, 5.0, 0.0, 3.0])
    assert_rows(sg.threshold(s, below=3), [0, 4])
    assert_rows(sg.threshold(s, below=1), [4])  # strict: the value 1 itself is not below 1
    assert_rows(sg.threshold(s, above=3), [1, 3])
    assert_rows(sg.threshold(s, above=5), [])
    assert_rows(sg.threshold(s, below=1, above=4), [1, 3, 4])  # either tail
    assert_rows(sg.threshold(s, below=0), [])
    assert_rows(sg.threshold(s, below=math.inf), range(6))
    assert_rows(sg.threshold(s, below=6, above=-1), range(6))


def test_threshold_needs_a_side_and_a_number():
    s = Series.from_arrays([1.0, 2.0])
    with pytest.raises(ValueError, match="below, above or both"):
        sg.threshold(s)
    with pytest.raises(ValueError, match="below"):
        sg.threshold(s, below=float("nan"))
    with pytest.raises(ValueError, match="above"):
        sg.threshold(s, above="abc")


def test_threshold_empty_series_and_wrong_kind():
    empty = Series.from_arrays(np.zeros(0))
    assert_rows(sg.threshold(empty, below=1), [])
    with pytest.raises(ValueError, match="numeric series; this one is location"):
        sg.threshold(track([0, 1], [0, 1]), below=1)


# ---------------------------------------------------------------------------------------- stay points
def test_stay_simple_and_duration_inclusive():
    s = track([0, 10, 20, 15, 1000, 2000], [0, 1, 2, 3, 4, 5])
    assert_rows(sg.stay_points(s, distance_m=50, duration_min=3), [0, 1, 2, 3])  # span exactly 3 min
    assert_rows(sg.stay_points(s, distance_m=50, duration_min=3.01), [])
    assert_rows(sg.stay_points(s, distance_m=50, duration_min=2), [0, 1, 2, 3])


def test_stay_starts_after_a_non_stay_event_and_continues_after_a_stay():
    # event 0 alone; stay 1..3; move; stay 5..7
    s = track([-500, 0, 5, 3, 900, 2000, 2010, 2005, 4000], [0, 1, 2, 4, 5, 6, 7, 9, 10])
    assert_rows(sg.stay_points(s, distance_m=30, duration_min=3), [1, 2, 3, 5, 6, 7])


def test_stay_is_anchored_on_its_first_event():
    # drifting 30 m a minute: every neighbour is within 50 m of the previous one, but the stay is measured
    # from its first event (Li et al.), so no run lasts 2 minutes
    s = track([0, 30, 60, 90, 120, 150], [0, 1, 2, 3, 4, 5])
    assert_rows(sg.stay_points(s, distance_m=50, duration_min=2), [])
    assert_rows(sg.stay_points(s, distance_m=50, duration_min=1), [0, 1, 2, 3, 4, 5])
    assert_rows(sg.stay_points(s, distance_m=65, duration_min=2), [0, 1, 2, 3, 4, 5])


def test_stay_at_the_end_of_the_track_counts():
    s = track([0, 1000, 2000, 3000, 3005, 3002, 3001], [0, 1, 2, 3, 5, 8, 10])
    assert_rows(sg.stay_points(s, distance_m=20, duration_min=7), [3, 4, 5, 6])
    assert_rows(sg.stay_points(s, distance_m=20, duration_min=7.5), [])


def test_stay_extremes():
    s = track([0, 100, 100, 5000, 5000], [0, 1, 2, 3, 4])
    assert_rows(sg.stay_points(s, distance_m=10, duration_min=0), range(5))  # every event is a stay
    assert_rows(sg.stay_points(s, distance_m=0, duration_min=1), [1, 2, 3, 4])  # repeated positions only
    assert_rows(sg.stay_points(s, distance_m=1e9, duration_min=4), range(5))
    assert_rows(sg.stay_points(s, distance_m=1e9, duration_min=5), [])


def test_stay_empty_single_and_bad_input():
    assert_rows(sg.stay_points(track([], []), distance_m=10, duration_min=1), [])
    one = track([0], [0])
    assert_rows(sg.stay_points(one, distance_m=10, duration_min=0), [0])
    assert_rows(sg.stay_points(one, distance_m=10, duration_min=1), [])
    with pytest.raises(ValueError, match="distance_m must be at least 0"):
        sg.stay_points(one, distance_m=-1, duration_min=1)
    with pytest.raises(ValueError, match="duration_min"):
        sg.stay_points(one, distance_m=1, duration_min=float("nan"))
    with pytest.raises(ValueError, match="location series"):
        sg.stay_points(Series.from_arrays([1.0]), distance_m=1, duration_min=1)


def test_stay_refuses_unsorted_times():
    s = Series.from_arrays(np.array([[50.0, 10.0], [50.0, 10.0], [50.0, 10.0]]), kind="location",
                           times=minutes(0, 5, 2))
    with pytest.raises(ValueError, match="ascending"):
        sg.stay_points(s, distance_m=10, duration_min=1)


def test_stay_near_the_distance_boundary_follows_haversine():
    # points exactly around 100 m east at 50°N: the chord shortcut must agree with haversine itself
    lat = 50.0
    dlon = np.array([0.0, 100.0, 100.0 - 1e-7, 100.0 + 1e-7]) / (M_PER_DEG * math.cos(math.radians(lat)))
    pts = np.column_stack([np.full(4, lat), 10.0 + dlon])
    for k in (1, 2, 3):
        s = Series.from_arrays(pts[[0, k]], kind="location", times=minutes(0, 10))
        d = haversine_one(lat, 10.0, pts[k, 0], pts[k, 1])
        for limit in (d, np.nextafter(d, 0), np.nextafter(d, 1e9)):
            expected = [0, 1] if d <= limit else []
            assert_rows(sg.stay_points(s, distance_m=limit, duration_min=10), expected)


@pytest.mark.parametrize("seed", range(6))
def test_stay_matches_the_literal_algorithm_on_random_tracks(seed):
    rng = np.random.default_rng(seed)
    for _ in range(30):
        n = int(rng.integers(1, 150))
        step = rng.choice([0.0, 5.0, 60.0]) * rng.random(n) * (rng.random(n) < 0.7)
        ang = rng.uniform(0, 2 * np.pi, n)
        lat = 52.0 + np.cumsum(step * np.sin(ang)) / 111_000
        lon = -8.0 + np.cumsum(step * np.cos(ang)) / 68_000
        t = T0 + np.cumsum(rng.integers(1, 120, n)).astype("timedelta64[s]")
        s = Series.from_arrays(np.column_stack([lat, lon]), kind="location", times=t)
        d = float(rng.choice([0, 10, 30, 100, 300]))
        dur = float(rng.choice([0, 0.5, 2, 10, 60]))
        np.testing.assert_array_equal(sg.stay_points(s, distance_m=d, duration_min=dur), ref_stays(s, d, dur))


def test_stay_on_the_bus_track(gps):
    rows = sg.stay_points(gps, distance_m=50, duration_min=1)
    np.testing.assert_array_equal(rows, ref_stays(gps, 50, 1))
    assert 0 < rows.size < gps.n
    # the bus is first recorded waiting: the track starts with a stay
    assert rows[0] == 0


# ---------------------------------------------------------------------------------------- categories
def test_category_membership():
    s = Series.from_arrays(np.array(["a", "b", "c", "a", "c", "b"]), kind="categorical")
    assert_rows(sg.category_membership(s, ["a", "c"]), [0, 2, 3, 4])
    assert_rows(sg.category_membership(s, "b"), [1, 5])
    assert_rows(sg.category_membership(s, []), [])
    assert_rows(sg.category_membership(s, ["a", "b", "c"]), range(6))
    with pytest.raises(ValueError, match=r"unknown label\(s\) 'zz', 'yy'"):
        sg.category_membership(s, ["a", "zz", "yy"])
    with pytest.raises(ValueError, match="categorical series"):
        sg.category_membership(Series.from_arrays([1.0]), ["a"])


def test_category_on_contacts(contacts):
    rows = sg.category_membership(contacts, ["1651", 1164])  # ids may be given as numbers
    codes = [contacts.categories.index("1651"), contacts.categories.index("1164")]
    assert_rows(rows, np.flatnonzero(np.isin(contacts.values, codes)))
    assert rows.size == 34 + 31


# ------------------------------------------------------------------------------------- change points
def test_change_points_step_and_spike():
    step = Series.from_arrays([0.0] * 5 + [10.0] * 5)
    assert_rows(sg.change_points(step), [5])
    spike = Series.from_arrays([0.0, 0, 0, 9, 0, 0, 0])
    assert_rows(sg.change_points(spike, penalty=0), [3, 4])  # landmark = first event after each change
    assert_rows(sg.change_points(Series.from_arrays([2.0] * 8)), [])
    assert_rows(sg.change_points(Series.from_arrays(np.zeros(0))), [])
    assert_rows(sg.change_points(Series.from_arrays([1.0])), [])


def test_change_points_noisy_shifts_found_with_default_penalty():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(0, 1, 300), rng.normal(4, 1, 200), rng.normal(-2, 1, 300)])
    rows = sg.change_points(Series.from_arrays(x))
    assert rows.size == 2
    assert abs(rows[0] - 300) <= 3 and abs(rows[1] - 500) <= 3
    assert sg.change_points(Series.from_arrays(rng.normal(0, 1, 2000))).size == 0  # pure noise: nothing


def test_change_points_penalty_nests_and_validates(energy):
    prev = None
    for pen in (0.5, 2.0, 8.0, sg.default_penalty(energy.n), 50.0, 500.0, 1e6):
        rows = sg.change_points(energy, penalty=pen)
        if prev is not None:
            assert set(rows.tolist()) <= set(prev.tolist())
        prev = rows
    assert prev.size == 0
    with pytest.raises(ValueError, match="penalty"):
        sg.change_points(energy, penalty=-1)
    with pytest.raises(ValueError, match="numeric series"):
        sg.change_points(track([0, 1], [0, 1]))


def test_change_points_agree_with_ruptures_binseg():
    rpt = pytest.importorskip("ruptures")
    rng = np.random.default_rng(11)
    x = np.repeat(rng.normal(0, 3, 8), 25) + rng.normal(0, 1, 200)
    s = Series.from_arrays(x)
    z = (x - x.mean()) / sg._noise_scale(x)
    for pen in (3.0, 10.0, 40.0):
        bkps = rpt.Binseg(model="l2", min_size=1, jump=1).fit(z.reshape(-1, 1)).predict(pen=pen)
        assert_rows(sg.change_points(s, penalty=pen), bkps[:-1])


def test_change_points_cache_gives_same_answer_as_fresh_series(energy):
    a = sg.change_points(energy, penalty=1.0)  # builds a deeper tree, cached
    b = sg.change_points(energy, penalty=20.0)  # answered from it
    fresh = load_series(DATA / "energy_hue_residential1_2013.csv", duplicates="first")
    np.testing.assert_array_equal(b, sg.change_points(fresh, penalty=20.0))
    np.testing.assert_array_equal(a, sg.change_points(fresh, penalty=1.0))


# ---------------------------------------------------------------------------------------- registry
def test_registry_describes_rules():
    assert list(sg.RULES) == ["threshold", "stay", "category", "changepoints"]
    assert [r.name for r in sg.rules_for_kind("numeric")] == ["threshold", "changepoints"]
    assert [r.name for r in sg.rules_for_kind("location")] == ["stay"]
    assert [r.name for r in sg.rules_for_kind("categorical")] == ["category"]
    stay = sg.RULES["stay"]
    assert stay.kind == "location" and stay.main == "distance_m"
    d = stay.param("distance_m")
    assert (d.default, d.minimum, d.unit) == (200.0, 0.0, "m")
    for r in sg.RULES.values():
        assert r.main in {p.name for p in r.params}
        for p in r.params:
            assert p.label and p.type in ("float", "labels")


def test_apply_rule_and_count(energy, gps, contacts):
    rows = sg.apply_rule(energy, "threshold", below=0.5)
    np.testing.assert_array_equal(rows, sg.threshold(energy, below=0.5))
    k, pct = sg.count(energy, "threshold", below=0.5)
    assert k == rows.size and pct == pytest.approx(100 * rows.size / energy.n)
    # defaults fill in missing parameters
    np.testing.assert_array_equal(sg.apply_rule(gps, "stay"), sg.stay_points(gps, distance_m=200, duration_min=30))
    np.testing.assert_array_equal(sg.apply_rule(gps, "stay", distance_m=50, duration_min=None),
                                  sg.stay_points(gps, distance_m=50, duration_min=30))
    assert sg.count(contacts, "category") == (0, 0.0)
    assert sg.count(energy, "changepoints")[0] == sg.change_points(energy).size
    assert sg.count(Series.from_arrays(np.zeros(0)), "threshold", below=1) == (0, 0.0)
    with pytest.raises(ValueError, match="no parameter 'distance'"):
        sg.apply_rule(gps, "stay", distance=5)
    with pytest.raises(ValueError, match="needs a location series"):
        sg.apply_rule(energy, "stay")
    with pytest.raises(ValueError, match="unknown rule 'nope'"):
        sg.count(energy, "nope")


def test_defaults_and_ranges(energy, gps, contacts):
    d = sg.defaults(energy, "threshold")
    assert d["above"] is None
    assert sg.count(energy, "threshold", below=d["below"])[1] == pytest.approx(20, abs=1)
    assert sg.ranges(energy, "threshold")["below"] == (energy.values.min(), energy.values.max())
    assert sg.defaults(gps, "stay") == {"distance_m": 200.0, "duration_min": 30.0}
    r = sg.ranges(gps, "stay")
    assert r["duration_min"][1] == pytest.approx(74.6, abs=0.1)  # 07:45:50 to 09:00:26
    assert sg.count(gps, "stay", distance_m=r["distance_m"][1], duration_min=r["duration_min"][1])[1] == 100.0
    assert sg.defaults(contacts, "category") == {"values": []}
    assert sg.defaults(energy, "changepoints")["penalty"] == pytest.approx(2 * math.log(energy.n))
    top = sg.ranges(energy, "changepoints")["penalty"][1]
    assert sg.count(energy, "changepoints", penalty=top)[0] == 0
    assert sg.count(energy, "changepoints", penalty=top * 0.999)[0] >= 1
    with pytest.raises(ValueError):
        sg.defaults(energy, "stay")


# ------------------------------------------------------------------------------- rule_for_percentage
def test_percentage_threshold_exact():
    rng = np.random.default_rng(0)
    s = Series.from_arrays(rng.permutation(100).astype(float))
    for target in (0, 20, 37, 100):
        params, rows = sg.rule_for_percentage(s, "threshold", target)
        assert rows.size == target
        np.testing.assert_array_equal(rows, sg.apply_rule(s, "threshold", **params))
    params, rows = sg.rule_for_percentage(s, "threshold", 20)
    assert params == {"below": 20.0}
    params, rows = sg.rule_for_percentage(s, "threshold", 30, vary="above")
    assert params == {"above": 69.0} and rows.size == 30
    params, rows = sg.rule_for_percentage(s, "threshold", 100, vary="above")
    assert rows.size == 100 and params["above"] == -1.0
    assert sg.rule_for_percentage(s, "threshold", 100)[0] == {"below": 100.0}


def test_percentage_threshold_ties_and_fixed_other_side():
    s = Series.from_arrays([1.0, 1, 1, 1, 2, 3, 4, 5])
    params, rows = sg.rule_for_percentage(s, "threshold", 25)  # 2 of 8: ties make it 0 or 4
    assert rows.size in (0, 4)
    params, rows = sg.rule_for_percentage(s, "threshold", 50, above=4)  # row 7 is fixed in
    assert params == {"above": 4, "below": 2.0} and rows.size == 5  # 4 is not reachable: 1 or 5
    np.testing.assert_array_equal(rows, sg.threshold(s, **params))


def test_percentage_stay(gps):
    params, rows = sg.rule_for_percentage(gps, "stay", 40)
    assert params["duration_min"] == 30.0 and params["distance_m"] == int(params["distance_m"])
    assert 100 * rows.size / gps.n == pytest.approx(40, abs=0.5)
    np.testing.assert_array_equal(rows, sg.stay_points(gps, **params))
    params, rows = sg.rule_for_percentage(gps, "stay", 10, vary="duration_min", distance_m=50)
    assert params["distance_m"] == 50
    assert 100 * rows.size / gps.n == pytest.approx(10, abs=1.5)
    assert sg.rule_for_percentage(gps, "stay", 0)[1].size == 0
    assert sg.rule_for_percentage(gps, "stay", 100)[1].size == gps.n


def test_percentage_category_greedy():
    s = Series.from_arrays(np.array(list("aaaaabbbcc")), kind="categorical")
    assert sg.rule_for_percentage(s, "category", 50)[0] == {"values": ["a"]}
    assert sg.rule_for_percentage(s, "category", 80)[0] == {"values": ["a", "b"]}
    assert sg.rule_for_percentage(s, "category", 30)[0] == {"values": ["b"]}
    params, rows = sg.rule_for_percentage(s, "category", 100)
    assert rows.size == 10
    assert sg.rule_for_percentage(s, "category", 0) == ({"values": []}, pytest.approx(np.zeros(0)))


def test_percentage_category_exact_on_contacts(contacts):
    # two contacts hold 44.6 % and 44.2 % of the events, 28 others the remaining 11.3 %
    params, rows = sg.rule_for_percentage(contacts, "category", 80)
    assert params == {"values": ["1170", "1613"]} and rows.size == 2015
    params, rows = sg.rule_for_percentage(contacts, "category", 40)
    assert params == {"values": ["1170"]}


def test_percentage_category_greedy_fallback(monkeypatch, contacts):
    monkeypatch.setattr(sg, "_SUBSET_BITS", 10)
    params, rows = sg.rule_for_percentage(contacts, "category", 40)
    assert params == {"values": ["1170"]}  # seeded fill: one big contact alone (a plain fill gives 55.4 %)
    s = Series.from_arrays(np.array(list("aaaaabbbcc")), kind="categorical")
    assert sg.rule_for_percentage(s, "category", 30)[0] == {"values": ["b"]}


def test_percentage_changepoints_is_the_best_penalty(energy_jan):
    # binary segmentation stops a whole branch at once, so some counts are not reachable by any penalty;
    # the sweep must find the best reachable one
    grid = np.concatenate([[0.0], np.geomspace(1e-4, 1e4, 600)])
    counts = np.array([sg.change_points(energy_jan, penalty=p).size for p in grid])
    for target in (0, 5, 10, 30, 60):
        want = round(target / 100 * energy_jan.n)
        params, rows = sg.rule_for_percentage(energy_jan, "changepoints", target)
        np.testing.assert_array_equal(rows, sg.change_points(energy_jan, **params))
        assert abs(rows.size - want) <= np.min(np.abs(counts - want))
    params, rows = sg.rule_for_percentage(energy_jan, "changepoints", 100)
    assert rows.size >= energy_jan.n - 30  # at most n-1 (row 0 never), fewer with equal neighbours


def test_percentage_bad_input_and_empty(energy):
    with pytest.raises(ValueError, match="between 0 and 100"):
        sg.rule_for_percentage(energy, "threshold", 101)
    with pytest.raises(ValueError, match="no parameter 'radius'"):
        sg.rule_for_percentage(energy, "threshold", 10, vary="radius")
    with pytest.raises(ValueError, match="location series"):
        sg.rule_for_percentage(energy, "stay", 10)
    params, rows = sg.rule_for_percentage(Series.from_arrays(np.zeros(0)), "changepoints", 50)
    assert rows.size == 0 and "penalty" in params
