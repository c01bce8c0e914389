"""``video_snapshot`` in memory: every video's snapshots in shared pages, one block a video.

A video's snapshots are ``[t0, v0, t1, v1, ...]`` in time order, 16 bytes a snapshot, in a
block of the page it was given: a block holds 2 snapshots, then a quarter more at a time
(:func:`grown`), and a page holds :data:`PAGE_SNAPSHOTS` snapshots (1 MiB). Per video the
store keeps where its block starts and how many snapshots it holds: 8 bytes. A block that is
full is copied into one of the next capacity; the old one goes on its capacity's free list,
which the next block of that capacity takes first. A block larger than an eighth of a page
gets a page of its own, dropped when the block moves on.

Why not a ``vec[i64]`` a video, as the store had before: each vector is a Python object, so
a video with its first two snapshots cost 80 bytes (16 for its place in the column, 32 for the
buffer's header, 32 of snapshots) where it costs 40 here; and each vector, reallocated as it
grew, left a freed buffer of every small size behind, which the allocators kept (about a sixth
of the run's process at the end of the tenth-scale month; docs/performance.md "A columnar
memory store").

Readers take a video's page and the index of its first value in that page (:meth:`page`,
:meth:`at`) and read ``page[at + 2 * i]`` (the time of snapshot ``i``) and ``page[at + 2 * i +
1]`` (its views) themselves: the binary searches and lookback walks run over the page, with
nothing copied.
"""

from __future__ import annotations

from typing import Final, final

from librt.vecs import append, pop, vec
from mypy_extensions import i64

from sim.backends.memory.columns import I32Column

PAGE_BITS: Final = 16
PAGE_SNAPSHOTS: Final = 1 << PAGE_BITS
"""Snapshots a page holds (two values each)."""
_MASK: Final = PAGE_SNAPSHOTS - 1
OWN_PAGE_OVER: Final = PAGE_SNAPSHOTS >> 3
"""A block of more snapshots than this gets a page of its own: a shared page wastes at most
this much at its end, where the next block did not fit."""


def grown(n: int) -> int:
    """The capacity after a block of ``n`` snapshots: a quarter more, at least two more."""
    return n + max(2, n >> 2)


def _capacities() -> frozenset[int]:
    room, out = 2, set()
    while room < 1 << 40:
        out.add(room)
        room = grown(room)
    return frozenset(out)


FULL_AT: Final = _capacities()
"""The capacities a block can have: a video's block is full when its count is one of these."""


def capacity_for(n: int) -> int:
    """The capacity of the block that holds ``n`` snapshots (``n`` >= 1)."""
    room = 2
    while room < n:
        room = grown(room)
    return room


@final
class SnapshotPages:
    """Per slot, the video's snapshots in time order (none for a new slot)."""

    def __init__(self) -> None:
        self._pages: vec[vec[i64]] = vec[vec[i64]]()
        self._first = I32Column()
        """By slot: the block's first snapshot, ``page << PAGE_BITS | snapshot in the page``."""
        self._count = I32Column()
        """By slot: the snapshots in the block (0: no block)."""
        self._free: dict[int, vec[i64]] = {}
        """capacity -> the first snapshots of the free blocks of that capacity."""
        self._shared = -1
        """The page new blocks are cut from (-1: none yet)."""
        self._cut = 0
        """Snapshots of that page already given to blocks."""

    def __len__(self) -> int:
        return self._count.n

    def append_empty(self) -> None:
        """One more slot, with no snapshots."""
        self._first.append(0)
        self._count.append(0)

    def count(self, s: i64) -> int:
        return self._count.get(s)

    def page(self, s: i64) -> vec[i64]:
        """The page that holds slot ``s``'s snapshots (any page if it has none)."""
        if not self._pages:
            return vec[i64]()
        return self._pages[self._first.get(s) >> PAGE_BITS]

    def at(self, s: i64) -> int:
        """The index in :meth:`page` of the time of slot ``s``'s first snapshot."""
        return (self._first.get(s) & _MASK) << 1

    def time_ms(self, s: i64, i: i64) -> int:
        first = self._first.get(s)
        return self._pages[first >> PAGE_BITS][((first & _MASK) << 1) + 2 * i]

    def views(self, s: i64, i: i64) -> int:
        first = self._first.get(s)
        return self._pages[first >> PAGE_BITS][((first & _MASK) << 1) + 2 * i + 1]

    def append(self, s: i64, t_ms: i64, views: i64) -> None:
        """Slot ``s``'s snapshot ``(t_ms, views)``, after its last one."""
        n = self._count.get(s)
        if n == 0:
            self._first.set(s, self._block(2))
        elif n in FULL_AT:
            self._move(s, n, grown(n))
        first = self._first.get(s)
        page = self._pages[first >> PAGE_BITS]
        k = ((first & _MASK) << 1) + 2 * n
        page[k] = t_ms
        page[k + 1] = views
        self._count.set(s, n + 1)

    def insert(self, s: i64, i: i64, t_ms: i64, views: i64) -> None:
        """Slot ``s``'s snapshot ``(t_ms, views)`` as its snapshot ``i``, the later ones moved
        up by one."""
        n = self._count.get(s)
        if n in FULL_AT:
            self._move(s, n, grown(n))
        first = self._first.get(s)
        page = self._pages[first >> PAGE_BITS]
        at = (first & _MASK) << 1
        k = at + 2 * n + 1
        while k >= at + 2 * i + 2:  # from the end: each value moves two places up
            page[k] = page[k - 2]
            k -= 1
        page[at + 2 * i] = t_ms
        page[at + 2 * i + 1] = views
        self._count.set(s, n + 1)

    def _move(self, s: i64, n: i64, room: i64) -> None:
        """Slot ``s``'s ``n`` snapshots into a new block of ``room``; the old block is freed."""
        old = self._first.get(s)
        new = self._block(room)
        src, dst = self._pages[old >> PAGE_BITS], self._pages[new >> PAGE_BITS]
        a, b = (old & _MASK) << 1, (new & _MASK) << 1
        for k in range(2 * n):
            dst[b + k] = src[a + k]
        self._first.set(s, new)
        if n > OWN_PAGE_OVER:
            self._pages[old >> PAGE_BITS] = vec[i64]()  # its own page: given back whole
        else:
            self._free[n] = append(self._free.get(n, vec[i64]()), old)

    def _block(self, room: i64) -> int:
        """The first snapshot of a free block of ``room`` snapshots."""
        if room > OWN_PAGE_OVER:
            self._pages = append(self._pages, vec[i64]([0] * (2 * room)))
            return (len(self._pages) - 1) << PAGE_BITS
        free = self._free.get(room)
        if free is not None and len(free):
            self._free[room], first = pop(free)
            return first
        if self._shared < 0 or self._cut + room > PAGE_SNAPSHOTS:
            self._pages = append(self._pages, vec[i64]([0] * (2 * PAGE_SNAPSHOTS)))
            self._shared, self._cut = len(self._pages) - 1, 0
        first = self._shared << PAGE_BITS | self._cut
        self._cut += room
        return first

    def held_snapshots(self) -> tuple[int, int]:
        """Snapshots the pages have room for, and of those the free blocks' (for measuring)."""
        pages = sum(len(p) for p in self._pages) >> 1
        free = sum(room * len(starts) for room, starts in self._free.items())
        return pages, free
