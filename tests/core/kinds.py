"""One small series of each kind, for tests that compare two ways of computing the same release."""

from __future__ import annotations

import numpy as np

from lmdk_gui.core.data.series import Series

KINDS = ("numeric", "location", "categorical")


def example_series(kind: str, n: int, seed: int) -> Series:
    """n random events of ``kind`` (values in 0–10 kWh-like numbers, positions within ≈ 1 km, three labels)."""
    rng = np.random.default_rng(seed)
    if kind == "numeric":
        return Series.from_arrays(np.round(rng.random(n) * 10, 3))
    if kind == "location":
        return Series.from_arrays(np.column_stack([45 + rng.random(n) * 0.01, 7 + rng.random(n) * 0.01]),
                                  kind="location")
    return Series.from_arrays(rng.integers(0, 3, n), kind="categorical", categories=("a", "b", "c"))
