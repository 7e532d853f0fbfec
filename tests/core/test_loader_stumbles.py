"""Issue 44's stumbles in reading files: the preview and loading agree on decimal commas, dates that read either
way are asked about (``date_order``), and rows out of time order are said, not sorted silently."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.data.loader import inspect_table, load_dataframe_series, load_series, scan_table
from lmdk_gui.core.data.project import ColumnChoice, Project, load_project, save_project
from lmdk_gui.core.data.series import LoadError
from lmdk_gui.core.kernel.settings import PrivacySettings


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# ------------------------------------------------------------------------------------- decimal commas
def test_decimal_comma_preview_says_it_is_read_as_numbers(tmp_path):
    p = write(tmp_path, "kwh.csv", "timestamp;kwh\n2013-01-01 00:00;1,25\n2013-01-01 01:00;2\n"
              "2013-01-01 02:00;1.234,5\n")
    preview = inspect_table(p)
    assert "'kwh' uses a decimal comma: 1,25 is read as 1.25" in preview.notes
    assert not any("non-numeric" in n for n in preview.notes)
    assert load_series(p).values.tolist() == [1.25, 2.0, 1234.5]


def test_text_that_is_no_number_is_still_noted(tmp_path):
    p = write(tmp_path, "kwh.csv", "timestamp;kwh\n2013-01-01 00:00;1,25\n2013-01-01 01:00;abc\n"
              "2013-01-01 02:00;2\n")
    notes = inspect_table(p).notes
    assert "'kwh' has non-numeric text in the first rows: loading will report it" in notes
    with pytest.raises(LoadError, match=r"row 3, column 'kwh': expected a number, got 'abc'"):
        load_series(p)


def test_comma_separated_file_does_not_claim_decimal_commas(tmp_path):
    # with ',' between the fields a quoted "1,25" is not read as a number: the preview must not say it is
    p = write(tmp_path, "kwh.csv", 'timestamp,kwh\n2013-01-01 00:00,"1,25"\n2013-01-01 01:00,2\n')
    notes = inspect_table(p).notes
    assert not any("decimal comma" in n for n in notes)
    assert any("non-numeric text" in n for n in notes)
    with pytest.raises(LoadError):
        load_series(p)


def test_location_columns_with_decimal_commas_are_noted(tmp_path):
    p = write(tmp_path, "t.csv", "timestamp;lat;lon\n2013-01-01 00:00;52,5;-8,6\n2013-01-01 01:00;52,6;-8,7\n")
    notes = inspect_table(p).notes
    assert "'lat' uses a decimal comma: 52,5 is read as 52.5" in notes
    assert "'lon' uses a decimal comma: -8,6 is read as -8.6" in notes
    assert load_series(p).values.tolist() == [[52.5, -8.6], [52.6, -8.7]]


# ------------------------------------------------------------------------------------------ date order
AMBIGUOUS = "date,kwh\n01/02/2013,1\n02/02/2013,2\n03/02/2013,3\n"
QUESTION = "dates like 01/02/2013 read either way: choose the date order"


def test_ambiguous_dates_are_a_problem_of_the_preview(tmp_path):
    p = write(tmp_path, "d.csv", AMBIGUOUS)
    preview = inspect_table(p)
    assert preview.ambiguous
    assert any(q.startswith(QUESTION) and "--date-order dmy|mdy" in q and "'Date order'" in q
               for q in preview.problems)
    assert inspect_table(p, date_order="dmy").problems == []


def test_ambiguous_dates_refuse_to_load_without_an_order(tmp_path):
    p = write(tmp_path, "d.csv", AMBIGUOUS)
    with pytest.raises(LoadError) as err:
        load_series(p)
    msg = str(err.value)
    assert msg.startswith("d.csv, column 'date': " + QUESTION) and "\n" not in msg
    assert err.value.option == "date_order" and set(err.value.choices) == {"dmy", "mdy"}
    assert scan_table(p).error_option == "date_order"
    assert scan_table(p, date_order="mdy").error is None


def test_the_chosen_order_reads_the_dates_and_is_recorded(tmp_path):
    p = write(tmp_path, "d.csv", AMBIGUOUS)
    dmy = load_series(p, date_order="dmy")
    mdy = load_series(p, date_order="mdy")
    assert [str(t)[:10] for t in dmy.times] == ["2013-02-01", "2013-02-02", "2013-02-03"]
    assert [str(t)[:10] for t in mdy.times] == ["2013-01-02", "2013-02-02", "2013-03-02"]
    assert dmy.source is not None and dmy.source.columns.date_order == "dmy"
    with pytest.raises(LoadError, match="unknown date_order='ymd'"):
        load_series(p, date_order="ymd")


def test_a_field_above_12_settles_the_order_without_asking(tmp_path):
    day_first = write(tmp_path, "a.csv", "date,kwh\n01/02/2013,1\n13/02/2013,2\n")
    month_first = write(tmp_path, "b.csv", "date,kwh\n01/02/2013,1\n01/13/2013,2\n")
    same = write(tmp_path, "c.csv", "date,kwh\n01/01/2013,1\n02/02/2013,2\n")  # both orders agree
    for p in (day_first, month_first, same):
        assert inspect_table(p).problems == []
    assert [str(t)[:10] for t in load_series(day_first).times] == ["2013-02-01", "2013-02-13"]
    assert [str(t)[:10] for t in load_series(month_first).times] == ["2013-01-02", "2013-01-13"]
    assert [str(t)[:10] for t in load_series(same).times] == ["2013-01-01", "2013-02-02"]


@pytest.mark.parametrize("n", [240, 20_100])  # past the sample; past the preview's second look
def test_the_whole_column_decides_not_the_first_rows(tmp_path, n):
    # n rows of dates that read either way, then one whose first field is above 12
    rows = [f"{i % 12 + 1:02d}/01/2013 {i % 24:02d}:{i % 60:02d},{i}" for i in range(n)] + ["25/01/2013 00:00,1"]
    p = write(tmp_path, "long.csv", "timestamp,kwh\n" + "\n".join(rows) + "\n")
    assert inspect_table(p).problems == []  # row 242 (25/01) settles it: day first
    assert str(load_series(p, duplicates="first").times[-1])[:10] == "2013-01-25"


def test_dataframe_and_date_hour_layout_take_the_order(tmp_path):
    df = pd.DataFrame({"date": ["01/02/2013", "02/02/2013"], "kwh": [1.0, 2.0]})
    with pytest.raises(LoadError, match=QUESTION):
        load_dataframe_series(df)
    assert str(load_dataframe_series(df, date_order="dmy").times[0])[:10] == "2013-02-01"
    p = write(tmp_path, "dh.csv", "date,hour,kwh\n01/02/2013,0,1\n01/02/2013,1,2\n")
    with pytest.raises(LoadError, match=QUESTION):
        load_series(p)
    assert str(load_series(p, date_order="dmy").times[1]) == "2013-02-01T01:00:00.000000000"


def test_project_reloads_with_the_same_date_order(tmp_path):
    p = write(tmp_path, "d.csv", AMBIGUOUS)
    series = load_series(p, date_order="dmy")
    assert ColumnChoice.from_series(series).to_dict()["date_order"] == "dmy"
    assert "date_order" not in ColumnChoice.from_series(load_series(write(tmp_path, "e.csv", "date,kwh\n"
                                                                         "01/13/2013,1\n"))).to_dict()
    proj = Project.from_series(series, np.array([1]), PrivacySettings(epsilon=1.0))
    path = tmp_path / "p.lmdk.json"
    save_project(path, proj)
    again = load_project(path)
    assert again.columns.date_order == "dmy"
    assert np.array_equal(load_series(p, **again.load_options()).times, series.times)


# -------------------------------------------------------------------------------------- time order
def test_rows_out_of_time_order_are_said(tmp_path):
    p = write(tmp_path, "o.csv", "timestamp,kwh\n2013-01-01 00:00,1\n2013-01-01 02:00,2\n"
              "2013-01-01 01:00,3\n2013-01-01 03:00,4\n2013-01-01 02:30,5\n")
    note = "rows are not in time order: they will be sorted by time (first out-of-order row: row 4)"
    assert note in inspect_table(p).notes
    series = load_series(p)
    assert series.source is not None and series.source.out_of_order == 2
    assert series.values.tolist() == [1, 3, 2, 5, 4]
    scan = scan_table(p)
    assert scan.out_of_order == 2 and scan.out_of_order_line == 4 and scan.order_note == note


def test_sorted_rows_say_nothing(tmp_path):
    p = write(tmp_path, "s.csv", "timestamp,kwh\n2013-01-01 00:00,1\n2013-01-01 01:00,2\n")
    assert not any("time order" in n for n in inspect_table(p).notes)
    src = load_series(p).source
    assert src is not None and src.out_of_order == 0
    assert scan_table(p).order_note is None
