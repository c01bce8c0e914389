"""The synthetic upstream in memory: bilibili as a pure function of the synthetic world."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sim.cvsa.vocabulary import UpstreamErrorKind
from sim.ports import UpstreamError, VideoStats, new_record
from sim.units import Ms


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
            raise UpstreamError(UpstreamErrorKind.BILI_CODE, code)
        return new_record(VideoStats, (aid, self._views(aid, now_ms), now_ms))

    async def get_videos(
        self, aids: Sequence[int], now_ms: Ms, task: str = "bulkSnapshot"
    ) -> list[VideoStats]:
        views, api_error = self._views, self._api_error
        return [
            new_record(VideoStats, (aid, views(aid, now_ms), now_ms))
            for aid in aids
            if not api_error(aid, now_ms)
        ]
