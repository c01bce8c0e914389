"""A dict of int -> int that keeps its quiet entries in two sorted numpy arrays.

The lifecycle invariant tracks every live schedule row, and at full scale every one of two
million videos has a live archive row that nothing touches for days. In a plain dict such an
entry costs about 135 bytes (docs/performance.md "Where a full-scale run spends its time");
here it costs 16.

The map has a *hot* part, a plain dict the caller reads and writes directly, and a *cold* part:
sorted keys and their values in two int64 arrays. The caller names, before each batch of work,
every key the batch may touch (:meth:`warm`): those entries move into the dict, so all the
per-event code stays plain dict code. After the batch, :meth:`cool` folds the dict's int
entries back into the arrays once the dict has grown past ``warm_limit``; other values (the
caller's rare lists) stay warm. A key is in exactly one part at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

V = TypeVar("V")

_DEAD = -1
"""Value of a cold slot whose entry moved to the dict (live values are >= 0)."""


class ColdMap(Generic[V]):
    """:attr:`hot` is the dict part (the same object for the map's life); values that go
    cold must be ints >= 0."""

    def __init__(self, warm_limit: int = 1 << 18) -> None:
        self.warm_limit = warm_limit
        self.hot: dict[int, V | int] = {}
        self._keys: npt.NDArray[np.int64] = np.empty(0, np.int64)
        self._vals: npt.NDArray[np.int64] = np.empty(0, np.int64)
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
        alive = self._vals != _DEAD
        keys, vals = self._keys[alive], self._vals[alive]
        # A merge of two sorted runs: O(n) moves, no sort of the whole map.
        at = np.searchsorted(keys, new_keys[order])
        self._keys = np.insert(keys, at, new_keys[order])
        self._vals = np.insert(vals, at, new_vals[order])
        self._dead = 0

    def items(self) -> Iterator[tuple[int, V | int]]:
        """Every entry, cold ones first (unordered: sort if order matters)."""
        alive = self._vals != _DEAD
        yield from zip(self._keys[alive].tolist(), self._vals[alive].tolist(), strict=True)
        yield from self.hot.items()
