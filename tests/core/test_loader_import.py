"""Issue 13: the loader's options for real data — exact duplicate rows, mean only for numbers, skipping
rows with missing values, contact logs read for one person — and the whole-file scan the dialog shows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.data.loader import (
    CONTACT_COLUMN,
    inspect_table,
    load_dataframe_series,
    load_series,
    pair_columns,
    scan_table,
)
from lmdk_gui.core.data.series import LoadError
from tests.conftest import DATA, SAMPLES

PAIRS = DATA / "contact_pairs_synthetic.csv"
HUE = DATA / "energy_hue_residential1_2013.csv"


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def energy(tmp_path: Path, rows: list[tuple[str, str]], name: str = "e.csv") -> Path:
    return write(tmp_path, name, "timestamp,kwh\n" + "".join(f"{t},{v}\n" for t, v in rows))


H = [f"2013-01-01 {h:02d}:00:00" for h in range(10)]


# ------------------------------------------------------------------------------------ exact duplicates


def test_exact_duplicate_rows_policy(tmp_path: Path) -> None:
    path = energy(tmp_path, [(H[0], "1"), (H[1], "2"), (H[1], "2"), (H[2], "3"), (H[2], "3"), (H[3], "4")])
    err = pytest.raises(LoadError, load_series, path).value
    assert err.rows == [4, 6] and err.option == "duplicates" and err.choices[0] == "drop-exact"
    assert "2 exact duplicate rows (same time and value as an earlier row)" in str(err)
    assert "duplicates=" not in str(err)  # no API words in the message
    s = load_series(path, duplicates="drop-exact")
    assert s.values.tolist() == [1, 2, 3, 4] and s.source.exact_duplicates_dropped == 2
    assert load_series(path, duplicates="first").values.tolist() == [1, 2, 3, 4]


def test_drop_exact_still_refuses_other_repeats(tmp_path: Path) -> None:
    path = energy(tmp_path, [(H[0], "1"), (H[0], "1"), (H[1], "2"), (H[1], "5")])
    err = pytest.raises(LoadError, load_series, path, duplicates="drop-exact").value
    assert err.rows == [4, 5] and err.choices == ("first", "last", "mean")
    assert str(err).endswith("choose keep first / keep last / mean")


def test_mean_is_not_weighted_by_exact_copies(tmp_path: Path) -> None:
    path = energy(tmp_path, [(H[0], "1"), (H[0], "1"), (H[0], "4"), (H[1], "2")])
    assert load_series(path, duplicates="mean").values.tolist() == [2.5, 2.0]


def test_mean_refused_for_categories_with_choices(tmp_path: Path) -> None:
    path = write(tmp_path, "c.csv", "timestamp,label\n2013-01-01,a\n2013-01-02,b\n")
    err = pytest.raises(LoadError, load_series, path, duplicates="mean").value
    assert "mean is not possible for categories" in str(err) and "first" in err.choices


# ------------------------------------------------------------------------------------- missing values


def test_skip_missing_rows_and_rows_stay_numbered_as_in_the_file(tmp_path: Path) -> None:
    rows = [(H[0], "1"), (H[1], ""), ("", "3"), (H[3], "4"), (H[4], "x5"), (H[5], "6")]
    path = energy(tmp_path, rows)
    err = pytest.raises(LoadError, load_series, path).value
    assert err.option == "skip_missing" and err.rows == [4] and "missing timestamp" in str(err)
    # with the empty rows set aside the typo is still reported on its own file row (6)
    err2 = pytest.raises(LoadError, load_series, path, skip_missing=True).value
    assert err2.rows == [6] and err2.column == "kwh" and "expected a number, got 'x5'" in str(err2)
    path2 = energy(tmp_path, [r for r in rows if r[1] != "x5"], "e2.csv")
    s = load_series(path2, skip_missing=True)
    assert s.values.tolist() == [1, 4, 6] and s.source.missing_skipped == 2 and s.source.columns.skip_missing


def test_skip_missing_everything_missing(tmp_path: Path) -> None:
    path = energy(tmp_path, [(H[0], ""), (H[1], "")])
    with pytest.raises(LoadError, match="no rows left"):
        load_series(path, skip_missing=True)


# ---------------------------------------------------------------------------------------- contact logs


def test_pair_columns_rule() -> None:
    assert pair_columns(["timestamp", "i", "j", "class_i", "class_j"]) == [("i", "j"), ("class_i", "class_j")]
    assert pair_columns(["t", "id1", "id2", "source", "target"]) == [("id1", "id2"), ("source", "target")]
    assert pair_columns(["timestamp", "kwh", "lat", "lon"]) == []


def test_contact_log_detected_and_needs_a_person() -> None:
    prev = inspect_table(PAIRS)
    assert prev.guess.pair_cols == ("i", "j") and prev.guess.kind == "categorical" and prev.ambiguous
    err = pytest.raises(LoadError, load_series, PAIRS).value
    assert err.option == "person" and "ids with most rows: 1005 (179 rows), 1006 (94 rows)" in str(err)


def test_contacts_of_one_person(tmp_path: Path) -> None:
    raw = pd.read_csv(PAIRS, dtype=str)
    mine = raw[(raw.i == "1006") | (raw.j == "1006")]
    s = load_series(PAIRS, person=1006, duplicates="first")
    assert s.kind == "categorical" and s.source.columns.pair_cols == ("i", "j") and s.source.columns.person == "1006"
    assert s.source.value_cols == (CONTACT_COLUMN,)
    others = np.where(mine.i == "1006", mine.j, mine.i)
    first = pd.Series(others, index=mine.timestamp.astype(int)).groupby(level=0).first()
    got = np.asarray(s.categories)[s.values]
    assert got.tolist() == first.tolist() and "1006" not in s.categories
    assert s.times.astype("datetime64[s]").astype(np.int64).tolist() == first.index.tolist()
    # the other person's class instead of their id
    c = load_series(PAIRS, pair_cols="i,j", person="1006", pair_class_cols=("class_i", "class_j"),
                    duplicates="last")
    assert set(c.categories) <= {"2BIO1", "PC", "MP*1"} and c.n == s.n
    # the pair columns are detected when only the class columns are named
    d = load_series(PAIRS, person="1006", pair_class_cols="class_i,class_j", duplicates="last")
    assert np.array_equal(d.values, c.values) and d.categories == c.categories
    classes = dict(zip(raw.i, raw.class_i, strict=False)) | dict(zip(raw.j, raw.class_j, strict=False))
    last = pd.Series(others, index=mine.timestamp.astype(int)).groupby(level=0).last()
    assert np.asarray(c.categories)[c.values].tolist() == [classes[o] for o in last]


def test_contact_log_repeats_are_numbered_as_in_the_file() -> None:
    err = pytest.raises(LoadError, load_series, PAIRS, person="1005").value
    lines = PAIRS.read_text().splitlines()
    assert err.option == "duplicates" and err.choices == ("first", "last")
    t = {lines[r - 1].split(",")[0] for r in err.rows[:2]}
    assert len(t) == 1 and all("1005" in lines[r - 1] for r in err.rows)


def test_contact_log_person_errors(tmp_path: Path) -> None:
    err = pytest.raises(LoadError, load_series, PAIRS, person="42").value
    assert err.option == "person" and "'42' is not in column i or j" in str(err)
    path = write(tmp_path, "p.csv", "timestamp,i,j\n1,5,6\n2,5,5\n3,6,7\n")
    err2 = pytest.raises(LoadError, load_series, path, person="5").value
    assert err2.rows == [3] and "both sides" in str(err2)
    with pytest.raises(LoadError, match="either a value column or the two id columns"):
        load_series(path, pair_cols="i,j", value_col="j", person="5")


def test_contact_log_missing_other_id(tmp_path: Path) -> None:
    path = write(tmp_path, "p.csv", "timestamp,i,j\n1,5,6\n2,5,\n3,7,8\n4,6,5\n")
    err = pytest.raises(LoadError, load_series, path, pair_cols="i,j", person="5").value
    assert err.rows == [3] and err.column == "j" and err.option == "skip_missing"
    s = load_series(path, pair_cols="i,j", person="5", skip_missing=True)
    assert np.asarray(s.categories)[s.values].tolist() == ["6", "6"] and s.source.missing_skipped == 1


def test_contact_log_in_memory() -> None:
    df = pd.DataFrame({"timestamp": [1, 2, 3], "id1": [4, 5, 4], "id2": [5, 6, 6]})
    s = load_dataframe_series(df, person=4)
    assert np.asarray(s.categories)[s.values].tolist() == ["5", "6"]


# ------------------------------------------------------------------------------------------------ scan


def test_scan_of_the_hue_year() -> None:
    scan = scan_table(HUE)
    assert scan.kind == "numeric" and scan.error is None
    assert (scan.repeated_times, scan.repeated_rows, scan.repeated_lines) == (1, 2, (7347, 7348))
    assert (scan.exact_rows, scan.exact_lines) == (1, (2163,))
    assert scan.suggested_duplicates == "first" and scan.duplicate_choices == ("first", "last", "mean")


def test_scan_finds_missing_values_and_other_errors(tmp_path: Path) -> None:
    path = energy(tmp_path, [(H[0], "1"), (H[1], ""), (H[2], "3"), ("", "")])
    scan = scan_table(path)
    assert scan.missing_rows == 2 and scan.missing_lines == (3, 5)
    assert dict(scan.missing_by_column) == {"timestamp": 1, "kwh": 2} and scan.error is None
    bad = energy(tmp_path, [(H[0], "1"), (H[1], "abc")], "bad.csv")
    assert "row 3, column 'kwh': expected a number" in scan_table(bad).error


def test_scan_of_a_contact_log() -> None:
    scan = scan_table(PAIRS)
    assert scan.person == "1005" and scan.person_counts[:2] == (("1005", 179), ("1006", 94))
    assert scan.repeated_times == 45 and scan.repeated_rows == 126 and scan.suggested_duplicates == "first"
    assert scan.duplicate_choices == ("first", "last")


@pytest.mark.parametrize("name", ["energy_hue_2013_jan.csv", "gps_bus_limerick.csv",
                                  "contacts_person1672_first.csv"])
def test_clean_samples_scan_clean(name: str) -> None:
    scan = scan_table(SAMPLES / name)
    assert (scan.repeated_times, scan.exact_rows, scan.missing_rows, scan.error) == (0, 0, 0, None)
    assert scan.suggested_duplicates == "error"


def test_project_keeps_the_contact_log_reading(tmp_path: Path) -> None:
    from lmdk_gui.core.data.project import Project, check_data, load_project, save_project
    from lmdk_gui.core.kernel.settings import PrivacySettings

    s = load_series(PAIRS, person="1006", duplicates="first", skip_missing=True)
    proj = Project.from_series(s, [1, 2], PrivacySettings(categories=s.categories))
    save_project(tmp_path / "p.lmdk.json", proj)
    back = load_project(tmp_path / "p.lmdk.json")
    assert back == proj and back.columns.pair_cols == ("i", "j") and back.columns.person == "1006"
    again = load_series(back.input_path, **back.load_options())
    assert np.array_equal(again.values, s.values) and again.categories == s.categories
    assert check_data(back, again) == []
