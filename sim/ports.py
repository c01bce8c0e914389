"""Ports: the small interfaces the scheduler is written against (README "Design rules" 2).

Each method is one SQL-equivalent query or one Redis command of the deployed code, named after
what it does. Its docstring states the semantics every backend must reproduce, *including* the
non-atomic parts, because reproducing races is part of the simulator's job (style-anchors R3).
The store's methods sit in protocols of reads and of writes (``ScheduleReads``,
``ScheduleWrites``, ``SnapshotReads``, ``SnapshotWrites``), and every window-counter and lock
method is one Redis round trip: the query counts of a run follow from that
(:mod:`sim.scheduler.metering`).
Backends are adapters in ``sim/backends/`` (one file each), chosen in one place
(:func:`sim.backends.make_backends`, called by the composition root :mod:`sim.runner`); all of
them pass the contract suite in ``sim.testing``.

Times are epoch ms (:mod:`sim.units`). Methods are ``async`` so that real backends can do I/O; the
in-memory backend never suspends, so a call costs its coroutine and no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Final, Literal, NamedTuple, Protocol

from sim.cvsa.job_table import JobSpec, JobState, RunRow, SkippedRun
from sim.cvsa.params import MilestoneLadder
from sim.cvsa.vocabulary import (
    RunStatus,
    RunTrigger,
    ScheduleStatus,
    ScheduleType,
    UpstreamErrorKind,
)
from sim.units import Ms

ACTIVE_STATUSES: Final = (ScheduleStatus.PENDING, ScheduleStatus.PROCESSING)
"""An "active" schedule is pending or processing (reference, conventions)."""

DueOrder = Literal["started_at", "normal_first"]
"""``started_at``: ascending due time, then id (the single tick has no ORDER BY in the deployed
code, reference §7.1 / Q5: the simulator fixes this order and says so). ``normal_first``: normal
rows, then archive, then started_at, then id (the bulk tick, reference §8.1)."""


new_record: Final = tuple.__new__
"""``new_record(Cls, (field, ...))`` builds a NamedTuple without calling the class: its
generated ``__new__`` is an interpreted function, a Python frame per record where compiled code
builds millions (docs/performance.md "Records built with `tuple.__new__`"). Hot paths only;
the fields are not checked."""


class ScheduleRow(NamedTuple):
    """A row of ``snapshot_schedule`` (reference §2.1). ``started_at_ms`` is the *due* time."""

    id: int
    aid: int
    type: ScheduleType
    status: ScheduleStatus
    started_at_ms: Ms
    created_at_ms: Ms


class Snapshot(NamedTuple):
    """A row of ``video_snapshot`` (reference §2.2), reduced to what the scheduler reads."""

    created_at_ms: Ms
    """When the counts were read (the proxy's server time for scheduled snapshots)."""
    views: int


class EtaRow(NamedTuple):
    """A row of ``eta`` (reference §2.4): hours to the next milestone, views/hour."""

    aid: int
    eta_h: float
    speed: float
    current_views: int
    updated_ms: Ms


class EtaInputs(NamedTuple):
    """What :meth:`SnapshotStore.eta_inputs` read, by position in the ``aids`` asked about.

    The latest snapshots come as two columns of ints rather than as :class:`Snapshot` records:
    thousands of records alive at once, for one pass, set off young collections whose promotions
    bring full ones, which walk every snapshot vector (docs/performance.md "Batched reads answer
    columns, not records")."""

    latest_ms: list[Ms | None]
    """The time of each aid's :meth:`SnapshotStore.latest_snapshot` (None: it has none)."""
    latest_views: list[int]
    """Its views (0 where it has none)."""
    lookbacks: list[Sequence[Snapshot | None]]
    """:meth:`SnapshotStore.lookback_snapshots` of each aid with a latest snapshot; empty
    (not read) for an aid without one, as the deployed ``getAdjustedShortTermETA`` returns
    before its lookbacks then (reference §11.4)."""
    aids: list[int]
    """The aids answered, in the order asked: all of them, less those left out as settled
    (:meth:`SettledEtaInputs.settle_eta_inputs`)."""
    settled: int
    """How many aids asked about were left out as settled. Each had a latest snapshot and
    stands for the two reads it was not asked again."""


class ScheduleReads(Protocol):
    """The queries on ``snapshot_schedule`` (reference §2.1, §5-§12): each one read."""

    async def get_schedule(self, schedule_id: int) -> ScheduleRow | None:
        """The row, or None if it was deleted."""
        ...

    async def has_active_schedule(self, aid: int, type: ScheduleType) -> bool:
        """Does ``aid`` have a pending or processing row of ``type``?"""
        ...

    async def active_schedules(self, aid: int, type: ScheduleType) -> list[ScheduleRow]:
        """The pending and processing rows of (aid, type), by id (reference §5 step 2)."""
        ...

    async def due_schedules(
        self,
        *,
        from_ms: Ms | None,
        to_ms: Ms,
        types: Sequence[ScheduleType],
        limit: int,
        order: DueOrder,
    ) -> list[ScheduleRow]:
        """Pending rows with ``from_ms <= started_at <= to_ms`` (both inclusive, §19.9; no lower
        bound when ``from_ms`` is None) and ``type`` in ``types``, in ``order``, up to ``limit``."""
        ...

    async def has_processing_schedule(self, aid: int) -> bool:
        """Does any row of ``aid`` (any type) have status ``processing``? (reference §7.2)"""
        ...

    async def pending_counts_by_window(
        self, from_ms: Ms, to_ms: Ms, window_ms: Ms
    ) -> dict[Ms, int]:
        """Count pending rows per window of ``window_ms`` (5 minutes: ``started_at_5min_utc``)
        for windows in ``[from_ms, to_ms)``, in window order (reference §6.3, the window-count
        refresh)."""
        ...

    async def earliest_pending_ms(self, types: Sequence[ScheduleType]) -> Ms | None:
        """The smallest ``started_at`` of a pending row of one of ``types`` (idle hints)."""
        ...

    async def earliest_active_ms(self) -> Ms | None:
        """The smallest ``started_at`` of a pending or processing row (cleanup's idle hint)."""
        ...

    async def aids_with_active_schedule(self, type: ScheduleType) -> set[int]:
        """Every aid with a pending or processing row of ``type``."""
        ...

    async def songs_without_active_schedule(self, type: ScheduleType) -> Collection[int]:
        """Songs with no pending or processing row of ``type``, ascending
        (``getVideosWithoutActiveSnapshotScheduleByType``, reference §11.7, §13b). Any
        collection: the memory store answers with a ``vec[i64]`` (8 bytes an aid, not a list's
        40: the start-up dispatch of 20M videos asks for 18M)."""
        ...

    async def non_songs_without_active_schedule(self, type: ScheduleType) -> Collection[int]:
        """``bilibili_metadata`` videos that are not songs and have no active row of ``type``,
        ascending (the archive dispatcher's second group, reference §13b.3)."""
        ...


class ScheduleWrites(Protocol):
    """The writes to ``snapshot_schedule``: each one INSERT, UPDATE or DELETE statement (a
    transaction where its docstring says so)."""

    async def insert_schedule(
        self, aid: int, type: ScheduleType, started_at_ms: Ms, created_at_ms: Ms
    ) -> int:
        """INSERT a ``pending`` row; return its id (ids count up from 1)."""
        ...

    async def move_schedule(self, schedule_id: int, started_at_ms: Ms) -> ScheduleRow | None:
        """In one transaction (SELECT ... FOR UPDATE, UPDATE): set ``started_at``; return the row
        as it was *before* the update, or None if it no longer exists (reference §5 step 2)."""
        ...

    async def set_schedule_status(
        self, ids: Sequence[int], status: ScheduleStatus
    ) -> list[ScheduleRow]:
        """Set ``status`` on the rows that exist; return those rows as they were *before*
        (the caller decrements the windows of rows that left ``pending``, reference §6.4)."""
        ...

    async def delete_overdue_schedules(
        self, before_ms: Ms, kept_before_ms: Mapping[ScheduleType, Ms] | None = None
    ) -> list[ScheduleRow]:
        """DELETE pending and processing rows with ``started_at < before_ms``; return them in id
        order (reference §12). A row of a type in ``kept_before_ms`` is deleted only when due
        before that type's bound instead (seed 003's deferred work,
        :func:`sim.cvsa.modes.kept_before_ms`)."""
        ...


class ScheduleStore(ScheduleReads, ScheduleWrites, Protocol):
    """``snapshot_schedule`` and the queries the scheduler runs on it (reference §2.1, §5-§12)."""


class SnapshotReads(Protocol):
    """The queries on ``video_snapshot``, ``eta``, ``songs`` and ``bilibili_metadata``."""

    async def song_aids(self) -> list[int]:
        """Every song's aid, ascending."""
        ...

    async def video_aids(self) -> list[int]:
        """Every ``bilibili_metadata`` aid, ascending."""
        ...

    async def song_published_ms(self, aid: int) -> Ms | None:
        """``songs.published_at`` of ``aid``, or None if it is not a song."""
        ...

    async def video_status(self, aid: int) -> int:
        """``bilibili_metadata.status`` (0 when the row is missing, reference §2.6)."""
        ...

    async def latest_snapshot(self, aid: int) -> Snapshot | None:
        """The snapshot with the latest ``t`` (``latest_video_snapshot``, reference §2.3, Q1)."""
        ...

    async def closest_snapshot(self, aid: int, t_ms: Ms) -> Snapshot | None:
        """``findClosestSnapshot``: the closer of the latest at/before and the earliest at/after
        ``t_ms``; on a tie the earlier one (reference §11.3, §19.7)."""
        ...

    async def lookback_snapshots(
        self, aid: int, now_ms: Ms, backs_ms: Sequence[Ms]
    ) -> Sequence[Snapshot | None]:
        """:meth:`closest_snapshot` to ``now_ms - back`` for each of ``backs_ms``, in one round
        trip (the six ETA lookbacks of §11.4; the deployed code makes six queries)."""
        ...

    async def eta_inputs(
        self, aids: Sequence[int], now_ms: Ms, backs_ms: Sequence[Ms], reader: int = 0
    ) -> EtaInputs:
        """For every aid in order, what ``getAdjustedShortTermETA`` reads (reference §11.4):
        :meth:`latest_snapshot`, then, if there is one, :meth:`lookback_snapshots`. One call
        for a milestone pass's candidates; the answers are exactly those of the per-aid calls
        made back to back, and the query counts charged are theirs (one read for the latest
        snapshot, one for the lookbacks), so the deployed per-candidate queries are what a
        report shows. The scheduler asks this only where nothing can run between the per-aid
        calls (``sim.scheduler.context.Ctx.batched_reads``).

        ``reader`` (not 0): a store may leave out the aids this reader settled
        (:meth:`SettledEtaInputs.settle_eta_inputs`) while their answer would be the same;
        ``EtaInputs.aids`` says which were answered, ``EtaInputs.settled`` how many were not."""
        ...

    async def snapshot_before(self, aid: int, t_ms: Ms) -> Snapshot | None:
        """``findSnapshotBefore``: the latest snapshot with ``t <= t_ms`` (reference §11.3)."""
        ...

    async def get_eta(self, aid: int) -> EtaRow | None:
        """The ``eta`` row of ``aid``."""
        ...

    async def milestone_candidates(
        self, wide: bool, eta_below_h: float, ladder: MilestoneLadder
    ) -> list[int]:
        """``getVideosNearMilestone`` (reference §11.1), ascending: videos whose latest views are
        near a milestone of ``ladder`` or whose ``eta`` is below ``eta_below_h`` (2300 h);
        ``wide`` adds set A (songs in [60k, 100k) or above 1M). The predicate:
        :func:`sim.cvsa.milestones.milestone_candidate`."""
        ...


class SnapshotWrites(Protocol):
    """The writes to ``video_snapshot``, ``eta``, ``songs`` and ``bilibili_metadata``."""

    async def add_video(self, aid: int, published_ms: Ms) -> None:
        """INSERT into ``bilibili_metadata`` (status 0) if absent."""
        ...

    async def add_song(self, aid: int, published_ms: Ms) -> bool:
        """INSERT into ``songs`` if absent; True if it was added (reference §13.2)."""
        ...

    async def load_catalog(
        self, aids: Sequence[int], published_ms: Sequence[Ms], is_song: Sequence[bool]
    ) -> None:
        """Bulk :meth:`add_video` (and :meth:`add_song` where ``is_song``): the first catalogue."""
        ...

    async def load_snapshots(
        self, aids: Sequence[int], times_ms: Sequence[Ms], views: Sequence[int]
    ) -> int:
        """Bulk :meth:`insert_snapshot`; returns how many were stored (duplicates are not)."""
        ...

    async def set_video_status(self, aid: int, code: int) -> None:
        """Record the bilibili error code a snapshot saw (reference §9 step 4)."""
        ...

    async def insert_snapshot(self, aid: int, t_ms: Ms, views: int) -> bool:
        """INSERT a snapshot; unique on (aid, t): a duplicate is not stored and returns False
        (seed 003/004: idempotent writes; the caller logs and counts it)."""
        ...

    async def upsert_eta(self, row: EtaRow) -> None:
        """INSERT ... ON CONFLICT (aid) DO UPDATE (reference §2.4)."""
        ...


class SettledEtaInputs(Protocol):
    """Marks that let a milestone pass skip the candidates whose ETA inputs have not changed.

    Most milestone candidates are asked about every five minutes with the same snapshots as last
    time and an ETA of 144 h or more, which schedules nothing (reference §11.5). The scheduler
    tells the store which ones came to nothing; the store leaves them out of that reader's next
    :meth:`SnapshotReads.eta_inputs` for as long as their answer is sure to be the same, and
    the reads they stand for are still charged. Not a deployed query, so not counted. A store
    may keep no marks (the SQL stores, the reference store): it answers every aid, which is
    always correct."""

    async def settle_eta_inputs(self, aids: Sequence[int], now_ms: Ms, reader: int) -> None:
        """``reader`` (not 0) read these aids' ETA inputs at ``now_ms`` and they led to nothing
        that depends on the store. Until a snapshot of one of them is written, or ``now`` leaves
        the range in which each of its lookbacks keeps its closest snapshot, ``reader``'s
        :meth:`SnapshotReads.eta_inputs` may leave it out (a mark is the reader's own: another
        reader, with an ETA memo of its own, is answered in full)."""
        ...


class SnapshotStore(SnapshotReads, SnapshotWrites, SettledEtaInputs, Protocol):
    """``video_snapshot``, ``eta``, ``songs`` and ``bilibili_metadata`` (reference §2.2-§2.7)."""


class Store(ScheduleStore, SnapshotStore, Protocol):
    """One database: the schedule table and the video tables (the dispatchers' joins need both):
    what ``--store`` names."""


class Reserved(NamedTuple):
    """Reply to a window reservation (:meth:`WindowCounter.reserve`): the window that kept the +1
    (None if none fitted), its count afterwards (-1 if none), and how many windows were probed."""

    window_ms: Ms | None
    value: int
    probed: int


class WindowCounter(Protocol):
    """The Redis hash ``cvsa:snapshot_window_counts``: window start -> count (reference §6).

    Fields are keyed by window start (epoch ms); an absent field reads as 0. Probing leaves
    zero-valued fields behind (§19.3); :meth:`get_all` returns them too.
    """

    async def incr(self, window_ms: Ms, delta: int) -> int:
        """HINCRBY: add ``delta``, return the new value."""
        ...

    async def reserve(self, first_ms: Ms, step_ms: Ms, count: int, cap: int) -> Reserved:
        """Probe windows ``first_ms + i * step_ms`` (i = 0 ... ``count`` - 1) in order, each with
        HINCRBY +1; keep the +1 on the first whose new count is <= ``cap`` and stop; undo (-1)
        the ones that went over. The deployed loop of ``adjustSnapshotTime`` (reference §6.2):
        a backend may make one round trip per HINCRBY (faithful) or run it as one script; the
        resulting hash and reply are the same (:func:`sim.cvsa.windows.reserve_in`)."""
        ...

    async def get_all(self) -> dict[Ms, int]:
        """HGETALL, keys as window starts."""
        ...

    async def replace_all(self, counts: Mapping[Ms, int]) -> None:
        """DEL, then one HSET per field (the refresh of §6.3). Not atomic: an increment from
        another client between the DEL and the HSETs is lost or counted twice, as in Redis."""
        ...

    async def clear(self) -> None:
        """DEL the hash (the "window counter loss" fault)."""
        ...


DISPATCHER_LOCKS: Final = ("dispatchRegularSnapshots", "dispatchArchiveSnapshots")
"""The locks the scheduler takes (reference §11.7, §13b.1), by name."""


class LockManager(Protocol):
    """The dispatcher locks ``cvsa:lock:<name>`` on the Redis of the window counts (reference
    §2.8, ``packages/core/mq/lockManager.ts``; used by §11.7 and §13b).

    Deployed, a lock is SET NX then EXPIRE, so it expires on the Redis server's clock. Here the
    expiry instant is the lock's *value*, in the run's time: a lock expires at the same simulated
    instant whatever the clock (virtual or scaled) and whatever the backend. Like the deployed
    helpers, checking and taking are separate calls: two runs can both see a lock free.
    """

    async def is_locked(self, name: str, now_ms: Ms) -> bool:
        """Is the lock held (present and not expired at ``now_ms``)?"""
        ...

    async def acquire_lock(self, name: str, now_ms: Ms, ttl_ms: Ms) -> bool:
        """Take the lock until ``now_ms + ttl_ms`` unless it is held; True if taken."""
        ...

    async def release_lock(self, name: str) -> None:
        """Delete the lock, whoever holds it (the deployed ``releaseLock`` checks no owner)."""
        ...


class MessageMarks(Protocol):
    """Processed-message markers ``msg:<id>`` on Redis (seed 004 ``handleMessage``: GET before
    processing, ``SET msg:<id> 1 EX 86400`` after success; issue 28, docs/redelivery.md).

    Deployed, ``EX`` expires on the Redis server's clock. Here, as for the dispatcher locks, the
    value is the expiry instant in the run's time, so a marker expires at the same simulated
    instant whatever the clock and the backend. Checking and marking are separate calls, as in
    the seed: two deliveries in flight can both see a message unmarked."""

    async def is_marked(self, key: str, now_ms: Ms) -> bool:
        """GET ``key``: is a marker present and not expired at ``now_ms``?"""
        ...

    async def mark(self, key: str, expires_ms: Ms) -> None:
        """SET ``key`` until ``expires_ms`` (overwrites an older marker)."""
        ...


class Counter(WindowCounter, LockManager, Protocol):
    """The window counts and the dispatcher locks, which share one Redis in the deployed code
    (reference §2.8): what ``--counter`` names."""


class JobReads(Protocol):
    """Reads of seed 001's job table (``scheduled_job``) and runs table (``scheduled_job_run``)."""

    async def jobs(self) -> list[JobState]:
        """Every registered job, in the order they were first registered (a round's read)."""
        ...

    async def runs(self, job: str) -> list[RunRow]:
        """The runs of ``job`` still kept (oldest first, at most ``runs_kept`` finished ones
        plus a running one)."""
        ...


class JobWrites(Protocol):
    """Writes of the job and runs tables; each method is one transaction."""

    async def register_job(self, spec: JobSpec, next_run_at_ms: Ms) -> bool:
        """Insert the job with ``next_run_at_ms`` unless it exists (a later registration, by
        another process, keeps the row and its times: seed 001 "登记与用户修改"). True if
        inserted."""
        ...

    async def start_run(
        self,
        job: str,
        trigger: RunTrigger,
        planned_ms: Ms,
        now_ms: Ms,
        holder: str,
        slot_of: Callable[[int], str],
    ) -> int | None:
        """Start a run: insert a ``running`` run row (its slot is ``slot_of(run id)``), mark the
        job running and clear its ``run_requested_at``. None, and nothing written, if the job
        has a running run already (no re-entry, enforced by the row itself)."""
        ...

    async def finish_run(
        self,
        run_id: int,
        status: RunStatus,
        now_ms: Ms,
        next_run_at_ms: Ms,
        error: str,
        runs_kept: int,
    ) -> bool:
        """End a ``running`` run: its status, end time and error; the job is no longer running
        and runs next at ``next_run_at_ms``; the job's runs beyond the newest ``runs_kept``
        are deleted. False, and nothing written, if the run is not running (a successor marked
        it interrupted)."""
        ...

    async def request_run(self, job: str, now_ms: Ms) -> bool:
        """立即执行: set ``run_requested_at`` unless a request is pending or a run is running
        (then the request is merged). True when queued (``queued: true``)."""
        ...

    async def skip_run(
        self, job: str, now_ms: Ms, runs_kept: int, next_of: Callable[[JobState], Ms]
    ) -> SkippedRun | None:
        """跳过本次, in one transaction: read the job, move ``next_run_at`` to
        ``next_of(job as read)`` and record a ``trigger=skip`` run (status ``skipped``, planned
        at the skipped time). None, and nothing written, while a run of the job is running (its
        end decides the next run time)."""
        ...

    async def interrupt_runs(self, now_ms: Ms, error: str) -> list[RunRow]:
        """中断恢复: every ``running`` run becomes ``failed`` with ``error``, its job no longer
        running (``next_run_at`` untouched). The runs as they were, oldest first."""
        ...


class SchedulerLock(Protocol):
    """The lock that makes one process the table's executor (seed 001: ``pg_try_advisory_lock``
    on a dedicated connection; a process that dies loses it with its connection)."""

    async def try_lock(self, holder: str) -> bool:
        """Take the lock for ``holder`` unless another holds it; True if ``holder`` holds it
        now (taking it again is a no-op)."""
        ...

    async def drop_lock(self, holder: str) -> None:
        """``holder`` loses the lock (its process died: the connection is gone)."""
        ...


class JobTable(JobReads, JobWrites, SchedulerLock, Protocol):
    """Seed 001's tables and lock, in the store's database: what the ``table`` periodic policy
    runs on."""


class VideoStats(NamedTuple):
    """What the bilibili API returned for one video (reference §9 step 4, §10.1)."""

    aid: int
    views: int
    server_time_ms: Ms


class UpstreamError(Exception):
    """A failed upstream call: its :class:`~sim.cvsa.vocabulary.UpstreamErrorKind`, and the
    bilibili code when the API answered one (``bili_code``), and the answer's Retry-After in
    ms (0: none; only a 429 carries one, issue 28)."""

    def __init__(
        self, kind: UpstreamErrorKind, code: int = 0, detail: str = "", retry_after_ms: int = 0
    ) -> None:
        self.kind = kind
        self.code = code
        self.retry_after_ms = retry_after_ms
        super().__init__(f"{kind}{f' {code}' if code else ''}{f': {detail}' if detail else ''}")


class UpstreamApi(Protocol):
    """bilibili, reached through proxies (reference §14). Raises :class:`UpstreamError`."""

    async def get_video(self, aid: int, now_ms: Ms, task: str = "snapshotVideo") -> VideoStats:
        """``x/web-interface/view?aid=`` for one video (the single path, §9). ``task`` is the
        network task, which decides the proxies and limiters (§14.2): ``snapshotVideo``,
        ``snapshotMilestoneVideo`` (milestone and new rows) or ``getVideoInfo``."""
        ...

    async def get_videos(
        self, aids: Sequence[int], now_ms: Ms, task: str = "bulkSnapshot"
    ) -> list[VideoStats]:
        """The bulk ``medialist/gateway/base/resource/infos`` call (§10.1). Items for videos the
        API cannot show are omitted (reference Q3: the simulator's choice)."""
        ...
