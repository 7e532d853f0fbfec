"""``lmdk export``: write a protected CSV and its JSON sidecar.

With ``--dummies GENERATOR`` the export hides the landmarks among dummy landmarks (thesis §4.2): it draws a
selection ``L' ⊃ L`` with fresh randomness (derived from ``--seed`` when given), releases on ``L'`` with
``ε − ε_sel`` and records ``epsilon_selection`` in the sidecar (see :mod:`lmdk_gui.core.export`).
"""

from __future__ import annotations

import argparse
import sys

from ..core.export import BACKEND_ALIASES, ExportOptions, export_release
from ..core.settings import ALL_SCHEMES
from .common import (
    add_dummy_options,
    add_landmark_options,
    add_privacy_options,
    add_selection_options,
    dummy_settings,
    load_selection,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write a protected CSV and its JSON sidecar",
                       description="Write the release of one scheme to OUTPUT and its metadata to OUTPUT.json.")
    add_selection_options(p)
    p.add_argument("-o", "--output", required=True, metavar="OUTPUT", help="release CSV to write")
    p.add_argument("--scheme", required=True, choices=ALL_SCHEMES)
    add_landmark_options(p)
    add_privacy_options(p, epsilon_required=True)
    add_dummy_options(p)
    g = p.add_argument_group("output")
    g.add_argument("--include-budget", action="store_true",
                   help="add an 'epsilon' column (ε_t); reveals landmark positions")
    g.add_argument("--include-flags", action="store_true",
                   help="add an 'approximated' column (0/1); reveals landmark positions")
    g.add_argument("--include-input-name", action="store_true",
                   help="write the input file's name into OUTPUT.json (off by default: it can name a person)")
    g.add_argument("--seed", type=int, metavar="N",
                   help="seed the noise (reproducible by anyone holding the seed; default: OS entropy)")
    g.add_argument("--noise-backend", choices=BACKEND_ALIASES, default="exact",
                   help="floating-point-safe noise: 'exact' (default; exact integer samplers, numba) or "
                   "'opendp' (OpenDP's samplers; numeric and categorical; not for Adaptive, no seed)")
    g.add_argument("--denoise", action=argparse.BooleanOptionalAction, default=True,
                   help="write the denoised release (default): post-processing of the secure release from its "
                   "released values, budgets and public settings only, so the guarantee is unchanged and anyone "
                   "could do the same; --no-denoise writes the raw, unbiased noisy values")
    g.add_argument("--force", action="store_true", help="overwrite OUTPUT and OUTPUT.json if they exist")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    dummies = dummy_settings(args)
    sel = load_selection(args)
    opts = ExportOptions(scheme=args.scheme, include_budget=args.include_budget,
                         include_flags=args.include_flags, seed=args.seed, backend=args.noise_backend,
                         force=args.force, dummies=dummies, include_input_name=args.include_input_name,
                         denoise=args.denoise)
    result = export_release(sel.series, sel.landmarks, sel.settings, args.output, opts)
    for w in result.warnings:
        print(f"lmdk: warning: {w}", file=sys.stderr)
    g = result.guarantee
    if result.post_processing is not None:  # stdout's "wrote" line stays the last line, as before
        print(f"lmdk: values denoised ({result.post_processing['method']}): post-processing of the release, "
              "guarantee unchanged; --no-denoise writes the raw values", file=sys.stderr)
    if result.dummies is None:
        print(f"wrote {result.path} ({result.rows} rows, {args.scheme}, ε = {sel.settings.epsilon:g}, "
              f"{len(sel.landmarks)} landmarks, landmark sum {g.worst:.6g} ≤ ε) and {result.sidecar}")
    else:
        d = result.dummies
        print(f"wrote {result.path} ({result.rows} rows, {args.scheme}, ε = {sel.settings.epsilon:g}, "
              f"{len(sel.landmarks)} landmarks hidden among dummy landmarks ({args.dummies}, "
              f"{args.dummy_utility} utility): ε_sel = {d['epsilon']:.6g} for the selection, landmark sum "
              f"{g.worst:.6g} ≤ ε − ε_sel = {d['epsilon_release']:.6g}) and {result.sidecar}")
    return 0
