"""The window-count hash and the dispatcher locks, in memory: the optimised counter."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final, final

from librt.vecs import vec
from mypy_extensions import i64

from sim.cvsa.windows import Reserve, reserve_in
from sim.ports import Reserved, new_record
from sim.units import WINDOW_MS, Ms

BLOCK_WINDOWS: Final = 64
"""Windows per block of the full-window index (5 h 20 min)."""
_BLOCK_MS: Final = BLOCK_WINDOWS * WINDOW_MS
SPAN_BITS: Final = 10
"""A span of the window table: 2^10 windows (3.6 days)."""
_SPAN_MASK: Final = (1 << 10) - 1
ABSENT: Final = -(2**63)
"""A window's slot in its span when the hash has no such field."""


@final
class WindowTable:
    """The hash's fields: window start -> count, absent fields told apart from zero ones.

    Aligned windows (every window the scheduler touches) live in spans of 2^10 int64 slots, one
    span per 3.6 days that has a field, so that a probe reads a slot instead of a dict entry
    keyed by a boxed int; any other key (a hash written by something else) in a plain dict.
    """

    def __init__(self) -> None:
        self.spans: dict[int, vec[i64]] = {}
        """Span index (window index >> 10) -> its 2^10 counts (:data:`ABSENT`: no field)."""
        self._odd: dict[Ms, int] = {}
        """Fields whose key is not a window start."""

    def get(self, window_ms: Ms, /) -> int | None:
        """HGET: the count, or None when there is no field."""
        if window_ms % WINDOW_MS:
            return self._odd.get(window_ms)
        k = window_ms // WINDOW_MS
        span = self.spans.get(k >> SPAN_BITS)
        if span is None:
            return None
        value: int = span[k & _SPAN_MASK]
        return None if value == ABSENT else value

    def __setitem__(self, window_ms: Ms, value: int, /) -> None:
        if window_ms % WINDOW_MS:
            self._odd[window_ms] = value
            return
        if value == ABSENT:  # a count Redis could hold but this table could not tell apart
            raise OverflowError(f"window count {value} is out of range")
        k = window_ms // WINDOW_MS
        span = self.spans.get(k >> SPAN_BITS)
        if span is None:
            span = self.spans[k >> SPAN_BITS] = vec[i64]([ABSENT] * (1 << SPAN_BITS))
        span[k & _SPAN_MASK] = value

    def items(self) -> Iterator[tuple[Ms, int]]:
        """Every field, in no particular order."""
        for index, span in self.spans.items():
            first = index << SPAN_BITS
            for i in range(1 << SPAN_BITS):
                value: int = span[i]
                if value != ABSENT:
                    yield (first + i) * WINDOW_MS, value
        yield from self._odd.items()


class MemoryWindowCounter:
    """The window-count hash as a :class:`WindowTable` (reference §6, §19.3: zero-valued fields
    are kept).

    A forward reservation probes windows one by one until one has room, and at scale most probes
    land on full windows: 200k songs all want the same Saturday instant, and a saturated archive
    week leaves runs of hundreds of full windows. So the counter also keeps, for the cap of the
    last reservation, how many windows of each aligned block of :data:`BLOCK_WINDOWS` are full;
    a forward search steps over a block whose windows are all full in one go, counting the probes
    it would have made. The answer and the hash are exactly those of :func:`reserve_in`.
    """

    def __init__(self) -> None:
        self._h = WindowTable()
        self._locks: dict[str, Ms] = {}
        """Lock name -> expiry instant (the :class:`sim.ports.LockManager` half)."""
        self._cap: int | None = None
        """The cap ``_full`` counts for (None: not built)."""
        self._full: dict[int, int] = {}
        """Block index -> windows of it whose count is >= ``_cap``."""

    def _set(self, window_ms: Ms, old: int, new: int) -> None:
        self._h[window_ms] = new
        cap = self._cap
        if cap is not None and (old >= cap) != (new >= cap):
            b = window_ms // _BLOCK_MS
            self._full[b] = self._full.get(b, 0) + (1 if new >= cap else -1)

    def _index(self, cap: int) -> dict[int, int]:
        if cap != self._cap:
            full: dict[int, int] = {}
            for w, v in self._h.items():
                if v >= cap:
                    b = w // _BLOCK_MS
                    full[b] = full.get(b, 0) + 1
            self._cap, self._full = cap, full
        return self._full

    async def incr(self, window_ms: Ms, delta: int) -> int:
        old = self._h.get(window_ms)
        if old is None:
            old = 0
        self._set(window_ms, old, old + delta)
        return old + delta

    async def reserve(self, first_ms: Ms, step_ms: Ms, count: int, cap: int) -> Reserved:
        if step_ms != WINDOW_MS or cap <= 0 or first_ms % WINDOW_MS:
            # The short backward fallback, and shapes the index is not built for.
            got = reserve_in(self._h, new_record(Reserve, (first_ms, step_ms, count, cap)))
            if got.window_ms is not None:
                self._set(got.window_ms, got.value - 1, got.value)
            return got
        full, table = self._index(cap), self._h
        i, k = 0, first_ms // WINDOW_MS  # probe i is window index k
        # The block whose fullness was last read and the span held in `span`: none yet (one
        # before the first probe's; a window index may be negative).
        block, at = k // BLOCK_WINDOWS - 1, (k >> SPAN_BITS) - 1
        span: vec[i64] | None = None
        while i < count:
            b = k // BLOCK_WINDOWS
            # A block's fullness only changes when a probe succeeds, which ends the search:
            # it is read once, on entering the block.
            if b != block:
                block = b
                if full.get(b, 0) == BLOCK_WINDOWS:  # every window of the block is full
                    skip = (b + 1) * BLOCK_WINDOWS - k
                    i += skip
                    k += skip
                    continue
            if k >> SPAN_BITS != at:
                at = k >> SPAN_BITS
                span = table.spans.get(at)
            value = 0 if span is None else span[k & _SPAN_MASK]
            if value == ABSENT:
                value = 0
            if value < cap:
                self._set(k * WINDOW_MS, value, value + 1)
                return new_record(Reserved, (k * WINDOW_MS, value + 1, i + 1))
            i += 1
            k += 1
        return new_record(Reserved, (None, -1, count))

    async def get_all(self) -> dict[Ms, int]:
        return dict(sorted(self._h.items()))

    async def replace_all(self, counts: Mapping[Ms, int]) -> None:
        table = WindowTable()
        for w, v in counts.items():
            table[w] = v
        self._h, self._cap = table, None

    async def clear(self) -> None:
        self._h, self._cap = WindowTable(), None

    # -- LockManager: the dispatcher locks live on the same Redis --------------------------------
    async def is_locked(self, name: str, now_ms: Ms) -> bool:
        return self._locks.get(name, now_ms) > now_ms

    async def acquire_lock(self, name: str, now_ms: Ms, ttl_ms: Ms) -> bool:
        if await self.is_locked(name, now_ms):
            return False
        self._locks[name] = now_ms + ttl_ms
        return True

    async def release_lock(self, name: str) -> None:
        self._locks.pop(name, None)
