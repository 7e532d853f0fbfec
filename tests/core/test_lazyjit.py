"""core/engine/lazyjit.py: a kernel defined with the lazy ``numba.njit`` behaves like numba's own dispatcher."""

from __future__ import annotations

import pickle

import numpy as np

from lmdk_gui.core.engine import lazyjit
from lmdk_gui.core.engine.lazyjit import LazyKernel, numba
from lmdk_gui.core.kernel import mechanisms


@numba.njit(nogil=True)
def _double(x):  # pragma: no cover - compiled
    return 2.0 * x


@numba.njit
def _apply(f, xs):  # pragma: no cover - compiled; f is a kernel passed as an argument
    out = np.empty_like(xs)
    for i in range(xs.size):
        out[i] = f(xs[i]) + _double(1.0)  # and one called as a global
    return out


def test_kernels_compile_call_each_other_and_take_kernels_as_arguments():
    assert isinstance(_double, LazyKernel) and isinstance(_apply, LazyKernel)
    assert _double(3.0) == 6.0
    np.testing.assert_array_equal(_apply(_double, np.arange(3.0)), [2.0, 4.0, 6.0])
    assert _apply.py_func.__name__ == "_apply"  # attributes are the dispatcher's
    assert _double.targetoptions["nogil"] is True
    assert _apply.signatures  # compiled once, for the types it was called with


def test_a_kernel_keeps_its_name_and_pickles_by_reference():
    k = mechanisms.laplace_unit_one
    assert k.__name__ == "laplace_unit_one" and "Lap" in (k.__doc__ or "")
    assert pickle.loads(pickle.dumps(k)) is k


def test_real_numba_is_numba():
    assert lazyjit.real_numba() is __import__("numba")
