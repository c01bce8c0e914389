"""The in-memory backend: the default, and a *fake* (not a mock): it passes the same contract
suite as SQLite, PostgreSQL and Redis (``sim.testing``, tests/contracts/).

Indexes mirror the deployed schema's (reference §2.1): pending rows by (type, started_at) for the
ticks, active rows by started_at for cleanup, pending counts per 5-minute window for the refresh
(kept incrementally instead of a GROUP BY scan), active rows per (aid, type) for the duplicate
check. Snapshots of one video live in one interleaved ``array('q')`` [t0, v0, t1, v1, ...] to keep
about 16 bytes per snapshot at full scale.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Mapping, Sequence

from sortedcontainers import SortedList

from sim.cvsa.milestones import milestone_candidate
from sim.ports import (
    DueOrder,
    EtaRow,
    ScheduleRow,
    Snapshot,
    UpstreamError,
    VideoStats,
)
from sim.units import WINDOW_MS, Ms

_PENDING = "pending"
_PROCESSING = "processing"
_ORDER_RANK = {"normal": 0, "archive": 1}


class _Row:
    __slots__ = ("aid", "created_at", "id", "started_at", "status", "type")

    def __init__(self, id: int, aid: int, type: str, started_at: Ms, created_at: Ms) -> None:
        self.id = id
        self.aid = aid
        self.type = type
        self.status = _PENDING
        self.started_at = started_at
        self.created_at = created_at

    def freeze(self) -> ScheduleRow:
        return ScheduleRow(
            self.id, self.aid, self.type, self.status, self.started_at, self.created_at
        )


class MemoryStore:
    """Schedule store and snapshot store over dicts and sorted lists."""

    def __init__(self) -> None:
        self._rows: dict[int, _Row] = {}
        self._next_id = 1
        self._pending: dict[str, SortedList] = {}
        self._active_by_time: SortedList = SortedList()
        self._active: dict[tuple[int, str], list[_Row]] = {}
        self._active_aids: dict[str, dict[int, int]] = {}
        self._processing: dict[int, int] = {}
        self._pending_windows: dict[Ms, int] = {}
        self._snaps: dict[int, array[int]] = {}
        self._eta: dict[int, EtaRow] = {}
        self._songs: dict[int, Ms] = {}
        self._videos: dict[int, list[int]] = {}
        self._song_set_cache: set[int] | None = None
        self._candidates: set[int] = set()
        self._candidates_wide: set[int] = set()

    # -- index maintenance ------------------------------------------------------------------
    def _index(self, row: _Row) -> None:
        if row.status == _PENDING:
            self._pending.setdefault(row.type, SortedList()).add((row.started_at, row.id))
            w = row.started_at - row.started_at % WINDOW_MS
            self._pending_windows[w] = self._pending_windows.get(w, 0) + 1
        if row.status in (_PENDING, _PROCESSING):
            self._active_by_time.add((row.started_at, row.id))
            self._active.setdefault((row.aid, row.type), []).append(row)
            per_type = self._active_aids.setdefault(row.type, {})
            per_type[row.aid] = per_type.get(row.aid, 0) + 1
        if row.status == _PROCESSING:
            self._processing[row.aid] = self._processing.get(row.aid, 0) + 1

    def _unindex(self, row: _Row) -> None:
        if row.status == _PENDING:
            self._pending[row.type].remove((row.started_at, row.id))
            w = row.started_at - row.started_at % WINDOW_MS
            left = self._pending_windows[w] - 1
            if left:
                self._pending_windows[w] = left
            else:
                del self._pending_windows[w]
        if row.status in (_PENDING, _PROCESSING):
            self._active_by_time.remove((row.started_at, row.id))
            rows = self._active[(row.aid, row.type)]
            rows.remove(row)
            if not rows:
                del self._active[(row.aid, row.type)]
            per_type = self._active_aids[row.type]
            if per_type[row.aid] == 1:
                del per_type[row.aid]
            else:
                per_type[row.aid] -= 1
        if row.status == _PROCESSING:
            n = self._processing[row.aid] - 1
            if n:
                self._processing[row.aid] = n
            else:
                del self._processing[row.aid]

    # -- ScheduleStore ------------------------------------------------------------------------
    async def insert_schedule(
        self, aid: int, type: str, started_at_ms: Ms, created_at_ms: Ms
    ) -> int:
        row = _Row(self._next_id, aid, type, started_at_ms, created_at_ms)
        self._next_id += 1
        self._rows[row.id] = row
        self._index(row)
        return row.id

    async def get_schedule(self, schedule_id: int) -> ScheduleRow | None:
        row = self._rows.get(schedule_id)
        return None if row is None else row.freeze()

    async def has_active_schedule(self, aid: int, type: str) -> bool:
        return (aid, type) in self._active

    async def active_schedules(self, aid: int, type: str) -> list[ScheduleRow]:
        rows = self._active.get((aid, type))
        return [] if not rows else sorted((r.freeze() for r in rows), key=lambda r: r.id)

    async def move_schedule(self, schedule_id: int, started_at_ms: Ms) -> ScheduleRow | None:
        row = self._rows.get(schedule_id)
        if row is None:
            return None
        before = row.freeze()
        self._unindex(row)
        row.started_at = started_at_ms
        self._index(row)
        return before

    async def due_schedules(
        self,
        *,
        from_ms: Ms | None,
        to_ms: Ms,
        types: Sequence[str],
        limit: int,
        order: DueOrder,
    ) -> list[ScheduleRow]:
        lo = (from_ms, 0) if from_ms is not None else None
        hi = (to_ms, float("inf"))
        found: list[tuple[int, Ms, int]] = []
        for type in types:
            index = self._pending.get(type)
            if not index:
                continue
            rank = _ORDER_RANK.get(type, 2) if order == "normal_first" else 0
            for n, (started_at, row_id) in enumerate(index.irange(lo, hi)):
                if n >= limit:
                    break
                found.append((rank, started_at, row_id))
        found.sort()
        return [self._rows[row_id].freeze() for _, _, row_id in found[:limit]]

    async def has_processing_schedule(self, aid: int) -> bool:
        return aid in self._processing

    async def set_schedule_status(self, ids: Sequence[int], status: str) -> list[ScheduleRow]:
        before = []
        for schedule_id in ids:
            row = self._rows.get(schedule_id)
            if row is None:
                continue
            before.append(row.freeze())
            if row.status != status:
                self._unindex(row)
                row.status = status
                self._index(row)
        return before

    async def delete_overdue_schedules(self, before_ms: Ms) -> list[ScheduleRow]:
        doomed = [self._rows[i] for _, i in self._active_by_time.irange(None, (before_ms, -1))]
        doomed.sort(key=lambda r: r.id)
        out = []
        for row in doomed:
            out.append(row.freeze())
            self._unindex(row)
            del self._rows[row.id]
        return out

    async def pending_counts_by_window(self, from_ms: Ms, to_ms: Ms) -> dict[Ms, int]:
        return {w: n for w, n in sorted(self._pending_windows.items()) if from_ms <= w < to_ms}

    async def earliest_pending_ms(self, types: Sequence[str]) -> Ms | None:
        firsts = [idx[0][0] for t in types if (idx := self._pending.get(t))]
        return min(firsts) if firsts else None

    async def earliest_active_ms(self) -> Ms | None:
        return self._active_by_time[0][0] if self._active_by_time else None

    async def aids_with_active_schedule(self, type: str) -> set[int]:
        return set(self._active_aids.get(type, ()))

    def _song_set(self) -> set[int]:
        if self._song_set_cache is None:
            self._song_set_cache = set(self._songs)
        return self._song_set_cache

    async def songs_without_active_schedule(self, type: str) -> list[int]:
        active = self._active_aids.get(type, {})
        return sorted(self._song_set().difference(active))

    async def non_songs_without_active_schedule(self, type: str) -> list[int]:
        active = self._active_aids.get(type, {})
        songs = self._song_set()
        return sorted(a for a in self._videos if a not in songs and a not in active)

    # -- SnapshotStore ------------------------------------------------------------------------
    async def add_video(self, aid: int, published_ms: Ms) -> None:
        self._videos.setdefault(aid, [published_ms, 0])

    async def add_song(self, aid: int, published_ms: Ms) -> bool:
        if aid in self._songs:
            return False
        self._songs[aid] = published_ms
        self._song_set_cache = None
        self._recheck_candidate(aid)
        return True

    async def song_aids(self) -> list[int]:
        return sorted(self._songs)

    async def video_aids(self) -> list[int]:
        return sorted(self._videos)

    async def song_published_ms(self, aid: int) -> Ms | None:
        return self._songs.get(aid)

    async def video_status(self, aid: int) -> int:
        meta = self._videos.get(aid)
        return 0 if meta is None else meta[1]

    async def set_video_status(self, aid: int, code: int) -> None:
        meta = self._videos.get(aid)
        if meta is not None:
            meta[1] = code

    async def insert_snapshot(self, aid: int, t_ms: Ms, views: int) -> bool:
        snaps = self._snaps.get(aid)
        if snaps is None:
            self._snaps[aid] = array("q", (t_ms, views))
            self._recheck_candidate(aid)
            return True
        if snaps[-2] < t_ms:  # the usual case: appended in time order
            snaps.append(t_ms)
            snaps.append(views)
            self._recheck_candidate(aid)
            return True
        times = snaps[0::2]
        i = bisect.bisect_left(times, t_ms)
        if i < len(times) and times[i] == t_ms:
            return False
        snaps[2 * i : 2 * i] = array("q", (t_ms, views))
        return True

    async def latest_snapshot(self, aid: int) -> Snapshot | None:
        snaps = self._snaps.get(aid)
        return None if snaps is None else Snapshot(snaps[-2], snaps[-1])

    def _at(self, aid: int, snaps: array[int], i: int) -> Snapshot:
        return Snapshot(snaps[2 * i], snaps[2 * i + 1])

    async def snapshot_before(self, aid: int, t_ms: Ms) -> Snapshot | None:
        snaps = self._snaps.get(aid)
        if snaps is None:
            return None
        i = bisect.bisect_right(snaps[0::2], t_ms) - 1
        return None if i < 0 else self._at(aid, snaps, i)

    async def closest_snapshot(self, aid: int, t_ms: Ms) -> Snapshot | None:
        snaps = self._snaps.get(aid)
        if snaps is None:
            return None
        times = snaps[0::2]
        i = bisect.bisect_right(times, t_ms) - 1  # latest at/before
        j = bisect.bisect_left(times, t_ms)  # earliest at/after
        if i < 0:
            return self._at(aid, snaps, j)
        if j >= len(times):
            return self._at(aid, snaps, i)
        # A tie goes to the earlier row (what the deployed query returned, §19.7).
        k = i if t_ms - times[i] <= times[j] - t_ms else j
        return self._at(aid, snaps, k)

    async def upsert_eta(self, row: EtaRow) -> None:
        self._eta[row.aid] = row
        self._recheck_candidate(row.aid)

    async def get_eta(self, aid: int) -> EtaRow | None:
        return self._eta.get(aid)

    # The candidate query scans latest_video_snapshot and eta in SQL; here both candidate sets
    # (with and without set A) are kept up to date on every write that can change them.
    def _recheck_candidate(self, aid: int) -> None:
        snaps = self._snaps.get(aid)
        if snaps is None:
            return
        views, is_song = snaps[-1], aid in self._songs
        eta = self._eta.get(aid)
        eta_h = None if eta is None else eta.eta_h
        for wide, members in ((False, self._candidates), (True, self._candidates_wide)):
            if milestone_candidate(views, is_song, eta_h, wide):
                members.add(aid)
            else:
                members.discard(aid)

    async def milestone_candidates(self, wide: bool) -> list[int]:
        return sorted(self._candidates_wide if wide else self._candidates)


class MemoryWindowCounter:
    """The window-count hash as a dict (reference §6, §19.3: zero-valued fields are kept)."""

    def __init__(self) -> None:
        self._h: dict[Ms, int] = {}

    async def incr(self, window_ms: Ms, delta: int) -> int:
        value = self._h.get(window_ms, 0) + delta
        self._h[window_ms] = value
        return value

    async def get_all(self) -> dict[Ms, int]:
        return dict(sorted(self._h.items()))

    async def replace_all(self, counts: Mapping[Ms, int]) -> None:
        self._h = dict(counts)

    async def clear(self) -> None:
        self._h = {}


class MemoryUpstream:
    """bilibili as a pure function of the synthetic world: views and error codes at an instant.

    ``views(aid, t)`` and ``api_error(aid, t)`` come from :mod:`sim.world`; latency, proxies, rate
    limits and faults are layered on by the upstream model (``sim.upstream``).
    """

    def __init__(
        self, views: Callable[[int, Ms], int], api_error: Callable[[int, Ms], int]
    ) -> None:
        self._views = views
        self._api_error = api_error

    async def get_video(self, aid: int, now_ms: Ms) -> VideoStats:
        code = self._api_error(aid, now_ms)
        if code:
            raise UpstreamError("bili_code", code)
        return VideoStats(aid, self._views(aid, now_ms), now_ms)

    async def get_videos(self, aids: Sequence[int], now_ms: Ms) -> list[VideoStats]:
        views, api_error = self._views, self._api_error
        return [
            VideoStats(aid, views(aid, now_ms), now_ms)
            for aid in aids
            if not api_error(aid, now_ms)
        ]
