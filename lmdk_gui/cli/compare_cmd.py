"""``lmdk compare``: every scheme side by side on one series and landmark set.

With ``--dummies GENERATOR`` each scheme is shown twice: on the landmarks with ε, and hidden among dummy
landmarks (thesis §4.2) on ``L'`` with ``ε − ε_sel``. The "with dummies" line's landmark sum and verdict
are checked against ``L'`` and ``ε − ε_sel``; its MAE averages runs that each draw a new selection and new
noise (the "without" line's runs use the same noise), as in the thesis' Figure 5.6.

The "best" marker is :func:`~lmdk_gui.core.analysis.advice.best_scheme` (the export dialog's pre-selection): the passing,
informative scheme with the lowest MAE, among the lines an export with the same options would publish (with
dummies: the "+ dummies" lines). Informative: the expected error is clearly below ``constant_error``, the error of
publishing the series' median (geometric median, mode) at every event (:func:`~lmdk_gui.core.analysis.metrics.constant_error`);
with no informative scheme ``best`` is null and the table says so. Every MAE comes with its spread over the R
runs, the 10th–90th percentiles (``mae_p10``/``mae_p90``, ``mae_denoised_p10``/``mae_denoised_p90``). ``--target-error X`` (or ``5%`` of the data's range) adds, per landmark-private
scheme, the smallest ε on a 24-point log grid 0.01…100 whose MAE over R runs meets X
(:func:`~lmdk_gui.core.analysis.accuracy.epsilon_for_error`, the window's "What ε do I need?").
``--denoise both`` (default) also denoises every release (post-processing of the released values, budgets
and public settings, :mod:`lmdk_gui.core.analysis.denoise`) and reports ``mae_denoised`` next to ``mae``; ``on``
shows only the denoised error in the table (the JSON keeps both); ``off`` skips it. The "best" marker and
``--target-error`` rank by the error of what ``lmdk export`` would publish: the denoised error unless
``--denoise off`` (``error_field`` in the JSON's ``target_error``; ``best_error_field`` at the top).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from ..core.analysis import accuracy, advice
from ..core.analysis.metrics import constant_error, share, spread_text, unit_label
from ..core.engine.preview import NoiseCache, Snapshot, compute_average, compute_preview
from ..core.engine.release import normalize_landmarks
from ..core.kernel.settings import ALL_SCHEMES, SCHEME_LABELS
from .common import add_release_options, dummy_settings, load_selection, runs_type, seed_type, series_command


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = series_command(sub, "compare", run, help="compare the schemes' budgets and errors",
                       description="For uniform, skip, adaptive, balanced and the event/user baselines: landmark sum and "
                       "verdict, mean ε_t, share of approximated events, and MAE averaged over R runs; with "
                       "--dummies, each scheme also with dummy landmarks.")
    add_release_options(p)
    p.add_argument("--runs", type=runs_type, default=20, metavar="R", help="runs to average the MAE over (default 20)")
    p.add_argument("--seed", type=seed_type, default=0, metavar="N", help="seed of the simulated noise (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--target-error", metavar="X", default=None,
                   help="also print, per scheme, the smallest ε (log grid 0.01–100) whose MAE over R runs is at "
                   "most X (in the data's units, e.g. 5%% of the data's range, or 'informative': clearly below "
                   "publishing one constant, which also caps any larger X); computed on this data, so "
                   "choosing ε from it is not itself private")
    p.add_argument("--denoise", choices=("both", "on", "off"), default="both",
                   help="error of the denoised releases (post-processing; changes no guarantee) next to the raw "
                   "error (both, default), instead of it in the table (on), or not at all (off)")


def _row(r, stats, epsilon: float, denoise: bool = True) -> dict:
    row = {
        "landmark_sum": r.guarantee.worst,
        "epsilon": epsilon,
        "guarantee_holds": r.guarantee.holds,
        "mean_epsilon_t": r.mean_budget,
        "approximated_share": r.approximated_share,
        "mae": stats.mean,
        "mae_std": stats.std,
        "mae_p10": stats.p10,
        "mae_p90": stats.p90,
        "runs": stats.runs,
    }
    if denoise:
        row["mae_denoised"] = stats.mean_denoised
        row["mae_denoised_std"] = stats.std_denoised
        row["mae_denoised_p10"] = stats.p10_denoised
        row["mae_denoised_p90"] = stats.p90_denoised
    return row


def mark_informative(rows: list[dict], yardstick: float, error_field: str) -> None:
    """Each row (and its "+ dummies" line) gets ``informative``: its ``error_field`` clearly below the
    yardstick (:func:`~lmdk_gui.core.analysis.advice.informative`)."""
    for r in rows:
        for line in (r, r.get("with_dummies")):
            if line is not None:
                line["informative"] = advice.informative(advice.errors_of({"x": line}, error_field)["x"], yardstick)


def compare(sel, runs: int, seed: int, dummies=None) -> list[dict]:
    """One dict per scheme; with ``dummies``, each also has ``"with_dummies"`` (same keys, ``epsilon`` being
    the release's ε − ε_sel the check ran against). Use :func:`compare_with_dummies` for the selection too."""
    return compare_with_dummies(sel, runs, seed, dummies)[0]


def compare_with_dummies(sel, runs: int, seed: int, dummies=None) -> tuple[list[dict], dict | None]:
    """The window's preview and average (:func:`~lmdk_gui.core.engine.preview.compute_preview` /
    :func:`~lmdk_gui.core.engine.preview.compute_average`) on seed ``seed`` and dummy draw 0."""
    snap = Snapshot(sel.series, normalize_landmarks(sel.landmarks, sel.series.n), sel.settings, seed, runs,
                    dummies=dummies)
    preview = compute_preview(snap, NoiseCache())
    assert preview is not None  # never cancelled here
    if preview.dummy_error:  # the generator refuses (Optimal beyond its limit): one clear message
        raise ValueError(preview.dummy_error)
    average = compute_average(snap, preview.options)
    assert average is not None
    info = None
    chosen = preview.selection
    if chosen is not None:
        assert dummies is not None
        info = {**dummies.to_dict(), "epsilon_selection": chosen.epsilon_selection,
                "epsilon_release": chosen.epsilon_remaining, "dummies_this_seed": int(chosen.dummies.size),
                "landmarks_with_dummies_this_seed": int(chosen.landmarks.size),
                "mean_landmarks_with_dummies": average.dummy_size}
    rows = []
    dn = sel.settings.denoise
    for s in ALL_SCHEMES:
        row = {"scheme": s, **_row(preview.plain[s].release, average.plain[s], sel.settings.epsilon, dn)}
        if chosen is not None:
            row["with_dummies"] = _row(preview.preview[s].release, average.average[s], chosen.epsilon_remaining,
                                       dn)
        rows.append(row)
    return rows, info


def error_field(denoise: str) -> str:
    """The error "best" and ``--target-error`` rank by: that of what ``lmdk export`` publishes with the same
    choice (denoised by default, raw with ``--denoise off`` / ``--no-denoise``)."""
    return "mae" if denoise == "off" else "mae_denoised"


def best_of(rows: list[dict], error_field: str = "mae", yardstick: float | None = None) -> str | None:
    """The advice on ``compare``'s rows: with dummies, among the "+ dummies" lines (what an export with the
    same options publishes); only informative ones when ``yardstick`` is given."""
    pub = {r["scheme"]: r.get("with_dummies", r) for r in rows}
    return advice.best_scheme({s: r["guarantee_holds"] for s, r in pub.items()},
                              advice.errors_of(pub, error_field), yardstick)


def target_table(sel, target: str, runs: int, seed: int, error_field: str = "mae") -> dict:
    """``--target-error``: {"target", "requested", "informative_target", "grid", "smallest": scheme → ε or None,
    "errors": scheme → [MAE per ε]}. A requested target above the informative one (a constant meets it) is
    lowered to it (:func:`~lmdk_gui.core.analysis.accuracy.planner_target`)."""
    inf = accuracy.informative_target(sel.series)
    requested = accuracy.parse_target(target, advice.data_range(sel.series, sel.settings), inf)
    value, _lowered = accuracy.planner_target(requested, sel.series)
    assert value is not None
    res = accuracy.epsilon_for_error(sel.series, sel.landmarks, sel.settings, value, runs=runs, seed=seed,
                                     error_field=error_field)
    assert res is not None  # never cancelled here
    return {"target": value, "requested": requested, "informative_target": inf, "error_field": error_field,
            "grid": res.curves.grid.tolist(),
            "smallest": res.smallest,
            "errors": {s: [None if not np.isfinite(e) else float(e) for e in v]
                       for s, v in res.curves.errors.items()}}


def _print_target(t: dict, unit: str, runs: int) -> None:
    top = t["grid"][-1]
    what = "of the denoised release, " if t["error_field"] == "mae_denoised" else ""
    if t["requested"] > t["target"]:
        print(f"\nthe target {advice.fmt(t['requested'], unit)} is met by publishing one constant: planning for "
              f"{advice.fmt(t['target'], unit)} instead ({advice.INFORMATIVE_RATIO:g} × the constant's error)", end="")
    print(f"\nsmallest ε meeting an expected error ≤ {advice.fmt(t['target'], unit)} ({what}mean over {runs} runs, "
          f"log grid {t['grid'][0]:g}–{top:g}); computed on this data: choosing ε from it is not itself private")
    for s, eps in t["smallest"].items():
        print(f"  {SCHEME_LABELS[s]:<12} {'not reached ≤ ' + format(top, 'g') if eps is None else f'ε = {eps:.3g}'}")


def run(args: argparse.Namespace) -> int:
    if args.runs < 1:
        raise ValueError("--runs must be at least 1")
    dummies = dummy_settings(args)
    sel = load_selection(args)
    sel.settings = sel.settings.with_(denoise=args.denoise != "off")
    field = error_field(args.denoise)
    target = None
    if args.target_error is not None:
        try:
            target = target_table(sel, args.target_error, args.runs, args.seed, field)
        except ValueError as e:
            raise ValueError(f"--target-error: {e}") from None
    rows, info = compare_with_dummies(sel, args.runs, args.seed, dummies)
    unit = unit_label(sel.series)
    yardstick = constant_error(sel.series)
    mark_informative(rows, yardstick, field)
    best = best_of(rows, field, yardstick)
    if args.json:
        doc = {"input": args.input, "rows": sel.series.n, "kind": sel.series.kind,
               "landmarks": int(len(sel.landmarks)), "epsilon": sel.settings.epsilon,
               "mae_unit": unit, "constant_error": yardstick, "informative_ratio": advice.INFORMATIVE_RATIO,
               "best": best, "best_error_field": field, "schemes": rows}
        per = sel.series.periods
        if per is not None:  # (--resample: "rows" and "landmarks" count periods)
            doc.update(resolution=per.resolution, aggregate=per.aggregate,
                       events=int(sel.events.n) if sel.events is not None else None)
        if info is not None:
            doc["dummies"] = info
        if target is not None:
            doc["target_error"] = target
        print(json.dumps(doc, indent=2))
        return 0
    _print_table(args, sel, rows, info, unit, best)
    if target is not None:
        _print_target(target, unit, args.runs)
    return 0


def _print_table(args, sel, rows: list[dict], info: dict | None, unit: str, best: str | None) -> None:
    n = sel.series.n
    per = sel.series.periods
    k = len(sel.landmarks)
    if per is None:
        what = f"{n} events, {k} landmarks"
    else:  # --resample: the schemes see the periods
        what = (f"{n} periods of one {per.label} (the {per.aggregate} of {sel.events.n if sel.events else '?'} "
                f"events), {k} landmark period{'s' if k != 1 else ''}")
    print(f"{args.input}: {what} ({share(k, n)}), ε = {sel.settings.epsilon:g}, MAE over {args.runs} runs")
    if info is not None:
        print(f"dummy landmarks: {info['generator']}, {info['utility']} utility, ε_sel = "
              f"{info['epsilon_selection']:.4g} ({100 * info['share']:g}% of ε); the '+ dummies' lines use L' and "
              f"ε − ε_sel = {info['epsilon_release']:.6g}; |L'| = {info['landmarks_with_dummies_this_seed']} "
              f"with this seed, {info['mean_landmarks_with_dummies']:.1f} on average over the runs")
    if info is None:  # the table as it always was
        head = (f"{'scheme':<12} {'landmark sum':>13} {'verdict':>8} {'mean ε_t':>10} {'approx.':>8}"
                f"{_error_head(args.denoise, unit)} {'best':>5}")
        print(head)
        print("-" * len(head))
        for r in rows:
            verdict = "pass" if r["guarantee_holds"] else "FAIL"
            print(f"{SCHEME_LABELS[r['scheme']]:<12} {r['landmark_sum']:>13.6g} {verdict:>8} "
                  f"{r['mean_epsilon_t']:>10.4g} {100 * r['approximated_share']:>7.1f}%{_errors(args.denoise, r)} "
                  f"{'◀' if r['scheme'] == best else '':>5}")
        _print_best(best, rows, sel, unit, error_field(args.denoise))
        return
    head = (f"{'scheme':<22} {'landmark sum':>13} {'vs ε':>9} {'verdict':>8} {'mean ε_t':>10} {'approx.':>8}"
            f"{_error_head(args.denoise, unit)} {'best':>5}")
    print(head)
    print("-" * len(head))

    def line(label: str, r: dict, mark: bool = False) -> None:
        ok = r["guarantee_holds"]
        vs = f"{'≤' if ok else '>'} {r['epsilon']:.4g}"
        print(f"{label:<22} {r['landmark_sum']:>13.6g} {vs:>9} {'pass' if ok else 'FAIL':>8} "
              f"{r['mean_epsilon_t']:>10.4g} {100 * r['approximated_share']:>7.1f}%{_errors(args.denoise, r)} "
              f"{'◀' if mark else '':>5}")

    for r in rows:
        line(SCHEME_LABELS[r["scheme"]], r)
        line(f"  {SCHEME_LABELS[r['scheme']]} + dummies", r["with_dummies"], r["scheme"] == best)
    _print_best(best, rows, sel, unit, error_field(args.denoise))


def _print_best(best: str | None, rows: list[dict], sel, unit: str, field: str = "mae") -> None:
    print(f"constant yardstick: {advice.constant_sentence(sel.series, constant_error(sel.series), unit)} "
          f"(a scheme is informative at ≤ {advice.INFORMATIVE_RATIO:g} × this; computed on the true data, "
          "never published)")
    if best is None:
        pub = [r.get("with_dummies", r) for r in rows]
        if any(r["guarantee_holds"] for r in pub):
            print(f"best: none. {advice.none_informative(sel.series, unit)}")
        else:
            print("best: none (no scheme passes the landmark-sum check)")
        return
    r = next(x for x in rows if x["scheme"] == best)
    r = r.get("with_dummies", r)
    what = "denoised MAE" if field == "mae_denoised" else "MAE"
    print(f"best: {SCHEME_LABELS[best]} (the passing, informative scheme with the lowest {what}, "
          f"{advice.fmt(r[field], unit)})")


#: width of an error column: "mean (p10–p90)"
_ERR_W = 24


def _error_head(mode: str, unit: str) -> str:
    raw = f" {'MAE (p10–p90) ' + unit:>{_ERR_W}}"
    den = f" {'denoised (p10–p90) ' + unit:>{_ERR_W}}"
    return {"off": raw, "on": den, "both": raw + den}[mode]


def _errors(mode: str, r: dict) -> str:
    raw = f" {spread_text(r['mae'], r['mae_p10'], r['mae_p90'], 4):>{_ERR_W}}"
    if mode == "off":
        return raw
    den = f" {spread_text(r['mae_denoised'], r['mae_denoised_p10'], r['mae_denoised_p90'], 4):>{_ERR_W}}"
    return den if mode == "on" else raw + den
