"""The release report's figure (issue 45): inline SVG drawn from the released values alone.

No plotting library: a report must be one self-contained HTML file, and numpy plus a few SVG elements draw
what a reader needs — the released line (numeric), the track (location) or the category steps
(categorical), faint raw points when the release holds raw noisy values, and the noise band the public
settings justify. Long releases are thinned for drawing only (min/max per pixel column for lines, every
k-th point for scatters), so a 10^7-event release still gives a page a browser opens at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import numpy as np

W, H = 880, 330  # the figure's size in CSS pixels
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 14, 40
INK, LINE, BAND, RAW, GRID = "#1f2933", "#1565c0", "#90caf9", "#607d8b", "#e3e7eb"
MAX_POINTS = 2400  # raw points drawn at most (a scatter thinned to every k-th point beyond)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi] (1, 2 or 5 times a power of ten apart)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(count, 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def _fmt_tick(v: float, step: float) -> str:
    digits = max(0, -int(math.floor(math.log10(step)))) if step > 0 else 0
    return f"{v:.{min(digits, 8)}f}"


class Frame:
    """Data → pixel mapping of one plot area, and the SVG elements drawn into it."""

    def __init__(self, x0: float, x1: float, y0: float, y1: float, width: int = W, height: int = H) -> None:
        if x1 <= x0:
            x0, x1 = x0 - 1.0, x1 + 1.0
        if y1 <= y0:
            pad = abs(y0) * 0.05 or 1.0
            y0, y1 = y0 - pad, y1 + pad
        self.x0, self.x1, self.y0, self.y1 = x0, x1, y0, y1
        self.width, self.height = width, height
        self.parts: list[str] = []

    def px(self, x):
        return LEFT + (np.asarray(x, dtype=float) - self.x0) / (self.x1 - self.x0) * (self.width - LEFT - RIGHT)

    def py(self, y):
        return TOP + (self.y1 - np.asarray(y, dtype=float)) / (self.y1 - self.y0) * (self.height - TOP - BOTTOM)

    def add(self, element: str) -> None:
        self.parts.append(element)

    def polyline(self, x, y, *, color: str, width: float = 1.5, opacity: float = 1.0, step: bool = False) -> None:
        px, py = self.px(x), np.clip(self.py(y), TOP - 2, self.height - BOTTOM + 2)
        if step and px.size > 1:  # horizontal, then vertical: a category holds until the next event
            px = np.repeat(px, 2)[1:]
            py = np.repeat(py, 2)[:-1]
        pts = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(px, py, strict=True))
        self.add(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="{width}" '
                 f'stroke-opacity="{opacity}" stroke-linejoin="round"/>')

    def band(self, x, lo, hi, *, color: str = BAND, opacity: float = 0.45) -> None:
        px = self.px(x)
        top = np.clip(self.py(hi), TOP, self.height - BOTTOM)
        bottom = np.clip(self.py(lo), TOP, self.height - BOTTOM)
        pts = [f"{a:.1f},{b:.1f}" for a, b in zip(px, top, strict=True)]
        pts += [f"{a:.1f},{b:.1f}" for a, b in zip(px[::-1], bottom[::-1], strict=True)]
        self.add(f'<polygon points="{" ".join(pts)}" fill="{color}" fill-opacity="{opacity}" stroke="none"/>')

    def points(self, x, y, *, color: str = RAW, opacity: float = 0.35, r: float = 1.6) -> None:
        px, py = self.px(x), self.py(y)
        keep = (py >= TOP) & (py <= self.height - BOTTOM)
        self.add(f'<g fill="{color}" fill-opacity="{opacity}">' + "".join(
            f'<circle cx="{a:.1f}" cy="{b:.1f}" r="{r}"/>' for a, b in zip(px[keep], py[keep], strict=True))
            + "</g>")

    def hline(self, y: float, *, color: str = INK, dash: str = "5 4", label: str = "") -> None:
        if not self.y0 <= y <= self.y1:
            return
        yy = float(self.py(y))
        self.add(f'<line x1="{LEFT}" x2="{self.width - RIGHT}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="{color}" '
                 f'stroke-dasharray="{dash}" stroke-width="1"/>')
        if label:
            self.add(f'<text x="{self.width - RIGHT - 4}" y="{yy - 4:.1f}" text-anchor="end" font-size="11" '
                     f'fill="{color}">{escape(label)}</text>')

    def y_axis(self, ticks: Sequence[float], labels: Sequence[str], title: str = "") -> None:
        for t, lab in zip(ticks, labels, strict=True):
            yy = float(self.py(t))
            self.add(f'<line x1="{LEFT}" x2="{self.width - RIGHT}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="{GRID}"/>')
            self.add(f'<text x="{LEFT - 6}" y="{yy + 4:.1f}" text-anchor="end" font-size="11" fill="{INK}">'
                     f"{escape(lab)}</text>")
        if title:
            mid = (TOP + self.height - BOTTOM) / 2
            self.add(f'<text transform="translate(14 {mid:.0f}) rotate(-90)" text-anchor="middle" font-size="12" '
                     f'fill="{INK}">{escape(title)}</text>')

    def x_axis(self, ticks: Sequence[float], labels: Sequence[str], title: str = "") -> None:
        base = self.height - BOTTOM
        self.add(f'<line x1="{LEFT}" x2="{self.width - RIGHT}" y1="{base}" y2="{base}" stroke="{INK}"/>')
        for t, lab in zip(ticks, labels, strict=True):
            xx = float(self.px(t))
            # the outer labels lean inwards, so that none is cut at the figure's edge
            anchor = "start" if xx - LEFT < 40 else "end" if self.width - RIGHT - xx < 40 else "middle"
            self.add(f'<line x1="{xx:.1f}" x2="{xx:.1f}" y1="{base}" y2="{base + 4}" stroke="{INK}"/>')
            self.add(f'<text x="{xx:.1f}" y="{base + 17}" text-anchor="{anchor}" font-size="11" fill="{INK}">'
                     f"{escape(lab)}</text>")
        if title:
            self.add(f'<text x="{(LEFT + self.width - RIGHT) / 2:.0f}" y="{self.height - 4}" text-anchor="middle" '
                     f'font-size="12" fill="{INK}">{escape(title)}</text>')

    def svg(self, label: str) -> str:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width} {self.height}" '
                f'width="{self.width}" height="{self.height}" role="img" aria-label="{escape(label)}" '
                f'font-family="sans-serif">' + "".join(self.parts) + "</svg>")


# ------------------------------------------------------------------------------------------ time axis
def time_ticks(t0: float, t1: float, count: int = 6) -> tuple[list[float], list[str]]:
    """Tick positions (epoch seconds) at even spacing with date (and time, for short spans) labels."""
    if t1 <= t0:
        return [t0], [_time_label(t0, 0.0)]
    pos = list(np.linspace(t0, t1, count))
    return pos, [_time_label(p, t1 - t0) for p in pos]


def _time_label(t: float, span: float) -> str:
    s = str(np.datetime64(int(round(t)), "s")).replace("T", " ")
    if span < 2 * 86400:
        return s[11:16] if span > 0 else s[:16]
    if span < 60 * 86400:
        return s[5:16] if span < 7 * 86400 else s[:10]
    return s[:10]


# ---------------------------------------------------------------------------------------- thinning
def envelope(x: np.ndarray, y: np.ndarray, columns: int = 1200) -> tuple[np.ndarray, np.ndarray]:
    """A line thinned to the min and max of each of ``columns`` spans, in time order (what a pixel column
    of the full line would show)."""
    n = x.size
    if n <= 2 * columns:
        return x, y
    edges = np.linspace(0, n, columns + 1).astype(np.int64)
    xs, ys = [], []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        seg = y[a:b]
        if not seg.size or not np.isfinite(seg).any():
            continue
        for k in sorted({int(np.nanargmin(seg)), int(np.nanargmax(seg))}):
            xs.append(x[a + k])
            ys.append(seg[k])
    return np.asarray(xs), np.asarray(ys)


def thin(n: int, limit: int = MAX_POINTS) -> np.ndarray:
    """Row indices of every k-th point (all when there are at most ``limit``)."""
    return np.arange(0, n, max(1, -(-n // limit)))


# ------------------------------------------------------------------------------------------- figures
def numeric_figure(t: np.ndarray, v: np.ndarray, *, raw: bool, half_width: np.ndarray | float | None,
                   bounds: Sequence[float] | None, units: str | None) -> str:
    """The released values over time: faint points when they are the raw noisy values, the line, and
    ``line ± half_width`` shaded (clipped to the public bounds when there are some)."""
    finite = np.isfinite(v)
    lo, hi = (float(np.min(v[finite])), float(np.max(v[finite]))) if finite.any() else (0.0, 1.0)
    if bounds is not None:
        lo, hi = min(lo, float(bounds[0])), max(hi, float(bounds[1]))
    pad = (hi - lo) * 0.04 or 1.0
    f = Frame(float(t[0]) if t.size else 0.0, float(t[-1]) if t.size else 1.0, lo - pad, hi + pad)
    yt = nice_ticks(f.y0, f.y1)
    step = yt[1] - yt[0] if len(yt) > 1 else 1.0
    f.y_axis(yt, [_fmt_tick(y, step) for y in yt], units or "value")
    xt, xl = time_ticks(f.x0, f.x1)
    f.x_axis(xt, xl, "time (UTC as written in the release)")
    if half_width is not None and t.size:
        hw = np.broadcast_to(np.asarray(half_width, dtype=float), v.shape)
        idx = np.arange(t.size) if t.size <= 2 * 1200 else np.linspace(0, t.size - 1, 1200).astype(np.int64)
        blo, bhi = v[idx] - hw[idx], v[idx] + hw[idx]
        if bounds is not None:
            blo, bhi = np.clip(blo, bounds[0], bounds[1]), np.clip(bhi, bounds[0], bounds[1])
        ok = np.isfinite(blo) & np.isfinite(bhi)
        f.band(t[idx][ok], blo[ok], bhi[ok])
    if bounds is not None:
        f.hline(float(bounds[0]))
        f.hline(float(bounds[1]))
    lx, ly = envelope(t[finite], v[finite])
    if lx.size:  # raw values: a faint thread under the points, which carry the picture
        f.polyline(lx, ly, color=LINE, width=0.6 if raw else 1.8, opacity=0.35 if raw else 1.0)
    if raw:
        keep = thin(t.size)
        f.points(t[keep], v[keep], color=LINE, opacity=0.55, r=1.7)
    return f.svg("the released values over time")


GAMMA2_Q90 = 3.889720169867429  # the 90% quantile of Gamma(2, 1): planar Laplace's distance / (r/ε)


def location_figure(latlon: np.ndarray, *, raw: bool, radius90_m: float | None) -> str:
    """The released track (longitude across, latitude up, equal distances in both directions), faint points
    for raw noisy positions, and a circle of the 90% noise radius when it fits the map."""
    lat, lon = latlon[:, 0], latlon[:, 1]
    ok = np.isfinite(lat) & np.isfinite(lon)
    lat, lon = lat[ok], lon[ok]
    if not lat.size:
        return Frame(0, 1, 0, 1).svg("no positions")
    coslat = max(math.cos(math.radians(float(np.median(lat)))), 1e-6)
    x, y = lon * coslat, lat  # equirectangular: one unit is the same distance across and up
    x0, x1, y0, y1 = float(x.min()), float(x.max()), float(y.min()), float(y.max())
    plot_w, plot_h = W - LEFT - RIGHT, H + 140 - TOP - BOTTOM
    span = max(x1 - x0, (y1 - y0) * plot_w / plot_h, 1e-6) * 1.06
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    half_y = span * plot_h / plot_w / 2
    f = Frame(cx - span / 2, cx + span / 2, cy - half_y, cy + half_y, W, H + 140)
    yt = nice_ticks(f.y0, f.y1)
    f.y_axis(yt, [f"{v:.4f}°" for v in yt], "latitude")
    xt = nice_ticks(f.x0 / coslat, f.x1 / coslat)
    f.x_axis([v * coslat for v in xt], [f"{v:.4f}°" for v in xt], "longitude")
    if raw:
        keep = thin(x.size)
        f.points(x[keep], y[keep])
    keep = thin(x.size, 6000)
    f.polyline(x[keep], y[keep], color=LINE, width=1.2 if raw else 1.6, opacity=0.85)
    f.add(f'<circle cx="{float(f.px(x[0])):.1f}" cy="{float(f.py(y[0])):.1f}" r="4" fill="#2e7d32"/>')
    f.add(f'<circle cx="{float(f.px(x[-1])):.1f}" cy="{float(f.py(y[-1])):.1f}" r="4" fill="#c62828"/>')
    deg_per_m = 1.0 / 111_195.0
    px_per_m = (W - LEFT - RIGHT) / span * deg_per_m
    if radius90_m is not None and 6 <= radius90_m * px_per_m <= 0.3 * (H + 140):  # (a dot would say nothing)
        rad = radius90_m * px_per_m
        cxp, cyp = W - RIGHT - rad - 8, TOP + rad + 8
        f.add(f'<circle cx="{cxp:.1f}" cy="{cyp:.1f}" r="{rad:.1f}" fill="{BAND}" fill-opacity="0.45" '
              f'stroke="{LINE}" stroke-dasharray="3 3"/>')
        f.add(f'<text x="{W - RIGHT - 2}" y="{cyp + rad + 14:.1f}" text-anchor="end" font-size="11" fill="{INK}">'
              f"90% noise radius</text>")
    _scale_bar(f, px_per_m)
    return f.svg("the released track")


def _scale_bar(f: Frame, px_per_m: float) -> None:
    target = 120 / px_per_m  # about 120 px long
    mag = 10 ** math.floor(math.log10(target))
    metres = next(m * mag for m in (1, 2, 5, 10) if m * mag >= target / 2)
    length = metres * px_per_m
    x, y = LEFT + 12, f.height - BOTTOM - 14
    label = f"{metres / 1000:g} km" if metres >= 1000 else f"{metres:g} m"
    f.add(f'<line x1="{x}" x2="{x + length:.1f}" y1="{y}" y2="{y}" stroke="{INK}" stroke-width="3"/>')
    f.add(f'<text x="{x + length / 2:.1f}" y="{y - 6}" text-anchor="middle" font-size="11" fill="{INK}">'
          f"{label}</text>")


def categorical_figure(t: np.ndarray, codes: np.ndarray, labels: Sequence[str], *, raw: bool) -> str:
    """The released category of each event over time, one row per category: dots for the raw release,
    steps for a denoised one."""
    k = max(len(labels), 1)
    height = max(H, TOP + BOTTOM + 22 * k)
    f = Frame(float(t[0]) if t.size else 0.0, float(t[-1]) if t.size else 1.0, -0.6, k - 0.4, W, height)
    shown = list(range(k)) if k <= 60 else list(np.linspace(0, k - 1, 40).astype(int))
    f.y_axis(shown, [_short(labels[i]) for i in shown])
    xt, xl = time_ticks(f.x0, f.x1)
    f.x_axis(xt, xl, "time (UTC as written in the release)")
    ok = codes >= 0
    keep = np.flatnonzero(ok)
    if keep.size > 4 * MAX_POINTS:  # thinned for drawing only
        keep = keep[thin(keep.size, 4 * MAX_POINTS)]
    if keep.size and raw:  # a strip of dots: steps between random categories would be a wall of lines
        pk = keep[thin(keep.size)]
        f.points(t[pk], codes[pk].astype(float), color=LINE, opacity=0.5, r=1.8)
    elif keep.size:
        f.polyline(t[keep], codes[keep].astype(float), color=LINE, width=1.4, step=True)
    return f.svg("the released categories over time")


def _short(label: str, width: int = 9) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"
