"""Shared test set-up: offscreen Qt, paths to the bundled data (tests never read ../shared)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
SAMPLES = ROOT / "resources" / "samples"


@pytest.fixture(autouse=True)
def _private_ledger(tmp_path_factory, monkeypatch):
    """Every test (and every subprocess it starts) records releases in a temporary ledger, never in the
    user's application-data folder."""
    monkeypatch.setenv("LMDK_LEDGER", str(tmp_path_factory.mktemp("ledger") / "ledger.jsonl"))
