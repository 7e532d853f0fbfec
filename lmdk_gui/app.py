"""``lmdk-gui`` / ``python -m lmdk_gui``: start the desktop app.

``lmdk-gui`` opens the last file (or the bundled energy sample on first start); ``lmdk-gui FILE`` opens FILE.
``--screenshot OUT.png`` renders the window offscreen once the preview is ready, saves it and exits.
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
    size_type,
)


def _row_spec(text: str) -> str:
    """--landmark-rows: the syntax is checked now (before any window); the rows against the file once open."""
    from .core.landmark_files import row_spec_ranges

    try:
        row_spec_ranges(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    """Every value is checked here, before Qt starts: a bad one ends in one line and exit code 2."""
    p = OneLineParser(prog="lmdk-gui", description="Landmark privacy for personal time series.")
    p.add_argument("file", nargs="?", type=existing_file, help="time series (CSV/TSV) or project (.lmdk.json) "
                   "to open (default: the last file, or a bundled sample)")
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
    return p


SAMPLE_FILES = {
    "energy": ("energy_hue_2013_jan.csv", {}),
    "gps": ("gps_bus_limerick.csv", {}),
    "contacts": ("contacts_person1672.csv", {"kind": "categorical", "duplicates": "first"}),
}


def main(argv: list[str] | None = None) -> int:
    file_name_bytes_on_console()
    args = build_parser().parse_args(argv)
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from .core.landmark_files import parse_row_spec
    from .ui.main_window import SAMPLES, MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("lmdk_gui")
    app.setOrganizationName("lmdk")
    window = MainWindow(load_default=args.file is None and args.sample is None)
    if args.sample:
        name, opts = SAMPLE_FILES[args.sample]
        window.open_series(SAMPLES / name, **opts)
    elif args.file:
        project = window.extensions.get("project_ui")
        if args.file.endswith(".lmdk.json") and project is not None:
            ok = project.open_project(args.file)
        else:
            ok = window.open_series(args.file)
        if not ok:
            print(f"lmdk-gui: {window.last_error}", file=sys.stderr)
            if args.screenshot:
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
            if session.is_preview_current() and session.average is not None:
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
    window.show()
    return app.exec()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
