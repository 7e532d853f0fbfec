"""Command-line value types shared by ``lmdk`` and ``lmdk-gui`` (no Qt, no numerics: cheap to import).

Every bad value becomes one line on stderr and exit code 2 — ``lmdk export: error: argument --epsilon:
expected a positive number, got 'nan' (see lmdk export --help)`` — never a traceback or a usage block.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import re
import sys
from collections.abc import Callable
from typing import NoReturn, TypeVar

T = TypeVar("T")

EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse with its usage errors on one line, ``PROG: error: … (see PROG --help)``, instead of the usage
    block (sub-commands' parsers inherit the class)."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(printable(str(message)).split())
        self.exit(EXIT_USAGE, f"{self.prog}: error: {text} (see {self.prog} --help)\n")


def printable(text: str) -> str:
    """``text`` safe for any output stream: undecodable file-name bytes (surrogate escapes) become U+FFFD."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # other lone surrogates
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def file_name_bytes_on_console() -> None:
    """Let the real stdout/stderr write file names that are not valid UTF-8 as their own bytes (Python's
    stdout is strict by default: ``wrote <name>`` would otherwise fail after the file was written)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.fileno()
        except (AttributeError, OSError, ValueError):
            continue  # a capture or a StringIO: messages are made printable() instead
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="surrogateescape")


def path_arg(text: str) -> str:
    """An argparse type for file names: anything but an empty or blank string (which would be ignored)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a file name, got an empty string")
    return text


def number_in(low: float, high: float = math.inf, *, low_open: bool = False, what: str = "a number"):
    """An argparse type: a finite float in [low, high] (or (low, high] with ``low_open``), with a one-line
    message naming what was expected (NaN, ±inf and overflowing literals such as 1e999 are refused)."""

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        ok = math.isfinite(v) and (v > low if low_open else v >= low) and v <= high
        if not ok:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return v

    return parse


#: the shared number types of ``lmdk`` and ``lmdk-gui``
positive = number_in(0.0, low_open=True, what="a positive number")
non_negative = number_in(0.0, what="a number ≥ 0")
fraction = number_in(0.0, 1.0, what="a number between 0 and 1")
finite = number_in(-math.inf, what="a finite number")


def int_in(low: int, high: int | None, *, what: str):
    """An argparse type: an integer in [low, high] (ASCII decimal digits only; no upper limit for ``high``
    None), with a one-line message ``expected {what}, got '…'`` (``what`` names the range)."""

    def parse(text: str) -> int:
        t = text.strip()
        if not re.fullmatch(r"[+-]?[0-9]{1,40}", t) or int(t) < low or (high is not None and int(t) > high):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return int(t)

    return parse


def from_parser(parse: Callable[[str], T]) -> Callable[[str], T]:
    """An argparse type from a parser that raises ValueError: its message becomes the one-line error."""

    def convert(text: str) -> T:
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return convert


def parse_size(text: str) -> tuple[int, int]:
    """``"1200x700"`` → (1200, 700), each side within 200x150 … 8000x8000 (ValueError otherwise)."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(re.fullmatch(r"\s*[0-9]{1,6}\s*", p) for p in parts):
        raise ValueError(f"size must look like 1200x700, got {text!r}")
    w, h = (int(p) for p in parts)
    if not (200 <= w <= 8000 and 150 <= h <= 8000):
        raise ValueError(f"size must be between 200x150 and 8000x8000, got {text!r}")
    return w, h


#: :func:`parse_size` as an argparse type
size_type = from_parser(parse_size)


def existing_file(text: str) -> str:
    """An argparse type: a path naming an existing regular file (any bytes, via surrogate escapes)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a file name, got an empty string")
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError(f"no such file: {text!r}")
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"not a file: {text!r}")
    return text


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp")


def image_output(text: str) -> str:
    """An argparse type: an image file to write, in an existing folder, ending in a known image suffix."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected an image file name, got an empty string")
    if not text.lower().endswith(IMAGE_SUFFIXES):
        raise argparse.ArgumentTypeError(f"expected a file name ending in {', '.join(IMAGE_SUFFIXES)}, "
                                         f"got {text!r}")
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"the folder of {text!r} does not exist")
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder")
    return text
