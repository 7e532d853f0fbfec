"""The "What ε do I need?" tab (issue 14, accuracy first)."""

from __future__ import annotations

import pandas as pd
import pytest
from PySide6.QtCore import Qt

from lmdk_gui.core.analysis.accuracy import epsilon_for_error, map_landmarks
from lmdk_gui.ui.panels.accuracy_ui import UNITS
from tests.conftest import SAMPLES

from .conftest import wait_preview


@pytest.fixture
def panel(qtbot, window):
    window.session.add_range(100, 180)
    wait_preview(qtbot, window)
    p = window.extensions["accuracy_ui"]
    with qtbot.waitSignal(p.curvesReady, timeout=120_000):
        qtbot.mouseClick(window.settings_panel.accuracy_button, Qt.MouseButton.LeftButton)
    assert window.tabs.currentWidget() is p and p.objectName() == "accuracyPanel"
    return p


def test_the_panel_shows_the_core_answer_and_sets_epsilon_on_click(qtbot, window, panel):
    s = window.session
    with qtbot.waitSignal(panel.curvesReady, timeout=120_000):
        s.set_denoise(False)  # the raw release's error (the denoised one: the next test)
    assert panel.error_field == "mae"
    panel.set_target(0.46, UNITS)
    core = epsilon_for_error(s.series, s.landmarks, s.settings, 0.46, runs=s.runs, seed=s.seed)
    assert panel.smallest == core.smallest
    assert core.smallest["uniform"] is None and core.smallest["skip"] is not None
    row = {panel.table.item(r, 0).text(): r for r in range(panel.table.rowCount())}
    assert panel.table.item(row["■ Uniform"], 1).text() == "not reached ≤ 100"
    assert not panel.use_buttons["uniform"].isEnabled()
    skip = core.smallest["skip"]
    assert panel.use_buttons["skip"].text() == f"Use ε = {skip:.3g}"
    assert panel.target_line.value() == pytest.approx(-0.337, abs=1e-3)  # log10(0.46)
    with qtbot.waitSignal(s.previewChanged, timeout=30_000):
        qtbot.mouseClick(panel.use_buttons["skip"], Qt.MouseButton.LeftButton)
    assert s.epsilon == pytest.approx(skip)
    assert window.settings_panel.eps_spin.value() == pytest.approx(skip, abs=1e-3)
    # the current-ε line follows; the curves do not depend on ε, so nothing is recomputed
    assert 10 ** panel.eps_line.value() == pytest.approx(skip)
    assert panel._runner.is_idle() and panel.cancel_button.isHidden() and panel.smallest == core.smallest
    # a new landmark changes the curves: recomputed while the tab is shown
    with qtbot.waitSignal(panel.curvesReady, timeout=120_000):
        s.add_range(300, 400)
    assert panel.smallest != core.smallest


def test_with_denoise_on_the_panel_answers_for_the_denoised_release(qtbot, window, panel):
    """Denoise on (the default): the curves are the denoised release's error (what the export writes), the
    core's answer with error_field="mae_denoised"; turning Denoise off recomputes the raw curves."""
    s = window.session
    assert s.settings.denoise and panel.error_field == "mae_denoised"
    assert panel.curves.error_field == "mae_denoised"
    panel.set_target(0.46, UNITS)
    core = epsilon_for_error(s.series, s.landmarks, s.settings, 0.46, runs=s.runs, seed=s.seed,
                             error_field="mae_denoised")
    assert panel.smallest == core.smallest
    assert "denoised" in panel.chart.getPlotItem().getAxis("left").labelText
    raw = epsilon_for_error(s.series, s.landmarks, s.settings, 0.46, runs=s.runs, seed=s.seed)
    with qtbot.waitSignal(panel.curvesReady, timeout=120_000):
        s.set_denoise(False)
    assert panel.curves.error_field == "mae" and panel.smallest == raw.smallest
    assert "denoised" not in panel.chart.getPlotItem().getAxis("left").labelText


def test_a_share_of_the_range_and_the_menu_action(qtbot, window, panel):
    window.tabs.setCurrentIndex(0)
    window.findChild(type(window.accuracy_action), "accuracyAction").trigger()
    assert window.tabs.currentWidget() is panel
    panel.set_target(10.0, "percent")  # 10 % of 0.1–4.7 kWh
    assert panel.target() == pytest.approx(0.1 * (window.session.series.values.max()
                                                 - window.session.series.values.min()))
    assert panel.target_note.text().startswith("= 0.46")
    assert "not itself private" in panel.privacy_text.text()


def test_plan_on_another_file_uses_mapped_landmarks(qtbot, window, panel, tmp_path):
    other = tmp_path / "public_half.csv"
    pd.read_csv(SAMPLES / "energy_hue_2013_jan.csv").iloc[:372].to_csv(other, index=False)
    panel.ask_plan_file = lambda: str(other)
    with qtbot.waitSignal(panel.curvesReady, timeout=120_000):
        qtbot.mouseClick(panel.plan_other, Qt.MouseButton.LeftButton)
    assert "public_half.csv" in panel.privacy_text.text() and not panel.plan_own.isHidden()
    s = window.session
    lm = map_landmarks(s.landmarks, s.n, 372)
    assert lm.size == 40 and lm[0] == 50
    panel.set_target(0.46, UNITS)
    core = epsilon_for_error(panel.plan_series, lm, s.settings, 0.46, runs=s.runs, seed=s.seed,
                             error_field=panel.error_field)
    assert panel.smallest == core.smallest
    # new landmarks are carried over again (the file is not reloaded)
    loaded = panel.plan_series
    with qtbot.waitSignal(panel.curvesReady, timeout=120_000):
        s.add_range(600, 743)
    lm = map_landmarks(s.landmarks, s.n, 372)
    assert lm.max() == 371 and panel.plan_series is loaded
    core = epsilon_for_error(loaded, lm, s.settings, 0.46, runs=s.runs, seed=s.seed, error_field=panel.error_field)
    assert panel.smallest == core.smallest
    with qtbot.waitSignal(panel.curvesReady, timeout=120_000):
        qtbot.mouseClick(panel.plan_own, Qt.MouseButton.LeftButton)
    assert "Computed on the true data" in panel.privacy_text.text()


def test_an_unreadable_plan_file_is_one_line_and_falls_back_to_the_open_data(qtbot, window, panel, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("no,numbers\nx,y\n")
    panel.ask_plan_file = lambda: str(bad)
    with qtbot.waitSignal(panel.curvesReady, timeout=120_000):
        panel.plan_other.click()
    assert panel.status.text().startswith("⚠") and "\n" not in panel.status.text()
    assert panel.status.text().endswith("(planning on the open data)")
    assert panel.plan_path is None and "Computed on the true data" in panel.privacy_text.text()
    s = window.session
    assert panel.curves is not None and panel.curves.errors["skip"][0] > 0
    assert panel.smallest == epsilon_for_error(s.series, s.landmarks, s.settings, panel.target(), runs=s.runs,
                                               seed=s.seed, error_field=panel.error_field).smallest


def test_cancel(qtbot, window, panel):
    panel.compute()
    assert not panel.cancel_button.isHidden()
    panel.cancel_button.click()
    assert panel.cancel_button.isHidden() and panel.status.text().startswith("Cancelled")


def test_the_default_target_is_informative_and_a_target_a_constant_meets_is_lowered(qtbot, window, panel):
    """Issue 44: the planner aims at "clearly below one constant" (0.9 × the median's 0.573 kWh), not at an
    absolute number the median itself already meets."""
    from lmdk_gui.core.analysis.accuracy import informative_target
    from lmdk_gui.ui.panels.accuracy_ui import INFORMATIVE

    s = window.session
    assert panel.target_unit.currentData() == INFORMATIVE and not panel.target_spin.isEnabled()
    want = informative_target(s.series)
    assert want == pytest.approx(0.9 * 0.5732, rel=1e-3)
    assert panel.target() == pytest.approx(want)
    assert "0.9 × 0.573 kWh, publishing the series' median" in panel.target_note.text()
    core = epsilon_for_error(s.series, s.landmarks, s.settings, want, runs=s.runs, seed=s.seed,
                             error_field=panel.error_field)
    assert panel.smallest == core.smallest and core.smallest["skip"] is not None
    panel.set_target(2.0, UNITS)  # the median is off by 0.573 kWh: 2 kWh asks for nothing
    assert panel.target() == pytest.approx(want)
    assert "which one constant meets" in panel.target_note.text()
    assert panel.smallest == core.smallest
    panel.set_target(0.46, UNITS)  # stricter than informative: kept
    assert panel.target() == 0.46
