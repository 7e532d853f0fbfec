"""``lmdk-gui`` / ``python -m lmdk_gui``: start the desktop app.

``lmdk-gui`` reopens the last file (on first start: an "Open a file / Try a sample" panel); ``lmdk-gui FILE``
opens FILE. ``--screenshot OUT.png`` renders the window offscreen once the preview is ready, saves it and
exits. ``--smoke-test`` shows the window on the real display, waits until its preview (or the empty panel)
is drawn, closes it and exits 0 (1 on a timeout or an error): the install check CI runs under Xvfb.
``--install-desktop`` / ``--uninstall-desktop`` add or remove the launcher entry and icons (desktop.py).
``--runtime-tuning SPEC`` (default: ``$LMDK_RUNTIME``, else ``default``) chooses the process-wide tuning this
launcher, and only this launcher, applies (lmdk_gui/runtime). ``--memory auto|lean|full`` sets the session's
memory policy for this run (core/engine/memory.py), over the ``memoryPolicy`` preference.
"""

from __future__ import annotations

import argparse
import os
import sys

from .argtypes import (
    EXIT_USAGE,
    OneLineParser,
    existing_file,
    file_name_bytes_on_console,
    from_parser,
    image_output,
    path_arg,
    positive,
    size_type,
)
from .samples import SAMPLE_FILES, SAMPLES


@from_parser
def _runtime_spec(text: str) -> frozenset[str]:
    from . import runtime

    return runtime.parse(text)


@from_parser
def _row_spec(text: str) -> str:
    """--landmark-rows: the syntax is checked now (before any window); the rows against the file once open."""
    from .core.data.landmark_files import row_spec_ranges

    row_spec_ranges(text)
    return text


def build_parser() -> argparse.ArgumentParser:
    """Every value is checked here, before Qt starts: a bad one ends in one line and exit code 2."""
    p = OneLineParser(prog="lmdk-gui", description="Landmark privacy for personal time series.")
    p.add_argument("file", nargs="?", type=existing_file, help="time series (CSV/TSV) or project (.lmdk.json) "
                   "to open (default: the last file, if it still exists)")
    p.add_argument("--sample", choices=("energy", "gps", "contacts"),
                   help="open one of the bundled sample series")
    p.add_argument("--landmark-rows", type=_row_spec, metavar="ROWS",
                   help="mark these 0-based rows, e.g. 3,7,10-20")
    p.add_argument("--epsilon", type=positive,
                   help="total privacy budget ε")
    p.add_argument("--screenshot", type=image_output, metavar="OUT.png",
                   help="render the window offscreen to a PNG and exit")
    p.add_argument("--size", type=size_type, default="1400x900", metavar="WxH",
                   help="window size for --screenshot (200x150 to 8000x8000)")
    p.add_argument("--smoke-test", action="store_true",
                   help="show the window, wait until it is drawn with its preview, close it and exit "
                        "(0 = the app works on this display)")
    desktop = p.add_mutually_exclusive_group()
    desktop.add_argument("--install-desktop", action="store_true",
                         help="add the app to the desktop's launcher (a .desktop entry and icons) and exit")
    desktop.add_argument("--uninstall-desktop", action="store_true", help="remove what --install-desktop wrote")
    p.add_argument("--prefix", type=path_arg, metavar="DIR",
                   help="with --(un)install-desktop: use DIR/share instead of ~/.local/share")
    p.add_argument("--memory", choices=("auto", "lean", "full"),
                   help="memory policy for this run: lean saves peak memory on large series at some click time, "
                        "full keeps everything; auto (the default, or the memoryPolicy preference) is lean from "
                        "2 million events on (see docs/performance.md)")
    p.add_argument("--runtime-tuning", type=_runtime_spec, metavar="SPEC",
                   help="process-wide tuning: default, off, or a comma list of mechanisms (-NAME removes one), "
                        "e.g. default,-heap (default: $LMDK_RUNTIME, else default; see docs/performance.md)")
    return p


def _import_numerics_before_qt() -> None:
    """numpy and pandas (the loader's) before PySide6: once imported, PySide6 reads the source of every
    Python module imported after it (to find ``from __feature__`` users, PYSIDE-2029; docs/performance.md).
    numba, which the first paint does not need, loads later on a worker (core/engine/lazyjit.py) while this
    thread draws the window and the series."""
    import numpy  # noqa: F401
    import pandas  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    file_name_bytes_on_console()
    parser = build_parser()
    args = parser.parse_args(argv)
    desktop = _desktop_entry(parser, args)
    if desktop is not None:
        return desktop
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if not _switch_runtime_on(args.runtime_tuning):
        return EXIT_USAGE
    _import_numerics_before_qt()
    app, window = _create_window(args)
    failed = _open_input(window, args) or _apply_options(window, args)
    if failed:
        return failed
    if args.screenshot:
        return _screenshot(app, window, args.screenshot, args.size)
    from .ui.window.startup import run_smoke_test, show_window

    if args.smoke_test:
        return run_smoke_test(app, window)
    show_window(window)
    return app.exec()


def _desktop_entry(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int | None:
    """``--install-desktop`` / ``--uninstall-desktop``: their exit code (no Qt: works without a display);
    None when the window is to start."""
    if args.install_desktop or args.uninstall_desktop:
        from .desktop import run

        return run(args.install_desktop, args.prefix)
    if args.prefix is not None:
        parser.error("--prefix needs --install-desktop or --uninstall-desktop")
    return None


def _switch_runtime_on(spec: frozenset[str] | None) -> bool:
    """Apply the process-wide tuning (lmdk_gui/runtime): ``--runtime-tuning``, else ``$LMDK_RUNTIME``, else
    the default. This launcher is the only caller of ``runtime.switch_on``. False (the error printed) for a
    bad ``$LMDK_RUNTIME``."""
    from . import runtime

    try:
        tuning = spec if spec is not None else runtime.from_environment()
    except ValueError as e:  # a bad $LMDK_RUNTIME
        print(f"lmdk-gui: error: {runtime.ENV}: {e}", file=sys.stderr)
        return False
    runtime.switch_on(tuning)  # before the imports (``freeze``) and before Qt's first fill (``serial-fills``)
    return True


def _create_window(args: argparse.Namespace):
    """The QApplication and the main window (tabs deferred), with ``--memory``'s policy; nothing opened yet."""
    from PySide6.QtWidgets import QApplication

    from .ui.window.identity import identify_application
    from .ui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    identify_application(app)
    window = MainWindow(load_default=args.file is None and args.sample is None, defer_tabs=True)
    if args.memory:
        from .core.engine.memory import MemoryPolicy

        window.session.set_memory_policy(MemoryPolicy(args.memory))
    return app, window


def _open_input(window, args: argparse.Namespace) -> int | None:
    """Open ``--sample`` or FILE in ``window``. A file that does not open is reported on stderr; the exit code
    2 for the scripted modes (``--screenshot``, ``--smoke-test``), None otherwise (the window shows)."""
    if args.sample:
        name, opts = SAMPLE_FILES[args.sample]
        window.open_series(SAMPLES / name, **opts)
        return None
    if not args.file:
        return None
    from PySide6.QtCore import QTimer

    from .core.data.loader import slow_to_inspect

    project = window.extensions.get("project_ui")
    if args.file.endswith(".lmdk.json") and project is not None:
        ok = project.open_project(args.file)
    elif not (args.screenshot or args.smoke_test or args.landmark_rows) and slow_to_inspect(args.file):
        # a large file, a workbook or a track: the window shows first, then reads it (5 s without a window
        # at 10^7 rows); --landmark-rows needs the series now, the scripted modes a synchronous result
        QTimer.singleShot(0, lambda: window.open_path_in_background(args.file))
        ok = True
    else:
        # An ambiguous or problematic file opens the import dialog (not offscreen: nobody could answer it)
        ok = window.open_series(args.file) if args.screenshot else window.open_path(args.file)
    if not ok:
        print(f"lmdk-gui: {window.last_error}", file=sys.stderr)
        if args.screenshot or args.smoke_test:
            return 2
    return None


def _apply_options(window, args: argparse.Namespace) -> int | None:
    """``--epsilon`` and ``--landmark-rows`` on the session; EXIT_USAGE (the window closed) for a row past the
    end of the file just opened, else None."""
    session = window.session
    if args.epsilon is not None:
        session.set_epsilon(args.epsilon)
    if args.landmark_rows and session.series is not None:
        from .core.data.landmark_files import parse_row_spec

        try:
            rows = parse_row_spec(args.landmark_rows, session.n)
        except ValueError as e:
            print(f"lmdk-gui: error: --landmark-rows: {e} (see lmdk-gui --help)", file=sys.stderr)
            window.close()
            return EXIT_USAGE
        session.set_landmarks(rows)
    return None


def _screenshot(app, window, path: str, size: tuple[int, int]) -> int:
    """Show ``window`` at ``size`` (offscreen), save it to ``path`` once its preview (or the empty state) is
    drawn, and quit: 0, or EXIT_USAGE when the image could not be written (60 s at most: never hang a
    script)."""
    from PySide6.QtCore import QTimer

    session = window.session
    w, h = size
    window.resize(w, h)
    window.show()

    saved: list[bool] = []

    def shoot() -> None:
        app.processEvents()
        saved.append(window.grab().save(path))
        if saved[-1]:
            print(f"saved {path}")
        window.close()
        app.quit()

    def when_ready() -> None:
        if (session.is_denoised_current() and session.average is not None) or \
                (session.series is None and not window.is_loading()):  # the empty state
            QTimer.singleShot(200, shoot)
        else:
            QTimer.singleShot(50, when_ready)

    QTimer.singleShot(0, when_ready)
    QTimer.singleShot(60_000, app.quit)  # never hang a script
    app.exec()
    if not (saved and saved[-1]):
        print(f"lmdk-gui: error: could not write the screenshot {path!r}", file=sys.stderr)
        return EXIT_USAGE
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
