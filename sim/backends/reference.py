"""The reference store: every port of :mod:`sim.ports` on plain dicts, sorted lists and ``bisect``.

What it is for: the default memory store (:mod:`sim.backends.memory`) is the *optimised* store,
a hand-tuned columnar database (open addressing in int64 vectors, packed heap keys, kept lookback
intervals, full-block skips) that mypyc compiles. A user who doubts one of its results reruns the
scenario here, on code that reads like the port docstrings::

    sim run SCENARIO --store reference --counter reference

and compares the ``event log sha256`` with the memory run's: it must be the same
(tests/backends/test_reference_store.py drives both stores with the same random operations and
compares every answer). The two choices are independent, as for the other backends, so a
difference can be pinned on the store or on the counter.

Rules of this file: every row lives in one dict; every index is a dict or a sorted list that
only :meth:`ReferenceStore._index` and :meth:`ReferenceStore._unindex` change; the rules with a
tie-break or a loop are the rule modules' own functions (:mod:`sim.cvsa.snapshots`,
:func:`sim.cvsa.milestones.milestone_candidate`, :func:`sim.cvsa.windows.reserve_in`). No speed
tricks, but for one: the milestone candidates are kept up to date on writes rather than found
by a scan of every video with a snapshot (200,000 in ``baseline``) every five minutes. Never
compiled (``sim._native.COMPILED_MODULES`` leaves it out): it runs as you read it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter

from sim.cvsa.milestones import milestone_candidate
from sim.cvsa.params import MilestoneLadder
from sim.cvsa.snapshots import find_closest_snapshot, find_snapshot_before
from sim.cvsa.ticks import bulk_tick_sort_key, in_bounds, single_tick_sort_key
from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType
from sim.cvsa.windows import Reserve, reserve_in
from sim.ports import ACTIVE_STATUSES, DueOrder, EtaInputs, EtaRow, Reserved, ScheduleRow, Snapshot
from sim.units import WINDOW_MS, Ms

PENDING, PROCESSING = ScheduleStatus.PENDING, ScheduleStatus.PROCESSING
STATUSES = tuple(s for s in ScheduleStatus if s is not ScheduleStatus.DELETED)
"""``snapshot_schedule.status`` values (reference §2.1): ``deleted`` is the log's word for a row
that is gone."""
DUE_ORDERS = ("started_at", "normal_first")

_due_time = itemgetter(0)  # of a (started_at_ms, id) index entry
_snapshot_time = attrgetter("created_at_ms")


def _check(what: str, value: object, allowed: Sequence[object]) -> None:
    if value not in allowed or not isinstance(value, type(allowed[0])):
        words = ", ".join(str(a) for a in allowed)
        raise ValueError(f"unknown {what} {value!r}: use one of {words}")


def _check_type(type: ScheduleType) -> None:
    _check("schedule type", type, tuple(ScheduleType))


def _remove_sorted(entries: list[tuple[Ms, int]], entry: tuple[Ms, int]) -> None:
    """Remove ``entry`` from the sorted list ``entries`` (it must be there)."""
    i = bisect_left(entries, entry)
    if i == len(entries) or entries[i] != entry:
        raise AssertionError(f"index entry {entry} missing: the reference store is inconsistent")
    del entries[i]


@dataclass
class _Video:
    """A ``bilibili_metadata`` row (reference §2.6)."""

    published_ms: Ms
    status: int = 0


class ReferenceStore:
    """``snapshot_schedule``, ``video_snapshot``, ``eta``, ``songs`` and ``bilibili_metadata``
    (reference §2.1-§2.7): the :class:`~sim.ports.ScheduleStore` and
    :class:`~sim.ports.SnapshotStore` ports."""

    def __init__(self) -> None:
        # -- snapshot_schedule (reference §2.1) and its indexes ------------------------------
        self._rows: dict[int, ScheduleRow] = {}
        """id -> row; cleanup deletes rows, nothing else does."""
        self._next_id = 1
        self._pending: dict[ScheduleType, list[tuple[Ms, int]]] = {t: [] for t in ScheduleType}
        """type -> ``(started_at_ms, id)`` of its pending rows, sorted (the due queries)."""
        self._processing: list[tuple[Ms, int]] = []
        """``(started_at_ms, id)`` of the processing rows, sorted (cleanup, §12)."""
        self._active: dict[ScheduleType, dict[int, set[int]]] = {t: {} for t in ScheduleType}
        """type -> aid -> ids of its pending and processing rows (an aid with none: absent)."""
        self._processing_by_aid: dict[int, set[int]] = {}
        """aid -> ids of its processing rows, any type (the single tick's skip, §7.2)."""
        self._pending_per_window: dict[Ms, int] = {}
        """5-minute window start -> pending rows due in it: the reference schema's
        ``started_at_5min_utc`` (the refresh's GROUP BY, §6.3)."""
        # -- the video tables (reference §2.2-§2.7) --------------------------------------------
        self._videos: dict[int, _Video] = {}
        self._songs: dict[int, Ms] = {}
        """aid -> ``songs.published_at``."""
        self._snapshots: dict[int, list[Snapshot]] = {}
        """aid -> its snapshots in ascending time (unique on (aid, time))."""
        self._eta: dict[int, EtaRow] = {}
        self._candidates: dict[bool, set[int]] = {False: set(), True: set()}
        """``wide`` -> the aids :meth:`milestone_candidates` returns: the predicate reads only a
        video's latest views, its song flag and its eta, so it is re-evaluated whenever one of
        them is written (:meth:`_recheck_candidate`)."""
        self._candidate_rule: tuple[float, MilestoneLadder] | None = None
        """Set C's threshold the candidates are kept for (None: not asked yet, none kept)."""

    # -- schedule indexes -----------------------------------------------------------------------
    def _index(self, row: ScheduleRow) -> None:
        """Add ``row`` to every index its status puts it in."""
        entry = (row.started_at_ms, row.id)
        if row.status is PENDING:
            insort(self._pending[row.type], entry)
            w = row.started_at_ms - row.started_at_ms % WINDOW_MS
            self._pending_per_window[w] = self._pending_per_window.get(w, 0) + 1
        elif row.status is PROCESSING:
            insort(self._processing, entry)
            self._processing_by_aid.setdefault(row.aid, set()).add(row.id)
        if row.status in ACTIVE_STATUSES:
            self._active[row.type].setdefault(row.aid, set()).add(row.id)

    def _unindex(self, row: ScheduleRow) -> None:
        """Undo :meth:`_index` of ``row`` (as it is stored now); empty entries go."""
        entry = (row.started_at_ms, row.id)
        if row.status is PENDING:
            _remove_sorted(self._pending[row.type], entry)
            w = row.started_at_ms - row.started_at_ms % WINDOW_MS
            self._pending_per_window[w] -= 1
            if self._pending_per_window[w] == 0:
                del self._pending_per_window[w]
        elif row.status is PROCESSING:
            _remove_sorted(self._processing, entry)
            self._processing_by_aid[row.aid].discard(row.id)
            if not self._processing_by_aid[row.aid]:
                del self._processing_by_aid[row.aid]
        if row.status in ACTIVE_STATUSES:
            ids = self._active[row.type][row.aid]
            ids.discard(row.id)
            if not ids:
                del self._active[row.type][row.aid]

    def _replace(self, old: ScheduleRow, new: ScheduleRow) -> None:
        self._unindex(old)
        self._rows[new.id] = new
        self._index(new)

    # -- ScheduleStore --------------------------------------------------------------------------
    async def insert_schedule(
        self, aid: int, type: ScheduleType, started_at_ms: Ms, created_at_ms: Ms
    ) -> int:
        _check_type(type)
        row = ScheduleRow(self._next_id, aid, type, PENDING, started_at_ms, created_at_ms)
        self._next_id += 1
        self._rows[row.id] = row
        self._index(row)
        return row.id

    async def get_schedule(self, schedule_id: int) -> ScheduleRow | None:
        return self._rows.get(schedule_id)

    async def has_active_schedule(self, aid: int, type: ScheduleType) -> bool:
        _check_type(type)
        return aid in self._active[type]

    async def active_schedules(self, aid: int, type: ScheduleType) -> list[ScheduleRow]:
        _check_type(type)
        return [self._rows[i] for i in sorted(self._active[type].get(aid, ()))]

    async def move_schedule(self, schedule_id: int, started_at_ms: Ms) -> ScheduleRow | None:
        before = self._rows.get(schedule_id)
        if before is not None:
            self._replace(before, before._replace(started_at_ms=started_at_ms))
        return before

    async def due_schedules(
        self,
        *,
        from_ms: Ms | None,
        to_ms: Ms,
        types: Sequence[ScheduleType],
        limit: int,
        order: DueOrder,
    ) -> list[ScheduleRow]:
        _check("due order", order, DUE_ORDERS)
        if limit < 0:
            raise ValueError(f"due_schedules: limit must be >= 0 (got {limit})")
        found: list[ScheduleRow] = []
        for type in dict.fromkeys(types):  # ``type IN (...)``: a type named twice counts once
            _check_type(type)
            entries = self._pending[type]
            lo = 0 if from_ms is None else bisect_left(entries, from_ms, key=_due_time)
            hi = bisect_right(entries, to_ms, key=_due_time)
            # The first ``limit`` rows of each type are enough for the first ``limit`` of all.
            found += [self._rows[i] for _, i in entries[lo : min(hi, lo + limit)]]
        # The bounds and the orders are the rule book's (sim.cvsa.ticks, reference §7.1, §8.1).
        assert all(in_bounds(r.started_at_ms, (from_ms, to_ms)) for r in found)
        if order == "normal_first":
            found.sort(key=lambda r: bulk_tick_sort_key(r.type, r.started_at_ms, r.id))
        else:
            found.sort(key=lambda r: single_tick_sort_key(r.started_at_ms, r.id))
        return found[:limit]

    async def has_processing_schedule(self, aid: int) -> bool:
        return aid in self._processing_by_aid

    async def set_schedule_status(
        self, ids: Sequence[int], status: ScheduleStatus
    ) -> list[ScheduleRow]:
        _check("schedule status", status, STATUSES)
        # SELECT ... FOR UPDATE, then UPDATE: every row as it was before the call, in the order
        # of ``ids`` (an id named twice comes back twice, both times as it was before).
        before = [self._rows[i] for i in ids if i in self._rows]
        for row in before:
            self._replace(self._rows[row.id], row._replace(status=status))
        return before

    async def delete_overdue_schedules(
        self, before_ms: Ms, kept_before_ms: Mapping[ScheduleType, Ms] | None = None
    ) -> list[ScheduleRow]:
        kept = kept_before_ms or {}
        overdue = [
            (t, i)
            for t, i in self._processing[: bisect_left(self._processing, before_ms, key=_due_time)]
            if self._rows[i].type is None or t < kept.get(self._rows[i].type, before_ms)
        ]
        for type_, entries in self._pending.items():
            bound = kept.get(type_, before_ms)
            overdue += entries[: bisect_left(entries, bound, key=_due_time)]
        gone = [self._rows[i] for i in sorted(i for _, i in overdue)]
        for row in gone:
            self._unindex(row)
            del self._rows[row.id]
        return gone

    async def pending_counts_by_window(
        self, from_ms: Ms, to_ms: Ms, window_ms: Ms
    ) -> dict[Ms, int]:
        if window_ms == WINDOW_MS:  # the indexed started_at_5min_utc
            counts = self._pending_per_window
        else:
            counts = {}
            for entries in self._pending.values():
                for t, _ in entries:
                    counts[t - t % window_ms] = counts.get(t - t % window_ms, 0) + 1
        return {w: n for w, n in sorted(counts.items()) if from_ms <= w < to_ms}

    async def earliest_pending_ms(self, types: Sequence[ScheduleType]) -> Ms | None:
        for type in types:
            _check_type(type)
        firsts = [self._pending[t][0][0] for t in types if self._pending[t]]
        return min(firsts, default=None)

    async def earliest_active_ms(self) -> Ms | None:
        firsts = [entries[0][0] for entries in self._pending.values() if entries]
        if self._processing:
            firsts.append(self._processing[0][0])
        return min(firsts, default=None)

    async def aids_with_active_schedule(self, type: ScheduleType) -> set[int]:
        _check_type(type)
        return set(self._active[type])

    async def songs_without_active_schedule(self, type: ScheduleType) -> list[int]:
        _check_type(type)
        active = self._active[type]
        return [aid for aid in sorted(self._songs) if aid not in active]

    async def non_songs_without_active_schedule(self, type: ScheduleType) -> list[int]:
        _check_type(type)
        active = self._active[type]
        return [a for a in sorted(self._videos) if a not in self._songs and a not in active]

    # -- SnapshotStore: the catalogue -----------------------------------------------------------
    async def add_video(self, aid: int, published_ms: Ms) -> None:
        if aid not in self._videos:
            self._videos[aid] = _Video(published_ms)

    async def add_song(self, aid: int, published_ms: Ms) -> bool:
        if aid in self._songs:
            return False
        # songs.published_at is the video's when the video is known, as the SQL store writes it
        # (sim.backends.sql: every caller passes the same value anyway).
        video = self._videos.get(aid)
        self._songs[aid] = published_ms if video is None else video.published_ms
        self._recheck_candidate(aid)
        return True

    async def load_catalog(
        self, aids: Sequence[int], published_ms: Sequence[Ms], is_song: Sequence[bool]
    ) -> None:
        for aid, published, song in zip(aids, published_ms, is_song, strict=True):
            await self.add_video(aid, published)
            if song:
                await self.add_song(aid, published)

    async def song_aids(self) -> list[int]:
        return sorted(self._songs)

    async def video_aids(self) -> list[int]:
        return sorted(self._videos)

    async def song_published_ms(self, aid: int) -> Ms | None:
        return self._songs.get(aid)

    async def video_status(self, aid: int) -> int:
        video = self._videos.get(aid)
        return 0 if video is None else video.status

    async def set_video_status(self, aid: int, code: int) -> None:
        video = self._videos.get(aid)
        if video is not None:  # an UPDATE of a missing row changes nothing
            video.status = code

    # -- SnapshotStore: snapshots ---------------------------------------------------------------
    async def insert_snapshot(self, aid: int, t_ms: Ms, views: int) -> bool:
        snapshots = self._snapshots.setdefault(aid, [])
        i = bisect_left(snapshots, t_ms, key=_snapshot_time)
        if i < len(snapshots) and snapshots[i].created_at_ms == t_ms:
            return False  # unique on (aid, t): a duplicate is not stored
        snapshots.insert(i, Snapshot(t_ms, views))
        self._recheck_candidate(aid)
        return True

    async def load_snapshots(
        self, aids: Sequence[int], times_ms: Sequence[Ms], views: Sequence[int]
    ) -> int:
        stored = 0
        for aid, t_ms, v in zip(aids, times_ms, views, strict=True):
            stored += await self.insert_snapshot(aid, t_ms, v)
        return stored

    async def latest_snapshot(self, aid: int) -> Snapshot | None:
        snapshots = self._snapshots.get(aid)
        return snapshots[-1] if snapshots else None

    async def closest_snapshot(self, aid: int, t_ms: Ms) -> Snapshot | None:
        return find_closest_snapshot(self._snapshots.get(aid, []), t_ms)

    async def snapshot_before(self, aid: int, t_ms: Ms) -> Snapshot | None:
        return find_snapshot_before(self._snapshots.get(aid, []), t_ms)

    async def lookback_snapshots(
        self, aid: int, now_ms: Ms, backs_ms: Sequence[Ms]
    ) -> list[Snapshot | None]:
        snapshots = self._snapshots.get(aid, [])
        return [find_closest_snapshot(snapshots, now_ms - back) for back in backs_ms]

    async def eta_inputs(
        self, aids: Sequence[int], now_ms: Ms, backs_ms: Sequence[Ms], reader: int = 0
    ) -> EtaInputs:
        # Literally the per-aid calls back to back, as the port says (reference §11.4).
        inputs = EtaInputs([], [], [], list(aids), 0)
        for aid in aids:
            latest = await self.latest_snapshot(aid)
            inputs.latest_ms.append(None if latest is None else latest.created_at_ms)
            inputs.latest_views.append(0 if latest is None else latest.views)
            inputs.lookbacks.append(
                [] if latest is None else await self.lookback_snapshots(aid, now_ms, backs_ms)
            )
        return inputs

    async def settle_eta_inputs(self, aids: Sequence[int], now_ms: Ms, reader: int) -> None:
        """The plain answer: no marks, every aid answered (``SettledEtaInputs``)."""

    # -- SnapshotStore: eta and milestone candidates --------------------------------------------
    async def upsert_eta(self, row: EtaRow) -> None:
        self._eta[row.aid] = EtaRow(
            row.aid, float(row.eta_h), float(row.speed), row.current_views, row.updated_ms
        )
        self._recheck_candidate(row.aid)

    async def get_eta(self, aid: int) -> EtaRow | None:
        return self._eta.get(aid)

    def _recheck_candidate(self, aid: int) -> None:
        """Re-evaluate ``getVideosNearMilestone``'s predicate for ``aid`` (reference §11.1): its
        rows are ``latest_video_snapshot`` joined with ``songs`` and ``eta``, so a video without
        snapshots is never a candidate."""
        rule = self._candidate_rule
        if rule is None:  # nobody asked yet: nothing kept
            return
        below, ladder = rule
        latest = self._snapshots[aid][-1] if self._snapshots.get(aid) else None
        eta = None if aid not in self._eta else self._eta[aid].eta_h
        for wide in (False, True):
            if latest is not None and milestone_candidate(
                latest.views, aid in self._songs, eta, wide, below, ladder
            ):
                self._candidates[wide].add(aid)
            else:
                self._candidates[wide].discard(aid)

    async def milestone_candidates(
        self, wide: bool, eta_below_h: float, ladder: MilestoneLadder
    ) -> list[int]:
        if (eta_below_h, ladder) != self._candidate_rule:  # a first ask or another: rebuild
            self._candidate_rule = (eta_below_h, ladder)
            self._candidates = {False: set(), True: set()}
            for aid in self._snapshots:
                self._recheck_candidate(aid)
        return sorted(self._candidates[wide])


class ReferenceWindowCounter:
    """The Redis hash ``cvsa:snapshot_window_counts`` as a dict (reference §6; §19.3: fields
    probed to zero stay) and the dispatcher locks (§2.8) as a dict of expiry instants: the
    :class:`~sim.ports.WindowCounter` and :class:`~sim.ports.LockManager` ports."""

    def __init__(self) -> None:
        self._counts: dict[Ms, int] = {}
        """window start -> count; an absent field reads as 0."""
        self._locks: dict[str, Ms] = {}
        """lock name -> the instant it expires (sim.ports.LockManager: the run's time)."""

    async def incr(self, window_ms: Ms, delta: int) -> int:
        self._counts[window_ms] = self._counts.get(window_ms, 0) + delta
        return self._counts[window_ms]

    async def reserve(self, first_ms: Ms, step_ms: Ms, count: int, cap: int) -> Reserved:
        # The deployed probe-by-probe loop of adjustSnapshotTime (§6.2), on this dict.
        return reserve_in(self._counts, Reserve(first_ms, step_ms, count, cap))

    async def get_all(self) -> dict[Ms, int]:
        return dict(sorted(self._counts.items()))

    async def replace_all(self, counts: Mapping[Ms, int]) -> None:
        self._counts = dict(counts)

    async def clear(self) -> None:
        self._counts = {}

    async def is_locked(self, name: str, now_ms: Ms) -> bool:
        expires_ms = self._locks.get(name)
        return expires_ms is not None and now_ms < expires_ms

    async def acquire_lock(self, name: str, now_ms: Ms, ttl_ms: Ms) -> bool:
        if await self.is_locked(name, now_ms):
            return False  # SET NX
        self._locks[name] = now_ms + ttl_ms
        return True

    async def release_lock(self, name: str) -> None:
        self._locks.pop(name, None)


__all__ = ["ReferenceStore", "ReferenceWindowCounter"]
