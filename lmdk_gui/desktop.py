"""``lmdk-gui --install-desktop`` / ``--uninstall-desktop``: the freedesktop launcher entry and icons.

Install writes ``lmdk-gui.desktop`` into ``<data>/applications`` and the icon into
``<data>/icons/hicolor/<N>x<N>/apps`` (PNG) and ``.../scalable/apps`` (SVG), where ``<data>`` is
``$XDG_DATA_HOME`` (default ``~/.local/share``) or ``PREFIX/share``. Uninstall removes exactly those files
and, of the folders install created (recorded in the entry), those that are empty again. Qt-free: it runs without a display and never starts the GUI.

The icon files ship inside the package (``lmdk_gui/icons``, package data), so an installed wheel has them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

#: The desktop file id (``lmdk-gui.desktop``) and the icon name; the app passes it to
#: ``QGuiApplication.setDesktopFileName`` so Wayland (app id) and docks match the window to the entry.
APP_ID = "lmdk-gui"
#: What Qt puts in the class part of the X11 WM_CLASS: ``QCoreApplication.applicationName()`` (app.py).
WM_CLASS = "lmdk_gui"
ICON_DIR = Path(__file__).resolve().parent / "icons"
SVG_NAME = f"{APP_ID}.svg"
#: The hicolor sizes the PNGs are rendered at (tests/render_icons.py).
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256)
#: What the app opens (main_window's file dialog): CSV/TSV, Excel workbooks, GPX tracks, Parquet.
MIME_TYPES = (
    "text/csv",
    "text/tab-separated-values",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/gpx+xml",
    "application/vnd.apache.parquet",
)

#: The entry's record of the folders install created (relative to ``<data>``; ``.`` is ``<data>`` itself), so
#: that uninstall removes those when they are empty again, and no folder that was there before.
CREATED_KEY = "X-LMDK-Created-Folders"


class DesktopError(Exception):
    """A one-line reason why the entry could not be installed or removed."""


def png_name(size: int) -> str:
    return f"{APP_ID}-{size}.png"


def data_home(prefix: str | None) -> Path:
    """Where the entry goes: ``PREFIX/share``, else ``$XDG_DATA_HOME``, else ``~/.local/share``."""
    if prefix is not None:
        return Path(prefix).resolve() / "share"
    xdg = os.environ.get("XDG_DATA_HOME", "")
    # The XDG spec: a relative $XDG_DATA_HOME is invalid and must be ignored
    return Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "share"


def planned_files(data: Path) -> list[tuple[Path | None, Path]]:
    """(source icon or None for the generated entry, destination) for every file install writes."""
    hicolor = data / "icons" / "hicolor"
    files: list[tuple[Path | None, Path]] = [(None, data / "applications" / f"{APP_ID}.desktop")]
    files += [(ICON_DIR / png_name(n), hicolor / f"{n}x{n}" / "apps" / f"{APP_ID}.png") for n in ICON_SIZES]
    files.append((ICON_DIR / SVG_NAME, hicolor / "scalable" / "apps" / SVG_NAME))
    return files


def launcher_command() -> list[str]:
    """The absolute command that starts the app: the ``lmdk-gui`` script of this installation (next to the
    interpreter in a venv, else on PATH), or this interpreter with ``-m lmdk_gui`` when there is none (a
    source checkout run with ``python -m lmdk_gui``)."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    candidates = [argv0] if argv0 is not None and argv0.name == APP_ID else []
    candidates.append(Path(sys.executable).parent / APP_ID)
    found = shutil.which(APP_ID)
    if found:
        candidates.append(Path(found))
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return [str(c.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "lmdk_gui"]


def _exec_arg(arg: str) -> str:
    """One argument of the Exec key: quoted when it holds a reserved character (Desktop Entry spec,
    "The Exec key"), then escaped again as a desktop-file string (backslashes doubled)."""
    if arg and not any(c in arg for c in ' \t\n"\'\\><~|&;$*?#()`'):
        out = arg
    else:
        out = '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'
    return out.replace("\\", "\\\\").replace("%", "%%")


def desktop_entry(command: Sequence[str], created: Sequence[str] = ()) -> str:
    """The text of ``lmdk-gui.desktop`` for a launcher started by ``command`` (absolute paths); ``created``
    are the folders install created, relative to the data folder (see :data:`CREATED_KEY`)."""
    lines = [
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.4",
        "Name=lmdk_gui",
        "GenericName=Landmark Privacy",
        "Comment=Publish a personal time series with differential privacy that protects its landmarks",
        f"TryExec={_exec_arg(command[0])}",
        "Exec=" + " ".join(_exec_arg(a) for a in command) + " %f",
        f"Icon={APP_ID}",
        "Terminal=false",
        "Categories=Science;DataVisualization;",  # one main category: listed once in menus
        "Keywords=privacy;differential privacy;time series;landmark;CSV;",
        "MimeType=" + "".join(m + ";" for m in MIME_TYPES),
        f"StartupWMClass={WM_CLASS}",
        "StartupNotify=true",
    ]
    if created:
        lines.append(f"{CREATED_KEY}=" + "".join(c + ";" for c in created))
    return "\n".join(lines) + "\n"


def _write(dest: Path, data: bytes) -> None:
    """Create or replace ``dest`` atomically (a temporary file in its folder, then a rename)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp{os.getpid()}")
    try:
        tmp.write_bytes(data)
        tmp.chmod(0o644)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _refresh_caches(data: Path) -> None:
    """Bring the desktop's caches up to date, where the tools exist; a missing tool or a failure is harmless
    (desktops also read the folders themselves). The icon cache is only refreshed where one exists already
    (or the theme has its index, as system prefixes do): creating one in a user folder would make GTK rely on
    a cache that other programs' icons do not update."""
    apps = data / "applications"
    tool = shutil.which("update-desktop-database")
    if tool and apps.is_dir():
        if any(apps.glob("*.desktop")):
            _quiet([tool, "-q", str(apps)])
        else:  # the cache would describe no entry at all: remove it rather than rewrite it empty
            (apps / "mimeinfo.cache").unlink(missing_ok=True)
    hicolor = data / "icons" / "hicolor"
    tool = shutil.which("gtk-update-icon-cache")
    if tool and ((hicolor / "icon-theme.cache").is_file() or (hicolor / "index.theme").is_file()):
        _quiet([tool, "-q", "-f", "-t", str(hicolor)])


def _quiet(cmd: list[str]) -> None:
    try:
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        pass


def _recorded_folders(entry: Path, data: Path) -> list[Path]:
    """The folders an earlier install recorded in its entry (none if there is no readable entry)."""
    try:
        lines = entry.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    value = next((ln.split("=", 1)[1] for ln in lines if ln.startswith(CREATED_KEY + "=")), "")
    rel = [Path(v) for v in value.split(";") if v]
    return [data / r for r in rel if not r.is_absolute() and ".." not in r.parts]


def install(prefix: str | None = None, command: list[str] | None = None) -> list[Path]:
    """Write the entry and the icons (replacing earlier ones); returns the files written."""
    data = data_home(prefix)
    files = planned_files(data)
    missing = [str(src) for src, _ in files if src is not None and not src.is_file()]
    if missing:
        raise DesktopError(f"the icon file {missing[0]} is missing from this installation")
    entry_path = files[0][1]
    needed = {data} | {f for _s, d in files for f in d.parents if data in f.parents}
    created = {f for f in needed if not f.exists()} | set(_recorded_folders(entry_path, data))
    record = sorted(str(f.relative_to(data)) for f in created)
    entry = desktop_entry(command or launcher_command(), record).encode("utf-8")
    written = []
    dest = entry_path
    try:
        for src, dest in files:
            _write(dest, entry if src is None else src.read_bytes())
            written.append(dest)
    except OSError as e:
        raise DesktopError(f"cannot write {e.filename or dest}: {e.strerror or e}") from None
    _refresh_caches(data)
    return written


def uninstall(prefix: str | None = None) -> list[Path]:
    """Remove what :func:`install` writes (those files only) and, of the folders it created, those left
    empty; returns the files removed."""
    data = data_home(prefix)
    files = planned_files(data)
    created = _recorded_folders(files[0][1], data)
    removed = []
    for _src, dest in files:
        try:
            dest.unlink()
        except FileNotFoundError:
            continue
        except OSError as e:
            raise DesktopError(f"cannot remove {dest}: {e.strerror or e}") from None
        removed.append(dest)
    _refresh_caches(data)
    for folder in sorted(created, key=lambda f: len(f.parts), reverse=True):  # the deepest first
        try:
            folder.rmdir()  # only succeeds on an empty folder
        except OSError:
            pass
    return removed


def run(install_entry: bool, prefix: str | None) -> int:
    """The launcher's ``--install-desktop`` / ``--uninstall-desktop``: one line per file, exit 0; on an error
    one line on stderr and exit 2."""
    if prefix is not None and not Path(prefix).is_dir():
        print(f"lmdk-gui: error: --prefix: no such folder: {prefix!r}", file=sys.stderr)
        return 2
    try:
        if install_entry:
            for path in install(prefix):
                print(f"wrote {path}")
        else:
            removed = uninstall(prefix)
            for path in removed:
                print(f"removed {path}")
            if not removed:
                print(f"nothing to remove: no {APP_ID} entry in {data_home(prefix)}")
    except DesktopError as e:
        print(f"lmdk-gui: error: {e}", file=sys.stderr)
        return 2
    return 0
