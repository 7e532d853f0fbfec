"""Export keys for tests: exports take secret keys of ≥ 128 bits (issue 17, finding 2), never small integers.

``test_key(n)`` derives a fixed 256-bit key (64 hex digits, as ``--new-key`` makes) from a small number, so a test that used to seed
an export with ``seed=n`` keeps its reproducibility and what it asserts. Test-only: these keys are public.
"""

from __future__ import annotations

import hashlib


def test_key(n: int) -> str:
    return hashlib.sha256(f"lmdk_gui test export key {int(n)}".encode()).hexdigest()


test_key.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
