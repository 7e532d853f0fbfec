"""Issue 15, cold start: views the first paint does not show are built when first shown, and then draw exactly
what they would have drawn had they been built with the window.

The preview rows of the schemes hidden by default (Event, User) are built the first time they are shown; the
GPS track view the first time a location series opens (or a caller reads ``window.track_plot``).
"""

from __future__ import annotations

import numpy as np

from lmdk_gui.app import SAMPLE_FILES
from lmdk_gui.core.kernel.settings import ALL_SCHEMES, LANDMARK_SCHEMES
from lmdk_gui.ui.views.plots import TrackPlot
from lmdk_gui.ui.window.main_window import SAMPLES, MainWindow

from .conftest import wait_denoised

HIDDEN = tuple(s for s in ALL_SCHEMES if s not in LANDMARK_SCHEMES)  # Event, User
#: the items compared point for point; the ▲/▼ marks by position (their drawn width follows the row's width
#: at the last redraw, which a row shown later can see a few pixels off until the next one: so before too)
ITEMS = ("original", "original_band", "dots", "rings", "dense", "denoised")


def _window(qtbot, sample: str = "energy", shown: tuple[str, ...] = ()) -> MainWindow:
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    for scheme in shown:
        w.session.set_scheme_visible(scheme, True)
    name, options = SAMPLE_FILES[sample]
    assert w.open_series(SAMPLES / name, **options)
    w.resize(1280, 1000)
    w.show()
    qtbot.waitExposed(w)
    wait_denoised(qtbot, w)
    return w


def _drawn(w: MainWindow, scheme: str) -> dict:
    """What a preview row shows: each item's points, its note, its y and x range and its size on screen."""
    r = w.preview_plot.rows[scheme]
    vb = r["plot"].getViewBox()
    out: dict = {k: tuple(str(np.asarray(a).tolist()) for a in r[k].getData()) for k in ITEMS}  # (NaN too)
    out |= {"marks": str([x.tolist() for x in w.preview_plot.offchart_marks(scheme)]), "note": r["note"].text, "range": vb.viewRange(), "size": (vb.width(), vb.height()),
            "opacity": r["dots"].opacity(), "bottom axis": r["plot"].getAxis("bottom").isVisible()}
    return out


def _same_rows(qtbot, late: MainWindow, early: MainWindow, schemes) -> None:
    """``late``'s rows end drawn as ``early``'s (after the layout passes and x-link updates still queued)."""
    def same() -> None:
        for s in schemes:
            a, b = _drawn(late, s), _drawn(early, s)
            assert {k: v for k, v in a.items() if v != b[k]} == {k: v for k, v in b.items() if v != a[k]}, s

    qtbot.waitUntil(same, timeout=5000)  # (an AssertionError until the timeout is re-raised)


def test_building_the_window_builds_no_hidden_preview_row_and_no_track_view(qtbot):
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    assert set(w.preview_plot.rows) == w.session.visible_schemes == set(LANDMARK_SCHEMES)
    assert w.findChild(TrackPlot) is None
    w.show()
    assert w.open_series(SAMPLES / SAMPLE_FILES["energy"][0])
    wait_denoised(qtbot, w)
    assert set(w.preview_plot.rows) == set(LANDMARK_SCHEMES)  # a numeric series: no track view either
    assert w.findChild(TrackPlot) is None and not w.main_split.count() > 1
    w.close()


def test_a_row_first_shown_later_draws_the_current_preview_as_if_built_with_the_window(qtbot):
    """Event and User shown after the preview arrived: built then, they draw the current preview (points,
    denoised lines, notes, y range, x link, place) exactly as in a window that showed them from the start."""
    early = _window(qtbot, shown=HIDDEN)
    late = _window(qtbot)
    assert not set(HIDDEN) & set(late.preview_plot.rows)
    for scheme in HIDDEN:
        late.session.set_scheme_visible(scheme, True)
    qtbot.waitUntil(lambda: late.preview_plot.shown() == early.preview_plot.shown())
    _same_rows(qtbot, late, early, ALL_SCHEMES)
    # the late rows follow the series plot's x range like the others
    for w in (early, late):
        w.series_plot.vb.setXRange(100, 300, padding=0)
    _same_rows(qtbot, late, early, HIDDEN)
    # hidden again and shown again: the same row, drawn for the current view
    row = late.preview_plot.rows["event"]
    late.session.set_scheme_visible("event", False)
    late.series_plot.vb.setXRange(200, 400, padding=0)
    early.series_plot.vb.setXRange(200, 400, padding=0)
    late.session.set_scheme_visible("event", True)
    assert late.preview_plot.rows["event"] is row
    _same_rows(qtbot, late, early, ["event"])
    for w in (early, late):
        w.close()


def test_the_track_view_is_built_for_a_location_series_and_draws_its_preview(qtbot):
    w = _window(qtbot, "gps")
    track = w.findChild(TrackPlot)
    assert track is w.track_plot and track.isVisible() and track.width() > 0
    s = w.session
    assert track.series is s.series and set(track._shown()) == s.visible_schemes
    for scheme in track._shown():
        x, y = track.curves[scheme].getData()
        assert np.array_equal(y, s.preview[scheme].values[:, 0])  # latitude
    w.close()


def test_the_rows_are_laid_out_before_their_first_preview_and_kept_for_the_next_series(qtbot, monkeypatch):
    """The window is laid out for the rows it will show before their first preview arrives (it was laid out
    again when it came, the plots resized twice), and the rows themselves are laid out (empty) before that
    preview is computed: laid out when it arrived, in three layout passes, it held the GUI thread 50-60 ms.
    A series opened later keeps them as they are."""
    from lmdk_gui.ui.views import multiples
    from lmdk_gui.ui.window import session as session_mod

    # (the samples stand for series whose preview loads the compiled kernels; a smaller one's preview runs as
    # Python in a few ms, overlapping the series' first paint, and lays the rows out when it arrives)
    monkeypatch.setattr(session_mod, "INTERPRET_MAX", 100)
    # the rows' gate waits for the views it laid out only: one that did not change gets no paint to wait for
    # (with the fallback at 60 s, waiting for it would time the previews below out)
    monkeypatch.setattr(multiples.AfterPaint, "LATEST_MS", 60_000)
    w = MainWindow(load_default=False)
    qtbot.addWidget(w)
    want = w.preview_plot.minimumHeight()
    w.resize(1280, 1000)
    w.show()
    s = w.session
    at_submit: list[tuple[int, int]] = []
    submit = s._preview_runner.submit
    s._preview_runner.submit = lambda *a, **k: (
        at_submit.append((len(w.preview_plot.shown()), len(w.budget_plot.shown()))), submit(*a, **k))[1]
    with qtbot.waitSignal(s.previewChanged, timeout=30_000):
        assert w.open_series(SAMPLES / SAMPLE_FILES["energy"][0])
        assert w.preview_plot.minimumHeight() == want
    assert at_submit == [(4, 4)]
    assert len(w.preview_plot.shown()) == 4 and w.preview_plot.minimumHeight() == want
    grids: list[object] = []
    grid = multiples._Rows._grid
    monkeypatch.setattr(multiples._Rows, "_grid", lambda self, shown: (grids.append(self), grid(self, shown)))
    with qtbot.waitSignal(s.previewChanged, timeout=30_000):
        assert w.open_series(SAMPLES / SAMPLE_FILES["gps"][0])
        assert len(w.preview_plot.shown()) == 4 and w.preview_plot.minimumHeight() == want
    assert grids == [] and len(w.preview_plot.shown()) == 4
    for scheme in list(s.visible_schemes):  # nothing to show: one row's minimum, as before
        s.set_scheme_visible(scheme, False)
    assert w.preview_plot.shown() == [] and w.preview_plot.minimumHeight() < want
    w.close()
