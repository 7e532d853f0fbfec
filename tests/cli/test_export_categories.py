"""``lmdk export`` of a categorical series publishes a data-derived category list only on request (issue 17,
finding 5): the bundled contacts sample's 34 contact ids — six of them met once — were written whole."""

from __future__ import annotations

import pandas as pd

from lmdk_gui.core.data.loader import load_series
from tests.cli.helpers import run
from tests.conftest import SAMPLES
from tests.keys import test_key

CONTACTS = str(SAMPLES / "contacts_person1672_first.csv")
BASE = ["export", CONTACTS, "--kind", "categorical", "--scheme", "uniform", "--epsilon", "1",
        "--landmark-rows", "3,10-12"]


def test_refused_without_a_public_list(capsys, tmp_path):
    out = tmp_path / "r.csv"
    code, stdout, err = run(capsys, *BASE, "-o", str(out))
    assert code == 2 and stdout == ""
    assert err.count("\n") == 1 and err.startswith("lmdk: error: ")
    assert "--categories " in err and "--categories-from-data" in err
    n_labels = len(load_series(CONTACTS, kind="categorical").categories)
    assert f"({n_labels} labels)" in err and "published whole" in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_from_data_on_request_warns(capsys, tmp_path):
    out = tmp_path / "r.csv"
    code, stdout, err = run(capsys, *BASE, "-o", str(out), "--categories-from-data", "--seed", test_key(1))
    assert code == 0, err
    assert "warning: the category list" in err and "published whole" in err
    assert out.exists() and "wrote" in stdout


def test_public_list_needs_no_flag(capsys, tmp_path):
    labels = load_series(CONTACTS, kind="categorical").categories
    public = ",".join([*labels, "9999"])  # a public list may name categories the data never has
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, *BASE, "-o", str(out), "--categories", public)
    assert code == 0, err
    assert "category list" not in err
    released = set(pd.read_csv(out, dtype=str)["contact"])
    assert released <= set(public.split(","))


def test_both_options_exclude_each_other(capsys, tmp_path):
    code, _, err = run(capsys, *BASE, "-o", str(tmp_path / "r.csv"), "--categories", "a,b",
                       "--categories-from-data")
    assert code == 2 and err.count("\n") == 1 and "exclude each other" in err


def test_numeric_and_location_exports_are_not_affected(capsys, tmp_path):
    code, _, err = run(capsys, "export", str(SAMPLES / "energy_hue_2013_jan.csv"), "-o", str(tmp_path / "e.csv"),
                       "--scheme", "uniform", "--epsilon", "1")
    assert code == 0 and "category" not in err


def test_export_warns_when_delta_is_smaller_than_the_bounds(capsys, tmp_path):
    from tests.conftest import SAMPLES as S

    base = ["export", str(S / "energy_hue_2013_jan.csv"), "--scheme", "skip", "--epsilon", "1",
            "--landmark-rows", "3", "--bounds", "0", "7"]
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "a.csv"))
    assert code == 0, err
    assert "Δ = 1 is smaller than the bounds' width 7" in err and "--sensitivity" in err
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "b.csv"), "--sensitivity", "7")
    assert code == 0 and "smaller than the bounds" not in err
