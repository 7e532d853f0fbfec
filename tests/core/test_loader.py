"""Tests for lmdk_gui.core.data.loader: real samples, layouts, and every kind of bad input.

Real data comes from ``resources/samples`` and ``tests/data`` (verbatim copies, see their SOURCES.md);
hand-made files go to ``tmp_path``. Row numbers in messages are file line numbers (header = line 1).
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmdk_gui.core.data.loader import (
    ColumnGuess,
    TablePreview,
    inspect_table,
    load_dataframe_series,
    load_series,
)
from lmdk_gui.core.data.series import LoadError, Series

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "resources" / "samples"
DATA = ROOT / "tests" / "data"

ENERGY_JAN = SAMPLES / "energy_hue_2013_jan.csv"
GPS = SAMPLES / "gps_bus_limerick.csv"
CONTACTS = SAMPLES / "contacts_person1672.csv"
CONTACTS_FIRST = SAMPLES / "contacts_person1672_first.csv"
HUE = DATA / "energy_hue_residential1_2013.csv"
CONTACTS_RAW = DATA / "contacts_highschool2012_person1672.csv"
GPS_RAW = DATA / "gps_bus_limerick_2019-02-18.csv"


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8", newline="")
    else:
        path.write_bytes(text)
    return path


def ts(text: str) -> np.datetime64:
    return np.datetime64(text, "ns")


def check_invariants(s: Series) -> None:
    assert s.times.dtype == np.dtype("datetime64[ns]")
    assert np.all(np.diff(s.times.view(np.int64)) > 0), "times must be sorted and unique"
    assert s.source is not None
    assert s.source.sha256 == hashlib.sha256(Path(s.source.path).read_bytes()).hexdigest()


def load_error(path: Path, **kwargs: object) -> LoadError:
    with pytest.raises(LoadError) as info:
        load_series(path, **kwargs)  # type: ignore[arg-type]
    return info.value


# --------------------------------------------------------------------------------------- real samples


def test_energy_sample_numeric_autodetected() -> None:
    s = load_series(ENERGY_JAN)
    check_invariants(s)
    assert s.kind == "numeric" and s.n == 744
    assert s.name == "energy_hue_2013_jan" and s.unit == ""
    assert s.times[0] == ts("2013-01-01T00:00") and s.times[-1] == ts("2013-01-31T23:00")
    assert s.values.dtype == np.float64 and s.values[:3].tolist() == [0.931, 0.595, 0.599]
    assert s.values[-1] == 2.613
    src = s.source
    assert src is not None
    assert (src.time_col, src.value_cols, src.time_format, src.columns.hour_col) == (
        "timestamp",
        ("kwh",),
        "iso",
        None,
    )
    assert (src.columns.duplicates, src.delimiter, src.path) == ("error", ",", str(ENERGY_JAN))


def test_gps_sample_location_autodetected() -> None:
    s = load_series(GPS)
    check_invariants(s)
    assert s.kind == "location" and s.n == 2144 and s.unit == "deg"
    assert s.values.shape == (2144, 2)
    assert s.values[0].tolist() == [52.629151, -8.661746]
    assert s.times[0] == ts("2019-02-18T07:45:50") and s.times[-1] == ts("2019-02-18T09:00:26")
    assert s.source is not None and s.source.value_cols == ("lat", "lon")
    # the sample is a byte-identical copy of the full track
    assert load_series(GPS_RAW).values.tolist() == s.values.tolist()


def test_contacts_first_sample_ids_are_read_as_labels() -> None:
    # issue 13: whole numbers in a column named like an id ('contact') are labels by default; numeric on request
    auto = load_series(CONTACTS_FIRST)
    assert auto.kind == "categorical"
    assert load_series(CONTACTS_FIRST, kind="numeric").kind == "numeric"
    s = load_series(CONTACTS_FIRST, kind="categorical")
    check_invariants(s)
    assert s.kind == "categorical" and s.n == 2271
    assert s.categories is not None and len(s.categories) == 30
    assert list(s.categories) == sorted(s.categories)
    assert s.categories[s.values[0]] == "1671" and s.categories[s.values[1]] == "1613"
    assert s.source is not None and s.source.time_format == "epoch"
    assert s.times[0] == ts("2012-11-19T05:46:40") and s.times[-1] == ts("2012-11-27T14:03:00")


def test_contacts_full_sample_needs_duplicate_policy() -> None:
    err = load_error(CONTACTS, kind="categorical")
    assert err.column == "timestamp"
    assert err.rows[:4] == [7, 8, 31, 32] and len(err.rows) == 2785 - 2271 + 462
    msg = str(err)
    assert msg.startswith("contacts_person1672.csv, rows 7, 8, 31, 32, 51 and ")
    assert "2012-11-19 06:17:00 on rows 7 and 8" in msg
    assert "keep first / keep last" in msg and "mean" not in msg  # no mean for categories

    first = load_series(CONTACTS, kind="categorical", duplicates="first")
    reference = load_series(CONTACTS_FIRST, kind="categorical")
    assert first.n == 2271
    assert np.array_equal(first.times, reference.times)
    labels = np.asarray(first.categories)[first.values]
    assert np.array_equal(labels, np.asarray(reference.categories)[reference.values])
    # the category list is every label in the file, whatever the duplicate policy keeps (stable domain)
    assert first.categories is not None and len(first.categories) == 34

    last = load_series(CONTACTS, kind="categorical", duplicates="last")
    assert last.n == 2271
    # 2012-11-19 06:17:00 is on file lines 7 (1613) and 8 (1170)
    i = int(np.searchsorted(last.times, ts("2012-11-19T06:17:00")))
    assert np.asarray(first.categories)[first.values[i]] == "1613"
    assert np.asarray(last.categories)[last.values[i]] == "1170"

    with pytest.raises(LoadError, match="not possible for categories"):
        load_series(CONTACTS, kind="categorical", duplicates="mean")


def test_contacts_raw_file_ambiguous_then_explicit() -> None:
    err = load_error(CONTACTS_RAW)
    assert "2 numeric columns (i, j)" in str(err) and "--value-col" in str(err)
    assert str(err).startswith("contacts_highschool2012_person1672.csv: ")
    s = load_series(CONTACTS_RAW, value_col="class_j", duplicates="first")
    assert s.kind == "categorical" and s.source is not None and s.source.time_format == "epoch"
    assert "MP*1" in (s.categories or ())


# ----------------------------------------------------------------------------- HUE repeated hours


def test_hue_duplicates_default_error_names_both_rows() -> None:
    err = load_error(HUE)
    assert err.rows == [2162, 2163, 7347, 7348]
    assert err.column == "timestamp" and err.path == str(HUE)
    msg = str(err)
    assert msg.startswith(
        "energy_hue_residential1_2013.csv, rows 2162, 2163, 7347 and 7348, column 'timestamp': "
    )
    assert "2013-04-01 01:00:00 on rows 2162 and 2163" in msg
    assert "2013-11-03 01:00:00 on rows 7347 and 7348" in msg
    assert "choose keep first / keep last / mean" in msg


@pytest.mark.parametrize(
    ("policy", "nov3"), [("first", 0.532), ("last", 0.576), ("mean", (0.532 + 0.576) / 2)]
)
def test_hue_duplicate_policies(policy: str, nov3: float) -> None:
    s = load_series(HUE, duplicates=policy)
    check_invariants(s)
    assert s.n == 8761 - 2 and s.source is not None and s.source.columns.duplicates == policy
    at = {str(t): v for t, v in zip(s.times.astype("datetime64[s]"), s.values, strict=True)}
    assert at["2013-11-03T01:00:00"] == pytest.approx(nov3, abs=1e-12)
    assert at["2013-04-01T01:00:00"] == pytest.approx(0.55, abs=1e-12)
    assert at["2013-11-03T00:00:00"] == 0.851 and at["2013-11-03T02:00:00"] == 0.546
    assert "2013-03-10T02:00:00" not in at  # clocks went forward: the gap stays a gap
    assert s.values.min() == 0.0 and s.values.max() == 11.804


def test_hue_inspect_table() -> None:
    p = inspect_table(HUE, nrows=5)
    assert isinstance(p, TablePreview)
    assert p.delimiter == "," and p.columns == ["timestamp", "kwh"]
    assert len(p.head) == 5 and p.head["kwh"].tolist()[:2] == [0.931, 0.595]
    assert p.guess == ColumnGuess(time_col="timestamp", value_col="kwh", kind="numeric")
    assert not p.ambiguous


def test_inspect_guesses_for_samples() -> None:
    gps = inspect_table(GPS)
    assert gps.guess == ColumnGuess(time_col="timestamp", lat_col="lat", lon_col="lon", kind="location")
    assert len(gps.head) == 20
    raw = inspect_table(CONTACTS_RAW)
    assert raw.ambiguous and raw.guess.time_col == "timestamp" and raw.guess.value_col is None
    assert any("i, j" in n and "value column" in n for n in raw.notes)


# --------------------------------------------------------------------------------------------- layouts


def test_date_hour_layout(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "Residential_1.csv",
        "date,hour,energy_kWh\n1/1/2013,0,0.931\n1/1/2013,1,0.595\n12/31/2013,23,1\n1/1/2013,2,0\n",
    )
    s = load_series(path)
    check_invariants(s)
    assert s.kind == "numeric"
    assert list(s.times) == [
        ts("2013-01-01T00"),
        ts("2013-01-01T01"),
        ts("2013-01-01T02"),
        ts("2013-12-31T23"),
    ]
    assert s.values.tolist() == [0.931, 0.595, 0.0, 1.0]
    assert s.source is not None
    assert (s.source.time_format, s.source.time_col, s.source.columns.hour_col) == ("date+hour", "date", "hour")
    assert s.source.value_cols == ("energy_kWh",)
    p = inspect_table(path)
    assert p.guess == ColumnGuess(time_col="date", value_col="energy_kWh", hour_col="hour", kind="numeric")


def test_date_hour_bad_hour(tmp_path: Path) -> None:
    path = write(tmp_path, "h.csv", "date,hour,kwh\n1/1/2013,0,1\n1/1/2013,24,1\n1/1/2013,1.5,1\n")
    err = load_error(path)
    assert str(err) == "h.csv, rows 3 and 4, column 'hour': expected a whole hour 0–23, got '24.0'"
    assert err.rows == [3, 4] and err.column == "hour"


def test_epoch_seconds_integer_and_float(tmp_path: Path) -> None:
    path = write(tmp_path, "e.csv", "time,value\n1353304000,1\n1353304000.5,2\n0,3\n")
    s = load_series(path)
    assert s.source is not None and s.source.time_format == "epoch"
    assert list(s.times) == [
        ts("1970-01-01T00:00:00"),
        ts("2012-11-19T05:46:40"),
        ts("2012-11-19T05:46:40.5"),
    ]
    assert s.values.tolist() == [3.0, 1.0, 2.0]


def test_epoch_milliseconds_hint(tmp_path: Path) -> None:
    path = write(tmp_path, "ms.csv", "timestamp,v\n1353304000000,1\n1353304000100,2\n")
    err = load_error(path)
    assert err.rows == [2, 3] and err.column == "timestamp"
    assert "milliseconds" in str(err)


def test_iso_variants_fraction_T_and_minutes(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "iso.csv",
        "Timestamp,v\n2013-01-01T00:00:00.250,1\n2013-01-01 00:00:01,2\n2013-01-01T00:02,3\n2013-01-02,4\n",
    )
    s = load_series(path)
    assert list(s.times) == [
        ts("2013-01-01T00:00:00.250"),
        ts("2013-01-01T00:00:01"),
        ts("2013-01-01T00:02"),
        ts("2013-01-02T00:00"),
    ]
    assert s.source is not None and s.source.time_col == "Timestamp"  # case-insensitive detection


def test_nanosecond_fraction_kept(tmp_path: Path) -> None:
    path = write(tmp_path, "ns.csv", "timestamp,v\n2013-01-01 00:00:00.123456789,1\n")
    assert load_series(path).times[0] == ts("2013-01-01T00:00:00.123456789")


def test_us_dates_in_single_time_column(tmp_path: Path) -> None:
    path = write(tmp_path, "us.csv", "date,v\n1/31/2013,1\n2/1/2013,2\n")
    s = load_series(path)
    assert list(s.times) == [ts("2013-01-31"), ts("2013-02-01")]


def test_us_dates_with_a_twelve_hour_clock(tmp_path: Path) -> None:
    """'1/31/2013 12:00 AM' (a US spreadsheet's export) was "expected a timestamp" on every row."""
    path = write(tmp_path, "ampm.csv", "Date,Usage\n1/31/2013 12:00 AM,1\n1/31/2013 1:00 AM,2\n1/31/2013 12:30 PM,3\n"
                                       "1/31/2013 1:05 pm,4\n")
    assert list(load_series(path).times) == [ts("2013-01-31T00:00"), ts("2013-01-31T01:00"), ts("2013-01-31T12:30"),
                                              ts("2013-01-31T13:05")]
    secs = write(tmp_path, "s.csv", "Date,Usage\n1/31/2013 11:59:59PM,1\n2/1/2013 12:00:01AM,2\n")
    assert list(load_series(secs).times) == [ts("2013-01-31T23:59:59"), ts("2013-02-01T00:00:01")]
    bad = write(tmp_path, "b.csv", "Date,Usage\n1/31/2013 12:00 AM,1\n1/31/2013 13:00 PM,2\n")
    assert load_error(bad).rows == [3]


def test_only_parseable_date_column_is_the_time(tmp_path: Path) -> None:
    path = write(tmp_path, "when.csv", "when,reading\n2013-01-01 00:00:00,1.5\n2013-01-01 01:00:00,2.5\n")
    p = inspect_table(path)
    assert p.guess.time_col == "when" and p.guess.value_col == "reading" and not p.ambiguous
    assert load_series(path).values.tolist() == [1.5, 2.5]


def test_timezone_strings_converted_to_utc(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "tz.csv",
        "timestamp,v\n"
        "2013-03-31T01:30:00+01:00,1\n"  # CET
        "2013-03-31T03:30:00+02:00,2\n"  # CEST: one hour later in real time
        "2013-03-31T02:00:00Z,3\n",
    )
    s = load_series(path)
    assert list(s.times) == [ts("2013-03-31T00:30"), ts("2013-03-31T01:30"), ts("2013-03-31T02:00")]
    assert s.values.tolist() == [1.0, 2.0, 3.0]
    same_zone = write(
        tmp_path, "tz1.csv", "timestamp,v\n2013-01-01 01:00:00+01:00,1\n2013-01-01 02:00:00+01:00,2\n"
    )
    assert list(load_series(same_zone).times) == [ts("2013-01-01T00:00"), ts("2013-01-01T01:00")]


@pytest.mark.parametrize("text,fmt", [("2013-03-31T01:30:00+01:00\n2013-03-31T03:30:00+02:00", "iso-utc"),
                                      ("2013-01-01 01:00:00+01:00\n2013-01-01 02:00:00+01:00", "iso-utc"),
                                      ("2013-01-01 01:00:00\n2013-01-01 02:00:00", "iso")])
def test_a_release_of_zoned_times_says_they_are_utc(tmp_path: Path, text: str, fmt: str) -> None:
    """Times given with a zone are converted to UTC; the release wrote them without a zone, so a reader took
    UTC for local time. They are written with a Z (a phone's GPX track, a smart meter's ISO times), read back
    as the same instants; times without a zone stay without one."""
    from lmdk_gui.core.kernel.settings import PrivacySettings
    from lmdk_gui.core.publish.export import ExportOptions, export_release

    rows = "".join(f"{t},{i}\n" for i, t in enumerate(text.split("\n")))
    s = load_series(write(tmp_path, "z.csv", "timestamp,v\n" + rows))
    assert s.source is not None and s.source.time_format == fmt
    export_release(s, [], PrivacySettings(), tmp_path / "r.csv", ExportOptions("uniform"))
    written = (tmp_path / "r.csv").read_text().splitlines()[1:]
    assert all(line.split(",")[0].endswith("Z") == (fmt == "iso-utc") for line in written)
    assert np.array_equal(load_series(tmp_path / "r.csv").times, s.times)


def test_mixing_zone_and_no_zone_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "mix.csv", "timestamp,v\n2013-01-01 00:00:00,1\n2013-01-01 01:00:00+01:00,2\n")
    err = load_error(path)
    assert err.rows == [2] and err.column == "timestamp" and "ambiguous" in str(err)
    path2 = write(tmp_path, "mix2.csv", "timestamp,v\n2013-01-01 00:00:00Z,1\n2013-01-01 01:00:00,2\n")
    err2 = load_error(path2)
    assert err2.rows == [3] and "mix2.csv, row 3, column 'timestamp'" in str(err2)


def test_unsorted_input_is_sorted_stably(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "u.csv",
        "timestamp,v\n2013-01-01 03:00:00,3\n2013-01-01 01:00:00,1\n2013-01-01 02:00:00,20\n"
        "2013-01-01 00:00:00,0\n2013-01-01 02:00:00,21\n",
    )
    err = load_error(path)
    assert err.rows == [4, 6]  # both rows of the repeated time, in file order
    first = load_series(path, duplicates="first")
    assert first.values.tolist() == [0.0, 1.0, 20.0, 3.0]
    assert load_series(path, duplicates="last").values.tolist() == [0.0, 1.0, 21.0, 3.0]
    assert load_series(path, duplicates="mean").values.tolist() == [0.0, 1.0, 20.5, 3.0]
    assert np.all(np.diff(first.times.view(np.int64)) > 0)


def test_location_duplicates_mean_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path, "loc.csv", "time,latitude,lng\n2019-01-01 00:00:00,10,20\n2019-01-01 00:00:00,12,22\n"
    )
    # issue 13: a mean of positions is a place nobody was; refused with the choices that work
    with pytest.raises(LoadError, match="mean is not possible for locations") as info:
        load_series(path, duplicates="mean")
    assert info.value.option == "duplicates" and info.value.choices == ("first", "last", "drop-exact")
    assert load_series(path, duplicates="first").values.tolist() == [[10.0, 20.0]]


def test_tsv_and_semicolon(tmp_path: Path) -> None:
    tsv = write(tmp_path, "e.tsv", "timestamp\tkwh\n2013-01-01 00:00:00\t1.5\n2013-01-01 01:00:00\t2\n")
    s = load_series(tsv)
    assert s.values.tolist() == [1.5, 2.0] and s.source is not None and s.source.delimiter == "\t"
    sniffed = write(tmp_path, "tabs.csv", "timestamp\tkwh\n2013-01-01 00:00:00\t1.5\n")
    assert inspect_table(sniffed).delimiter == "\t"
    semi = write(tmp_path, "semi.csv", "timestamp;lat;lon\n2013-01-01 00:00:00;1.5;2.5\n")
    s2 = load_series(semi)
    assert s2.kind == "location" and s2.source is not None and s2.source.delimiter == ";"


def test_utf8_bom_and_utf16_bom(tmp_path: Path) -> None:
    text = "timestamp,kwh\r\n2013-01-01 00:00:00,1.5\r\n2013-01-01 01:00:00,2.5\r\n"
    bom8 = write(tmp_path, "bom8.csv", b"\xef\xbb\xbf" + text.encode())
    s = load_series(bom8)
    assert s.values.tolist() == [1.5, 2.5] and s.source is not None and s.source.time_col == "timestamp"
    check_invariants(s)  # hash of the bytes on disk, BOM included
    bom16 = write(tmp_path, "bom16.csv", text.encode("utf-16"))
    assert load_series(bom16).values.tolist() == [1.5, 2.5]
    assert inspect_table(bom16).columns == ["timestamp", "kwh"]


def test_kind_categorical_keeps_labels_as_written(tmp_path: Path) -> None:
    path = write(tmp_path, "ids.csv", "timestamp,device\n1,007\n2,10\n3,9\n4,007\n")
    assert load_series(path, kind="numeric").kind == "numeric"
    # issue 13: a column named like an id ('device') holding whole numbers is read as labels by default
    assert load_series(path).categories == ("007", "10", "9")
    s = load_series(path, kind="categorical")
    assert s.categories == ("007", "10", "9")  # sorted as text, spelled as in the file
    assert s.values.tolist() == [0, 1, 2, 0]


def test_text_column_is_categorical_and_na_is_a_label(tmp_path: Path) -> None:
    path = write(tmp_path, "c.csv", "timestamp,country\n2013-01-01,NA\n2013-01-02,None\n2013-01-03,FR\n")
    s = load_series(path)
    assert s.kind == "categorical" and s.categories == ("FR", "NA", "None")
    assert s.values.tolist() == [1, 2, 0]


def test_public_categories(tmp_path: Path) -> None:
    path = write(tmp_path, "cat.csv", "timestamp,state\n2013-01-01,home\n2013-01-02,work\n2013-01-03,gym\n")
    s = load_series(path, categories=["work", "home", "gym", "shop"])
    assert s.categories == ("work", "home", "gym", "shop") and s.values.tolist() == [1, 0, 2]
    err = load_error(path, categories=["home", "work"])
    assert str(err).startswith(
        "cat.csv, row 4, column 'state': label(s) 'gym' not in the public category list"
    )
    assert err.rows == [4] and err.column == "state"
    with pytest.raises(LoadError, match="twice"):
        load_series(path, categories=["home", "home", "work", "gym"])


def test_extra_columns_ignored_with_usecols(tmp_path: Path) -> None:
    path = write(
        tmp_path, "x.csv", "note,timestamp,kwh\nhello,2013-01-01 00:00:00,1\nworld,2013-01-01 01:00:00,2\n"
    )
    s = load_series(path)
    assert s.values.tolist() == [1.0, 2.0]
    assert any("note" in n for n in inspect_table(path).notes)


def test_dataframe_series() -> None:
    df = pd.DataFrame(
        {"timestamp": pd.to_datetime(["2013-01-01 01:00", "2013-01-01 00:00"]), "kwh": [2.0, 1.0]},
        index=[10, 20],
    )
    s = load_dataframe_series(df, name="mem")
    assert s.name == "mem" and s.values.tolist() == [1.0, 2.0] and s.kind == "numeric"
    assert s.source is not None and s.source.sha256 == "" and s.source.path == "mem"
    aware = pd.DataFrame({"t": pd.to_datetime(["2013-01-01 01:00+01:00"]), "lat": [1.0], "lon": [2.0]})
    loc = load_dataframe_series(aware, time_col="t")
    assert loc.kind == "location" and loc.times[0] == ts("2013-01-01T00:00")
    bad = pd.DataFrame({"timestamp": ["2013-01-01", "2013-01-02", "x"], "v": [1.0, 2.0, 3.0]})
    with pytest.raises(LoadError) as info:
        load_dataframe_series(bad)
    assert str(info.value).startswith("<memory>, row 4, column 'timestamp': expected a timestamp")


def test_dataframe_integer_labels() -> None:
    df = pd.DataFrame({"timestamp": [1353304000, 1353304020], "contact": [1671, 1613]})
    s = load_dataframe_series(df, kind="categorical")
    assert s.categories == ("1613", "1671") and s.values.tolist() == [1, 0]


# -------------------------------------------------------------------------------------------- errors


def test_file_not_found_and_directory(tmp_path: Path) -> None:
    err = load_error(tmp_path / "nope.csv")
    assert str(err).startswith("nope.csv: file not found") and err.path == str(tmp_path / "nope.csv")
    with pytest.raises(LoadError, match="not found"):
        inspect_table(tmp_path / "nope.csv")
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    assert "folder" in str(load_error(folder))


def test_unreadable_file(tmp_path: Path) -> None:
    path = write(tmp_path, "secret.csv", "timestamp,v\n2013-01-01,1\n")
    path.chmod(0)
    try:
        try:
            path.read_bytes()
        except PermissionError:
            assert str(load_error(path)) == "secret.csv: permission denied, cannot read the file"
        else:
            pytest.skip("running with privileges that ignore file permissions")
    finally:
        path.chmod(0o644)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "empty.csv: the file is empty (0 bytes)"),
        (b"timestamp,kwh\n", "empty.csv: no data rows (only a header)"),
        (b"\n\n\n", "empty.csv: the file has no header row and no data (only blank lines)"),
    ],
)
def test_empty_files(tmp_path: Path, content: bytes, expected: str) -> None:
    path = write(tmp_path, "empty.csv", content)
    assert str(load_error(path)) == expected
    if content:
        if b"timestamp" in content:
            assert inspect_table(path).notes[0].startswith("the file has a header but no data rows")
        else:
            with pytest.raises(LoadError):
                inspect_table(path)
    else:
        with pytest.raises(LoadError, match="empty"):
            inspect_table(path)


def test_undecodable_bytes_no_latin1_fallback(tmp_path: Path) -> None:
    data = "timestamp,city\n2013-01-01,Paris\n2013-01-02,Montréal\n".encode("latin-1")
    path = write(tmp_path, "cities.csv", data)
    err = load_error(path)
    offset = data.index(b"\xe9")
    assert str(err).startswith(
        f"cities.csv, row 3, column 'city': not valid UTF-8 text (byte 0xe9 at offset {offset})"
    )
    assert err.rows == [3] and err.column == "city"
    with pytest.raises(LoadError, match="UTF-8"):
        inspect_table(path)


def test_the_utf8_check_by_slices_finds_what_one_decode_finds() -> None:
    """The check decodes a slice of whole lines at a time (one decode of a large file held the GIL, and the
    window could not paint): the first bad byte is the same, wherever the slices end."""
    from lmdk_gui.core.data.reading import _utf8_error_offset

    rng = np.random.default_rng(5)
    lines = [f"2013-01-{d:02d},{'Montréal' if d % 3 else 'Zoë'},{rng.random():.3f}" for d in range(1, 29)]
    good = ("timestamp,city,v\n" + "\n".join(lines) + "\n").encode("utf-8")
    for step in (1, 7, 40, 1 << 23):
        assert _utf8_error_offset(good, step) == -1
        for bad in (b"\xe9", b"\xc3", b"\xff\xfe"):
            at = int(rng.integers(1, len(good) - 2))
            data = good[:at] + bad + good[at:]
            try:
                data.decode("utf-8")
                expected = -1
            except UnicodeDecodeError as exc:
                expected = exc.start
            assert _utf8_error_offset(data, step) == expected, (step, bad, at)
    assert _utf8_error_offset(good[:-3] + b"\xc3", 16) == len(good) - 3  # cut inside a character at the end


def test_a_file_of_only_a_byte_order_mark_is_empty(tmp_path: Path) -> None:
    path = write(tmp_path, "bom.csv", b"\xef\xbb\xbf")
    assert "no header row and no data" in str(load_error(path))


def test_nul_bytes_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "u16.csv", "timestamp,v\n2013-01-01,1\n".encode("utf-16-le"))
    assert "NUL byte" in str(load_error(path))


def test_missing_column_lists_available(tmp_path: Path) -> None:
    err = load_error(ENERGY_JAN, value_col="kwhh")
    assert str(err) == (
        "energy_hue_2013_jan.csv, column 'kwhh': no such column (requested by value_col='kwhh'); "
        "the file has columns: 'timestamp', 'kwh'"
    )
    assert err.column == "kwhh"
    assert load_error(ENERGY_JAN, time_col="when").column == "when"
    # case-insensitive match when unique
    assert load_series(ENERGY_JAN, value_col="KWH").n == 744


def _energy(tmp_path: Path, bad_line: int, bad_value: str, n: int = 60, name: str = "energy.csv") -> Path:
    rows = ["timestamp,kwh"]
    for i in range(n):
        line = i + 2
        value = bad_value if line == bad_line else f"{i / 10:.1f}"
        rows.append(f"2013-01-01 {i // 60:02d}:{i % 60:02d}:00,{value}")
    return write(tmp_path, name, "\n".join(rows) + "\n")


def test_non_numeric_text_in_numeric_column(tmp_path: Path) -> None:
    path = _energy(tmp_path, 57, "abc")
    err = load_error(path)
    assert str(err) == "energy.csv, row 57, column 'kwh': expected a number, got 'abc'"
    assert err.rows == [57] and err.column == "kwh" and err.path == str(path)
    # the preview still proposes kwh as the numeric value column (one typo must not make it a label)
    p = inspect_table(path)
    assert p.guess.kind == "numeric" and p.guess.value_col == "kwh"


def test_many_bad_rows_are_counted(tmp_path: Path) -> None:
    rows = ["timestamp,kwh"] + [f"2013-01-01 00:{i:02d}:00,{'x' if i % 2 else '1'}" for i in range(60)]
    path = write(tmp_path, "many.csv", "\n".join(rows) + "\n")
    err = load_error(path, kind="numeric")  # half text: detection alone would call it categorical
    assert str(err).startswith("many.csv, rows 3, 5, 7, 9, 11 and 25 more, column 'kwh': expected a number")
    assert len(err.rows) == 30


def test_one_typo_in_two_rows_is_still_numeric(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.csv", "timestamp,kwh\n2013-01-01 00:00:00,1.0\n2013-01-01 01:00:00,abc\n")
    assert str(load_error(path)) == "bad.csv, row 3, column 'kwh': expected a number, got 'abc'"
    labels = write(
        tmp_path, "labels.csv", "timestamp,room\n2013-01-01,kitchen\n2013-01-02,2\n2013-01-03,hall\n"
    )
    assert load_series(labels).kind == "categorical"  # mostly text: labels


@pytest.mark.parametrize("sep", [";", "\t"])
def test_a_spreadsheet_saved_with_decimal_commas_and_dotted_dates_opens(tmp_path: Path, sep: str) -> None:
    """A European spreadsheet's CSV: ';' (or tabs) between fields, decimal commas, D.M.YYYY dates. It opened
    with "no time column found", then "decimal commas are not supported" on every row."""
    text = f"Zeit{sep}Verbrauch (kWh)\n31.12.2012 23:00{sep}0,931\n01.01.2013 00:00{sep}12\n1.1.2013 01:30{sep}-2,5\n"
    s = load_series(write(tmp_path, "eu.csv", text))
    check_invariants(s)
    assert s.kind == "numeric" and s.values.tolist() == [0.931, 12.0, -2.5]
    assert list(s.times) == [ts("2012-12-31T23:00"), ts("2013-01-01T00:00"), ts("2013-01-01T01:30")]
    loc = write(tmp_path, "track.csv", f"time{sep}lat{sep}lon\n01.02.2019 08:00:05{sep}52,66{sep}-8,63\n"
                                       f"01.02.2019 08:00:10{sep}52,6612{sep}-8,6301\n")
    assert load_series(loc).values.tolist() == [[52.66, -8.63], [52.6612, -8.6301]]


def test_thousands_points_among_decimal_commas(tmp_path: Path) -> None:
    """'1.234,5' in a ';' file was read as a label (a categorical series of numbers); a decimal point among
    decimal commas, past the sampled rows, is named, not read as thousands."""
    eu = write(tmp_path, "t.csv", "Zeit;Wert\n01.01.2013 00:00;1.234,5\n01.01.2013 01:00;0,5\n"
                                  "01.01.2013 02:00;12\n01.01.2013 03:00;-2.000.000,25\n")
    s = load_series(eu)
    assert s.kind == "numeric" and s.values.tolist() == [1234.5, 0.5, 12.0, -2000000.25]
    rows = "".join(f"{i // 60 + 1:02d}.01.2013 {i % 24:02d}:{i % 60:02d};{i},5\n" for i in range(300))
    late = write(tmp_path, "late.csv", "Zeit;Wert\n" + rows + "20.02.2013 00:00;2.25\n")
    err = load_error(late)
    assert err.rows == [302] and "a point only separates thousands" in str(err)


def test_decimal_commas_where_they_cannot_be_read(tmp_path: Path) -> None:
    """A comma-separated file (quoted "1,5") or a ';' file that also writes points: the rows are named and the
    message says when decimal commas are read."""
    quoted = write(tmp_path, "q.csv", 'timestamp,kwh\n2013-01-01 00:00:00,"1,5"\n2013-01-01 01:00:00,"2,0"\n')
    err = load_error(quoted)  # detected as numeric, so the message explains the decimal commas
    assert err.rows == [2, 3] and err.column == "kwh" and "decimal commas are read only from a file" in str(err)
    mixed = write(tmp_path, "m.csv", "timestamp;kwh\n2013-01-01 00:00:00;1,5\n2013-01-01 01:00:00;2.25\n")
    err = load_error(mixed)
    assert err.rows == [2] and "writes no decimal points" in str(err)
    late = write(tmp_path, "late.csv", "timestamp;kwh\n2013-01-01 00:00:00;1,5\n2013-01-01 01:00:00;x\n")
    assert str(load_error(late)) == "late.csv, row 3, column 'kwh': expected a number, got 'x'"


def test_dotted_dates_are_day_first_and_bad_ones_named(tmp_path: Path) -> None:
    s = load_series(write(tmp_path, "d.csv", "Datum,v\n02.01.2013,1\n03.01.2013,2\n"))
    assert list(s.times) == [ts("2013-01-02"), ts("2013-01-03")]
    err = load_error(write(tmp_path, "bad.csv", "Datum;v\n31.01.2013 00:00;1\n32.01.2013 00:00;2\n"))
    assert str(err) == ("bad.csv, row 3, column 'Datum': expected a timestamp like '31.01.2013 00:00', "
                        "got '32.01.2013 00:00'")


def test_missing_values(tmp_path: Path) -> None:
    path = _energy(tmp_path, 10, "")
    err = load_error(path)
    assert str(err) == "energy.csv, row 10, column 'kwh': missing value (empty field)"
    path2 = write(tmp_path, "nan.csv", "timestamp,kwh\n2013-01-01 00:00:00,NaN\n2013-01-01 01:00:00,1\n")
    assert load_error(path2).rows == [2]
    path3 = write(tmp_path, "inf.csv", "timestamp,kwh\n2013-01-01 00:00:00,1\n2013-01-01 01:00:00,inf\n")
    err3 = load_error(path3)
    assert err3.rows == [3] and "finite" in str(err3)


def test_missing_category_label(tmp_path: Path) -> None:
    path = write(tmp_path, "c.csv", "timestamp,who\n2013-01-01,a\n2013-01-02,\n2013-01-03,b\n")
    err = load_error(path)
    assert str(err) == "c.csv, row 3, column 'who': missing value (empty field)"


def test_unparseable_and_missing_timestamps(tmp_path: Path) -> None:
    path = write(
        tmp_path, "t.csv", "timestamp,kwh\n2013-01-01 00:00:00,1\n2013-02-30 00:00:00,2\nyesterday,3\n"
    )
    err = load_error(path)
    assert str(err).startswith("t.csv, rows 3 and 4, column 'timestamp': expected a timestamp like")
    assert "'2013-02-30 00:00:00'" in str(err)
    path2 = write(tmp_path, "t2.csv", "timestamp,kwh\n2013-01-01 00:00:00,1\n,2\n")
    assert str(load_error(path2)) == "t2.csv, row 3, column 'timestamp': missing timestamp (empty field)"


def test_relative_words_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "now.csv", "timestamp,kwh\n2013-01-01 00:00:00,1\nnow,2\ntoday,3\n")
    err = load_error(path)
    assert err.rows == [3, 4] and err.column == "timestamp" and "'now'" in str(err)
    # genuine future timestamps are fine
    future = write(tmp_path, "future.csv", "timestamp,kwh\n2200-01-01 00:00:00,1\n")
    assert load_series(future).times[0] == ts("2200-01-01")


def test_timestamps_out_of_range(tmp_path: Path) -> None:
    path = write(tmp_path, "far.csv", "timestamp,kwh\n2013-01-01 00:00:00,1\n3013-01-01 00:00:00,2\n")
    err = load_error(path)
    assert err.rows == [3] and "supported range" in str(err)


@pytest.mark.parametrize(("row", "column", "bad"), [(3, "lat", "90.5"), (2, "lon", "-180.25")])
def test_coordinates_out_of_range(tmp_path: Path, row: int, column: str, bad: str) -> None:
    lines = ["timestamp,lat,lon", "2019-01-01 00:00:00,52.1,-8.6", "2019-01-01 00:00:01,52.2,-8.7"]
    fields = lines[row - 1].split(",")
    fields[1 if column == "lat" else 2] = bad
    lines[row - 1] = ",".join(fields)
    path = write(tmp_path, "gps.csv", "\n".join(lines) + "\n")
    err = load_error(path)
    assert str(err).startswith(f"gps.csv, row {row}, column '{column}': ")
    assert ("latitude" if column == "lat" else "longitude") in str(err) and bad in str(err)


def test_ragged_rows(tmp_path: Path) -> None:
    path = write(tmp_path, "r.csv", "timestamp,kwh\n2013-01-01 00:00:00,1\n2013-01-01 01:00:00,2,3\n")
    err = load_error(path)
    assert str(err).startswith("r.csv, row 3: expected 2 fields (as in the header), found 3")
    assert err.rows == [3]
    p = inspect_table(path)  # the preview survives and warns
    assert any("row 3" in n for n in p.notes)
    short = write(tmp_path, "s.csv", "timestamp,kwh\n2013-01-01 00:00:00,1\n2013-01-01 01:00:00\n")
    assert str(load_error(short)) == "s.csv, row 3, column 'kwh': missing value (empty field)"


def test_blank_lines_count_in_row_numbers(tmp_path: Path) -> None:
    path = write(tmp_path, "b.csv", "timestamp,kwh\n\n2013-01-01 00:00:00,1\n\r\n2013-01-01 01:00:00,x\n\n")
    err = load_error(path, kind="numeric")
    assert err.rows == [5] and str(err).startswith("b.csv, row 5, column 'kwh'")


def test_ambiguous_columns_name_the_option(tmp_path: Path) -> None:
    two = write(tmp_path, "two.csv", "timestamp,a,b\n2013-01-01,1,2\n")
    assert "--value-col" in str(load_error(two)) and "(a, b)" in str(load_error(two))
    assert load_series(two, value_col="b").values.tolist() == [2.0]
    times = write(tmp_path, "times.csv", "date,time,v\n2013-01-01,00:00,1\n")
    assert "--time-col" in str(load_error(times))
    none = write(tmp_path, "none.csv", "a,b\nx,1\n")
    assert "--time-col" in str(load_error(none))
    texts = write(tmp_path, "texts.csv", "timestamp,a,b\n2013-01-01,x,y\n")
    assert "--value-col" in str(load_error(texts))
    lat_only = write(tmp_path, "lat.csv", "timestamp,lat,v\n2013-01-01,1,2\n")
    assert "--lon-col" in str(load_error(lat_only, kind="location"))


def test_bad_options(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="duplicates"):
        load_series(ENERGY_JAN, duplicates="average")
    with pytest.raises(LoadError, match="kind"):
        load_series(ENERGY_JAN, kind="text")  # type: ignore[arg-type]
    with pytest.raises(LoadError, match="both the time and a value"):
        load_series(ENERGY_JAN, time_col="timestamp", value_col="timestamp")


def test_duplicate_header_names(tmp_path: Path) -> None:
    path = write(tmp_path, "dup.csv", "timestamp,kwh,kwh\n2013-01-01,1,2\n")
    err = load_error(path, value_col="kwh")
    assert err.rows == [1] and err.column == "kwh" and "twice" in str(err)
    assert any("twice" in n for n in inspect_table(path).notes)


def test_parquet_without_pyarrow(tmp_path: Path) -> None:
    path = write(tmp_path, "x.parquet", b"PAR1 not really parquet")
    if importlib.util.find_spec("pyarrow") is None:
        assert "pyarrow" in str(load_error(path))
    else:  # pragma: no cover - depends on the environment
        assert "Parquet" in str(load_error(path))


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="pyarrow not installed")
def test_parquet_roundtrip(tmp_path: Path) -> None:  # pragma: no cover - depends on the environment
    df = pd.read_csv(ENERGY_JAN)
    path = tmp_path / "e.parquet"
    df.to_parquet(path)
    s = load_series(path)
    assert s.n == 744 and s.values[0] == 0.931


# ------------------------------------------------------------------------------------ hostile input


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.lists(
        st.text(alphabet=st.sampled_from(list("0123456789-:., \t;\"'TZ+abNn\r\n\x00é")), max_size=30),
        max_size=8,
    ),
    header=st.sampled_from(
        ["timestamp,kwh", "timestamp,lat,lon", "date,hour,v", "t;x", "timestamp\tkwh", ""]
    ),
    raw_tail=st.binary(max_size=8),
)
def test_only_loaderror_on_garbage(tmp_path: Path, body: list[str], header: str, raw_tail: bytes) -> None:
    path = tmp_path / "fuzz.csv"
    path.write_bytes((header + "\n" + "\n".join(body)).encode("utf-8") + raw_tail)
    for fn in (load_series, inspect_table):
        try:
            fn(path)
        except LoadError as exc:
            assert str(exc).startswith("fuzz.csv")


def test_absurdly_wide_lines_are_refused_naming_the_line(tmp_path):
    from lmdk_gui.core.data.reading import MAX_FIELDS

    p = tmp_path / "wide.csv"
    p.write_text("timestamp,kwh\n2013-01-01 00:00:00,1\n" + "1," * (MAX_FIELDS + 5) + "\n")
    with pytest.raises(LoadError, match=r"wide\.csv.*row 3.*fields on one line"):
        load_series(p)


@pytest.mark.parametrize("persons", [1, 3])
def test_the_id_column_note_does_not_count_the_first_rows_ids(tmp_path, persons) -> None:
    """A long table whose first rows are one person's: the note said "1 ids", then "(1 id in the first 200
    rows)" beside the import dialog's "Person to open (3 in the file)", which read as one person. The note
    names the column; the dialog counts the whole file's persons."""
    rows = [f"P{p},2021-01-01 {h:02d}:00:00,{h}" for p in range(persons) for h in range(24)]
    path = tmp_path / "meters.csv"
    path.write_text("household,timestamp,kwh\n" + "\n".join(rows) + "\n")
    notes = " ".join(inspect_table(path).notes)
    assert "'household' looks like a person id column: one person's rows are read at a time" in notes
    assert " id in the first" not in notes and " ids in the first" not in notes
