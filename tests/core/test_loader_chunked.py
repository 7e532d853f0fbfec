"""Large files are parsed in chunks (the GUI thread gets the GIL between them, issue 15); what is loaded and
what is refused must be the same as a single read."""

from __future__ import annotations

import numpy as np
import pytest

from lmdk_gui.core.data import reading
from lmdk_gui.core.data.loader import LoadError, load_series


def _both(monkeypatch, path):
    whole = load_series(path)
    monkeypatch.setattr(reading, "CHUNKED_BYTES", 10)
    monkeypatch.setattr(reading, "CHUNK_ROWS", 7)
    chunked = load_series(path)
    monkeypatch.undo()
    return whole, chunked


def test_chunked_numeric_load_is_identical(tmp_path, monkeypatch):
    rows = [f"2020-01-01 00:{m // 60:02d}:{m % 60:02d},{v}" for m, v in
            enumerate(np.round(np.random.default_rng(0).random(100) * 10, 3))]
    rows[40] = rows[40].split(",")[0] + ",7"  # an integer among floats
    p = tmp_path / "a.csv"
    p.write_text("timestamp,kwh\n" + "\n".join(rows) + "\n")
    whole, chunked = _both(monkeypatch, p)
    np.testing.assert_array_equal(whole.times, chunked.times)
    np.testing.assert_array_equal(whole.values, chunked.values)
    assert whole.kind == chunked.kind == "numeric"


def test_chunked_bad_row_names_the_same_row(tmp_path, monkeypatch):
    rows = [f"2020-01-01 00:00:{s:02d},{s}.5" for s in range(50)]
    rows[31] = rows[31].split(",")[0] + ",oops"
    p = tmp_path / "b.csv"
    p.write_text("timestamp,kwh\n" + "\n".join(rows) + "\n")
    with pytest.raises(LoadError) as whole:
        load_series(p)
    monkeypatch.setattr(reading, "CHUNKED_BYTES", 10)
    monkeypatch.setattr(reading, "CHUNK_ROWS", 7)
    with pytest.raises(LoadError) as chunked:
        load_series(p)
    assert str(whole.value) == str(chunked.value)
