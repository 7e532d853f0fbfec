"""Running the ``lmdk`` command in-process, the way every CLI test does."""

from __future__ import annotations

from lmdk_gui.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """``lmdk *argv`` → (exit code, stdout, stderr); argparse's own exits count as exit codes."""
    try:
        code = main(list(argv))
    except SystemExit as e:  # argparse errors
        code = int(e.code)
    out, err = capsys.readouterr()
    return code, out, err
