"""``lmdk export``: write a protected CSV and its JSON sidecar."""

from __future__ import annotations

import argparse
import sys

from ..core.export import BACKEND_ALIASES, ExportOptions, export_release
from .common import add_landmark_options, add_privacy_options, add_selection_options, load_selection


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write a protected CSV and its JSON sidecar",
                       description="Write the release of one scheme to OUTPUT and its metadata to OUTPUT.json.")
    add_selection_options(p)
    p.add_argument("-o", "--output", required=True, metavar="OUTPUT", help="release CSV to write")
    p.add_argument("--scheme", required=True, choices=("uniform", "skip", "adaptive", "event", "user"))
    add_landmark_options(p)
    add_privacy_options(p, epsilon_required=True)
    g = p.add_argument_group("output")
    g.add_argument("--include-budget", action="store_true",
                   help="add an 'epsilon' column (ε_t); reveals landmark positions")
    g.add_argument("--include-flags", action="store_true",
                   help="add an 'approximated' column (0/1); reveals landmark positions")
    g.add_argument("--seed", type=int, metavar="N",
                   help="seed the noise (reproducible by anyone holding the seed; default: OS entropy)")
    g.add_argument("--noise-backend", choices=BACKEND_ALIASES, default="exact",
                   help="floating-point-safe noise: 'exact' (default; exact integer samplers, numba) or "
                   "'opendp' (OpenDP's samplers; numeric and categorical; not for Adaptive, no seed)")
    g.add_argument("--force", action="store_true", help="overwrite OUTPUT and OUTPUT.json if they exist")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    sel = load_selection(args)
    opts = ExportOptions(scheme=args.scheme, include_budget=args.include_budget,
                         include_flags=args.include_flags, seed=args.seed, backend=args.noise_backend,
                         force=args.force)
    result = export_release(sel.series, sel.landmarks, sel.settings, args.output, opts)
    for w in result.warnings:
        print(f"lmdk: warning: {w}", file=sys.stderr)
    g = result.guarantee
    print(f"wrote {result.path} ({result.rows} rows, {args.scheme}, ε = {sel.settings.epsilon:g}, "
          f"{len(sel.landmarks)} landmarks, landmark sum {g.worst:.6g} ≤ ε) and {result.sidecar}")
    return 0
