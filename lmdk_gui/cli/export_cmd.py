"""``lmdk export``: write a protected CSV and its JSON sidecar.

With ``--dummies GENERATOR`` the export hides the landmarks among dummy landmarks (thesis §4.2): it draws a
selection ``L' ⊃ L`` with fresh randomness (derived from the export key when given), releases on ``L'`` with
``ε − ε_sel`` and records ``epsilon_selection`` in the sidecar (see :mod:`lmdk_gui.core.publish.export`).

Reproducible exports take a random secret key of 64 hex digits (``--seed HEX``, ``--seed-file PATH`` or
``--new-key``; patterned or low-entropy keys are refused, :mod:`lmdk_gui.core.publish.keys`), never a small
integer; the key is bound to this release's data, landmarks and settings and kept in the private ledger so
that ``lmdk ledger reexport`` can make the same release again. Once written, a release of an input that was
released before prints the composed ε on stderr (a refused export prints nothing of it). Skip/Adaptive print their republishing warning. A release
whose expected error (a few simulated runs, :func:`~lmdk_gui.core.analysis.advice.release_estimate`) is not clearly
below the error of publishing one constant gets a warning on stderr ("no better than publishing a constant").
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..argtypes import path_arg
from ..core.analysis import advice
from ..core.analysis.metrics import unit_label
from ..core.analysis.suggestions import RULE_WARNING
from ..core.kernel.settings import (
    ALL_SCHEMES,
    PrivacySettings,
    bounds_from_data_risk,
    categories_from_data,
    categories_from_data_risk,
    lower_bound_question,
    sensitivity_warning,
)
from ..core.publish import ledger
from ..core.publish.export import (
    BACKEND_ALIASES,
    ExportError,
    ExportOptions,
    export_key,
    export_release,
    new_export_key,
)
from . import INTERRUPTED, RELEASE_WRITTEN, UsageError
from .common import add_release_options, dummy_settings, load_selection, series_command


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = series_command(sub, "export", run, help="write a protected CSV and its JSON sidecar",
                       description="Write the release of one scheme to OUTPUT and its metadata to OUTPUT.json.")
    p.add_argument("-o", "--output", type=path_arg, required=True, metavar="OUTPUT", help="release CSV to write")
    p.add_argument("--scheme", required=True, choices=ALL_SCHEMES)
    add_release_options(p, epsilon_required=True, categories_from_data=True)
    g = p.add_argument_group("output")
    g.add_argument("--include-budget", action="store_true",
                   help="add an 'epsilon' column (ε_t); reveals landmark positions")
    g.add_argument("--include-flags", action="store_true",
                   help="add an 'approximated' column (0/1); reveals landmark positions")
    g.add_argument("--include-input-name", action="store_true",
                   help="write the input file's name into OUTPUT.json (off by default: it can name a person)")
    k = g.add_mutually_exclusive_group()
    k.add_argument("--seed", metavar="HEX",
                   help="a secret export key of 64 random hex digits (256 bits; --new-key makes one): the release can be made "
                   "again by whoever holds it (`lmdk ledger reexport`); default: fresh OS entropy")
    k.add_argument("--seed-file", metavar="PATH", help="read the export key (hex) from PATH")
    k.add_argument("--new-key", action="store_true",
                   help="generate a fresh export key, keep it in the private ledger only (reproducible)")
    g.add_argument("--verbatim-labels", action="store_true",
                   help="write text cells as they are (default: a cell starting with = + - @ tab or CR gets a "
                   "leading ' so that spreadsheets do not run it as a formula)")
    g.add_argument("--noise-backend", choices=BACKEND_ALIASES, default="exact",
                   help="floating-point-safe noise: 'exact' (default; exact integer samplers, numba) or "
                   "'opendp' (OpenDP's samplers; numeric and categorical; not for Adaptive, no seed)")
    g.add_argument("--denoise", action=argparse.BooleanOptionalAction, default=True,
                   help="write the denoised release (default): post-processing of the secure release from its "
                   "released values, budgets and public settings only, so the guarantee is unchanged and anyone "
                   "could do the same; --no-denoise writes the raw, unbiased noisy values")
    g.add_argument("--bounds-from-data", action="store_true",
                   help="numeric: use the data's own minimum and maximum as the public bounds; they are then "
                   "published (the sidecar and its statement say so). Without it, only --bounds are used")
    g.add_argument("--force", action="store_true", help="overwrite OUTPUT and OUTPUT.json if they exist")


def _key_argument(args: argparse.Namespace) -> str | None:
    """The export key from --seed/--seed-file/--new-key, checked (a short or integer key: exit 2)."""
    if args.new_key:
        return new_export_key()
    text = args.seed
    if args.seed_file:
        try:
            text = Path(args.seed_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            raise UsageError(f"--seed-file {args.seed_file}: cannot read the key ({getattr(e, 'strerror', None) or e})"
                             ) from None
    if text is None:
        return None
    try:
        export_key(text)
    except ExportError as e:
        opt = "--seed-file" if args.seed_file else "--seed"
        raise UsageError(f"{opt}: {e}") from None
    return text


def run(args: argparse.Namespace) -> int:
    dummies = dummy_settings(args)
    if args.categories and args.categories_from_data:
        raise UsageError("--categories and --categories-from-data exclude each other; give one")
    key = _key_argument(args)
    if args.bounds and args.bounds_from_data:
        raise UsageError("--bounds and --bounds-from-data exclude each other; give one")
    sel = load_selection(args)
    check_categories(sel.series, sel.settings, args.categories_from_data)
    if args.bounds_from_data:
        sel = replace(sel, settings=data_bounds(sel.series, sel.settings))
    if sel.series.kind == "numeric":
        per = sel.series.periods  # (--resample: the events' bounds, clamped before aggregation)
        short = sensitivity_warning(sel.settings.sensitivity, per.bounds if per is not None else sel.settings.bounds,
                                    sel.series.unit or "")
        if short:
            print(f"lmdk: warning: {short} (--sensitivity)", file=sys.stderr)
    opts = ExportOptions(scheme=args.scheme, include_budget=args.include_budget,
                         include_flags=args.include_flags, seed=key, backend=args.noise_backend,
                         force=args.force, dummies=dummies, include_input_name=args.include_input_name,
                         verbatim_labels=args.verbatim_labels,
                         categories_from_data=sel.series.kind == "categorical" and not args.categories,
                         denoise=args.denoise, landmarks_rule=", ".join(sorted(sel.landmark_rules)) or None)
    if sel.landmark_rules and dummies is None:
        print(f"lmdk: warning: {args.landmarks} says its landmarks were found by a rule on the values "
              f"({opts.landmarks_rule}). {RULE_WARNING} (--dummies; the sidecar says so)", file=sys.stderr)
    result = export_release(sel.series, sel.landmarks, sel.settings, args.output, opts,
                            should_cancel=INTERRUPTED.is_set)
    RELEASE_WRITTEN.set()
    if result.composition:  # (said once the release is written: a refused export spends nothing)
        print(f"lmdk: note: {result.composition}", file=sys.stderr)
    elif result.same_release_as:
        print(f"lmdk: note: the same release as {result.same_release_as} in the ledger (same key, data, landmarks "
              "and settings): bit for bit, no new ε spent", file=sys.stderr)
    for w in result.warnings:
        print(f"lmdk: warning: {w}", file=sys.stderr)
    # guidance after the release is written (a refused export wastes no runs); the simulated runs use the
    # true data and stay on this machine, like lmdk compare's
    estimate = advice.release_estimate(sel.series, sel.landmarks, sel.settings.with_(denoise=args.denoise),
                                       args.scheme, dummies=dummies)
    useless = advice.noise_warning(estimate, sel.series, sel.settings, unit_label(sel.series), args.scheme)
    if useless:
        print(f"lmdk: warning: {useless} (expected error: mean of {advice.ESTIMATE_RUNS} simulated releases)",
              file=sys.stderr)
    if lower_bound_question(sel.series.kind, sel.series.values, sel.settings):
        # a question, not a default: only the user knows whether 0 is a public fact about such data
        print("lmdk: hint: values cannot be negative? a public lower bound of 0 (--lower-bound 0 or --bounds 0 "
              "HI) clips the denoised release to it; give it only if it is public knowledge, not something "
              "read off this data", file=sys.stderr)
    if key is not None:
        print(f"lmdk: the export key is kept in the private ledger {ledger.ledger_path()} "
              "(`lmdk ledger reexport` makes this release again)", file=sys.stderr)
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


def data_bounds(series, settings: PrivacySettings) -> PrivacySettings:
    """--bounds-from-data: the settings with the data's minimum and maximum as bounds, flagged (and said)."""
    if series.kind != "numeric":
        raise UsageError(f"--bounds-from-data applies to numeric series; this one was read as {series.kind}")
    values = np.asarray(series.values, dtype=np.float64)
    if not values.size or not np.isfinite(values).any():
        raise UsageError("--bounds-from-data: the series has no values to take bounds from")
    lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
    if not lo < hi:
        raise UsageError(f"--bounds-from-data: every value is {lo:g}; bounds need lo < hi, give --bounds")
    bounds = (lo, hi)
    print(f"lmdk: warning: {bounds_from_data_risk(bounds)} (--bounds-from-data)", file=sys.stderr)
    return settings.with_(bounds=bounds, bounds_from_data=True)


def check_categories(series, settings, from_data: bool) -> None:
    """Refuse to publish a data-derived category list unless ``--categories-from-data`` says so (then warn)."""
    if not categories_from_data(series.kind, settings):
        return
    risk = categories_from_data_risk(len(series.categories or ()))
    if not from_data:
        raise UsageError(f"{risk}; give the public list with --categories a,b,c or accept this with "
                         "--categories-from-data")
    print(f"lmdk: warning: {risk} (--categories-from-data)", file=sys.stderr)
