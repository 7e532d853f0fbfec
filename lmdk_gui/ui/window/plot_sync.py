"""Session → views (DESIGN §10): the window's plots, track view and status readouts follow the session's
signals. Views never compute; this keeps them in step with the session's series, landmarks, previews and
settings, and paints each preview in the slot that brings it (issue 15)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QCoreApplication, QEvent, QTimer

from ...core.kernel.settings import ALL_SCHEMES, LANDMARK_SCHEMES
from ..views.multiples import AfterPaint
from ..views.plots import display_values
from .extensions import WindowPart
from .passes import after_paint
from .startup import read_setting

#: an edit's hover box and "computing…" wait this long for its preview, which says both (ms)
STALE_AFTER_MS = 100
#: the GPS track view never opens narrower than this (px)
TRACK_MIN_WIDTH = 280


class PlotSync(WindowPart):
    """Connects the session's signals to the window's views; owns the timers and paint waits between them."""

    def __init__(self, window) -> None:  # window: the MainWindow that builds this controller
        super().__init__(window)
        s = self.session
        self.budget_plot, self.preview_plot = window.budget_plot, window.preview_plot
        # The plots first get their place (the empty state gives way), then draw the series once at their size
        # (drawn first, the series was drawn again at each step of that layout pass: ≈ 25 ms at 10^7 events).
        s.seriesChanged.connect(window._show_plots_or_empty)
        s.seriesChanged.connect(self.on_series)
        # (a timer of the window's own, not superqt's qdebounced: superqt is ≈ 0.1 s of the cold start)
        self.stale_readouts = QTimer(window, singleShot=True, interval=STALE_AFTER_MS)
        self.stale_readouts.timeout.connect(self._say_computing)
        s.landmarksChanged.connect(self._on_landmarks)
        s.previewChanged.connect(self.on_preview)
        s.valuesLetGo.connect(self._on_values_let_go)
        rows = [self.budget_plot, self.preview_plot]
        self.preview_drawn = AfterPaint(rows, window)
        # (a view that has already painted the new preview, in on_preview, is not waited for)
        s.after_draw = lambda start: self.preview_drawn(start, [v for v in rows if not v.has_painted_latest()])
        self._rows_painted = AfterPaint(rows, window)
        s.before_first_preview = self._lay_out_rows
        self._lines_drawn_for: dict | None = None  # the preview whose denoised lines on_preview drew
        s.denoisedChanged.connect(self._on_denoised)
        s.settingsChanged.connect(window._on_settings)
        s.resolutionChanged.connect(self._on_resolution)

    def on_series(self) -> None:
        w, s = self.window, self.session.series
        if s is None:
            return
        w.interaction.forget_hover()
        w.series_plot.set_series(s)
        rel = self.session.release_series  # (the periods at a coarser release resolution)
        assert rel is not None
        self.budget_plot.set_series(rel)
        self.preview_plot.set_series(rel)
        self._link_rows(rel)
        is_loc = s.kind == "location"
        self.show_track(is_loc)
        if is_loc:
            w.track_plot.set_series(s)
        w._update_title()
        w.status.refresh()

    def _on_resolution(self) -> None:
        """The release resolution changed: the budget and preview rows show the released rows (events or
        periods); the series plot keeps the events, where landmarks are clicked."""
        rel = self.session.release_series
        if rel is None:
            return
        self.budget_plot.set_series(rel)
        self.preview_plot.set_series(rel)
        self._link_rows(rel)
        self.window.status.refresh()

    def _link_rows(self, rel) -> None:
        """Rows of events follow the series plot's x (zoom together); rows of periods have an x of their own."""
        for rows in (self.budget_plot, self.preview_plot):
            if self.session.resolution is None:
                rows.link_x(self.window.series_plot.vb)
            else:
                rows.unlink_x(rel.n)

    def _lay_out_rows(self, start) -> None:
        """A new series: the rows its first preview fills are laid out (empty) and painted before it is
        computed, then ``start`` computes it. Laid out when it arrived, in three layout passes each with a
        repaint, the first preview held the GUI thread 50-60 ms at any size (at 10^7 events, with the helper
        threads reducing the rows meanwhile, 70-90 ms)."""
        vis = self.session.visible_schemes
        laid_out = [view for view, schemes in ((self.budget_plot, LANDMARK_SCHEMES), (self.preview_plot, ALL_SCHEMES))
                    if view.expect([x for x in schemes if x in vis])]
        # once they have painted, and the relayout their axes ask for while they paint theirs (the time axis
        # takes the height of its labels) has painted too: after_paint's turn of the loop holds both
        self._rows_painted(lambda: after_paint(self.window, start), laid_out)  # (at once when none was laid out)

    def show_track(self, on: bool) -> None:
        """Show or hide the GPS track view; it opens at its last width (saved splitter state), never at a
        few pixels."""
        w = self.window
        if not on and w._track_plot is None:
            return  # never built, so not shown
        was = w.track_plot.isVisible()
        w.track_plot.setVisible(on)
        if not on or was:
            return
        split = w.main_split
        state = read_setting(w._settings, "mainSplitterState", None, bytes)
        restored = state is not None and split.restoreState(state)
        w.track_plot.setVisible(True)  # restoreState also restores the hidden flag of its time
        sizes = split.sizes()
        total = sum(sizes) or max(split.width(), 2 * TRACK_MIN_WIDTH)
        if not restored or len(sizes) != 2 or sizes[1] < TRACK_MIN_WIDTH:
            # first time (or a bad saved state): about a third, so the plots keep room for their notes
            right = max(TRACK_MIN_WIDTH, int(total * 0.3))
            split.setSizes([max(total - right, 1), right])

    def remember_split(self, *_args) -> None:
        if self.window._track_shown():
            self.window._settings.setValue("mainSplitterState", self.window.main_split.saveState())

    def _on_values_let_go(self) -> None:
        """A lean session let go of values (Session.valuesLetGo): the plots must not keep them alive."""
        pv = self.session.preview
        self.preview_plot.let_go(pv)
        self.budget_plot.let_go(pv)
        if self.window._track_plot is not None:
            self.window._track_plot.let_go(pv)

    def _on_landmarks(self) -> None:
        w = self.window
        lm = self.session.landmarks
        w.series_plot.set_landmarks(lm)
        if w._track_shown():
            w.track_plot.set_landmarks(lm)
        w.status.update_counts()
        self.stale_readouts.start()  # (restarted by each edit)

    def _say_computing(self) -> None:
        """The hover box and the verdict of an edit whose preview has not come ``STALE_AFTER_MS`` after it
        ("computing…"). The preview's slot says both with its budgets and verdict; a preview that comes within
        a glance (≈ 10 ms at 10^5 events) is not announced first: that was ≈ 1 ms of each click and a repaint of
        both (issue 15)."""
        if self.session.series is not None and not self.session.is_preview_current():
            self.window._refresh_hover()
            self.window.status.update_verdict()

    def on_preview(self) -> None:
        w, s = self.window, self.session
        pv = s.preview
        rels = {k: v.release for k, v in pv.items() if k in LANDMARK_SCHEMES}
        self.budget_plot.set_budgets({k: v.budgets if v.whole else None for k, v in pv.items() if k in rels},
                                     s.release_landmarks, s.epsilon,
                                     s.visible_schemes, {k: r.max_budget for k, r in rels.items()})
        bounds = s.release_settings.bounds if s.series is not None and s.series.kind == "numeric" else None
        # The lines go with the points in one redraw: none until this state's denoised stage has arrived
        # (_on_denoised), so a line of another landmark set is never drawn over these points.
        lines = self._denoised_lines()
        self.preview_plot.set_denoised(lines, redraw=False)
        self.preview_plot.set_preview(pv, s.visible_schemes, bounds)
        self._lines_drawn_for = pv if lines else None
        if w._track_shown():
            w.track_plot.set_preview(pv, s.visible_schemes)  # drops tracks of another state's stage
        w._refresh_hover()
        w.status.refresh()
        # Each scene marks its view dirty in a queued call of its own: the budget rows were painted in one pass
        # of the event loop and the preview rows in the next (the status bar twice). Those calls run now, and
        # the rows are painted here, in this slot (≈ 2 ms of a click at 10^5, issue 15).
        for view in (self.budget_plot, self.preview_plot):
            QCoreApplication.sendPostedEvents(view.scene(), QEvent.Type.MetaCall)

    def _denoised_lines(self) -> dict[str, np.ndarray]:
        """With Denoise on, each row's line is what the export writes (the post-processed release), once
        the session has it for the current state; otherwise none."""
        s = self.session
        if s.series is None or not s.settings.denoise or not s.is_denoised_current():
            return {}
        return {k: display_values(s.series, p.denoised_values) for k, p in s.preview.items()
                if p.denoised_values is not None}

    def _on_denoised(self) -> None:
        """The denoised stage arrived: the lines, the points' fading and the row notes; the raw points stay
        as drawn by on_preview (the metrics table listens to the session itself)."""
        s = self.session
        # A small series' stage comes with its preview (Session._submit's inline denoising, up to
        # DENOISE_INLINE_MAX events), whose slot has drawn these lines already: drawing them again redrew the
        # lines and notes and painted the rows a second time in every click (issue 15).
        if s.preview is not self._lines_drawn_for:
            self.preview_plot.set_denoised(self._denoised_lines(), s.preview)
        if self.window._track_shown():
            current = s.settings.denoise and s.is_denoised_current()
            self.window.track_plot.set_denoised({k: p.denoised_values for k, p in s.preview.items() if current})

    def on_settings(self) -> None:
        s = self.session
        if s.resolution is not None and self.preview_plot.series is not s.release_series:
            self._on_resolution()  # (new bounds clamp the events anew: the periods' true values changed)
        if s.preview:
            self.on_preview()
