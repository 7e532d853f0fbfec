"""Every command-line entry point turns bad values into its one-line error (issue 17).

Hypothesis builds argument vectors for each ``lmdk`` sub-command and for ``lmdk-gui``: a valid base command
with one to three options replaced by bad values — negative, NaN, ±inf, overflowing, huge integers, empty,
non-UTF-8 (``os.fsdecode`` of undecodable bytes, as the OS hands them to Python), missing or unreadable
files, folders where files belong, backwards row ranges. Each must end with exit code 2 and one error line
on stderr (warnings before it allowed), never a traceback or argparse's usage block. ``lmdk`` runs
in-process; ``lmdk-gui`` in-process too — its arguments are checked before Qt starts (the test makes the
window class explode, so a value that got through fails loudly instead of opening a window) — plus a few
real subprocesses for both.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lmdk_gui.app as gui_app
from lmdk_gui.cli import main as lmdk_main
from tests.conftest import ROOT, SAMPLES

ENERGY = str(SAMPLES / "energy_hue_2013_jan.csv")
NON_UTF8 = os.fsdecode(b"\xff\xfe\x80caf\xe9.csv")  # surrogate escapes, as sys.argv would hold them
MISSING = "/nonexistent-lmdk-folder/data.csv"

UNIVERSAL = ["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e999", "-1e999", "", " ", "abc", "0x1p3",
             "1,5", "1e", "--", NON_UTF8]
NEGATIVE = ["-1", "-0.5", "-1e-300", "-1e308", "-" + "9" * 400]
HUGE_INT = [str(2**64), "9" * 60, "1e3", "2.5", "-1", "+-3"]

FINITE = st.sampled_from(UNIVERSAL)
POSITIVE = st.sampled_from(UNIVERSAL + NEGATIVE + ["0", "-0", "0.0"])
NONNEG = st.sampled_from(UNIVERSAL + NEGATIVE)
FRACTION = st.sampled_from(UNIVERSAL + NEGATIVE + ["1.0000001", "2", "1e308"])
SHARE = st.sampled_from(UNIVERSAL + NEGATIVE + ["0", "1", "100%", "-5%", "150%", "%"])
DIGIT3 = "\u0663"  # an Arabic-Indic three: float() takes it (fine), a whole-number option does not
SEED = st.sampled_from(UNIVERSAL + ["-1", "1.5", "1e3", str(2**63), "9" * 60, DIGIT3])
RUNS = st.sampled_from(UNIVERSAL + ["0", "-3", "1.5", str(10**9), "9" * 60, DIGIT3])
ROWS = st.sampled_from(["-1", "5-3", "x", "1-", "1-2-3", "99999", "0-99999999999999", "3,,x", "nan", NON_UTF8])
CHOICE = st.sampled_from(["", "bogus", "UNIFORM", NON_UTF8, "-"])


def in_files(tmp: str, *, empty_is_bad: bool = True) -> st.SearchStrategy[str]:
    """Missing, empty-named, undecodable-named, a folder, binary garbage (and an empty file, unless an empty
    file is a valid value: an empty landmark file means no landmarks)."""
    return st.sampled_from([MISSING, "", NON_UTF8, tmp, os.path.join(tmp, "binary.csv")]
                           + ([os.path.join(tmp, "empty.csv")] if empty_is_bad else []))


def out_files(tmp: str) -> st.SearchStrategy[str]:
    return st.sampled_from([os.path.join(MISSING, "out.csv"), "", tmp, os.path.join(tmp, NON_UTF8, "x.csv")])


def _commands(tmp: str) -> dict[str, tuple[list[str], dict[str, st.SearchStrategy]]]:
    """Sub-command → (valid base argv, option → strategy of values that are bad for it)."""
    privacy = {"--epsilon": POSITIVE, "--sensitivity": POSITIVE, "--radius": POSITIVE,
               "--adaptive-inc": FRACTION, "--adaptive-dec": FRACTION, "--adaptive-min-rate": FRACTION,
               "--duplicates": CHOICE, "--kind": CHOICE}
    dummies = {"--dummies": CHOICE, "--dummy-share": SHARE, "--dummy-utility": CHOICE}
    landmarks = {"--landmark-rows": ROWS, "--landmarks": in_files(tmp, empty_is_bad=False)}
    return {
        "export": (["-o", os.path.join(tmp, "out.csv"), "--scheme", "uniform", "--epsilon", "1"],
                   {**privacy, **dummies, **landmarks, "--scheme": CHOICE, "-o": out_files(tmp),
                    "--noise-backend": CHOICE}),
        "compare": (["--runs", "2"], {**privacy, **dummies, **landmarks, "--runs": RUNS, "--seed": SEED}),
        "landmarks": (["--rule", "threshold", "--below", "0.5"],
                      {"--below": FINITE, "--above": FINITE, "--target": FINITE, "--penalty": FINITE,
                       "--rule": CHOICE, "-o": out_files(tmp), "--duplicates": CHOICE}),
        "tpl --matrix": (["--matrix", os.path.join(tmp, "matrix.csv")],
                         {"--matrix": in_files(tmp), "--states": st.sampled_from(["2", "3"]), "--seed": SEED}),
        "tpl": (["--s", "0.1"], {**privacy, **landmarks, "--s": NONNEG, "--seed": SEED,
                                 "--states": st.sampled_from(["1", "0", "-2", "101", "9" * 50, "2.5", ""]),
                                 "--curve": out_files(tmp)}),
        "evaluate": (["--runs", "1", "--percentages", "0,50"],
                     {**privacy, "--runs": RUNS, "--seed": SEED, "--distance": NONNEG, "--duration": NONNEG,
                      "--percentages": st.sampled_from(["", "abc", "150", "-5", "nan", "inf", "0,,x"]),
                      "--size": st.sampled_from(["", "0x0", "axb", "1x", "99999x99999", "12x12x12"]),
                      "--placement": CHOICE, "--rule": CHOICE}),
    }


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("fuzz")
    (d / "empty.csv").write_bytes(b"")
    (d / "binary.csv").write_bytes(bytes(range(256)) * 4)
    (d / "matrix.csv").write_text("0.9,0.1\n0.2,0.8\n")
    return str(d)


def _check(code, err: str, prog: str) -> None:
    assert code == 2, f"exit code {code}; stderr: {err!r}"
    assert "Traceback" not in err and "usage:" not in err, err
    lines = err.strip().splitlines()
    assert lines, "no message on stderr"
    assert lines[-1].startswith(prog) and "error" in lines[-1], err
    assert all(line.startswith(f"{prog}: warning:") for line in lines[:-1]), err


def _run_lmdk(capsys, argv: list[str]) -> tuple[int, str]:
    try:
        code = lmdk_main(argv)
    except SystemExit as e:
        code = e.code
    _, err = capsys.readouterr()
    return code, err


@pytest.mark.parametrize("command", ["export", "compare", "landmarks", "tpl", "tpl --matrix", "evaluate"])
@settings(max_examples=int(os.environ.get("LMDK_FUZZ_EXAMPLES", 40)), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_lmdk_bad_values_end_in_one_line(command, data, capsys, fuzz_dir):
    base, options = _commands(fuzz_dir)[command]
    n_bad = data.draw(st.integers(1, 3), label="how many")
    chosen = data.draw(st.lists(st.sampled_from(sorted(options)), min_size=n_bad, max_size=n_bad, unique=True),
                       label="options")
    argv = [command.split()[0], ENERGY, *base]
    for opt in chosen:
        argv += [opt, data.draw(options[opt], label=opt)]
    if data.draw(st.booleans(), label="bad input file"):
        argv[1] = data.draw(in_files(fuzz_dir), label="input")
    code, err = _run_lmdk(capsys, argv)
    _check(code, err, "lmdk")


@pytest.mark.parametrize("argv, usage", [
    (["export"], True), (["bogus"], True), ([], True), (["tpl", ENERGY], True),
    (["compare", ENERGY, "--bounds", "nan", "1"], True), (["compare", ENERGY, "--bounds", "1"], True),
    (["export", ENERGY, "-o", "x.csv", "--scheme", "uniform"], True),
    (["compare", ENERGY, "--bounds", "5", "1"], False),  # parsed, then refused by the settings
])
def test_lmdk_usage_errors_are_one_line_with_help_pointer(capsys, argv, usage):
    code, err = _run_lmdk(capsys, argv)
    _check(code, err, "lmdk")
    assert ("--help)" in err) == usage, err


class _NoWindow:
    def __init__(self, *a, **k) -> None:
        raise AssertionError("lmdk-gui went on to open its window although an argument was bad")


GUI_OPTIONS = {
    "--epsilon": POSITIVE,
    "--size": st.sampled_from(["", "0x0", "axb", "1x", "99999x99999", "1400", "-5x-5", NON_UTF8]),
    "--landmark-rows": st.sampled_from(["-1", "5-3", "x", "1-", "1-2-3", "nan", NON_UTF8, "3,,x"]),
    "--sample": CHOICE,
    "--screenshot": st.sampled_from(["", os.path.join(MISSING, "x.png"), "shot.txt", "/"]),
}


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_lmdk_gui_bad_values_end_in_one_line_before_qt(data, capsys, monkeypatch, fuzz_dir):
    import lmdk_gui.ui.window.main_window as mw

    monkeypatch.setattr(mw, "MainWindow", _NoWindow)
    monkeypatch.setenv("LMDK_RUNTIME", "off")  # (in this test process: no process-wide tuning)
    chosen = data.draw(st.lists(st.sampled_from(sorted(GUI_OPTIONS)), min_size=1, max_size=3, unique=True))
    argv: list[str] = []
    for opt in chosen:
        argv += [opt, data.draw(GUI_OPTIONS[opt], label=opt)]
    if data.draw(st.booleans(), label="file"):
        argv.insert(0, data.draw(st.sampled_from([MISSING, NON_UTF8, fuzz_dir, ""]), label="file"))
    try:
        code = gui_app.main(argv)
    except SystemExit as e:
        code = e.code
    _, err = capsys.readouterr()
    _check(code, err, "lmdk-gui")
    assert "(see lmdk-gui --help)" in err


@pytest.mark.parametrize("args, prog", [
    (["-m", "lmdk_gui", "--epsilon", "-1"], "lmdk-gui"),  # the report's traceback
    (["-m", "lmdk_gui", "--sample", "energy", "--landmark-rows", "99999", "--screenshot", "{tmp}/x.png"],
     "lmdk-gui"),  # a row past the end, known only once the file is open (Qt offscreen)
    (["-m", "lmdk_gui", NON_UTF8], "lmdk-gui"),
    (["-m", "lmdk_gui.cli", "export", ENERGY, "-o", "{tmp}/o.csv", "--scheme", "uniform", "--epsilon", "inf"],
     "lmdk"),
])
def test_real_processes(args, prog, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen",
           "LMDK_GUI_SETTINGS": str(tmp_path / "settings.ini")}
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    proc = subprocess.run([sys.executable, *argv], capture_output=True, env=env, timeout=120, cwd=tmp_path)
    err = os.fsdecode(proc.stderr)
    err = "\n".join(line for line in err.splitlines() if "propagateSizeHints" not in line)  # Qt offscreen noise
    _check(proc.returncode, err, prog)
    assert not (tmp_path / "x.png").exists() and not (tmp_path / "o.csv").exists()
