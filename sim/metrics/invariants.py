"""Invariant monitors: streaming reducers that find every violation of the scheduler's invariants
in the event log (issue 4, property tests; issue 6, online monitors).

Every monitor reports, under stable names, ``invariants.<name>.violations`` (the exact count) and
``invariants.<name>.examples`` (the first :data:`EXAMPLES` violations in log order, each a small
dict of schedule ids, the aid and times in epoch ms), plus a few counters of the **legitimate
exceptions** the rules allow, so that "zero violations" never hides them. Like every reducer they
are pure (no I/O), deterministic and streaming: their state is keyed by live schedules, running
jobs, songs or milestone crossings, and what finishes is dropped.

What the log cannot tell is passed to the constructors: the window cap and two behaviour switches
of the run (:func:`invariant_reducers`), the initial catalogue's songs and the milestone ground
truth of the world (:func:`cvsa_invariant_reducers`).

The invariants and the precise rules
====================================

``window_cap`` (:class:`WindowCapInvariant`)
    A capped reservation never leaves its window above the cap: a ``ScheduleCreated`` whose
    placement is ``forward`` or ``fallback`` (both probe with HINCRBY and undo when the count goes
    over, :func:`sim.cvsa.windows.adjust_snapshot_time`) must have ``window_count <= cap``.
    Not violations, counted apart: ``over_cap_uncapped`` -- ``exact`` (milestone/new, §19.12) and
    ``unadjusted`` creations and milestone moves (``ScheduleMoved``) whose unconditional +1 left
    the window above the cap; ``exhausted`` -- rows inserted at their target with nothing reserved
    because every probed window was full (§6.2 step 4; the event carries no count for them).

``one_active_per_type`` (:class:`LifecycleInvariants`)
    At most one active (pending or processing) row per (aid, type) unless forced (§3). The row
    statuses are rebuilt from the log (see *Row status* below). A violation is a non-forced
    ``ScheduleCreated`` while another row of the same (aid, type) is active (``cause: created``),
    or a row becoming active again without a creation -- a ``StrayStatusChange`` from a final
    status (``cause: stray``), or a row never logged (``cause: unlogged``) -- while another row of
    the (aid, type) is active. Forced creations next to active rows are legitimate (cvsa-2026's
    parallel ``new`` chains, the 4 initial ``new`` rows) and counted as ``forced_parallel``.

``no_schedule_before_creation`` (:class:`NoScheduleBeforeCreation`)
    A row's due time is never earlier than its creation instant, except where the rules put it
    there. No caller passes a target in the past (every target is ``now`` plus a delay >= 0, or
    the regular dispatcher's ``>= now + 1 ms`` clamp, or a future archive date), and the forward
    search (and the design profile's jittered fallback) returns ``max(window + jitter, now)``.
    The only rule that yields a due time before ``now`` from a target that is not is the
    deployed bare fallback (switch ``fallback_bare_window_start``, §6.2 step 3, §19.4), which
    returns the start of a window up to 25 min back. So, for ``ScheduleCreated`` at ``t`` with due
    ``d < t``: **allowed** iff placement is ``fallback``, the run's fallback is bare and
    ``d == window_ms``; every other case is a violation (an ``exact``, ``unadjusted`` or
    ``exhausted`` row keeps its target, so ``d < t`` there means a caller passed a past target;
    ``forward`` clamps to now). A ``ScheduleMoved`` to a time before its instant is a violation
    too: nothing clamps a milestone move (§19.11), but its target is a caller's ``now`` + delay
    (>= 2 s from the dispatcher, >= 0 from the re-ETA, 5 s from a retry), so a move into the past
    needs a past target. Counted apart, not violations: ``allowed`` (the bare-fallback rows in the
    past) and ``clamped_to_now`` (jittered rows whose window starts before ``t`` and whose due
    time is exactly ``t``: the jitter fell in the past and was clamped, §6.2, §19.2).

``single_path_processing`` (:class:`LifecycleInvariants`)
    ``snapshotTick`` never dispatches a row of a video that already has a ``processing`` row
    (§7.2: ``videoHasProcessingSchedule`` looks at rows of any type). A violation is a
    ``ScheduleDispatched`` into a ``snapshotVideo`` job (the job's ``JobAdded`` name tells the
    single path from the bulk path) while another row of the aid is processing. What counts as
    processing is exactly what the store holds: a single-path dispatch marks its row; a bulk
    dispatch marks its rows only when the bulk tick passes schedule ids (constructor argument
    ``bulk_marks_processing`` = not switch ``bulk_aids_as_ids_bug``; cvsa-2026 leaves them
    pending, §8.3); a ``StrayStatusChange`` sets whatever it says. So cvsa-2026's unmarked bulk
    rows are invisible to the tick, as deployed, and not violations; the hazard is counted apart:
    ``unmarked_bulk_overlap`` -- single-path dispatches of an aid with rows in an unfinished bulk
    job that did not mark them (two concurrent snapshot jobs for one video, or for one row when the
    tick takes an archive row of a pending bulk batch) -- and ``redispatched`` -- dispatches of a
    row already in an unfinished job (the bulk re-enqueue of §8.3).

``lost_schedules`` (:class:`LifecycleInvariants`)
    A row deleted by cleanup (``ScheduleDeleted``) for which no ``SnapshotTaken`` carries its
    schedule id, before or after the deletion. A deletion while a job that took the row up
    (``ScheduleStarted``) is still running is judged when that job finishes (a worker sleeping in
    a backoff retry can still record the snapshot); rows still waiting at the end of the log are
    ``undecided``. Rows that a stray status change revived from a final status are counted as
    ``stray_deleted``, not lost (they had their turn). By type: ``lost_schedules.<type>``.

``stale_songs`` (:class:`StaleSongs`)
    A song goes no longer than ``max_interval_ms`` (72 h, the longest regular interval, §11.6)
    plus ``slack_ms`` (2 h) without a snapshot of any kind. Songs are the initial catalogue's
    (constructor argument, since the catalogue load writes no events: each with the time of its
    latest history snapshot, or the run start) and those of ``SongClassified`` (from the
    classification instant). A violation is a gap longer than the bound between consecutive
    snapshots, or from that baseline to the first snapshot, or an open gap at the end of the log
    (``open: true``).

``missed_milestones`` (:class:`MilestoneCapture`)
    Ground truth (``World.crossings``: aid, milestone M, first instant t* with views >= M) is a
    constructor argument. A crossing is *captured* by the first snapshot of the aid at or after t*
    reading views >= M; it is *missed* when no such snapshot comes by ``t* + bound_ms`` (judged
    once the log has passed that instant; crossings whose deadline the log has not passed are
    ``undecided``). Crossings of hidden videos (``visible`` false) are not judged (``hidden``).
    Also reported: ``milestones.crossed``, ``milestones.captured``, the capture latency
    (``milestones.capture_latency.*_s``, every capture however late) and the bracket width
    (``milestones.bracket_width.*_s``: the capturing snapshot minus the last logged snapshot below
    M, when there is one).

Row status (one_active_per_type, single_path_processing, lost_schedules)
------------------------------------------------------------------------
Rebuilt from the log as the store holds it: ``ScheduleCreated`` -> pending; a single-path
``ScheduleDispatched`` -> processing (a bulk one too when ``bulk_marks_processing``);
``StrayStatusChange`` -> its ``to_status``; ``ScheduleFinished`` and ``ScheduleDeleted`` end the
row (skips and moves change no status). A row first seen in a later event (inserted without a
``ScheduleCreated``, e.g. by a test's setup) is adopted then and counted in
``invariants.unlogged_schedules``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from sim.events import cvsa_kinds as K
from sim.events.engine_kinds import JobAdded, JobFinished
from sim.events.log import Chunk
from sim.events.schema import BY_RECORD, HEAD_FIELDS
from sim.metrics.base import Reducer, Samples, percentiles
from sim.units import HOUR_MS, SECOND_MS, Ms

if TYPE_CHECKING:
    from sim.cvsa.profile import Switches
    from sim.world import World

EXAMPLES = 20
"""Examples kept per invariant (the first ones, in log order); the counts are always exact."""

DEFAULT_STALE_INTERVAL_MS: Ms = 72 * HOUR_MS
"""The longest regular interval (reference §11.6): a song is due at least this often."""
DEFAULT_STALE_SLACK_MS: Ms = 2 * HOUR_MS
DEFAULT_CAPTURE_BOUND_MS: Ms = HOUR_MS
"""A milestone counts as missed when no snapshot shows it within this time of the crossing."""

SINGLE_PATH_JOB = "snapshotVideo"
"""The job name of the single path (§7.2); ``bulkSnapshotVideo`` is the bulk path (§8.2)."""

_TYPES = K.SNAPSHOT_TYPE.words
_FORWARD = K.PLACEMENT.code("forward")
_FALLBACK = K.PLACEMENT.code("fallback")
_EXACT = K.PLACEMENT.code("exact")
_UNADJUSTED = K.PLACEMENT.code("unadjusted")
_EXHAUSTED = K.PLACEMENT.code("exhausted")
_PENDING = K.SCHEDULE_STATUS.code("pending")
_PROCESSING = K.SCHEDULE_STATUS.code("processing")
_ROW_GONE = K.SKIP_REASON.code("row_gone")
_BILI_STATUS = K.SKIP_REASON.code("bili_status")


def _col(record_type: type, field: str) -> int:
    """The column of ``field`` in the numpy table of ``record_type``."""
    return (*HEAD_FIELDS, *BY_RECORD[record_type].fields).index(field)


class _Violations:
    """An exact count and the first :data:`EXAMPLES` examples of one invariant."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0
        self.examples: list[dict[str, Any]] = []

    def add(self, example: dict[str, Any]) -> None:
        self.count += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(example)

    @property
    def room(self) -> int:
        """How many more examples would be kept."""
        return EXAMPLES - len(self.examples)

    def result(self) -> dict[str, Any]:
        return {
            f"invariants.{self.name}.violations": self.count,
            f"invariants.{self.name}.examples": list(self.examples),
        }


def _last_t(chunk: Chunk) -> Ms | None:
    """The latest instant in ``chunk`` (each kind's rows are in log order, so time order)."""
    ends = [int(t[-1, 1]) for t in chunk.tables.values() if t.shape[0]]
    return max(ends) if ends else None


_CREATED = {f: _col(K.ScheduleCreated, f) for f in K.ScheduleCreated._fields}
_MOVED = {f: _col(K.ScheduleMoved, f) for f in K.ScheduleMoved._fields}


# -- 1. window_cap ------------------------------------------------------------------------------


class WindowCapInvariant:
    """``invariants.window_cap.*``: capped reservations stay within ``cap`` (module docstring)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.v = _Violations("window_cap")
        self.over_cap_uncapped = 0
        self.exhausted = 0

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        c, cap = _CREATED, self.cap
        created = chunk.table(K.ScheduleCreated)
        if created.size:
            placement, count = created[:, c["placement"]], created[:, c["window_count"]]
            capped = (placement == _FORWARD) | (placement == _FALLBACK)
            bad = np.flatnonzero(capped & (count > cap))
            for i in bad[: self.v.room].tolist():
                row = created[i].tolist()
                self.v.examples.append(
                    {
                        "schedule": row[c["schedule"]],
                        "aid": row[c["aid"]],
                        "type": _TYPES[row[c["type"]]],
                        "t_ms": row[c["t_ms"]],
                        "window_ms": row[c["window_ms"]],
                        "window_count": row[c["window_count"]],
                        "placement": K.PLACEMENT.word(row[c["placement"]]),
                    }
                )
            self.v.count += int(bad.size)
            uncapped = (placement == _EXACT) | (placement == _UNADJUSTED)
            self.over_cap_uncapped += int(np.count_nonzero(uncapped & (count > cap)))
            self.exhausted += int(np.count_nonzero(placement == _EXHAUSTED))
        moved = chunk.column(K.ScheduleMoved, "window_count")
        self.over_cap_uncapped += int(np.count_nonzero(moved > cap))

    def result(self) -> dict[str, Any]:
        return {
            **self.v.result(),
            "invariants.window_cap.cap": self.cap,
            "invariants.window_cap.over_cap_uncapped": self.over_cap_uncapped,
            "invariants.window_cap.exhausted": self.exhausted,
        }


# -- 3. no_schedule_before_creation -------------------------------------------------------------


class NoScheduleBeforeCreation:
    """``invariants.no_schedule_before_creation.*``: no due time before the creation instant
    except the deployed bare fallback (module docstring). ``bare_fallback`` is the run's switch
    ``fallback_bare_window_start``."""

    def __init__(self, bare_fallback: bool) -> None:
        self.bare_fallback = bare_fallback
        self.v = _Violations("no_schedule_before_creation")
        self.allowed = 0
        self.clamped = 0

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        c, m = _CREATED, _MOVED
        created = chunk.table(K.ScheduleCreated)
        moved = chunk.table(K.ScheduleMoved)
        bad_created = np.empty(0, dtype=np.int64)
        bad_moved = np.empty(0, dtype=np.int64)
        if created.size:
            t, due = created[:, c["t_ms"]], created[:, c["due_ms"]]
            window, placement = created[:, c["window_ms"]], created[:, c["placement"]]
            fallback = placement == _FALLBACK
            bare = fallback & self.bare_fallback
            jittered = (placement == _FORWARD) | (fallback & ~bare)
            past = due < t
            allowed = past & bare & (due == window)
            self.allowed += int(np.count_nonzero(allowed))
            self.clamped += int(np.count_nonzero(jittered & (due == t) & (window < t)))
            bad_created = np.flatnonzero(past & ~allowed)
        if moved.size:
            bad_moved = np.flatnonzero(moved[:, m["to_ms"]] < moved[:, m["t_ms"]])
        if not (bad_created.size or bad_moved.size):
            return
        # Examples in log order across both kinds.
        found: list[tuple[int, dict[str, Any]]] = []
        for i in bad_created.tolist():
            row = created[i].tolist()
            found.append(
                (
                    row[0],
                    {
                        "event": "created",
                        "schedule": row[c["schedule"]],
                        "aid": row[c["aid"]],
                        "type": _TYPES[row[c["type"]]],
                        "t_ms": row[c["t_ms"]],
                        "requested_ms": row[c["requested_ms"]],
                        "due_ms": row[c["due_ms"]],
                        "window_ms": row[c["window_ms"]],
                        "placement": K.PLACEMENT.word(row[c["placement"]]),
                    },
                )
            )
        for i in bad_moved.tolist():
            row = moved[i].tolist()
            found.append(
                (
                    row[0],
                    {
                        "event": "moved",
                        "schedule": row[m["schedule"]],
                        "aid": row[m["aid"]],
                        "type": "milestone",
                        "t_ms": row[m["t_ms"]],
                        "from_ms": row[m["from_ms"]],
                        "due_ms": row[m["to_ms"]],
                    },
                )
            )
        found.sort(key=lambda f: f[0])
        for _, example in found:
            self.v.add(example)

    def result(self) -> dict[str, Any]:
        return {
            **self.v.result(),
            "invariants.no_schedule_before_creation.allowed": self.allowed,
            "invariants.no_schedule_before_creation.clamped_to_now": self.clamped,
        }


# -- 2, 4, 5. one_active_per_type, single_path_processing, lost_schedules -----------------------

# The live rows are one dict keyed by (aid, type) -- every lifecycle event names both -- holding
# each row as one int, ``schedule << 5 | flags`` (a list in the rare case of several rows): about
# a hundred bytes per live row, the cost of one small dict entry.
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
_TAKEN_SCHEDULE = _col(K.SnapshotTaken, "schedule")
_JOB_NAME = _col(JobAdded, "name")
_JOB = _col(JobFinished, "job")


class LifecycleInvariants:
    """``invariants.one_active_per_type.*``, ``invariants.single_path_processing.*`` and
    ``invariants.lost_schedules.*``: one ordered pass over the row lifecycle (module docstring).

    ``bulk_marks_processing``: the bulk tick sets its rows processing (design); false when it
    passes aids as schedule ids (switch ``bulk_aids_as_ids_bug``, cvsa-2026, §8.3).
    """

    def __init__(self, bulk_marks_processing: bool) -> None:
        self.bulk_marks_processing = bulk_marks_processing
        self.one_active = _Violations("one_active_per_type")
        self.single_path = _Violations("single_path_processing")
        self.lost = _Violations("lost_schedules")
        self.forced_parallel = 0
        self.unmarked_bulk_overlap = 0
        self.redispatched = 0
        self.stray_deleted = 0
        self.unlogged = 0
        self.lost_by_type: Counter[str] = Counter()
        self.live: MultiMap = {}
        """aid * 4 + type -> its live (pending or processing) rows, ``schedule << 5 | flags``."""
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
            (key >> 2, _TYPES[key & 3]): _ids(cur, _SHIFT) for key, cur in sorted(self.live.items())
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
        # Events in log order, as runs of one kind (the dispatchers write long runs of
        # creations); within a kind the rows are already in log order.
        kinds = np.concatenate([np.full(tables[k].shape[0], k) for k in present])
        kinds = kinds[np.argsort(np.concatenate([tables[k][:, 0] for k in present]), kind="stable")]
        cut = np.flatnonzero(np.diff(kinds)) + 1
        starts, ends = np.concatenate(([0], cut)), np.concatenate((cut, [kinds.size]))
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


class StaleSongs:
    """``invariants.stale_songs.*``: no song goes longer than ``max_interval_ms + slack_ms``
    without a snapshot (module docstring).

    Args:
        songs: the songs known before the log starts (the catalogue), each with the instant its
            gap is measured from (its latest snapshot before the run, or the run start).
        max_interval_ms: the longest interval a song may legitimately wait (72 h, §11.6).
        slack_ms: tolerance on top (dispatch cadence, tick delays).
    """

    def __init__(
        self,
        songs: Mapping[int, Ms],
        *,
        max_interval_ms: Ms = DEFAULT_STALE_INTERVAL_MS,
        slack_ms: Ms = DEFAULT_STALE_SLACK_MS,
    ) -> None:
        self.bound = max_interval_ms + slack_ms
        self.last: dict[int, Ms] = dict(songs)
        """Song -> the instant of its latest snapshot (or of its baseline)."""
        self.v = _Violations("stale_songs")
        self.max_gap: Ms = 0
        self.now: Ms | None = None

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        classified = chunk.table(K.SongClassified)
        taken = chunk.table(K.SnapshotTaken)
        end = _last_t(chunk)
        if end is not None:
            self.now = end if self.now is None else max(self.now, end)
        if not (classified.size or taken.size):
            return
        last, bound = self.last, self.bound
        # (seq, t, aid, is_snapshot) in log order: a song is known from its classification on.
        events = sorted(
            [(r[0], r[1], r[2], 0) for r in classified[:, :3].tolist()]
            + [(r[0], r[1], r[2], 1) for r in taken[:, :3].tolist()]
        )
        for _, t, aid, is_snapshot in events:
            prev = last.get(aid)
            if not is_snapshot:
                if prev is None:
                    last[aid] = t
                continue
            if prev is None:
                continue
            gap = t - prev
            if gap > self.max_gap:
                self.max_gap = gap
            if gap > bound:
                self.v.add(
                    {
                        "aid": aid,
                        "from_ms": prev,
                        "to_ms": t,
                        "gap_s": gap / SECOND_MS,
                        "open": False,
                    }
                )
            if t > prev:
                last[aid] = t

    def result(self) -> dict[str, Any]:
        count, examples, max_gap = self.v.count, list(self.v.examples), self.max_gap
        if self.now is not None:
            now = self.now
            open_gaps = sorted(
                (prev, aid) for aid, prev in self.last.items() if now - prev > self.bound
            )
            count += len(open_gaps)
            for prev, aid in open_gaps[: EXAMPLES - len(examples)]:
                examples.append(
                    {
                        "aid": aid,
                        "from_ms": prev,
                        "to_ms": now,
                        "gap_s": (now - prev) / SECOND_MS,
                        "open": True,
                    }
                )
            if self.last:
                max_gap = max(max_gap, now - min(self.last.values()))
        return {
            "invariants.stale_songs.violations": count,
            "invariants.stale_songs.examples": examples,
            "invariants.stale_songs.bound_s": self.bound / SECOND_MS,
            "invariants.stale_songs.songs": len(self.last),
            "invariants.stale_songs.max_gap_s": max_gap / SECOND_MS,
        }


# -- 7. missed_milestones -----------------------------------------------------------------------


class CrossingTable(Protocol):
    """Milestone ground truth, sorted by instant (``sim.world.truth.Crossings``)."""

    @property
    def aid(self) -> npt.NDArray[np.int64]: ...

    @property
    def milestone(self) -> npt.NDArray[np.int64]: ...

    @property
    def t_ms(self) -> npt.NDArray[np.int64]: ...

    @property
    def visible(self) -> npt.NDArray[np.bool_]: ...


class MilestoneCapture:
    """``invariants.missed_milestones.*`` and ``milestones.*``: was every milestone crossing seen
    by a snapshot within ``bound_ms``? (module docstring)

    Args:
        crossings: the world's ground truth over the run (``World.crossings(start, end)``).
        bound_ms: a crossing not shown by a snapshot within this time is missed.
    """

    def __init__(
        self, crossings: CrossingTable, *, bound_ms: Ms = DEFAULT_CAPTURE_BOUND_MS
    ) -> None:
        visible = np.asarray(crossings.visible, dtype=bool)
        aid = np.asarray(crossings.aid, dtype=np.int64)[visible]
        milestone = np.asarray(crossings.milestone, dtype=np.int64)[visible]
        t_star = np.asarray(crossings.t_ms, dtype=np.int64)[visible]
        order = np.lexsort((milestone, aid, t_star))  # by instant, then aid, then milestone
        self.aid, self.milestone, self.t_star = aid[order], milestone[order], t_star[order]
        self.hidden = int(visible.size - np.count_nonzero(visible))
        self.bound = bound_ms
        n = self.t_star.size
        self.captured_at = np.full(n, -1, dtype=np.int64)
        self.last_below = np.full(n, -1, dtype=np.int64)
        self.open: dict[int, list[int]] = {}
        """aid -> its crossings not yet captured (indexes, by instant)."""
        for i, aid in enumerate(self.aid.tolist()):
            self.open.setdefault(aid, []).append(i)
        self.aids = np.unique(self.aid)
        self.judged = 0
        """Crossings whose deadline the log has passed (indexes below this, by instant)."""
        self.v = _Violations("missed_milestones")
        self.latency = Samples()
        self.bracket = Samples()
        self.now: Ms | None = None

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        taken = chunk.table(K.SnapshotTaken)
        if taken.size and self.open:
            mine = taken[np.isin(taken[:, 2], self.aids)]
            latency: list[int] = []
            bracket: list[int] = []
            for _, _t, aid, _s, _ty, _d, views, _dup, t in mine.tolist():
                waiting = self.open.get(aid)
                if not waiting:
                    continue
                for i in list(waiting):
                    m = int(self.milestone[i])
                    if views < m:
                        self.last_below[i] = t
                    elif t >= self.t_star[i]:
                        self.captured_at[i] = t
                        latency.append(t - int(self.t_star[i]))
                        below = int(self.last_below[i])
                        if below >= 0:
                            bracket.append(t - below)
                        waiting.remove(i)
                if not waiting:
                    del self.open[aid]
            self.latency.add(np.asarray(latency, dtype=np.int64))
            self.bracket.add(np.asarray(bracket, dtype=np.int64))
        end = _last_t(chunk)
        if end is None:
            return
        self.now = end if self.now is None else max(self.now, end)
        # Judge every crossing whose deadline is strictly before the log's latest instant: every
        # snapshot up to the deadline has been seen.
        deadline = self.t_star + self.bound
        stop = int(np.searchsorted(deadline, self.now, side="left"))
        for i in range(self.judged, stop):
            got = int(self.captured_at[i])
            if got < 0 or got > deadline[i]:
                self.v.add(
                    {
                        "aid": int(self.aid[i]),
                        "milestone": int(self.milestone[i]),
                        "t_ms": int(self.t_star[i]),
                        "deadline_ms": int(deadline[i]),
                        "last_below_ms": int(self.last_below[i]),
                    }
                )
        self.judged = max(self.judged, stop)

    def result(self) -> dict[str, Any]:
        now = self.now
        crossed = 0 if now is None else int(np.searchsorted(self.t_star, now, side="right"))
        captured = int(np.count_nonzero(self.captured_at >= 0))
        rest = slice(self.judged, crossed)
        in_time = (self.captured_at[rest] >= 0) & (
            self.captured_at[rest] <= self.t_star[rest] + self.bound
        )
        out: dict[str, Any] = {
            **self.v.result(),
            "invariants.missed_milestones.bound_s": self.bound / SECOND_MS,
            "invariants.missed_milestones.undecided": int(np.count_nonzero(~in_time)),
            "milestones.crossed": crossed,
            "milestones.captured": captured,
            "milestones.hidden": self.hidden,
        }
        for name, samples in (("capture_latency", self.latency), ("bracket_width", self.bracket)):
            stats = percentiles(samples.array(), f"milestones.{name}", SECOND_MS)
            out.update({(k if k.endswith(".count") else k + "_s"): v for k, v in stats.items()})
        return out


# -- wiring -------------------------------------------------------------------------------------


class _NoCrossings:
    """An empty :class:`CrossingTable`."""

    aid = np.empty(0, dtype=np.int64)
    milestone = np.empty(0, dtype=np.int64)
    t_ms = np.empty(0, dtype=np.int64)
    visible = np.empty(0, dtype=bool)


def invariant_reducers(
    switches: Switches,
    *,
    crossings: CrossingTable | None = None,
    songs: Mapping[int, Ms] | None = None,
    stale_slack_ms: Ms = DEFAULT_STALE_SLACK_MS,
    capture_bound_ms: Ms = DEFAULT_CAPTURE_BOUND_MS,
) -> list[Reducer]:
    """Every invariant monitor, configured from the run's switches (the cap, the fallback and
    the bulk tick's marking), the catalogue's songs and the milestone ground truth."""
    return [
        WindowCapInvariant(switches.window_cap),
        NoScheduleBeforeCreation(switches.fallback_bare_window_start),
        LifecycleInvariants(bulk_marks_processing=not switches.bulk_aids_as_ids_bug),
        StaleSongs(songs or {}, slack_ms=stale_slack_ms),
        MilestoneCapture(
            crossings if crossings is not None else _NoCrossings(), bound_ms=capture_bound_ms
        ),
    ]


def catalog_song_baselines(world: World, start_ms: Ms, history_ms: Iterable[Ms]) -> dict[int, Ms]:
    """The initial catalogue's songs, each with the instant of its latest history snapshot (the
    catalogue load gives every video published by ``start - offset`` a snapshot at that instant,
    ``sim.scheduler.feed.load_catalog``), or ``start_ms`` when it has none."""
    cat = world.initial
    aid, published = cat.aid[cat.is_song], cat.published_ms[cat.is_song]
    base = np.full(aid.size, start_ms, dtype=np.int64)
    found = np.zeros(aid.size, dtype=bool)
    for offset in sorted(set(history_ms)):  # the latest snapshot first
        t = start_ms - offset
        hit = ~found & (published <= t)
        base[hit] = t
        found |= hit
    return dict(zip(aid.tolist(), base.tolist(), strict=True))


def cvsa_invariant_reducers(
    switches: Switches, world: World, start_ms: Ms, end_ms: Ms, history_ms: Iterable[Ms]
) -> list[Reducer]:
    """:func:`invariant_reducers` for a CVSA model run over ``[start_ms, end_ms]`` of ``world``."""
    return invariant_reducers(
        switches,
        crossings=world.crossings(start_ms, end_ms),
        songs=catalog_song_baselines(world, start_ms, history_ms),
    )


__all__ = [
    "EXAMPLES",
    "CrossingTable",
    "LifecycleInvariants",
    "MilestoneCapture",
    "NoScheduleBeforeCreation",
    "StaleSongs",
    "WindowCapInvariant",
    "catalog_song_baselines",
    "cvsa_invariant_reducers",
    "invariant_reducers",
]
