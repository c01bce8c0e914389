"""Seed 001's table-driven periodic-job runner, as rules (issue 27).

Seed 001 (``runbook/schedules.md``, "调度语义") runs periodic jobs from a table instead of
BullMQ job schedulers: every job is a row of ``scheduled_job`` with its period or cron
expression and its ``next_run_at``; one executor, the process holding a database lock, reads the
table each round and starts the jobs that are due; each run is a row of ``scheduled_job_run``.
Its rules, each one function here, called by the executor (:mod:`sim.scheduler.table_runner`)
and by every store's job table (:mod:`sim.ports` ``JobTable``):

* **due** (到期): enabled and ``next_run_at <= now``, or ``run_requested_at`` set; never while a
  run of the same job is running (同一个任务不会重入) -- :func:`is_due`;
* **next run** (下次运行时间): an interval job's is the end of this run plus the period, as the
  self-rescheduling loop before it (no catch-up of missed periods); a cron job's is the next
  match after the end, in the server's local time zone -- :func:`next_run_after`;
* **run now** (立即执行) sets only ``run_requested_at``; a request while one is pending or a run
  is running is merged (``queued: false``) and the next run time does not change --
  :func:`request_queues`;
* **skip** (跳过本次) moves the next run on by one period and records a ``trigger=skip`` run --
  :func:`skipped_next`;
* **slot** (时间槽): ``floor(now / every)`` for an interval job, the planned time for a cron job,
  ``manual:<runId>`` for a requested run: the idempotency key a run's work is enqueued with --
  :func:`slot_key`;
* **interrupted runs** (中断恢复): the process that takes the lock marks a run its predecessor
  left ``running`` as ``failed`` with :data:`INTERRUPTED_ERROR`; the job's ``next_run_at`` was
  never moved by that run (it moves when a run ends), so the rules above decide when it runs
  next.

Cron expressions have five fields (分 时 日 月 周) and are matched by ``cronsim`` (libraries.md
"Cron"), which follows cronie on days that lose or repeat an hour: a fixed-time job whose time
falls in a skipped hour runs right after the jump, once on a repeated hour; a job with a
wildcard hour runs in both copies of a repeated hour.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Final, NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from sim.cvsa.params import Params, field_doc
from sim.cvsa.vocabulary import RunStatus, RunTrigger
from sim.units import SECOND_MS, Ms

INTERRUPTED_ERROR: Final = "调度器重启,上次运行中断"
"""The error a taken-over ``running`` run gets (seed 001 "中断恢复")."""


def periodic_periods_ms(params: Params) -> dict[str, Ms]:
    """The scheduler's periodic jobs and their periods, in the deployed registration order
    (reference §1.3): the jobs a run registers under either periodic policy."""
    return {
        "snapshotTick": params.snapshot_tick_every_ms,
        "bulkSnapshotTick": params.bulk_tick_every_ms,
        "dispatchMilestoneSnapshots": params.milestone_dispatch_every_ms,
        "dispatchRegularSnapshots": params.regular_dispatch_every_ms,
        "dispatchArchiveSnapshots": params.archive_dispatch_every_ms,
        "scheduleCleanup": params.cleanup_every_ms,
    }


PERIODIC_JOBS: Final = tuple(periodic_periods_ms(Params()))
"""The periodic jobs' names (BullMQ job-scheduler ids and ``scheduled_job`` keys alike)."""
WORKER_JOBS: Final = ("snapshotVideo", "bulkSnapshotVideo")
"""The snapshot workers' job names: the single path (reference §9) and the bulk path (§10)."""
SNAPSHOT_QUEUE: Final = "snapshot"
"""The queue the workers' jobs wait on (a second deployment's is ``snapshot#2``)."""


@dataclass(frozen=True)
class TableParams:
    """The runner's numbers: from seed 001 where it states them, the simulator's otherwise."""

    runs_kept: int = field(
        default=50,
        metadata=field_doc("runs kept per job in the runs table", "seed 001 组成: 50 条"),
    )
    poll_ms: Ms = field(
        default=0,
        metadata=field_doc(
            "the executor's round period (schedulerIntervalMs); 0 = a round at the earliest "
            "due time",
            "seed 001 补充几点 (schedulerIntervalMs); the seed gives no default",
        ),
    )
    lock_retry_ms: Ms = field(
        default=5 * SECOND_MS,
        metadata=field_doc(
            "how often a process without the lock tries to take it",
            "the simulator's choice (seed 001 names no period)",
        ),
    )


class JobSpec(NamedTuple):
    """A job as registered (``registerScheduledJob``'s defaults, with a scenario's overrides):
    either ``every_ms`` (interval) or ``cron`` (five fields)."""

    name: str
    every_ms: Ms | None
    cron: str | None
    enabled: bool


class JobState(NamedTuple):
    """A row of ``scheduled_job`` as a round reads it."""

    name: str
    every_ms: Ms | None
    cron: str | None
    enabled: bool
    next_run_at_ms: Ms
    run_requested_at_ms: Ms | None
    running_run_id: int | None
    """The run in progress (status ``running``), or None."""


class RunRow(NamedTuple):
    """A row of ``scheduled_job_run``."""

    id: int
    job: str
    trigger: RunTrigger
    slot: str
    status: RunStatus
    planned_ms: Ms
    started_at_ms: Ms
    finished_at_ms: Ms | None
    holder: str
    error: str


class SkippedRun(NamedTuple):
    """What 跳过本次 did: the ``trigger=skip`` run recorded, and the next run time it moved."""

    run_id: int
    was_ms: Ms
    next_run_at_ms: Ms


class CronError(ValueError):
    """A cron expression or time zone that cannot be used; the message says why."""


def zone(name_or_offset_ms: str | Ms) -> tzinfo:
    """The server's local time zone: an IANA name (``"Europe/Berlin"``) or a fixed offset."""
    if isinstance(name_or_offset_ms, int):
        return timezone(timedelta(milliseconds=name_or_offset_ms))
    try:
        return ZoneInfo(name_or_offset_ms)
    except (ZoneInfoNotFoundError, ValueError):
        raise CronError(
            f"unknown time zone {name_or_offset_ms!r} (an IANA name such as "
            f"'Asia/Shanghai' or 'Europe/Berlin')"
        ) from None


def check_cron(expr: str) -> None:
    """Raise :class:`CronError` unless ``expr`` is a five-field cron expression."""
    if len(expr.split()) != 5:
        raise CronError(f"cron {expr!r} must have five fields (minute hour day month weekday)")
    try:
        CronSim(expr, datetime(2031, 1, 1, tzinfo=UTC))
    except CronSimError as exc:
        raise CronError(f"cron {expr!r}: {exc}") from None


def cron_next(expr: str, after_ms: Ms, tz: tzinfo) -> Ms:
    """The first match of ``expr`` strictly after ``after_ms``, read on the clock of ``tz``."""
    start = datetime.fromtimestamp(after_ms / 1000, tz)
    return int(next(CronSim(expr, start)).timestamp() * 1000)


def first_run_at(spec: JobSpec, now_ms: Ms, tz: tzinfo) -> Ms:
    """``next_run_at`` of a newly registered job: an interval job runs at once (as the timer it
    replaces did), a cron job at its first match after registration."""
    if spec.cron is not None:
        return cron_next(spec.cron, now_ms - 1, tz)
    return now_ms


def is_due(job: JobState, now_ms: Ms) -> bool:
    """到期: ``enabled and next_run_at <= now``, or a run was requested; not while one runs."""
    if job.running_run_id is not None:
        return False
    return job.run_requested_at_ms is not None or (job.enabled and job.next_run_at_ms <= now_ms)


def trigger_of(job: JobState, now_ms: Ms) -> RunTrigger:
    """A due job runs for its schedule when it is enabled and due; otherwise it was requested."""
    if job.enabled and job.next_run_at_ms <= now_ms:
        return RunTrigger.SCHEDULE
    return RunTrigger.MANUAL


def next_run_after(job: JobState, ended_ms: Ms, trigger: RunTrigger, tz: tzinfo) -> Ms:
    """下次运行时间 after a run that ended at ``ended_ms``: end + period, or the next cron match.
    A requested run leaves it unchanged (立即执行不改变下次运行时间)."""
    if trigger is RunTrigger.MANUAL:
        return job.next_run_at_ms
    if job.cron is not None:
        return cron_next(job.cron, ended_ms, tz)
    assert job.every_ms is not None
    return ended_ms + job.every_ms


def skipped_next(job: JobState, tz: tzinfo) -> Ms:
    """跳过本次: the next run time moved on by one period (the next match for cron). Not while
    the job runs: the run in progress is "this run", and its end sets the next run time."""
    if job.cron is not None:
        return cron_next(job.cron, job.next_run_at_ms, tz)
    assert job.every_ms is not None
    return job.next_run_at_ms + job.every_ms


def request_queues(job: JobState) -> bool:
    """立即执行: does a request queue a run (``queued: true``)? Not while one is pending or a run
    is running: the request is merged."""
    return job.run_requested_at_ms is None and job.running_run_id is None


def slot_key(job: JobState, trigger: RunTrigger, now_ms: Ms, run_id: int) -> str:
    """时间槽: the idempotency key of a run's work."""
    if trigger is RunTrigger.MANUAL:
        return f"manual:{run_id}"
    if job.cron is not None:
        return str(job.next_run_at_ms)
    assert job.every_ms is not None
    return str(now_ms // job.every_ms)


def wake_at(jobs: Iterable[JobState], now_ms: Ms, poll_ms: Ms) -> Ms | None:
    """When the executor's next round should run: the earliest time a job not running becomes
    due (``now`` for a pending request), on the round grid when rounds are periodic; None if
    no job can become due without a run ending or a request."""
    earliest: Ms | None = None
    for job in jobs:
        if job.running_run_id is not None:
            continue
        if job.run_requested_at_ms is not None:
            t = now_ms
        elif job.enabled:
            t = max(job.next_run_at_ms, now_ms)
        else:
            continue
        earliest = t if earliest is None else min(earliest, t)
    if earliest is None or poll_ms <= 0:
        return earliest
    return -(-earliest // poll_ms) * poll_ms
