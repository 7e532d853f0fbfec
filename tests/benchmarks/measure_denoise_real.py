"""Issue 12 §2: raw vs denoised error of preview releases on the bundled real data (not a test).

Run: ``python tests/benchmarks/measure_denoise_real.py [runs]`` — prints a Markdown table. Releases are the
preview's (``compute_release`` on ``UnitNoise(n, seed)``, seeds 1..runs), landmarks ≈ 20 % from a suggestion
rule (energy: lowest values, ``threshold``; GPS: ``stay`` points of ≥ 2 min; contacts: ``category``,
which reaches only 1.6 %), and the bundled 34-contact sample with every 5th event a landmark. The denoiser sees only what :func:`lmdk_gui.core.analysis.denoise.denoise` takes. For numeric series two ablations are printed as well:
``naive`` clips, smooths with the unclipped Laplace variance and clips again; ``raw-rts`` smooths the
unclipped values and clips the result.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lmdk_gui.core.analysis.denoise import denoise  # noqa: E402
from lmdk_gui.core.analysis.metrics import mae  # noqa: E402
from lmdk_gui.core.analysis.suggestions import rule_for_percentage  # noqa: E402
from lmdk_gui.core.data.loader import load_series  # noqa: E402
from lmdk_gui.core.engine.pipeline import compute_release  # noqa: E402
from lmdk_gui.core.kernel.noise import UnitNoise  # noqa: E402
from lmdk_gui.core.kernel.settings import PrivacySettings  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
SCHEMES = ("uniform", "skip", "adaptive", "event")


def cases():
    energy = load_series(DATA / "energy_hue_residential1_2013.csv", duplicates="first")
    gps = load_series(DATA / "gps_bus_limerick_2019-02-18.csv", duplicates="first")
    contacts = load_series(DATA / "contacts_highschool2012_person1672.csv", value_col="class_i",
                           kind="categorical", duplicates="first")
    lm_e = rule_for_percentage(energy, "threshold", 20)[1]
    lm_g = rule_for_percentage(gps, "stay", 20, duration_min=2.0)[1]  # bus stops; 30 min gives one 38 % block
    lm_c = rule_for_percentage(contacts, "category", 20)[1]
    sample = load_series(DATA.parent.parent / "resources" / "samples" / "contacts_person1672.csv",
                         kind="categorical", duplicates="first")  # 34 contacts: the stay-or-jump chain
    lm_s = np.arange(0, sample.n, 5)
    for eps in (1.0, 0.2):
        for sens in (5.0, 1.0):
            yield f"energy Δ={sens:g}", energy, lm_e, PrivacySettings(epsilon=eps, sensitivity=sens, bounds=(0.0, 5.0))
        yield "GPS r=100 m", gps, lm_g, PrivacySettings(epsilon=eps, radius_m=100.0)
        yield "contacts", contacts, lm_c, PrivacySettings(epsilon=eps)
        yield "contact ids (k=34)", sample, lm_s, PrivacySettings(epsilon=eps)


def denoised_release(rel, settings, variant="default"):
    kw = dict(sensitivity=settings.sensitivity, bounds=settings.bounds, radius_m=settings.radius_m,
              n_categories=len(rel.categories) if rel.categories is not None else None)
    y = rel.values
    if rel.kind == "numeric" and variant != "default":
        lo, hi = settings.bounds
        src = np.clip(y, lo, hi) if variant == "naive" else y
        d = denoise(rel.kind, src, rel.budgets, rel.approximated, **{**kw, "bounds": None})
        return replace(rel, values=np.clip(d.values, lo, hi)), d
    d = denoise(rel.kind, y, rel.budgets, rel.approximated, **kw)
    return replace(rel, values=d.values), d


def main(runs: int) -> None:
    print(f"| data | ε | scheme | landmarks | raw | denoised | ratio | naive | raw-rts | model |  ({runs} runs)")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, series, lm, settings in cases():
        for scheme in SCHEMES:
            acc: dict[str, list[float]] = defaultdict(list)
            models: Counter[str] = Counter()
            for seed in range(1, runs + 1):
                rel = compute_release(series, lm, settings, scheme, UnitNoise(series.n, seed))
                acc["raw"].append(mae(series, rel, settings))
                drel, d = denoised_release(rel, settings)
                acc["den"].append(mae(series, drel, settings))
                models[d.params.get("model", d.method)] += 1
                if series.kind == "numeric":
                    for v in ("naive", "raw-rts"):
                        acc[v].append(mae(series, denoised_release(rel, settings, v)[0], settings))
            m = {k: float(np.mean(v)) for k, v in acc.items()}
            extra = [f"{m[v]:.3g}" if v in m else "" for v in ("naive", "raw-rts")]
            model = ", ".join(f"{k}×{c}" for k, c in models.most_common())
            print(f"| {name} | {settings.epsilon:g} | {scheme} | {100 * lm.size / series.n:.0f} % | {m['raw']:.3g} "
                  f"| {m['den']:.3g} | {m['raw'] / m['den']:.1f}× | {' | '.join(extra)} | {model} |", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
