"""The window-count hash and the synthetic upstream, in memory."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sim.cvsa.windows import Reserve, reserve_in
from sim.ports import Reserved, UpstreamError, VideoStats
from sim.units import Ms


class MemoryWindowCounter:
    """The window-count hash as a dict (reference §6, §19.3: zero-valued fields are kept)."""

    def __init__(self) -> None:
        self._h: dict[Ms, int] = {}
        self._locks: dict[str, Ms] = {}
        """Lock name -> expiry instant (the :class:`sim.ports.LockManager` half)."""

    async def incr(self, window_ms: Ms, delta: int) -> int:
        value = self._h.get(window_ms, 0) + delta
        self._h[window_ms] = value
        return value

    async def reserve(self, first_ms: Ms, step_ms: Ms, count: int, cap: int) -> Reserved:
        # The probe loop itself, on the dict: no round trips to save here.
        return reserve_in(self._h, Reserve(first_ms, step_ms, count, cap))

    async def get_all(self) -> dict[Ms, int]:
        return dict(sorted(self._h.items()))

    async def replace_all(self, counts: Mapping[Ms, int]) -> None:
        self._h = dict(counts)

    async def clear(self) -> None:
        self._h = {}

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
        return VideoStats(aid, self._views(aid, now_ms), now_ms)

    async def get_videos(
        self, aids: Sequence[int], now_ms: Ms, task: str = "bulkSnapshot"
    ) -> list[VideoStats]:
        views, api_error = self._views, self._api_error
        return [
            VideoStats(aid, views(aid, now_ms), now_ms)
            for aid in aids
            if not api_error(aid, now_ms)
        ]
