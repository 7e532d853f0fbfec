"""ruff and mypy stay green (configured in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean():
    out = _run("ruff", "check", "lmdk_gui", "tests")
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.slow
def test_mypy_is_clean():
    out = _run("mypy")
    assert out.returncode == 0, out.stdout + out.stderr
