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
    image_output,
    number_in,
    path_arg,
    size_type,
)
from .samples import SAMPLE_FILES, SAMPLES


def _runtime_spec(text: str) -> frozenset[str]:
    from . import runtime

    try:
        return runtime.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _row_spec(text: str) -> str:
    """--landmark-rows: the syntax is checked now (before any window); the rows against the file once open."""
    from .core.data.landmark_files import row_spec_ranges

    try:
        row_spec_ranges(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
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
    p.add_argument("--epsilon", type=number_in(0.0, low_open=True, what="a positive number"),
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
    if args.install_desktop or args.uninstall_desktop:  # no Qt: works without a display
        from .desktop import run

        return run(args.install_desktop, args.prefix)
    if args.prefix is not None:
        parser.error("--prefix needs --install-desktop or --uninstall-desktop")
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from . import runtime

    try:
        tuning = args.runtime_tuning if args.runtime_tuning is not None else runtime.from_environment()
    except ValueError as e:  # a bad $LMDK_RUNTIME
        print(f"lmdk-gui: error: {runtime.ENV}: {e}", file=sys.stderr)
        return EXIT_USAGE
    runtime.switch_on(tuning)  # before the imports (``freeze``) and before Qt's first fill (``serial-fills``)
    _import_numerics_before_qt()
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from .core.data.landmark_files import parse_row_spec
    from .core.data.loader import slow_to_inspect
    from .ui.window.identity import identify_application
    from .ui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    identify_application(app)
    window = MainWindow(load_default=args.file is None and args.sample is None, defer_tabs=True)
    if args.memory:
        from .core.engine.memory import MemoryPolicy

        window.session.set_memory_policy(MemoryPolicy(args.memory))
    if args.sample:
        name, opts = SAMPLE_FILES[args.sample]
        window.open_series(SAMPLES / name, **opts)
    elif args.file:
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
    session = window.session
    if args.epsilon is not None:
        session.set_epsilon(args.epsilon)
    if args.landmark_rows and session.series is not None:
        try:
            rows = parse_row_spec(args.landmark_rows, session.n)
        except ValueError as e:  # a row past the end of the file just opened
            print(f"lmdk-gui: error: --landmark-rows: {e} (see lmdk-gui --help)", file=sys.stderr)
            window.close()
            return EXIT_USAGE
        session.set_landmarks(rows)
    if args.screenshot:
        w, h = args.size
        window.resize(w, h)
        window.show()

        saved: list[bool] = []

        def shoot() -> None:
            app.processEvents()
            saved.append(window.grab().save(args.screenshot))
            if saved[-1]:
                print(f"saved {args.screenshot}")
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
            print(f"lmdk-gui: error: could not write the screenshot {args.screenshot!r}", file=sys.stderr)
            return EXIT_USAGE
        return 0
    if args.smoke_test:
        from .ui.window.startup import run_smoke_test

        return run_smoke_test(app, window)
    from .ui.window.startup import show_window

    show_window(window)
    return app.exec()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
