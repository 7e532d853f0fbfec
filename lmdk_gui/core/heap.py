"""Freed heap handed back to the operating system (issue 15, memory at 10^7 events).

numpy's arrays of a few MB (a release's flags at 10^7 events, the loader's chunks) are allocated from
glibc's heap once its mmap threshold has risen past them, and glibc keeps their pages when they are freed:
at 10^7 events ≈ 0.3 GB of freed heap stayed resident at the peak. :func:`release_free_heap` asks glibc to
return it (``malloc_trim``, every thread's arena; ≈ 13 ms for 1.4 GB of fragments, without the GIL). The
workers call it after each job once the process is large (``TRIM_ABOVE_BYTES``). Elsewhere (another libc,
another system) it does nothing.
"""

from __future__ import annotations

import ctypes
import os
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


#: Below this resident size freed pages stay: the next arrays reuse them without faulting pages in again
#: (trimmed after every click at 10^6 events, each of its 8 MB arrays would fault its pages anew).
TRIM_ABOVE_BYTES = 1 << 30


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int:
    """This process' resident set size (0 where /proc is not there)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def release_free_heap(force: bool = False) -> bool:
    """Return glibc's free heap pages to the system when the process holds over ``TRIM_ABOVE_BYTES`` (or
    ``force``); True when some were released."""
    if _trim is None or not (force or resident_bytes() > TRIM_ABOVE_BYTES):
        return False
    return bool(_trim(0))
