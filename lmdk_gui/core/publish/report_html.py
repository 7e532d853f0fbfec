"""The release report's HTML page (issue 45): :func:`render_report`.

One file, no network: the styles are inline and the figure is inline SVG (:mod:`.report_svg`). Everything
in the public part comes from :class:`~.report.PublicRelease` — the release and its sidecar — and the page
says so in its footer; the private section (:class:`~.report.PrivateFacts`) appears only when passed.
"""

from __future__ import annotations

import math
import re
from html import escape
from typing import Any

import numpy as np

from ... import __version__
from ..kernel.settings import SCHEME_LABELS
from .report import (
    PrivateFacts,
    PublicRelease,
    figure,
    keep_probability,
    narrowest,
    noise_half_width,
    release_epsilon,
)

__all__ = ["render_report"]

SCHEME_WORDS = {
    "uniform": "every event gets the same share of ε",
    "skip": "every landmark repeats the value released before it; the other events get all of ε",
    "adaptive": "some events repeat the previous value to save budget for the others",
    "balanced": "landmarks and the other events get different shares of ε",
    "event": "event-level privacy: each event protected on its own, landmarks not together",
    "user": "user-level privacy: ε shared by all events",
}

STYLE = """
body { font-family: -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #1f2933;
       max-width: 920px; margin: 24px auto; padding: 0 20px; line-height: 1.45; font-size: 15px; }
h1 { font-size: 24px; margin: 0 0 4px 0; }
h2 { font-size: 18px; margin: 26px 0 8px 0; border-bottom: 1px solid #d5dbe1; padding-bottom: 3px; }
.sub { color: #52606d; margin: 0 0 12px 0; }
.statement { background: #f0f4f8; border-left: 4px solid #1565c0; padding: 10px 14px; }
table.facts { border-collapse: collapse; width: 100%; }
table.facts th { text-align: left; vertical-align: top; width: 190px; padding: 4px 10px 4px 0;
                 font-weight: 600; color: #334e68; }
table.facts td { padding: 4px 0; vertical-align: top; }
table.facts tr + tr th, table.facts tr + tr td { border-top: 1px solid #eef1f4; }
.figure { margin: 8px 0 0 0; line-height: 100%; }
.figure svg { max-width: 100%; height: auto; }
.caption { color: #334e68; font-size: 14px; margin-top: 2px; }
.private { border: 3px solid #c62828; background: #fff5f5; padding: 4px 16px 12px 16px; margin-top: 28px; }
.private h2 { color: #c62828; border-bottom-color: #f3b5b5; }
.stamp { color: #c62828; font-weight: 700; letter-spacing: 0.05em; }
footer { margin-top: 30px; color: #52606d; font-size: 13px; border-top: 1px solid #d5dbe1; padding-top: 8px; }
"""


def _g(x: Any) -> str:
    try:
        return f"{float(x):.4g}"
    except (TypeError, ValueError):
        return escape(str(x))


def _odds(eps: float) -> str:
    return f"{math.exp(eps):.3g}" if eps < 700 else "astronomically large"


def _fact_rows(rel: PublicRelease) -> list[tuple[str, str]]:
    """(label, HTML) rows of the facts table, for the sidecar fields that are present."""
    d = rel.sidecar
    rows: list[tuple[str, str]] = []
    eps = float(d.get("epsilon") or 0.0)
    rows.append(("Privacy budget ε", f"{_g(eps)} — anyone's odds about a protected change can move by at most "
                                      f"a factor e<sup>ε</sup> ≈ {_odds(eps)}"))
    sel = d.get("epsilon_selection")
    if isinstance(sel, dict):
        rows.append(("Dummy landmarks", f"added ({escape(str(sel.get('generator', '?')))} generator) to hide "
                     f"which events are landmarks; ε = {_g(sel.get('epsilon'))} of the budget chose them, the "
                     f"values got ε = {_g(release_epsilon(d))}"))
    scheme = str(d.get("scheme") or "?")
    rows.append(("Scheme", f"{escape(SCHEME_LABELS.get(scheme, scheme))} — {escape(SCHEME_WORDS.get(scheme, ''))}"
                 .rstrip(" —")))
    units = d.get("units")
    if rel.kind == "numeric" and d.get("sensitivity") is not None:
        u = f" {escape(str(units))}" if units else ""
        rows.append(("Protected change", f"up to Δ = {_g(d['sensitivity'])}{u} in one event's value"))
    elif rel.kind == "location" and d.get("radius_m") is not None:
        rows.append(("Protected change", f"a move of one position by up to r = {_g(d['radius_m'])} m"))
    elif rel.kind == "categorical":
        rows.append(("Protected change", "any change of one event's category"))
    b = d.get("bounds")
    if isinstance(b, list | tuple) and len(b) == 2:
        origin = " (taken from the data itself)" if d.get("bounds_from_data") else ""
        rows.append(("Bounds", f"{_g(b[0])} to {_g(b[1])}{' ' + escape(str(units)) if units else ''}: values "
                     f"outside were clamped to them before noise{origin}"))
    cats = d.get("categories")
    if cats:
        shown = ", ".join(escape(str(c)) for c in cats[:20]) + (f", … ({len(cats)} in all)" if len(cats) > 20 else "")
        origin = " — the data's own list, published with the release" if d.get("categories_from_data") else ""
        rows.append(("Categories", shown + origin))
    if rel.first_last is not None:
        span = f"{escape(rel.first_last[0])} to {escape(rel.first_last[1])}"
        if re.fullmatch(r"[\d.]+", rel.first_last[0].strip()):  # epoch seconds: say the dates too
            span += f" (epoch seconds: {_utc(rel.seconds[0])} to {_utc(rel.seconds[-1])} UTC)"
        rows.append(("Period covered", span))
    rows.append(("Events", f"{int(d.get('rows_released') or rel.n):,}"))
    post = d.get("post_processing")
    rows.append(("Values written", "smoothed (denoised) from the noisy release alone, method "
                 f"<code>{escape(str(post.get('method', '?')))}</code>; the guarantee is the release's"
                 if isinstance(post, dict) else "the raw noisy values (not smoothed)"))
    if d.get("noise_backend"):
        rows.append(("Noise", escape(str(d["noise_backend"])) + ("; made with a secret key kept by the data "
                     "holder (the same release can be made again)" if d.get("seeded") else
                     "; fresh randomness from the operating system")))
    if "guarantee_holds" in d:
        lsum = f" (worst landmark sum ≤ {_g(d['landmark_sum'])})" if d.get("landmark_sum") is not None else ""
        rows.append(("Landmark-sum check", ("passed" if d["guarantee_holds"] else "FAILED") + lsum))
    extra = [c for c in (d.get("columns") or [])[2 if rel.kind != "location" else 3:] if c in ("epsilon",
                                                                                                  "approximated")]
    if extra:
        rows.append(("Extra columns", f"{', '.join(extra)}: they show where the landmarks are"))
    rows.append(("Made with", f"lmdk {escape(str(d.get('tool_version', '?')))}"
                 + (f", {escape(str(d['created']))}" if d.get("created") else "")
                 + (f" (format {escape(str(d['format']))})" if d.get("format") else "")))
    return rows


def _utc(seconds: float) -> str:
    return str(np.datetime64(int(round(float(seconds))), "s")).replace("T", " ")


def _statement(text: str) -> str:
    """The sidecar's paragraph, with its "Not protected" list as bullets when it has the usual shape."""
    head, sep, tail = text.partition(" Not protected: ")
    if not sep:
        return f'<p class="statement">{escape(text)}</p>'
    items, dot, after = tail.partition(". ")
    bullets = "".join(f"<li>{escape(i.strip().rstrip('.'))}</li>" for i in items.split("; ") if i.strip())
    return (f'<p class="statement">{escape(head)}</p><p><b>Not protected:</b></p><ul>{bullets}</ul>'
            + (f"<p>{escape(after.strip())}</p>" if dot and after.strip() else ""))


def _caption(rel: PublicRelease) -> str:
    d = rel.sidecar
    hw = noise_half_width(rel)
    # Legend keys are coloured characters, not styled boxes: Qt's rich-text engine (the PDF) draws text only.
    keys = [("●", "#1565c0", "released values (raw, noisy)") if rel.raw else
            ("━", "#1565c0", "released values (smoothed)")]
    if hw is not None and rel.kind == "numeric":  # (a track's noise circle is labelled in the figure)
        keys.append(("■", "#90caf9", "noise band"))
    if rel.kind == "numeric" and d.get("bounds"):
        keys.append(("╌", "#1f2933", "public bounds"))
    legend = " &nbsp; ".join(f'<span style="color:{c}">{k}</span> {t}' for k, c, t in keys)
    parts = [legend]
    units = d.get("units")
    if rel.kind == "numeric" and hw is not None:
        per = ("each event's own budget (the release's epsilon column)" if rel.budgets is not None else
               f"the whole budget ε = {_g(release_epsilon(d))}, the most any event can get")
        width = "" if rel.budgets is not None else f" ±{_g(hw)}{' ' + escape(str(units)) if units else ''}"
        parts.append(f"The band{width} around the released values: a raw noisy value lies within this distance "
                     f"of the true value 9 times in 10 at {per}"
                     + ("; events given a smaller share of ε (the release does not say which) have wider noise, "
                        "so the real spread can be larger" if rel.budgets is None else "")
                     + (", clipped to the public bounds" if d.get("bounds") else "") + "."
                     + ("" if rel.raw else " The smoothed line is usually closer to the truth than a raw value, "
                        "but the release alone cannot say how much closer."))
    elif rel.kind == "location" and hw is not None:
        r90 = narrowest(hw)
        parts.append(f"Green dot: first position, red dot: last. A raw position lies within {_g(r90)} m of the "
                     f"true one 9 times in 10 at the whole budget ε = {_g(release_epsilon(d))} (the circle, drawn "
                     "when it fits); events given a smaller share of ε stray further."
                     + ("" if rel.raw else " The smoothed track is usually closer than that."))
    elif rel.kind == "categorical":
        p = keep_probability(rel)
        if p is not None:
            parts.append(("Each" if rel.raw else "Before smoothing, each") + " released category is the true one "
                         f"with probability at most {p:.0%} (at the whole budget ε); otherwise it is one of the other "
                         "categories, chosen at random." + ("" if rel.raw else " The smoothed categories are "
                                                            "usually right more often."))
    return "<br>".join(parts)


def _how_to_read(rel: PublicRelease) -> str:
    d = rel.sidecar
    eps = float(d.get("epsilon") or 0.0)
    items = [
        f"<b>ε as odds.</b> Whatever someone believed about a protected change before seeing this file — say "
        f"even odds that one value was high rather than low — the file can move those odds by at most a factor "
        f"e<sup>ε</sup> ≈ {_odds(eps)} (here from 1:1 to at most {_odds(eps)}:1). Smaller ε, stronger protection, "
        "noisier values.",
    ]
    if rel.kind == "numeric":
        items.append("<b>Odd values are expected.</b> Noise is added to every value, so a value can be negative or "
                     "larger than anything real, and a single value says little. "
                     + ("Flat stretches are repeated values: the scheme republishes the previous value at some "
                        "events. " if d.get("scheme") in ("skip", "adaptive") else "")
                     + ("A smoothed line can be nearly flat where the noise is large: the smoother then trusts "
                        "the overall level more than any single value." if not rel.raw else ""))
    elif rel.kind == "location":
        items.append("<b>Odd positions are expected.</b> Each position was moved at random, often by more than "
                     "the protected radius, so points can jump off roads or into the sea.")
    else:
        items.append("<b>Odd categories are expected.</b> Some released categories were replaced at random, so "
                     "a single event's category says little.")
    items += [
        "<b>What you can learn:</b> patterns over many events — the overall level, long trends, the period "
        "covered and how many events there are.",
        "<b>What you cannot learn</b> (within the protected change above): any single event's true value, or "
        "whether it and the events marked as landmarks were different. The “not protected” list above says "
        "what is published as it is.",
    ]
    return "<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"


def _private(p: PrivateFacts) -> str:
    u = f" {escape(p.unit)}" if p.unit and p.unit != "share of events" else ""

    def err(x: float) -> str:
        return f"{x:.1%} of events" if p.unit == "share of events" else f"{_g(x)}{u}"

    ratio = f" ({p.mae / p.yardstick:.2g}× the yardstick)" if p.yardstick and math.isfinite(p.mae) else ""
    comp = ("not in the ledger on this computer" if not p.releases else
            f"{p.releases} release{'s' if p.releases != 1 else ''} of this input, composed ε = "
            f"{_g(p.composed_epsilon)} for anyone holding all of them")
    rule = escape(p.rule) if p.rule else "none recorded (marked by hand or from a list)"
    error = (f"{p.mae:.1%} of events released with another category{ratio}" if p.unit == "share of events" else
             f"mean {err(p.mae)}{ratio}; half the events within {err(p.median)}, nine in ten within {err(p.p90)}")
    rows = [
        ("Input", escape(p.input_name)),
        ("Error of this release", error),
        ("Constant yardstick", f"{err(p.yardstick)}: the error of publishing the series' "
                               f"{'most common category' if p.unit == 'share of events' else 'median'} at every "
                               "event — a release with a larger error tells less than that constant"),
        ("Landmarks", f"{p.landmarks:,}; rule: {rule}" if p.landmarks is not None else
         "not given (lmdk report: --landmarks or --landmark-rows)"),
        ("Releases of this input", comp),
    ]
    body = "".join(f"<tr><th>{a}</th><td>{b}</td></tr>" for a, b in rows)
    return (f'<section class="private" id="private"><h2><span class="stamp">PRIVATE — DO NOT PUBLISH</span>: '
            f"how close the release is to your data</h2><p>Computed from the original data, which this section "
            f"reveals about. Keep it with the data; remove it before handing the report on.</p>"
            f'<table class="facts">{body}</table></section>')


def render_report(rel: PublicRelease, private: PrivateFacts | None = None) -> str:
    """The report page for ``rel`` (with the private section when ``private`` is given)."""
    d = rel.sidecar
    kind_words = {"numeric": "a numeric time series", "location": "a location track",
                  "categorical": "a series of categories"}.get(rel.kind, rel.kind)
    facts = "".join(f"<tr><th>{a}</th><td>{b}</td></tr>" for a, b in _fact_rows(rel))
    statement = _statement(str(d["statement"])) if d.get("statement") else ""
    footer = (f"This report was made by lmdk {escape(__version__)} from the public release "
              f"<code>{escape(rel.path.name)}</code> and its sidecar <code>{escape(rel.path.name)}.json</code> "
              "only: nothing else was read" + (", except for the section marked private, which was computed "
                                               "from the original data." if private else
                                               ", so it can be published with them."))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Release report — {escape(rel.path.name)}</title><style>{STYLE}</style></head><body>"
        f"<h1>What was published, and how it is protected</h1>"
        f'<p class="sub">A differentially private release of {kind_words}: <code>{escape(rel.path.name)}</code>'
        f"</p><h2>In plain words</h2>{statement}"
        f'<h2>The numbers</h2><table class="facts">{facts}</table>'
        f'<h2>The released series</h2><div class="figure">{figure(rel)}</div><p class="caption">{_caption(rel)}</p>'
        f"<h2>How to read this</h2>{_how_to_read(rel)}"
        + (_private(private) if private is not None else "")
        + f"<footer>{footer}</footer></body></html>\n"
    )
