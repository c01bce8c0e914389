"""``snapshot_schedule`` in memory: columnar rows and the indexes the deployed queries use.

Rows live in parallel columns indexed by id (:mod:`~sim.backends.memory.columns`, read by
compiled code without boxing; 14 bytes a row: the tenth-scale month writes 1.46M rows, and
they are never deleted except by cleanup, as in the deployed table).
A row refers to its video by the video's slot in :class:`~sim.backends.memory.videos.VideoTables`
(4 bytes instead of an 8-byte aid). Indexes (reference §2.1):

* per type, a heap of the pending rows keyed by ``started_at`` then id
  (:class:`~sim.backends.memory.keyheap.KeyHeap`);
  entries are deleted lazily: an entry is live while its row is still pending at that time;
* a heap of the processing rows (cleanup deletes pending *and* processing rows);
* per type, the active (pending or processing) row of each video, an int32 column by slot (the
  duplicate check; a dict entry per video would cost ~100 bytes, and at full scale two million
  videos have an active archive row); a video with several (forced) rows keeps them aside;
* per video, how many of its rows are processing (the single tick's skip, §7.2);
* pending rows per 5-minute window (the window-count refresh's GROUP BY, §6.3; another window
  length is counted from the heaps).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from sim.backends.memory.columns import (
    I32Column,
    I64Column,
    PagedI32Column,
    TimeColumn,
    U8Column,
)
from sim.backends.memory.keyheap import KeyHeap
from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType
from sim.ports import DueOrder, ScheduleRow, new_record
from sim.units import WINDOW_MS, Ms

# The one-byte encodings of the type and status columns: a word's position in its enum
# (sim.cvsa.vocabulary), as in the event log.
TYPES: Final = tuple(ScheduleType)
STATUSES: Final = tuple(ScheduleStatus)
TYPE_CODE: Final = {t: i for i, t in enumerate(TYPES)}
STATUS_CODE: Final = {s: i for i, s in enumerate(STATUSES)}
PENDING: Final = STATUS_CODE[ScheduleStatus.PENDING]
PROCESSING: Final = STATUS_CODE[ScheduleStatus.PROCESSING]
DELETED: Final = STATUS_CODE[ScheduleStatus.DELETED]
ID_BITS: Final = 32
"""The due walk orders heap entries as one int, ``started_at << 32 | id``."""
_ID_MASK: Final = (1 << ID_BITS) - 1
POS_BITS: Final = 32
"""``due_schedules`` walks a heap with entries ``key << 32 | position``."""
_POS_MASK: Final = (1 << POS_BITS) - 1
_ORDER_RANK: Final = {ScheduleType.NORMAL: 0, ScheduleType.ARCHIVE: 1}

ActiveHook = Callable[[int, int, bool], None]
"""Called with (slot, type code, now_active) when a video gains its first or loses its last
active row of a type."""
SEVERAL: Final = -1
"""In an active column: the video has several active rows of the type (see ``_several``)."""


def _entry(heap: KeyHeap, pos: int) -> int:
    """The heap entry at ``pos`` as one int, ``started_at << 32 | id`` (ordered alike)."""
    return heap.t_at(pos) << ID_BITS | heap.id_at(pos)


class ScheduleTable:
    """The schedule half of :class:`~sim.backends.memory.MemoryStore`."""

    def __init__(
        self,
        on_active_change: ActiveHook,
        slot_of: Callable[[int], int],
        slot_get: Callable[[int], int],
        aids: I64Column,
    ) -> None:
        """``slot_of``/``slot_get``: the video tables' aid -> slot map (creating / looking up,
        -1 for none);
        ``aids``: their slot -> aid column (shared, it grows as slots are added)."""
        self._slot_of_aid = slot_of
        self._slot_get = slot_get
        self._slot_aid = aids
        self._row_slot = I32Column()
        self._type = U8Column()
        self._status = U8Column()
        self._started = TimeColumn()
        self._created = TimeColumn()
        for column in (self._row_slot, self._type):
            column.append(0)  # index 0 unused: ids count from 1
        self._started.pad()
        self._created.pad()
        self._status.append(DELETED)
        self._pending: list[KeyHeap] = [KeyHeap() for _ in TYPES]
        self._proc_heap = KeyHeap()
        self._active: list[PagedI32Column] = [PagedI32Column() for _ in TYPES]
        """Per type, by slot: 0 (no active row), the active row's id, or ``SEVERAL``."""
        self._several: list[dict[int, list[int]]] = [{} for _ in TYPES]
        """Per type: slot -> its active row ids, for the slots marked ``SEVERAL``."""
        self._proc_count: dict[int, int] = {}
        """slot -> how many of its rows are processing."""
        self._windows: dict[Ms, int] = {}
        self._on_active_change = on_active_change

    def _row(self, i: int) -> ScheduleRow:
        return new_record(
            ScheduleRow,
            (
                i,
                self._slot_aid.get(self._row_slot.get(i)),
                TYPES[self._type.get(i)],
                STATUSES[self._status.get(i)],
                self._started.get(i),
                self._created.get(i),
            ),
        )

    def _active_of(self, aid: int, type_code: int) -> int:
        """The active column's value for ``aid`` (0 when the aid has no slot yet)."""
        return self._active_at(self._slot_get(aid), type_code)

    def _active_at(self, s: int, type_code: int) -> int:
        """The active column's value for slot ``s`` (0 for -1, no slot)."""
        column = self._active[type_code]
        return column.get(s) if 0 <= s < column.n else 0

    def _exists(self, i: int) -> bool:
        return 0 < i < self._status.n and self._status.get(i) != DELETED

    # -- index maintenance ------------------------------------------------------------------
    def _enter(self, i: int, status: int, new_time: bool) -> None:
        """Index row ``i`` under ``status`` (its status column is already set)."""
        t, started = self._type.get(i), self._started.get(i)
        if status == PENDING:
            self._pending[t].push(started, i)
            w = started - started % WINDOW_MS
            self._windows[w] = self._windows.get(w, 0) + 1
        elif status == PROCESSING:
            self._proc_heap.push(started, i)
            s = self._row_slot.get(i)
            self._proc_count[s] = self._proc_count.get(s, 0) + 1
        if status in (PENDING, PROCESSING) and new_time:
            self._add_active(i)

    def _leave(self, i: int, status: int, keep_active: bool) -> None:
        """Remove row ``i`` from the indexes of ``status`` (heap entries go stale by themselves)."""
        if status == PENDING:
            started = self._started.get(i)
            w = started - started % WINDOW_MS
            left = self._windows[w] - 1
            if left:
                self._windows[w] = left
            else:
                del self._windows[w]
        elif status == PROCESSING:
            s = self._row_slot.get(i)
            n = self._proc_count[s] - 1
            if n:
                self._proc_count[s] = n
            else:
                del self._proc_count[s]
        if status in (PENDING, PROCESSING) and not keep_active:
            self._drop_active(i)

    def _add_active(self, i: int) -> None:
        t, s = self._type.get(i), self._row_slot.get(i)
        column = self._active[t]
        if s >= column.n:  # slots added since: grow the column to every slot
            column.grow_to(self._slot_aid.n)
        have = column.get(s)
        if have == 0:
            column.set(s, i)
            self._on_active_change(s, t, True)
        elif have == SEVERAL:
            self._several[t][s].append(i)
        else:
            column.set(s, SEVERAL)
            self._several[t][s] = [have, i]

    def _drop_active(self, i: int) -> None:
        t, s = self._type.get(i), self._row_slot.get(i)
        column = self._active[t]
        if column.get(s) == SEVERAL:
            ids = self._several[t][s]
            ids.remove(i)
            if len(ids) == 1:
                column.set(s, ids[0])
                del self._several[t][s]
        else:
            column.set(s, 0)
            self._on_active_change(s, t, False)

    def _set(self, i: int, status: int) -> None:
        old = self._status.get(i)
        if old == status:
            return
        active = (PENDING, PROCESSING)
        both_active = old in active and status in active
        self._leave(i, old, keep_active=both_active)
        self._status.set(i, status)
        self._enter(i, status, new_time=not both_active)

    # -- ScheduleStore ------------------------------------------------------------------------
    async def insert_schedule(
        self, aid: int, type: ScheduleType, started_at_ms: Ms, created_at_ms: Ms
    ) -> int:
        i = self._status.n
        self._row_slot.append(self._slot_of_aid(aid))
        self._type.append(TYPE_CODE[type])
        self._status.append(PENDING)
        self._started.append(started_at_ms)
        self._created.append(created_at_ms)
        self._enter(i, PENDING, new_time=True)
        return i

    async def get_schedule(self, schedule_id: int) -> ScheduleRow | None:
        return self._row(schedule_id) if self._exists(schedule_id) else None

    async def has_active_schedule(self, aid: int, type: ScheduleType) -> bool:
        return self._active_of(aid, TYPE_CODE[type]) != 0

    async def active_schedules(self, aid: int, type: ScheduleType) -> list[ScheduleRow]:
        t = TYPE_CODE[type]
        have = self._active_of(aid, t)
        if have == 0:
            return []
        ids = [have] if have != SEVERAL else sorted(self._several[t][self._slot_of_aid(aid)])
        return [self._row(i) for i in ids]

    async def move_schedule(self, schedule_id: int, started_at_ms: Ms) -> ScheduleRow | None:
        if not self._exists(schedule_id):
            return None
        before = self._row(schedule_id)
        status = self._status.get(schedule_id)
        self._leave(schedule_id, status, keep_active=True)
        self._started.set(schedule_id, started_at_ms)
        self._enter(schedule_id, status, new_time=False)
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
        found: list[tuple[int, int]] = []
        lo = None if from_ms is None else from_ms << ID_BITS
        for type in dict.fromkeys(types):  # ``type IN (...)``: a type named twice counts once
            heap = self._pending[TYPE_CODE[type]]
            rank = _ORDER_RANK.get(type, 2) if order == "normal_first" else 0
            # Stale entries at the top go for good; any further down are walked past, and go
            # once they reach the top (cleanup pops everything two minutes old, §12).
            while heap.n and heap.t_at(0) <= to_ms and not self._live_at(heap, 0, PENDING):
                heap.pop()
            n = 0
            if heap.n and heap.t_at(0) <= to_ms:
                # A walk in key order that leaves the heap as it is: the positions to visit
                # wait in a small heap of their own, keyed by their entry (no child is below
                # its parent), so k entries cost k steps on a heap of about k instead of k pops
                # and k pushes on a heap of millions.
                # A row moved to its own time, or set pending again, has two equal entries:
                # they come out one after the other, and the second is skipped.
                size, last = heap.n, -1
                frontier = [_entry(heap, 0) << POS_BITS]
                while frontier and n < limit:
                    top = heapq.heappop(frontier)
                    pos, key = top & _POS_MASK, top >> POS_BITS
                    if key != last and self._live(key, PENDING) and (lo is None or key >= lo):
                        found.append((rank, key))
                        n += 1
                    last = key
                    child = 2 * pos + 1
                    if child < size and heap.t_at(child) <= to_ms:
                        heapq.heappush(frontier, _entry(heap, child) << POS_BITS | child)
                    child += 1
                    if child < size and heap.t_at(child) <= to_ms:
                        heapq.heappush(frontier, _entry(heap, child) << POS_BITS | child)
        found.sort()
        return [self._row(key & _ID_MASK) for _, key in found[:limit]]

    def _live(self, key: int, status: int) -> bool:
        i = key & _ID_MASK
        return self._status.get(i) == status and self._started.get(i) == key >> ID_BITS

    def _live_at(self, heap: KeyHeap, pos: int, status: int) -> bool:
        """Whether the heap entry at ``pos`` is its row's entry under ``status``."""
        i = heap.id_at(pos)
        return self._status.get(i) == status and self._started.get(i) == heap.t_at(pos)

    async def has_processing_schedule(self, aid: int) -> bool:
        return self._slot_get(aid) in self._proc_count

    async def set_schedule_status(
        self, ids: Sequence[int], status: ScheduleStatus
    ) -> list[ScheduleRow]:
        code = STATUS_CODE[status]
        # Every row as it was before the UPDATE, an id named twice included.
        before = [self._row(i) for i in ids if self._exists(i)]
        for row in before:
            self._set(row.id, code)
        return before

    async def delete_overdue_schedules(
        self, before_ms: Ms, kept_before_ms: Mapping[ScheduleType, Ms] | None = None
    ) -> list[ScheduleRow]:
        doomed: set[int] = set()
        kept = {TYPE_CODE[t]: bound for t, bound in (kept_before_ms or {}).items()}
        for code, heap in enumerate(self._pending):
            bound = kept.get(code, before_ms)
            while heap.n and heap.t_at(0) < bound:
                if self._live_at(heap, 0, PENDING):
                    doomed.add(heap.id_at(0))
                heap.pop()
        heap, survivors = self._proc_heap, []
        while heap.n and heap.t_at(0) < before_ms:
            t, i = heap.t_at(0), heap.id_at(0)
            if self._live_at(heap, 0, PROCESSING):
                if t < kept.get(self._type.get(i), before_ms):
                    doomed.add(i)
                else:  # a kept type's row, not yet past its own bound
                    survivors.append((t, i))
            heap.pop()
        for t, i in survivors:
            heap.push(t, i)
        out = []
        for i in sorted(doomed):
            out.append(self._row(i))
            self._leave(i, self._status.get(i), keep_active=False)
            self._status.set(i, DELETED)
        return out

    async def pending_counts_by_window(
        self, from_ms: Ms, to_ms: Ms, window_ms: Ms
    ) -> dict[Ms, int]:
        if window_ms == WINDOW_MS:  # the length the index keeps
            return {w: n for w, n in sorted(self._windows.items()) if from_ms <= w < to_ms}
        counts: dict[Ms, int] = {}
        seen: set[int] = set()  # a row moved to its own time has two live entries
        for heap in self._pending:
            for pos in range(heap.n):
                t, i = heap.t_at(pos), heap.id_at(pos)
                w = t - t % window_ms
                if from_ms <= w < to_ms and i not in seen and self._live_at(heap, pos, PENDING):
                    seen.add(i)
                    counts[w] = counts.get(w, 0) + 1
        return dict(sorted(counts.items()))

    def _earliest(self, heap: KeyHeap, status: int) -> Ms | None:
        while heap.n and not self._live_at(heap, 0, status):
            heap.pop()
        return heap.t_at(0) if heap.n else None

    async def earliest_pending_ms(self, types: Sequence[ScheduleType]) -> Ms | None:
        # Every idle hint of the ticks asks this (engine elision): a running minimum, no lists.
        first: Ms | None = None
        for t in types:
            f = self._earliest(self._pending[TYPE_CODE[t]], PENDING)
            if f is not None and (first is None or f < first):
                first = f
        return first

    async def earliest_active_ms(self) -> Ms | None:
        firsts = [self._earliest(h, PENDING) for h in self._pending]
        firsts.append(self._earliest(self._proc_heap, PROCESSING))
        present = [f for f in firsts if f is not None]
        return min(present) if present else None

    async def aids_with_active_schedule(self, type: ScheduleType) -> set[int]:
        column, aids = self._active[TYPE_CODE[type]], self._slot_aid
        return {aids.get(s) for s in range(column.n) if column.get(s)}
