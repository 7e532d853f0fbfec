"""``lmdk compare``: every scheme side by side on one series and landmark set.

With ``--dummies GENERATOR`` each scheme is shown twice: on the landmarks with ε, and hidden among dummy
landmarks (thesis §4.2) on ``L'`` with ``ε − ε_sel``. The "with dummies" line's landmark sum and verdict
are checked against ``L'`` and ``ε − ε_sel``; its MAE averages runs that each draw a new selection and new
noise (the "without" line's runs use the same noise), as in the thesis' Figure 5.6.

``--denoise both`` (default) also denoises every release (post-processing of the released values, budgets
and public settings, :mod:`lmdk_gui.core.denoise`) and reports ``mae_denoised`` next to ``mae``; ``on``
shows only the denoised error in the table (the JSON keeps both); ``off`` skips it.
"""

from __future__ import annotations

import argparse
import json

from ..core.metrics import unit_label
from ..core.preview import NoiseCache, Snapshot, compute_average, compute_preview
from ..core.release import normalize_landmarks
from ..core.settings import ALL_SCHEMES, SCHEME_LABELS
from .common import (
    add_dummy_options,
    add_landmark_options,
    add_privacy_options,
    add_selection_options,
    dummy_settings,
    load_selection,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare the schemes' budgets and errors",
                       description="For uniform, skip, adaptive, balanced and the event/user baselines: landmark sum and "
                       "verdict, mean ε_t, share of approximated events, and MAE averaged over R runs; with "
                       "--dummies, each scheme also with dummy landmarks.")
    add_selection_options(p)
    add_landmark_options(p)
    add_privacy_options(p)
    add_dummy_options(p)
    p.add_argument("--runs", type=int, default=20, metavar="R", help="runs to average the MAE over (default 20)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the simulated noise (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--denoise", choices=("both", "on", "off"), default="both",
                   help="error of the denoised releases (post-processing; changes no guarantee) next to the raw "
                   "error (both, default), instead of it in the table (on), or not at all (off)")
    p.set_defaults(run=run)


def _row(r, stats, epsilon: float, denoise: bool = True) -> dict:
    row = {
        "landmark_sum": r.guarantee.worst,
        "epsilon": epsilon,
        "guarantee_holds": r.guarantee.holds,
        "mean_epsilon_t": r.mean_budget,
        "approximated_share": r.approximated_share,
        "mae": stats.mean,
        "mae_std": stats.std,
        "runs": stats.runs,
    }
    if denoise:
        row["mae_denoised"] = stats.mean_denoised
        row["mae_denoised_std"] = stats.std_denoised
    return row


def compare(sel, runs: int, seed: int, dummies=None) -> list[dict]:
    """One dict per scheme; with ``dummies``, each also has ``"with_dummies"`` (same keys, ``epsilon`` being
    the release's ε − ε_sel the check ran against). Use :func:`compare_with_dummies` for the selection too."""
    return compare_with_dummies(sel, runs, seed, dummies)[0]


def compare_with_dummies(sel, runs: int, seed: int, dummies=None) -> tuple[list[dict], dict | None]:
    """The window's preview and average (:func:`~lmdk_gui.core.preview.compute_preview` /
    :func:`~lmdk_gui.core.preview.compute_average`) on seed ``seed`` and dummy draw 0."""
    snap = Snapshot(sel.series, normalize_landmarks(sel.landmarks, sel.series.n), sel.settings, seed, runs,
                    dummies=dummies)
    preview = compute_preview(snap, NoiseCache())
    assert preview is not None  # never cancelled here
    if preview.dummy_error:  # the generator refuses (Optimal beyond its limit): one clear message
        raise ValueError(preview.dummy_error)
    average = compute_average(snap, preview.options)
    assert average is not None
    info = None
    chosen = preview.selection
    if chosen is not None:
        assert dummies is not None
        info = {**dummies.to_dict(), "epsilon_selection": chosen.epsilon_selection,
                "epsilon_release": chosen.epsilon_remaining, "dummies_this_seed": int(chosen.dummies.size),
                "landmarks_with_dummies_this_seed": int(chosen.landmarks.size),
                "mean_landmarks_with_dummies": average.dummy_size}
    rows = []
    dn = sel.settings.denoise
    for s in ALL_SCHEMES:
        row = {"scheme": s, **_row(preview.plain[s].release, average.plain[s], sel.settings.epsilon, dn)}
        if chosen is not None:
            row["with_dummies"] = _row(preview.preview[s].release, average.average[s], chosen.epsilon_remaining,
                                       dn)
        rows.append(row)
    return rows, info


def run(args: argparse.Namespace) -> int:
    if args.runs < 1:
        raise ValueError("--runs must be at least 1")
    dummies = dummy_settings(args)
    sel = load_selection(args)
    sel.settings = sel.settings.with_(denoise=args.denoise != "off")
    rows, info = compare_with_dummies(sel, args.runs, args.seed, dummies)
    unit = unit_label(sel.series)
    if args.json:
        doc = {"input": args.input, "rows": sel.series.n, "kind": sel.series.kind,
               "landmarks": int(len(sel.landmarks)), "epsilon": sel.settings.epsilon,
               "mae_unit": unit, "schemes": rows}
        if info is not None:
            doc["dummies"] = info
        print(json.dumps(doc, indent=2))
        return 0
    n = sel.series.n
    print(f"{args.input}: {n} events, {len(sel.landmarks)} landmarks "
          f"({100 * len(sel.landmarks) / max(n, 1):.1f}%), ε = {sel.settings.epsilon:g}, MAE over {args.runs} runs")
    if info is not None:
        print(f"dummy landmarks: {info['generator']}, {info['utility']} utility, ε_sel = "
              f"{info['epsilon_selection']:.4g} ({100 * info['share']:g}% of ε); the '+ dummies' lines use L' and "
              f"ε − ε_sel = {info['epsilon_release']:.6g}; |L'| = {info['landmarks_with_dummies_this_seed']} "
              f"with this seed, {info['mean_landmarks_with_dummies']:.1f} on average over the runs")
    if info is None:  # the table as it always was
        head = (f"{'scheme':<12} {'landmark sum':>13} {'verdict':>8} {'mean ε_t':>10} {'approx.':>8}"
                f"{_error_head(args.denoise, unit)}")
        print(head)
        print("-" * len(head))
        for r in rows:
            verdict = "pass" if r["guarantee_holds"] else "FAIL"
            print(f"{SCHEME_LABELS[r['scheme']]:<12} {r['landmark_sum']:>13.6g} {verdict:>8} "
                  f"{r['mean_epsilon_t']:>10.4g} {100 * r['approximated_share']:>7.1f}%{_errors(args.denoise, r)}")
        return 0
    head = (f"{'scheme':<22} {'landmark sum':>13} {'vs ε':>9} {'verdict':>8} {'mean ε_t':>10} {'approx.':>8}"
            f"{_error_head(args.denoise, unit)}")
    print(head)
    print("-" * len(head))

    def line(label: str, r: dict) -> None:
        ok = r["guarantee_holds"]
        vs = f"{'≤' if ok else '>'} {r['epsilon']:.4g}"
        print(f"{label:<22} {r['landmark_sum']:>13.6g} {vs:>9} {'pass' if ok else 'FAIL':>8} "
              f"{r['mean_epsilon_t']:>10.4g} {100 * r['approximated_share']:>7.1f}%{_errors(args.denoise, r)}")

    for r in rows:
        line(SCHEME_LABELS[r["scheme"]], r)
        line(f"  {SCHEME_LABELS[r['scheme']]} + dummies", r["with_dummies"])
    return 0


def _error_head(mode: str, unit: str) -> str:
    raw = f" {'MAE (' + unit + ')':>16}"
    den = f" {'denoised (' + unit + ')':>18}"
    return {"off": raw, "on": den, "both": raw + den}[mode]


def _errors(mode: str, r: dict) -> str:
    raw = f" {r['mae']:>16.6g}"
    if mode == "off":
        return raw
    den = f" {r['mae_denoised']:>18.6g}"
    return den if mode == "on" else raw + den
