"""The headless ``lmdk`` command: the same engine as the desktop app.

Sub-commands live in their own modules and register themselves in :data:`COMMANDS`; each module has
``add_parser(subparsers)`` and ``run(args) -> int``. Exit codes: 0 success, 2 bad input or usage (one line
on stderr), 3 the landmark-privacy check failed (nothing was written), 130 interrupted (SIGINT) and 143
terminated (SIGTERM), with nothing written in both cases.

Interrupts (issue 17, finding 11): while the heavy modules are imported nothing can have been written, so
a signal ends the process at once with 130/143. From :func:`main` on, a signal sets :data:`INTERRUPTED` and
raises ``KeyboardInterrupt``; exports also poll the flag as their cancel test, so an interrupt that a
library swallows (numba's first compilation did) still stops the export before anything is renamed into
place, and the temporary files are removed on the way out. A signal the command was started with ignored
(a script's background job ignores SIGINT) stays ignored throughout.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

INTERRUPTED = threading.Event()
#: Set by a command once its files are complete: a later signal no longer interrupts (nothing to undo).
RELEASE_WRITTEN = threading.Event()
_EXIT_CODES: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}


def _exit_now(signum, frame):  # pragma: no cover - runs in a subprocess test
    os._exit(_EXIT_CODES.get(signum, 130))


_import_handlers = {}
if threading.current_thread() is threading.main_thread():
    for _sig in _EXIT_CODES:
        _import_handlers[_sig] = signal.getsignal(_sig)
        if _import_handlers[_sig] in (signal.default_int_handler, signal.SIG_DFL):
            signal.signal(_sig, _exit_now)

import argparse  # noqa: E402
import importlib  # noqa: E402

from ..argtypes import EXIT_USAGE, OneLineParser, file_name_bytes_on_console, printable  # noqa: E402
from ..core.data.series import LoadError  # noqa: E402
from ..core.kernel.guarantee import GuaranteeError  # noqa: E402
from ..core.kernel.securenoise import Cancelled  # noqa: E402
from ..core.publish.export import ExportError  # noqa: E402

for _sig, _h in _import_handlers.items():
    signal.signal(_sig, _h)

#: module names under lmdk_gui.cli, in the order shown by --help
COMMANDS = ("export_cmd", "batch_cmd", "compare_cmd", "landmarks_cmd", "tpl_cmd", "evaluate_cmd", "ledger_cmd",
            "report_cmd")

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


def _on_signal(signum, frame):
    INTERRUPTED.set()
    _received.append(signum)
    if not RELEASE_WRITTEN.is_set():
        raise KeyboardInterrupt


_received: list[int] = []


def _unraisable(info) -> None:
    """After an interrupt, what a finalizer raises is its echo: the KeyboardInterrupt that :func:`_on_signal`
    raised inside one (numba's compiler frees LLVM objects in ``__del__``), or the clean-up of an object the
    interrupt left half-built (seen at exit: "'PipelineTuningOptions' object has no attribute
    '_as_parameter_'"). The command already said "nothing was written"; Python would print a traceback for
    each. Without an interrupt, Python's own hook reports them."""
    if INTERRUPTED.is_set():
        return
    sys.__unraisablehook__(info)


def main(argv: list[str] | None = None) -> int:
    INTERRUPTED.clear()
    RELEASE_WRITTEN.clear()
    _received.clear()
    previous = {}
    hook = sys.unraisablehook
    sys.unraisablehook = _unraisable
    if threading.current_thread() is threading.main_thread():
        for sig in _EXIT_CODES:
            # A signal the command was started with ignored (a script's background job: SIGINT; nohup) stays
            # ignored, as it was while the modules were imported: caught from here on, an interrupt stopped
            # the export or not depending on how far the imports had come.
            if signal.getsignal(sig) is not signal.SIG_IGN:
                previous[sig] = signal.signal(sig, _on_signal)
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return _interrupted()
    finally:
        if argv is not None:  # called in-process: the caller's hook comes back (the program keeps it to exit)
            sys.unraisablehook = hook
        for sig, h in previous.items():
            # As the program (no argv): the process ends now, a late signal must not turn a finished run
            # into a kill. Called in-process (tests, scripts): the caller's handlers come back.
            signal.signal(sig, signal.SIG_IGN if argv is None else h)


def _interrupted() -> int:
    sig = _received[-1] if _received else signal.SIGINT
    print(f"lmdk: {'interrupted' if sig == signal.SIGINT else 'terminated'}; nothing was written",
          file=sys.stderr)
    return _EXIT_CODES.get(sig, 130)


def _main(argv: list[str] | None) -> int:
    file_name_bytes_on_console()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = int(args.run(args) or 0)
    except (KeyboardInterrupt, Cancelled):
        return _interrupted()
    except GuaranteeError as e:
        if INTERRUPTED.is_set():
            return _interrupted()
        print(f"lmdk: {e}", file=sys.stderr)
        return EXIT_GUARANTEE
    except (LoadError, UsageError, ExportError, ValueError) as e:
        if INTERRUPTED.is_set():
            return _interrupted()
        print(printable(f"lmdk: error: {e}"), file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:  # a file the command had to read or write: one line, naming it
        if INTERRUPTED.is_set():
            return _interrupted()
        where = f"{e.filename}: " if e.filename else ""
        print(printable(f"lmdk: error: {where}{e.strerror or e}"), file=sys.stderr)
        return EXIT_USAGE
    except BaseException:
        if INTERRUPTED.is_set():  # an interrupt a library turned into another exception
            return _interrupted()
        raise
    if INTERRUPTED.is_set() and RELEASE_WRITTEN.is_set():
        print("lmdk: interrupted after the files were complete; they are kept", file=sys.stderr)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
