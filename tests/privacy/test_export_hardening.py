"""Issue 17, the release files: each finding's reproduction, which failed before the fix.

2 seeds are secret keys · 3 the grid of written values says nothing about ε_t · 4 Skip/Adaptive warn ·
7 never over the input · 8 only regular files are replaced · 9 two exports to one name stay paired ·
12 clear one-line errors · 13 rounded landmark sum · 14 formula cells · 15 long names · the ledger.
"""

from __future__ import annotations

import csv
import json
import math
import os
import stat
import threading
import time
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.data.landmark_files import write_landmark_file
from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.data.series import Series
from lmdk_gui.core.kernel import securenoise as sn
from lmdk_gui.core.kernel.settings import PrivacySettings
from lmdk_gui.core.publish import export as export_mod
from lmdk_gui.core.publish import ledger
from lmdk_gui.core.publish.export import ExportError, ExportOptions, export_release
from lmdk_gui.core.publish.reexport import reexport
from tests.cli.helpers import run
from tests.conftest import SAMPLES
from tests.keys import test_key

ENERGY = SAMPLES / "energy_hue_2013_jan.csv"
FORMULAS = ["=cmd|' /C calc'!A0", '=HYPERLINK("http://x","y")', "+1+2", "-2-cmd", "@SUM(A1)", "\tx", "\rx"]


@pytest.fixture(scope="module")
def energy():
    return load_series(ENERGY)


# ------------------------------------------------------------------------------ finding 2: keys, not seeds
@pytest.mark.parametrize("seed", [7, 2**31 - 1, "0123456789abcdef", b"short", "xyz" * 20])
def test_small_or_short_seeds_are_refused(tmp_path, energy, seed):
    with pytest.raises(ExportError, match="128 bits|hex digits|integer seed") as e:
        export_release(energy, [3], PrivacySettings(), tmp_path / "r.csv", ExportOptions("uniform", seed=seed))
    assert "\n" not in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_a_key_reproduces_only_for_its_holder_and_is_never_published(tmp_path, energy):
    key = test_key(1)
    outs = []
    for name, k in (("a", key), ("b", key), ("c", test_key(2))):
        export_release(energy, [3, 9], PrivacySettings(), tmp_path / f"{name}.csv",
                       ExportOptions("adaptive", seed=k))
        outs.append((tmp_path / f"{name}.csv").read_text())
    assert outs[0] == outs[1] and outs[0] != outs[2]
    side = (tmp_path / "a.csv.json").read_text()
    assert json.loads(side)["seeded"] is True
    assert key not in side and key not in outs[0]


def test_cli_seed_needs_64_hex_digits(capsys, tmp_path):
    base = ["export", str(ENERGY), "--scheme", "uniform", "--epsilon", "1"]
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "a.csv"), "--seed", "12345")
    assert code == 2 and err.count("\n") == 1 and "--seed" in err and "64" in err
    short = tmp_path / "k.txt"
    short.write_text("abcdef\n")
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "a.csv"), "--seed-file", str(short))
    assert code == 2 and err.count("\n") == 1 and "--seed-file" in err
    assert not (tmp_path / "a.csv").exists()
    good = tmp_path / "good.txt"
    good.write_text(test_key(5) + "\n")
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "a.csv"), "--seed-file", str(good))
    assert code == 0, err
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "b.csv"), "--seed", test_key(5))
    assert code == 0, err
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()


def test_ledger_reexport_recreates_a_lost_release(capsys, tmp_path):
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, "export", str(ENERGY), "-o", str(out), "--scheme", "adaptive", "--epsilon", "1",
                       "--landmark-rows", "5-40", "--new-key", "--dummies", "partitioned")
    assert code == 0, err
    first = out.read_text()
    [entry] = ledger.entries()
    assert entry["key"] and len(entry["key"]) >= 64 and entry["recipe"]["landmarks"][:2] == [5, 6]
    assert entry["key"] not in (tmp_path / "r.csv.json").read_text()
    out.unlink()
    (tmp_path / "r.csv.json").unlink()
    code, text, err = run(capsys, "ledger", "reexport", entry["id"][:6], "-o", str(out))
    assert code == 0, err
    assert out.read_text() == first
    assert ledger.composition(entry["input_digest"]) == (1, 1.0)  # the same release: no new ε spent
    # a release made with fresh randomness cannot be made again
    run(capsys, "export", str(ENERGY), "-o", str(tmp_path / "s.csv"), "--scheme", "uniform", "--epsilon", "1")
    plain = [e for e in ledger.entries() if not e["key"]][0]
    code, _, err = run(capsys, "ledger", "reexport", plain["id"], "-o", str(tmp_path / "t.csv"))
    assert code == 2 and "no kept key" in err


@pytest.mark.parametrize("flag", ["--denoise", "--no-denoise"])
def test_ledger_reexport_keeps_the_denoise_choice(capsys, tmp_path, flag):
    """The recipe keeps denoise (issue 12), so the re-export is the same file either way; an entry written
    before denoising existed (no such field) was a raw release and is made again raw."""
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, "export", str(ENERGY), "-o", str(out), "--scheme", "skip", "--epsilon", "1",
                       "--landmark-rows", "5-40", "--new-key", flag)
    assert code == 0, err
    [entry] = ledger.entries()
    assert entry["recipe"]["options"]["denoise"] is (flag == "--denoise")
    again = reexport(entry["id"], tmp_path / "again.csv")
    assert (tmp_path / "again.csv").read_text() == out.read_text()
    assert (again.post_processing is None) is (flag == "--no-denoise")
    path = ledger.ledger_path()
    old = json.loads(path.read_text().splitlines()[0])
    del old["recipe"]["options"]["denoise"]
    path.write_text(json.dumps(old) + "\n")
    legacy = reexport(old["id"], tmp_path / "legacy.csv")
    assert legacy.post_processing is None
    assert json.loads((tmp_path / "legacy.csv.json").read_text())["post_processing"] is None


# ----------------------------------------------------------------- finding 3: grid from public settings
def _decimals(cells) -> set[int]:
    return {len(c.split(".")[1]) if "." in c else 0 for c in cells if c}


def _binary_grid(v: float) -> int:
    """The exponent of the coarsest power of two that ``v`` is a multiple of."""
    m, e = math.frexp(v)
    k = 0
    while m != int(m):
        m *= 2
        k += 1
    return e - k


@pytest.mark.parametrize("scheme", ["adaptive", "uniform"])
def test_written_digits_do_not_depend_on_the_budget(tmp_path, energy, scheme):
    seen = {}
    for size in (5, 60):
        lm = np.arange(10, 10 + 3 * size, 3)
        out = tmp_path / f"r{size}.csv"
        export_release(energy, lm, PrivacySettings(), out, ExportOptions(scheme, include_budget=True,
                                                                         seed=test_key(size)))
        df = pd.read_csv(out, dtype=str, keep_default_na=False)
        eps = df["epsilon"].astype(float).to_numpy()
        fresh = eps > 0
        is_lm = np.zeros(len(df), bool)
        is_lm[lm] = True
        cells = df["kwh"].to_numpy()
        seen[size] = (_decimals(cells[fresh & is_lm]), _decimals(cells[fresh & ~is_lm]))
    # landmarks and regular events, few and many landmarks: one and the same decimal grid
    assert {frozenset(s) for pair in seen.values() for s in pair} == {frozenset({3})}


def test_the_sampler_grid_is_the_same_for_every_budget():
    e = sn.laplace_grid_exponent(1.0, 1.0 / 2.0)  # Δ = 1, ε = 2
    scales = np.array([0.5, 3.0, 70.0, 5e4])[np.arange(4000) % 4]  # ε_t from ε down to ε/10^5
    y = sn.secure_laplace(np.full(4000, 0.3), scales, 1.0, sn.WordSource.from_seed(4), grid_exponent=e)
    grids = np.array([_binary_grid(v) for v in y])
    for s in np.unique(scales):  # every budget class reaches down to the public grid, none is coarser
        assert grids[scales == s].min() == e
    assert np.all(y / 2.0**e == np.rint(y / 2.0**e))


# --------------------------------------------------------------------------- finding 4: Skip/Adaptive
@pytest.mark.parametrize("scheme", ["skip", "adaptive"])
def test_republishing_schemes_warn_where_the_choice_is_made(capsys, tmp_path, scheme):
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, "export", str(ENERGY), "-o", str(out), "--scheme", scheme, "--epsilon", "1",
                       "--landmark-rows", "3,4")
    assert code == 0 and "repeated values" in err and "dummy landmarks" in err
    statement = json.loads((tmp_path / "r.csv.json").read_text())["statement"]
    assert "repeats the previous value" in statement
    code, _, err = run(capsys, "export", str(ENERGY), "-o", str(tmp_path / "u.csv"), "--scheme", "uniform",
                       "--epsilon", "1", "--landmark-rows", "3,4")
    assert code == 0 and "repeated values" not in err


# --------------------------------------------------------------------- findings 7, 8: output paths
def test_the_sidecar_never_overwrites_the_input(capsys, tmp_path):
    src = tmp_path / "r.csv.json"  # the input happens to have the sidecar's name
    src.write_bytes(ENERGY.read_bytes())
    before = src.read_bytes()
    code, _, err = run(capsys, "export", str(src), "-o", str(tmp_path / "r.csv"), "--scheme", "uniform",
                       "--epsilon", "1", "--force")
    assert code == 2 and "input" in err
    assert src.read_bytes() == before and not (tmp_path / "r.csv").exists()
    link = tmp_path / "other.csv.json"  # a hard link to the input, under the sidecar's name
    os.link(src, link)
    code, _, err = run(capsys, "export", str(src), "-o", str(tmp_path / "other.csv"), "--scheme", "uniform",
                       "--epsilon", "1", "--force")
    assert code == 2 and "input" in err and src.read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_force_replaces_only_regular_files(capsys, tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "export", str(ENERGY), "-o", str(fifo), "--scheme", "uniform", "--epsilon", "1",
                       "--force")
    assert code == 2 and "regular file" in err and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    code, _, err = run(capsys, "export", str(ENERGY), "-o", "/dev/null", "--scheme", "uniform", "--epsilon",
                       "1", "--force")
    assert code == 2 and "regular file" in err and stat.S_ISCHR(os.lstat("/dev/null").st_mode)
    (tmp_path / "d.csv.json").mkdir()
    code, _, err = run(capsys, "export", str(ENERGY), "-o", str(tmp_path / "d.csv"), "--scheme", "uniform",
                       "--epsilon", "1", "--force")
    assert code == 2 and "folder" in err and not (tmp_path / "d.csv").exists()


# -------------------------------------------------------------------------- finding 9: the pair lock
def test_two_exports_to_one_name_leave_a_matching_pair(tmp_path, energy, monkeypatch):
    """Export A pauses between its two renames; export B to the same name runs meanwhile. The sidecar left
    must describe the CSV left (A has an extra column, B not)."""
    out = tmp_path / "r.csv"
    real = export_mod.AtomicFile.commit
    paused, go_on = threading.Event(), threading.Event()

    def commit(self):
        real(self)
        if threading.current_thread().name == "A" and self.target == out:
            paused.set()
            go_on.wait(5)

    monkeypatch.setattr(export_mod.AtomicFile, "commit", commit)
    errors = []

    def a():
        try:
            export_release(energy, [], PrivacySettings(), out, ExportOptions("uniform", include_budget=True,
                                                                              force=True))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ta = threading.Thread(target=a, name="A")
    ta.start()
    assert paused.wait(60)
    tb = threading.Thread(target=lambda: export_release(energy, [], PrivacySettings(), out,
                                                        ExportOptions("uniform", force=True)), name="B")
    tb.start()
    time.sleep(0.5)  # B runs up to the lock (it cannot get past it while A holds it)
    go_on.set()
    ta.join(60)
    tb.join(60)
    assert not errors
    header = out.read_text().split("\n", 1)[0].split(",")
    assert json.loads((tmp_path / "r.csv.json").read_text())["columns"] == header


# ------------------------------------------------------------------------- finding 12: clear errors
def test_tiny_epsilon_is_refused_up_front_with_its_name(capsys, tmp_path):
    code, _, err = run(capsys, "export", str(ENERGY), "-o", str(tmp_path / "r.csv"), "--scheme", "uniform",
                       "--epsilon", "1e-14")
    assert code == 2 and err.count("\n") == 1 and "ε = 1e-14" in err and "random words" not in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("scheme", ["uniform", "adaptive", "event"])
def test_huge_value_is_refused_naming_its_row_and_column(capsys, tmp_path, scheme):
    src = tmp_path / "in.csv"
    src.write_text("when,load\n2020-01-01 00:00:00,1.0\n2020-01-01 01:00:00,1e308\n2020-01-01 02:00:00,2\n")
    code, _, err = run(capsys, "export", str(src), "-o", str(tmp_path / "r.csv"), "--scheme", scheme,
                       "--epsilon", "1")
    assert code == 2 and err.count("\n") == 1 and "random words" not in err and "element" not in err
    assert "row 3 of in.csv" in err and "2020-01-01 01:00:00" in err and "'load'" in err and "1e+308" in err
    assert not (tmp_path / "r.csv").exists()


# ------------------------------------------------------------------ finding 13: rounded landmark sum
@pytest.mark.parametrize("scheme", ["uniform", "adaptive", "skip"])
def test_landmark_sum_is_published_rounded_up(tmp_path, energy, scheme):
    out = tmp_path / "r.csv"
    export_release(energy, np.arange(0, 744, 7), PrivacySettings(epsilon=0.9), out, ExportOptions(scheme))
    side = json.loads((tmp_path / "r.csv.json").read_text())
    exact = ledger.entries()[-1]["landmark_sum"]
    shown = side["landmark_sum"]
    assert len(Decimal(repr(shown)).normalize().as_tuple().digits) <= 4
    assert exact <= shown <= 0.9 and side["guarantee_holds"] is True


# ----------------------------------------------------------------------- finding 14: formula cells
def _read_cells(path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as f:
        return [c for row in csv.reader(f) for c in row]


@pytest.mark.parametrize("verbatim", [False, True])
def test_formula_cells_are_neutralised_unless_verbatim(tmp_path, verbatim):
    labels = np.array([FORMULAS[i % len(FORMULAS)] for i in range(70)], dtype=object)
    s = Series.from_arrays(labels, kind="categorical")
    out = tmp_path / "r.csv"
    export_release(s, [], PrivacySettings(epsilon=50.0), out,
                   ExportOptions("event", verbatim_labels=verbatim, categories_from_data=True))
    cells = _read_cells(out)
    risky = [c for c in cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))]
    side = json.loads((tmp_path / "r.csv.json").read_text())
    assert side["categories_from_data"] is True
    if verbatim:
        assert set(risky) == set(FORMULAS) and side["formula_cells"] == "verbatim"
    else:
        assert risky == [] and side["formula_cells"] == "neutralised"
        assert {c[1:] for c in cells[3::2]} == set(FORMULAS)  # a leading ' and the label, nothing lost


def test_cli_verbatim_labels_option(capsys, tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("timestamp,=who\n" + "".join(f"2020-01-01 {h:02d}:00:00,{'=A1+1' if h % 2 else 'ok'}\n"
                                                for h in range(10)))
    for flag, expect in (([], "neutralised"), (["--verbatim-labels"], "verbatim")):
        out = tmp_path / f"r{len(flag)}.csv"
        code, _, err = run(capsys, "export", str(src), "-o", str(out), "--scheme", "event", "--epsilon", "30",
                           "--categories", "=A1+1,ok", *flag)
        assert code == 0, err
        cells = _read_cells(out)
        assert json.loads(out.with_name(out.name + ".json").read_text())["formula_cells"] == expect
        assert (("=who" in cells) == bool(flag)) and (("'=who" in cells) != bool(flag))


def test_numbers_are_never_altered_and_other_csvs_follow_the_rule(tmp_path):
    from lmdk_gui.core.publish.writers import neutralise_cell

    assert neutralise_cell("-1.5") == "-1.5" and neutralise_cell("+3") == "+3"
    assert neutralise_cell("-1+cmd") == "'-1+cmd" and neutralise_cell("plain") == "plain"
    s = Series.from_arrays(np.arange(5.0))
    write_landmark_file(tmp_path / "l.csv", s, np.array([1, 3]))
    with open(tmp_path / "l.csv", newline="") as f:
        assert not [c for row in csv.reader(f) for c in row if c.startswith(("=", "@", "\t", "\r"))]


# --------------------------------------------------------------------------- finding 15: long names
def test_a_240_character_output_name_works(tmp_path, energy):
    out = tmp_path / ("r" * 236 + ".csv")
    assert len(out.name) == 240
    export_release(energy, [], PrivacySettings(), out, ExportOptions("uniform"))
    assert out.exists() and (tmp_path / (out.name + ".json")).exists()


# --------------------------------------------------------------------------------------- the ledger
def test_ledger_is_private_and_composes(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("LMDK_LEDGER", str(tmp_path / "private"))
    base = ["export", str(ENERGY), "--scheme", "uniform", "--landmark-rows", "1,2"]
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "a.csv"), "--epsilon", "1")
    assert code == 0 and "released" not in err
    path = tmp_path / "private" / "ledger.jsonl"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "b.csv"), "--epsilon", "0.5")
    assert code == 0 and "released 1 time before (total ε = 1)" in err and "faces ε = 1.5" in err
    [a, b] = ledger.entries()
    assert a["input_sha256"] == b["input_sha256"] and a["rows_read"] == 744 and a["key"] is None
    assert a["output"].endswith("a.csv") and 0 < a["landmark_sum"] <= 1
    side = (tmp_path / "b.csv.json").read_text()
    assert a["input_sha256"] not in side and "ledger" not in side and a["id"] not in side
    code, text, _ = run(capsys, "ledger", "list")
    assert code == 0 and a["id"] in text and "faces ε = 1.5" in text
    code, _, err = run(capsys, "ledger", "clear")  # not a terminal: only with --yes
    assert code == 2 and "--yes" in err and path.exists()
    code, text, _ = run(capsys, "ledger", "clear", "--yes")
    assert code == 0 and not path.exists()


def test_every_test_writes_its_ledger_in_a_temporary_folder():
    assert os.environ["LMDK_LEDGER"].startswith(str(pytest.importorskip("tempfile").gettempdir()))


def test_bad_input_inside_the_adaptive_loop_is_named_not_out_of_words(tmp_path, monkeypatch):
    """The one refill helper (securenoise.WordBuffer) tells bad input from exhausted words: even past the
    up-front checks (disabled here), a bad value is named by its event, never "ran out of random words"."""
    monkeypatch.setattr(export_mod, "_check_noise_range", lambda *a, **k: None)
    # The bad value is the first event: Adaptive always releases it, whereas a later one may be skipped by the
    # loop's random sampling (then nothing is drawn for it; a bad third event went unnoticed in ~4% of runs).
    s = Series.from_arrays(np.array([1e308, 1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="2000-01-01 00:00:00") as e:
        export_release(s, [], PrivacySettings(), tmp_path / "r.csv", ExportOptions("adaptive"))
    assert "random words" not in str(e.value)
    assert list(tmp_path.iterdir()) == []
    buf = sn.WordBuffer(sn.WordSource.from_seed(1), 10)
    with pytest.raises(sn.RandomnessExhausted):
        buf.check(-1, 3)
    with pytest.raises(ValueError, match="element 3"):
        buf.check(-2, 3)


def test_published_landmark_sum_no_longer_tells_the_number_of_landmarks(tmp_path, energy):
    """Finding 13's reproduction: for Uniform at n = 744 the 17-digit sum split |L| into classes."""
    shown, exact = set(), set()
    for m in range(0, 40):
        out = tmp_path / f"u{m}.csv"
        export_release(energy, np.arange(m) * 17, PrivacySettings(), out, ExportOptions("uniform"))
        shown.add(json.loads(out.with_name(out.name + ".json").read_text())["landmark_sum"])
        exact.add(ledger.entries()[-1]["landmark_sum"])
    assert len(exact) > 1  # the exact sums do differ with |L| (kept in the private ledger only)
    assert shown == {1.0}


def test_bad_input_inside_the_adaptive_runner_names_its_file_row(tmp_path, monkeypatch):
    """The pipeline's ExportRunner reports a sampler's -2 through the export's description of the event: the
    file row (events in any order), its timestamp and column — the input, not the randomness."""
    monkeypatch.setattr(export_mod, "_check_noise_range", lambda *a, **k: None)
    src = tmp_path / "in.csv"
    src.write_text("when,load\n2020-01-01 02:00:00,2\n2020-01-01 01:00:00,1e308\n2020-01-01 00:00:00,1.0\n")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ValueError, match=r"row 3 of in\.csv \(2020-01-01 01:00:00\), column 'load'") as e:
        export_release(load_series(src), [], PrivacySettings(), out / "r.csv", ExportOptions("adaptive"))
    assert "random words" not in str(e.value)
    assert list(out.iterdir()) == []
