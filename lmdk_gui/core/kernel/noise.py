"""Common random numbers for previews and evaluation (DESIGN §5).

Unit noise is drawn once per (n, seed) and then only *scaled* by each scheme's budgets, so a landmark click
changes a preview only through the budgets, and all schemes are compared on the same luck. Each stream
(Laplace, Gamma radii, angles, keep/other uniforms, Adaptive's sampling uniforms) has its own child seed,
so drawing one stream never shifts another, and streams are drawn lazily (a numeric series never pays for
the location streams).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import overload

import numpy as np

_STREAMS = ("laplace", "gamma", "angle", "keep", "other", "sample")  # (the order gives each its child seed)


class _Stream:
    """A :class:`UnitNoise` attribute that reads one stream (drawn on first read, then kept)."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _Stream: ...
    @overload
    def __get__(self, obj: UnitNoise, owner: type | None = None) -> np.ndarray: ...
    def __get__(self, obj: UnitNoise | None, owner: type | None = None) -> np.ndarray | _Stream:
        return self if obj is None else obj._get(self.name)


class UnitNoise:
    laplace = _Stream("Standard Laplace draws (scale 1).")
    gamma = _Stream("Gamma(shape 2, scale 1) radii.")
    angle = _Stream("Uniform angles on [0, 2π).")
    keep = _Stream("Uniforms on [0, 1) deciding randomized response's keep/flip.")
    other = _Stream("Uniforms on [0, 1) choosing the other category.")
    sample = _Stream("Adaptive's public sampling uniforms u_t (independent of the data).")

    def __init__(self, n: int, seed: int) -> None:
        self.n = int(n)
        self.seed = int(seed)
        children = np.random.SeedSequence(self.seed).spawn(len(_STREAMS))
        self._seeds = dict(zip(_STREAMS, children, strict=True))
        self._cache: dict[str, np.ndarray] = {}

    def _rng(self, stream: str) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64(self._seeds[stream]))

    def _kept(self, key: str, make: Callable[[], np.ndarray], read_only: bool = True) -> np.ndarray:
        """The array kept under ``key``, made (and, ``read_only``, write-protected) on first use."""
        arr = self._cache.get(key)
        if arr is None:
            arr = make()
            if read_only:
                arr.setflags(write=False)
            self._cache[key] = arr
        return arr

    def _get(self, stream: str) -> np.ndarray:
        return self._kept(stream, lambda: self._draw(stream))

    def _draw(self, stream: str) -> np.ndarray:
        rng = self._rng(stream)
        if stream == "laplace":
            return rng.laplace(0.0, 1.0, self.n)
        if stream == "gamma":
            return rng.gamma(2.0, 1.0, self.n)
        if stream == "angle":
            return rng.uniform(0.0, 2.0 * np.pi, self.n)
        return rng.random(self.n)

    def sample_chunks(self, size: int) -> Iterator[tuple[int, np.ndarray]]:
        """Adaptive's sampling uniforms as ``(first event, draws)`` in consecutive chunks of ``size`` events, the
        same draws as :attr:`sample`: the whole stream (kept) when it is drawn already or no longer than
        ``size``, else drawn chunk by chunk and not kept (a series-sized array fewer at once)."""
        if "sample" in self._cache or self.n <= size:
            yield 0, self.sample
            return
        rng = self._rng("sample")  # a PCG64 stream's doubles come one after the other: chunks = the whole
        for a in range(0, self.n, size):
            yield a, rng.random(min(size, self.n - a))

    def forget(self, stream: str) -> None:
        """Free a drawn stream; drawn again (the same draws: each stream has its own seed) if read later."""
        self._cache.pop(stream, None)

    def forget_all(self) -> None:
        """Free every drawn stream (and what was derived from them)."""
        self._cache.clear()

    def derived(self, key: str, fn) -> np.ndarray:
        """``fn(self)``, computed once per noise (e.g. the cosines and sines of the angles, which every
        location preview of every scheme would otherwise recompute)."""
        return self._kept(key, lambda: fn(self))

    def at(self, idx: np.ndarray) -> NoiseAt:
        """This noise at the events ``idx`` only (see :class:`NoiseAt`)."""
        return NoiseAt(self, idx)

    # The compiled preview kernels' per-event auxiliary columns; writable, as they always were (read-only
    # arrays would be other signatures for those kernels to compile and cache).
    def location_aux(self) -> np.ndarray:
        return self._kept("_loc", lambda: np.column_stack([self.gamma, self.angle]), read_only=False)

    def categorical_aux(self) -> np.ndarray:
        return self._kept("_cat", lambda: np.column_stack([self.keep, self.other]), read_only=False)


class NoiseAt:
    """The unit noise at some events only (each stream gathered at ``idx``), read like :class:`UnitNoise` by
    the kinds' ``preview_noise``: a release patched at a few events uses the same function on the same
    draws as the full one, so each patched value has the bits a full recompute gives it."""

    def __init__(self, noise: UnitNoise, idx: np.ndarray) -> None:
        self._noise = noise
        self._idx = idx
        self.n = int(idx.size)
        self.seed = noise.seed

    def derived(self, key: str, fn) -> np.ndarray:
        return self._noise.derived(key, fn)[self._idx]

    def __getattr__(self, name: str) -> np.ndarray:
        if name not in _STREAMS:
            raise AttributeError(name)
        return getattr(self._noise, name)[self._idx]
