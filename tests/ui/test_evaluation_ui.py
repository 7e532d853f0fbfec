"""The Compare tab (issue 8): run in a worker, cancel, never block editing, save PNG and CSV."""

from __future__ import annotations

import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics

from lmdk_gui.core.kernel.settings import ALL_SCHEMES, SCHEME_LABELS
from tests.conftest import SAMPLES
from tests.ui.conftest import wait_preview

LONG_RUNS = 100_000  # far more than a test waits for: only cancelling ends it


def tab_of(window):
    tab = window.extensions["evaluation_ui"]
    assert window.tabs.indexOf(tab) >= 0 and window.tabs.tabText(window.tabs.indexOf(tab)) == "Compare"
    assert tab.objectName() == "compareTab"
    return tab


def test_tab_and_sources(window):
    tab = tab_of(window)
    keys = [tab.source_combo.itemData(i)[0] for i in range(tab.source_combo.count())]
    assert keys[0] == "threshold-below" and "placement-bimodal" in keys and "stay-distance" not in keys
    assert not tab.save_png_button.isEnabled() and not tab.cancel_button.isEnabled()
    # another kind of series offers its own rules, and the choice survives when it can
    tab.select_source("placement-skewed")
    window.open_series(SAMPLES / "gps_bus_limerick.csv")
    keys = [tab.source_combo.itemData(i)[0] for i in range(tab.source_combo.count())]
    assert keys[0] == "stay-distance" and "threshold-below" not in keys
    assert tab.source_combo.currentData()[0] == "placement-skewed"


def test_run_shows_chart_and_table_and_saves(window, qtbot, tmp_path):
    tab = tab_of(window)
    window.tabs.setCurrentWidget(tab)
    tab.percentages_edit.setText("0, 50,100")
    tab.runs_spin.setValue(5)
    with qtbot.waitSignal(tab.evaluationFinished, timeout=60_000):
        qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    res = tab.result
    assert res is not None and res.runs_done == 5 and res.percentages == (0.0, 50.0, 100.0)
    assert tab.chart.result is res
    assert tab.table.rowCount() == 3 + 1 and tab.table.columnCount() == 1 + len(ALL_SCHEMES)
    assert tab.table.item(2, 2).text() == "no release"  # Skip at 100 %: nothing fresh, no public fallback
    # the last row: the error of publishing the median at every event, the yardstick (issue 44)
    assert tab.table.item(3, 0).text() == "One constant (median)"
    assert tab.table.item(3, 1).text() == "0.5732" and res.constant_error == pytest.approx(0.57316, rel=1e-4)
    assert "no better than publishing one constant" in tab.table.item(0, 5).toolTip()  # User-level
    assert tab.progress_bar.value() == tab.progress_bar.maximum()
    assert "Done" in tab.status.text() and tab.run_button.isEnabled() and not tab.cancel_button.isEnabled()

    png, csv_path = tmp_path / "cmp.png", tmp_path / "cmp.csv"
    asked = []
    tab.ask_save_path = lambda what, suggested: (asked.append((what, suggested)), str(
        png if what == "png" else csv_path))[1]
    qtbot.mouseClick(tab.save_png_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(tab.save_csv_button, Qt.MouseButton.LeftButton)
    assert [a[0] for a in asked] == ["png", "csv"] and asked[0][1].endswith("energy_hue_2013_jan_comparison.png")
    assert png.read_bytes()[:4] == b"\x89PNG" and png.stat().st_size > 10_000
    df = pd.read_csv(csv_path)
    assert list(df.columns) == ["percentage", "scheme", "mae_mean", "mae_std", "runs"] and len(df) == 3 * len(ALL_SCHEMES)
    assert "Saved" in tab.status.text()

    # the result belongs to the snapshot: a later edit only marks it out of date
    window.session.set_epsilon(2.0)
    qtbot.waitUntil(lambda: "changed since" in tab.status.text(), timeout=5_000)
    assert tab.result is res and res.epsilon == 1.0


def test_cancel_and_editing_meanwhile(window, qtbot):
    tab = tab_of(window)
    tab.percentages_edit.setText("0,50,100")
    tab.runs_spin.setValue(LONG_RUNS)
    job = tab.run()
    assert job is not None and tab.is_running()
    assert tab.cancel_button.isEnabled() and not tab.run_button.isEnabled()
    qtbot.waitUntil(lambda: tab.progress_bar.value() > 0, timeout=30_000)
    # the session keeps working while the comparison runs
    window.session.toggle_landmark(10)
    wait_preview(qtbot, window)
    window.session.set_epsilon(0.5)
    wait_preview(qtbot, window)
    assert tab.is_running()
    with qtbot.waitSignal(tab.evaluationCancelled, timeout=30_000):
        qtbot.mouseClick(tab.cancel_button, Qt.MouseButton.LeftButton)
    assert not tab.is_running() and tab.run_button.isEnabled()
    assert "Cancelled" in tab.status.text()
    res = tab.result
    if res is not None:  # the runs completed before the cancel are shown
        assert res.cancelled and 0 < res.runs_done < LONG_RUNS and res.epsilon == 1.0
        assert "cancelled" in tab.chart.subtitle.text()


def test_bad_percentages_and_state(window):
    tab = tab_of(window)
    tab.percentages_edit.setText("10, 150")
    assert tab.run() is None and not tab.is_running()
    assert "between 0 and 100" in tab.status.text()
    tab.percentages_edit.setText("0, 25")
    tab.select_source("placement-bimodal")
    tab.runs_spin.setValue(7)
    tab.seed_spin.setValue(3)
    tab.scale_combo.setCurrentIndex(2)
    state = tab.state()
    assert state == {"percentages": "0, 25", "source": "placement-bimodal", "runs": 7, "seed": 3, "scale": "log"}
    tab.restore({"percentages": "0, 100", "source": "threshold-above", "runs": 9, "seed": 1, "scale": "linear"})
    assert tab.state() == {"percentages": "0, 100", "source": "threshold-above", "runs": 9, "seed": 1,
                           "scale": "linear"}
    tab.restore({"source": "stay-distance", "runs": "x"})  # unknown here / wrong type: ignored
    assert tab.state()["source"] == "threshold-above" and tab.state()["runs"] == 9


def test_closing_the_window_stops_a_running_comparison(window, qtbot):
    tab = tab_of(window)
    tab.runs_spin.setValue(LONG_RUNS)
    job = tab.run()
    qtbot.waitUntil(lambda: tab.progress_bar.value() > 0, timeout=30_000)
    window.close()
    assert job.wait(10) and not tab.is_running()


def test_compare_tab_denoised_errors(window, qtbot):
    """Errors: denoised → the run also denoises (same denoiser) and the chart/table show those errors; raw
    shows the raw ones of the same result; the CSV holds both."""
    tab = tab_of(window)
    tab.percentages_edit.setText("0, 40")
    tab.runs_spin.setValue(2)
    tab.errors_combo.setCurrentIndex(tab.errors_combo.findData("denoised"))
    with qtbot.waitSignal(tab.evaluationFinished, timeout=60_000):
        tab.run()
    r = tab.result
    assert r.denoised and tab.chart.result is not r
    assert tab.chart.result.mean[0, 0] == r.mean_denoised[0, 0] < r.mean[0, 0]
    assert "denoised" in tab.chart.title.text()
    from lmdk_gui.ui.panels.evaluation_ui import compact_mean_std

    assert tab.table.item(0, 1).text() == compact_mean_std(float(r.mean_denoised[0, 0]),
                                                           float(r.std_denoised[0, 0]))
    tab.errors_combo.setCurrentIndex(tab.errors_combo.findData("raw"))
    assert tab.chart.result is r and "denoised" not in tab.chart.title.text()
    assert "mae_denoised_mean" in r.csv_text().splitlines()[0]


def test_every_number_of_the_table_is_read_whole_at_1280(window, qtbot):
    """At 1280×800 the six scheme columns shared ≈ 80 px each: "0.999 ± 0.011" was cut to "0.999 ± 0…." in
    four of them. The columns are as wide as their contents, and a cell that still does not fit goes on two
    lines (before the ±) rather than being cut."""
    from PySide6.QtCore import QRect

    window.resize(1280, 800)
    tab = tab_of(window)
    window.tabs.setCurrentWidget(tab)
    tab.percentages_edit.setText("0, 20, 40, 60, 80, 100")
    tab.runs_spin.setValue(20)
    with qtbot.waitSignal(tab.evaluationFinished, timeout=60_000):
        tab.run()
    t = tab.table
    fm = t.fontMetrics()
    for r in range(t.rowCount()):
        for c in range(1, t.columnCount()):
            text = t.item(r, c).text()
            room = QRect(0, 0, t.columnWidth(c) - 8, 10_000)  # (the cell's margins)
            used = fm.boundingRect(room, int(Qt.TextFlag.TextWordWrap), text)
            assert used.width() <= room.width() and used.height() <= t.rowHeight(r), (r, c, text)


def test_the_chart_and_its_table_fit_the_default_window(window, qtbot):
    """At the window's default 1152×720 the legend's six boxes in one row made the tab 857 px wide in 743:
    the chart was cut at the right (scheme names, the 100 % group) and the table's headers at both ends
    ("ndmarks (cou", "vent-leve"). The legend wraps between its entries, and a squeezed header wraps between
    words, its row as tall as the tallest one."""
    from PySide6.QtCore import QRect

    window.resize(1152, 720)
    tab = tab_of(window)
    window.tabs.setCurrentWidget(tab)
    tab.runs_spin.setValue(3)
    with qtbot.waitSignal(tab.evaluationFinished, timeout=60_000):
        tab.run()
    qtbot.waitUntil(lambda: tab.width() >= tab.minimumSizeHint().width())
    legend = tab.chart.legend
    names = [SCHEME_LABELS[s].replace("-", "\u2011") for s in ALL_SCHEMES]  # never broken after "User-"
    assert all(f"</span> {name}</nobr>" in legend.text() for name in names)
    assert legend.width() <= tab.chart.width()
    t = tab.table
    header = t.horizontalHeader()
    for c in range(t.columnCount()):
        item = t.horizontalHeaderItem(c)
        fm = QFontMetrics(item.font())
        room = QRect(0, 0, header.sectionSize(c) - 8, 10_000)
        used = fm.boundingRect(room, int(Qt.TextFlag.TextWordWrap) | int(Qt.AlignmentFlag.AlignCenter), item.text())
        assert used.width() <= header.sectionSize(c) and used.height() <= header.height(), (c, item.text())
    assert sum(header.sectionSize(c) for c in range(t.columnCount())) <= t.viewport().width()
