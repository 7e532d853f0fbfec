"""The "Dummy landmarks" panel: dummy landmarks in the window (issue 6, thesis §4.2, DESIGN §6).

A release's budgets show where the landmarks are (thesis Figure 4.7): Skip's zeros, Uniform's level,
Adaptive's pattern. With this panel on, the session adds *dummy* landmarks — regular events treated as
landmarks — chosen by the exponential mechanism with ``ε_sel = share·ε``, and every scheme releases on
``L'`` (landmarks + dummies) with ``ε − ε_sel``. The panel sets the generator, the share and the utility,
re-draws the preview's selection, and reads out what was added; the dummies are drawn in their own colour
on the series, budget and track plots, and the metrics table shows each scheme with and without them.

The computation is the session's (on its worker threads); this module only wires widgets to it. The
preview's selection is an *example*: the export draws its own (:mod:`lmdk_gui.core.publish.export`).

``install(window)`` returns a :class:`DummiesExtension` (``window.extensions["dummies_ui"]``) with
``state()``/``restore()`` for project files: ``{"enabled", "generator", "share", "utility", "draw"}``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from ...core.analysis.metrics import share
from ...core.kernel.dummies import (
    DEFAULT_SHARE,
    GENERATORS,
    HEURISTIC_COMFORT_N,
    OPTIMAL_MAX_REGULAR,
    UTILITIES,
    DummySettings,
)
from ..dialogs.common import error_label, wrapped_label
from ..views.theme import DUMMY_COLOR, count_noun, darker
from ..window.docks import add_dock, new_dock
from ..window.extensions import WindowPart

GENERATOR_ITEMS = {
    "partitioned": "Partitioned (default)",
    "heuristic": "Heuristic",
    "optimal": f"Optimal (≤ {OPTIMAL_MAX_REGULAR} regular events)",
}
GENERATOR_NOTES = {
    "partitioned": "Histogram of the landmark times; dummies are drawn bin by bin so that landmarks and "
                   "dummies together keep the landmarks' shape. Fast at any size.",
    "heuristic": "Adds one event at a time, keeping the spread of distances to the nearest landmark. "
                 f"Up to ≈ 2 s at {HEURISTIC_COMFORT_N:,} events; slower beyond.",
    "optimal": f"Exhaustive over every chain of options: refused when more than {OPTIMAL_MAX_REGULAR} events "
               "are not landmarks.",
}
UTILITY_ITEMS = {"count": "Fewer dummies", "distance": "Dummies near landmarks"}
UTILITY_NOTES = {
    "count": "Options with fewer dummies are more likely (less budget is diluted).",
    "distance": "Options whose dummies lie close in time to the true landmarks are more likely.",
}
SHARE_TIP = ("ε_sel = share × ε is spent on choosing how many dummies to add (exponential mechanism); the "
             "release gets ε − ε_sel. With a small share the choice is close to uniform: expect about half of "
             "the regular events to become dummies.")


def _note(text: str = "") -> QLabel:
    return wrapped_label(text, style="color: #555;")


def _choice_row(form: QFormLayout, label: str, name: str, keys: tuple[str, ...],
                words: dict[str, str]) -> tuple[QComboBox, QLabel]:
    """A labelled row of ``form``: a combo box of ``keys`` (shown as ``words``, named ``name``) and, below it,
    the note that says what the chosen one does."""
    combo = QComboBox()
    combo.setObjectName(name)
    for key in keys:
        combo.addItem(words[key], key)
    form.addRow(label, combo)
    note = _note()
    form.addRow(note)
    return combo, note


class HideLandmarksPanel(QScrollArea):
    """On/off, generator, share of ε, utility, Re-draw, and a read-out of the current selection."""

    def __init__(self, session, parent=None) -> None:
        super().__init__(parent)
        self.session = session
        self.setObjectName("hideLandmarksPanel")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(6)

        self.enabled = QCheckBox("Hide the landmarks among dummies")
        self.enabled.setObjectName("dummiesEnabled")
        self.enabled.setStyleSheet("font-weight: bold;")
        lay.addWidget(self.enabled)
        lay.addWidget(_note("Budgets show where the landmarks are. Dummy landmarks are regular "
                            "events treated as landmarks, so the true ones hide among them. They cost "
                            "accuracy: compare the MAE columns of the metrics table."))

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.generator, self.generator_note = _choice_row(form, "Generator", "dummyGenerator", GENERATORS,
                                                          GENERATOR_ITEMS)

        self.share = QDoubleSpinBox()
        self.share.setObjectName("dummyShare")
        self.share.setRange(0.1, 50.0)
        self.share.setDecimals(1)
        self.share.setSingleStep(0.5)
        self.share.setSuffix(" % of ε")
        self.share.setKeyboardTracking(False)
        self.share.setValue(100 * DEFAULT_SHARE)
        self.share.setToolTip(SHARE_TIP)
        form.addRow("Share of ε", self.share)

        self.utility, self.utility_note = _choice_row(form, "Utility", "dummyUtility", UTILITIES, UTILITY_ITEMS)
        lay.addLayout(form)

        self.redraw = QPushButton("Re-draw dummies")
        self.redraw.setObjectName("dummyRedraw")
        self.redraw.setToolTip("Draw the preview's selection again (a new pick of the exponential mechanism and "
                               "new dummy rows). Exports always draw their own.")
        lay.addWidget(self.redraw)

        self.readout = wrapped_label("", "dummyReadout", "background: #fbf3f9; border: 1px solid #e8c8df; padding: 5px;")
        self.readout.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(self.readout)
        self.error = error_label("dummyError")
        lay.addWidget(self.error)
        lay.addWidget(_note("The export draws a new selection with fresh randomness; the preview's dummies are "
                            "one example. The release's metadata records the ε spent on the choice and the "
                            "generator, never the "
                            "dummies."))
        lay.addStretch(1)
        self.setWidget(body)

        self.enabled.toggled.connect(self.session.set_dummies_enabled)
        self.generator.currentIndexChanged.connect(self._push)
        self.utility.currentIndexChanged.connect(self._push)
        self.share.valueChanged.connect(self._push)
        self.redraw.clicked.connect(self.session.redraw_dummies)
        session.dummiesChanged.connect(self.refresh)
        session.dummySelectionChanged.connect(self.update_readout)
        session.metricsChanged.connect(self.update_readout)
        session.seriesChanged.connect(self.update_readout)
        session.landmarksChanged.connect(self._pending)
        self.refresh()

    # ------------------------------------------------------------------------------------ wiring
    def _push(self, *_args) -> None:
        self.session.set_dummy_settings(DummySettings(generator=self.generator.currentData(),
                                                      share=round(self.share.value(), 4) / 100.0,
                                                      utility=self.utility.currentData()))

    def refresh(self) -> None:
        s = self.session
        d = s.dummy_settings
        widgets = (self.enabled, self.generator, self.share, self.utility)
        for w in widgets:
            w.blockSignals(True)
        try:
            self.enabled.setChecked(s.dummies_enabled)
            self.generator.setCurrentIndex(GENERATORS.index(d.generator))
            self.utility.setCurrentIndex(UTILITIES.index(d.utility))
            self.share.setValue(100 * d.share)
        finally:
            for w in widgets:
                w.blockSignals(False)
        self.generator_note.setText(GENERATOR_NOTES[d.generator])
        self.utility_note.setText(UTILITY_NOTES[d.utility])
        self.redraw.setEnabled(s.dummies_enabled)
        self._pending()

    def _pending(self) -> None:
        if self.session.dummies_enabled:
            self.readout.setText("<i>computing the selection…</i>")
        else:
            self.update_readout()

    def update_readout(self) -> None:
        s = self.session
        eps = s.epsilon
        if not s.dummies_enabled:
            # (no count here, the status bar has it: a new text at every click laid the hidden dock out again)
            self.readout.setText(f"<b>Off.</b> The releases use the marked landmarks only, with all of ε = {eps:g}.")
            self.error.hide()
            return
        if s.dummy_error:
            self.error.setText(f"✘ {s.dummy_error}<br>The preview shows the releases without dummies.")
            self.error.show()
            self.readout.setText("<b>No selection.</b>")
            return
        self.error.hide()
        sel = s.dummy_selection
        if sel is None:
            self.readout.setText("<i>computing the selection…</i>")
            return
        n = s.n
        k = sel.landmarks.size - sel.dummies.size
        lines = [
            f"<b>{sel.dummies.size:,}</b> dummies added to {count_noun(k, 'landmark')}",
            f"protected together: <b>{sel.landmarks.size:,}</b> of {n:,} events ({share(sel.landmarks.size, n)})",
            f"ε spent on choosing the dummies: <b>{sel.epsilon_selection:.4g}</b> · left for the release: "
            f"<b>{sel.epsilon_remaining:.4g}</b>",
        ]
        if s.average_dummy_size is not None and np.isfinite(s.average_dummy_size):
            lines.append(f"on average over {s.runs} runs: {s.average_dummy_size:,.0f} events protected together")
        self.readout.setToolTip("The landmarks plus the dummies form L' (|L'| events); ε_sel = share × ε chooses "
                                "them and the release gets ε − ε_sel")
        if sel.note:
            lines.append(f"<i>{sel.note}</i>")
        self.readout.setText("<br>".join(lines))


class DummiesExtension(WindowPart):
    """What ``install`` leaves in ``window.extensions["dummies_ui"]``."""

    def __init__(self, window) -> None:
        super().__init__(window)
        session = self.session
        self.panel = HideLandmarksPanel(session)
        # Named for what it holds: its View-menu tick means "panel shown", not "landmarks hidden".
        self.dock = add_dock(window, new_dock(window, "Dummy landmarks", "hideLandmarksDock", self.panel),
                             Qt.DockWidgetArea.LeftDockWidgetArea, tab_with=window.settings_dock)
        window.settings_dock.raise_()
        window.view_menu.addAction(self.dock.toggleViewAction())

        self.action = QAction("&Hide landmarks among dummies", window)
        self.action.setObjectName("dummiesAction")
        self.action.setCheckable(True)
        self.action.setStatusTip("Add dummy landmarks so that the releases do not show which events are landmarks")
        self.action.toggled.connect(self._on_action)
        window.landmarks_menu.addSeparator()
        window.landmarks_menu.addAction(self.action)

        self.status = QLabel()
        self.status.setObjectName("dummyStatus")
        self.status.setStyleSheet(f"color: rgb{darker(DUMMY_COLOR, 0.7)}; font-weight: bold;")
        self.status.hide()
        window.statusBar().addPermanentWidget(self.status)

        session.dummiesChanged.connect(self._sync_action)
        session.dummySelectionChanged.connect(self._on_selection)
        session.seriesChanged.connect(self._on_selection)
        session.dummiesFailed.connect(self._on_failed)
        self._sync_action()

    # ------------------------------------------------------------------------------------ actions
    def _on_action(self, on: bool) -> None:
        self.session.set_dummies_enabled(on)
        if on:
            self.show_panel()

    def _sync_action(self) -> None:
        self.action.blockSignals(True)
        self.action.setChecked(self.session.dummies_enabled)
        self.action.blockSignals(False)
        if not self.session.dummies_enabled:
            self._on_selection()

    def show_panel(self) -> None:
        self.dock.show()
        self.dock.raise_()

    def _on_failed(self, message: str) -> None:
        self.window.show_error("Dummy landmarks", message + "\n\nThe preview shows the releases without dummies "
                               "until you choose another generator.")

    # -------------------------------------------------------------------------------------- plots
    def dummy_rows(self) -> np.ndarray:
        sel = self.session.dummy_selection
        if sel is None or not self.session.dummies_enabled:
            return np.zeros(0, dtype=np.int64)
        return sel.dummies

    def _on_selection(self) -> None:
        w = self.window
        rows = self.dummy_rows()
        if self.session.series is None:
            return
        # (at a coarser release resolution the dummies are periods: marked on the budget rows only)
        w.series_plot.set_dummies(rows if self.session.resolution is None else np.zeros(0, dtype=np.int64))
        w.budget_plot.set_dummies(rows)
        if self.session.series.kind == "location" and w.track_plot.series is self.session.series:
            w.track_plot.set_dummies(rows)
        sel = self.session.dummy_selection
        if sel is not None and self.session.dummies_enabled:
            self.status.setText(f"+{sel.dummies.size:,} dummies ({sel.landmarks.size:,} events protected together)")
            self.status.show()
        else:
            self.status.hide()

    # ------------------------------------------------------------------------------- project state
    def state(self) -> dict[str, Any]:
        s = self.session
        return {"enabled": s.dummies_enabled, **s.dummy_settings.to_dict(), "draw": s.dummy_draw}

    def restore(self, d: dict[str, Any]) -> None:
        s = self.session
        s.set_dummy_settings(DummySettings.from_dict(d))
        s.set_dummy_draw(int(d.get("draw", 0)))
        s.set_dummies_enabled(bool(d.get("enabled", False)))


def install(window) -> DummiesExtension:
    return DummiesExtension(window)
