"""Shared test set-up: offscreen Qt, paths to the bundled data (tests never read ../shared)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The private release ledger never goes to the user's home folder, not even from module-scoped fixtures
# that export before the per-test fixture below runs (each test then gets its own).
_LEDGER_DIR = tempfile.mkdtemp(prefix="lmdk-ledger-")
atexit.register(shutil.rmtree, _LEDGER_DIR, ignore_errors=True)
os.environ["LMDK_LEDGER"] = str(Path(_LEDGER_DIR) / "ledger.jsonl")

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
SAMPLES = ROOT / "resources" / "samples"


@pytest.fixture(autouse=True)
def _private_ledger(tmp_path_factory, monkeypatch):
    """Every test (and every subprocess it starts) records releases in a temporary ledger, never in the
    user's application-data folder."""
    monkeypatch.setenv("LMDK_LEDGER", str(tmp_path_factory.mktemp("ledger") / "ledger.jsonl"))
