"""The rows' notes are painted lines, not HTML documents (issue 15): their markup is read as runs of text,
colour and weight, and every note the window writes is read whole."""

from __future__ import annotations

from lmdk_gui.ui.multiples import NoteItem, note_runs

from .conftest import wait_denoised


def test_runs_of_the_notes_markup():
    assert note_runs("") == []
    assert note_runs("mean error 1.2 kWh") == [[("mean error 1.2 kWh", None, False)]]
    text = ("error 1 → 0.5<br><span style='color:#a00000'><b>1,234</b> values beyond<br>the chart, of 9</span>"
            "<br>▲3 ▼4")
    assert note_runs(text) == [
        [("error 1 → 0.5", None, False)],
        [("1,234", "#a00000", True), (" values beyond", "#a00000", False)],
        [("the chart, of 9", "#a00000", False)],
        [("▲3 ▼4", None, False)],
    ]
    assert note_runs("<b style='color:#123456'>Skip</b> 0 – 1<br>(= ε)") == [
        [("Skip", "#123456", True), (" 0 – 1", None, False)], [("(= ε)", None, False)]]


def test_every_note_of_the_window_is_read_whole_and_sized_by_its_lines(qtbot, window):
    wait_denoised(qtbot, window)
    notes = [r["note"] for plot in (window.budget_plot, window.preview_plot) for r in plot.rows.values()]
    assert any(n.text for n in notes)
    for n in notes:
        for line in note_runs(n.text):
            assert all("<" not in t and ">" not in t for t, _, _ in line), n.text
    item = NoteItem()
    item.setText("one")
    one = item.minimumHeight()
    item.setText("one<br>two<br>three")
    assert item.minimumHeight() > 2 * one - 2 * NoteItem.MARGIN
    assert item.minimumWidth() == item.maximumWidth()
