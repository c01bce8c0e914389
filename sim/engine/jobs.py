"""BullMQ-style queues, worker pools and job schedulers on the engine (reference §1.2-1.4).

* A :class:`Queue` has a worker pool of ``concurrency`` slots. Waiting jobs are served in BullMQ
  order: jobs added **without** a priority first (the plain wait list, FIFO), then the prioritized
  set by ascending priority, FIFO within a priority (score = priority * 2^32 + counter; BullMQ
  moveToActive-11.lua, reference §1.4). Delayed jobs wait on the engine's heap until due.
* A :class:`JobScheduler` is BullMQ's ``every`` job scheduler: exactly one pending iteration; the
  next one is created when the current one *starts*, at ``prev + every``; if that is already
  past, at the next aligned slot ``floor(now / every) * every + every + offset`` (BullMQ
  getJobSchedulerEveryNextMillis.lua, 5.x), so missed slots are skipped -- and counted -- never
  replayed; iterations overlap when one outlasts the period and a worker is free. The first
  iteration runs at registration (``immediately`` has no effect in BullMQ 5.x, reference §1.4).

Idle iterations and elision: an iteration whose processor logs nothing is *idle*; idle iterations
are counted in run-length ``IdleIterations`` records instead of per-iteration records. With
``engine.elide`` on, iterations that a scheduler's ``idle_until`` hint proves idle, and that no
other event could influence, are skipped without running; the log is identical either way
(tests/engine/test_elision.py).

Redelivery (issue 28, docs/redelivery.md; both off by default, and then a crash loses its running
jobs, ``JobLost``):

* **Stalled jobs** (:meth:`Queue.check_stalled`, BullMQ defaults of reference §1.2: lock 30 s
  renewed every 15 s, stalled check every 30 s, ``maxStalledCount`` 1). A crashed worker stops
  renewing, so a job it ran keeps its lock until its last renewal plus the lock duration
  (``JobAbandoned``). BullMQ's check (moveStalledJobsToWait) runs on a live worker every stalled
  interval, at most once per interval across workers: it takes the jobs the *previous* check
  marked whose lock is gone, moves each back to wait (``JobRedelivered``) or, past
  ``maxStalledCount``, to failed (``JobDropped`` ``stalled_limit``), then marks every active job;
  a lock renewal unmarks a job. Modelled without per-job timers: renewals are arithmetic (start +
  k * renew), and check timers run only while abandoned jobs wait and a worker is alive.
* **Redelivery of failed jobs** (:meth:`Queue.retry_failed`): a job whose processor raises
  :class:`JobFailed` is not acknowledged; it comes back after a fixed delay (``JobRetried``, then
  ``JobRedelivered``). How many deliveries a message gets is the consumer's business (its cap).

A job counts its deliveries (``Job.deliveries``, BullMQ's ``attemptsStarted``); a periodic
iteration delivered again runs the same iteration (same due time) and creates no next one: that
one was created when it first started, and its job id ``repeat:<key>:<millis>`` is fixed, so
BullMQ adding it again is a no-op.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Final

from sim.engine.core import Engine, Process
from sim.events.delivery_kinds import (
    DROP_REASON,
    REDELIVERY_CAUSE,
    JobAbandoned,
    JobDropped,
    JobRedelivered,
    JobRetried,
    JobStalled,
)
from sim.events.engine_kinds import (
    NO_PRIORITY,
    IdleIterations,
    IterationFinished,
    IterationsMissed,
    IterationStarted,
    JobAdded,
    JobFinished,
    JobLost,
    JobStarted,
)
from sim.units import SECOND_MS, Ms

_STALLED: Final = REDELIVERY_CAUSE.code("stalled")
_RETRY: Final = REDELIVERY_CAUSE.code("retry")
_STALLED_LIMIT: Final = DROP_REASON.code("stalled_limit")


def _doc(doc: str, cite: str) -> dict[str, str]:
    return {"doc": doc, "cite": cite}


@dataclass(frozen=True)
class StallParams:
    """BullMQ's stalled-job numbers. CVSA sets none of them, so the defaults apply (reference
    §1.2: "lock 30 s renewed every 15 s, stalled check every 30 s, maxStalledCount 1")."""

    lock_ms: Ms = field(
        default=30 * SECOND_MS, metadata=_doc("a job's lock duration", "reference §1.2")
    )
    renew_ms: Ms = field(
        default=15 * SECOND_MS,
        metadata=_doc("a live worker renews its jobs' locks this often", "reference §1.2"),
    )
    stalled_interval_ms: Ms = field(
        default=30 * SECOND_MS, metadata=_doc("the stalled check's period", "reference §1.2")
    )
    max_stalled_count: int = field(
        default=1,
        metadata=_doc("stalls a job survives; one more and it fails", "reference §1.2"),
    )


class JobFailed(Exception):
    """Raised by a processor to fail its job (logged as ``ok = 0``). Any other exception is a bug
    in the model and aborts the run."""


class Job:
    """One job: what to run, with which data, and where it stands.

    A plain class, not a dataclass: mypyc compiles a dataclass's ``__init__`` as the
    interpreted function the dataclass decorator generates, one interpreted frame per job."""

    __slots__ = (
        "data",
        "deliveries",
        "due_ms",
        "id",
        "name",
        "name_idx",
        "priority",
        "processor",
        "result",
        "scheduler",
        "stalled",
        "started_ms",
    )

    def __init__(
        self,
        id: int,
        name: str,
        name_idx: int,
        processor: Callable[[Job], Coroutine[Any, Any, Any]],
        data: Any,
        priority: int | None,
        due_ms: Ms,
        scheduler: JobScheduler | None = None,
    ) -> None:
        self.id = id
        self.name = name
        self.name_idx = name_idx
        self.processor = processor
        self.data = data
        self.priority = priority
        self.due_ms = due_ms
        self.scheduler = scheduler
        self.result: Any = None
        self.deliveries = 0
        """How many times a worker took it (BullMQ ``attemptsStarted``)."""
        self.stalled = 0
        """How many times the stalled check found it (BullMQ ``stc``)."""
        self.started_ms: Ms = 0
        """When its current delivery started (its lock's first renewal counts from here)."""

    def __repr__(self) -> str:
        return f"Job(id={self.id}, name={self.name!r}, due_ms={self.due_ms})"


class Abandoned:
    """A job whose worker died: when its lock expires, whether a stalled check has marked it."""

    __slots__ = ("job", "lock_expires_ms", "marked")

    def __init__(self, job: Job, lock_expires_ms: Ms, marked: bool) -> None:
        self.job = job
        self.lock_expires_ms = lock_expires_ms
        self.marked = marked


IdleHint = Callable[[Ms], Awaitable[Ms]]
"""``idle_until(now)``: a time before which every iteration is provably idle, given the state now.

Returning ``now`` (or less) means "may have work now". The hint must only promise idleness for
iterations that would log nothing and schedule nothing.
"""


@dataclass(eq=False)
class Queue:
    """A named queue with a worker pool (BullMQ Queue + Worker with ``concurrency``)."""

    engine: Engine
    name: str
    concurrency: int
    name_idx: int = 0
    active: int = 0
    wait: deque[Job] = field(default_factory=deque)
    prioritized: list[tuple[int, int, Job]] = field(default_factory=list)
    paused: bool = False
    running: dict[int, tuple[Job, Process]] = field(default_factory=dict)
    stall: StallParams | None = None
    """The stalled check (:meth:`check_stalled`); None: a crash loses its running jobs."""
    retry_delay_ms: Ms | None = None
    """Failed jobs come back this much later (:meth:`retry_failed`); None: they finish."""
    abandoned: list[Abandoned] = field(default_factory=list)
    """Jobs whose worker died, still active, waiting for the stalled check (oldest first)."""
    _counter: int = 0
    _serial: int = 0
    _first_check_ms: Ms = 0
    """The live worker's first stalled check that runs (its checks follow every interval)."""
    _last_check_ms: Ms | None = None
    """The last check a dead worker ran (BullMQ's ``stalled-check`` key lives an interval)."""
    _check_gen: int = 0
    """Bumped when a worker dies: the check timers it armed do nothing."""

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(
                f"queue {self.name}: concurrency must be >= 1 (got {self.concurrency})"
            )
        self.name_idx = self.engine.log.name(self.name)
        self._emit_added = self.engine.log.emitter(JobAdded)
        self._emit_started = self.engine.log.emitter(JobStarted)
        self._emit_finished = self.engine.log.emitter(JobFinished)
        self._emit_lost = self.engine.log.emitter(JobLost)
        log = self.engine.log
        self._emit_abandoned = log.emitter(JobAbandoned)
        self._emit_stalled = log.emitter(JobStalled)
        self._emit_redelivered = log.emitter(JobRedelivered)
        self._emit_retried = log.emitter(JobRetried)
        self._emit_dropped = log.emitter(JobDropped)

    def check_stalled(self, params: StallParams) -> None:
        """Turn on BullMQ's stalled check (module docstring): from now on a crash abandons its
        running jobs instead of losing them. The live worker's first check runs now (BullMQ runs
        one when a worker starts), then one every ``stalled_interval_ms``."""
        if min(params.lock_ms, params.renew_ms, params.stalled_interval_ms) <= 0:
            raise ValueError(f"queue {self.name}: stall durations must be > 0 ({params})")
        self.stall = params
        self._first_check_ms = self.engine.now

    def retry_failed(self, delay_ms: Ms) -> None:
        """Failed plain jobs are not acknowledged: each comes back ``delay_ms`` after it failed
        (BullMQ ``attempts`` with a fixed ``backoff``; periodic iterations are not retried)."""
        if delay_ms < 0:
            raise ValueError(f"queue {self.name}: retry delay must be >= 0 (got {delay_ms})")
        self.retry_delay_ms = delay_ms

    def add(
        self,
        name: str,
        processor: Callable[[Job], Coroutine[Any, Any, Any]],
        data: Any = None,
        *,
        priority: int | None = None,
        delay_ms: Ms = 0,
    ) -> Job:
        """Add a job; it runs when due and a worker is free (BullMQ ``queue.add``)."""
        eng = self.engine
        job_id = eng.next_job_id()
        job = Job(job_id, name, eng.log.name(name), processor, data, priority, eng.now + delay_ms)
        prio = NO_PRIORITY if priority is None else priority
        self._emit_added(eng.now, self.name_idx, job_id, job.name_idx, prio, job.due_ms)
        if delay_ms > 0:
            eng.call_at(job.due_ms, self._promote, job)
        else:
            self._enqueue(job)
        return job

    def _promote(self, job: Job) -> None:
        self._enqueue(job)

    def _enqueue(self, job: Job) -> None:
        if job.priority is None:
            self.wait.append(job)
        else:
            self._counter += 1
            heapq.heappush(self.prioritized, (job.priority, self._counter, job))
        self._pump()

    def every(
        self,
        name: str,
        every_ms: Ms,
        processor: Callable[[Job], Coroutine[Any, Any, Any]],
        *,
        idle_until: IdleHint | None = None,
    ) -> JobScheduler:
        """Register a job scheduler on this queue (BullMQ ``upsertJobScheduler(name, {every})``)."""
        index = self.engine.next_scheduler_index()
        return JobScheduler(self, name, every_ms, processor, index=index, idle_until=idle_until)

    def can_start_now(self) -> bool:
        """A job enqueued now would start at once."""
        return (
            not self.paused
            and self.active < self.concurrency
            and not self.wait
            and not self.prioritized
        )

    def crash(self) -> list[Job]:
        """The worker process dies: every running job is lost (logged ``JobLost``) and nothing
        starts until :meth:`resume`. Waiting and delayed jobs stay queued (they live in Redis)."""
        if self.stall is not None:
            self._abandon()
            return []
        self.paused = True
        lost = []
        eng = self.engine
        for _, (job, proc) in sorted(self.running.items()):
            eng.kill(proc)
            sched = job.scheduler
            name = job.name_idx if sched is None else sched.name_idx
            self._emit_lost(eng.now, self.name_idx, job.id, name, job.due_ms)
            if sched is not None:
                sched.forget(job.due_ms)
            lost.append(job)
        self.active -= len(self.running)
        self.running.clear()
        return lost

    def resume(self) -> None:
        """A worker is back: jobs start again. With the stalled check on, its checker starts:
        the check at once is skipped if a dead worker's last one is less than an interval ago
        (the ``stalled-check`` key, moveStalledJobsToWait), so the first runs an interval later."""
        was_paused, self.paused = self.paused, False
        stall = self.stall
        if stall is not None and was_paused:
            now, every, last = self.engine.now, stall.stalled_interval_ms, self._last_check_ms
            self._first_check_ms = now if last is None or now >= last + every else now + every
            if self.abandoned:
                self.engine.call_at(self._first_check_ms, self._check, self._check_gen)
        self._pump()

    def _last_check(self, now: Ms) -> Ms | None:
        """The live worker's last stalled check at or before ``now`` (a check at ``now`` runs
        first), or the dead one's if the live worker has run none yet."""
        assert self.stall is not None
        first = self._first_check_ms
        if now < first:
            return self._last_check_ms
        every = self.stall.stalled_interval_ms
        return first + (now - first) // every * every

    def _abandon(self) -> None:
        """The worker dies with the stalled check on: its jobs stay active with their locks
        until the last renewal plus the lock duration; a job is already marked if the last check
        came at or after its last renewal (a renewal at a check's instant runs first)."""
        stall = self.stall
        assert stall is not None
        eng = self.engine
        now = eng.now
        if not self.paused:
            self._last_check_ms = self._last_check(now)
        self.paused = True
        self._check_gen += 1
        last = self._last_check_ms
        for _, (job, proc) in sorted(self.running.items()):
            eng.kill(proc)
            sched = job.scheduler
            name = job.name_idx if sched is None else sched.name_idx
            started = job.started_ms
            renewed = started + (now - started) // stall.renew_ms * stall.renew_ms
            expires = renewed + stall.lock_ms
            marked = last is not None and last >= renewed
            self._emit_abandoned(now, self.name_idx, job.id, name, job.due_ms, expires, int(marked))
            if sched is not None:
                sched.forget(job.due_ms)
            self.abandoned.append(Abandoned(job, expires, marked))
        self.active -= len(self.running)
        self.running.clear()

    def _check(self, gen: int) -> None:
        """One stalled check (moveStalledJobsToWait): the marked jobs whose lock is gone stall;
        every other active job is marked. Armed only while abandoned jobs wait."""
        stall = self.stall
        if gen != self._check_gen or stall is None:
            return  # armed by a worker that has died since
        now = self.engine.now
        keep = []
        for entry in self.abandoned:
            if not (entry.marked and now >= entry.lock_expires_ms):
                entry.marked = True
                keep.append(entry)
                continue
            job = entry.job
            name = job.name_idx if job.scheduler is None else job.scheduler.name_idx
            job.stalled += 1
            self._emit_stalled(now, self.name_idx, job.id, name, job.stalled)
            if job.stalled > stall.max_stalled_count:
                self._emit_dropped(now, self.name_idx, job.id, name, job.deliveries, _STALLED_LIMIT)
            else:
                self._emit_redelivered(
                    now, self.name_idx, job.id, name, job.deliveries + 1, _STALLED
                )
                self._enqueue(job)
        self.abandoned = keep
        if keep:
            self.engine.call_at(now + stall.stalled_interval_ms, self._check, gen)

    def _redeliver_failed(self, job: Job) -> None:
        self._emit_redelivered(
            self.engine.now, self.name_idx, job.id, job.name_idx, job.deliveries + 1, _RETRY
        )
        self._enqueue(job)

    @property
    def waiting(self) -> int:
        return len(self.wait) + len(self.prioritized)

    def _pump(self) -> None:
        if self.paused:
            return
        while self.active < self.concurrency and (self.wait or self.prioritized):
            job = self.wait.popleft() if self.wait else heapq.heappop(self.prioritized)[2]
            self.active += 1
            self.engine.call_now(self._start, job)

    def _start(self, job: Job) -> None:
        eng = self.engine
        sched = job.scheduler
        self._serial += 1
        serial = self._serial
        job.deliveries += 1
        job.started_ms = eng.now
        proc = Process(job.processor(job), job.name, lambda v, e: self._done(job, serial, v, e))
        self.running[serial] = (job, proc)
        if sched is None:
            self._emit_started(eng.now, self.name_idx, job.id, job.name_idx, job.due_ms)
        else:
            if job.deliveries == 1:  # a redelivered iteration's next one exists already
                sched._on_start(job.due_ms)
            proc.lazy = sched.announcer(job.due_ms, proc)
        eng.start_now(proc)

    def _done(self, job: Job, serial: int, value: Any, exc: BaseException | None) -> None:
        eng = self.engine
        del self.running[serial]
        if exc is not None and not isinstance(exc, JobFailed):
            eng.fail(exc)
        job.result = value
        ok = int(exc is None)
        sched = job.scheduler
        if sched is None:
            self._emit_finished(eng.now, self.name_idx, job.id, job.name_idx, ok)
            if not ok and self.retry_delay_ms is not None:
                due = eng.now + self.retry_delay_ms
                self._emit_retried(
                    eng.now, self.name_idx, job.id, job.name_idx, job.deliveries, due
                )
                eng.call_at(due, self._redeliver_failed, job)
        else:
            sched.finished(job.due_ms, ok)
        self.active -= 1
        self._pump()


class IterationLog:
    """How the iterations of one periodic job are logged, whoever runs them (a BullMQ job
    scheduler here, seed 001's table executor in :mod:`sim.scheduler.table_runner`).

    An iteration is announced (``IterationStarted``) only when its process logs something:
    :meth:`announcer` is the process's lazy header. One that finishes without logging is idle
    and joins the current run of idle iterations (``IdleIterations``); a failed one is always
    announced."""

    def __init__(self, engine: Engine, name: str) -> None:
        self.engine = engine
        self.name = name
        log = engine.log
        self.name_idx = log.name(name)
        self._emit_idle = log.emitter(IdleIterations)
        self._emit_started = log.emitter(IterationStarted)
        self._emit_finished = log.emitter(IterationFinished)
        self._idle_first: Ms | None = None
        self._idle_last: Ms = 0
        self._idle_count = 0
        self._announced: set[Ms] = set()
        engine.finalizers.append(self.flush_idle)

    def announcer(self, due: Ms, proc: Process) -> Callable[[], None]:
        """The lazy header of the process running the iteration due at ``due``."""

        def announce() -> None:
            proc.lazy = None
            self.engine.log.lazy = None
            self.flush_idle()
            self._emit_started(self.engine.now, self.name_idx, due)
            self._announced.add(due)

        return announce

    def finished(self, due: Ms, ok: int) -> None:
        """The iteration due at ``due`` ended (``ok`` 0: it failed)."""
        if due in self._announced:
            self._announced.discard(due)
            self._emit_finished(self.engine.now, self.name_idx, due, ok)
        elif ok:
            self.add_idle(due, due, 1)
        else:
            # A failure is never idle: announce it so that it shows in the log.
            self.flush_idle()
            self._emit_started(self.engine.now, self.name_idx, due)
            self._emit_finished(self.engine.now, self.name_idx, due, ok)

    def forget(self, due: Ms) -> None:
        """The iteration due at ``due`` was lost with its process: it never finishes."""
        self._announced.discard(due)

    def add_idle(self, first: Ms, last: Ms, n: int) -> None:
        if self._idle_first is None:
            self._idle_first = first
        self._idle_last = last
        self._idle_count += n

    def flush_idle(self) -> None:
        """Write the current idle streak, if any."""
        if self._idle_first is not None:
            first, last, n = self._idle_first, self._idle_last, self._idle_count
            self._idle_first, self._idle_count = None, 0
            self._emit_idle(self.engine.now, self.name_idx, first, last, n)


class JobScheduler(IterationLog):
    """BullMQ ``upsertJobScheduler(name, {every})`` on a queue (module docstring)."""

    def __init__(
        self,
        queue: Queue,
        name: str,
        every_ms: Ms,
        processor: Callable[[Job], Coroutine[Any, Any, Any]],
        *,
        index: int,
        idle_until: IdleHint | None = None,
    ) -> None:
        if every_ms <= 0:
            raise ValueError(f"job scheduler {name}: every must be > 0 ms (got {every_ms})")
        super().__init__(queue.engine, name)
        self.queue = queue
        self.every_ms = every_ms
        self.processor = processor
        self.index = index
        self.idle_until = idle_until
        self._emit_missed = self.engine.log.emitter(IterationsMissed)
        first = self.engine.now
        self.offset_ms = first % every_ms
        self.next_due: Ms = first
        self.engine.push_iteration(first, index, self)

    def on_due(self) -> None:
        """The pending iteration is due: it joins the queue's wait list (no priority, §1.4)."""
        job = Job(
            -1, self.name, self.name_idx, self.processor, None, None, self.next_due, scheduler=self
        )
        self.queue._enqueue(job)

    async def idle_horizon(self, now: Ms) -> Ms:
        """The first slot not proven idle: ``next_due`` unless the hint proves it idle and a
        worker would take it at once (a busy queue would delay it, which is not idle)."""
        due = self.next_due
        if self.idle_until is None or not self.queue.can_start_now():
            return due
        work_from = await self.idle_until(now)
        if work_from <= due:
            return due
        every = self.every_ms
        return due + -(-(work_from - due) // every) * every

    def skip_idle_before(self, horizon: Ms) -> None:
        """Count the iterations due in ``[next_due, horizon)`` as idle (they start on time)."""
        due, every = self.next_due, self.every_ms
        if horizon <= due:
            return
        n = -(-(horizon - due) // every)
        self.add_idle(due, due + (n - 1) * every, n)
        self.next_due = due + n * every

    def _on_start(self, due: Ms) -> None:
        """Create the next iteration as this one starts (getJobSchedulerEveryNextMillis.lua)."""
        now = self.engine.now
        every = self.every_ms
        nxt = due + every
        if nxt < now:
            nxt = (now // every) * every + every + self.offset_ms
            missed = (nxt - due) // every - 1
            self._emit_missed(now, self.name_idx, missed, nxt)
        self.next_due = nxt
        self.engine.push_iteration(nxt, self.index, self)
