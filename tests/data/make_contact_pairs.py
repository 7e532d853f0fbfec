"""Write ``contact_pairs_synthetic.csv``: a small SocioPatterns-style contact log (synthetic, seeded).

Shape as the SocioPatterns files: ``timestamp,i,j,class_i,class_j``, one row per active contact between
persons i < j during the 20-second interval ending at ``timestamp`` (UNIX seconds). 14 persons in 3 classes
over one school morning; person 1005 meets several people in the same interval now and then (groups), so
reading "the contacts of 1005" meets repeated timestamps. Run: ``python tests/data/make_contact_pairs.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

PERSONS = {1001: "2BIO1", 1002: "2BIO1", 1003: "2BIO1", 1004: "2BIO1", 1005: "2BIO1", 1006: "PC",
           1007: "PC", 1008: "PC", 1009: "PC", 1010: "PC", 1011: "MP*1", 1012: "MP*1", 1013: "MP*1",
           1014: "MP*1"}
START = 1353315600  # 2012-11-19 09:00:00 UTC


def rows(seed: int = 13) -> list[tuple[int, int, int]]:
    rng = np.random.default_rng(seed)
    ids = sorted(PERSONS)
    out = []
    for step in range(540):  # 3 hours of 20-second intervals
        t = START + 20 * step
        if rng.random() < 0.45:  # most intervals have no contact at all
            continue
        for _ in range(rng.integers(1, 3)):
            a, b = rng.choice(ids, 2, replace=False)
            out.append((t, int(min(a, b)), int(max(a, b))))
        if rng.random() < 0.12:  # 1005 in a group: several contacts in the same interval
            for other in rng.choice([p for p in ids if p != 1005], int(rng.integers(2, 4)), replace=False):
                out.append((t, int(min(1005, other)), int(max(1005, other))))
    seen: set[tuple[int, int, int]] = set()
    return [r for r in out if not (r in seen or seen.add(r))]  # a pair is in contact once per interval


def main() -> None:
    path = Path(__file__).with_name("contact_pairs_synthetic.csv")
    lines = ["timestamp,i,j,class_i,class_j"]
    lines += [f"{t},{i},{j},{PERSONS[i]},{PERSONS[j]}" for t, i, j in rows()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{path}: {len(lines) - 1} rows")


if __name__ == "__main__":
    main()
