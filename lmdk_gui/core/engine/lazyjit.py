"""Compiled kernels that import numba on their first call, not when their module is imported (issue 15).

Importing numba is slow (it imports scipy, and its CPU target scipy.linalg); the window needs neither to draw
itself and the series. The kernel modules write ``from .lazyjit import numba`` instead of ``import numba`` and
keep ``@numba.njit(...)`` unchanged: each decorated function becomes a :class:`LazyKernel` that builds the real
numba dispatcher (same options, same on-disk cache files) the first time it is called or inspected, on
whichever thread that is — the preview worker, not the GUI thread.

A kernel calling another kernel, or receiving one as an argument, still compiles: numba types any object
by its ``_numba_type_`` attribute, which a LazyKernel forwards (like every other attribute) to its
dispatcher.

Compile or interpret is the caller's decision, from the call alone, never from what the process has done
before: inside ``interpreted(True)`` kernels called on that thread run as the Python functions they were
written as (the ``py_func`` numba would compile; IEEE arithmetic, numpy's integer scalars and the same libm,
so the same bits: ``tests/core/test_preview_incremental.py``); everywhere else they run compiled. The one
caller that asks is the opening preview of a small series (``preview.INTERPRET_MAX``): it is drawn without
waiting for numba, which loads later, off the GUI thread, with the first computation that needs it. Every
other preview, the denoise stage, every export and every command run compiled.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

_lock = threading.RLock()
_numba: Any = None
_local = threading.local()  # .on: kernels called on this thread may run interpreted


@contextlib.contextmanager
def interpreted(on: bool) -> Iterator[None]:
    """Within this block, on this thread, with ``on``, kernels run as Python (see the module's docstring)."""
    before = getattr(_local, "on", False)
    _local.on = on
    try:
        yield
    finally:
        _local.on = before


def imported() -> bool:
    """Whether numba has been imported (by any kernel's first compiled call); diagnostics and tests only: no
    code path depends on it."""
    return _numba is not None


def _interpret() -> bool:
    return getattr(_local, "on", False)


def real_numba() -> Any:
    """The numba module (imported now if no kernel has needed it yet)."""
    global _numba
    if _numba is None:
        with _lock:
            if _numba is None:
                import numba as real  # deliberately late: this is the whole point of the module

                _numba = real
    return _numba


class LazyKernel:
    """Stands for ``numba.njit(*args, **kwargs)(fn)`` until that is first needed."""

    def __init__(self, fn, args: tuple, kwargs: dict) -> None:
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._args = args
        self._kwargs = kwargs
        self._dispatcher: Any = None

    @property
    def dispatcher(self) -> Any:
        d = self._dispatcher
        if d is None:
            with _lock:
                if self._dispatcher is None:
                    self._dispatcher = real_numba().njit(*self._args, **self._kwargs)(self._fn)
                d = self._dispatcher
        return d

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _interpret():
            if getattr(_local, "quiet", False):  # (inside another kernel: its errstate holds)
                return self._fn(*args, **kwargs)
            # numba's "numpy" error model, which the kernels that divide by a zero budget rely on
            with np.errstate(all="ignore"):
                _local.quiet = True
                try:
                    return self._fn(*args, **kwargs)
                finally:
                    _local.quiet = False
        return self.dispatcher(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # _numba_type_, py_func, targetoptions, signatures, …
        if name.startswith("__") or name in ("_fn", "_args", "_kwargs", "_dispatcher"):
            raise AttributeError(name)
        return getattr(self.dispatcher, name)

    def __reduce__(self):  # pickled by reference, like a plain function
        return (_kernel_by_name, (self._fn.__module__, self._fn.__qualname__))

    def __repr__(self) -> str:
        return f"<LazyKernel {self._fn.__module__}.{self._fn.__qualname__}>"


def _kernel_by_name(module: str, qualname: str) -> Any:
    import importlib

    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


class _LazyNumba:
    """The part of numba's namespace the kernel modules use: ``njit``, with or without arguments."""

    def njit(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:  # bare @numba.njit
            return LazyKernel(args[0], (), {})
        return lambda fn: LazyKernel(fn, args, kwargs)


numba = _LazyNumba()
