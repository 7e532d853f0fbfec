"""``lmdk compare``: every scheme side by side on one series and landmark set."""

from __future__ import annotations

import argparse
import json

from ..core.metrics import mae_over_runs, unit_label
from ..core.noise import UnitNoise
from ..core.release import compute_all
from ..core.settings import ALL_SCHEMES, SCHEME_LABELS
from .common import add_landmark_options, add_privacy_options, add_selection_options, load_selection


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare the schemes' budgets and errors",
                       description="For uniform, skip, adaptive and the event/user baselines: landmark sum and "
                       "verdict, mean ε_t, share of approximated events, and MAE averaged over R runs.")
    add_selection_options(p)
    add_landmark_options(p)
    add_privacy_options(p)
    p.add_argument("--runs", type=int, default=20, metavar="R", help="runs to average the MAE over (default 20)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the simulated noise (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(run=run)


def compare(sel, runs: int, seed: int) -> list[dict]:
    releases = compute_all(sel.series, sel.landmarks, sel.settings, UnitNoise(sel.series.n, seed))
    stats = mae_over_runs(sel.series, sel.landmarks, sel.settings, runs=runs, seed=seed)
    rows = []
    for s in ALL_SCHEMES:
        r = releases[s]
        rows.append({
            "scheme": s,
            "landmark_sum": r.guarantee.worst,
            "epsilon": sel.settings.epsilon,
            "guarantee_holds": r.guarantee.holds,
            "mean_epsilon_t": r.mean_budget,
            "approximated_share": r.approximated_share,
            "mae": stats[s].mean,
            "mae_std": stats[s].std,
            "runs": stats[s].runs,
        })
    return rows


def run(args: argparse.Namespace) -> int:
    if args.runs < 1:
        raise ValueError("--runs must be at least 1")
    sel = load_selection(args)
    rows = compare(sel, args.runs, args.seed)
    unit = unit_label(sel.series)
    if args.json:
        print(json.dumps({"input": args.input, "rows": sel.series.n, "kind": sel.series.kind,
                          "landmarks": int(len(sel.landmarks)), "epsilon": sel.settings.epsilon,
                          "mae_unit": unit, "schemes": rows}, indent=2))
        return 0
    n = sel.series.n
    print(f"{args.input}: {n} events, {len(sel.landmarks)} landmarks "
          f"({100 * len(sel.landmarks) / max(n, 1):.1f}%), ε = {sel.settings.epsilon:g}, MAE over {args.runs} runs")
    head = f"{'scheme':<12} {'landmark sum':>13} {'verdict':>8} {'mean ε_t':>10} {'approx.':>8} {'MAE (' + unit + ')':>16}"
    print(head)
    print("-" * len(head))
    for r in rows:
        verdict = "pass" if r["guarantee_holds"] else "FAIL"
        print(f"{SCHEME_LABELS[r['scheme']]:<12} {r['landmark_sum']:>13.6g} {verdict:>8} "
              f"{r['mean_epsilon_t']:>10.4g} {100 * r['approximated_share']:>7.1f}% {r['mae']:>16.6g}")
    return 0
