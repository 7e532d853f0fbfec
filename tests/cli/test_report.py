"""``lmdk report`` (issue 45): the public report holds nothing but the release and its sidecar; the private
section appears only when asked; the page is self-contained; a headless browser draws it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from lmdk_gui.core.data.loader import load_series
from lmdk_gui.core.publish.report import ReportError, private_facts, read_release
from lmdk_gui.core.publish.report_html import render_report
from tests.cli.helpers import run
from tests.conftest import SAMPLES

NAME = "alice_meter_private"


@pytest.fixture
def known_input(tmp_path):
    """A series whose true values are written with six decimals (the release has three): any true value
    in a report would show up as its own text."""
    rng = np.random.default_rng(45)
    n = 400
    values = np.round(rng.uniform(100.0, 900.0, n), 6) + 0.000123  # never on the release's 0.001 grid
    times = pd.date_range("2021-03-01", periods=n, freq="h")
    path = tmp_path / f"{NAME}.csv"
    pd.DataFrame({"timestamp": times.strftime("%Y-%m-%d %H:%M:%S"), "kwh": [f"{v:.6f}" for v in values]}
                 ).to_csv(path, index=False)
    landmarks = [37, 38, 39, 120, 121, 250]
    return path, values, times, landmarks


def _export(capsys, src, out, landmarks, *extra):
    rows = ",".join(map(str, landmarks))
    code, _, err = run(capsys, "export", str(src), "-o", str(out), "--scheme", "uniform", "--epsilon", "2",
                       "--bounds", "0", "1000", "--sensitivity", "50", "--landmark-rows", rows, *extra)
    assert code == 0, err


def _visible_text(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", re.sub(r"<svg.*?</svg>", " ", html, flags=re.S))


@pytest.mark.parametrize("denoise", ["--denoise", "--no-denoise"])
def test_public_report_holds_nothing_from_the_input(capsys, tmp_path, known_input, denoise):
    src, values, times, landmarks = known_input
    out = tmp_path / "release.csv"
    _export(capsys, src, out, landmarks, denoise)
    report = tmp_path / "report.html"
    code, stdout, err = run(capsys, "report", str(out), "-o", str(report))
    assert code == 0, err
    assert "public" in stdout
    html = report.read_text(encoding="utf-8")
    # the release itself is there: its name, its first and last timestamps, the statement
    assert "release.csv" in html and "2021-03-01 00:00:00" in html
    assert json.loads((tmp_path / "release.csv.json").read_text())["statement"][:40] in html
    # no input file name
    assert NAME not in html and "alice" not in html.lower()
    # no true value, in any of the ways a number might be printed (4 digits: in the text, since the
    # figure's pixel coordinates have 4 digits of their own)
    text = _visible_text(html)
    for v in values:
        for full in (f"{v:.6f}", f"{v:.5f}", f"{v:.6g}"):
            assert full not in html, full
        assert "." not in f"{v:.4g}" or f"{v:.4g}" not in text  # (a whole number may be a count)
    # no landmark position: neither their timestamps nor their count
    for r in landmarks:
        assert times[r].strftime("%Y-%m-%d %H:%M:%S") not in html
    assert not re.search(rf"\b{len(landmarks)}\b", text)
    assert "PRIVATE" not in html and "do not publish" not in html.lower()
    assert "only: nothing else was read" in html


def test_private_section_only_when_asked_and_its_numbers(capsys, tmp_path, known_input):
    src, values, _, landmarks = known_input
    out = tmp_path / "release.csv"
    _export(capsys, src, out, landmarks, "--no-denoise")
    report = tmp_path / "private.html"
    rows = ",".join(map(str, landmarks))
    code, stdout, err = run(capsys, "report", str(out), "-o", str(report), "--private", str(src),
                            "--landmark-rows", rows)
    assert code == 0, err
    assert "PRIVATE" in stdout
    html = report.read_text(encoding="utf-8")
    assert "PRIVATE — DO NOT PUBLISH" in html and NAME in html
    released = pd.read_csv(out)["kwh"].to_numpy()
    mae = float(np.mean(np.abs(released - values)))
    yard = float(np.mean(np.abs(values - np.median(values))))
    assert f"mean {mae:.4g} kWh" in html
    assert f"{yard:.4g} kWh: the error of publishing the series' median" in html
    assert f"{len(landmarks)}; rule: none recorded" in html
    assert "1 release of this input, composed ε = 2" in html
    # the public report of the same release has none of it
    code, _, _ = run(capsys, "report", str(out), "-o", str(tmp_path / "public.html"))
    public = (tmp_path / "public.html").read_text(encoding="utf-8")
    assert code == 0 and "PRIVATE" not in public and f"{mae:.4g}" not in _visible_text(public)


def test_the_page_is_self_contained(capsys, tmp_path):
    out = tmp_path / "gps.csv"
    code, _, err = run(capsys, "export", str(SAMPLES / "gps_bus_limerick.csv"), "-o", str(out), "--scheme",
                       "uniform", "--epsilon", "5", "--radius", "50", "--landmark-rows", "10-20")
    assert code == 0, err
    code, _, err = run(capsys, "report", str(out), "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<svg" in html and "latitude" in html and "longitude" in html
    without_ns = html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    for fetch in ("http:", "https:", " src=", "href=", "@import", "url("):
        assert fetch not in without_ns, fetch


def test_sidecar_fields_are_read_defensively(tmp_path, capsys, known_input):
    src, _, _, landmarks = known_input
    out = tmp_path / "release.csv"
    _export(capsys, src, out, landmarks, "--no-denoise", "--include-budget")
    side = tmp_path / "release.csv.json"
    doc = json.loads(side.read_text())
    for key in ("landmark_sum", "noise_backend", "created", "precision", "post_processing", "statement"):
        doc.pop(key)
    doc["bounds_from_data"] = True
    doc["some_future_field"] = {"x": 1}
    side.write_text(json.dumps(doc))
    rel = read_release(out)
    assert rel.budgets is not None and rel.raw
    html = render_report(rel)
    assert "taken from the data itself" in html and "Landmark-sum check" in html
    assert "Noise</th>" not in html  # a missing field is left out, not shown as "None"
    assert "None" not in _visible_text(html)
    # the epsilon column makes the band per event, and the page says that column shows the landmarks
    assert "each event's own budget" in html and "they show where the landmarks are" in html


def test_categorical_report_draws_steps(tmp_path, capsys):
    path = tmp_path / "moods.csv"
    times = pd.date_range("2022-01-01", periods=60, freq="D").strftime("%Y-%m-%d")
    labels = ["calm", "busy", "=tired"] * 20
    pd.DataFrame({"date": times, "mood": labels}).to_csv(path, index=False)
    out = tmp_path / "release.csv"
    code, _, err = run(capsys, "export", str(path), "-o", str(out), "--scheme", "uniform", "--epsilon", "3",
                       "--categories", "calm,busy,=tired", "--no-denoise")
    assert code == 0, err
    rel = read_release(out)
    assert rel.labels[:3] == ("calm", "busy", "=tired") and (rel.values >= 0).all()
    html = render_report(rel)
    assert "released categories over time" in html and "probability at most" in html


def test_errors_are_one_line(tmp_path, capsys, known_input):
    src, _, _, landmarks = known_input
    out = tmp_path / "release.csv"
    code, _, err = run(capsys, "report", str(out), "-o", str(tmp_path / "r.html"))
    assert code == 2 and "no sidecar" in err and len(err.strip().splitlines()) == 1
    _export(capsys, src, out, landmarks)
    (tmp_path / "r.html").write_text("old")
    code, _, err = run(capsys, "report", str(out), "-o", str(tmp_path / "r.html"))
    assert code == 2 and "--force" in err and (tmp_path / "r.html").read_text() == "old"
    code, _, err = run(capsys, "report", str(out), "-o", str(tmp_path / "r.pdf"))
    assert code == 2 and "HTML page" in err and not (tmp_path / "r.pdf").exists()
    # another input than the release's is refused, naming it
    code, _, err = run(capsys, "report", str(out), "-o", str(tmp_path / "p.html"), "--private",
                       str(SAMPLES / "energy_hue_2013_jan.csv"))
    assert code == 2 and "not the input of this release" in err and not (tmp_path / "p.html").exists()
    with pytest.raises(ReportError, match="not the input"):
        private_facts(read_release(out), load_series(SAMPLES / "energy_hue_2013_jan.csv"), None)


# ------------------------------------------------------------------------ a real browser draws it
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
                None)


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium) to render the page")
@pytest.mark.parametrize("sample, options", [
    ("energy_hue_2013_jan.csv", ("--bounds", "0", "7", "--sensitivity", "2", "--epsilon", "2")),
    ("gps_bus_limerick.csv", ("--radius", "50", "--epsilon", "5")),
])
def test_headless_chromium_renders_the_report(capsys, tmp_path, sample, options):
    out = tmp_path / "release.csv"
    code, _, err = run(capsys, "export", str(SAMPLES / sample), "-o", str(out), "--scheme", "uniform",
                       "--landmark-rows", "10-20", *options)
    assert code == 0, err
    report = tmp_path / "report.html"
    code, _, err = run(capsys, "report", str(out), "-o", str(report), "--private", str(SAMPLES / sample))
    assert code == 0, err
    shot = tmp_path / "shot.png"
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--window-size=1000,1800", f"--screenshot={shot}", report.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000  # a drawn page, not a blank one


def test_a_damaged_release_names_row_and_column(tmp_path, capsys, known_input):
    src, _, _, landmarks = known_input
    out = tmp_path / "release.csv"
    _export(capsys, src, out, landmarks)
    lines = out.read_text().splitlines()
    lines[2] = lines[2].split(",")[0] + ",abc"
    out.write_text("\n".join(lines) + "\n")
    code, _, err = run(capsys, "report", str(out), "-o", str(tmp_path / "r.html"))
    assert code == 2 and "row 3, column 'kwh': expected a number" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.html").exists()
