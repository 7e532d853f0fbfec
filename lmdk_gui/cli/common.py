"""Options shared by the sub-commands: selecting the series, the landmarks and the privacy settings."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..argtypes import finite, fraction, from_parser, int_in, path_arg, positive
from ..core.data.landmark_files import parse_row_spec, read_landmark_list
from ..core.data.loader import DATE_ORDERS, DUPLICATE_POLICIES, load_series, scan_table
from ..core.data.periods import AGGREGATES, apply_resolution, parse_resolution
from ..core.data.series import LoadError, Series
from ..core.kernel.dummies import DEFAULT_SHARE, GENERATORS, UTILITIES, DummySettings
from ..core.kernel.settings import AdaptiveParams, PrivacySettings

#: seeds of previews and simulations (exports have their own key option)
seed_type = int_in(0, 2**63 - 1, what="a seed: a whole number from 0 to 2^63 - 1")
#: runs of the simulated noise to average over
runs_type = int_in(1, 100_000, what="at least 1 run and at most 100,000")


def series_command(sub: argparse._SubParsersAction, name: str, run: Callable[[argparse.Namespace], int], *,
                   help: str, description: str) -> argparse.ArgumentParser:
    """The parser of a sub-command that reads one series: INPUT and the series selection options, running
    ``run``; the command adds its own options after these."""
    p = sub.add_parser(name, help=help, description=description)
    add_selection_options(p)
    p.set_defaults(run=run)
    return p


def add_selection_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="INPUT", help="CSV/TSV time series")
    g = p.add_argument_group("series selection")
    g.add_argument("--time-col", metavar="C", help="time column (auto-detected when unambiguous)")
    g.add_argument("--hour-col", metavar="C", help="hour-of-day column when the time column holds only dates")
    g.add_argument("--value-col", metavar="C", help="value column (numeric or categorical series)")
    g.add_argument("--lat-col", metavar="C", help="latitude column (location series)")
    g.add_argument("--lon-col", metavar="C", help="longitude column (location series)")
    g.add_argument("--kind", choices=("numeric", "location", "categorical"), help="force the kind of series")
    g.add_argument("--duplicates", choices=DUPLICATE_POLICIES, default="error",
                   help="what to do with repeated timestamps: error (default), drop-exact (drop rows repeating "
                   "an earlier row's time and value; refuse other repeats), first, last, or mean (numeric "
                   "only); first/last/mean also drop exact copies")
    g.add_argument("--date-order", choices=DATE_ORDERS, default=None,
                   help="how dates written like 01/02/2013 read: dmy (day first) or mdy (month first); needed only "
                   "when every date of the file reads both ways")
    g.add_argument("--skip-missing", action="store_true",
                   help="leave out rows with an empty field in a column the series needs (default: refuse them)")
    g.add_argument("--pair-cols", metavar="I,J",
                   help="contact log: the two person-id columns (auto-detected for two whole-number columns "
                   "named like i,j); read with --person")
    g.add_argument("--person", metavar="ID",
                   help="contact log: the person to follow; the value is the other person of each contact")
    g.add_argument("--pair-class-cols", metavar="CI,CJ",
                   help="contact log: class columns of the two persons; the value becomes the other person's "
                   "class")


def _cli_remedy(exc: LoadError, args: argparse.Namespace, categories: Sequence[str] | None) -> str:
    """The command's own words for the options that resolve a load error (the loader's message is neutral).

    Missing values, repeated times and a contact log's person are found one after the other while loading;
    the loader's scan of the whole file names them all, so that one corrected command reads the file."""
    if exc.option not in ("duplicates", "skip_missing", "person"):
        return ""
    opts = dict(time_col=args.time_col, value_col=args.value_col, lat_col=args.lat_col, lon_col=args.lon_col,
                hour_col=args.hour_col, kind=args.kind, pair_cols=args.pair_cols, person=args.person,
                pair_class_cols=args.pair_class_cols, categories=categories, date_order=args.date_order)
    scan = scan_table(args.input, **opts)
    flags = []
    if exc.option == "person" or (scan.person_counts and args.person is None):
        flags.append(f"--person ID (most rows: {scan.person})" if scan.person else "--person ID")
    if scan.missing_rows and not args.skip_missing:
        flags.append(f"--skip-missing ({scan.missing_rows:,} row{'s' if scan.missing_rows > 1 else ''})")
    if (scan.repeated_times or scan.exact_rows) and args.duplicates == "error":
        choices = scan.duplicate_choices if scan.repeated_times else ("drop-exact", *scan.duplicate_choices)
        flags.append("--duplicates " + "|".join(choices))
    elif exc.option == "duplicates" and exc.choices:
        flags.append("--duplicates " + "|".join(exc.choices))
    return f" (to read it: {' '.join(flags)})" if flags else ""


def load_input(args: argparse.Namespace, categories: Sequence[str] | None = None) -> Series:
    """Load INPUT with the selection options; a LoadError gets the flag that resolves it, and what loading
    dropped (exact duplicate rows, rows with missing values) or reordered (rows out of time order) is noted on
    stderr, in one line."""
    try:
        series = load_series(
            args.input, time_col=args.time_col, value_col=args.value_col, lat_col=args.lat_col,
            lon_col=args.lon_col, hour_col=args.hour_col, kind=args.kind, duplicates=args.duplicates,
            skip_missing=args.skip_missing, pair_cols=args.pair_cols, person=args.person,
            pair_class_cols=args.pair_class_cols, categories=categories, date_order=args.date_order,
        )
    except LoadError as exc:
        remedy = _cli_remedy(exc, args, categories)
        if not remedy:
            raise
        raise LoadError(str(exc) + remedy, path=exc.path, rows=exc.rows, column=exc.column, option=exc.option,
                        choices=exc.choices) from None
    src = series.source
    if src is not None:
        dropped = []
        # Exact copies change nothing under first/last (and are dropped before a mean): noted only when
        # dropping them was the point of the chosen policy.
        if src.exact_duplicates_dropped and src.columns.duplicates == "drop-exact":
            n = src.exact_duplicates_dropped
            dropped.append(f"dropped {n:,} exact duplicate row{'s' if n > 1 else ''} (same time and value)")
        if src.missing_skipped:
            n = src.missing_skipped
            dropped.append(f"skipped {n:,} row{'s' if n > 1 else ''} with missing values")
        if src.out_of_order:
            n = src.out_of_order
            dropped.append(f"the rows were not in time order: sorted by time ({n:,} row{'s' if n > 1 else ''} "
                           "earlier than the row above)")
        if dropped:
            print(f"lmdk: note: {args.input}: " + "; ".join(dropped), file=sys.stderr)
    return series


def add_landmark_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("landmarks")
    g.add_argument("--landmarks", type=path_arg, metavar="FILE",
                   help="CSV with a 'timestamp' column (matching the input) or a 'row' column (event numbers)")
    g.add_argument("--landmark-rows", metavar="ROWS",
                   help="event numbers: 0-based positions in time order, as the app's hover box shows them, "
                   "e.g. 3,7,10-20")


def add_privacy_options(p: argparse.ArgumentParser, *, epsilon_required: bool = False) -> None:
    g = p.add_argument_group("privacy")
    g.add_argument("--epsilon", type=positive, required=epsilon_required, default=None if epsilon_required
                   else 1.0, metavar="E", help="total privacy budget ε" + ("" if epsilon_required else
                                                                              " (default 1)"))
    g.add_argument("--sensitivity", type=positive, default=1.0, metavar="D",
                   help="numeric: sensitivity Δ in the data's units (default 1)")
    g.add_argument("--bounds", type=finite, nargs=2, metavar=("LO", "HI"),
                   help="numeric: public bounds; inputs are clamped to them")
    g.add_argument("--lower-bound", type=finite, metavar="LO", default=None,
                   help="numeric: a public lower bound alone (e.g. 0: values cannot be negative); inputs are "
                   "clamped to it and the denoised release is clipped to it. Give it only if it is a public "
                   "fact; it excludes --bounds (give --bounds LO HI for both ends)")
    g.add_argument("--radius", type=positive, default=100.0, metavar="METRES",
                   help="location: protection radius in metres (default 100)")
    g.add_argument("--categories", metavar="a,b,c",
                   help="categorical: the public category list (default: the data's own, which leaks; export "
                   "and batch publish it only with --categories-from-data)")
    g.add_argument("--adaptive-inc", type=fraction, default=0.1, metavar="X")
    g.add_argument("--adaptive-dec", type=fraction, default=0.1, metavar="X")
    g.add_argument("--adaptive-min-rate", type=fraction, default=0.1, metavar="X")


def add_resolution_options(p: argparse.ArgumentParser) -> None:
    """``--resample RES`` and ``--aggregate sum|mean`` (DESIGN §12: one value per period)."""
    g = p.add_argument_group("release resolution (numeric series)")
    g.add_argument("--resample", type=from_parser(lambda text: parse_resolution(text)[0]), metavar="RES",
                   help="release one value per period instead of per event: 1h, 6h, 1D, 7D or 1W (weeks from "
                   "Monday); the same protection per event, a landmark's period counts as a landmark")
    g.add_argument("--aggregate", choices=AGGREGATES, default="sum",
                   help="with --resample: each period's sum (default) or mean")


def _share(text: str) -> float:
    try:
        v = float(text.rstrip("%")) / (100.0 if text.endswith("%") else 1.0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(v) and 0.0 < v < 1.0):
        raise argparse.ArgumentTypeError(f"expected a share strictly between 0 and 1 (or 0% and 100%), "
                                         f"got {text!r}")
    return v


def add_release_options(p: argparse.ArgumentParser, *, epsilon_required: bool = False,
                        categories_from_data: bool = False) -> None:
    """What a release of one series is made of (``lmdk export``, and ``lmdk compare`` that simulates them):
    the landmarks, the release resolution, the privacy settings and the dummy landmarks; with
    ``categories_from_data`` also the flag that publishes the data's own category list."""
    add_landmark_options(p)
    add_resolution_options(p)
    add_privacy_options(p, epsilon_required=epsilon_required)
    if categories_from_data:
        p.add_argument("--categories-from-data", action="store_true",
                       help="categorical: publish the data's own category list (every label that occurs) when "
                       "no --categories list is given; without either, a categorical export is refused")
    add_dummy_options(p)


def add_dummy_options(p: argparse.ArgumentParser) -> None:
    """``--dummies``, ``--dummy-share``, ``--dummy-utility`` (issue 6, thesis §4.2)."""
    g = p.add_argument_group("dummy landmarks (hide which events are landmarks, thesis §4.2)")
    g.add_argument("--dummies", choices=("off", *GENERATORS), default="off",
                   help="add dummy landmarks chosen by this generator (default off): partitioned (fast), "
                   "heuristic (greedy; ≈ 2 s at 20,000 events), optimal (exhaustive; ≤ 11 non-landmark events)")
    g.add_argument("--dummy-share", type=_share, default=DEFAULT_SHARE, metavar="S",
                   help="share of ε spent on choosing the dummies, e.g. 0.01 or 1%% (default 0.01); "
                   "the release gets the rest")
    g.add_argument("--dummy-utility", choices=UTILITIES, default="count",
                   help="count: fewer dummies are preferred (default); distance: dummies close in time to "
                   "the landmarks are preferred")


def dummy_settings(args: argparse.Namespace) -> DummySettings | None:
    """The dummy settings asked for on the command line; None for ``--dummies off``."""
    gen = getattr(args, "dummies", "off")
    if gen in (None, "off"):
        return None
    d = DummySettings(generator=gen, share=args.dummy_share, utility=args.dummy_utility)
    d.validate()
    return d


@dataclass
class Selection:
    series: Series
    landmarks: np.ndarray
    settings: PrivacySettings
    #: the suggestion rules the landmark file says found its landmarks (its 'rule' column)
    landmark_rules: frozenset[str] = frozenset()
    #: with --resample: the series of events the periods were made from (``series`` is then the periods')
    events: Series | None = None


def load_selection(args: argparse.Namespace) -> Selection:
    cats = None
    if getattr(args, "categories", None):
        cats = tuple(c.strip() for c in args.categories.split(",") if c.strip())
    series = load_input(args, cats)
    rows = [np.zeros(0, dtype=np.int64)]
    rules: frozenset[str] = frozenset()
    if getattr(args, "landmarks", None):
        from_file, rules = read_landmark_list(args.landmarks, series)
        rows.append(from_file)
    if getattr(args, "landmark_rows", None):
        rows.append(parse_row_spec(args.landmark_rows, series.n))
    landmarks = np.unique(np.concatenate(rows))
    settings = PrivacySettings(
        epsilon=args.epsilon,
        sensitivity=args.sensitivity,
        bounds=tuple(args.bounds) if args.bounds else None,
        lower_bound=getattr(args, "lower_bound", None),
        radius_m=args.radius,
        categories=cats,
        adaptive=AdaptiveParams(args.adaptive_inc, args.adaptive_dec, args.adaptive_min_rate),
    )
    settings.validate()
    sel = Selection(series, landmarks, settings, rules)
    return at_resolution(sel, getattr(args, "resample", None), getattr(args, "aggregate", "sum"))


def at_resolution(sel: Selection, resolution: str | None, how: str = "sum") -> Selection:
    """The selection one value per period (:func:`~lmdk_gui.core.data.periods.to_periods`); itself without a
    resolution."""
    if not resolution:
        return sel
    series, landmarks, settings = apply_resolution(sel.series, sel.landmarks, sel.settings, resolution, how)
    return Selection(series, landmarks, settings, sel.landmark_rules, sel.series)


def private_inputs(args: argparse.Namespace) -> list[str]:
    """The files a command read that its outputs must never replace: the input, a landmark list, a matrix."""
    return [str(v) for v in (getattr(args, k, None) for k in ("input", "landmarks", "matrix")) if v]


def check_outputs(args: argparse.Namespace, *paths: tuple[str | None, str]) -> None:
    """Every (path, what) the command will write, through the one output guard (issue 42, finding 3), before
    any work: never an input (through any link), never a special file, an existing file only with --force."""
    from ..core.publish.guard import check_output

    inputs = private_inputs(args)
    for path, what in paths:
        if path:
            check_output(path, inputs, force=bool(getattr(args, "force", False)), what=what)
