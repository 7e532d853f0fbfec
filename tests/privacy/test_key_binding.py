"""Issue 42, findings 2, 4 and 6: each attack replayed (each of these failed before the fix).

2 a key reused on other data, landmarks or settings reused its noise exactly · 4 the ledger keyed on file
bytes (a CRLF copy was a new input) and printed its note even when the export then failed · 6 a zero-padded
16-bit key passed the digit count. The batch side (master keys, the batch's ledger entries) is in
tests/cli/test_batch_keys.py.
"""

from __future__ import annotations

import json
import secrets

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.kernel.settings import PrivacySettings
from lmdk_gui.core.publish import ledger
from lmdk_gui.core.publish.batch import BatchError, parse_key
from lmdk_gui.core.publish.export import (
    ExportError,
    ExportOptions,
    export_key,
    export_release,
    new_export_key,
)
from lmdk_gui.core.publish.keys import estimated_bits, key_weakness, series_digest
from tests.cli.helpers import run
from tests.keys import test_key

#: finding 6: 64 digits that pass a digit count but hold 16 bits
WEAK = "0" * 59 + "0bde3"


def _write(path, values, *, crlf=False, start="2021-03-01"):
    times = pd.date_range(start, periods=len(values), freq="h").strftime("%Y-%m-%d %H:%M:%S")
    nl = "\r\n" if crlf else "\n"
    path.write_bytes(("timestamp,kwh" + nl + "".join(f"{t},{v:.3f}{nl}" for t, v in zip(times, values, strict=True)))
                     .encode())
    return path


@pytest.fixture
def values():
    return np.round(np.random.default_rng(4).gamma(2.0, 0.5, 400), 3)


def _raw(tmp_path, name, src, landmarks, key, *, scheme="uniform", epsilon=1.0):
    out = tmp_path / name
    export_release(load_series(src), landmarks, PrivacySettings(epsilon=epsilon), out,
                   ExportOptions(scheme, seed=key, denoise=False))
    return out, pd.read_csv(out)["kwh"].to_numpy()


# ------------------------------------------------------------------------ finding 2: the same key, reused
def test_a_corrected_value_gets_independent_noise_not_the_true_difference(tmp_path, values):
    key = test_key(42)
    fixed = values.copy()
    fixed[100] += 1.234  # the one corrected reading
    _, a = _raw(tmp_path, "a.csv", _write(tmp_path / "in.csv", values), [10, 11], key)
    _, b = _raw(tmp_path, "b.csv", _write(tmp_path / "fixed.csv", fixed), [10, 11], key)
    others = np.arange(values.size) != 100
    # Before: the releases differed by exactly the true difference (0 everywhere but event 100).
    assert np.mean(a[others] == b[others]) < 0.05
    assert np.corrcoef(a - values, b - fixed)[0, 1] < 0.3  # the two noises are unrelated


def test_the_same_release_again_is_bit_identical(tmp_path, values):
    src = _write(tmp_path / "in.csv", values)
    key = test_key(43)
    a, _ = _raw(tmp_path, "a.csv", src, [10, 11], key, scheme="adaptive")
    b, _ = _raw(tmp_path, "b.csv", src, [10, 11], key, scheme="adaptive")
    assert a.read_bytes() == b.read_bytes()
    # the same data with other line endings is the same release too (the key is bound to the loaded series)
    c, _ = _raw(tmp_path, "c.csv", _write(tmp_path / "crlf.csv", values, crlf=True), [10, 11], key, scheme="adaptive")
    assert c.read_bytes() == a.read_bytes()


@pytest.mark.parametrize("change", ["landmark moved", "epsilon", "scheme"])
def test_other_landmarks_or_settings_get_independent_noise(tmp_path, values, change):
    src = _write(tmp_path / "in.csv", values)
    key = test_key(44)
    _, a = _raw(tmp_path, "a.csv", src, [10, 11, 200], key)
    lm, eps, scheme = [10, 11, 201], 1.0, "uniform"
    if change == "epsilon":
        lm, eps = [10, 11, 200], 1.0 + 2**-20  # the same budgets to the eye; before: noise scaled, not redrawn
    elif change == "scheme":
        lm, scheme = [10, 11, 200], "skip"
    _, b = _raw(tmp_path, "b.csv", src, lm, key, scheme=scheme, epsilon=eps)
    fresh = np.ones(values.size, dtype=bool)
    fresh[[10, 11, 200, 201]] = False
    assert np.mean(a[fresh] == b[fresh]) < 0.05
    assert abs(np.corrcoef(a[fresh] - values[fresh], b[fresh] - values[fresh])[0, 1]) < 0.3


def test_the_same_keyed_release_again_spends_nothing(capsys, tmp_path, values):
    src = _write(tmp_path / "in.csv", values)
    base = ["export", str(src), "--scheme", "skip", "--epsilon", "1", "--landmark-rows", "3-9", "--seed", test_key(46)]
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "a.csv"))
    assert code == 0, err
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "b.csv"), "--no-denoise")  # raw: the same release
    assert code == 0 and "sequential composition" not in err and "same release as" in err
    first, again = ledger.entries()
    assert again["reexport_of"] == first["id"] and ledger.composition(first["input_digest"]) == (1, 1.0)
    code, _, err = run(capsys, *base[:-1], test_key(47), "-o", str(tmp_path / "c.csv"))  # another key: new noise
    assert code == 0 and "released 1 time before" in err


def test_denoising_does_not_change_the_noise(tmp_path, values):
    """Denoised or raw is post-processing of one release: the same key gives the same raw release either way
    (the digest leaves denoise out), so writing both costs no extra ε."""
    src = _write(tmp_path / "in.csv", values)
    s = load_series(src)
    key = test_key(45)
    raw = export_release(s, [5], PrivacySettings(), tmp_path / "raw.csv", ExportOptions("uniform", seed=key,
                                                                                        denoise=False))
    den = export_release(s, [5], PrivacySettings(), tmp_path / "den.csv", ExportOptions("uniform", seed=key))
    assert raw.post_processing is None and den.post_processing is not None
    again = export_release(s, [5], PrivacySettings(denoise=False), tmp_path / "again.csv",
                           ExportOptions("uniform", seed=key, denoise=False))
    assert again.path.read_bytes() == raw.path.read_bytes()


# ------------------------------------------------------------------------ finding 6: low-entropy keys
@pytest.mark.parametrize("weak", [WEAK, "deadbeef" * 8, "0123456789abcdef" * 4, "01" * 32,
                                  "0" * 12 + test_key(1)[12:], secrets.token_hex(16)])
def test_structured_or_short_keys_are_refused_by_the_core(tmp_path, values, weak):
    s = load_series(_write(tmp_path / "in.csv", values))
    with pytest.raises(ExportError) as e:
        export_release(s, [3], PrivacySettings(), tmp_path / "r.csv", ExportOptions("uniform", seed=weak))
    assert "\n" not in str(e.value) and "--new-key" in str(e.value)
    with pytest.raises(ExportError):
        export_key(bytes.fromhex(weak))
    with pytest.raises(BatchError, match="seed key"):
        parse_key(weak)
    assert not (tmp_path / "r.csv").exists()


def test_the_zero_padded_key_is_refused_by_every_command(capsys, tmp_path, values):
    src = _write(tmp_path / "in.csv", values)
    base = ["export", str(src), "--scheme", "uniform", "--epsilon", "1", "-o", str(tmp_path / "a.csv")]
    code, _, err = run(capsys, *base, "--seed", WEAK)
    assert code == 2 and err.count("\n") == 1 and "--seed: " in err and "structured" in err
    (tmp_path / "k.txt").write_text(WEAK + "\n")
    code, _, err = run(capsys, *base, "--seed-file", str(tmp_path / "k.txt"))
    assert code == 2 and err.count("\n") == 1 and "--seed-file: " in err
    table = tmp_path / "table.csv"
    table.write_text("id,timestamp,kwh\nh1,2021-01-01 00:00:00,1\n")
    code, _, err = run(capsys, "batch", str(table), "-o", str(tmp_path / "o"), "--id-col", "id", "--scheme",
                       "uniform", "--epsilon", "1", "--seed", WEAK)
    assert code == 2 and err.count("\n") == 1 and "--seed: " in err and "structured" in err
    assert not (tmp_path / "a.csv").exists() and not (tmp_path / "o").exists()


def test_generated_keys_always_pass_and_random_keys_have_margin():
    for _ in range(2000):
        k = new_export_key()
        assert len(k) == 64 and export_key(k) == bytes.fromhex(k)
    rng = np.random.default_rng(7)
    bits = [estimated_bits(rng.bytes(32).hex()) for _ in range(2000)]
    assert min(bits) > 190  # far above the 128 bits required: a random key is never refused for its spread
    assert estimated_bits(WEAK) < 40 and key_weakness(bytes.fromhex(WEAK)) is not None


# ------------------------------------------------------------------------ finding 4: the ledger's inputs
def test_a_crlf_copy_is_the_same_input_for_the_ledger(capsys, tmp_path, values):
    lf = _write(tmp_path / "lf.csv", values)
    crlf = _write(tmp_path / "crlf.csv", values, crlf=True)
    assert lf.read_bytes() != crlf.read_bytes()
    assert series_digest(load_series(lf)) == series_digest(load_series(crlf))
    base = ["--scheme", "uniform", "--epsilon", "1", "--landmark-rows", "3"]
    code, _, err = run(capsys, "export", str(lf), "-o", str(tmp_path / "a.csv"), *base)
    assert code == 0 and "sequential composition" not in err
    code, _, err = run(capsys, "export", str(crlf), "-o", str(tmp_path / "b.csv"), *base)
    assert code == 0, err
    assert "lmdk: note: this input has been released 1 time before (total ε = 1)" in err and "faces ε = 2" in err
    a, b = ledger.entries()
    assert a["input_digest"] == b["input_digest"] == series_digest(load_series(lf))
    for side in ("a.csv.json", "b.csv.json"):  # the sidecar is public: no digest, no hash, no name
        text = (tmp_path / side).read_text()
        assert a["input_digest"] not in text and a["input_sha256"] not in text and "lf.csv" not in text
    # a corrected value is another series (no note), and the note counts re-exports of neither
    fixed = values.copy()
    fixed[0] += 1
    code, _, err = run(capsys, "export", str(_write(tmp_path / "fixed.csv", fixed)), "-o", str(tmp_path / "c.csv"),
                       *base)
    assert code == 0 and "sequential composition" not in err


def test_the_note_is_printed_only_when_the_release_is_written(capsys, tmp_path, values):
    src = _write(tmp_path / "in.csv", values)
    base = ["export", str(src), "--scheme", "uniform", "--epsilon", "1", "--landmark-rows", "3"]
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "a.csv"))
    assert code == 0, err
    (tmp_path / "b.csv").write_text("mine")
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "b.csv"))  # refused: it exists, no --force
    assert code == 2 and "already exists" in err and "released" not in err and "composition" not in err
    assert len(ledger.entries()) == 1
    res = export_release(load_series(src), [3], PrivacySettings(), tmp_path / "c.csv", ExportOptions("uniform"))
    assert res.prior_releases == (1, 1.0) and "released 1 time before" in res.composition


def test_reexport_of_an_entry_from_before_key_binding_is_refused(capsys, tmp_path, values):
    src = _write(tmp_path / "in.csv", values)
    code, _, err = run(capsys, "export", str(src), "-o", str(tmp_path / "a.csv"), "--scheme", "uniform",
                       "--epsilon", "1", "--seed", test_key(3))
    assert code == 0, err
    path = ledger.ledger_path()
    old = json.loads(path.read_text().splitlines()[0])
    for k in ("key_binding", "input_digest"):
        old.pop(k)
    path.write_text(json.dumps(old) + "\n")
    code, _, err = run(capsys, "ledger", "reexport", old["id"], "-o", str(tmp_path / "b.csv"))
    assert code == 2 and err.count("\n") == 1 and "before export keys were bound" in err
    assert not (tmp_path / "b.csv").exists()


def test_the_ledger_index_follows_appends_and_clears(tmp_path, values):
    """composition() reads only what was appended since its last look, and starts again after a clear."""
    s = load_series(_write(tmp_path / "in.csv", values))
    digest = series_digest(s)
    export_release(s, [3], PrivacySettings(), tmp_path / "a.csv", ExportOptions("uniform"))
    assert ledger.composition(digest) == (1, 1.0)
    with ledger.ledger_path().open("a") as f:  # another process's release of the same data, and a torn line
        f.write(json.dumps({"id": "abc", "input_digest": digest, "epsilon": 0.5}) + "\n" + '{"id": "to')
    assert ledger.composition(digest) == (2, 1.5)
    ledger.clear()
    assert ledger.composition(digest) == (0, 0.0)
    res = export_release(s, [3], PrivacySettings(), tmp_path / "b.csv", ExportOptions("uniform"))
    assert res.composition is None and ledger.composition(digest) == (1, 1.0)
