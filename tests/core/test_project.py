"""Project files (.lmdk.json, issue 5): round trip, moved data, changed data, malformed files."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.data.project import (
    PRIVATE_COMMENT,
    ColumnChoice,
    Project,
    ProjectError,
    check_data,
    landmarks_by_time,
    load_project,
    resolve_data_path,
    save_project,
)
from lmdk_gui.core.data.series import LoadError, Series
from lmdk_gui.core.kernel.settings import AdaptiveParams, PrivacySettings
from tests.conftest import DATA, SAMPLES

SETTINGS = PrivacySettings(epsilon=0.5, sensitivity=2.0, bounds=(0.0, 5.0), radius_m=250.0,
                           adaptive=AdaptiveParams(0.2, 0.05, 0.3))
VIEW = {"shown": ["uniform", "skip"], "zoom": [0, 100], "dock": {"open": True}}


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    folder = tmp_path / "work" / "data"
    folder.mkdir(parents=True)
    p = folder / "energy.csv"
    shutil.copy(SAMPLES / "energy_hue_2013_jan.csv", p)
    return p


def make_project(data_file: Path, rows=(3, 10, 50)) -> tuple[Series, Project]:
    series = load_series(data_file)
    return series, Project.from_series(series, list(rows), SETTINGS, seed=7, view=VIEW)


def test_round_trip(tmp_path, data_file):
    series, proj = make_project(data_file)
    out = tmp_path / "work" / "projects" / "jan.lmdk.json"
    out.parent.mkdir()
    save_project(out, proj)
    back = load_project(out)
    assert back == proj
    assert back.settings == SETTINGS and back.seed == 7 and back.view == VIEW
    assert back.landmarks.tolist() == [3, 10, 50] and back.landmark_rules == ()
    np.testing.assert_array_equal(back.landmark_times, series.times[[3, 10, 50]])
    ruled = dataclasses.replace(proj, landmark_rules=("Value threshold",))  # the rules the landmarks come from
    save_project(out, ruled)
    assert load_project(out) == ruled and load_project(out) != proj
    save_project(out, proj)
    assert back.input_relpath == "../data/energy.csv"
    assert back.columns == ColumnChoice(time_col="timestamp", value_col="kwh", kind="numeric")
    assert back.rows == series.n == 744
    assert check_data(back, series) == []
    # the file says it is private and is only readable by its owner
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["private"] is True and doc["comment"] == PRIVATE_COMMENT
    assert doc["input"]["sha256"] == series.source.sha256
    assert doc["landmarks"]["timestamps"][0] == "2013-01-01T03:00:00"
    if sys.platform != "win32":
        assert out.stat().st_mode & 0o077 == 0
    # the load options read the same series back
    again = load_series(back.input_path, **back.load_options())
    np.testing.assert_array_equal(again.values, series.values)


def test_round_trip_empty_and_many_landmarks(tmp_path, data_file):
    series = load_series(data_file)
    out = tmp_path / "p.lmdk.json"
    for rows in ([], list(range(0, series.n, 2))):
        proj = Project.from_series(series, rows, PrivacySettings())
        save_project(out, proj)
        assert load_project(out) == proj


def test_round_trip_location_and_categorical(tmp_path):
    gps = load_series(DATA / "gps_bus_limerick_2019-02-18.csv")
    proj = Project.from_series(gps, [0, 5], PrivacySettings(radius_m=50.0))
    assert proj.columns == ColumnChoice(time_col="timestamp", lat_col="lat", lon_col="lon", kind="location")
    save_project(tmp_path / "g.lmdk.json", proj)
    assert load_project(tmp_path / "g.lmdk.json") == proj
    contacts = load_series(SAMPLES / "contacts_person1672.csv", kind="categorical", duplicates="first")
    proj = Project.from_series(contacts, [1, 2], PrivacySettings(categories=contacts.categories))
    save_project(tmp_path / "c.lmdk.json", proj)
    back = load_project(tmp_path / "c.lmdk.json")
    assert back == proj and back.columns.duplicates == "first"
    again = load_series(back.input_path, **back.load_options())
    assert again.categories == contacts.categories and again.n == contacts.n


def test_sub_second_timestamps_round_trip(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("timestamp,v\n2020-01-01 00:00:00.123456789,1\n2020-01-01 00:00:01,2\n")
    series = load_series(p)
    proj = Project.from_series(series, [0, 1], PrivacySettings())
    save_project(tmp_path / "t.lmdk.json", proj)
    back = load_project(tmp_path / "t.lmdk.json")
    np.testing.assert_array_equal(back.landmark_times, series.times)


def test_resolve_data_path(tmp_path, data_file):
    _, proj = make_project(data_file)
    pfile = tmp_path / "work" / "jan.lmdk.json"
    save_project(pfile, proj)
    assert resolve_data_path(load_project(pfile), pfile) == data_file
    # move project and data together: the absolute path is gone, the relative one still works
    moved = tmp_path / "elsewhere"
    shutil.move(str(tmp_path / "work"), moved)
    new_pfile = moved / "jan.lmdk.json"
    loaded = load_project(new_pfile)
    assert not Path(loaded.input_path).exists()
    assert resolve_data_path(loaded, new_pfile) == moved / "data" / "energy.csv"
    # move the data alone: nothing found, the GUI asks the user
    shutil.move(str(moved / "data"), tmp_path / "lost")
    assert resolve_data_path(loaded, new_pfile) is None


def test_changed_data_warns(tmp_path, data_file):
    series, proj = make_project(data_file)
    text = data_file.read_text().splitlines()
    text[2] = text[2].rsplit(",", 1)[0] + ",9.999"  # edit one value: same rows, other bytes
    data_file.write_text("\n".join(text) + "\n")
    warnings = check_data(proj, load_series(data_file))
    assert len(warnings) == 1 and "SHA-256" in warnings[0]
    # delete the row of landmark 10 (file line 12): row 3 is untouched, row 50 now holds the next hour
    del text[11]
    data_file.write_text("\n".join(text) + "\n")
    shifted = load_series(data_file)
    warnings = check_data(proj, shifted)
    assert any("SHA-256" in w for w in warnings)
    assert any("743 events" in w for w in warnings)
    assert any("2 landmark(s) no longer fall on their saved timestamps" in w and "2 of 3" in w for w in warnings)
    rows, missing = landmarks_by_time(proj, shifted)
    assert missing == 1 and rows.tolist() == [3, 49]


def test_changed_kind_and_columns_warn(tmp_path, data_file):
    series, proj = make_project(data_file)
    other = Project(input_path=proj.input_path, input_sha256=proj.input_sha256,
                    columns=ColumnChoice(time_col="timestamp", value_col="other", kind="categorical"),
                    landmarks=proj.landmarks, landmark_times=proj.landmark_times, rows=proj.rows)
    warnings = check_data(other, series)
    assert any("saved as categorical" in w for w in warnings)
    assert any("value_col 'kwh' (was 'other')" in w for w in warnings)


def test_past_the_end_rows_warn(data_file):
    series, proj = make_project(data_file, rows=(3, 743))
    short = Series.from_arrays(series.values[:700], times=series.times[:700])
    warnings = check_data(proj, short)
    assert any("1 landmark row(s) are past the end" in w for w in warnings)


def test_from_series_needs_a_file():
    with pytest.raises(ValueError, match="not read from a file"):
        Project.from_series(Series.from_arrays([1.0, 2.0]), [0], PrivacySettings())


def test_save_rejects_non_json_view_and_keeps_old_file(tmp_path, data_file):
    _, proj = make_project(data_file)
    out = tmp_path / "p.lmdk.json"
    save_project(out, proj)
    before = out.read_bytes()
    proj.view = {"bad": object()}
    with pytest.raises(ValueError, match="view state"):
        save_project(out, proj)
    proj.view = {"nan": float("nan")}
    with pytest.raises(ValueError, match="view state"):
        save_project(out, proj)
    assert out.read_bytes() == before
    assert not list(tmp_path.glob(".*.part"))  # no temporary file left behind


# --------------------------------------------------------------------------------------- malformed
@pytest.fixture
def good_doc(tmp_path, data_file) -> dict:
    _, proj = make_project(data_file)
    out = tmp_path / "good.lmdk.json"
    save_project(out, proj)
    return json.loads(out.read_text(encoding="utf-8"))


def write(tmp_path: Path, doc, name="bad.lmdk.json") -> Path:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return p


def expect_error(path: Path, *fragments: str) -> ProjectError:
    with pytest.raises(ProjectError) as e:
        load_project(path)
    msg = str(e.value)
    assert msg.startswith(path.name), msg
    for f in fragments:
        assert f in msg, msg
    return e.value


def test_not_json_and_not_an_object(tmp_path):
    expect_error(write(tmp_path, "{not json"), "invalid JSON at line 1")
    expect_error(write(tmp_path, "[1, 2]"), "expected a JSON object, got a list")
    p = tmp_path / "latin.lmdk.json"
    p.write_bytes(b'{"a": "\xe9"}')
    expect_error(p, "not UTF-8")
    expect_error(tmp_path / "missing.lmdk.json", "cannot read the project file")
    assert issubclass(ProjectError, LoadError) and issubclass(ProjectError, ValueError)


@pytest.mark.parametrize(
    ("mutate", "fragments"),
    [
        (lambda d: d.pop("format"), ["key 'format'", "missing"]),
        (lambda d: d.update(format="something-else"), ["key 'format'", "not an lmdk project file"]),
        (lambda d: d.update(version=2), ["key 'version'", "newer"]),
        (lambda d: d.update(version="1"), ["key 'version'", "the text '1'"]),
        (lambda d: d.pop("input"), ["key 'input'", "missing"]),
        (lambda d: d["input"].pop("path"), ["key 'input.path'", "missing"]),
        (lambda d: d["input"].update(path=3), ["key 'input.path'", "the number 3"]),
        (lambda d: d["input"].update(sha256="xyz"), ["key 'input.sha256'", "64 hexadecimal"]),
        (lambda d: d["input"].update(rows=True), ["key 'input.rows'", "got true"]),
        (lambda d: d.update(columns=[]), ["key 'columns'", "expected an object"]),
        (lambda d: d["columns"].update(kind="audio"), ["key 'columns.kind'", "'audio'"]),
        (lambda d: d["columns"].update(duplicates="max"), ["key 'columns.duplicates'"]),
        (lambda d: d["columns"].update(time_col=5), ["key 'columns.time_col'"]),
        (lambda d: d.pop("landmarks"), ["key 'landmarks'", "missing"]),
        (lambda d: d["landmarks"].update(rows="3,10"), ["key 'landmarks.rows'", "a list of row numbers"]),
        (lambda d: d["landmarks"]["rows"].__setitem__(1, 2.5), ["key 'landmarks.rows'", "entry 1"]),
        (lambda d: d["landmarks"]["rows"].__setitem__(0, -1), ["key 'landmarks.rows'", "entry 0"]),
        (lambda d: d["landmarks"]["rows"].__setitem__(1, 3), ["key 'landmarks.rows'", "row 3 is listed twice"]),
        (lambda d: d["landmarks"]["rows"].__setitem__(2, 744), ["key 'landmarks.rows'", "past the last row"]),
        (lambda d: d["landmarks"]["timestamps"].pop(), ["key 'landmarks'", "3 rows but 2 timestamps"]),
        (lambda d: d["landmarks"]["timestamps"].__setitem__(1, "yesterday"), ["key 'landmarks.timestamps'",
                                                                             "entry 1 ('yesterday')"]),
        (lambda d: d["landmarks"]["timestamps"].__setitem__(1, 5), ["key 'landmarks.timestamps'", "entry 1"]),
        (lambda d: d["landmarks"].update(count=4), ["key 'landmarks.count'"]),
        (lambda d: d.pop("settings"), ["key 'settings'", "missing"]),
        (lambda d: d["settings"].update(epsilon=-1), ["key 'settings'", "epsilon must be a positive number"]),
        (lambda d: d["settings"].update(bounds=[1]), ["key 'settings'", "invalid privacy settings"]),
        (lambda d: d["settings"].update(epsilon="lots"), ["key 'settings'"]),
        (lambda d: d.update(seed=-3), ["key 'seed'", "non-negative"]),
        (lambda d: d.update(seed=True), ["key 'seed'"]),
        (lambda d: d.update(seed=1.5), ["key 'seed'"]),
        (lambda d: d.update(view=[1]), ["key 'view'", "expected an object"]),
    ],
)
def test_malformed_keys(tmp_path, good_doc, mutate, fragments):
    mutate(good_doc)
    err = expect_error(write(tmp_path, good_doc), *fragments)
    assert err.path.endswith("bad.lmdk.json")


def test_optional_keys_may_be_missing(tmp_path, good_doc):
    for key in ("seed", "view", "comment", "private", "tool_version"):
        good_doc.pop(key)
    good_doc["input"].pop("relative_path")
    good_doc["input"].pop("rows")
    good_doc["landmarks"].pop("count")
    proj = load_project(write(tmp_path, good_doc))
    assert proj.seed is None and proj.view == {} and proj.input_relpath is None and proj.rows is None


def test_landmarks_in_any_order_are_paired_when_sorted(tmp_path, good_doc):
    good_doc["landmarks"]["rows"].reverse()
    good_doc["landmarks"]["timestamps"].reverse()
    proj = load_project(write(tmp_path, good_doc))
    assert proj.landmarks.tolist() == [3, 10, 50]
    assert str(proj.landmark_times[0]).startswith("2013-01-01T03:00")


def test_relative_path_is_relative_to_the_project_file(tmp_path, data_file, monkeypatch):
    monkeypatch.chdir(tmp_path)
    series = load_series(os.path.relpath(data_file, tmp_path))  # a relative input path
    proj = Project.from_series(series, [1], PrivacySettings())
    assert Path(proj.input_path).is_absolute()
    save_project("here.lmdk.json", proj)
    doc = json.loads((tmp_path / "here.lmdk.json").read_text(encoding="utf-8"))
    assert doc["input"]["relative_path"] == "work/data/energy.csv"
    assert doc["input"]["path"] == str(data_file)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_replaced_project_keeps_its_permissions(tmp_path, data_file):
    _, proj = make_project(data_file)
    out = tmp_path / "p.lmdk.json"
    save_project(out, proj)
    assert out.stat().st_mode & 0o777 == 0o600
    os.chmod(out, 0o640)
    save_project(out, proj)
    assert out.stat().st_mode & 0o777 == 0o640
