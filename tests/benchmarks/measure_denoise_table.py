"""Issue 12's table and figure: raw vs denoised error per scheme on the three bundled real samples.

Run: ``python tests/benchmarks/measure_denoise_table.py [runs] [--figure PATH]`` (default 30 runs). For each
sample (energy: Δ = 5 and public bounds [0, 5] kWh, landmarks = lowest values by the threshold rule; GPS:
r = 100 m, stay-point rule; contacts: categorical, category rule) at ε = 1 and 0.1 and landmarks 0, 20, 40,
60, 80 % (the percentage the rule actually reached is printed), it runs
:func:`lmdk_gui.core.analysis.evaluation.evaluate` with ``denoise=True`` (the same denoiser as the preview and the
export, on the same releases) and prints a Markdown table: mean error raw → denoised over the runs. With
``--figure``, the energy sample at ε = 1 is drawn with the app's own evaluation chart: raw errors above,
denoised below (log axes).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from lmdk_gui.core.analysis.evaluation import THOUSANDS, evaluate, fmt_number  # noqa: E402
from lmdk_gui.core.data.loader import load_series  # noqa: E402
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, SCHEME_LABELS, PrivacySettings  # noqa: E402

SAMPLES = ROOT / "resources" / "samples"
PERCENTAGES = (0.0, 20.0, 40.0, 60.0, 80.0)
DATASETS = (
    ("energy (kWh)", "energy_hue_2013_jan.csv", {}, dict(sensitivity=5.0, bounds=(0.0, 5.0)), "threshold"),
    ("GPS (m)", "gps_bus_limerick.csv", {}, dict(radius_m=100.0), "stay"),
    ("contacts (mismatch)", "contacts_person1672_first.csv", {"kind": "categorical"}, {}, "category"),
)


def run_all(runs: int):
    out = []
    for label, name, load_kw, st_kw, rule in DATASETS:
        series = load_series(SAMPLES / name, **load_kw)
        for eps in (1.0, 0.1):
            t = time.perf_counter()
            res = evaluate(series, PrivacySettings(epsilon=eps, **st_kw), PERCENTAGES, rule=rule, runs=runs,
                           seed=0, denoise=True)
            print(f"{label} ε = {eps:g}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
            out.append((label, eps, res))
    return out


def markdown(results) -> str:
    head = "| data | ε | landmarks | " + " | ".join(SCHEME_LABELS[s] for s in ALL_SCHEMES) + " |"
    lines = [head, "|" + "---|" * (3 + len(ALL_SCHEMES))]
    for label, eps, res in results:
        for i, ls in enumerate(res.sets):
            pct = f"{ls.target:g} %" + (f" ({ls.percentage:.0f})" if abs(ls.percentage - ls.target) >= 0.5 else "")
            cells = []
            for j in range(len(res.schemes)):
                raw, den = res.mean[i, j], res.mean_denoised[i, j]
                cells.append("–" if raw != raw else f"{fmt_number(raw, 3)} → {fmt_number(den, 3)}")
            lines.append(f"| {label} | {eps:g} | {pct} | " + " | ".join(cells) + " |")
    return "\n".join(lines).replace(THOUSANDS, ",")


def figure(result, path: Path) -> None:
    from PySide6.QtGui import QImage, QPainter

    from lmdk_gui.ui.views.evalplot import render_png

    tmp = [path.with_suffix(".raw.png"), path.with_suffix(".den.png")]
    title = f"{result.name}, ε = {result.epsilon:g}, {result.runs_done} runs"
    render_png(result, tmp[0], size=(1100, 460), scale="log", title=title + ": raw release")
    render_png(result.denoised_result(), tmp[1], size=(1100, 460), scale="log",
               title=title + ": denoised (post-processing)")
    a, b = QImage(str(tmp[0])), QImage(str(tmp[1]))
    img = QImage(a.width(), a.height() + b.height(), QImage.Format.Format_RGB32)
    img.fill(0xFFFFFF)
    p = QPainter(img)
    p.drawImage(0, 0, a)
    p.drawImage(0, a.height(), b)
    p.end()
    img.save(str(path))
    for t in tmp:
        t.unlink()


if __name__ == "__main__":
    argv = sys.argv[1:]
    if "--figure" in argv:
        k = argv.index("--figure")
        argv = argv[:k] + argv[k + 2:]
    args = argv
    runs = int(args[0]) if args else 30
    results = run_all(runs)
    print(markdown(results))
    if "--figure" in sys.argv:
        fig = Path(sys.argv[sys.argv.index("--figure") + 1])
        figure(next(r for lab, e, r in results if lab.startswith("energy") and e == 1.0), fig)
        print(f"wrote {fig}", file=sys.stderr)
