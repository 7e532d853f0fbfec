"""The rows' notes and the hover box are painted lines, not HTML documents (issue 15): their markup is read
as runs of text, colour, weight and subscript, and every note and hover text the window writes is read whole."""

from __future__ import annotations

from lmdk_gui.ui.views.multiples import NoteItem
from lmdk_gui.ui.views.plots import TextLines, markup_runs

from .conftest import wait_denoised


def test_runs_of_the_markup():
    assert markup_runs("") == []
    assert markup_runs("mean error 1.2 kWh") == [[("mean error 1.2 kWh", None, False, False)]]
    text = ("error 1 → 0.5<br><span style='color:#a00000'><b>1,234</b> values beyond<br>the chart, of 9</span>"
            "<br>▲3 ▼4 &amp; ε<sub>t</sub> = 2")
    assert markup_runs(text) == [
        [("error 1 → 0.5", None, False, False)],
        [("1,234", "#a00000", True, False), (" values beyond", "#a00000", False, False)],
        [("the chart, of 9", "#a00000", False, False)],
        [("▲3 ▼4 & ε", None, False, False), ("t", None, False, True), (" = 2", None, False, False)],
    ]
    assert markup_runs("<b style='color:#123456'>Skip</b> 0 – 1<br>(= ε)") == [
        [("Skip", "#123456", True, False), (" 0 – 1", None, False, False)], [("(= ε)", None, False, False)]]


def _whole(markup: str) -> None:
    for line in markup_runs(markup):
        assert all("<" not in t and ">" not in t for t, *_ in line), markup


def test_every_note_and_hover_text_of_the_window_is_read_whole(qtbot, window):
    wait_denoised(qtbot, window)
    notes = [r["note"] for plot in (window.budget_plot, window.preview_plot) for r in plot.rows.values()]
    assert any(n.text for n in notes)
    for n in notes:
        _whole(n.text)
    window.session.set_landmarks([3, 10])
    wait_denoised(qtbot, window)
    hover = window.hover_html(10)
    _whole(hover)
    lines = TextLines()
    lines.set(hover)
    assert "event 10" in lines.plain() and "landmark" in lines.plain() and "εt =" in lines.plain()


def test_a_note_is_as_tall_as_its_lines_and_as_wide_as_the_column():
    item = NoteItem()
    item.setText("one")
    one = item.minimumHeight()
    item.setText("one<br>two<br>three")
    assert item.minimumHeight() > 2.5 * one - 3 * 4.0
    assert item.minimumWidth() == item.maximumWidth()
    assert item.text == "one<br>two<br>three"


def test_every_note_fits_its_column_for_each_kind(qtbot, window):
    """A note is cut at the column's edge: each sample's notes (numbers, locations, categories, with their
    denoised figures and the off-chart counts) are narrower than the column."""
    from lmdk_gui.ui.views.plots import NOTE_W
    from tests.conftest import SAMPLES

    for name in ("energy_hue_2013_jan.csv", "gps_bus_limerick.csv", "contacts_person1672_first.csv"):
        with qtbot.waitSignal(window.session.previewChanged, timeout=30_000):
            assert window.open_series(SAMPLES / name)
        window.session.set_landmarks([1, 5, 9])
        wait_denoised(qtbot, window)
        for plot in (window.budget_plot, window.preview_plot):
            for scheme, r in plot.rows.items():
                assert r["note"]._text.width <= NOTE_W, (name, scheme, r["note"].text)
