"""Issue 42, finding 3: one output guard for every writer — never over the private input (by its path, a
symbolic link or a hard link to it), never a special file, an existing file only with --force."""

from __future__ import annotations

import os
import shutil
import stat

import numpy as np
import pytest

from lmdk_gui.core.data.landmark_files import write_landmark_file
from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.data.project import Project, save_project
from lmdk_gui.core.kernel.settings import PrivacySettings
from lmdk_gui.core.publish.export import ExportError, ExportOptions, export_release
from lmdk_gui.core.publish.guard import OutputRefused, check_output
from tests.cli.helpers import run
from tests.conftest import SAMPLES

ENERGY = SAMPLES / "energy_hue_2013_jan.csv"


@pytest.fixture
def data(tmp_path):
    """A private copy of the energy sample (today's code wrote over it: never the shared sample)."""
    dst = tmp_path / "in" / "energy.csv"
    dst.parent.mkdir()
    shutil.copy(ENERGY, dst)
    return dst


def _aliases(data, tmp_path):
    """The input by its own path, through a symbolic link and through a hard link (elsewhere)."""
    sym = tmp_path / "sym.csv"
    sym.symlink_to(data)
    hard = tmp_path / "hard.csv"
    os.link(data, hard)
    return {"same": data, "symlink": sym, "hardlink": hard}


WRITERS = {
    "evaluate --csv": lambda i, t: ["evaluate", str(i), "--csv", str(t), "--runs", "1", "--percentages", "0"],
    "evaluate --plot": lambda i, t: ["evaluate", str(i), "--plot", str(t), "--runs", "1", "--percentages", "0"],
    "tpl --curve": lambda i, t: ["tpl", str(i), "--s", "0.1", "--curve", str(t)],
    "landmarks -o --force": lambda i, t: ["landmarks", str(i), "--rule", "threshold", "--above", "0.5", "-o",
                                          str(t), "--force"],
    "export --force": lambda i, t: ["export", str(i), "-o", str(t), "--scheme", "uniform", "--epsilon", "1",
                                    "--force"],
}


@pytest.mark.parametrize("alias", ["same", "symlink", "hardlink"])
@pytest.mark.parametrize("writer", list(WRITERS))
def test_no_command_writes_over_its_input(capsys, tmp_path, data, writer, alias):
    before = data.read_bytes()
    target = _aliases(data, tmp_path)[alias]
    code, _, err = run(capsys, *WRITERS[writer](data, target))
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1
    assert ("own input file" in err) if alias != "symlink" else ("input file" in err or "symbolic link" in err)
    assert data.read_bytes() == before
    assert not (tmp_path / "in" / "energy.csv.json").exists() or writer != "export --force"


@pytest.mark.parametrize("writer", ["evaluate --csv", "tpl --curve"])
def test_evaluate_and_tpl_keep_an_existing_file_without_force(capsys, tmp_path, data, writer):
    out = tmp_path / "out.csv"
    out.write_text("keep me")
    code, _, err = run(capsys, *WRITERS[writer](data, out))
    assert code == 2 and "--force" in err and out.read_text() == "keep me"
    code, _, err = run(capsys, *WRITERS[writer](data, out), "--force")
    assert code == 0, err
    assert out.read_text() != "keep me"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_the_guard_refuses_special_files_even_with_force(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    folder = tmp_path / "d"
    folder.mkdir()
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere")
    for target, word in ((fifo, "fifo"), (folder, "folder"), (link, "symbolic link"), ("/dev/null", "device")):
        with pytest.raises(OutputRefused, match=word):
            check_output(target, (), force=True)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    with pytest.raises(OutputRefused, match="does not exist"):
        check_output(tmp_path / "no" / "x.csv")
    assert check_output(tmp_path / "new.csv") == tmp_path / "new.csv"


@pytest.mark.parametrize("alias", ["same", "symlink", "hardlink"])
def test_export_refuses_its_input_in_the_core(tmp_path, data, alias):
    s = load_series(data)
    before = data.read_bytes()
    with pytest.raises(ExportError, match="input|symbolic link"):
        export_release(s, [], PrivacySettings(), _aliases(data, tmp_path)[alias],
                       ExportOptions("uniform", force=True))
    assert data.read_bytes() == before


@pytest.mark.parametrize("alias", ["same", "symlink", "hardlink"])
def test_project_and_landmark_list_saves_refuse_the_data_file(tmp_path, data, alias):
    s = load_series(data)
    before = data.read_bytes()
    target = _aliases(data, tmp_path)[alias]
    project = Project.from_series(s, [3, 5], PrivacySettings())
    with pytest.raises(OutputRefused, match="project"):
        save_project(target, project, force=True)
    with pytest.raises(OutputRefused, match="landmark list"):
        write_landmark_file(target, s, np.array([3, 5]), force=True)
    assert data.read_bytes() == before
    # an ordinary existing file: replaced with force (the dialogs have asked), kept without
    other = tmp_path / "p.lmdk.json"
    other.write_text("old")
    with pytest.raises(OutputRefused, match="exists"):
        save_project(other, project, force=False)
    save_project(other, project)
    assert other.read_text() != "old"


def _people(path):
    path.write_text("id,time,v\n" + "".join(f"p1,2020-01-01 {h:02d}:00:00,{h}\n" for h in range(10)))


@pytest.mark.parametrize("fmt", ["csv"])
def test_batch_never_releases_over_an_input(capsys, tmp_path, fmt):
    folder = tmp_path / "data"
    folder.mkdir()
    src = folder / "p1.csv"  # the release of person p1 would be p1.csv: the input's own name
    _people(src)
    before = src.read_bytes()
    code, _, err = run(capsys, "batch", str(src), "-o", str(folder), "--id-col", "id", "--scheme", "uniform",
                       "--epsilon", "1", "--force", "--workers", "1")
    assert code == 2 and "input" in err and src.read_bytes() == before
    out = tmp_path / "out"  # a hard link to the input, where the release of p1 goes
    out.mkdir()
    os.link(src, out / "p1.csv")
    code, stdout, err = run(capsys, "batch", str(src), "-o", str(out), "--id-col", "id", "--scheme", "uniform",
                            "--epsilon", "1", "--force", "--workers", "1")
    assert src.read_bytes() == before and (out / "p1.csv").read_bytes() == before
    assert not (out / "p1.csv.json").exists()
    assert "own input file" in stdout + err


@pytest.mark.parametrize("alias", ["same", "symlink", "hardlink"])
def test_report_never_replaces_the_private_input(capsys, tmp_path, data, alias):
    rel = tmp_path / "r.csv"
    code, _, err = run(capsys, "export", str(data), "-o", str(rel), "--scheme", "uniform", "--epsilon", "1")
    assert code == 0, err
    before = data.read_bytes()
    target = _aliases(data, tmp_path)[alias]
    code, _, err = run(capsys, "report", str(rel), "-o", str(target), "--private", str(data), "--force")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert data.read_bytes() == before
