"""``lmdk evaluate``: the schemes' error for 0–100 % landmarks, as a table, a CSV and a bar chart.

The thesis' utility experiment (§5.2.1, Figure 5.1) on any series: landmark sets by percentage from a
suggestion rule swept over one parameter (§5.1.3) or from a synthetic placement, and for each set the MAE
of every scheme averaged over R runs (:func:`lmdk_gui.core.analysis.evaluation.evaluate`).

The CSV has exactly the columns ``percentage,scheme,mae_mean,mae_std,runs``; ``percentage`` is the
requested one (the printed table and the plot also show the percentage a rule actually reached).
``--denoise both`` also denoises every run's release (post-processing, :mod:`lmdk_gui.core.analysis.denoise`) and adds
the columns ``mae_denoised_mean,mae_denoised_std``; the plot then shows the denoised errors.
``--plot`` draws the grouped bar chart with pyqtgraph offscreen (Qt is imported only then).
The table ends with the yardstick, the error of publishing one constant (the series' median, geometric median
or mode) at every event; ``--json`` has it as ``constant_error`` and each result's spread over the runs as
``mae_p10``/``mae_p90`` (``mae_denoised_p10``/``mae_denoised_p90``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..argtypes import from_parser, non_negative, path_arg, size_type
from ..core.analysis.evaluation import DEFAULT_RUNS, PLACEMENTS, evaluate, parse_percentages
from ..core.analysis.suggestions import RULES
from ..core.kernel.settings import ALL_SCHEMES
from . import UsageError
from .common import (
    add_privacy_options,
    add_resolution_options,
    check_outputs,
    load_selection,
    runs_type,
    seed_type,
    series_command,
)

#: --vary value -> (rule, parameter of rule_for_percentage)
_VARY = {"below": ("threshold", "below"), "above": ("threshold", "above"),
         "distance": ("stay", "distance_m"), "duration": ("stay", "duration_min")}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = series_command(
        sub, "evaluate", run, help="error of every scheme for 0–100%% landmarks (thesis Figure 5.1), as CSV and PNG",
        description="For each landmark percentage, build a landmark set (a suggestion rule swept over one "
        "parameter, or a synthetic placement) and report the mean absolute error of uniform, skip, adaptive "
        "and the event/user-level baselines, averaged over R runs of the noise, in the data's units. "
        "The numbers use the true data: they are for choosing a scheme, not for publication.")
    add_privacy_options(p)
    add_resolution_options(p)
    g = p.add_argument_group("landmark sets")
    g.add_argument("--percentages", type=from_parser(parse_percentages), default=(0.0, 20.0, 40.0, 60.0, 80.0, 100.0),
                   metavar="P,P,…", help="landmark percentages (default 0,20,40,60,80,100)")
    how = g.add_mutually_exclusive_group()
    how.add_argument("--placement", choices=PLACEMENTS,
                     help="synthetic landmark placement (seeded; sets nest as the percentage grows); "
                     "the default when no --rule is given: uniform")
    how.add_argument("--rule", choices=tuple(RULES),
                     help="suggestion rule swept to each percentage: threshold (numeric), stay (location), "
                     "category (categorical), changepoints (numeric)")
    g.add_argument("--vary", choices=tuple(_VARY),
                   help="parameter the rule sweeps: threshold below (default) or above; stay distance "
                   "(default) or duration")
    g.add_argument("--distance", type=non_negative, metavar="M", help="stay: fixed Δl in metres when sweeping duration")
    g.add_argument("--duration", type=non_negative, metavar="MIN",
                   help="stay: fixed Δt in minutes when sweeping distance (default 30, as the thesis)")
    r = p.add_argument_group("runs")
    r.add_argument("--runs", type=runs_type, default=DEFAULT_RUNS, metavar="R",
                   help=f"runs of the noise to average over (default {DEFAULT_RUNS})")
    r.add_argument("--seed", type=seed_type, default=0, metavar="N",
                   help="seed: run r uses noise seed N+1+r, placements use N (default 0)")
    r.add_argument("--denoise", choices=("off", "both"), default="off",
                   help="both: also the error of the denoised releases (post-processing of each run's release; "
                   "extra CSV columns mae_denoised_mean,mae_denoised_std; the plot shows the denoised errors)")
    r.add_argument("--schemes", metavar="a,b", help=f"schemes to compare (default: {','.join(ALL_SCHEMES)})")
    o = p.add_argument_group("output")
    o.add_argument("--csv", type=path_arg, metavar="OUT.csv", help="write percentage,scheme,mae_mean,mae_std,runs")
    o.add_argument("--plot", type=path_arg, metavar="OUT.png", help="draw the grouped bar chart (PNG)")
    o.add_argument("--force", action="store_true", help="overwrite OUT.csv / OUT.png if they exist")
    sc = o.add_mutually_exclusive_group()
    sc.add_argument("--log", action="store_const", const="log", dest="scale",
                    help="log y axis (default: log when the bars span more than two decades)")
    sc.add_argument("--linear", action="store_const", const="linear", dest="scale", help="linear y axis")
    o.add_argument("--size", type=size_type, default="1200x700", metavar="WxH", help="plot size in pixels (default 1200x700)")
    o.add_argument("--title", metavar="TEXT", help="plot title (default: the data's name and ε)")
    o.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(scale="auto")


def rule_options(args: argparse.Namespace) -> tuple[str | None, dict[str, Any]]:
    """(vary, fixed parameters) for rule_for_percentage, checked against --rule."""
    vary = None
    fixed: dict[str, Any] = {}
    if args.vary is not None:
        rule, vary = _VARY[args.vary]
        if args.rule != rule:
            raise UsageError(f"--vary {args.vary} applies to --rule {rule}")
    for opt, name in (("distance", "distance_m"), ("duration", "duration_min")):
        v = getattr(args, opt)
        if v is None:
            continue
        if args.rule != "stay":
            raise UsageError(f"--{opt} applies to --rule stay")
        if vary == name or (vary is None and name == "distance_m"):
            raise UsageError(f"--{opt} is the swept parameter; fix the other one (or use --vary)")
        fixed[name] = v
    return vary, fixed


def _schemes(text: str | None) -> tuple[str, ...]:
    if not text:
        return ALL_SCHEMES
    out = tuple(s.strip() for s in text.split(",") if s.strip())
    bad = [s for s in out if s not in ALL_SCHEMES]
    if bad or not out:
        raise UsageError(f"unknown scheme {', '.join(map(repr, bad)) or '(none)'}; choose from "
                         f"{','.join(ALL_SCHEMES)}")
    return tuple(s for s in ALL_SCHEMES if s in out)


def run(args: argparse.Namespace) -> int:
    vary, fixed = rule_options(args)
    schemes = _schemes(args.schemes)
    size = args.size if args.plot else None
    check_outputs(args, (args.csv, "CSV"), (args.plot, "plot"))
    sel = load_selection(args)
    progress = None
    if sys.stderr.isatty() and not args.json:
        def progress(done: int, total: int) -> None:
            print(f"\revaluating… {100 * done // max(total, 1):3d}%", end="", file=sys.stderr, flush=True)
    result = evaluate(sel.series, sel.settings, args.percentages,
                      placement=None if args.rule else (args.placement or "uniform"), rule=args.rule,
                      vary=vary, rule_params=fixed, runs=args.runs, seed=args.seed, schemes=schemes,
                      progress=progress, denoise=args.denoise == "both")
    if progress is not None:
        print("\r" + " " * 24 + "\r", end="", file=sys.stderr, flush=True)
    written = []
    if args.csv:
        try:
            result.write_csv(args.csv)
        except OSError as e:
            raise ValueError(f"{args.csv}: cannot write the CSV ({e.strerror or e})") from None
        written.append(args.csv)
    if args.plot:
        from ..ui.views.evalplot import render_png

        assert size is not None
        try:
            shown = result.denoised_result() if result.denoised else result
            title = args.title or (f"{result.name}, ε = {result.epsilon:g}: denoised releases"
                                   if result.denoised else None)
            render_png(shown, args.plot, size=size, scale=args.scale, title=title)
        except OSError as e:
            raise ValueError(f"{args.plot}: cannot write the plot ({getattr(e, 'strerror', None) or e})") from None
        written.append(args.plot)
    if args.json:
        d = result.to_dict()
        d["input"] = args.input
        d["written"] = written
        d.pop("elapsed_s", None)
        print(json.dumps(d, indent=2))
        return 0
    print(f"{args.input}: {result.n} events, ε = {result.epsilon:g}, landmarks from the {result.source}; "
          f"MAE ({result.unit}) over {result.runs_done} runs, mean ± std" +
          (" (raw, then denoised)" if result.denoised else ""))
    print(result.table_text())
    if result.constant_line():
        print(result.constant_line())
    for w in written:
        print(f"wrote {w}")
    return 0
