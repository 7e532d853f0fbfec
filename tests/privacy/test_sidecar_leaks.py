"""The public sidecar carries nothing computed from the private input beyond what the release shows
(issue 17, finding 1).

The attack that found it: the sidecar's ``input.sha256`` is a deterministic function of the private file, so
an adversary who knows every value but one recovers the missing one by hashing candidates. Here the attack is
replayed on the bundled energy sample: it must find nothing, because the sidecar holds no digest of the input
(not its SHA-256, nor any other hex digest of its bytes), and no input file name unless the user asks.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil

import numpy as np

from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.kernel.settings import PrivacySettings
from lmdk_gui.core.publish.export import ExportOptions, export_release
from tests.cli.helpers import run
from tests.conftest import SAMPLES

ENERGY = SAMPLES / "energy_hue_2013_jan.csv"


def _recover_missing_value(sidecar_text: str, lines: list[str], row: int) -> str | None:
    """The published attack: try candidate values for one row and compare the file's hash with the sidecar."""
    stamp, true_value = lines[row].split(",")
    for k in range(0, 2000):
        cand = f"{k / 1000:.3f}"
        lines[row] = f"{stamp},{cand}"
        digest = hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest()
        if digest in sidecar_text:
            return cand
    lines[row] = f"{stamp},{true_value}"
    return None


def test_hash_attack_finds_nothing(tmp_path):
    src = tmp_path / "alice_smith_meter.csv"
    shutil.copy(ENERGY, src)
    raw = src.read_bytes().decode()
    assert raw.endswith("\n") and "\r" not in raw
    lines = raw.splitlines()
    series = load_series(src)
    out = tmp_path / "rel.csv"
    export_release(series, np.arange(5, 20), PrivacySettings(epsilon=1.0), out, ExportOptions("uniform"))
    text = (tmp_path / "rel.csv.json").read_text()
    # The attack works against a sidecar that carries the hash: sanity check of the attack itself.
    row = 11
    truth = lines[row].split(",")[1]
    leaky = text + hashlib.sha256(raw.encode()).hexdigest()
    assert _recover_missing_value(leaky, list(lines), row) == f"{float(truth):.3f}"
    # …and finds nothing in what we publish.
    assert _recover_missing_value(text, list(lines), row) is None
    assert not re.search(r"[0-9a-f]{32,}", text), "no digest of any kind in the public sidecar"
    assert "alice" not in text and "meter" not in text
    assert json.loads(text)["input"] == {"rows": series.n}


def test_input_name_only_when_asked(tmp_path, capsys):
    src = tmp_path / "bob_jones.csv"
    shutil.copy(ENERGY, src)
    out = tmp_path / "rel.csv"
    code, _, err = run(capsys, "export", str(src), "-o", str(out), "--scheme", "skip", "--epsilon", "1",
                       "--landmark-rows", "3,4")
    assert code == 0, err
    assert "bob_jones" not in (tmp_path / "rel.csv.json").read_text()
    code, _, err = run(capsys, "export", str(src), "-o", str(out), "--scheme", "skip", "--epsilon", "1",
                       "--landmark-rows", "3,4", "--force", "--include-input-name")
    assert code == 0, err
    side = json.loads((tmp_path / "rel.csv.json").read_text())
    assert side["input"] == {"rows": side["input"]["rows"], "name": "bob_jones.csv"}


def test_rows_read_with_dropped_duplicates_stay_in_the_private_ledger(capsys, tmp_path, monkeypatch):
    """Issue 44: the rows read from the file, exact duplicates and skipped rows included, are a fact about
    the private file no release protects: the sidecar has only the released row count, the ledger both."""
    from lmdk_gui.core.publish import ledger

    monkeypatch.setenv("LMDK_LEDGER", str(tmp_path / "private"))
    lines = ENERGY.read_text().splitlines()
    dup = [lines[0], *lines[1:101], lines[5], lines[9], lines[9], "2013-01-31 23:30:00,"]
    src = tmp_path / "dups.csv"
    src.write_text("\n".join(dup) + "\n")
    out = tmp_path / "rel.csv"
    code, _, err = run(capsys, "export", str(src), "-o", str(out), "--scheme", "uniform", "--epsilon", "1",
                       "--duplicates", "drop-exact", "--skip-missing")
    assert code == 0, err
    side = json.loads((tmp_path / "rel.csv.json").read_text())
    assert side["input"] == {"rows": 100} and side["rows_released"] == 100
    assert not re.search(r"\b10[34]\b", json.dumps(side))  # (neither the rows read nor those kept)
    [entry] = ledger.entries()
    assert entry["rows_read"] == 104 and entry["rows_released"] == 100
