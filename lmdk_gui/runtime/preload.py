"""The ``preload`` mechanism (switched on by the launcher only, see :mod:`lmdk_gui.runtime`): numba's heaviest
shared libraries are mapped into the process, with the GIL released, just before numba is imported.

Python's import and ctypes hold the GIL while the dynamic loader maps and relocates a library (LLVM's is
≈ 100 MB); called through ctypes' foreign-function call, which releases the GIL, the loader does that work
beside the GUI thread and the import later finds the library mapped. The files are found by glob inside the
llvmlite and scipy packages; Linux only; a library not found is left to the import.
"""

from __future__ import annotations

#: Shared libraries numba's import and first kernel load (glob patterns under each top-level package):
#: LLVM (≈ 100 MB) and the LAPACK/BLAS wrappers of scipy.linalg, which numba's CPU target imports
_HEAVY_LIBRARIES = {
    "llvmlite": ("binding/libllvmlite*.so*",),
    "scipy": ("linalg/_fblas*.so", "linalg/_flapack*.so", "linalg/cython_blas*.so", "linalg/cython_lapack*.so",
              "linalg/_cythonized_array_utils*.so"),
}
_preloaded: list[int] = []  # their handles, never closed


def preload_libraries() -> None:
    """Map numba's heaviest shared libraries into the process before numba imports them, with the GIL
    released. Python's import and ctypes hold the GIL while the dynamic loader maps and relocates a library:
    LLVM's took 31 ms warm and 0.4 s cold from the preview thread, a stall of the window opening a
    10^7-event file (issue 15). Called here through ctypes' foreign-function call (which releases the GIL)
    with the flags the import uses, the loader does that work beside the GUI thread; the import later finds
    the library mapped. Linux only; a library not found is left to the import."""
    import ctypes
    import importlib.util
    import os
    import sys
    from pathlib import Path

    if not sys.platform.startswith("linux") or _preloaded:
        return
    try:
        dlopen = ctypes.CDLL(None).dlopen
    except (OSError, AttributeError):
        return
    dlopen.restype, dlopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int]
    for package, patterns in _HEAVY_LIBRARIES.items():
        spec = importlib.util.find_spec(package)  # (a top-level package: found, not imported)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(next(iter(spec.submodule_search_locations)))
        for pattern in patterns:
            for path in sorted(root.glob(pattern)):
                handle = dlopen(os.fsencode(path), sys.getdlopenflags())
                if handle:
                    _preloaded.append(handle)


