"""``lmdk batch``: release every person of one long table on Dask (issue 16; see :mod:`lmdk_gui.core.publish.batch`).

Exit codes: 0 every person released, 1 some persons failed (listed in OUTDIR/manifest.json, the others are
released), 2 bad input or usage, 130 interrupted (OUTDIR holds complete persons only; ``--resume`` finishes).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from ..argtypes import int_in
from ..core.analysis.suggestions import RULES
from ..core.kernel.settings import (
    LANDMARK_SCHEMES,
    AdaptiveParams,
    PrivacySettings,
    categories_from_data_risk,
)
from ..core.publish.export import BACKEND_ALIASES
from . import UsageError
from .common import (
    add_dummy_options,
    add_privacy_options,
    add_resolution_options,
    dummy_settings,
    series_command,
)
from .landmarks_cmd import _OPTIONS as _RULE_OPTIONS
from .landmarks_cmd import add_rule_options, rule_params

EXIT_SOME_FAILED = 1
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?i?b?)?\s*$", re.I)
_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "kib": 2**10, "m": 1e6, "mb": 1e6, "mib": 2**20,
          "g": 1e9, "gb": 1e9, "gib": 2**30}


def _size(text: str) -> int:
    m = _SIZE.match(text)
    unit = (m.group(2) or "").lower() if m else ""
    if not m or unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"expected a size like 64MB or 1048576, got {text!r}")
    return int(float(m.group(1)) * _UNITS[unit])


_workers = int_in(1, None, what="a whole number of workers ≥ 1")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = series_command(
        sub, "batch", run, help="release every person of one long table (id column) on Dask",
        description="Release each person's series of INPUT (a CSV/TSV/Parquet file, a folder of them or a "
        "glob; one row per event with an id column) exactly as 'lmdk export' would release it alone, on a "
        "local Dask cluster or an existing one. OUTDIR gets one release per person and manifest.json (the "
        "steward's private record: input checksums, settings, per person rows, landmark count and sum, "
        "verdict, status).")
    for action in p._actions:  # same options as export; only INPUT may also be a folder or a glob
        if action.dest == "input":
            action.help = "CSV/TSV/Parquet file, a folder of them, or a glob (quote it)"
    p.add_argument("-o", "--output", "--outdir", dest="outdir", required=True, metavar="OUTDIR",
                   help="folder for the releases and manifest.json")
    p.add_argument("--id-col", required=True, metavar="C", help="the column naming the person/household")
    p.add_argument("--scheme", required=True, choices=LANDMARK_SCHEMES)
    g = p.add_argument_group("landmarks (one of)")
    g.add_argument("--landmarks", metavar="FILE",
                   help="CSV with the id column and a 'timestamp' (matching the input) or 'row' (0-based, "
                   "within the person's series) column")
    g.add_argument("--rule", choices=tuple(RULES),
                   help="find each person's landmarks with this suggestion rule (see 'lmdk landmarks')")
    add_rule_options(g)
    add_privacy_options(p, epsilon_required=True)
    add_resolution_options(p)
    c = p.add_argument_group("categories (categorical tables: one list for every person)")
    c.add_argument("--categories-from-data", action="store_true",
                   help="without --categories, publish the union of every person's labels in the table (the "
                   "same list in every sidecar, which says it came from the data); without either, a "
                   "categorical table is refused")
    c.add_argument("--map-unlisted-to", metavar="LABEL",
                   help="with --categories: labels some person holds that the list lacks become LABEL (e.g. "
                   "other, added to the list); without it such a label refuses the whole run")
    add_dummy_options(p)
    o = p.add_argument_group("output")
    o.add_argument("--format", choices=("csv", "parquet"), default="csv",
                   help="csv: <id>.csv + <id>.csv.json per person (default); parquet: a dataset in "
                   "OUTDIR/release partitioned as id=<id>/ (part-0.parquet + _release.json)")
    o.add_argument("--include-budget", action="store_true",
                   help="add an 'epsilon' column (ε_t); reveals landmark positions")
    o.add_argument("--include-flags", action="store_true",
                   help="add an 'approximated' column (0/1); reveals landmark positions")
    o.add_argument("--seed", metavar="KEY",
                   help="master key, 64 random hex digits (e.g. python -c 'import secrets; "
                   "print(secrets.token_hex(32))'): person p's release is seeded with "
                   "HMAC-SHA256(KEY, p) bound to p's data and settings, reproducible by anyone holding KEY "
                   "(default: fresh OS entropy per person)")
    o.add_argument("--noise-backend", choices=BACKEND_ALIASES, default="exact",
                   help="as for 'lmdk export' (default exact)")
    o.add_argument("--resume", action="store_true",
                   help="finish an interrupted run in OUTDIR (same input and options): skip persons done")
    o.add_argument("--force", action="store_true", help="start over: remove an earlier run's files in OUTDIR")
    d = p.add_argument_group("dask")
    w = d.add_mutually_exclusive_group()
    w.add_argument("--workers", type=_workers, metavar="N",
                   help="local worker processes on 127.0.0.1 (default: one per CPU)")
    w.add_argument("--scheduler", metavar="ADDRESS",
                   help="use an existing dask.distributed cluster, e.g. tcp://10.0.0.5:8786 (its workers must "
                   "see INPUT and OUTDIR at the same paths)")
    d.add_argument("--blocksize", type=_size, default="32MB", metavar="SIZE",
                   help="bytes of CSV per partition (default 32MB); a task holds about one partition")


def _rule(args: argparse.Namespace) -> tuple[str | None, dict[str, Any]]:
    given = [opt for opt in _RULE_OPTIONS if getattr(args, opt) is not None]
    if args.rule is None:
        if given:
            raise UsageError(f"--{given[0]} applies to --rule {_RULE_OPTIONS[given[0]][0]}; add that --rule")
        return None, {}
    if args.landmarks:
        raise UsageError("give either --landmarks FILE or --rule, not both")
    return args.rule, rule_params(args)


def options_from_args(args: argparse.Namespace):
    from ..core.data.series import ColumnChoice
    from ..core.publish.batch import BatchError, BatchOptions, parse_key
    from ..core.publish.batch_base import _COLUMN_OPTIONS

    rule, params = _rule(args)
    if args.categories and args.categories_from_data:
        raise UsageError("--categories and --categories-from-data exclude each other; give one")
    if args.map_unlisted_to is not None and not args.categories:
        raise UsageError("--map-unlisted-to applies to a public list: give --categories a,b,c too")
    other = args.map_unlisted_to.strip() if args.map_unlisted_to is not None else None
    if other == "":
        raise UsageError("--map-unlisted-to needs a category name, e.g. other")
    cats = tuple(c.strip() for c in args.categories.split(",") if c.strip()) if args.categories else None
    settings = PrivacySettings(
        epsilon=args.epsilon, sensitivity=args.sensitivity, bounds=tuple(args.bounds) if args.bounds else None,
        radius_m=args.radius, categories=cats, lower_bound=args.lower_bound,
        adaptive=AdaptiveParams(args.adaptive_inc, args.adaptive_dec, args.adaptive_min_rate))
    try:
        key = parse_key(args.seed) if args.seed is not None else None
    except BatchError as e:
        raise UsageError(f"--seed: {e}") from None
    return BatchOptions(
        id_col=args.id_col, scheme=args.scheme, settings=settings,
        columns=ColumnChoice.of(**{k: getattr(args, k) for k in _COLUMN_OPTIONS}), landmarks_file=args.landmarks,
        rule=rule, rule_params=params, dummies=dummy_settings(args), include_budget=args.include_budget,
        include_flags=args.include_flags, key=key, backend=args.noise_backend, format=args.format,
        resume=args.resume, force=args.force, workers=args.workers, scheduler=args.scheduler,
        blocksize=args.blocksize, resolution=args.resample, aggregate=args.aggregate,
        categories_from_data=args.categories_from_data, map_unlisted_to=other)


class _Line:
    """One progress line on stderr: rewritten with \\r on a terminal, a line every few seconds otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.dashboard_shown = False
        self.last = 0.0
        self.width = 0

    def __call__(self, p) -> None:
        if p.dashboard and not self.dashboard_shown:
            self.dashboard_shown = True
            self._print(f"lmdk: Dask dashboard: {p.dashboard}", final=True)
        if p.phase == "done":
            return
        if p.phase != "releasing":
            self._print(f"lmdk: {p.phase}…", final=not self.tty)
            return
        if not self.tty and p.elapsed_s - self.last < 5.0 and p.persons_done < p.persons_total:
            return
        self.last = p.elapsed_s
        failed = f", {p.failed} failed" if p.failed else ""
        self._print(f"lmdk: persons {p.persons_done}/{p.persons_total}{failed}, {p.rows_done:,} rows, "
                    f"{p.rows_per_s:,.0f} rows/s", final=not self.tty)

    def _print(self, text: str, *, final: bool) -> None:
        if self.tty:
            pad = " " * max(0, self.width - len(text))
            sys.stderr.write("\r" + text + pad + ("\n" if final else ""))
            self.width = 0 if final else len(text)
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def end(self) -> None:
        if self.tty and self.width:
            sys.stderr.write("\n")
            self.width = 0


def run(args: argparse.Namespace) -> int:
    import logging

    from ..core.publish.batch import BatchError, run_batch

    # The in-process scheduler logs each shuffle's start and end as warnings: noise on a steward's terminal.
    logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)
    options = options_from_args(args)
    line = _Line()
    try:
        summary = run_batch(args.input, args.outdir, options, progress=line)
    except BatchError as e:
        line.end()
        raise UsageError(str(e)) from None
    except KeyboardInterrupt:
        line.end()
        print(f"lmdk: interrupted; {args.outdir} holds complete persons only: run again with --resume to "
              "finish", file=sys.stderr)
        return 130
    line.end()
    cats = summary.categories
    if cats is not None and options.categories_from_data:
        print(f"lmdk: warning: {categories_from_data_risk(len(cats['published']))}: the union of every person's "
              "labels, the same list in every sidecar (--categories-from-data)", file=sys.stderr)
    elif cats is not None and cats.get("unlisted_labels_mapped"):
        n = cats["unlisted_labels_mapped"]
        print(f"lmdk: note: {n} label{'s' if n != 1 else ''} not in --categories became "
              f"{options.map_unlisted_to!r} (--map-unlisted-to)", file=sys.stderr)
    if args.include_budget or args.include_flags:
        print("lmdk: warning: the epsilon/approximated columns reveal where the landmarks are (thesis §4.2)",
              file=sys.stderr)
    if options.key is not None:
        print("lmdk: warning: these releases are seeded: anyone who holds the key can reproduce their noise",
              file=sys.stderr)
    if options.rule is not None and options.dummies is None:
        print("lmdk: warning: the landmarks were found by --rule on each person's values: a release shows where "
              "they are (Skip and Adaptive repeat values there), so it shows which events passed the rule; "
              "add dummy landmarks to hide them", file=sys.stderr)
    if summary.composition:
        print(f"lmdk: note: {summary.composition}", file=sys.stderr)
    for pid, err in summary.errors[:5]:  # loader messages already start with "id <pid>, row …"
        print(f"lmdk: failed: {err}" if err.startswith(f"id {pid}") else f"lmdk: failed: id {pid}: {err}",
              file=sys.stderr)
    if len(summary.errors) > 5:
        print(f"lmdk: … and {len(summary.errors) - 5} more failed persons (see {summary.manifest})",
              file=sys.stderr)
    resumed = f" ({summary.resumed} done before)" if summary.resumed else ""
    missing = f"; {summary.missing_id_rows} rows without an id were skipped" if summary.missing_id_rows else ""
    print(f"released {summary.released} of {summary.persons} persons{resumed} into {summary.outdir} "
          f"({summary.rows:,} rows in {summary.seconds:.1f} s, {summary.rows_per_s:,.0f} rows/s; "
          f"{summary.failed} failed{missing}); manifest: {summary.manifest} (private)")
    return EXIT_SOME_FAILED if summary.failed else 0
