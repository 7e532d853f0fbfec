"""The one read request (issue 43): :class:`ColumnChoice` taken by the loader, recorded as resolved in
``source.columns``, kept by projects and applied by ``lmdk batch``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.data.loader import LOAD_OPTIONS, load_dataframe_series, load_series, scan_table
from lmdk_gui.core.data.project import ColumnChoice as ProjectColumnChoice
from lmdk_gui.core.data.series import ColumnChoice, LoadError
from lmdk_gui.core.kernel.settings import PrivacySettings
from lmdk_gui.core.publish.batch_base import _COLUMN_OPTIONS, BatchError, BatchOptions
from tests.conftest import DATA


def _long_table(tmp_path: Path) -> Path:
    rows = ["when,person,reading,spare"]
    rows += [f"2013-01-01 {h:02d}:00:00,{p},{h + 10 * i},x" for h in range(6) for i, p in enumerate(("a", "b"))]
    rows.append("2013-01-01 05:00:00,a,99,x")  # a repeated time for person a
    path = tmp_path / "long.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_keywords_and_request_read_the_same_and_keywords_win(tmp_path: Path) -> None:
    path = _long_table(tmp_path)
    by_words = load_series(path, time_col="when", value_col="reading", id_col="person", person_id="a",
                           duplicates="last")
    request = ColumnChoice(time_col="when", value_col="reading", id_col="person", person_id="a", duplicates="first")
    by_request = load_series(path, request, duplicates="last")  # the keyword replaces the request's field
    assert np.array_equal(by_words.values, by_request.values) and by_request.values[-1] == 99
    assert by_request.source.columns.duplicates == "last" and load_series(path, request).values[-1] == 5
    with pytest.raises(TypeError):
        load_series(path, request, value_column="reading")  # a misspelt option is no silent default


def test_source_columns_read_the_series_again(tmp_path: Path) -> None:
    path = _long_table(tmp_path)
    first = load_series(path, id_col="person", person_id="b", value_col="reading")
    resolved = first.source.columns
    # every detected column is filled in: the request alone reads the same series, even as keywords
    assert (resolved.time_col, resolved.value_col, resolved.kind) == ("when", "reading", "numeric")
    assert resolved == ProjectColumnChoice.from_series(first) and first.source.time_col == "when"
    again = load_series(path, **dataclasses.asdict(resolved))
    assert np.array_equal(again.values, first.values) and again.source.columns == resolved


def test_ids_and_pairs_are_kept_as_text_and_tuples() -> None:
    a = ColumnChoice(pair_cols="i, j", person=1006, person_id=7)  # type: ignore[arg-type]
    b = ColumnChoice(pair_cols=["i", "j"], person="1006", person_id="7")  # type: ignore[arg-type]
    assert a == b and hash(a) == hash(b) and a.pair_cols == ("i", "j") and a.person == "1006"
    assert ColumnChoice.of(a, person="5").person == "5" and a.person == "1006"  # frozen: a new request
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.person = "5"  # type: ignore[misc]
    assert set(LOAD_OPTIONS) == {f.name for f in dataclasses.fields(ColumnChoice)} | {"categories"}


def test_contact_log_request_round_trips_through_the_source() -> None:
    s = load_series(DATA / "contact_pairs_synthetic.csv", person=1006, duplicates="first")
    cc = s.source.columns
    assert cc.pair_cols == ("i", "j") and cc.person == "1006" and cc.value_col is None and cc.kind == "categorical"
    assert cc.to_dict()["pair_cols"] == ["i", "j"]  # the project's key, as before


def test_scan_takes_the_same_request(tmp_path: Path) -> None:
    path = _long_table(tmp_path)
    request = ColumnChoice(value_col="reading", id_col="person", person_id="a")
    scan = scan_table(path, request)
    assert scan.person_id == "a" and scan.repeated_times == 1 and scan.error is None
    assert scan_table(path, value_col="reading", id_col="person", person_id="a") == scan


def test_a_frame_is_one_persons_rows() -> None:
    df = pd.DataFrame({"t": ["2013-01-01 00:00", "2013-01-01 01:00"], "id": ["a", "a"], "v": [1.0, 2.0]})
    s = load_dataframe_series(df.drop(columns="id"), ColumnChoice(time_col="t"), name="frame")
    assert s.values.tolist() == [1.0, 2.0] and s.source.columns.value_col == "v"
    err = pytest.raises(LoadError, load_dataframe_series, df, id_col="id", person_id="a", name="frame").value
    assert err.option == "id_col" and str(err).startswith("frame: ")


def test_batch_takes_only_the_column_options_it_applies() -> None:
    base = dict(id_col="household", scheme="uniform", settings=PrivacySettings(epsilon=1.0))
    BatchOptions(**base, columns=ColumnChoice(time_col="t", kind="numeric", date_order="dmy")).validate()
    assert set(_COLUMN_OPTIONS) < {f.name for f in dataclasses.fields(ColumnChoice)}
    for bad in (dict(skip_missing=True), dict(person_id="h1"), dict(pair_cols=("i", "j"))):
        with pytest.raises(BatchError, match=next(iter(bad))):
            BatchOptions(**base, columns=ColumnChoice(**bad)).validate()  # type: ignore[arg-type]
