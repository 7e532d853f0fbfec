"""What a privacy scheme is (DESIGN §4): the record each module of this package registers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: (n, landmarks: sorted int64 rows, ε_a: the allocatable ε) → the n per-event budgets ε_t
BudgetsFn = Callable[[int, np.ndarray, float], np.ndarray]


@dataclass(frozen=True)
class Scheme:
    """One scheme and everything the rest of the app asks of it.

    ``budgets`` is None for a scheme whose budgets are drawn while releasing (Adaptive: its loop is
    :mod:`..adaptive`); the others' budgets depend only on n, the landmarks and ε_a, and every release's
    budgets still go through the independent check (:mod:`..guarantee`) whatever this record claims."""

    name: str  # the id in files, commands, projects and sidecars; never changes once published
    label: str  # the name the window shows
    prose_name: str  # the name inside a sentence of the sidecar ("the event-level scheme")
    position: int  # display order; a new scheme takes the next free number (existing positions never move)
    landmark_private: bool  # satisfies landmark privacy by construction (False: a baseline)
    budgets: BudgetsFn | None
    uses_landmarks: bool  # its budgets depend on the landmark set (False: planned without it)
    republishes: bool  # repeats the previous release at events it skips (the export warns: it shows landmarks)
    remade_by_edit: bool  # a landmark edit changes every budget (a lean session drops its release at the edit)
    color: tuple[int, int, int]  # its colour in every view (tests/ui/test_palette.py checks the distances)
    help: tuple[str, str]  # (what it does in plain words, one example) for the help dialog


def constant_budgets(n: int, value: float) -> np.ndarray:
    """n budgets equal to ``value`` as one float seen n times: a read-only zero-stride view. A preview holds
    Uniform's, Event's and User's on every click (a series-sized array each as separate floats). It reads
    like the materialised array (numpy's sums, means and extremes give the same bits, see the tests); the
    kernels read it through its strides, and code that needs contiguous memory copies it."""
    return np.broadcast_to(np.float64(value), (n,))


@dataclass(frozen=True)
class _EveryEvent:
    """A baseline's :data:`BudgetsFn`: ``share(n, ε_a)`` at every event, whatever the landmarks."""

    share: Callable[[int, float], float]  # module-level, so that a Scheme pickles by reference

    def __call__(self, n: int, landmarks: np.ndarray, eps_a: float) -> np.ndarray:
        return constant_budgets(n, self.share(n, eps_a))


def baseline(name: str, label: str, position: int, share: Callable[[int, float], float],
             color: tuple[int, int, int], help: tuple[str, str]) -> Scheme:
    """A baseline scheme (DESIGN §4): not landmark-private, the same budget ``share(n, ε_a)`` at every event
    (so planned without the landmarks, and a landmark edit leaves it as it is), nothing republished; its
    prose name is its label in lower case."""
    return Scheme(name=name, label=label, prose_name=label.lower(), position=position, landmark_private=False,
                  budgets=_EveryEvent(share), uses_landmarks=False, republishes=False, remade_by_edit=False,
                  color=color, help=help)
