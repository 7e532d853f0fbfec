"""The location series' map: the original track and each shown scheme's release in lon/lat."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from ...core.data.series import Series
from ...core.kernel.settings import SCHEME_LABELS
from .axes import cache_axes
from .items import PassiveScatter
from .theme import (
    DUMMY_COLOR,
    LANDMARK_COLOR,
    ORIGINAL_PREVIEW_COLOR,
    SCHEME_COLORS,
    darker,
)

#: noisy points drawn per scheme in the track view
TRACK_POINTS = 50_000


class TrackPlot(pg.PlotWidget):
    """Location series: the original track and each visible scheme's release in lon/lat — its noisy points,
    and with Denoise on its denoised track (what the export writes) as a line over them. The legend sits
    under the map, never over the data."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("trackPlot")
        pi = self.getPlotItem()
        pi.setLabel("bottom", "longitude (°)")
        pi.setLabel("left", "latitude (°)")
        pi.showGrid(x=True, y=True, alpha=0.15)
        cache_axes(pi)
        pi.setTitle("Track", size="9pt")
        # A legend in the plot's layout, one row under the bottom axis: on a map every corner holds data.
        self.legend = pg.LegendItem(colCount=2, labelTextSize="8pt", verSpacing=-6, horSpacing=12)
        pi.layout.addItem(self.legend, 4, 1)
        # The original in the preview rows' grey, dashed: in the series plot's near-black it could not be told
        # from Balanced's black track.
        self.original = pg.PlotDataItem(pen=pg.mkPen(ORIGINAL_PREVIEW_COLOR, width=2, style=Qt.PenStyle.DashLine),
                                        name="original")
        self.landmarks = PassiveScatter(size=7, pen=None, brush=pg.mkBrush(LANDMARK_COLOR), name="landmarks")
        pi.addItem(self.original)
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.tracks: dict[str, pg.PlotDataItem] = {}  # denoised tracks
        for scheme, color in SCHEME_COLORS.items():
            c = pg.PlotDataItem(pen=None, symbol="o", symbolSize=3, symbolPen=None,
                                symbolBrush=pg.mkBrush(QColor(*color, 140)), name=SCHEME_LABELS[scheme])
            pi.addItem(c)
            self.curves[scheme] = c
            line = pg.PlotDataItem(pen=pg.mkPen(QColor(*color), width=2.5))
            line.setZValue(6)
            pi.addItem(line)
            self.tracks[scheme] = line
        self.dummies = PassiveScatter(size=7, pen=pg.mkPen(darker(DUMMY_COLOR)), brush=pg.mkBrush(DUMMY_COLOR),
                                      symbol="d")
        self.dummies.setZValue(9)
        pi.addItem(self.dummies)
        pi.addItem(self.landmarks)
        self.landmarks.setZValue(10)
        self.original.setZValue(5)
        self.series: Series | None = None
        self._preview: dict = {}
        self._visible: set[str] = set()
        self._denoised: dict[str, np.ndarray] = {}

    def set_series(self, series: Series) -> None:
        self.series = series
        lat, lon = series.values[:, 0], series.values[:, 1]
        self.original.setData(lon, lat)
        mid = float(np.nanmean(lat)) if series.n else 0.0
        self.getPlotItem().getViewBox().setAspectLocked(True, ratio=1.0 / max(math.cos(math.radians(mid)), 1e-3))
        self.landmarks.setData([], [])
        self.dummies.setData([], [])
        self._preview, self._denoised = {}, {}
        for c in (*self.curves.values(), *self.tracks.values()):
            c.setData([], [])
        # Frame the original track; noisy points far outside stay reachable by zooming out.
        vb = self.getPlotItem().getViewBox()
        vb.disableAutoRange()
        if series.n:
            pad_lat = max(float(np.ptp(lat)) * 0.08, 1e-4)
            pad_lon = max(float(np.ptp(lon)) * 0.08, 1e-4)
            vb.setRange(xRange=(float(lon.min()) - pad_lon, float(lon.max()) + pad_lon),
                        yRange=(float(lat.min()) - pad_lat, float(lat.max()) + pad_lat), padding=0)

    def set_landmarks(self, rows: np.ndarray) -> None:
        if self.series is None:
            return
        pts = self.series.values[rows]
        self.landmarks.setData(pts[:, 1], pts[:, 0])

    def set_dummies(self, rows: np.ndarray) -> None:
        """The dummy landmarks of the preview's selection (violet diamonds); none = hidden."""
        if self.series is None:
            return
        pts = self.series.values[np.asarray(rows, dtype=np.int64)]
        self.dummies.setData(pts[:, 1], pts[:, 0])
        self._relabel()  # the releases are redrawn when their preview arrives (just after)

    def set_preview(self, preview: dict, visible: set[str]) -> None:
        """The raw releases; denoised tracks of another state are dropped until :meth:`set_denoised`."""
        self._preview, self._visible = preview, set(visible)
        self._denoised = {s: v for s, v in self._denoised.items()
                          if (p := preview.get(s)) is not None and p.denoised_values is v}
        self._redraw()

    def set_denoised(self, denoised: dict[str, np.ndarray | None]) -> None:
        """Each scheme's denoised release (lat, lon): its track is drawn as a line, its raw points faint."""
        self._denoised = {s: v for s, v in denoised.items() if v is not None}
        self._redraw()

    def let_go(self, preview: dict) -> None:
        """The session let go of values (Session.valuesLetGo): hold its new preview, drop the denoised tracks it
        no longer has; the curves stay as drawn until the new preview."""
        self._preview = preview
        self._denoised = {k: v for k, v in self._denoised.items()
                          if (p := preview.get(k)) is not None and p.denoised is not None}

    def _shown(self) -> list[str]:
        return [s for s in self.curves if s in self._visible and s in self._preview]

    def _redraw(self) -> None:
        if self.series is None:
            return
        shown = self._shown()
        for scheme, curve in self.curves.items():
            line = self.tracks[scheme]
            if scheme not in shown:
                curve.hide()
                line.hide()
                continue
            if not self._preview[scheme].whole:
                continue  # let go of by a lean session: as drawn (or hidden) until its new preview
            den = self._denoised.get(scheme)
            curve.setSymbolBrush(pg.mkBrush(QColor(*SCHEME_COLORS[scheme], 60 if den is not None else 140)))
            curve.setData(*_lonlat(self._preview[scheme].values))
            curve.show()
            if den is not None:
                line.setData(*_lonlat(den))
            line.setVisible(den is not None)
        self._relabel()

    def _relabel(self) -> None:
        """The legend and the title for what is drawn: a scheme's entry is its line when denoised."""
        self.legend.clear()
        self.legend.addItem(self.original, "original")
        self.legend.addItem(self.landmarks, "landmarks")
        dummies = bool(len(self.dummies.data))
        if dummies:
            self.legend.addItem(self.dummies, "dummy landmarks")
        for scheme in self._shown():
            item = self.tracks[scheme] if scheme in self._denoised else self.curves[scheme]
            self.legend.addItem(item, SCHEME_LABELS[scheme])
        # short: a title wider than the view would widen the plot past its widget (the legend names colours)
        self.getPlotItem().setTitle("Track (lines: denoised)" if self._denoised else "Track", size="9pt")


def _lonlat(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x = longitude, y = latitude; display only: a regular subsample beyond TRACK_POINTS keeps the picture."""
    if v.shape[0] > TRACK_POINTS:
        v = v[:: v.shape[0] // TRACK_POINTS + 1]
    return v[:, 1], v[:, 0]
