"""The proposal highlight on the series plot (and the track map of a location series)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from ...views.plots import PassiveScatter, step_runs
from ...views.theme import darker, rgba

#: Proposal highlight: a teal used by no scheme, not by landmarks (red) and not by dummies (pink).
PROPOSAL_COLOR = (23, 170, 190)
#: Rings are drawn around proposed events only when at most this many are in view (the band shows the rest).
RING_LIMIT = 6000


class ProposalOverlay:
    """The proposal drawn on the series plot (a translucent teal band plus rings around proposed events in
    view) and, for location series, rings on the track map. Items are added on :meth:`show` and removed on
    :meth:`clear`, so a closed panel leaves the plots exactly as they were. Each show after a clear makes
    fresh items (pyqtgraph 0.14 fails to re-add a removed PlotDataItem: its cached view is the widget)."""

    def __init__(self, window) -> None:
        self.window = window
        self._make_items()
        self.rows = np.zeros(0, dtype=np.int64)
        self._shown = False
        self._on_track = False

    def _make_items(self) -> None:
        brush = pg.mkBrush(rgba(PROPOSAL_COLOR, 70))
        self.band = pg.PlotDataItem(pen=pg.mkPen(rgba(PROPOSAL_COLOR, 160), width=1), fillLevel=0.0, brush=brush)
        self.band.setDownsampling(auto=True, method="peak")
        self.band.setClipToView(True)
        self.band.setZValue(-8)
        self.rings = PassiveScatter(size=11, pen=pg.mkPen(darker(PROPOSAL_COLOR, 0.8), width=1.5), brush=None,
                                    symbol="o")
        self.rings.setZValue(20)
        self._make_track_rings()

    def _make_track_rings(self) -> None:
        self.track_rings = PassiveScatter(size=9, pen=pg.mkPen(darker(PROPOSAL_COLOR, 0.8), width=1.5),
                                          brush=pg.mkBrush(rgba(PROPOSAL_COLOR, 90)), symbol="o")
        self.track_rings.setZValue(15)

    @property
    def shown(self) -> bool:
        return self._shown

    def show(self, rows: np.ndarray) -> None:
        w = self.window
        plot = w.series_plot
        series = plot.series
        if series is None:
            return
        self.rows = np.asarray(rows, dtype=np.int64)
        if not self._shown:
            pi = plot.getPlotItem()
            pi.addItem(self.band, ignoreBounds=True)
            pi.addItem(self.rings, ignoreBounds=True)
            plot.legend.addItem(self.rings, "proposed<br>(not applied)")  # one line was cut at the window edge
            plot.vb.sigXRangeChanged.connect(self._update_rings)
            self._shown = True
        y = plot.y
        fin = y[np.isfinite(y)] if y.size else y
        lo, hi = (float(fin.min()), float(fin.max())) if fin.size else (0.0, 1.0)
        pad = 0.04 * (hi - lo) if hi > lo else 0.5
        top = np.full(series.n, lo - pad)
        top[self.rows] = hi + pad
        self.band.setFillLevel(lo - pad)
        self.band.setData(*step_runs(top), skipFiniteCheck=True)
        self._update_rings()
        if series.kind == "location" and w.track_plot.isVisible():  # (other kinds never build the track view)
            track = w.track_plot
            if not self._on_track:
                track.getPlotItem().addItem(self.track_rings)  # no legend entry: the track view rebuilds
                self._on_track = True
            pts = series.values[self.rows]
            self.track_rings.setData(pts[:, 1], pts[:, 0])
        elif self._on_track:
            self._remove_track()

    def _update_rings(self, *_args) -> None:
        plot = self.window.series_plot
        if not self._shown or plot.series is None or self.rows.size == 0:
            self.rings.setData([], [])
            return
        a, b = plot.visible_rows()
        i0, i1 = np.searchsorted(self.rows, [a, b + 1])
        vis = self.rows[i0:i1]
        if vis.size > RING_LIMIT:
            self.rings.setData([], [])
        else:
            self.rings.setData(vis.astype(np.float64), plot.y[vis])

    def _remove_track(self) -> None:
        track = self.window.track_plot
        track.getPlotItem().removeItem(self.track_rings)
        self._on_track = False
        self._make_track_rings()

    def clear(self) -> None:
        if self._shown:
            plot = self.window.series_plot
            try:
                plot.vb.sigXRangeChanged.disconnect(self._update_rings)
            except (RuntimeError, TypeError):
                pass
            plot.legend.removeItem(self.rings)
            pi = plot.getPlotItem()
            pi.removeItem(self.band)
            pi.removeItem(self.rings)
            self._shown = False
        if self._on_track:
            self._remove_track()
        self.rows = np.zeros(0, dtype=np.int64)
        self._make_items()

