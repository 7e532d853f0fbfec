"""Clicks, drags and the hover box on the series plot (the window's ``series_plot``): a click marks or unmarks
the event within reach, a Shift-drag (Ctrl/Alt-drag) marks (unmarks) a time range, and the hover box describes
the event a click would mark with its budgets in every shown scheme."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg

from ...core.kernel.settings import SCHEME_LABELS
from .extensions import WindowPart

#: said when a click on the series plot is not within reach of an event (nothing changes)
OFF_LINE_HINT = ("No event there: click on the line or a dot (the ring shows which event a click marks); "
                 "Shift-drag marks a time range")


class PlotInteraction(WindowPart):
    """The series plot's mouse: owns the hover state (the row described, the event a click would mark)."""

    def __init__(self, window) -> None:  # window: the MainWindow that builds this controller
        super().__init__(window)
        self.plot = window.series_plot
        self.hover_row: int | None = None
        self.hover_target: int | None = None  # the event a click there would mark (None: out of reach)
        self._hover = pg.SignalProxy(self.plot.scene().sigMouseMoved, rateLimit=30, slot=window._on_hover)
        self.plot.vb.clicked.connect(self.on_click)
        self.plot.vb.rangeDragged.connect(self.on_drag)

    def forget_hover(self) -> None:
        self.hover_row = self.hover_target = None

    def on_click(self, scene_pos) -> None:
        row = self.plot.nearest_event(scene_pos)
        if row is not None:
            self.session.toggle_landmark(row)
        elif self.session.series is not None:  # a click just off the line did nothing, silently
            self.window.statusBar().showMessage(OFF_LINE_HINT, 5000)

    def on_drag(self, x0: float, x1: float, mode: str) -> None:
        a, b = int(math.ceil(x0)), int(math.floor(x1))
        if a > b:
            return
        if mode == "add":
            self.session.add_range(a, b)
        else:
            self.session.remove_range(a, b)

    def hover_html(self, row: int) -> str:
        s = self.session
        ser = s.series
        assert ser is not None
        t = str(np.datetime_as_string(ser.times[row], unit="s")).replace("T", " ")
        if ser.kind == "numeric":
            val = f"{ser.values[row]:.6g} {ser.unit}".strip()
        elif ser.kind == "location":
            val = f"{ser.values[row, 0]:.6f}, {ser.values[row, 1]:.6f}"
        else:
            val = ser.categories[ser.values[row]] if ser.categories else str(ser.values[row])
        # "event N": the 0-based position in time order, as landmark lists and --landmark-rows number events
        # ("row N" is kept for the file's own rows, in messages about the file)
        lines = [f"<b>event {row}</b> · {t}", f"value: {val}" + (" · <b>landmark</b>" if s.is_landmark(row) else "")]
        j = s.release_row(row)  # (at a coarser resolution the budgets are its period's)
        if s.resolution is not None and s.release_series is not None:
            per = s.release_series
            start = str(np.datetime_as_string(per.times[j], unit="s")).replace("T", " ")
            lines.append(f"released in the period from {start} ({per.periods.aggregate if per.periods else ''})")
        budgets = self._budget_lines(j)
        # two schemes a line: the box fits the series plot even at 1280×800 with all six shown
        lines += [" · ".join(budgets[i:i + 2]) for i in range(0, len(budgets), 2)]
        return "<br>".join(lines)

    def _budget_lines(self, j: int) -> list[str]:
        """Each shown scheme's budget at released row ``j``, landmark-private schemes first."""
        s = self.session
        budgets = []
        for scheme in SCHEME_LABELS:
            if scheme in s.visible_schemes and scheme in s.preview:
                p = s.preview[scheme]
                if not p.whole:  # (a lean session's edit dropped its release: its preview is coming)
                    budgets.append(f"{SCHEME_LABELS[scheme]}: ε<sub>t</sub> = …")
                    continue
                if j >= p.approximated.shape[0]:  # (a preview of the previous resolution, replaced soon)
                    continue
                mark = " (approx.)" if p.approximated[j] else ""
                budgets.append(f"{SCHEME_LABELS[scheme]}: ε<sub>t</sub> = {p.budgets[j]:.4g}{mark}")
        return budgets

    def on_hover(self, evt) -> None:
        pos = evt[0]
        plot = self.plot
        if self.session.series is None or not plot.sceneBoundingRect().contains(pos) or \
                not plot.vb.sceneBoundingRect().contains(pos):
            self.forget_hover()
            plot.show_info(None)
            return
        # The box describes the event a click would mark, when one is within reach (ringed), else the one under
        # the pointer's time (read only: a click there marks nothing).
        target = plot.nearest_event(pos)
        row = target if target is not None else plot.row_at(pos)
        self.hover_row, self.hover_target = row, target
        if row is None:
            plot.show_info(None)
            return
        plot.show_info(row, self.window.hover_html(row), target)

    def refresh_hover(self) -> None:
        """Clicks and drags change what the hover box describes (landmark or not, the budgets): redraw it for
        the same event without waiting for the mouse to move."""
        row = self.hover_row
        s = self.session.series
        if row is None or s is None or not self.plot.info.isVisible():
            return
        if row >= s.n:
            self.forget_hover()
            self.plot.show_info(None)
            return
        self.plot.show_info(row, self.window.hover_html(row), self.hover_target)
