"""``lmdk landmarks``: propose landmarks with a suggestion rule and write them as a landmark file.

The file is the format ``lmdk export --landmarks`` reads (``timestamp,row,rule``: the rule's label in the last
column, so that the export says that the landmarks tell about the values). Without ``-o`` the command
prints how many events the rule selects and the first few timestamps.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..argtypes import finite, path_arg
from ..core.analysis.suggestions import RULES, apply_rule, rule_for_percentage
from ..core.data.landmark_files import write_landmark_file
from ..core.publish.writers import format_timestamps
from . import UsageError
from .common import check_outputs, load_input, series_command

#: command-line option -> (rule, parameter)
_OPTIONS = {
    "below": ("threshold", "below"),
    "above": ("threshold", "above"),
    "distance": ("stay", "distance_m"),
    "duration": ("stay", "duration_min"),
    "values": ("category", "values"),
    "penalty": ("changepoints", "penalty"),
}
_SHOWN = 5
#: percentage points between --target and the closest setting's share above which the command says so
TARGET_MISS = 1.0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = series_command(
        sub, "landmarks", run, help="propose landmarks with a rule (threshold, stay points, categories, change points)",
        description="Propose landmarks with a suggestion rule and print their number, or write them with -o "
        "as a landmark file for 'lmdk export --landmarks'. Rules: threshold (numeric: values strictly below "
        "--below and/or strictly above --above), stay (location: Li et al. 2008 stay points, within "
        "--distance metres for at least --duration minutes), category (categorical: --values a,b), "
        "changepoints (numeric: first event after each mean shift; --penalty in units of the noise "
        "variance, default 2·ln n). --target P instead finds the setting closest to P%% landmarks.")
    g = p.add_argument_group("rule")
    g.add_argument("--rule", required=True, choices=tuple(RULES), help="suggestion rule")
    add_rule_options(g)
    g.add_argument("--target", type=finite, metavar="PERCENT",
                   help="find the rule's main parameter (threshold: --below, or --above if given; stay: "
                   "--distance; category: --values; changepoints: --penalty) that comes closest to this "
                   "percentage of landmarks; the other parameters keep the values given")
    o = p.add_argument_group("output")
    o.add_argument("-o", "--output", type=path_arg, metavar="FILE", help="write the landmark file (timestamp,row,rule) here")
    o.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    o.add_argument("--json", action="store_true", help="print a JSON summary instead of text")


def add_rule_options(g) -> None:
    """The parameters of the suggestion rules (shared with ``lmdk batch --rule``)."""
    g.add_argument("--below", type=finite, metavar="X", help="threshold: landmark when value < X")
    g.add_argument("--above", type=finite, metavar="X", help="threshold: landmark when value > X")
    g.add_argument("--distance", type=finite, metavar="M", help="stay: distance Δl in metres (default 200)")
    g.add_argument("--duration", type=finite, metavar="MIN", help="stay: duration Δt in minutes (default 30)")
    g.add_argument("--values", metavar="a,b", help="category: comma-separated category labels")
    g.add_argument("--penalty", type=finite, metavar="P",
                   help="changepoints: penalty per change, × noise variance (default 2·ln n)")


def rule_params(args: argparse.Namespace) -> dict[str, Any]:
    """The parameters given for ``args.rule`` (an option of another rule is a UsageError)."""
    params: dict[str, Any] = {}
    for opt, (rule, name) in _OPTIONS.items():
        v = getattr(args, opt)
        if v is None:
            continue
        if rule != args.rule:
            raise UsageError(f"--{opt} applies to --rule {rule}, not --rule {args.rule}")
        if opt == "values":
            v = [s.strip() for s in v.split(",") if s.strip()]
        params[name] = v
    if getattr(args, "target", None) is None:
        if args.rule == "threshold" and not params:
            raise UsageError("--rule threshold needs --below X and/or --above X (or --target PERCENT)")
        if args.rule == "category" and "values" not in params:
            raise UsageError("--rule category needs --values a,b (or --target PERCENT)")
    return params


def _fmt_params(params: dict[str, Any]) -> str:
    def one(v: Any) -> str:
        if isinstance(v, list | tuple):
            return ",".join(map(str, v))
        return f"{v:g}" if isinstance(v, float) else str(v)

    return ", ".join(f"{k}={one(v)}" for k, v in params.items() if v is not None) or "defaults"


def run(args: argparse.Namespace) -> int:
    params = rule_params(args)
    out = Path(args.output) if args.output else None
    check_outputs(args, (args.output, "landmark file"))
    series = load_input(args)
    rule = RULES[args.rule]
    if not rule.supports(series.kind):
        raise UsageError(f"--rule {args.rule} needs a {' or '.join(rule.kinds)} series; {args.input} was read "
                         f"as {series.kind} (see --kind and the column options)")
    if args.target is not None:
        vary = "above" if args.rule == "threshold" and "above" in params and "below" not in params else None
        fixed = {k: v for k, v in params.items() if k != (vary or rule.main)}
        params, rows = rule_for_percentage(series, rule, args.target, vary=vary, **fixed)
    else:
        rows = apply_rule(series, rule, **params)
        if args.rule == "changepoints" and "penalty" not in params:
            from ..core.analysis.suggestions import default_penalty

            params["penalty"] = default_penalty(series.n)
        elif args.rule == "stay":
            params = {"distance_m": params.get("distance_m", rule.param("distance_m").default),
                      "duration_min": params.get("duration_min", rule.param("duration_min").default)}
    n = series.n
    k = int(rows.size)
    pct = 100.0 * k / n if n else 0.0
    fmt = series.source.time_format if series.source is not None else "iso"
    fmt = "iso" if fmt == "date+hour" else fmt
    shown = [str(t) for t in format_timestamps(series.times[rows[:_SHOWN]], fmt)]
    if out is not None:
        try:
            write_landmark_file(out, series, rows, {rule.label})
        except OSError as e:  # name the file asked for, not the temporary one next to it
            raise ValueError(f"{out}: cannot write the landmark file ({e.strerror or e})") from None
    if args.json:
        print(json.dumps({"input": args.input, "rows": n, "kind": series.kind, "rule": args.rule,
                          "params": params, "landmarks": k, "percent": pct, "first": shown,
                          "output": str(out) if out is not None else None}, indent=2, ensure_ascii=False))
        return 0
    print(f"{args.input}: {k} of {n} events are landmarks ({pct:.2f}%) by rule {args.rule} "
          f"({_fmt_params(params)})")
    if args.target is not None and abs(pct - args.target) >= TARGET_MISS:
        # (stay points come in whole stays: on a bus ride 10 % was 0 % or 37.8 %, and an empty list was
        # written without a word)
        print(f"lmdk: note: no setting of the rule gives {args.target:g}% on this series; the closest gives "
              f"{pct:.2f}%" + (" (no landmarks at all)" if not k else ""), file=sys.stderr)
    if out is not None:
        print(f"wrote {out} (timestamp,row,rule; private: it lists the landmarks, and 'lmdk export' says that "
              "they were found by a rule on the values)")
    elif k:
        more = f" … and {k - _SHOWN} more" if k > _SHOWN else ""
        print("first landmarks: " + ", ".join(shown) + more)
    return 0
