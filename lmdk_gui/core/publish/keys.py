"""Export keys bound to what they release, and the canonical identity of an input (issue 42, findings 2, 4, 6).

A keyed export never draws its noise from the key alone. The words come from a *release key*
``HMAC-SHA256(key, label ‖ release digest)``, where the release digest (:func:`release_digest`) covers
everything that decides the noise: the loaded series (:func:`series_digest`: kind, times and values after the
duplicate policy, category labels — not the file's bytes), the true landmark set, the privacy settings, the
scheme, the dummy settings, the noise backend and the chunk size. So the same key re-creates the *same*
release bit for bit (a re-export spends no new ε), and gives independent noise to anything else: a corrected
value, a moved landmark, another ε, next month's table. Without that, two releases of nearly the same data
under one key differ by exactly the true difference (finding 2). Denoising, the written columns and the
sidecar do not change the noise and are not part of the digest. A batch binds the person through the
person's own key ``HMAC-SHA256(master, id)`` (:func:`~.batch.person_key`) and the data through the digest.

Keys must be secrets, not structured text (finding 6: a 64-digit key that is 59 zeros and five digits has 20
bits and was found by brute force from one release): :func:`key_weakness` refuses keys shorter than 64 hex
digits, with 12 or more digits in a row that repeat or step by a fixed amount, with a 12-digit block that
occurs twice (``deadbeef…``, ``0123…f0123…``), or with an estimated entropy (empirical per-digit entropy ×
digits) under 128 bits (a zero-padded short key, a key of few distinct digits). The patterns are long enough
that a random 64-digit key shows one with probability under 10⁻¹⁰ (batch persons' derived keys go through the
same check), and a random key's estimate is above 200 bits; ``new_export_key`` (``--new-key``, the dialog's
generator) only ever returns a key that passes. The check refuses what is clearly structured; it cannot prove
a key random.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
from collections import Counter
from dataclasses import asdict
from typing import Any

import numpy as np

from ..data.series import Series
from ..kernel import securenoise

__all__ = ["KEY_HEX_DIGITS", "MIN_ESTIMATED_BITS", "estimated_bits", "key_weakness", "release_digest",
           "release_key", "selection_words", "series_digest", "noise_words"]

#: a key's minimum length: 64 hex digits = 32 bytes (256 bits written, at least 128 by the estimate)
KEY_HEX_DIGITS = 64
#: the least empirical entropy (bits) a key's digits must show
MIN_ESTIMATED_BITS = 128.0
#: digits in a row that repeat or step by a fixed amount, or a block that occurs twice: structure, not chance
PATTERN_DIGITS = 12

_RELEASE_LABEL = b"lmdk release key v2\x00"
_SELECTION_LABEL = b"lmdk export dummies v2\x00"
_SERIES_LABEL = b"lmdk series v1\x00"
_HASH_CHUNK = 1 << 20  # elements hashed at a time (a canonical copy of a chunk, never of the whole series)


# ------------------------------------------------------------------------------------------ key strength
def estimated_bits(hex_digits: str) -> float:
    """Empirical per-digit entropy of the digits times their number (a simple, generous estimate: a key with
    few distinct digits or one digit dominating scores low)."""
    n = len(hex_digits)
    if n == 0:
        return 0.0
    counts = Counter(hex_digits).values()
    return -n * sum(c / n * math.log2(c / n) for c in counts)


def key_weakness(key: bytes) -> str | None:
    """Why ``key`` is not a secret an export may use (one clause), or None when it is fine."""
    digits = key.hex()
    if len(digits) < KEY_HEX_DIGITS:
        return f"the export key has {len(digits)} hex digits, fewer than {KEY_HEX_DIGITS}"
    step = [(int(b, 16) - int(a, 16)) % 16 for a, b in zip(digits, digits[1:], strict=False)]
    run = 1
    for i in range(1, len(step)):
        run = run + 1 if step[i] == step[i - 1] else 1
        if run >= PATTERN_DIGITS - 1:
            what = "repeat" if step[i] == 0 else "count up or down by a fixed step"
            return (f"the export key has {PATTERN_DIGITS} or more hex digits in a row that {what} "
                    f"(near digit {i + 2}): a structured key, not a secret")
    seen: dict[str, int] = {}
    for i in range(len(digits) - PATTERN_DIGITS + 1):
        block = digits[i:i + PATTERN_DIGITS]
        if seen.setdefault(block, i) != i:
            return f"the export key repeats the block {block!r}: a structured key, not a secret"
    bits = estimated_bits(digits)
    if bits < MIN_ESTIMATED_BITS:
        return (f"the export key's digits carry about {bits:.0f} bits by their spread, fewer than "
                f"{MIN_ESTIMATED_BITS:.0f}")
    return None


# ------------------------------------------------------------------------------------------ digests
def series_digest(series: Series) -> str:
    """SHA-256 (hex) of the loaded series in a canonical form: kind, number of events, times (ns, little
    endian), values (float64 bits; categorical: int64 codes and the labels), so the same data read from a
    file with other line endings, quoting or row order has the same digest. Cached on the series."""
    cached = series._cache.get("lmdk_series_digest")
    if cached is not None:
        return cached
    h = hashlib.sha256(_SERIES_LABEL)
    h.update(json.dumps({"kind": series.kind, "n": int(series.n),
                         "categories": list(series.categories) if series.categories is not None else None},
                        sort_keys=True).encode("utf-8"))
    # (chunks hashed in place: no copy of a little-endian contiguous array, whatever its size)
    times = np.asarray(series.times).astype("datetime64[ns]", copy=False).view(np.int64)
    values = np.asarray(series.values)
    for a in range(0, series.n, _HASH_CHUNK):
        h.update(np.ascontiguousarray(times[a:a + _HASH_CHUNK], dtype="<i8").data)
    dtype = "<i8" if series.kind == "categorical" else "<f8"
    flat = values.reshape(-1)  # (location: lat, lon of each event in turn)
    for a in range(0, flat.size, _HASH_CHUNK):
        h.update(np.ascontiguousarray(flat[a:a + _HASH_CHUNK], dtype=dtype).data)
    digest = h.hexdigest()
    series._cache["lmdk_series_digest"] = digest
    return digest


def release_digest(series: Series, landmarks, settings, *, scheme: str, dummies, backend: str,
                   chunk_rows: int) -> bytes:
    """What a keyed release's noise is bound to (see the module docstring): 32 bytes."""
    # Unset options (None, False) are left out, so a setting added later with an "off" default does not change
    # the digest of releases made before it (their ledger re-exports stay bit for bit).
    privacy: dict[str, Any] = {k: v for k, v in settings.to_dict().items() if v is not None and v is not False}
    privacy.pop("denoise", None)  # post-processing: the same noise, denoised or not
    lm = np.ascontiguousarray(np.unique(np.asarray(landmarks, dtype=np.int64)), dtype="<i8")
    doc = {
        "series": series_digest(series),
        "landmarks": hashlib.sha256(lm.tobytes()).hexdigest(),
        "settings": privacy,
        "scheme": scheme,
        "dummies": asdict(dummies) if dummies is not None else None,
        "backend": backend,
        "chunk_rows": int(chunk_rows),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode("utf-8")).digest()


# ------------------------------------------------------------------------------------------ derived words
def release_key(key: bytes, digest: bytes) -> bytes:
    """The key a release's words come from: ``HMAC-SHA256(key, label ‖ digest)`` (256 bits)."""
    return hmac.new(bytes(key), _RELEASE_LABEL + digest, hashlib.sha256).digest()


def noise_words(key: bytes | None, digest: bytes) -> securenoise.WordSource:
    """The export noise's words: fresh OS entropy without a key, else the release key's keystream."""
    if key is None:
        return securenoise.WordSource.from_os()
    return securenoise.WordSource.from_key(release_key(key, digest))


def selection_words(key: bytes | None, digest: bytes) -> securenoise.WordSource:
    """The dummy selection's words: fresh OS entropy, or a keystream of the release key under its own label,
    independent of the noise words drawn from the same release key."""
    if key is None:
        return securenoise.WordSource.from_os()
    return securenoise.WordSource.from_key(hashlib.shake_256(_SELECTION_LABEL + release_key(key, digest)).digest(32))
