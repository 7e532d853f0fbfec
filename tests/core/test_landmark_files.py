"""Landmark list files (issue 2 --landmarks, issue 5 import/export)."""

from __future__ import annotations

import numpy as np
import pytest

from lmdk_gui.core.data.landmark_files import (
    parse_row_spec,
    read_landmark_file,
    read_landmark_list,
    write_landmark_file,
)
from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.data.series import LoadError
from tests.conftest import SAMPLES


@pytest.fixture(scope="module")
def energy():
    return load_series(SAMPLES / "energy_hue_2013_jan.csv")


@pytest.fixture(scope="module")
def contacts():
    return load_series(SAMPLES / "contacts_person1672_first.csv", kind="categorical")


def test_parse_row_spec():
    assert parse_row_spec("3,7,10-12").tolist() == [3, 7, 10, 11, 12]
    assert parse_row_spec(" 5 , 5, 1 ").tolist() == [1, 5]
    for bad in ("a", "3-1", "1-2-3", "-1"):
        with pytest.raises(ValueError):
            parse_row_spec(bad)
    with pytest.raises(ValueError, match="event 10 is past the last event"):
        parse_row_spec("10", n=10)


@pytest.mark.parametrize("text", ["timestamp\n2013-01-01 05:00:00\n2013-01-02 00:00:00\n",
                                  "row\n5\n24\n",
                                  "timestamp,row\n2013-01-01 05:00:00,5\n2013-01-02 00:00:00,24\n"])
def test_one_or_two_column_files(tmp_path, energy, text):
    p = tmp_path / "lm.csv"
    p.write_text(text)
    assert read_landmark_file(p, energy).tolist() == [5, 24]


def test_round_trip_epoch_and_iso(tmp_path, energy, contacts):
    for s, rows in ((energy, np.array([0, 3, 743])), (contacts, np.array([1, 100, 2000]))):
        p = tmp_path / f"{s.name}.csv"
        write_landmark_file(p, s, rows)
        assert read_landmark_file(p, s).tolist() == rows.tolist()
        assert (p.stat().st_mode & 0o077) == 0  # owner-only: the file reveals the landmark positions
    assert (tmp_path / f"{contacts.name}.csv").read_text().splitlines()[1].startswith("1353")


def test_unknown_timestamps_add_nothing_and_say_which(tmp_path, energy):
    p = tmp_path / "lm.csv"
    p.write_text("timestamp\n2013-01-01 05:00:00\n2013-03-01 00:00:00\n2013-03-02 00:00:00\n")
    with pytest.raises(LoadError, match="2 timestamp\\(s\\) are not in the series: 2013-03-01"):
        read_landmark_file(p, energy)


def test_bad_rows_and_missing_columns(tmp_path, energy):
    p = tmp_path / "lm.csv"
    p.write_text("row\n1\nx\n")
    with pytest.raises(LoadError, match="row 3"):
        read_landmark_file(p, energy)
    p.write_text("row\n1\n744\n")
    with pytest.raises(LoadError, match="outside the series"):
        read_landmark_file(p, energy)
    p.write_text("when\n1\n")
    with pytest.raises(LoadError, match="'timestamp' or a 'row' column"):
        read_landmark_file(p, energy)


def test_parse_row_spec_refuses_huge_ranges_before_allocating():
    """A typo like 0-10000000000 used to try to allocate 80 GB (issue 17, CLI hardening)."""
    with pytest.raises(ValueError, match="past the last event"):
        parse_row_spec("0-10000000000", n=744)
    with pytest.raises(ValueError, match="more than"):
        parse_row_spec("0-10000000000")
    assert parse_row_spec("5-7,", n=8).tolist() == [5, 6, 7]


def test_a_list_names_the_rules_that_found_it(tmp_path, energy):
    """A list a rule found on the values says so in a 'rule' column, read back with the rows (two rules: both);
    a list without the column names none, and a reader of rows only sees the same rows."""
    p = tmp_path / "lm.csv"
    write_landmark_file(p, energy, np.array([5, 24]), {"Value threshold", "Change points"})
    assert p.read_text().splitlines()[:2] == ["timestamp,row,rule",
                                              "2013-01-01 05:00:00,5,Change points; Value threshold"]
    rows, rules = read_landmark_list(p, energy)
    assert rows.tolist() == [5, 24] and rules == {"Value threshold", "Change points"}
    assert read_landmark_file(p, energy).tolist() == [5, 24]
    write_landmark_file(p, energy, np.array([5, 24]))
    assert p.read_text().splitlines()[0] == "timestamp,row"
    assert read_landmark_list(p, energy)[1] == frozenset()
    p.write_text("")
    assert read_landmark_list(p, energy)[0].size == 0
