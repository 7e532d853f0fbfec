"""The headless ``lmdk`` command: the same engine as the desktop app.

Sub-commands live in their own modules and register themselves in :data:`COMMANDS`; each module has
``add_parser(subparsers)`` and ``run(args) -> int``. Exit codes: 0 success, 2 bad input or usage (one line
on stderr), 3 the landmark-privacy check failed (nothing was written).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from ..argtypes import EXIT_USAGE, OneLineParser, file_name_bytes_on_console, printable
from ..core.export import ExportError
from ..core.guarantee import GuaranteeError
from ..core.series import LoadError

#: module names under lmdk_gui.cli, in the order shown by --help
COMMANDS = ("export_cmd", "compare_cmd", "landmarks_cmd", "tpl_cmd", "evaluate_cmd")

EXIT_GUARANTEE = 3


class UsageError(Exception):
    """Bad options that argparse cannot catch by itself (exit 2)."""


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = OneLineParser(
        prog="lmdk",
        description="Landmark privacy for personal time series (headless). "
        "Exit codes: 0 ok, 2 bad input or usage, 3 the landmark-privacy check failed.",
    )
    parser.add_argument("--version", action="version", version=f"lmdk {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:  # a command not built yet
            if e.name == f"{__name__}.{name}":
                continue
            raise
        mod.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    file_name_bytes_on_console()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except GuaranteeError as e:
        print(f"lmdk: {e}", file=sys.stderr)
        return EXIT_GUARANTEE
    except (LoadError, UsageError, ExportError, ValueError) as e:
        print(printable(f"lmdk: error: {e}"), file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:  # a file the command had to read or write: one line, naming it
        where = f"{e.filename}: " if e.filename else ""
        print(printable(f"lmdk: error: {where}{e.strerror or e}"), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("lmdk: interrupted; nothing was written", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
