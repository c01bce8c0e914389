"""A binary min-heap of ``(time, id)`` pairs for the schedule table's due indexes.

The pending and processing indexes push every row once and pop it once (mostly as a stale
entry, when the row has already left the status: reference §2.1's partial indexes, kept
lazily). With :mod:`heapq`, an entry is a Python int ``started_at << 32 | id`` (73 bits: an int
object of 40 bytes besides the list's pointer) and every comparison on the way down a heap of
millions reads two such objects from wherever they lie in memory, for every stale entry the
ticks' idle hints pop (docs/performance.md "A columnar memory store"). Here the pairs sit in two
vectors that compiled code compares in place: the times int64, the ids int32 (schedule ids count
rows from 1: the tenth-scale month writes 1.46M rows), 12 bytes an entry; at 20M videos every
video's archive row waits in one heap. The order is the same
as the packed ints' (time, then id), and every answer the table gives is independent of the
heap's layout (``due_schedules`` sorts what it found), so the event logs are unchanged.
"""

from __future__ import annotations

from typing import Final, final

from librt.vecs import append, vec
from mypy_extensions import i32, i64

MAX_ID: Final = (1 << 31) - 1
"""The largest id an entry holds (int32)."""
CHUNK_BITS: Final = 16
"""Entries a chunk holds: ``1 << CHUNK_BITS``."""


@final
class KeyHeap:
    """``(t, id)`` pairs, smallest first (time, then id); positions index the implicit tree
    (children of ``p`` at ``2p + 1`` and ``2p + 2``), for walks that leave the heap as it is.

    The entries sit in chunks of ``1 << chunk_bits`` (position ``p`` in chunk ``p >>
    chunk_bits``), not in two flat vectors: a flat vector grows by copying itself into one
    twice as large, and both are resident while it copies. At 20M videos the archive heap
    holds 22M entries after the start-up dispatch, and one more doubling would hold 400 MB
    of old and new buffers at once; a chunked heap grows by one chunk and copies nothing.
    """

    def __init__(self, chunk_bits: i64 = CHUNK_BITS) -> None:
        self._bits = chunk_bits
        self._mask: i64 = (1 << chunk_bits) - 1
        self._t: vec[vec[i64]] = vec[vec[i64]]()
        self._id: vec[vec[i32]] = vec[vec[i32]]()
        self.n: i64 = 0
        """Entries in the heap; the chunks may hold more (room kept from earlier pops)."""
        self._room: i64 = 0

    def __len__(self) -> int:
        return self.n

    def t_at(self, pos: i64) -> int:
        return self._t[pos >> self._bits][pos & self._mask]

    def id_at(self, pos: i64) -> int:
        return self._id[pos >> self._bits][pos & self._mask]

    def push(self, t: i64, ident: i64) -> None:
        if not 0 <= ident <= MAX_ID:
            raise OverflowError(f"schedule id {ident} does not fit the due index (int32)")
        key = i32(ident)
        pos = self.n
        bits, mask = self._bits, self._mask
        if pos == self._room:
            size = mask + 1
            self._t = append(self._t, vec[i64]([0] * size))
            self._id = append(self._id, vec[i32]([0] * size))
            self._room += size
        self.n = pos + 1
        times = self._t
        ids = self._id
        while pos > 0:  # move the hole up while the parent is larger
            parent = (pos - 1) >> 1
            pt = times[parent >> bits][parent & mask]
            pi = ids[parent >> bits][parent & mask]
            if pt < t or (pt == t and pi < key):
                break
            times[pos >> bits][pos & mask] = pt
            ids[pos >> bits][pos & mask] = pi
            pos = parent
        times[pos >> bits][pos & mask] = t
        ids[pos >> bits][pos & mask] = key

    def pop(self) -> None:
        """Remove the smallest entry (the heap must not be empty)."""
        last = self.n - 1
        self.n = last
        if last == 0:
            return
        bits, mask = self._bits, self._mask
        times = self._t
        ids = self._id
        t = times[last >> bits][last & mask]
        ident = ids[last >> bits][last & mask]
        pos: i64 = 0
        while True:  # move the hole down to the smaller child while it is smaller than (t, id)
            child = 2 * pos + 1
            if child >= last:
                break
            ct = times[child >> bits][child & mask]
            ci = ids[child >> bits][child & mask]
            right = child + 1
            if right < last:
                rt = times[right >> bits][right & mask]
                ri = ids[right >> bits][right & mask]
                if rt < ct or (rt == ct and ri < ci):
                    child = right
                    ct = rt
                    ci = ri
            if t < ct or (t == ct and ident < ci):
                break
            times[pos >> bits][pos & mask] = ct
            ids[pos >> bits][pos & mask] = ci
            pos = child
        times[pos >> bits][pos & mask] = t
        ids[pos >> bits][pos & mask] = ident
