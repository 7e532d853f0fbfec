"""Freed heap handed back to the operating system (issue 15, memory at 10^7 events).

numpy's arrays of a few MB (a release's flags at 10^7 events, the loader's chunks) are allocated from
glibc's heap once its mmap threshold has risen past them, and glibc keeps their pages when they are freed:
at 10^7 events ≈ 0.3 GB of freed heap stayed resident at the peak. :func:`release_free_heap` asks glibc to
return it (``malloc_trim``, every thread's arena; ≈ 13 ms for 1.4 GB of fragments, without the GIL). The
workers call it after each job. Elsewhere (another libc, another system) it does nothing.
"""

from __future__ import annotations

import ctypes
import sys


def _malloc_trim():
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


_trim = _malloc_trim()


def release_free_heap() -> bool:
    """Return glibc's free heap pages to the system; True when some were released."""
    return bool(_trim(0)) if _trim is not None else False
