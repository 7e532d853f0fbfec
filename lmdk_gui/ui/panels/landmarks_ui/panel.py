"""The suggestion panel (Landmarks › Suggest …): a rule's parameters, a live count of the events it would
mark (on a worker, debounced), the "aim for a percentage" helper and Apply; and the dock that holds it."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDockWidget,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from ....core.analysis import suggestions as sugg
from ....core.analysis.metrics import share
from ....core.data.series import Series
from ...dialogs.common import warning_label
from ...window.runner import LatestOnlyRunner
from .fields import LabelsField, NumberField
from .overlay import ProposalOverlay

#: Parameter edits within this many ms are computed once.
DEBOUNCE_MS = 150


def _compute_rule(series: Series, rule: str, params: dict[str, Any], *, should_cancel=None) -> np.ndarray:
    return sugg.apply_rule(series, rule, **params)


def _compute_target(series: Series, rule: str, pct: float, vary: str, fixed: dict[str, Any], *,
                    should_cancel=None) -> tuple[dict[str, Any], np.ndarray]:
    return sugg.rule_for_percentage(series, rule, pct, vary=vary, **fixed)


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def describe(rule: sugg.Rule, params: dict[str, Any]) -> str:
    """Short text of a rule and its parameters for the undo history, e.g.
    ``Stay points: Distance Δl = 50 m, Duration Δt = 1 min``."""
    parts = []
    for p in rule.params:
        v = params.get(p.name)
        if v is None:
            continue
        if p.type == "labels":
            vals = list(v)
            shown = ", ".join(map(str, vals[:4])) + (f" +{len(vals) - 4} more" if len(vals) > 4 else "")
            parts.append(f"{p.label} {{{shown}}}")
        else:
            parts.append(f"{p.label} = {_fmt(float(v))}{' ' + p.unit if p.unit else ''}")
    return f"{rule.label}: " + ", ".join(parts) if parts else rule.label



class SuggestionPanel(QWidget):
    """Parameters of one rule, built from its :class:`~lmdk_gui.core.analysis.suggestions.ParamSpec` s, with a live
    count, a "target %" helper and Apply (replace / add to the current landmarks)."""

    #: a proposal for the current parameters is ready (its size)
    proposalReady = Signal(int)
    #: the parameters cannot be used (message)
    proposalFailed = Signal(str)
    #: the target helper set new parameters (the achieved count follows with ``proposalReady``)
    targetFound = Signal(int)
    #: a suggestion was applied (number of landmarks afterwards)
    applied = Signal(int)

    def __init__(self, ui) -> None:  # ui: the LandmarksUI (feature.py) that builds this panel
        super().__init__()
        self.setObjectName("suggestionPanel")
        self.ui = ui
        self.window = ui.window
        self.session = ui.window.session
        self.overlay = ProposalOverlay(self.window)
        self.rule: sugg.Rule | None = None
        self.series: Series | None = None
        self.fields: dict[str, NumberField | LabelsField] = {}
        self.proposal: np.ndarray | None = None
        self._proposal_key: tuple | None = None
        self._runner: LatestOnlyRunner | None = None
        self._target_runner: LatestOnlyRunner | None = None
        self._pending_key: tuple | None = None
        self._target_request: tuple[float, str] = (0.0, "")
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._submit)
        self._active = False
        self._build()
        self.session.landmarksChanged.connect(self._update_after)

    # ------------------------------------------------------------------------------- layout
    def _build(self) -> None:
        """Rule, help, parameters and the target helper scroll; the count, the mode and Apply/Close stay
        at the bottom, always visible (a 1280×800 screen cannot show a long category list and all)."""
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(4)
        body = QWidget()
        body.setObjectName("suggestBody")
        lay = QVBoxLayout(body)
        lay.setContentsMargins(6, 6, 6, 0)
        self._build_rule(lay)
        lay.addWidget(self._build_target())
        lay.addWidget(warning_label(f"⚠ {sugg.RULE_WARNING}", "suggestWarning"))
        lay.addStretch(1)
        self._body_layout = lay

        scroll = QScrollArea()
        scroll.setObjectName("suggestScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)
        outer.addWidget(self._build_footer())

    def _build_rule(self, lay: QVBoxLayout) -> None:
        """The rule chooser, its help and the (empty) parameter form."""
        top = QHBoxLayout()
        top.addWidget(QLabel("Rule:"))
        self.rule_combo = QComboBox()
        self.rule_combo.setObjectName("suggestRule")
        self.rule_combo.currentIndexChanged.connect(self._on_rule_combo)
        top.addWidget(self.rule_combo, 1)
        lay.addLayout(top)
        self.help = QLabel()
        self.help.setObjectName("suggestHelp")
        self.help.setWordWrap(True)
        self.help.setStyleSheet("color: #555;")
        lay.addWidget(self.help)

        self.param_box = QGroupBox("Parameters")
        self.form = QFormLayout(self.param_box)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        lay.addWidget(self.param_box)

    def _build_target(self) -> QGroupBox:
        """The "aim for a landmark percentage" helper: a percentage, the parameter it varies, Find."""
        tgt = QGroupBox("Aim for a landmark percentage")
        tv = QVBoxLayout(tgt)
        tl = QHBoxLayout()
        self.target_spin = QDoubleSpinBox()
        self.target_spin.setObjectName("suggestTarget")
        self.target_spin.setRange(0.0, 100.0)
        self.target_spin.setDecimals(1)
        self.target_spin.setSuffix(" %")
        self.target_spin.setValue(20.0)
        self.vary_combo = QComboBox()
        self.vary_combo.setObjectName("suggestVary")
        self.vary_combo.setToolTip("the parameter the search changes (the others stay as set)")
        self.find_button = QPushButton("Find")
        self.find_button.setObjectName("suggestFind")
        self.find_button.setAutoDefault(False)
        self.find_button.setToolTip("search the parameter that gets closest to this percentage")
        self.find_button.clicked.connect(lambda: self.find_target(self.target_spin.value()))
        tl.addWidget(self.target_spin)
        self.vary_label = QLabel("by")
        tl.addWidget(self.vary_label)
        tl.addWidget(self.vary_combo, 1)
        tl.addWidget(self.find_button)
        tv.addLayout(tl)
        self.target_status = QLabel("")
        self.target_status.setObjectName("suggestTargetStatus")
        self.target_status.setWordWrap(True)
        self.target_status.setStyleSheet("color: #555;")
        self.target_status.hide()
        tv.addWidget(self.target_status)
        return tgt

    def _build_footer(self) -> QWidget:
        """The count, Replace/Add and Apply/Close (always visible, below the scrolling part)."""
        foot = QWidget()
        fl = QVBoxLayout(foot)
        fl.setContentsMargins(6, 2, 6, 6)
        self.count_label = QLabel("…")
        self.count_label.setObjectName("suggestCount")
        self.count_label.setWordWrap(True)
        self.count_label.setTextFormat(Qt.TextFormat.RichText)
        self.count_label.setMinimumHeight(30)
        fl.addWidget(self.count_label)
        self.replace_radio = QRadioButton("Replace")
        self.replace_radio.setObjectName("suggestReplace")
        self.replace_radio.setToolTip("the proposal becomes the landmark set")
        self.add_radio = QRadioButton("Add")
        self.add_radio.setObjectName("suggestAdd")
        self.add_radio.setToolTip("the proposal is added to the current landmarks")
        self.replace_radio.setChecked(True)
        self.mode_group = QButtonGroup(self)
        self.mode_group.addButton(self.replace_radio)
        self.mode_group.addButton(self.add_radio)
        ml = QHBoxLayout()
        ml.addWidget(self.replace_radio)
        ml.addWidget(self.add_radio)
        ml.addStretch(1)
        fl.addLayout(ml)
        buttons = QHBoxLayout()
        self.apply_button = QPushButton("Apply")
        self.apply_button.setObjectName("suggestApply")
        self.apply_button.setToolTip("make the proposal the landmarks (one step: Edit › Undo takes it back)")
        self.apply_button.clicked.connect(lambda: self.apply())
        self.close_button = QPushButton("Close")
        self.close_button.setObjectName("suggestClose")
        self.close_button.setToolTip("close the panel and remove the highlight (nothing is applied)")
        self.close_button.clicked.connect(self.ui.close_suggestions)
        for b in (self.apply_button, self.close_button):
            b.setAutoDefault(False)
        buttons.addStretch(1)
        buttons.addWidget(self.apply_button)
        buttons.addWidget(self.close_button)
        fl.addLayout(buttons)
        return foot
    # --------------------------------------------------------------------------------- rules
    def set_rule(self, rule: str | sugg.Rule) -> None:
        """Show ``rule`` for the session's current series (its parameters start at the last values used
        on this series, else at :func:`~lmdk_gui.core.analysis.suggestions.defaults`)."""
        series = self.session.series
        if series is None:
            raise RuntimeError("no series is open")
        r = sugg.get_rule(rule)
        if not r.supports(series.kind):
            raise ValueError(f"the {r.label} rule needs a {' or '.join(r.kinds)} series; this one is {series.kind}")
        self.series = series
        self.rule = r
        self._fill_rule_combo()
        self.help.setText(r.help)
        self.param_box.setTitle(f"{r.label} — parameters")
        self._build_fields()
        vary = [p for p in r.params if p.type == "float"]
        self.vary_combo.clear()
        for p in vary:
            self.vary_combo.addItem(p.label, p.name)
        if r.main in [p.name for p in vary]:
            self.vary_combo.setCurrentIndex([p.name for p in vary].index(r.main))
        show_vary = len(vary) > 1
        self.vary_combo.setVisible(show_vary)
        self.vary_label.setVisible(show_vary)
        self.target_status.setText("")
        self.target_status.hide()
        self.invalidate()

    def _fill_rule_combo(self) -> None:
        assert self.series is not None and self.rule is not None
        self.rule_combo.blockSignals(True)
        self.rule_combo.clear()
        for r in sugg.rules_for_kind(self.series.kind):
            self.rule_combo.addItem(r.label, r.name)
        self.rule_combo.setCurrentIndex(max(0, self.rule_combo.findData(self.rule.name)))
        self.rule_combo.blockSignals(False)

    def _on_rule_combo(self, _i: int) -> None:
        name = self.rule_combo.currentData()
        if name and self.rule is not None and name != self.rule.name:
            self.set_rule(name)

    def _build_fields(self) -> None:
        assert self.series is not None and self.rule is not None
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields = {}
        series, r = self.series, self.rule
        start = sugg.defaults(series, r)
        start.update(self.ui.remembered_params(series, r.name))
        rng = sugg.ranges(series, r)
        for p in r.params:
            if p.type == "labels":
                f: NumberField | LabelsField = LabelsField(p, series, list(start.get(p.name) or []))
                label = QLabel(f"{p.label} (tick one or more):")
                label.setToolTip(p.help)
                self.form.addRow(label)
                self.form.addRow(f)
            else:
                fallback = None
                if r.name == "threshold" and series.n:  # an unticked side starts at its usual tail
                    fallback = float(np.quantile(series.values, 0.2 if p.name == "below" else 0.8))
                f = NumberField(p, rng.get(p.name, (p.minimum or 0.0, p.maximum or 1.0)), start.get(p.name),
                                fallback=fallback)
                label = QLabel(p.label)  # the unit is the spin box's suffix
                label.setToolTip(p.help)
                self.form.addRow(label, f)
            f.changed.connect(self.invalidate)
            self.fields[p.name] = f
        # a category list takes the spare height; number fields keep their natural size
        has_list = any(isinstance(f, LabelsField) for f in self.fields.values())
        self._body_layout.setStretchFactor(self.param_box, 1 if has_list else 0)
        self._body_layout.setStretch(self._body_layout.count() - 1, 0 if has_list else 1)  # trailing stretch

    # ------------------------------------------------------------------------------ computing
    def params(self) -> dict[str, Any]:
        """The parameters as the form shows them (``None`` for an unused optional one)."""
        out: dict[str, Any] = {}
        for name, f in self.fields.items():
            out[name] = f.value()
        return out

    def set_params(self, **params: Any) -> None:
        """Set some parameters (as a user would; one recomputation follows)."""
        for name, v in params.items():
            if name not in self.fields:
                raise ValueError(f"the {self.rule.name if self.rule else '?'} rule has no parameter {name!r}")
            self.fields[name].set_value(v)
        self.invalidate()

    def _key(self) -> tuple:
        p = self.params()
        return (id(self.series), self.rule.name if self.rule else None,
                tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(p.items())))

    def is_current(self) -> bool:
        """True when :attr:`proposal` is the proposal for the parameters now shown."""
        return self.proposal is not None and self._proposal_key == self._key()

    def invalidate(self) -> None:
        """Parameters changed: forget the proposal and compute a new one after the debounce."""
        self.proposal = None
        self.apply_button.setEnabled(False)
        self._set_count_text("<span style='color:#777'>computing…</span>")
        if self._active:
            self._timer.start()

    def _count_runner(self) -> LatestOnlyRunner:
        if self._runner is None:  # created on first use: a window that never suggests starts no thread
            self._runner = LatestOnlyRunner("suggest", self, finished=self._on_result, failed=self._on_failed)
        return self._runner

    def _sweep_runner(self) -> LatestOnlyRunner:
        if self._target_runner is None:
            self._target_runner = LatestOnlyRunner("suggest-target", self, finished=self._on_target,
                                                   failed=self._on_target_failed)
        return self._target_runner

    def _submit(self) -> None:
        if self.series is None or self.rule is None or self.session.series is not self.series:
            return
        params = {k: v for k, v in self.params().items() if v is not None or self.rule.param(k).optional}
        self._pending_key = self._key()
        self._count_runner().submit(_compute_rule, self.series, self.rule.name, params)

    def _on_result(self, gen: int, rows: np.ndarray) -> None:
        if self._runner is None or not self._runner.is_current(gen) or self._pending_key != self._key():
            return
        self.proposal = np.asarray(rows, dtype=np.int64)
        self._proposal_key = self._pending_key
        if self.series is not None and self.rule is not None:
            self.ui.remember_params(self.series, self.rule.name, self.params())
        self._show_proposal()
        self.proposalReady.emit(int(self.proposal.size))

    def _on_failed(self, gen: int, message: str) -> None:
        if self._runner is None or not self._runner.is_current(gen):
            return
        msg = message.split(": ", 1)[1] if message.startswith("ValueError: ") else message
        if self.rule is not None and self.rule.name == "threshold" and "give below, above or both" in msg:
            msg = "Tick Below, Above or both."
        self.proposal = None
        self.overlay.clear()
        self._set_count_text(f"<span style='color:#b00000'>{msg}</span>")
        self.apply_button.setEnabled(False)
        self.proposalFailed.emit(msg)

    def _show_proposal(self) -> None:
        assert self.proposal is not None and self.series is not None
        n = self.series.n
        k = int(self.proposal.size)
        self._set_count_text(f"<b style='font-size:11pt'>{k:,}</b> of {n:,} events "
                             f"(<b>{share(k, n)}</b>) would be landmarks")
        self.apply_button.setEnabled(True)
        if self._active:
            self.overlay.show(self.proposal)
        self._update_after()

    def _set_count_text(self, html: str) -> None:
        self.count_label.setText(html)

    def _update_after(self) -> None:
        """Show how many landmarks each mode would leave."""
        if self.proposal is None or self.session.series is None:
            self.replace_radio.setText("Replace")
            self.add_radio.setText("Add")
            return
        cur = self.session.landmarks
        added = int(np.union1d(cur, self.proposal).size)
        self.replace_radio.setText(f"Replace ({cur.size:,} → {self.proposal.size:,} landmarks)")
        self.add_radio.setText(f"Add ({cur.size:,} → {added:,})")

    # --------------------------------------------------------------------------------- target
    def find_target(self, percent: float, vary: str | None = None) -> None:
        """Search (on a worker) the parameter giving the landmark percentage closest to ``percent``;
        the form then shows it and ``targetFound`` fires."""
        if self.series is None or self.rule is None:
            return
        r = self.rule
        if vary is None:
            vary = self.vary_combo.currentData() or r.main
            if r.name == "threshold":  # sweep the side that is in use
                p = self.params()
                if p.get("below") is None and p.get("above") is not None:
                    vary = "above"
                elif vary == "above" and p.get("above") is None:
                    vary = "below"
        fixed = {k: v for k, v in self.params().items() if k != vary and v is not None}
        if r.name in ("category", "changepoints"):
            fixed = {}
        self._target_request = (float(percent), vary)
        self.find_button.setEnabled(False)
        self.target_status.setText(f"Searching for {percent:g} %…")
        self.target_status.show()
        self._sweep_runner().submit(_compute_target, self.series, r.name, float(percent), vary, fixed)

    def _on_target(self, gen: int, result) -> None:
        if self._target_runner is None or not self._target_runner.is_current(gen):
            return
        self.find_button.setEnabled(True)
        params, rows = result
        pct, vary = self._target_request
        if self.rule is not None and self.rule.name == "threshold":
            params = {"below": params.get("below"), "above": params.get("above")}
        self.set_params(**{k: v for k, v in params.items() if k in self.fields})
        n = self.series.n if self.series is not None else 0
        got = 100.0 * rows.size / n if n else 0.0
        spec = self.rule.param(vary) if self.rule is not None else None
        what = f"{spec.label} = {_fmt(float(params[vary]))} {spec.unit}".rstrip() if spec is not None and \
            spec.type == "float" and params.get(vary) is not None else "the closest category list"
        self.target_status.setText(f"Closest to {pct:g} %: {what} → {got:.1f} %")
        self.target_status.show()
        self.targetFound.emit(int(rows.size))

    def _on_target_failed(self, gen: int, message: str) -> None:
        if self._target_runner is None or not self._target_runner.is_current(gen):
            return
        self.find_button.setEnabled(True)
        self.target_status.setText(message.split(": ", 1)[-1])
        self.target_status.show()

    # ---------------------------------------------------------------------------------- apply
    def mode(self) -> str:
        return "add" if self.add_radio.isChecked() else "replace"

    def apply(self, mode: str | None = None) -> bool:
        """Apply the current proposal (``mode`` "replace" or "add"; default: the radio buttons) as one
        undoable step. Returns False when there is no current proposal or nothing would change."""
        if not self.is_current() or self.rule is None or self.session.series is not self.series:
            return False
        mode = mode or self.mode()
        if mode not in ("replace", "add"):
            raise ValueError(f"mode must be 'replace' or 'add', got {mode!r}")
        assert self.proposal is not None
        before = self.session.landmarks
        rows = self.proposal if mode == "replace" else np.union1d(before, self.proposal)
        verb = "replace" if mode == "replace" else "add"
        rules = frozenset({self.rule.label}) | (self.session.landmark_rules if mode == "add" else frozenset())
        self.session.set_landmarks(rows, text=f"Suggest: {describe(self.rule, self.params())} ({verb})", rules=rules)
        changed = not np.array_equal(self.session.landmarks, before)
        msg = (f"{self.session.landmarks.size:,} landmarks after applying {self.rule.label.lower()}"
               if changed else "The proposal is already the landmark set; nothing changed.")
        self.window.statusBar().showMessage(msg, 8000)
        self.overlay.clear()  # applied: the highlight would now mark the landmarks twice
        if changed:
            self.applied.emit(int(self.session.landmarks.size))
        return changed

    # --------------------------------------------------------------------------- activation
    def activate(self) -> None:
        """The panel is shown: compute and highlight."""
        self._active = True
        if self.is_current():
            self._show_proposal()
        else:
            self.invalidate()

    def deactivate(self) -> None:
        """The panel is hidden: stop computing and remove the highlight."""
        self._active = False
        self._timer.stop()
        for r in (self._runner, self._target_runner):
            if r is not None:
                r.cancel()
        self.find_button.setEnabled(True)
        self.overlay.clear()

    def shutdown(self) -> None:
        self.deactivate()
        for attr in ("_runner", "_target_runner"):
            r = getattr(self, attr)
            if r is not None:
                r.shutdown(1.0)
                setattr(self, attr, None)


class SuggestionDock(QDockWidget):
    """Dock holding the panel; hiding or closing it removes the highlight."""

    def __init__(self, panel: SuggestionPanel, parent: QWidget) -> None:
        super().__init__("Suggest landmarks", parent)
        self.setObjectName("suggestDock")
        panel.setMinimumWidth(300)
        self.setWidget(panel)
        self.panel = panel
        self.visibilityChanged.connect(self._on_visible)

    def _on_visible(self, visible: bool) -> None:
        if visible:
            self.panel.activate()
        elif self.isHidden():  # closed or toggled off (not merely tabbed behind another dock)
            self.panel.deactivate()

    def closeEvent(self, ev):  # noqa: N802 - Qt naming
        self.panel.deactivate()
        super().closeEvent(ev)
