"""Invariants 3-5: one active row per (video, type), single-path processing, lost schedules
(the schedule lifecycle, tracked per row id)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from sim.events import cvsa_kinds as K
from sim.events.engine_kinds import JobAdded, JobFinished
from sim.events.log import Chunk
from sim.metrics.invariants.coldmap import ColdMap
from sim.metrics.invariants.common import (
    _BILI_STATUS,
    _CREATED,
    _PENDING,
    _PROCESSING,
    _ROW_GONE,
    _TYPES,
    SINGLE_PATH_JOB,
    _col,
    _Violations,
)
from sim.units import Ms

_F_PROCESSING = 1
_F_SNAPSHOT = 2  # a SnapshotTaken carried its id
_F_REVIVED = 4  # a stray status change revived it from a final status
_F_BULK = 8  # in an unfinished bulk job that did not mark it processing
_F_DISPATCHED = 16  # in an unfinished job
_SHIFT = 5
_FLAGS = (1 << _SHIFT) - 1

MultiMap = dict[int, "int | list[int]"]


def _ids(cur: int | list[int], shift: int) -> list[int]:
    """The ids held by one entry of a :data:`MultiMap` (values ``id << shift | flags``)."""
    if isinstance(cur, list):
        return sorted(v >> shift for v in cur)
    return [cur >> shift]


def _mm_find(d: MultiMap, key: int, ident: int, shift: int) -> int | None:
    """The value stored for ``ident`` under ``key``, or None."""
    cur = d.get(key)
    if cur is None:
        return None
    if isinstance(cur, list):
        for v in cur:
            if v >> shift == ident:
                return v
        return None
    return cur if cur >> shift == ident else None


def _mm_put(d: MultiMap, key: int, value: int, shift: int) -> None:
    """Store ``value`` under ``key``, replacing the value of the same id if any."""
    cur = d.get(key)
    if cur is None:
        d[key] = value
        return
    ident = value >> shift
    if isinstance(cur, list):
        for i, v in enumerate(cur):
            if v >> shift == ident:
                cur[i] = value
                return
        cur.append(value)
    elif cur >> shift == ident:
        d[key] = value
    else:
        d[key] = [cur, value]


def _mm_pop(d: MultiMap, key: int, ident: int, shift: int) -> int | None:
    """Remove and return the value of ``ident`` under ``key`` (None if absent)."""
    cur = d.get(key)
    if cur is None:
        return None
    if isinstance(cur, list):
        for i, v in enumerate(cur):
            if v >> shift == ident:
                del cur[i]
                if len(cur) == 1:
                    d[key] = cur[0]
                return v
        return None
    if cur >> shift != ident:
        return None
    del d[key]
    return cur


# Kinds of the ordered pass, by position, and the columns each handler reads.
_LIFECYCLE_KINDS: tuple[type, ...] = (
    K.ScheduleCreated,
    K.ScheduleDispatched,
    K.ScheduleStarted,
    K.ScheduleSkipped,
    K.StrayStatusChange,
    K.ScheduleFinished,
    K.ScheduleDeleted,
    K.SnapshotTaken,
    JobAdded,
    JobFinished,
)
(
    _K_CREATED,
    _K_DISPATCHED,
    _K_STARTED,
    _K_SKIPPED,
    _K_STRAY,
    _K_FINISHED,
    _K_DELETED,
    _K_TAKEN,
    _K_JOB_ADDED,
    _K_JOB_FINISHED,
) = range(len(_LIFECYCLE_KINDS))

_ROW = ("t_ms", "schedule", "aid", "type")
_PASS_FIELDS: tuple[tuple[str, ...], ...] = (
    (),  # created: read whole (see LifecycleInvariants.feed)
    (*_ROW, "job"),  # dispatched
    ("schedule", "aid", "type", "job"),  # started
    (*_ROW, "reason"),  # skipped
    (*_ROW, "from_status", "to_status"),  # stray
    ("schedule", "aid", "type"),  # finished
    (*_ROW, "due_ms", "status"),  # deleted
    ("schedule", "aid", "type"),  # taken
    ("job",),  # job added
    ("job",),  # job finished
)
_PASS_COLUMNS = tuple(
    [_col(kind, f) for f in fields]
    for kind, fields in zip(_LIFECYCLE_KINDS, _PASS_FIELDS, strict=True)
)
_KEY_COLUMNS = tuple(
    (_col(kind, "aid"), _col(kind, "type")) for kind in _LIFECYCLE_KINDS[: _K_TAKEN + 1]
)
_TAKEN_SCHEDULE = _col(K.SnapshotTaken, "schedule")
_JOB_NAME = _col(JobAdded, "name")
_JOB = _col(JobFinished, "job")


def _row_keys(tables: Sequence[npt.NDArray[np.int64]]) -> npt.NDArray[np.int64]:
    """The ``aid * 4 + type`` of every row event of one chunk (with repeats)."""
    return np.concatenate(
        [tables[k][:, a] << 2 | tables[k][:, t] for k, (a, t) in enumerate(_KEY_COLUMNS)]
    )


class LifecycleInvariants:
    """``invariants.one_active_per_type.*``, ``invariants.single_path_processing.*`` and
    ``invariants.lost_schedules.*``: one ordered pass over the row lifecycle (module docstring).

    ``bulk_marks_processing``: the bulk tick sets its rows processing (design); false when it
    passes aids as schedule ids (switch ``bulk_aids_as_ids_bug``, cvsa-2026, §8.3).
    ``warm_rows``: live rows kept in a dict between chunks before the quiet ones are packed into
    arrays (:class:`~sim.metrics.invariants.coldmap.ColdMap`); only memory depends on it.
    """

    def __init__(self, bulk_marks_processing: bool, *, warm_rows: int = 1 << 18) -> None:
        self.bulk_marks_processing = bulk_marks_processing
        self.one_active = _Violations("one_active_per_type", counts_checked=True)
        self.single_path = _Violations("single_path_processing", counts_checked=True)
        self.lost = _Violations("lost_schedules", counts_checked=True)
        self.forced_parallel = 0
        self.unmarked_bulk_overlap = 0
        self.redispatched = 0
        self.stray_deleted = 0
        self.unlogged = 0
        self.lost_by_type: Counter[str] = Counter()
        self._rows: ColdMap[list[int]] = ColdMap(warm_rows)
        self.live: MultiMap = self._rows.hot
        """aid * 4 + type -> its live (pending or processing) rows, ``schedule << 5 | flags``:
        the entries of the keys in the chunk being fed; the rest wait in ``_rows``' arrays."""
        self.processing: MultiMap = {}
        """aid -> the schedule ids of its processing rows."""
        self.bulk_rows: dict[int, int] = {}
        """aid -> rows of it in unfinished bulk jobs that left them pending."""
        self.single_jobs: set[int] = set()
        """``snapshotVideo`` jobs added and not finished."""
        self.job_rows: dict[int, list[tuple[int, int]]] = {}
        """Running job -> the (aid * 4 + type, schedule) of the rows it took up."""
        self.in_jobs: dict[int, int] = {}
        """Row -> how many running jobs took it up."""
        self.deferred: dict[int, dict[str, Any]] = {}
        """Rows deleted without a snapshot while a job that took them up still runs."""
        self._single_name = -1

    def active_rows(self) -> dict[tuple[int, str], list[int]]:
        """The rows pending or processing so far, as rebuilt from the log: (aid, type) -> ids."""
        return {
            (key >> 2, _TYPES[key & 3]): _ids(cur, _SHIFT)
            for key, cur in sorted(self._rows.items())
        }

    def processing_rows(self) -> dict[int, list[int]]:
        """The rows processing so far: aid -> ids."""
        return {aid: _ids(cur, 0) for aid, cur in sorted(self.processing.items())}

    # -- the pass ------------------------------------------------------------------------------
    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        if self._single_name < 0 and SINGLE_PATH_JOB in names:
            self._single_name = list(names).index(SINGLE_PATH_JOB)
        tables: list[npt.NDArray[np.int64]] = []
        for k, record_type in enumerate(_LIFECYCLE_KINDS):
            table = chunk.table(record_type)
            if k == _K_TAKEN:
                table = table[table[:, _TAKEN_SCHEDULE] >= 0]  # snapshots of a schedule only
            elif k == _K_JOB_ADDED:
                table = table[table[:, _JOB_NAME] == self._single_name]
            tables.append(table)
        present = [k for k, table in enumerate(tables) if table.shape[0]]
        if not present:
            return
        self.one_active.checked += tables[_K_CREATED].shape[0]
        # Events in log order, as runs of one kind (the dispatchers write long runs of
        # creations); within a kind the rows are already in log order.
        kinds = np.concatenate([np.full(tables[k].shape[0], k) for k in present])
        kinds = kinds[np.argsort(np.concatenate([tables[k][:, 0] for k in present]), kind="stable")]
        cut = np.flatnonzero(np.diff(kinds)) + 1
        starts, ends = np.concatenate(([0], cut)), np.concatenate((cut, [kinds.size]))
        self._rows.warm(_row_keys(tables))
        self._pass(kinds, starts, ends, tables)
        self._rows.cool()

    def _pass(
        self,
        kinds: npt.NDArray[np.int64],
        starts: npt.NDArray[np.int64],
        ends: npt.NDArray[np.int64],
        tables: list[npt.NDArray[np.int64]],
    ) -> None:
        """The ordered pass over one chunk: runs of one kind, ``starts[i]:ends[i]``."""
        rows = [
            table[:, _PASS_COLUMNS[k]].tolist() if k != _K_CREATED else []
            for k, table in enumerate(tables)
        ]
        created = tables[_K_CREATED]
        if created.shape[0]:  # creations need only their key and packed value, except rarely
            c = _CREATED
            keys = ((created[:, c["aid"]] << 2) | created[:, c["type"]]).tolist()
            packed = (created[:, c["schedule"]] << _SHIFT).tolist()
        live = self.live
        cursor = [0] * len(_LIFECYCLE_KINDS)
        for k, lo, hi in zip(kinds[starts].tolist(), starts.tolist(), ends.tolist(), strict=True):
            first = cursor[k]
            last = first + hi - lo
            cursor[k] = last
            if k == _K_CREATED:
                for i in range(first, last):
                    key = keys[i]
                    if key in live:  # rare: another row of the (aid, type) is active
                        self._created_next_to(created[i].tolist(), key)
                    else:
                        live[key] = packed[i]
                continue
            for r in rows[k][first:last]:
                if k == _K_DISPATCHED:
                    self._dispatched(*r)
                elif k == _K_STARTED:
                    s, aid, typ, job = r
                    if _mm_find(live, aid << 2 | typ, s, _SHIFT) is not None:
                        self.job_rows.setdefault(job, []).append((aid << 2 | typ, s))
                        self.in_jobs[s] = self.in_jobs.get(s, 0) + 1
                elif k == _K_SKIPPED:
                    t, s, aid, typ, reason = r
                    if reason != _ROW_GONE and _mm_find(live, aid << 2 | typ, s, _SHIFT) is None:
                        self._adopt(t, s, aid, typ, processing=reason == _BILI_STATUS)
                elif k == _K_STRAY:
                    self._stray(*r)
                elif k == _K_FINISHED:
                    s, aid, typ = r
                    v = _mm_pop(live, aid << 2 | typ, s, _SHIFT)
                    if v is not None:
                        self._release(s, aid, v)
                elif k == _K_DELETED:
                    self._deleted(*r)
                elif k == _K_TAKEN:
                    s, aid, typ = r
                    v = _mm_find(live, aid << 2 | typ, s, _SHIFT)
                    if v is not None:
                        _mm_put(live, aid << 2 | typ, v | _F_SNAPSHOT, _SHIFT)
                    else:
                        self.deferred.pop(s, None)
                elif k == _K_JOB_ADDED:
                    self.single_jobs.add(r[0])
                else:
                    self._job_finished(r[0])

    def _created_next_to(self, row: list[int], key: int) -> None:
        """A creation while another row of its (aid, type) is active."""
        c = _CREATED
        s = row[c["schedule"]]
        if row[c["forced"]]:
            self.forced_parallel += 1
        else:
            self._check_active(row[c["t_ms"]], s, row[c["aid"]], row[c["type"]], "created")
        _mm_put(self.live, key, s << _SHIFT, _SHIFT)

    def _check_active(self, t: Ms, s: int, aid: int, typ: int, cause: str) -> None:
        """A row of (aid, type) became active: a violation if another one is."""
        cur = self.live.get(aid << 2 | typ)
        others = [] if cur is None else [i for i in _ids(cur, _SHIFT) if i != s]
        if others:
            self.one_active.add(
                {
                    "schedule": s,
                    "aid": aid,
                    "type": _TYPES[typ],
                    "t_ms": t,
                    "active": others[:5],
                    "cause": cause,
                }
            )

    def _adopt(self, t: Ms, s: int, aid: int, typ: int, *, processing: bool) -> int:
        """Start tracking a row that no ``ScheduleCreated`` announced; returns its flags."""
        self.unlogged += 1
        self._check_active(t, s, aid, typ, "unlogged")
        flags = 0
        if processing:
            flags = _F_PROCESSING
            _mm_put(self.processing, aid, s, 0)
        _mm_put(self.live, aid << 2 | typ, s << _SHIFT | flags, _SHIFT)
        return flags

    def _dispatched(self, t: Ms, s: int, aid: int, typ: int, job: int) -> None:
        key = aid << 2 | typ
        v = _mm_find(self.live, key, s, _SHIFT)
        flags = self._adopt(t, s, aid, typ, processing=False) if v is None else v & _FLAGS
        if flags & _F_DISPATCHED:
            self.redispatched += 1
        flags |= _F_DISPATCHED
        if job in self.single_jobs:
            self.single_path.checked += 1
            cur = self.processing.get(aid)
            busy = [] if cur is None else [i for i in _ids(cur, 0) if i != s]
            if busy:
                self.single_path.add(
                    {
                        "schedule": s,
                        "aid": aid,
                        "type": _TYPES[typ],
                        "t_ms": t,
                        "job": job,
                        "processing": busy[:5],
                    }
                )
            if self.bulk_rows.get(aid):
                self.unmarked_bulk_overlap += 1
            mark = True
        else:
            mark = self.bulk_marks_processing
            if not mark and not flags & _F_BULK:
                flags |= _F_BULK
                self.bulk_rows[aid] = self.bulk_rows.get(aid, 0) + 1
        if mark and not flags & _F_PROCESSING:
            flags |= _F_PROCESSING
            _mm_put(self.processing, aid, s, 0)
        _mm_put(self.live, key, s << _SHIFT | flags, _SHIFT)

    def _stray(self, t: Ms, s: int, aid: int, typ: int, was: int, to: int) -> None:
        key = aid << 2 | typ
        v = _mm_find(self.live, key, s, _SHIFT)
        to_active = to in (_PENDING, _PROCESSING)
        if v is None:
            if not to_active:
                return
            if was in (_PENDING, _PROCESSING):
                flags = self._adopt(t, s, aid, typ, processing=was == _PROCESSING)
            else:  # revived from a final status: active again without a creation
                self._check_active(t, s, aid, typ, "stray")
                flags = _F_REVIVED
        else:
            flags = v & _FLAGS
        if not to_active:
            _mm_pop(self.live, key, s, _SHIFT)
            self._release(s, aid, flags)
            return
        if to == _PROCESSING and not flags & _F_PROCESSING:
            flags |= _F_PROCESSING
            _mm_put(self.processing, aid, s, 0)
        elif to == _PENDING and flags & _F_PROCESSING:
            flags &= ~_F_PROCESSING
            _mm_pop(self.processing, aid, s, 0)
        _mm_put(self.live, key, s << _SHIFT | flags, _SHIFT)

    def _release(self, s: int, aid: int, v: int) -> None:
        """Forget the per-video indexes of a row that left the active statuses."""
        if v & _F_PROCESSING:
            _mm_pop(self.processing, aid, s, 0)
        if v & _F_BULK:
            n = self.bulk_rows[aid] - 1
            if n:
                self.bulk_rows[aid] = n
            else:
                del self.bulk_rows[aid]

    def _deleted(self, t: Ms, s: int, aid: int, typ: int, due: Ms, status: int) -> None:
        self.lost.checked += 1
        v = _mm_pop(self.live, aid << 2 | typ, s, _SHIFT)
        if v is None:
            self.unlogged += 1
        else:
            self._release(s, aid, v)
            if v & _F_REVIVED:
                self.stray_deleted += 1
                return
            if v & _F_SNAPSHOT:
                return
        example = {
            "schedule": s,
            "aid": aid,
            "type": _TYPES[typ],
            "due_ms": due,
            "t_ms": t,
            "status": K.SCHEDULE_STATUS.word(status),
        }
        if self.in_jobs.get(s):
            self.deferred[s] = example
        else:
            self._lost(example)

    def _lost(self, example: dict[str, Any]) -> None:
        self.lost.add(example)
        self.lost_by_type[example["type"]] += 1

    def _job_finished(self, job: int) -> None:
        self.single_jobs.discard(job)
        for _, s in self.job_rows.pop(job, ()):
            n = self.in_jobs[s] - 1
            if n:
                self.in_jobs[s] = n
                continue
            del self.in_jobs[s]
            example = self.deferred.pop(s, None)
            if example is not None:
                self._lost(example)

    def result(self) -> dict[str, Any]:
        return {
            **self.one_active.result(),
            "invariants.one_active_per_type.forced_parallel": self.forced_parallel,
            **self.single_path.result(),
            "invariants.single_path_processing.unmarked_bulk_overlap": self.unmarked_bulk_overlap,
            "invariants.single_path_processing.redispatched": self.redispatched,
            **self.lost.result(),
            **{f"invariants.lost_schedules.{t}": self.lost_by_type.get(t, 0) for t in _TYPES},
            "invariants.lost_schedules.stray_deleted": self.stray_deleted,
            "invariants.lost_schedules.undecided": len(self.deferred),
            "invariants.unlogged_schedules": self.unlogged,
        }


# -- 6. stale_songs -----------------------------------------------------------------------------
