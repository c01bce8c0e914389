"""The in-memory backend: the default, and a *fake* (not a mock): it passes the same contract
suite as SQLite, PostgreSQL and Redis (``sim.testing``, tests/contracts/).

Its indexes answer the deployed queries (reference §2.1) without scans:

* pending rows per type and active rows, each in a heap of ``(started_at, id)`` with lazy
  deletion: an entry is live while its row exists with that status class and that time (a status
  change or a move just leaves a stale entry behind, dropped when it reaches the top);
* pending counts per 5-minute window, kept as rows come and go (the refresh's GROUP BY);
* active rows per (aid, type), and per type the songs and the non-song videos with **no** active
  row (the dispatchers' anti-joins), kept as active counts cross zero;
* milestone candidates (§11.1), re-checked when a video's latest views, eta or song flag change.

Snapshots of one video live in one interleaved ``array('q')`` ``[t0, v0, t1, v1, ...]`` (about 16
bytes per snapshot at full scale), searched in place.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Mapping, Sequence

from sim.cvsa.milestones import milestone_candidate
from sim.cvsa.windows import Reserve, reserve_in
from sim.ports import (
    DueOrder,
    EtaRow,
    Reserved,
    ScheduleRow,
    Snapshot,
    UpstreamError,
    VideoStats,
)
from sim.units import WINDOW_MS, Ms

_PENDING = "pending"
_PROCESSING = "processing"
_ORDER_RANK = {"normal": 0, "archive": 1}
_TYPES = ("new", "milestone", "normal", "archive")


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


def _last_at_or_before(snaps: array[int], t_ms: Ms) -> int:
    """Index (in snapshots, not array slots) of the last snapshot with time <= t, or -1."""
    lo, hi = 0, len(snaps) >> 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if snaps[mid << 1] <= t_ms:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


class MemoryStore:
    """Schedule store and snapshot store in one object (one database)."""

    def __init__(self) -> None:
        self._rows: dict[int, _Row] = {}
        self._next_id = 1
        self._pending: dict[str, list[tuple[Ms, int]]] = {t: [] for t in _TYPES}
        self._active_heap: list[tuple[Ms, int]] = []
        self._active: dict[tuple[int, str], list[_Row]] = {}
        self._active_aids: dict[str, dict[int, int]] = {t: {} for t in _TYPES}
        self._processing: dict[int, int] = {}
        self._pending_windows: dict[Ms, int] = {}
        self._snaps: dict[int, array[int]] = {}
        self._eta: dict[int, EtaRow] = {}
        self._songs: dict[int, Ms] = {}
        self._videos: dict[int, Ms] = {}
        self._status: dict[int, int] = {}
        self._idle_songs: dict[str, set[int]] = {t: set() for t in _TYPES}
        self._idle_others: dict[str, set[int]] = {t: set() for t in _TYPES}
        self._candidates: set[int] = set()
        self._candidates_wide: set[int] = set()

    # -- index maintenance ------------------------------------------------------------------
    def _index(self, row: _Row, *, new_time: bool = True, was: str | None = None) -> None:
        """Add ``row`` to the indexes of its status. Heap entries are pushed only when the row
        enters a heap's status class or its time changed (``new_time``): a live entry is unique."""
        status = row.status
        if status == _PENDING:
            if new_time or was != _PENDING:
                heapq.heappush(self._pending[row.type], (row.started_at, row.id))
            w = row.started_at - row.started_at % WINDOW_MS
            self._pending_windows[w] = self._pending_windows.get(w, 0) + 1
        elif status != _PROCESSING:
            return
        if new_time or was not in (_PENDING, _PROCESSING):
            heapq.heappush(self._active_heap, (row.started_at, row.id))
        key = (row.aid, row.type)
        rows = self._active.get(key)
        if rows is None:
            self._active[key] = [row]
        else:
            rows.append(row)
        per_type = self._active_aids[row.type]
        n = per_type.get(row.aid, 0)
        per_type[row.aid] = n + 1
        if n == 0:
            self._idle_songs[row.type].discard(row.aid)
            self._idle_others[row.type].discard(row.aid)
        if status == _PROCESSING:
            self._processing[row.aid] = self._processing.get(row.aid, 0) + 1

    def _unindex(self, row: _Row) -> None:
        # Heap entries are not removed here: they go stale and are dropped lazily.
        status = row.status
        if status == _PENDING:
            w = row.started_at - row.started_at % WINDOW_MS
            left = self._pending_windows[w] - 1
            if left:
                self._pending_windows[w] = left
            else:
                del self._pending_windows[w]
        elif status != _PROCESSING:
            return
        key = (row.aid, row.type)
        rows = self._active[key]
        rows.remove(row)
        if not rows:
            del self._active[key]
        per_type = self._active_aids[row.type]
        n = per_type[row.aid] - 1
        if n:
            per_type[row.aid] = n
        else:
            del per_type[row.aid]
            self._mark_idle(row.aid, row.type)
        if status == _PROCESSING:
            n = self._processing[row.aid] - 1
            if n:
                self._processing[row.aid] = n
            else:
                del self._processing[row.aid]

    def _mark_idle(self, aid: int, type: str) -> None:
        if aid in self._songs:
            self._idle_songs[type].add(aid)
        elif aid in self._videos:
            self._idle_others[type].add(aid)

    def _live_pending(self, entry: tuple[Ms, int]) -> bool:
        row = self._rows.get(entry[1])
        return row is not None and row.status == _PENDING and row.started_at == entry[0]

    def _live_active(self, entry: tuple[Ms, int]) -> bool:
        row = self._rows.get(entry[1])
        return (
            row is not None and row.started_at == entry[0] and row.status in (_PENDING, _PROCESSING)
        )

    def _clean_top(
        self, heap: list[tuple[Ms, int]], live: Callable[[tuple[Ms, int]], bool]
    ) -> None:
        while heap and not live(heap[0]):
            heapq.heappop(heap)

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
        found: list[tuple[int, Ms, int]] = []
        for type in types:
            heap = self._pending[type]
            rank = _ORDER_RANK.get(type, 2) if order == "normal_first" else 0
            taken: list[tuple[Ms, int]] = []
            n = 0
            # Pop in time order up to to_ms, dropping stale entries; put live ones back after.
            while heap and heap[0][0] <= to_ms and n < limit:
                entry = heapq.heappop(heap)
                if not self._live_pending(entry):
                    continue
                taken.append(entry)
                if from_ms is None or entry[0] >= from_ms:
                    found.append((rank, entry[0], entry[1]))
                    n += 1
            for entry in taken:
                heapq.heappush(heap, entry)
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
                was = row.status
                self._unindex(row)
                row.status = status
                self._index(row, new_time=False, was=was)
        return before

    async def delete_overdue_schedules(self, before_ms: Ms) -> list[ScheduleRow]:
        heap = self._active_heap
        doomed: dict[int, _Row] = {}
        while heap and heap[0][0] < before_ms:
            entry = heapq.heappop(heap)
            if self._live_active(entry):
                doomed[entry[1]] = self._rows[entry[1]]
        out = []
        for row_id in sorted(doomed):
            row = doomed[row_id]
            out.append(row.freeze())
            self._unindex(row)
            del self._rows[row_id]
        return out

    async def pending_counts_by_window(self, from_ms: Ms, to_ms: Ms) -> dict[Ms, int]:
        return {w: n for w, n in sorted(self._pending_windows.items()) if from_ms <= w < to_ms}

    async def earliest_pending_ms(self, types: Sequence[str]) -> Ms | None:
        firsts = []
        for t in types:
            heap = self._pending[t]
            self._clean_top(heap, self._live_pending)
            if heap:
                firsts.append(heap[0][0])
        return min(firsts) if firsts else None

    async def earliest_active_ms(self) -> Ms | None:
        self._clean_top(self._active_heap, self._live_active)
        return self._active_heap[0][0] if self._active_heap else None

    async def aids_with_active_schedule(self, type: str) -> set[int]:
        return set(self._active_aids[type])

    async def songs_without_active_schedule(self, type: str) -> list[int]:
        return sorted(self._idle_songs[type])

    async def non_songs_without_active_schedule(self, type: str) -> list[int]:
        return sorted(self._idle_others[type])

    # -- SnapshotStore ------------------------------------------------------------------------
    async def add_video(self, aid: int, published_ms: Ms) -> None:
        if aid in self._videos:
            return
        self._videos[aid] = published_ms
        if aid not in self._songs:
            for t in _TYPES:
                if aid not in self._active_aids[t]:
                    self._idle_others[t].add(aid)

    async def add_song(self, aid: int, published_ms: Ms) -> bool:
        if aid in self._songs:
            return False
        self._songs[aid] = published_ms
        for t in _TYPES:
            self._idle_others[t].discard(aid)
            if aid not in self._active_aids[t]:
                self._idle_songs[t].add(aid)
        self._recheck_candidate(aid)
        return True

    async def load_catalog(
        self, aids: Sequence[int], published_ms: Sequence[Ms], is_song: Sequence[bool]
    ) -> None:
        for aid, pub, song in zip(aids, published_ms, is_song, strict=True):
            await self.add_video(aid, pub)
            if song:
                await self.add_song(aid, pub)

    async def load_snapshots(
        self, aids: Sequence[int], times_ms: Sequence[Ms], views: Sequence[int]
    ) -> int:
        stored = 0
        for aid, t, v in zip(aids, times_ms, views, strict=True):
            stored += await self.insert_snapshot(aid, t, v)
        return stored

    async def song_aids(self) -> list[int]:
        return sorted(self._songs)

    async def video_aids(self) -> list[int]:
        return sorted(self._videos)

    async def song_published_ms(self, aid: int) -> Ms | None:
        return self._songs.get(aid)

    async def video_status(self, aid: int) -> int:
        return self._status.get(aid, 0)

    async def set_video_status(self, aid: int, code: int) -> None:
        if aid in self._videos:
            if code:
                self._status[aid] = code
            else:
                self._status.pop(aid, None)

    async def insert_snapshot(self, aid: int, t_ms: Ms, views: int) -> bool:
        snaps = self._snaps.get(aid)
        if snaps is None:
            self._snaps[aid] = array("q", (t_ms, views))
        elif snaps[-2] < t_ms:  # the usual case: appended in time order
            snaps.append(t_ms)
            snaps.append(views)
        else:
            i = _last_at_or_before(snaps, t_ms)
            if i >= 0 and snaps[2 * i] == t_ms:
                return False
            snaps[2 * i + 2 : 2 * i + 2] = array("q", (t_ms, views))
            return True
        self._recheck_candidate(aid)
        return True

    async def latest_snapshot(self, aid: int) -> Snapshot | None:
        snaps = self._snaps.get(aid)
        return None if snaps is None else Snapshot(snaps[-2], snaps[-1])

    async def snapshot_before(self, aid: int, t_ms: Ms) -> Snapshot | None:
        snaps = self._snaps.get(aid)
        if snaps is None:
            return None
        i = _last_at_or_before(snaps, t_ms)
        return None if i < 0 else Snapshot(snaps[2 * i], snaps[2 * i + 1])

    async def closest_snapshot(self, aid: int, t_ms: Ms) -> Snapshot | None:
        snaps = self._snaps.get(aid)
        if snaps is None:
            return None
        i = _last_at_or_before(snaps, t_ms)  # latest at/before
        if i < 0:
            return Snapshot(snaps[0], snaps[1])
        if snaps[2 * i] == t_ms or 2 * i + 2 >= len(snaps):
            return Snapshot(snaps[2 * i], snaps[2 * i + 1])
        # A tie goes to the earlier row (what the deployed query returned, §19.7).
        k = i if t_ms - snaps[2 * i] <= snaps[2 * i + 2] - t_ms else i + 1
        return Snapshot(snaps[2 * k], snaps[2 * k + 1])

    async def closest_snapshots(self, aid: int, times_ms: Sequence[Ms]) -> list[Snapshot | None]:
        snaps = self._snaps.get(aid)
        if snaps is None:
            return [None] * len(times_ms)
        # One backward walk serves every target (they are a handful, mostly near the end of a
        # short list), instead of one binary search each.
        out: list[Snapshot | None] = [None] * len(times_ms)
        last = (len(snaps) >> 1) - 1
        j = last
        for k in sorted(range(len(times_ms)), key=lambda k: -times_ms[k]):
            t = times_ms[k]
            while j >= 0 and snaps[2 * j] > t:
                j -= 1
            if j < 0:
                i = 0
            elif snaps[2 * j] == t or j == last:
                i = j
            else:  # a tie goes to the earlier row (§19.7)
                i = j if t - snaps[2 * j] <= snaps[2 * j + 2] - t else j + 1
            out[k] = Snapshot(snaps[2 * i], snaps[2 * i + 1])
        return out

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
        if milestone_candidate(views, is_song, eta_h, False):
            self._candidates.add(aid)
            self._candidates_wide.add(aid)
            return
        self._candidates.discard(aid)
        if milestone_candidate(views, is_song, eta_h, True):
            self._candidates_wide.add(aid)
        else:
            self._candidates_wide.discard(aid)

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

    async def reserve(self, first_ms: Ms, step_ms: Ms, count: int, cap: int) -> Reserved:
        # The probe loop itself, on the dict: no round trips to save here.
        return reserve_in(self._h, Reserve(first_ms, step_ms, count, cap))

    async def get_all(self) -> dict[Ms, int]:
        return dict(sorted(self._h.items()))

    async def replace_all(self, counts: Mapping[Ms, int]) -> None:
        self._h = dict(counts)

    async def clear(self) -> None:
        self._h = {}


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
