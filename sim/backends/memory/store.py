"""The in-memory database: the schedule table and the video tables in one object (the
dispatchers' anti-joins need both), plus the two anti-join indexes that tie them together."""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from librt.vecs import vec
from mypy_extensions import i64

from sim.backends.memory.columns import SlotBits
from sim.backends.memory.schedules import TYPE_CODE, TYPES, ScheduleTable
from sim.backends.memory.videos import IS_SONG, IS_VIDEO, VideoTables
from sim.cvsa.vocabulary import ScheduleType
from sim.units import Ms

# The anti-joins the dispatchers run (reference §11.7, §13b): songs without an active normal or
# archive row, and non-song videos without an active archive row. They are kept as sets of
# slots, a bit a video (:class:`SlotBits`), that change when a video's active count of a type
# crosses zero. Non-songs are only ever asked about archive rows (§11.7), so no set of the
# non-songs without a normal row is kept; other questions get a scan.
_TRACKED: Final = (TYPE_CODE[ScheduleType.NORMAL], TYPE_CODE[ScheduleType.ARCHIVE])
_TRACKED_OTHERS: Final = (TYPE_CODE[ScheduleType.ARCHIVE],)


class MemoryStore(ScheduleTable, VideoTables):
    """The optimised store: schedule store and snapshot store over columns, heaps and dicts (see
    the two modules; its plain twin is :class:`sim.backends.reference.ReferenceStore`).

    Args:
        snapshot_reach_ms: how far back any read asks for a snapshot; given, the snapshots
            older than that are let go (:mod:`~sim.backends.memory.videos`). None keeps all.
    """

    def __init__(self, snapshot_reach_ms: Ms | None = None) -> None:
        VideoTables.__init__(self, snapshot_reach_ms)
        ScheduleTable.__init__(
            self, self._active_changed, self._slot_of, self._slot.get, self._aids
        )
        self._idle_songs: dict[int, SlotBits] = {t: SlotBits() for t in _TRACKED}
        self._idle_others: dict[int, SlotBits] = {t: SlotBits() for t in _TRACKED_OTHERS}

    def _active_changed(self, s: int, type: int, active: bool) -> None:
        if type not in self._idle_songs:
            return
        others = self._idle_others.get(type)
        if active:
            self._idle_songs[type].discard(s)
            if others is not None:
                others.discard(s)
        elif self._flags.get(s) & IS_SONG:
            self._idle_songs[type].add(s)
        elif others is not None and self._flags.get(s) & IS_VIDEO:
            others.add(s)

    def _video_added(self, s: int, song: bool) -> None:
        if not song and self._flags.get(s) & IS_SONG:
            return  # a song's bilibili_metadata row arriving after its songs row: still a song
        for t in _TRACKED:
            if self._active_at(s, t):
                continue
            others = self._idle_others.get(t)
            if song:
                if others is not None:
                    others.discard(s)
                self._idle_songs[t].add(s)
            elif others is not None:
                others.add(s)

    def _idle(self, songs: bool, code: int) -> vec[i64]:
        """The members of an anti-join set as aids, ascending."""
        aids = (self._idle_songs if songs else self._idle_others)[code].values_in(self._aids)
        for k in range(1, len(aids)):
            # Slots follow the order aids were first seen in: the catalogue's is the aids'
            # (the 20M start-up's 18M aids need no second copy), arrivals' discovery is not.
            if aids[k] < aids[k - 1]:
                return vec[i64](sorted(aids))
        return aids

    async def songs_without_active_schedule(self, type: ScheduleType) -> Collection[int]:
        code = TYPE_CODE[type]
        if code in self._idle_songs:
            return self._idle(True, code)
        active = await self.aids_with_active_schedule(type)
        return [a for a in await self.song_aids() if a not in active]

    async def non_songs_without_active_schedule(self, type: ScheduleType) -> Collection[int]:
        code = TYPE_CODE[type]
        if code in self._idle_others:
            return self._idle(False, code)
        active = await self.aids_with_active_schedule(type)
        songs = set(await self.song_aids())
        return [a for a in await self.video_aids() if a not in songs and a not in active]


__all__ = ["TYPES", "MemoryStore"]
