"""Video ids (aids): realistic-looking, increasing with publication time, and invertible.

Video ``i`` (the ``i``-th by publication time, initial catalog first, then arrivals) gets::

    aid(i) = AID_BASE + i * AID_STRIDE + jitter(i),   0 <= jitter(i) < AID_STRIDE

so aids are unique positive 8-11 digit numbers that grow with publication time, like
bilibili's, with irregular gaps (category 30 is a sparse slice of all uploads). The point of the
stride is the inverse: ``i = (aid - AID_BASE) // AID_STRIDE`` is pure integer arithmetic, and the
jitter is recomputed rather than read back, so looking an aid up touches no memory at all. A dict
would cost about 100 bytes per video and a cache miss per lookup (bench/world.py).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from sim.rng import derive_seed

AID_BASE = 10_000_019
"""The smallest possible aid."""
AID_STRIDE = 48_611
"""Average gap between consecutive aids of the catalog."""
AID_MIX = 2_654_435_761
"""Knuth's multiplicative hash constant: consecutive indices get scattered jitter."""


class AidCodec:
    """Maps video index <-> aid for one seed (the seed only moves the jitter)."""

    def __init__(self, seed: int) -> None:
        self.salt = derive_seed(seed, "aid") % AID_STRIDE

    def aid(self, i: int) -> int:
        """The aid of video ``i``."""
        return AID_BASE + i * AID_STRIDE + ((i + self.salt) * AID_MIX) % AID_STRIDE

    def aids(self, i: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Element-wise :meth:`aid` (int64 is safe: ``(i + salt) * AID_MIX < 2^63`` for i < 3e9)."""
        jitter = ((i + self.salt) * AID_MIX) % AID_STRIDE
        out: npt.NDArray[np.int64] = AID_BASE + i * AID_STRIDE + jitter
        return out

    def index(self, aid: int, n: int) -> int:
        """The index of ``aid`` among ``n`` videos, or -1 when no video has that aid."""
        i = (aid - AID_BASE) // AID_STRIDE
        if 0 <= i < n and self.aid(i) == aid:
            return i
        return -1

    def indices(self, aids: npt.ArrayLike, n: int) -> npt.NDArray[np.int64]:
        """Element-wise :meth:`index` (-1 for unknown aids)."""
        a = np.asarray(aids, dtype=np.int64)
        i = (a - AID_BASE) // AID_STRIDE
        ok = (i >= 0) & (i < n)
        ok &= self.aids(np.where(ok, i, 0)) == a
        out: npt.NDArray[np.int64] = np.where(ok, i, -1)
        return out
