"""``video_snapshot`` in memory: every video's snapshots in shared pages, one block a video.

A video's snapshots are ``[t0, v0, t1, v1, ...]`` in time order, 16 bytes a snapshot, in a
block of the page it was given: a block holds 2 snapshots, then a quarter more at a time
(:func:`grown`), and a page holds :data:`PAGE_SNAPSHOTS` snapshots (1 MiB). Per video the
store keeps where its block starts and how many snapshots it holds: 8 bytes. A block that is
full is copied into one of the next capacity; the old one goes on its capacity's free list,
which the next block of that capacity takes first. A block larger than an eighth of a page
gets a page of its own, dropped when the block moves on. A block that moves may leave its
oldest snapshots behind (``append``'s ``drop``: the store's reach), into a block of the
capacity of what it keeps plus one, which may be smaller.

Videos grow together (every video of the catalogue starts with two snapshots), so blocks are
freed faster than blocks of their capacity are asked for: at the end of the tenth-scale month
25 MB of the 54 MB of pages were free blocks. So when free blocks hold more than an eighth of
the shared pages, :meth:`compact` moves every block down over the gaps, in the order they sit,
and gives back the pages left empty. Full scale for 30 days: the run's peak 936 MB, 1,146 MB
without compacting, 983 MB compacting at a quarter; the tenth-scale month side by side 1.002
against a quarter.

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
from mypy_extensions import i32, i64

from sim.backends.memory.columns import I32Column

PAGE_BITS: Final = 16
PAGE_SNAPSHOTS: Final = 1 << PAGE_BITS
"""Snapshots a page holds (two values each)."""
_MASK: Final = PAGE_SNAPSHOTS - 1
OWN_PAGE_OVER: Final = PAGE_SNAPSHOTS >> 3
"""A block of more snapshots than this gets a page of its own: a shared page wastes at most
this much at its end, where the next block did not fit."""
COMPACT_OVER: Final = 8
"""Compact when the free blocks hold more than a ``1/COMPACT_OVER`` of the shared pages..."""
COMPACT_FROM_PAGES: Final = 4
"""...and there are at least this many shared pages (4 MiB): below that it would gain little."""


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
        self._free_snapshots = 0
        """Snapshots the free blocks have room for."""
        self._shared = -1
        """The page new blocks are cut from (-1: none yet)."""
        self._cut = 0
        """Snapshots of that page already given to blocks."""
        self._shared_pages: set[int] = set()
        """The pages blocks are cut from (not a block's own page, not a spare one)."""
        self._spare: vec[i64] = vec[i64]()
        """Pages given back (empty), whose places a new page takes first."""

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

    def full(self, s: i64) -> bool:
        """Whether slot ``s``'s next snapshot moves its block (its block has no room left)."""
        return self._count.get(s) in FULL_AT

    def append(self, s: i64, t_ms: i64, views: i64, drop: i64 = 0) -> None:
        """Slot ``s``'s snapshot ``(t_ms, views)``, after its last one. A full block moves to
        one with room for it, leaving its first ``drop`` snapshots behind (the store's reach,
        :mod:`~sim.backends.memory.videos`); a block with room keeps them all."""
        n = self._count.get(s)
        if n == 0:
            self._first.set(s, self._block(2))
        elif n in FULL_AT:
            self._move(s, n, drop)
            n -= drop
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
            self._move(s, n, 0)
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

    def _move(self, s: i64, n: i64, drop: i64) -> None:
        """Slot ``s``'s ``n`` snapshots but the first ``drop`` into a new block with room for
        one more (the capacity of their count plus one, so that every block stays its count's
        capacity, as :meth:`compact` needs); the old block is freed. The count is the caller's."""
        shared = len(self._shared_pages)
        if shared >= COMPACT_FROM_PAGES and self._free_snapshots * COMPACT_OVER > (
            shared * PAGE_SNAPSHOTS
        ):
            self.compact()  # before the move: every block is then its count's capacity
        old = self._first.get(s)
        new = self._block(grown(n) if drop == 0 else capacity_for(n - drop + 1))
        src, dst = self._pages[old >> PAGE_BITS], self._pages[new >> PAGE_BITS]
        a, b = ((old & _MASK) << 1) + 2 * drop, (new & _MASK) << 1
        for k in range(2 * (n - drop)):
            dst[b + k] = src[a + k]
        self._first.set(s, new)
        if n > OWN_PAGE_OVER:
            self._give_back(old >> PAGE_BITS)
        else:
            self._free[n] = append(self._free.get(n, vec[i64]()), old)
            self._free_snapshots += n

    def _block(self, room: i64) -> int:
        """The first snapshot of a free block of ``room`` snapshots."""
        if room > OWN_PAGE_OVER:
            return self._new_page(2 * room) << PAGE_BITS
        free = self._free.get(room)
        if free is not None and len(free):
            self._free[room], first = pop(free)
            self._free_snapshots -= room
            return first
        if self._shared < 0 or self._cut + room > PAGE_SNAPSHOTS:
            self._shared, self._cut = self._new_page(2 * PAGE_SNAPSHOTS), 0
            self._shared_pages.add(self._shared)
        first = self._shared << PAGE_BITS | self._cut
        self._cut += room
        return first

    def _slots_by_page(self) -> dict[int, vec[i32]]:
        """The slots with a block in a shared page, by page (4 bytes a slot)."""
        out: dict[int, vec[i32]] = {}
        for s in range(self._count.n):
            p = self._first.get(s) >> PAGE_BITS
            if self._count.get(s) and p in self._shared_pages:
                out[p] = append(out.get(p, vec[i32]()), i32(s))
        return out

    def _new_page(self, values: i64) -> int:
        page = vec[i64]([0] * values)
        if len(self._spare):
            self._spare, p = pop(self._spare)
            self._pages[p] = page
            return p
        self._pages = append(self._pages, page)
        return len(self._pages) - 1

    def _give_back(self, p: i64) -> None:
        self._pages[p] = vec[i64]()
        self._spare = append(self._spare, p)

    def compact(self) -> None:
        """Move the blocks of the shared pages down over the gaps, in the order they sit, and
        give back the pages left empty; no block is free after.

        A block never moves up: packed in the same order, the blocks before it take no more
        room than they did. So copying each block from its first value on overwrites nothing
        still to be read.
        """
        if not self._shared_pages:
            return
        pages = sorted(self._shared_pages)
        used, cut = 0, 0
        # Per snapshot of the page being packed: 1 + the slot whose block starts there.
        owner = vec[i32]([0] * PAGE_SNAPSHOTS)
        by_page = self._slots_by_page()
        for p in pages:
            for slot in by_page.get(p, vec[i32]()):
                owner[self._first.get(i64(slot)) & _MASK] = slot + 1
            for k in range(PAGE_SNAPSHOTS):  # the page's blocks in the order they sit
                if not owner[k]:
                    continue
                s = i64(owner[k]) - 1
                owner[k] = 0
                n = self._count.get(s)
                room = capacity_for(n)
                if cut + room > PAGE_SNAPSHOTS:
                    used, cut = used + 1, 0
                new = pages[used] << PAGE_BITS | cut
                cut += room
                if new != p << PAGE_BITS | k:
                    src, dst = self._pages[p], self._pages[pages[used]]
                    a, b = k << 1, (new & _MASK) << 1
                    for j in range(2 * n):
                        dst[b + j] = src[a + j]
                    self._first.set(s, new)
        for p in pages[used + 1 :]:
            self._shared_pages.discard(p)
            self._give_back(p)
        self._shared, self._cut = pages[used], cut
        self._free.clear()
        self._free_snapshots = 0

    def held_snapshots(self) -> tuple[int, int]:
        """Snapshots the pages have room for, and of those the free blocks' (for measuring)."""
        return sum(len(p) for p in self._pages) >> 1, self._free_snapshots
