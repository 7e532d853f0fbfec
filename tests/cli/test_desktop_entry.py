"""``lmdk-gui --install-desktop`` / ``--uninstall-desktop`` (lmdk_gui/desktop.py): a valid freedesktop entry
and the icons, written without Qt, and removed again without touching anything else."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from lmdk_gui import desktop
from tests.conftest import ROOT

VALIDATE = shutil.which("desktop-file-validate")
needs_validator = pytest.mark.skipif(VALIDATE is None, reason="desktop-file-validate (desktop-file-utils) is "
                                                               "not installed; .ci/run installs it")


def launcher(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """The launcher's main() in a fresh interpreter without a display, reporting whether Qt was imported."""
    code = ("import sys\nfrom lmdk_gui.app import main\nrc = main(sys.argv[1:])\n"
            "print('QT:', sorted(m for m in sys.modules if m.split('.')[0] == 'PySide6'))\nsys.exit(rc)\n")
    full = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    full.update(PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=full,
                          timeout=120)


def listing(root: Path) -> dict[str, bytes | None]:
    """Every path under root (folders → None, files → their bytes)."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


def validate(path: Path) -> None:
    out = subprocess.run([VALIDATE, str(path)], capture_output=True, text=True, timeout=60)
    # errors and warnings fail it (exit code 1); so do hints, which it prints without failing
    assert out.returncode == 0 and out.stdout.strip() == "" and out.stderr.strip() == "", out.stdout + out.stderr


def entry_keys(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines()[1:])


@needs_validator
def test_install_writes_a_valid_entry_and_every_icon_without_qt(tmp_path):
    out = launcher("--install-desktop", "--prefix", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    data = tmp_path.resolve() / "share"
    expected = [d for _s, d in desktop.planned_files(data)]
    assert out.stdout.splitlines()[:-1] == [f"wrote {p}" for p in expected]  # one line per file
    assert out.stdout.splitlines()[-1] == "QT: []"  # never starts (or imports) the GUI
    entry = data / "applications" / "lmdk-gui.desktop"
    validate(entry)
    keys = entry_keys(entry.read_text())
    assert keys["Type"] == "Application" and keys["Icon"] == "lmdk-gui" and keys["Terminal"] == "false"
    exe = keys["Exec"].removesuffix(" %f").split(" ")
    assert Path(exe[0]).is_absolute() and os.access(exe[0], os.X_OK), keys["Exec"]
    assert "text/csv;" in keys["MimeType"] and "text/tab-separated-values;" in keys["MimeType"]
    assert keys["StartupWMClass"] == desktop.WM_CLASS
    hicolor = data / "icons" / "hicolor"
    for n in desktop.ICON_SIZES:
        png = (hicolor / f"{n}x{n}" / "apps" / "lmdk-gui.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (n, n)
    assert (hicolor / "scalable" / "apps" / "lmdk-gui.svg").read_bytes() == \
        (desktop.ICON_DIR / desktop.SVG_NAME).read_bytes()


def test_install_then_uninstall_leaves_the_prefix_as_it_was(tmp_path):
    # another application's entry and icon, and folders that existed before, must survive
    other = tmp_path / "share" / "applications" / "other.desktop"
    other.parent.mkdir(parents=True)
    other.write_text("[Desktop Entry]\nType=Application\nName=Other\nExec=other\n")
    icon = tmp_path / "share" / "icons" / "hicolor" / "48x48" / "apps" / "other.png"
    icon.parent.mkdir(parents=True)
    icon.write_bytes(b"not really a png")
    (tmp_path / "share" / "icons" / "hicolor" / "16x16" / "apps").mkdir(parents=True)
    before = listing(tmp_path)
    assert launcher("--install-desktop", "--prefix", str(tmp_path)).returncode == 0
    assert listing(tmp_path) != before
    out = launcher("--uninstall-desktop", "--prefix", str(tmp_path))
    assert out.returncode == 0, out.stderr
    data = tmp_path.resolve() / "share"
    assert out.stdout.splitlines()[:-1] == [f"removed {d}" for _s, d in desktop.planned_files(data)]
    after = listing(tmp_path)
    after.pop("share/applications/mimeinfo.cache", None)  # update-desktop-database's cache (of other.desktop)
    before.pop("share/applications/mimeinfo.cache", None)
    assert after == before


def test_into_an_empty_prefix_and_out_again_leaves_it_empty(tmp_path):
    assert launcher("--install-desktop", "--prefix", str(tmp_path)).returncode == 0
    # a second install (an update) keeps the record of the folders the first one created
    assert launcher("--install-desktop", "--prefix", str(tmp_path)).returncode == 0
    assert launcher("--uninstall-desktop", "--prefix", str(tmp_path)).returncode == 0
    assert listing(tmp_path) == {}
    again = launcher("--uninstall-desktop", "--prefix", str(tmp_path))
    assert again.returncode == 0 and again.stdout.startswith("nothing to remove"), again.stdout


def test_without_a_prefix_the_user_data_folder_is_used(tmp_path):
    data = tmp_path / "xdg-data"
    data.mkdir()
    out = launcher("--install-desktop", env={"XDG_DATA_HOME": str(data), "HOME": str(tmp_path / "home")})
    assert out.returncode == 0, out.stderr
    assert (data / "applications" / "lmdk-gui.desktop").is_file()
    assert (data / "icons" / "hicolor" / "256x256" / "apps" / "lmdk-gui.png").is_file()
    assert not (tmp_path / "home").exists()
    out = launcher("--uninstall-desktop", env={"XDG_DATA_HOME": str(data), "HOME": str(tmp_path / "home")})
    assert out.returncode == 0, out.stderr
    assert listing(data) == {}  # the data folder itself stays


def test_relative_xdg_data_home_is_ignored(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert desktop.data_home(None) == tmp_path / ".local" / "share"


@pytest.mark.parametrize("args, message", [
    (["--install-desktop", "--prefix", "/no/such/folder"], "--prefix: no such folder: '/no/such/folder'"),
    (["--prefix", "/tmp"], "--prefix needs --install-desktop or --uninstall-desktop"),
    (["--install-desktop", "--uninstall-desktop"], "not allowed with argument"),
])
def test_usage_errors_are_one_line_and_exit_2(args, message):
    out = launcher(*args)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr, out.stderr


def test_a_write_error_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "share").write_text("a file where the share folder should be")
    out = launcher("--install-desktop", "--prefix", str(tmp_path))
    assert out.returncode == 2
    assert out.stderr.startswith("lmdk-gui: error: cannot write ") and len(out.stderr.splitlines()) == 1


def test_the_launcher_script_is_preferred(monkeypatch, tmp_path):
    script = tmp_path / "bin" / "lmdk-gui"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(script)])
    assert desktop.launcher_command() == [str(script)]
    monkeypatch.setattr(sys, "argv", ["-c"])
    monkeypatch.setattr(sys, "executable", str(tmp_path / "nowhere" / "python3"))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert desktop.launcher_command() == [str(tmp_path / "nowhere" / "python3"), "-m", "lmdk_gui"]


@needs_validator
def test_exec_quotes_paths_with_reserved_characters(tmp_path):
    path = '/opt/my apps/$HOME "x"/back\\slash/100%/lmdk-gui'
    entry = tmp_path / "lmdk-gui.desktop"
    entry.write_text(desktop.desktop_entry([path, "-m", "lmdk_gui"]))
    validate(entry)
    exec_value = entry_keys(entry.read_text())["Exec"]
    # undo the string escape, then the Exec quoting (Desktop Entry spec, "The Exec key")
    unescaped = exec_value.replace("\\\\", "\\")
    quoted = unescaped[: unescaped.index(' -m lmdk_gui %f')]
    assert quoted.startswith('"') and quoted.endswith('"')
    inner = quoted[1:-1]
    out, i = [], 0
    while i < len(inner):
        if inner[i] == "\\":
            i += 1
        out.append(inner[i])
        i += 1
    assert "".join(out).replace("%%", "%") == path


def test_the_packaged_icons_cover_every_size():
    names = sorted(p.name for p in desktop.ICON_DIR.iterdir() if p.suffix in (".png", ".svg"))
    assert names == sorted([desktop.SVG_NAME] + [desktop.png_name(n) for n in desktop.ICON_SIZES])
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'lmdk_gui = ["icons/*.svg", "icons/*.png"]' in pyproject  # shipped in the wheel as package data
