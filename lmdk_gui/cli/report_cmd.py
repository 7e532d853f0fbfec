"""``lmdk report``: a self-contained HTML page on a release, for a board, an ethics committee or the data
subjects (:mod:`lmdk_gui.core.publish.report`).

The public report reads the release and its sidecar only. ``--private INPUT`` adds a section marked
"private — do not publish" computed from the original data as well (the error of the release against it,
the constant yardstick, the landmarks, the ledger's composed ε); INPUT is read with the release's own
columns and duplicates policy unless the selection options say otherwise.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..argtypes import path_arg


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write a self-contained HTML report on a release (to hand on)",
                       description="Write one HTML page describing RELEASE (a CSV written by lmdk export, "
                       "with its RELEASE.json sidecar): what is protected and what is not, the numbers, a "
                       "figure of the released series and how to read it.")
    p.add_argument("release", metavar="RELEASE", help="the release CSV (its sidecar RELEASE.json next to it)")
    p.add_argument("-o", "--output", type=path_arg, required=True, metavar="REPORT", help="HTML file to write")
    p.add_argument("--force", action="store_true", help="overwrite REPORT if it exists")
    g = p.add_argument_group("private section (do not publish)")
    g.add_argument("--private", type=path_arg, metavar="INPUT",
                   help="the release's input: adds a section marked private with the release's error "
                   "against it, the constant yardstick, the landmarks and the composed ε")
    g.add_argument("--landmarks", type=path_arg, metavar="FILE", help="the landmark list of the release "
                   "(a 'timestamp' or 'row' column; its 'rule' column names the rule that found them)")
    g.add_argument("--landmark-rows", metavar="ROWS", help="0-based landmark rows, e.g. 3,7,10-20")
    g.add_argument("--time-col", metavar="C", help="INPUT's time column (default: the release's)")
    g.add_argument("--value-col", metavar="C", help="INPUT's value column (default: the release's)")
    g.add_argument("--duplicates", metavar="POLICY", help="INPUT's duplicates policy (default: the sidecar's)")
    g.add_argument("--date-order", choices=("dmy", "mdy"),
                   help="INPUT's order of day and month in dates like 01/02/2013 (when they read either way)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..core.publish.guard import check_output
    from ..core.publish.report import read_release, write_report
    from ..core.publish.report_html import render_report
    from . import UsageError

    out = Path(args.output)
    if out.suffix.lower() == ".pdf":
        raise UsageError(f"{out}: lmdk report writes an HTML page; print it to PDF from a browser, or use the "
                         "app's File › Save release report… with a .pdf name")
    if out.resolve() in (Path(args.release).resolve(), Path(args.release + ".json").resolve()):
        raise UsageError(f"{out} is the release itself; choose another name for the report")
    # the one output guard (issue 42): never the release, its sidecar, the private input or the landmark
    # list (through any link), never a special file, an existing file only with --force
    check_output(out, (args.release, args.release + ".json", args.private, args.landmarks), force=args.force,
                 what="report", overwrite_hint="add --force to replace it")
    if (args.landmarks or args.landmark_rows) and not args.private:
        raise UsageError("--landmarks/--landmark-rows belong to the private section: give --private INPUT")
    rel = read_release(args.release)
    private = _private(args, rel) if args.private else None
    write_report(out, render_report(rel, private))
    note = " with a PRIVATE section (do not publish it)" if private else " (public: release and sidecar only)"
    print(f"wrote {out}{note}")
    return 0


def _private(args: argparse.Namespace, rel):
    import numpy as np

    from ..core.data.landmark_files import parse_row_spec, read_landmark_list
    from ..core.data.loader import load_series
    from ..core.publish.report import private_facts

    cols = list(rel.sidecar.get("columns") or [])
    opts: dict = {"kind": rel.kind, "duplicates": args.duplicates or rel.sidecar.get("duplicates") or "error"}
    opts["time_col"] = args.time_col or (cols[0] if cols else None)
    opts["date_order"] = args.date_order
    if rel.kind == "location" and len(cols) >= 3:
        opts["lat_col"], opts["lon_col"] = cols[1], cols[2]
    else:
        opts["value_col"] = args.value_col or (cols[1] if len(cols) > 1 else None)
    if rel.kind == "categorical" and rel.sidecar.get("categories") and not rel.sidecar.get("categories_from_data"):
        opts["categories"] = list(rel.sidecar["categories"])
    series = load_series(args.private, **{k: v for k, v in opts.items() if v is not None})
    rows = [np.zeros(0, dtype=np.int64)]
    rules: frozenset[str] = frozenset()
    if args.landmarks:
        from_file, rules = read_landmark_list(args.landmarks, series)
        rows.append(from_file)
    if args.landmark_rows:
        rows.append(parse_row_spec(args.landmark_rows, series.n))
    landmarks = np.unique(np.concatenate(rows)) if args.landmarks or args.landmark_rows else None
    return private_facts(rel, series, landmarks, rule=", ".join(sorted(rules)) or None)
