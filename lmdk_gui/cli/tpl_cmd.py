"""``lmdk tpl``: temporal privacy loss of every scheme under temporal correlation (DESIGN §7).

Computes the preview releases of every scheme on common random numbers (Adaptive's budgets depend on
its sampling, hence ``--seed``), then the landmark temporal privacy loss (thesis Definition 10) of each at
every event, under a Markov chain: the thesis' Laplacian-smoothed matrix (``--s``, ``--states``) or a
user-given matrix file (``--matrix``).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from ..argtypes import non_negative, path_arg
from ..core.analysis.correlation import (
    CorrelationModel,
    landmark_tpl_for_schemes,
    no_correlation_value,
    read_matrix_file,
)
from ..core.analysis.metrics import share
from ..core.engine.pipeline import compute_all
from ..core.kernel.noise import UnitNoise
from ..core.kernel.settings import ALL_SCHEMES, SCHEME_LABELS
from ..core.publish.writers import AtomicFile
from . import UsageError
from .common import (
    add_landmark_options,
    add_privacy_options,
    check_outputs,
    load_selection,
    seed_type,
    series_command,
)

#: --states beyond this would spend seconds building the loss function (its candidates grow as m³)
MAX_STATES = 100


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = series_command(
        sub, "tpl", run, help="temporal privacy loss of the schemes under temporal correlation",
        description="For uniform, skip, adaptive and the event/user baselines: the maximum over events of "
        "the landmark temporal privacy loss (thesis Definition 10) under a Markov chain, next to ε and to "
        "the same maximum without correlation (the landmark sum).")
    add_landmark_options(p)
    add_privacy_options(p)
    g = p.add_argument_group("temporal correlation (one of --s or --matrix)")
    c = g.add_mutually_exclusive_group(required=True)
    c.add_argument("--s", type=non_negative, metavar="S",
                   help="Laplacian-smoothed chain P_ij = (I_ij + s)/(1 + m·s): smaller is stronger "
                   "(thesis: 1 weak, 0.1 moderate, 0.01 strong)")
    c.add_argument("--matrix", type=path_arg, metavar="FILE",
                   help="row-stochastic matrix: CSV of numbers (both directions), or JSON "
                   '{"backward": rows, "forward": rows}')
    g.add_argument("--states", type=int, default=None, metavar="M",
                   help="number of states of the smoothed chain (default 2)")
    p.add_argument("--seed", type=seed_type, default=0, metavar="N",
                   help="seed of the preview noise (Adaptive's sampling; default 0)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--curve", type=path_arg, metavar="FILE",
                   help="write the landmark TPL of every event as CSV: row,uniform,skip,adaptive,event,user")
    p.add_argument("--force", action="store_true", help="overwrite the --curve FILE if it exists")


def build_model(args: argparse.Namespace) -> CorrelationModel:
    if args.matrix:
        if args.states is not None:
            raise UsageError("--states applies to the smoothed chain (--s), not to --matrix")
        return read_matrix_file(args.matrix)
    states = 2 if args.states is None else args.states
    if states < 2:
        raise UsageError(f"--states must be at least 2, got {states}")
    if states > MAX_STATES:
        raise UsageError(f"--states must be at most {MAX_STATES}, got {states}")
    return CorrelationModel.smoothed(args.s, states)


def write_curve(path: str, curves: dict[str, np.ndarray]) -> None:
    names = list(ALL_SCHEMES)
    n = len(curves[names[0]])
    with AtomicFile(path) as af:
        f = af.file
        f.write("row," + ",".join(names) + "\n")
        cols = [curves[s] for s in names]
        for t in range(n):
            f.write(f"{t}," + ",".join(repr(float(c[t])) for c in cols) + "\n")
        af.commit()


def run(args: argparse.Namespace) -> int:
    check_outputs(args, (args.curve, "curve"))
    model = build_model(args)
    sel = load_selection(args)
    n = sel.series.n
    releases = compute_all(sel.series, sel.landmarks, sel.settings, UnitNoise(n, args.seed))
    curves = landmark_tpl_for_schemes(releases, model)
    rows: list[dict[str, object]] = []
    for s in ALL_SCHEMES:
        c = curves[s]
        nc = no_correlation_value(releases[s].budgets, releases[s].landmarks)
        worst = int(np.argmax(c)) if n else -1
        rows.append({
            "scheme": s,
            "max_tpl": float(c[worst]) if n else 0.0,
            "max_tpl_row": worst,
            "no_correlation_max": float(nc.max()) if n else 0.0,
            "epsilon": sel.settings.epsilon,
        })
    if args.curve:
        try:
            write_curve(args.curve, curves)
        except OSError as e:
            raise ValueError(f"{args.curve}: cannot write the curve ({e.strerror or e})") from None
    corr: dict[str, object] = {"description": model.description, "states": model.states}
    if args.s is not None:
        corr["s"] = args.s
    else:
        corr["matrix_file"] = args.matrix
        corr["backward"] = model.backward.tolist()
        corr["forward"] = model.forward.tolist()
    if args.json:
        print(json.dumps({"input": args.input, "rows": n, "kind": sel.series.kind,
                          "landmarks": int(len(sel.landmarks)), "epsilon": sel.settings.epsilon,
                          "seed": args.seed, "correlation": corr, "schemes": rows}, indent=2))
        return 0
    print(f"{args.input}: {n} events, {len(sel.landmarks)} landmarks "
          f"({share(len(sel.landmarks), n)}), ε = {sel.settings.epsilon:g}; "
          f"correlation: {model.description}")
    head = f"{'scheme':<12} {'max landmark TPL':>17} {'at row':>7} {'without corr.':>14} {'ε':>8}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{SCHEME_LABELS[str(r['scheme'])]:<12} {r['max_tpl']:>17.6g} {r['max_tpl_row']:>7} "
              f"{r['no_correlation_max']:>14.6g} {r['epsilon']:>8.6g}")
    if args.curve:
        print(f"per-event curves written to {args.curve}")
    return 0
