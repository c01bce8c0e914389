"""The window-count hash and the synthetic upstream, in memory."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

from sim.cvsa.windows import Reserve, reserve_in
from sim.ports import Reserved, UpstreamError, VideoStats
from sim.units import WINDOW_MS, Ms

BLOCK_WINDOWS: Final = 64
"""Windows per block of the full-window index (5 h 20 min)."""
_BLOCK_MS: Final = BLOCK_WINDOWS * WINDOW_MS
_new: Final = tuple.__new__
"""Builds a NamedTuple without calling its generated ``__new__`` (an interpreted frame per
record, docs/performance.md "Ninth round")."""


class MemoryWindowCounter:
    """The window-count hash as a dict (reference §6, §19.3: zero-valued fields are kept).

    A forward reservation probes windows one by one until one has room, and at scale most probes
    land on full windows: 200k songs all want the same Saturday instant, and a saturated archive
    week leaves runs of hundreds of full windows. So the counter also keeps, for the cap of the
    last reservation, how many windows of each aligned block of :data:`BLOCK_WINDOWS` are full;
    a forward search steps over a block whose windows are all full in one go, counting the probes
    it would have made. The answer and the hash are exactly those of :func:`reserve_in`.
    """

    def __init__(self) -> None:
        self._h: dict[Ms, int] = {}
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
        old = self._h.get(window_ms, 0)
        self._set(window_ms, old, old + delta)
        return old + delta

    async def reserve(self, first_ms: Ms, step_ms: Ms, count: int, cap: int) -> Reserved:
        if step_ms != WINDOW_MS or cap <= 0 or first_ms % WINDOW_MS:
            # The short backward fallback, and shapes the index is not built for.
            got = reserve_in(self._h, _new(Reserve, (first_ms, step_ms, count, cap)))
            if got.window_ms is not None:
                self._set(got.window_ms, got.value - 1, got.value)
            return got
        full, h = self._index(cap), self._h
        i, w = 0, first_ms
        while i < count:
            b = w // _BLOCK_MS
            if full.get(b, 0) == BLOCK_WINDOWS:  # every window of the block is full
                skip = (b + 1) * _BLOCK_MS - w
                i += skip // WINDOW_MS
                w += skip
                continue
            value = h.get(w, 0)
            if value < cap:
                self._set(w, value, value + 1)
                return _new(Reserved, (w, value + 1, i + 1))
            i += 1
            w += WINDOW_MS
        return _new(Reserved, (None, -1, count))

    async def get_all(self) -> dict[Ms, int]:
        return dict(sorted(self._h.items()))

    async def replace_all(self, counts: Mapping[Ms, int]) -> None:
        self._h, self._cap = dict(counts), None

    async def clear(self) -> None:
        self._h, self._cap = {}, None

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


class MemoryUpstream:
    """bilibili as a pure function of the synthetic world: views and error codes at an instant.

    ``views(aid, t)`` and ``api_error(aid, t)`` come from :mod:`sim.world`; latency, proxies, rate
    limits and faults are layered on by the upstream model.
    """

    def __init__(
        self, views: Callable[[int, Ms], int], api_error: Callable[[int, Ms], int]
    ) -> None:
        self._views = views
        self._api_error = api_error

    async def get_video(self, aid: int, now_ms: Ms, task: str = "snapshotVideo") -> VideoStats:
        code = self._api_error(aid, now_ms)
        if code:
            raise UpstreamError("bili_code", code)
        return _new(VideoStats, (aid, self._views(aid, now_ms), now_ms))

    async def get_videos(
        self, aids: Sequence[int], now_ms: Ms, task: str = "bulkSnapshot"
    ) -> list[VideoStats]:
        views, api_error = self._views, self._api_error
        return [
            _new(VideoStats, (aid, views(aid, now_ms), now_ms))
            for aid in aids
            if not api_error(aid, now_ms)
        ]
