"""The palette stays readable with deuteranopia (issue 14): simulate it (Machado et al. 2009, severity 1, on
linear RGB) and measure colour differences as CIELAB ΔE (1976); about 20 is clearly different at a glance,
under 10 is easily confused."""

from __future__ import annotations

import itertools

import numpy as np

from lmdk_gui.ui.views.theme import DUMMY_COLOR, LANDMARK_COLOR, ORIGINAL_COLOR, SCHEME_COLORS

DEUTERANOPIA = np.array([[0.367322, 0.860646, -0.227968],
                         [0.280085, 0.672501, 0.047413],
                         [-0.011820, 0.042940, 0.968881]])
SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
WHITE = np.array([0.95047, 1.0, 1.08883])


def _linear(rgb) -> np.ndarray:
    c = np.asarray(rgb, dtype=np.float64) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(lin: np.ndarray) -> np.ndarray:
    xyz = SRGB_TO_XYZ @ lin / WHITE
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a, b, *, deuteranopia: bool) -> float:
    la, lb = _linear(a), _linear(b)
    if deuteranopia:
        la, lb = np.clip(DEUTERANOPIA @ la, 0, 1), np.clip(DEUTERANOPIA @ lb, 0, 1)
    return float(np.linalg.norm(_lab(la) - _lab(lb)))


def test_simulation_is_sane():
    # red and green, far apart for most people, nearly merge for a deuteranope; grey is unchanged
    assert delta_e((200, 0, 0), (0, 160, 0), deuteranopia=False) > 80
    assert delta_e((200, 0, 0), (0, 160, 0), deuteranopia=True) < 0.4 * delta_e((200, 0, 0), (0, 160, 0),
                                                                                 deuteranopia=False)
    assert delta_e((128, 128, 128), (128, 128, 128), deuteranopia=True) == 0.0


def test_landmarks_and_dummies_stand_apart_from_every_scheme_under_deuteranopia():
    for scheme, color in SCHEME_COLORS.items():
        assert delta_e(LANDMARK_COLOR, color, deuteranopia=True) >= 30, scheme
        assert delta_e(DUMMY_COLOR, color, deuteranopia=True) >= 30, scheme
    assert delta_e(LANDMARK_COLOR, DUMMY_COLOR, deuteranopia=True) >= 30
    assert delta_e(LANDMARK_COLOR, ORIGINAL_COLOR, deuteranopia=True) >= 30


def test_the_landmark_schemes_stand_apart_under_deuteranopia():
    shown = ("uniform", "skip", "adaptive", "balanced")  # the landmark-private schemes, shown by default
    for a, b in itertools.combinations(shown, 2):
        assert delta_e(SCHEME_COLORS[a], SCHEME_COLORS[b], deuteranopia=True) >= 40, (a, b)
    for a, b in itertools.combinations(SCHEME_COLORS, 2):
        assert delta_e(SCHEME_COLORS[a], SCHEME_COLORS[b], deuteranopia=True) >= 15, (a, b)


def test_the_gps_maps_original_track_stands_apart_from_every_schemes_track(qtbot):
    """A newcomer found "original" and Balanced both black on the GPS map: the track's original is drawn in
    the preview rows' grey and dashed: far from Balanced's black, and the only dashed line (the schemes'
    tracks are solid; a grey is close to some desaturated scheme colours under deuteranopia, its dashes are not)."""
    from PySide6.QtCore import Qt

    from lmdk_gui.ui.views.plots import TrackPlot

    plot = TrackPlot()
    qtbot.addWidget(plot)
    pen = plot.original.opts["pen"]
    rgb = pen.color().getRgb()[:3]
    for deut in (False, True):
        assert delta_e(rgb, SCHEME_COLORS["balanced"], deuteranopia=deut) >= 30
    assert pen.style() == Qt.PenStyle.DashLine
    assert all(t.opts["pen"].style() == Qt.PenStyle.SolidLine for t in plot.tracks.values())
