"""The "Temporal correlation" tab (issue 7; DESIGN §7; thesis §2.3.4, §4.1.3 Definition 10).

Real series are temporally correlated: an adversary who knows how consecutive values depend on each other
(a Markov chain) learns about event t from the releases around it, so the loss at t exceeds ε_t. This tab
shows, for every shown scheme, the *landmark temporal privacy loss* of the release the user is about to
make (Definition 10, :func:`lmdk_gui.core.analysis.correlation.landmark_tpl`) at every event, its maximum next to ε
and next to the same maximum without correlation (the landmark sum), under a correlation model the user
picks: the thesis' Laplacian-smoothed m-state chain of degree s (§5.1.3; smaller s = stronger) or a
row-stochastic matrix of their own (typed into a small table or loaded from CSV/JSON), with separate
backward and forward matrices allowed.

Design notes.

* The curves use each preview release's own budgets *and landmark set* (``release.landmarks``): with dummy
  landmarks on, the release protects L′ ⊇ L and Definition 10 is evaluated on L′.
* Computation runs on a :class:`LatestOnlyRunner` (≈0.1 s per scheme at n = 10⁵), only while the tab is
  visible; a hidden tab only remembers that it is out of date and catches up when it is shown. Curves are
  cached per (release object, model object), so toggling a scheme's visibility computes only that scheme.
* A curve is never shown as current when it is not: as soon as the landmarks, settings or model change,
  the old curves turn grey, the table greys out and the status reads "updating…" until the new curves
  for the *current* preview arrive.
* The x axis is the event row with the series' timestamps (:class:`~lmdk_gui.ui.views.plots.TimeAxis`) and
  follows the series plot's zoom. We copy the *data* range both ways instead of pyqtgraph's ``setXLink``:
  ``setXLink`` lines views up by their on-screen position when they overlap, and two plots in different
  tabs of the same window always overlap, so the rows shown would be shifted by the width of this tab's
  control column.
* The y range is fitted to the curves within the visible rows and always includes ε (y zoom by mouse is
  off; the x zoom drives it), so the ε line is always on screen to compare against.

The modules of this package (every name is importable from the package, as it was from the one module the
tab used to be):

* ``tab`` — :class:`CorrelationTab` and :func:`install`; the computation and the project state;
* ``model_choice`` — the left column: the model controls and what turns them into the model in use;
* ``loss_view`` — the right side: the status line, the loss plot and the table of maxima;
* ``widgets`` — the s spin box, the s ↔ slider mapping and the matrix editor; ``curves`` — the worker job.
"""

from __future__ import annotations

from . import widgets
from .curves import CurveResult, compute_curves
from .loss_view import STALE_COLOR, TABLE_COLUMNS, TABLE_TIPS, LossView, _span
from .model_choice import ModelChoice
from .tab import CorrelationTab, install
from .widgets import *  # noqa: F403 - every name of widgets.__all__, listed there once

__all__ = [
    "STALE_COLOR", "TABLE_COLUMNS", "TABLE_TIPS", "CorrelationTab", "CurveResult", "LossView", "ModelChoice", "_span",
    "compute_curves", "install", *widgets.__all__,
]
