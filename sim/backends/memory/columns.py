"""Fixed-width columns for the memory store: int64, int32, uint8 and float64 values by index,
times as int32 offsets from a base per chunk, int32 values in pages that exist while they hold
one not 0, a set of slots as bits, and an aid -> slot hash
index.

Why not ``array``: compiled by mypyc, ``a[i]`` on an ``array('q')`` goes through the generic
item protocol -- the index is boxed into a Python int, the array boxes the item into another,
and the caller unboxes it -- where mypyc reads a ``librt.vecs.vec[i64]`` natively, a load at
an offset (docs/performance.md "A columnar memory store").

``get`` returns a Python ``int`` (mypyc's tagged int), not an ``i64``: callers compute with
the values, and an ``i64`` expression wraps around silently where an ``int`` grows (the
schedule heaps' keys are ``started_at << 32 | id``, 73 bits).

Why chunks: a vec doubles its capacity when it grows, so one vec per column could hold twice
the rows it needs, and while it grows the old and the new buffer both live (at full scale a
month writes some 17M schedule rows: 136 MB for one int64 column). A column is a vec of
zero-filled chunks of 2^16 items instead: it grows by one chunk, copies nothing, and wastes at
most one chunk. Reading through the chunk costs one more indexed load than a flat vec.

The four classes are one shape written four times: mypyc compiles a vec's item type into the
code, and has no generic class that it would specialise per item type.
"""

from __future__ import annotations

from typing import Final, final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

CHUNK_BITS: Final = 16
_CHUNK: Final = 1 << 16
_MASK: Final = (1 << 16) - 1


@final
class I64Column:
    """int64 values by index."""

    def __init__(self) -> None:
        self._chunks: vec[vec[i64]] = vec[vec[i64]]()
        self.n: i64 = 0
        """The number of items."""

    def __len__(self) -> int:
        return self.n

    def get(self, i: i64) -> int:
        return self._chunks[i >> CHUNK_BITS][i & _MASK]

    def set(self, i: i64, value: i64) -> None:
        self._chunks[i >> CHUNK_BITS][i & _MASK] = value

    def append(self, value: i64) -> None:
        n = self.n
        if n & _MASK == 0:
            self._chunks = append(self._chunks, vec[i64]([0] * _CHUNK))
        self._chunks[n >> CHUNK_BITS][n & _MASK] = value
        self.n = n + 1


_FAR: Final = -(1 << 31)
"""A :class:`TimeColumn` item that holds no offset: its value is in the column's dict."""
_NEAR: Final = (1 << 31) - 1
"""The largest offset a :class:`TimeColumn` item holds (the smallest is ``_FAR + 1``)."""


@final
class TimeColumn:
    """Epoch-ms times by index, as int32 offsets from a base per chunk (the first time written
    into the chunk); a time more than 24.8 days from its chunk's base is kept whole in a dict.

    The schedule rows' due and creation times: rows are written in the order they are created,
    a chunk of 2^16 rows is created within hours (the tenth-scale month writes 1.46M rows in
    30 days), and a row is due within weeks of its creation (archive rows by the Monday after
    next, at most 14 days more by the window search: ``Params.forward_search_windows``). So
    nearly every time is 4 bytes where an :class:`I64Column` takes 8, and a time that is not
    near costs a dict entry, not a wrong answer. Full scale for 30 days: the run's peak 84 MB
    lower (docs/performance.md "A columnar memory store").
    """

    def __init__(self) -> None:
        self._chunks: vec[vec[i32]] = vec[vec[i32]]()
        self._bases: vec[i64] = vec[i64]()
        self._far: dict[int, int] = {}
        self._unbased = False
        """The last chunk has no base yet: it is new, or holds only padding (:meth:`pad`)."""
        self.n: i64 = 0

    def __len__(self) -> int:
        return self.n

    def get(self, i: i64) -> int:
        c = i >> CHUNK_BITS
        d = self._chunks[c][i & _MASK]
        if d == _FAR:
            return self._far[i]
        return self._bases[c] + i64(d)

    def set(self, i: i64, value: i64) -> None:
        c = i >> CHUNK_BITS
        chunk = self._chunks[c]
        d = value - self._bases[c]
        if chunk[i & _MASK] == _FAR:
            self._far.pop(i, None)
        if _FAR < d <= _NEAR:
            chunk[i & _MASK] = i32(d)
        else:
            chunk[i & _MASK] = _FAR
            self._far[i] = value

    def append(self, value: i64) -> None:
        n = self.n
        if n & _MASK == 0:
            self._open_chunk()
        if self._unbased:
            self._bases[len(self._bases) - 1] = value
            self._unbased = False
        self.n = n + 1
        self.set(n, value)

    def pad(self) -> None:
        """An item never read (a table's index 0, its ids counting from 1): it fixes no base."""
        n = self.n
        if n & _MASK == 0:
            self._open_chunk()
        self.n = n + 1
        self._chunks[n >> CHUNK_BITS][n & _MASK] = _FAR
        self._far[n] = 0

    def _open_chunk(self) -> None:
        self._chunks = append(self._chunks, vec[i32]([0] * _CHUNK))
        self._bases = append(self._bases, 0)
        self._unbased = True

    @property
    def far(self) -> int:
        """How many items are kept whole, not as an offset."""
        return len(self._far)


@final
class I32Column:
    """int32 values by index."""

    def __init__(self) -> None:
        self._chunks: vec[vec[i32]] = vec[vec[i32]]()
        self.n: i64 = 0

    def __len__(self) -> int:
        return self.n

    def get(self, i: i64) -> int:
        return self._chunks[i >> CHUNK_BITS][i & _MASK]

    def set(self, i: i64, value: i32) -> None:
        self._chunks[i >> CHUNK_BITS][i & _MASK] = value

    def append(self, value: i32) -> None:
        n = self.n
        if n & _MASK == 0:
            self._chunks = append(self._chunks, vec[i32]([0] * _CHUNK))
        self._chunks[n >> CHUNK_BITS][n & _MASK] = value
        self.n = n + 1

    def grow_to(self, n: i64) -> None:
        """Zeros up to ``n`` items."""
        while self.n < n:
            self.append(0)


@final
class U8Column:
    """uint8 values by index."""

    def __init__(self) -> None:
        self._chunks: vec[vec[u8]] = vec[vec[u8]]()
        self.n: i64 = 0

    def __len__(self) -> int:
        return self.n

    def get(self, i: i64) -> int:
        return self._chunks[i >> CHUNK_BITS][i & _MASK]

    def set(self, i: i64, value: u8) -> None:
        self._chunks[i >> CHUNK_BITS][i & _MASK] = value

    def append(self, value: u8) -> None:
        n = self.n
        if n & _MASK == 0:
            self._chunks = append(self._chunks, vec[u8]([0] * _CHUNK))
        self._chunks[n >> CHUNK_BITS][n & _MASK] = value
        self.n = n + 1


@final
class F64Column:
    """float64 values by index."""

    def __init__(self) -> None:
        self._chunks: vec[vec[float]] = vec[vec[float]]()
        self.n: i64 = 0

    def __len__(self) -> int:
        return self.n

    def get(self, i: i64) -> float:
        return self._chunks[i >> CHUNK_BITS][i & _MASK]

    def set(self, i: i64, value: float) -> None:
        self._chunks[i >> CHUNK_BITS][i & _MASK] = value

    def append(self, value: float) -> None:
        n = self.n
        if n & _MASK == 0:
            self._chunks = append(self._chunks, vec[float]([0.0] * _CHUNK))
        self._chunks[n >> CHUNK_BITS][n & _MASK] = value
        self.n = n + 1


_PAGE_BITS: Final = 10
_PAGE: Final = 1 << 10
_PAGE_MASK: Final = (1 << 10) - 1


@final
class PagedI32Column:
    """int32 values by index, 0 unless set, in pages of 2^10 items that exist only while one of
    their items is not 0 (an absent page is an empty vec, which holds no buffer).

    The schedule table's active rows by slot and type: at 20M videos a chunked column is 80 MB a
    type, and few videos have a new or a milestone row (docs/performance.md "Where 20M videos'
    memory goes"); a page of a type that every video has costs what a chunk's share does.
    """

    def __init__(self) -> None:
        self._pages: vec[vec[i32]] = vec[vec[i32]]()
        self._set: vec[i32] = vec[i32]()
        """Per page, how many of its items are not 0."""
        self.n: i64 = 0

    def __len__(self) -> int:
        return self.n

    def get(self, i: i64) -> int:
        page = self._pages[i >> _PAGE_BITS]
        return page[i & _PAGE_MASK] if len(page) else 0

    def set(self, i: i64, value: i32) -> None:
        p = i >> _PAGE_BITS
        page = self._pages[p]
        if not len(page):
            if value == 0:
                return
            page = vec[i32]([0] * _PAGE)
            self._pages[p] = page
        old = page[i & _PAGE_MASK]
        page[i & _PAGE_MASK] = value
        if old == 0 and value != 0:
            self._set[p] += 1
        elif old != 0 and value == 0:
            self._set[p] -= 1
            if self._set[p] == 0:
                self._pages[p] = vec[i32]()

    def grow_to(self, n: i64) -> None:
        """Zeros up to ``n`` items."""
        while len(self._pages) << _PAGE_BITS < n:
            self._pages = append(self._pages, vec[i32]())
            self._set = append(self._set, 0)
        if n > self.n:
            self.n = n

    @property
    def pages(self) -> int:
        """How many pages exist."""
        return sum(1 for p in range(len(self._pages)) if len(self._pages[p]))


_WORD_BITS: Final = 32
"""Slots a :class:`SlotBits` word holds: 32, not 64, so that no word is negative or beyond
int64 in interpreted code (an item of a ``vec[i64]`` must fit)."""
_BIT: Final = vec[i64]([1 << k for k in range(_WORD_BITS)])
"""The word of each bit alone. Not ``1 << k`` for an ``i64`` k: mypyc 2.4 writes that as C's
``1 << k`` on a 32-bit int, and ``1 << 31`` came out as -2**31, a word whose bits never end."""


@final
class SlotBits:
    """A set of slots, one bit each, and how many there are; members come out in slot order.

    The memory store's anti-join sets (videos without an active row of a type) start with every
    video the catalogue load adds: at 20M videos a Python set of 18M aids held about 1.1 GB (its
    table and an int object an aid) until the start-up dispatch drained it; a bit a slot is
    2.5 MB. Listing the members reads every word, a few thousand at full scale."""

    def __init__(self) -> None:
        self._words: vec[i64] = vec[i64]()
        self.n: i64 = 0
        """How many slots are in the set."""

    def __len__(self) -> int:
        return self.n

    def add(self, slot: i64) -> None:
        w = slot // _WORD_BITS
        while w >= len(self._words):
            self._words = append(self._words, 0)
        bit = _BIT[slot % _WORD_BITS]
        word = self._words[w]
        if not word & bit:
            self._words[w] = word | bit
            self.n += 1

    def discard(self, slot: i64) -> None:
        w = slot // _WORD_BITS
        if w >= len(self._words):
            return
        bit = _BIT[slot % _WORD_BITS]
        word = self._words[w]
        if word & bit:
            self._words[w] = word ^ bit
            self.n -= 1

    def values_in(self, column: I64Column) -> vec[i64]:
        """The column's values at the members' slots, in slot order (the memory store: their
        aids), 8 bytes each: a list would hold an int object a member (40 bytes with its place;
        18M of them when the start-up dispatch asks, at 20M videos)."""
        out = vec[i64](capacity=self.n)
        words = self._words
        for w in range(len(words)):
            word = words[w]
            slot = w * _WORD_BITS
            while word:
                if word & 1:
                    out = append(out, column.get(slot))
                word >>= 1
                slot += 1
        return out


def _free_table(places: i64) -> vec[i32]:
    """A table of ``places`` free places, filled a place at a time (a list of that many zeros
    first would be 8 bytes a place of pointers, twice the table, while it grows)."""
    table = vec[i32](capacity=places)
    for _ in range(places):
        table = append(table, 0)
    return table


@final
class AidIndex:
    """aid -> slot, an open-addressing hash table of slots in one int32 vec, linear probing, at
    most three quarters full. A place holds ``slot + 1`` (0: free); the aid it stands for is
    read back from the slot -> aid column the index is given, which the caller fills first.

    A dict of two million ints costs about 100 bytes an entry (its table, an int object for the
    key and one for the value). A place here costs 4 bytes, an entry 5-11 bytes (8 at full
    scale: 2.12M aids in 2^22 places; 134 MB for 20M videos in 2^25 places, where places of
    (aid, slot) took 537 MB). A hit reads its place, then the aid in the column, usually at the
    first place tried: 2.3 places a hit on average at three quarters full with the catalogue's
    aids (docs/performance.md "A columnar memory store"). A load factor of a half would double
    the table at full scale (2.12M aids are just over 2^21).
    Entries are never removed (a video keeps its slot)."""

    def __init__(self, aids: I64Column) -> None:
        self._aids = aids
        """slot -> aid: the column whose slots the places hold."""
        self._table: vec[i32] = _free_table(1024)
        self._mask: i64 = 1023
        self.n: i64 = 0

    def __len__(self) -> int:
        return self.n

    def _home(self, aid: i64) -> i64:
        # A multiplicative hash of the low 30 bits mixed with the rest: no product exceeds 62
        # bits, so compiled (int64) and interpreted code compute the same places.
        x = (aid ^ (aid >> 29)) & 0x3FFFFFFF
        return ((x * 0x9E3779B1) >> 16) & self._mask

    def get(self, aid: i64) -> int:
        """The aid's slot, or -1."""
        table = self._table
        aids = self._aids
        mask = self._mask
        pos = self._home(aid)
        while True:
            place = i64(table[pos])
            if place == 0:
                return -1
            if aids.get(place - 1) == aid:
                return place - 1
            pos = (pos + 1) & mask

    def add(self, aid: i64, slot: i64) -> None:
        """Map a new aid (not in the table) to ``slot``, whose aid the column already holds."""
        if 4 * (self.n + 1) > 3 * (self._mask + 1):
            self._grow()
        self._put(aid, slot)
        self.n += 1

    def _put(self, aid: i64, slot: i64) -> None:
        table = self._table
        mask = self._mask
        pos = self._home(aid)
        while table[pos] != 0:
            pos = (pos + 1) & mask
        table[pos] = i32(slot + 1)

    def _grow(self) -> None:
        old = self._table
        size = 2 * (self._mask + 1)
        self._table = _free_table(size)
        self._mask = size - 1
        for k in range(len(old)):
            place = i64(old[k])
            if place != 0:
                self._put(self._aids.get(place - 1), place - 1)
