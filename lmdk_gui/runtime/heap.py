"""The ``heap`` mechanism (switched on by the launcher only, see :mod:`lmdk_gui.runtime`): freed heap handed
back to the operating system.

numpy's arrays of a few MB (a release's flags at millions of events, the loader's chunks) are allocated from
glibc's heap once its mmap threshold has risen past them, and glibc keeps their pages when they are freed.
:func:`release_free_heap` asks glibc to return them (``malloc_trim``, every thread's arena, without the GIL);
the workers call it after each job (``runtime.job_finished``) once the process is large (``TRIM_ABOVE_BYTES``).
A trim after the job does not reach what a job frees and reallocates while it runs (the R-run average's flags
and chunks): for a large series the session also has blocks of 1 MB or more mapped on their own
(:func:`map_large_blocks`, through ``runtime.series_set``), so that each is returned to the system when it is
freed. Both change glibc's settings for the whole process, which is why only the launcher may switch them on.
Elsewhere (another libc, another system) both do nothing. Measured gain: docs/performance.md.
"""

from __future__ import annotations

import ctypes
import os
import sys


def _glibc(name: str, *argtypes):
    """glibc's function ``name`` (returning an int), or None on another system or libc (musl has neither)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = getattr(ctypes.CDLL("libc.so.6"), name)
    except (OSError, AttributeError):
        return None
    fn.argtypes = list(argtypes)
    fn.restype = ctypes.c_int
    return fn


_trim = _glibc("malloc_trim", ctypes.c_size_t)
_set_option = _glibc("mallopt", ctypes.c_int, ctypes.c_int)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: a large series: blocks from 1 MB are mapped on their own (and unmapped when freed)
LARGE_BLOCK_BYTES = 1 << 20
#: after a large series: glibc's own ceiling for its sliding threshold (32 MB on 64-bit systems) and twice that
#: for the trim, where its sliding rule settles once blocks of that size have been freed (the sliding rule
#: itself cannot be switched back on)
_DEFAULT_MMAP_BYTES = 32 << 20
_mapped = False


#: Below this resident size freed pages stay: the next arrays reuse them without faulting pages in again
#: (trimmed after every click of a mid-sized series, each of its arrays would fault its pages anew).
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


def map_large_blocks(on: bool) -> bool:
    """Have glibc map every block of ``LARGE_BLOCK_BYTES`` or more on its own (``on``, a large series), or
    keep them in its heap for reuse (after a large series, for the next one); True when the setting was
    changed. Glibc's sliding threshold cannot be restored once set, so nothing is set until a large series
    asks for it."""
    global _mapped
    if _set_option is None or on == _mapped:
        return False
    mmap_bytes = LARGE_BLOCK_BYTES if on else _DEFAULT_MMAP_BYTES
    ok = bool(_set_option(_M_MMAP_THRESHOLD, mmap_bytes)) and bool(_set_option(_M_TRIM_THRESHOLD, 2 * mmap_bytes))
    _mapped = on
    return ok
