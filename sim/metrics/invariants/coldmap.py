"""A dict of int -> int that keeps its quiet entries in two sorted numpy arrays.

The lifecycle invariant tracks every live schedule row, and at full scale every one of two
million videos has a live archive row that nothing touches for days. In a plain dict such an
entry costs about 135 bytes (docs/performance.md "Where a full-scale run spends its time");
here it costs 12: an int64 key and an int32 value (the lifecycle's values are a row id and five
flag bits: 67M rows fit), the values widened to int64 once one needs it.

The map has a *hot* part, a plain dict the caller reads and writes directly, and a *cold* part:
sorted keys (int64) and their values (int32, or int64 once one needs it) in two arrays. The
caller names, before each batch of work, every key the batch may touch (:meth:`warm`): those
entries move into the dict, so all the per-event code stays plain dict code. After the batch,
:meth:`cool` folds the dict's int entries back into the arrays once the dict has grown past
``warm_limit``; other values (the caller's rare lists) stay warm. A key is in exactly one
part at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

V = TypeVar("V")

_DEAD = -1
"""Value of a cold slot whose entry moved to the dict (live values are >= 0)."""
_INT32_MAX = 2**31 - 1


class ColdMap(Generic[V]):
    """:attr:`hot` is the dict part (the same object for the map's life); values that go
    cold must be ints >= 0."""

    def __init__(self, warm_limit: int = 1 << 18, *, block: int = 1 << 20) -> None:
        self.warm_limit = warm_limit
        self.block = block
        """Entries moved at a time by :meth:`cool` (what its temporaries hold)."""
        self.hot: dict[int, V | int] = {}
        self._keys: npt.NDArray[np.int64] = np.empty(0, np.int64)
        self._vals: npt.NDArray[np.int32 | np.int64] = np.empty(0, np.int32)
        """int32 until a value needs more (then int64 for the map's life)."""
        self._dead = 0

    def __len__(self) -> int:
        return len(self.hot) + self._keys.size - self._dead

    def warm(self, keys: npt.NDArray[np.int64]) -> None:
        """Move the cold entries of ``keys`` (any order, repeats allowed) into :attr:`hot`."""
        n = self._keys.size - self._dead
        if not n or not keys.size:
            return
        at = np.searchsorted(self._keys, keys)
        at[at == self._keys.size] = 0
        at = at[(self._keys[at] == keys) & (self._vals[at] != _DEAD)]
        if not at.size:
            return
        at = np.unique(at)
        self.hot.update(zip(self._keys[at].tolist(), self._vals[at].tolist(), strict=True))
        self._vals[at] = _DEAD
        self._dead += at.size

    def cool(self) -> None:
        """Fold the int entries of :attr:`hot` into the arrays once it holds ``warm_limit``."""
        hot = self.hot
        if len(hot) < self.warm_limit:
            return
        kept = {k: v for k, v in hot.items() if type(v) is not int}  # rare: the caller's lists
        for k in kept:
            del hot[k]
        new_keys = np.fromiter(hot.keys(), np.int64, len(hot))
        new_vals = np.fromiter(hot.values(), np.int64, len(hot))
        # clear(), not deletions: a dict never shrinks its table as entries are deleted.
        hot.clear()
        hot.update(kept)
        order = np.argsort(new_keys)
        n = self._compact()
        if self._vals.dtype != np.int64 and new_vals.size and new_vals.max() > _INT32_MAX:
            self._vals = self._vals.astype(np.int64)
        self._merge(n, new_keys[order], new_vals[order].astype(self._vals.dtype))

    # The arrays are the map's bulk (22M live rows at 20M videos: 352 MB), so they are changed in
    # place, a block at a time: copies of them (a boolean selection, np.insert) were alive beside
    # them (22M entries fed 2^18 at a time peaked at 1,081 MB that way, 580 MB in place:
    # docs/performance.md). Growing them is a realloc, which the C library does without a copy
    # for arrays that large (mremap).

    def _compact(self) -> int:
        """Move the live entries to the front, in order; how many there are."""
        keys, vals, block = self._keys, self._vals, self.block
        if not self._dead:
            return keys.size
        w = 0
        for lo in range(0, keys.size, block):
            at = np.flatnonzero(vals[lo : lo + block] != _DEAD) + lo
            keys[w : w + at.size] = keys[at]  # w <= lo: never over an entry not yet moved
            vals[w : w + at.size] = vals[at]
            w += at.size
        self._dead = 0
        return w

    def _merge(
        self,
        n: int,
        new_keys: npt.NDArray[np.int64],
        new_vals: npt.NDArray[np.int32 | np.int64],
    ) -> None:
        """Merge sorted ``new_keys`` (none among the first ``n`` keys) into those ``n``;
        ``new_vals`` in the values' dtype."""
        m = new_keys.size
        at = np.searchsorted(self._keys[:n], new_keys)  # each new key's place among the old
        if not (self._keys.flags.owndata and self._vals.flags.owndata):
            # Unpickled arrays (the map sent to the reducer process) view the pickle's bytes.
            self._keys, self._vals = self._keys.copy(), self._vals.copy()
        self._keys.resize(n + m, refcheck=False)
        self._vals.resize(n + m, refcheck=False)
        keys, vals, block = self._keys, self._vals, self.block
        # A block of old entries, with the new keys placed among them, moves right by the new
        # keys below it: the blocks go from the last, so an entry is read before anything lands
        # on it. (The last block takes the new keys above every old one.)
        for lo in range(max(n - 1, 0) // block * block, -1, -block):
            hi = min(lo + block, n)
            a = int(np.searchsorted(at, lo))
            b = int(np.searchsorted(at, hi)) if hi < n else m
            k = np.insert(keys[lo:hi], at[a:b] - lo, new_keys[a:b])
            v = np.insert(vals[lo:hi], at[a:b] - lo, new_vals[a:b])
            keys[lo + a : lo + a + k.size], vals[lo + a : lo + a + k.size] = k, v

    def items(self) -> Iterator[tuple[int, V | int]]:
        """Every entry, cold ones first (unordered: sort if order matters)."""
        alive = self._vals != _DEAD
        yield from zip(self._keys[alive].tolist(), self._vals[alive].tolist(), strict=True)
        yield from self.hot.items()
