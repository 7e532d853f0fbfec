"""The window's "Release resolution" (DESIGN §12): the schemes, metrics and export work on the periods while
the series plot keeps the events; the setting is saved in projects."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from lmdk_gui.core.analysis.metrics import constant_error
from lmdk_gui.core.kernel.settings import PrivacySettings

from .conftest import wait_preview

WAIT = 30_000


def _set(window, qtbot, label: str) -> None:
    combo = window.settings_panel.resolution_combo
    with qtbot.waitSignal(window.session.resolutionChanged, timeout=WAIT):
        combo.setCurrentIndex(combo.findData(label))
    wait_preview(qtbot, window)


def test_a_day_per_row_in_preview_metrics_and_export(qtbot, window, tmp_path):
    s = window.session
    s.set_settings(PrivacySettings(epsilon=1.0, sensitivity=5.0, bounds=(0.0, 5.0)))
    s.set_landmarks([205, 308])
    wait_preview(qtbot, window)
    assert s.release_series is s.series and s.preview["uniform"].values.shape == (744,)
    _set(window, qtbot, "1D")
    rel = s.release_series
    assert s.resolution == ("1D", "sum") and rel.n == 31 and s.series.n == 744
    assert s.release_landmarks.tolist() == [8, 12]  # the days holding rows 205 and 308
    for scheme, p in s.preview.items():
        assert p.values.shape == (31,) and p.guarantee.holds is (scheme != "event"), scheme
    assert window.series_plot.series is s.series  # landmarks are still clicked on the events
    assert window.metrics_table.yardstick() == constant_error(rel)
    assert "kWh/day" in window.metrics_table.horizontalHeaderItem(5).text().replace("\n", " ")
    assert "event 205" in window.hover_html(205) and "released in the period from 2013-01-09" in window.hover_html(205)
    # a landmark click on an event: its day becomes a landmark period
    s.toggle_landmark(0)
    wait_preview(qtbot, window)
    assert s.release_landmarks.tolist() == [0, 8, 12]
    job = window.export_release(tmp_path / "days.csv", "skip")
    with qtbot.waitSignal(job.finished, timeout=WAIT):
        pass
    assert len(pd.read_csv(tmp_path / "days.csv")) == 31
    side = json.loads((tmp_path / "days.csv.json").read_text())
    assert side["resolution"] == "1D" and side["aggregate"] == "sum" and side["bounds"] == [0.0, 5.0]
    _set(window, qtbot, "")
    assert s.resolution is None and s.preview["uniform"].values.shape == (744,)


def test_the_resolution_is_saved_in_the_project(qtbot, window, tmp_path):
    s = window.session
    agg = window.settings_panel.aggregate_combo
    _set(window, qtbot, "1W")
    with qtbot.waitSignal(s.resolutionChanged, timeout=WAIT):
        agg.setCurrentIndex(agg.findData("mean"))
    assert s.resolution == ("1W", "mean") and s.is_dirty()
    ui = window.extensions["project_ui"]
    path = tmp_path / "p.lmdk.json"
    assert ui.save_to(path)
    assert json.loads(path.read_text())["resolution"] == {"resolution": "1W", "aggregate": "mean"}
    with qtbot.waitSignal(s.resolutionChanged, timeout=WAIT):
        s.set_resolution(None)
    with qtbot.waitSignal(s.previewChanged, timeout=WAIT):
        assert ui.open_project(path)
    wait_preview(qtbot, window)
    assert s.resolution == ("1W", "mean") and not s.is_dirty()
    assert s.preview["skip"].values.shape == (5,)
    assert window.settings_panel.resolution_combo.currentData() == "1W"
    assert np.isfinite(window.metrics_table.yardstick())


def test_rows_of_periods_span_their_own_x_and_rows_of_events_follow_the_series_plot_again(qtbot, window):
    """The rows were drawn at x 0 … 30 while linked to the series plot's 744 events: a sliver at the left."""
    s = window.session
    _set(window, qtbot, "1D")
    for rows in (window.budget_plot, window.preview_plot):
        (x0, x1), _ = rows.plots()[0].getViewBox().viewRange()
        assert x0 < 0.5 and 29.5 < x1 < 40, (x0, x1)  # the 31 days, not the series plot's events
    _set(window, qtbot, "")
    assert s.resolution is None
    window.series_plot.getPlotItem().vb.setXRange(100, 200, padding=0)
    for rows in (window.budget_plot, window.preview_plot):
        (x0, x1), _ = rows.plots()[0].getViewBox().viewRange()
        assert abs(x0 - 100) < 1 and abs(x1 - 200) < 1, (x0, x1)
