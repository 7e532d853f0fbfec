"""The memory policy (issue 43): whether a session keeps *lean* for a series, decided in one place.

A lean session trades a little click time for peak memory on a large series (docs/performance.md, "Memory"):
the later stages it cancelled have let go of their arrays before a preview job starts, a hidden scheme keeps its
release's summary and errors but not the release, a landmark edit drops the releases it replaces at once, the
drawn values are kept at float32, and the preview's unit noise is held only while a preview computes. The
session asks :meth:`MemoryPolicy.resolve` and never decides by itself.

Modes: ``"lean"`` and ``"full"`` force the choice; ``"auto"`` (the default) is lean from :data:`LEAN_MIN`
events on, or earlier on a machine whose memory the series' arrays would crowd: from the length at which
:data:`BYTES_PER_EVENT` per event exceeds :data:`MEMORY_SHARE` of the physical memory. On the 24 GB machines
this project measures on that length is far above ``LEAN_MIN``, so ``auto`` is the ``LEAN_MIN`` rule the
session used before the policy existed; on a small machine (about 2 GB and less) the memory rule comes first.

The user chooses the mode with the ``memoryPolicy`` preference or ``lmdk-gui --memory auto|lean|full``.
Qt-free: the window's preferences are read in ``ui.window.startup``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

MemoryMode = Literal["auto", "lean", "full"]
MODES: tuple[MemoryMode, ...] = ("auto", "lean", "full")

#: From this many events on ``auto`` keeps lean (80 MB per float64 array at 10^7 events). Below it the lean
#: mechanisms cost clicks time (the 10^6 click waited for a denoising step) and save little memory.
LEAN_MIN = 2_000_000
#: The float64 arrays a full session holds per event at its peak, roughly: six schemes' raw and denoised
#: values (2 × 6 × 8 bytes) and the preview's unit noise (two draws, 16 bytes).
BYTES_PER_EVENT = 112
#: ``auto`` keeps lean once those arrays would take more than this share of the physical memory.
MEMORY_SHARE = 0.125
#: The physical memory assumed where the system does not tell it (not Linux, or sysconf refused).
DEFAULT_MEMORY_BYTES = 8 * 2**30


def physical_memory() -> int:
    """The machine's physical memory in bytes: ``sysconf`` where the system has it (Linux and most Unixes),
    else :data:`DEFAULT_MEMORY_BYTES`."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return DEFAULT_MEMORY_BYTES
    return pages * size if pages > 0 and size > 0 else DEFAULT_MEMORY_BYTES


@dataclass(frozen=True)
class MemoryPolicy:
    """``mode``: ``"auto"``, ``"lean"`` or ``"full"``; ``memory_bytes``: the physical memory ``auto`` weighs
    the series against (None: :func:`physical_memory`, read once per resolve)."""

    mode: MemoryMode = "auto"
    memory_bytes: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"memory policy {self.mode!r}: choose one of {', '.join(MODES)}")

    @classmethod
    def parse(cls, text: str) -> MemoryPolicy:
        """The policy named by ``text`` (case and surrounding blanks ignored); ValueError otherwise."""
        mode = text.strip().lower()
        if mode not in MODES:
            raise ValueError(f"memory policy {text!r}: choose one of {', '.join(MODES)}")
        return cls(mode)  # type: ignore[arg-type]

    def lean_from(self) -> int:
        """The smallest series (in events) this policy keeps lean for."""
        if self.mode == "lean":
            return 0
        if self.mode == "full":
            return 2**62
        memory = self.memory_bytes if self.memory_bytes is not None else physical_memory()
        return min(LEAN_MIN, int(memory * MEMORY_SHARE) // BYTES_PER_EVENT)

    def resolve(self, n_events: int) -> bool:
        """Whether a session keeps lean for a series of ``n_events`` events."""
        return n_events >= self.lean_from()
