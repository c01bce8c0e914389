"""The in-memory database: the schedule table and the video tables in one object (the
dispatchers' anti-joins need both), plus the two anti-join indexes that tie them together."""

from __future__ import annotations

from typing import Final

from sim.backends.memory.schedules import TYPE_CODE, TYPES, ScheduleTable
from sim.backends.memory.videos import VideoTables
from sim.cvsa.vocabulary import ScheduleType

# The anti-joins the dispatchers run (reference §11.7, §13b): songs without an active normal or
# archive row, and non-song videos without an active archive row. They are kept as sets that
# change when a video's active count of a type crosses zero. Non-songs are only ever asked about
# archive rows (§11.7): a set of the non-songs without a normal row would hold every one of them
# (a set table of an estimated 64 MB at full scale) for nothing; other questions get a scan.
_TRACKED: Final = (TYPE_CODE[ScheduleType.NORMAL], TYPE_CODE[ScheduleType.ARCHIVE])
_TRACKED_OTHERS: Final = (TYPE_CODE[ScheduleType.ARCHIVE],)


class MemoryStore(ScheduleTable, VideoTables):
    """The optimised store: schedule store and snapshot store over columns, heaps and dicts (see
    the two modules; its plain twin is :class:`sim.backends.reference.ReferenceStore`)."""

    def __init__(self) -> None:
        VideoTables.__init__(self)
        ScheduleTable.__init__(
            self, self._active_changed, self._slot_of, self._slot.get, self._aids
        )
        self._idle_songs: dict[int, set[int]] = {t: set() for t in _TRACKED}
        self._idle_others: dict[int, set[int]] = {t: set() for t in _TRACKED_OTHERS}
        self._idle_peak: dict[tuple[bool, int], int] = {}
        """(songs?, type) -> the most entries its set was seen with since it was rebuilt."""

    def _active_changed(self, aid: int, type: int, active: bool) -> None:
        if type not in self._idle_songs:
            return
        others = self._idle_others.get(type)
        if active:
            self._idle_songs[type].discard(aid)
            if others is not None:
                others.discard(aid)
        elif self._is_song(aid):
            self._idle_songs[type].add(aid)
        elif others is not None and self._is_video(aid):
            others.add(aid)

    def _video_added(self, aid: int, song: bool) -> None:
        if not song and self._is_song(aid):
            return  # a song's bilibili_metadata row arriving after its songs row: still a song
        for t in _TRACKED:
            if self._active_of(aid, t):
                continue
            others = self._idle_others.get(t)
            if song:
                if others is not None:
                    others.discard(aid)
                self._idle_songs[t].add(aid)
            elif others is not None:
                others.add(aid)

    def _idle(self, songs: bool, code: int) -> list[int]:
        """The sorted members of an anti-join set, which is rebuilt once it holds an eighth of
        what it was seen with: a set never shrinks its table on removals, and the start-up
        dispatch empties the set of 1.8M non-songs (a 64 MB table) in one pass."""
        sets = self._idle_songs if songs else self._idle_others
        idle = sets[code]
        peak = max(self._idle_peak.get((songs, code), 0), len(idle))
        if len(idle) * 8 < peak:
            idle = sets[code] = set(idle)
            peak = len(idle)
        self._idle_peak[songs, code] = peak
        return sorted(idle)

    async def songs_without_active_schedule(self, type: ScheduleType) -> list[int]:
        code = TYPE_CODE[type]
        if code in self._idle_songs:
            return self._idle(True, code)
        active = await self.aids_with_active_schedule(type)
        return [a for a in await self.song_aids() if a not in active]

    async def non_songs_without_active_schedule(self, type: ScheduleType) -> list[int]:
        code = TYPE_CODE[type]
        if code in self._idle_others:
            return self._idle(False, code)
        active = await self.aids_with_active_schedule(type)
        songs = set(await self.song_aids())
        return [a for a in await self.video_aids() if a not in songs and a not in active]


__all__ = ["TYPES", "MemoryStore"]
