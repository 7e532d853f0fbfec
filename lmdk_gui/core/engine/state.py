"""The session's state as an evented model (DESIGN §10): one field per piece of state, one event per field.

:class:`SessionState` is what the window's session (``ui/window/session.py``) holds and edits; it needs no Qt,
so a script or a test can build one, connect to ``state.events.<field>`` and change fields. Assigning a field
emits its event once, with ``(new, old)``, and only when the value differs (the landmark array compares by
identity, then by content): a no-op assignment emits nothing. The values are immutable — frozen dataclasses,
tuples, frozensets, and a read-only landmark array (:func:`frozen_rows`) — so a preview job, a snapshot or an
undo step can keep the value it was given without copying it, and an edit always replaces a value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from psygnal import SignalGroup, SignalGroupDescriptor

from ..data.series import Series
from ..kernel.dummies import DummySettings
from ..kernel.settings import LANDMARK_SCHEMES, PrivacySettings
from .preview import Snapshot


def frozen_rows(rows: np.ndarray) -> np.ndarray:
    """``rows`` made read-only: every edit replaces the landmark set (never writes into it), so snapshots,
    previews and caches keep it as it is (no copy per click: 16 MB at 10^7 events with 20 % landmarks) and
    compare it by identity; a write into it fails loudly."""
    rows.setflags(write=False)
    return rows


def same_rows(a: np.ndarray, b: np.ndarray) -> bool:
    """The landmark fields' equality: the same array, or the same rows (a no-op edit emits nothing)."""
    return a is b or (a.shape == b.shape and bool(np.array_equal(a, b)))


def _no_rows() -> np.ndarray:
    return frozen_rows(np.zeros(0, dtype=np.int64))


@dataclass
class SessionState:
    """What the session's preview, metrics and export are computed from, plus what the user chose to see."""

    #: the open series (None before one is opened); compared by identity (``Series`` has ``eq=False``)
    series: Series | None = None
    #: the landmark rows: sorted, distinct, read-only
    landmarks: np.ndarray = field(default_factory=_no_rows)
    #: the suggestion rules whose proposals are in the landmark set
    landmark_rules: frozenset[str] = frozenset()
    settings: PrivacySettings = field(default_factory=PrivacySettings)
    #: (resolution, aggregate), e.g. ("1D", "sum"), or None: one value per event (DESIGN §12)
    resolution: tuple[str, str] | None = None
    #: the preview noise's seed (never the export's) and the runs its average is taken over
    seed: int = 1
    runs: int = 20
    dummies_enabled: bool = False
    #: the dummy settings, kept while dummies are off
    dummy_settings: DummySettings = field(default_factory=DummySettings)
    #: the draw number of the preview's dummy selection
    dummy_draw: int = 0
    visible_schemes: frozenset[str] = frozenset(LANDMARK_SCHEMES)

    # One SignalGroup per instance, one signal per field above. Child events are not relayed: no value is
    # itself evented, and the values are replaced, never changed in place.
    events: ClassVar[SignalGroupDescriptor] = SignalGroupDescriptor(
        equality_operators={"landmarks": same_rows}, connect_child_events=False)

    @property
    def dummies(self) -> DummySettings | None:
        """The dummy settings in force: None when dummies are off."""
        return self.dummy_settings if self.dummies_enabled else None

    def snapshot(self) -> Snapshot:
        """What a computation on the events (at no coarser resolution) works on; no copy is made."""
        if self.series is None:
            raise ValueError("no series")
        return Snapshot(self.series, self.landmarks, self.settings, self.seed, self.runs,
                        dummies=self.dummies, dummy_draw=self.dummy_draw)


def signal_group(state: SessionState) -> SignalGroup:
    """``state.events`` typed as what it is at run time (the class attribute is the descriptor)."""
    events = state.events
    assert isinstance(events, SignalGroup)
    return events
