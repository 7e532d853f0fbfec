"""Landmarks menu: suggestion rules with a live count and a preview highlight; landmark list import/export.

Landmark choice is the user's (thesis §4.1: "landmark identification is an orthogonal problem"); the rules of
:mod:`lmdk_gui.core.analysis.suggestions` only *propose* rows (DESIGN §8). The panel shows a rule's parameters, the
number and percentage of events it would mark (recomputed on a worker while the user edits, coalesced by a
short debounce and :class:`~lmdk_gui.ui.window.runner.LatestOnlyRunner`, so stay points on 10^5+ fixes never block
the window), and highlights the proposal on the series plot (and on the track map for location series) in
a colour used for nothing else. Nothing changes until **Apply**, which replaces or adds to the current set
as one undoable step.

Automation API (tests and scripting): ``window.extensions["landmarks_ui"]`` is a :class:`LandmarksUI` with
``open_suggestions(rule) -> SuggestionPanel``, ``import_landmarks(path, mode=…)``, ``export_landmarks(path)``
and the replaceable hooks ``get_import_path``, ``get_export_path``, ``ask_import_mode``.

The modules of this package (every name is importable from the package, as it was from the one module the
feature was): ``feature`` (:class:`LandmarksUI`, the menu and the panel's dock), ``list_files`` (landmark list
import/export), ``panel`` (:class:`SuggestionPanel`, :class:`SuggestionDock`), ``fields`` (its parameter
fields), ``overlay`` (the proposal highlight).
"""

from __future__ import annotations

from .feature import LandmarksUI, install
from .fields import LabelsField, NumberField
from .list_files import LandmarkListFiles
from .overlay import PROPOSAL_COLOR, RING_LIMIT, ProposalOverlay
from .panel import DEBOUNCE_MS, SuggestionDock, SuggestionPanel, describe

__all__ = ["DEBOUNCE_MS", "PROPOSAL_COLOR", "RING_LIMIT", "LabelsField", "LandmarkListFiles", "LandmarksUI",
           "NumberField", "ProposalOverlay", "SuggestionDock", "SuggestionPanel", "describe", "install"]
