"""The tab itself (:class:`CorrelationTab`): its parts put together, and the computation — which curves are
out of date, the job on the tab's worker, the cache of results — and the tab's project state."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QSplitter,
    QWidget,
)
from superqt.utils import qdebounced, signals_blocked

from ....core.analysis.correlation import (
    CorrelationModel,
)
from ....core.kernel.settings import ALL_SCHEMES
from ...window.extensions import after_close
from ...window.runner import LatestOnlyRunner
from .curves import CurveResult, compute_curves
from .loss_view import LossView
from .model_choice import ModelChoice
from .widgets import MAX_STATES, S_DEFAULT


class CorrelationTab(ModelChoice, LossView, QWidget):
    """The tab. Public API (tests and scripting): :meth:`set_smoothing`, :meth:`set_custom_matrix`,
    :meth:`load_matrix_file`, :attr:`model`, :meth:`results`, :meth:`is_current`, :meth:`state`,
    :meth:`restore`; ``curvesUpdated`` fires when curves for the current state are drawn."""

    curvesUpdated = Signal()
    modelChanged = Signal()

    def __init__(self, window) -> None:
        super().__init__()
        self.setObjectName("correlationTab")
        self.window_ = window
        self.session = window.session
        self._model = CorrelationModel.smoothed(S_DEFAULT, 2)
        self._cache: dict[str, CurveResult] = {}
        self._job: tuple[CorrelationModel, dict[str, object]] | None = None
        self._job_key: tuple | None = None
        self._runner: LatestOnlyRunner | None = None
        #: jobs submitted (tests use it to check that a hidden tab does not compute)
        self.computations = 0
        self._syncing_x = False
        self._y_cache: dict[str, np.ndarray] = {}
        self._redraw_pending = False
        self._drawn: dict[str, tuple[CurveResult, bool]] = {}  # scheme → (the result drawn, log axis)
        self._build()
        self._connect()
        self._on_series()

    # =============================================================================== layout
    def _build(self) -> None:
        outer = QHBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName("correlationSplitter")
        outer.addWidget(split)
        split.addWidget(self._build_controls())
        split.addWidget(self._build_view())
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setCollapsible(1, False)
        split.setSizes([280, 1000])

    # =============================================================================== wiring
    def _connect(self) -> None:
        s = self.session
        s.seriesChanged.connect(self._on_series)
        s.landmarksChanged.connect(self._on_state_changed)
        s.settingsChanged.connect(self._on_state_changed)
        s.previewChanged.connect(self._on_state_changed)
        self.s_spin.valueChanged.connect(self._on_s_spin)
        self.s_slider.valueChanged.connect(self._on_s_slider)
        self.states_spin.valueChanged.connect(lambda _v: self._apply_smoothed())
        self.smoothed_radio.toggled.connect(self._on_mode)
        self.load_button.clicked.connect(self.load_dialog)
        self.normalise_button.clicked.connect(self.normalise_rows)
        self.size_spin.valueChanged.connect(self._on_size)
        for table in (self.forward_table, self.backward_table):
            table.itemChanged.connect(lambda _it: self._apply_custom())
        self.backward_combo.currentIndexChanged.connect(lambda _i: self._on_backward_mode())
        self.follow_check.toggled.connect(self._on_follow)
        self.nocorr_check.toggled.connect(lambda _on: self._redraw())
        self.log_check.toggled.connect(self._on_log)
        self.window_.series_plot.vb.sigXRangeChanged.connect(self._on_series_range)
        self.vb.sigXRangeChanged.connect(self._on_own_range)
        after_close(self.window_, self.shutdown)

    def shutdown(self) -> None:
        if self._runner is not None:
            self._runner.shutdown()
            self._runner = None
        self._job = None
        self._job_key = None

    def _ensure_runner(self) -> LatestOnlyRunner:
        if self._runner is None:
            self._runner = LatestOnlyRunner("correlation", self, finished=self._on_result, failed=self._on_failed)
        return self._runner

    def showEvent(self, ev) -> None:  # noqa: N802 - Qt naming
        super().showEvent(ev)
        if self._redraw_pending:
            self._redraw()
        self._sync_from_series()
        self._request()

    # =============================================================================== computation
    def _on_series(self) -> None:
        s = self.session.series
        if self._runner is not None:
            self._runner.cancel()
        self._job = None
        self._job_key = None
        self._cache.clear()
        self._drawn.clear()
        self.time_axis.set_times(s.times if s is not None else None)
        if s is not None:
            self.vb.setLimits(xMin=-0.05 * s.n - 1, xMax=1.05 * s.n + 1)
            if self.follow_check.isChecked():
                self._sync_from_series()
            else:
                self._set_x(-0.5, s.n - 0.5)
        self._redraw()
        self._request()

    def _on_state_changed(self) -> None:
        # The session emits landmarksChanged/settingsChanged *before* it invalidates its preview, so judge
        # freshness once the emission is over: _submit (next pass of the event loop) greys the curves out
        # and asks for new ones. A hidden tab only remembers to redraw when it is shown.
        self._redraw_pending = True
        self._request()

    @qdebounced(timeout=0)
    def _request(self) -> None:
        """:meth:`_submit` on the next pass of the event loop: a burst of signals makes one request."""
        self._submit()

    def _entry_current(self, scheme: str) -> bool:
        e = self._cache.get(scheme)
        p = self.session.preview.get(scheme)
        return e is not None and p is not None and e.release is p.release and e.model is self._model

    def _wanted(self) -> list[str]:
        pv = self.session.preview
        return [s for s in ALL_SCHEMES if s in self.session.visible_schemes and s in pv]

    def is_current(self) -> bool:
        """True when every shown scheme's curve describes the current landmarks, settings and model."""
        s = self.session
        if s.series is None or not s.is_preview_current():
            return False
        return all(self._entry_current(x) for x in self._wanted())

    def _submit(self) -> None:
        s = self.session
        if not self.isVisible():
            return
        redrawn = self._redraw_pending
        if redrawn:
            self._redraw()
        if s.series is None or not s.is_preview_current():
            return
        need = [x for x in self._wanted() if not self._entry_current(x)]
        if not need:
            if not redrawn:
                self._redraw()
            return
        releases = {x: s.preview[x].release for x in need}
        key = (id(self._model), tuple((x, id(r)) for x, r in releases.items()))
        if key == self._job_key and self._runner is not None and not self._runner.is_idle():
            return  # exactly this job is already running
        self._job = (self._model, releases)
        self._job_key = key
        items = [(x, r.budgets, r.landmarks) for x, r in releases.items()]
        self.computations += 1
        self._ensure_runner().submit(compute_curves, self._model, items)
        self._update_status()

    def _on_result(self, generation: int, result) -> None:
        if self._runner is None or not self._runner.is_current(generation) or result is None or self._job is None:
            return
        model, releases = self._job
        self._job = None
        self._job_key = None
        for scheme, (tpl, nc) in result.items():
            self._cache[scheme] = CurveResult(releases[scheme], model, tpl, nc)
        self._redraw()
        if self.is_current():
            self.curvesUpdated.emit()
        else:
            self._request()  # the state moved on while we computed

    def _on_failed(self, generation: int, message: str) -> None:
        if self._runner is None or not self._runner.is_current(generation):
            return
        self._job = None
        self._job_key = None
        self.status_label.setText(f"<span style='color:#c00000'>Computing the temporal privacy loss failed: "
                                  f"{message}</span>")

    def results(self) -> dict[str, CurveResult]:
        """The curves drawn now (current or not: check :meth:`is_current`)."""
        return dict(self._cache)

    # =============================================================================== project state
    def state(self) -> dict:
        """JSON-serialisable settings of the tab (saved in project files)."""
        mode = "smoothed" if self.smoothed_radio.isChecked() else "custom"
        d: dict = {"mode": mode, "s": float(self.s_spin.value()), "m": int(self.states_spin.value()),
                   "backward_mode": self.backward_combo.currentData(), "follow_x": self.follow_check.isChecked(),
                   "no_correlation": self.nocorr_check.isChecked(), "log_y": self.log_check.isChecked()}
        if mode == "custom":
            d["forward"] = self._model.forward.tolist()
            d["backward"] = self._model.backward.tolist()
        return d

    def restore(self, d: dict) -> None:
        """Apply :meth:`state` output; bad entries are reported in the error label, never raised."""
        if not isinstance(d, dict):
            return
        for key, cb in (("follow_x", self.follow_check), ("no_correlation", self.nocorr_check),
                        ("log_y", self.log_check)):
            if isinstance(d.get(key), bool):
                cb.setChecked(d[key])
        try:
            s = float(d.get("s", S_DEFAULT))
            m = int(d.get("m", 2))
            if not (math.isfinite(s) and s >= 0 and 2 <= m <= MAX_STATES):
                raise ValueError
        except (TypeError, ValueError):
            s, m = S_DEFAULT, 2
        if d.get("mode") == "custom" and d.get("forward") is not None:
            with signals_blocked(self.s_spin):
                self.s_spin.setValue(s)
            mode = d.get("backward_mode")
            if mode == "reversed":
                self.set_custom_matrix(d["forward"], reversed_backward=True)
            elif mode == "own":
                self.set_custom_matrix(d["forward"], d.get("backward"))
            else:
                self.set_custom_matrix(d["forward"])
        else:
            self.set_smoothing(s, m)


def install(window) -> CorrelationTab:
    """Add the "Temporal correlation" tab to the main window."""
    tab = CorrelationTab(window)
    window.tabs.addTab(tab, "Temporal correlation")
    window.tabs.setTabToolTip(window.tabs.indexOf(tab), "The privacy loss if consecutive values are correlated "
                                                        "(temporal privacy loss, thesis §2.3.4, Definition 10)")
    return tab
