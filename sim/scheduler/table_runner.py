"""Seed 001's executor: the periodic jobs run from the job table (``[periodic] policy = "table"``).

Every deployment has one :class:`TableExecutor`; the one holding the lock
(:class:`sim.ports.SchedulerLock`) runs the table, the others try again every ``lock_retry``.
On taking the lock it marks the runs a dead predecessor left ``running`` as failed (中断恢复),
then works in rounds: read the table, start every due job as a process of its own (the rules of
:mod:`sim.cvsa.job_table`: due, trigger, slot), and sleep until the earliest next due time. A run
ends by writing its status and the job's next run time (the end plus the period: no catch-up,
no re-entry), which also wakes the executor for that time. Rounds are event-driven -- a round
happens when a job becomes due, a request arrives or a run ends, on the ``poll`` grid if one is
set -- so an executor that polls and finds nothing due is not simulated round by round.

Runs are logged as iterations (:class:`sim.engine.IterationLog`), so every periodic metric reads
both policies alike; the lock, requests, skips and interrupted runs have kinds of their own
(:mod:`sim.events.table_kinds`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from datetime import tzinfo
from functools import partial
from typing import Any

from sim.cvsa.job_table import (
    INTERRUPTED_ERROR,
    JobSpec,
    JobState,
    SkippedRun,
    TableParams,
    first_run_at,
    is_due,
    next_run_after,
    skipped_next,
    slot_key,
    trigger_of,
    wake_at,
)
from sim.cvsa.vocabulary import RunStatus, RunTrigger
from sim.engine import Engine, IterationLog, Job, JobFailed, Process
from sim.events.table_kinds import (
    RUN_TRIGGER,
    ExecutorLockLost,
    ExecutorLockTaken,
    JobRunInterrupted,
    JobRunRequested,
    JobRunSkipped,
    ManualRunStarted,
)
from sim.ports import JobTable
from sim.scenario.periodic import PeriodicSection
from sim.units import Ms

Processor = Callable[[Job], Coroutine[Any, Any, Any]]


class TableExecutor:
    """One deployment's executor of the job table (module docstring)."""

    def __init__(
        self,
        engine: Engine,
        table: JobTable,
        holder: str,
        specs: Sequence[JobSpec],
        processors: Mapping[str, Processor],
        logs: Mapping[str, IterationLog],
        params: TableParams,
        tz: tzinfo,
    ) -> None:
        self.engine = engine
        self.table = table
        self.holder = holder
        self.specs = list(specs)
        self.processors = dict(processors)
        self.logs = logs
        self.params = params
        self.tz = tz
        self.holding = False
        log = engine.log
        self._holder_idx = log.name(holder)
        self._acquired = log.emitter(ExecutorLockTaken)
        self._lost = log.emitter(ExecutorLockLost)
        self._interrupted = log.emitter(JobRunInterrupted)
        self._run_started = log.emitter(ManualRunStarted)
        self._requested = log.emitter(JobRunRequested)
        self._skipped = log.emitter(JobRunSkipped)
        self._main: Process | None = None
        self._round: Process | None = None
        self._again = False
        self._wake_ms: Ms | None = None
        self._generation = 0
        self._runs: dict[str, tuple[Process, Ms]] = {}  # job -> its run's process, planned time

    def start(self) -> None:
        """The deployment's process starts: it registers the jobs and contends for the lock."""
        self._main = self.engine.spawn(self._serve(), name=f"table:{self.holder}")

    async def _serve(self) -> None:
        eng, table = self.engine, self.table
        for spec in self.specs:
            await table.register_job(spec, first_run_at(spec, eng.now, self.tz))
        while not await table.try_lock(self.holder):
            await eng.sleep(self.params.lock_retry_ms)
        self.holding = True
        now = eng.now
        self._acquired(now, self._holder_idx)
        name = eng.log.name
        for run in await table.interrupt_runs(now, INTERRUPTED_ERROR):
            self._interrupted(
                now, name(run.job), run.id, name(run.holder), run.planned_ms, run.started_at_ms
            )
        self.wake(eng.now)

    async def _rounds(self) -> None:
        """Start every due job, again while something asked for another round meanwhile; then
        wait for the earliest due time."""
        while True:
            now = self.engine.now
            waiting: list[JobState] = []
            for job in await self.table.jobs():
                if job.name not in self.processors or job.name in self._runs:
                    continue
                if is_due(job, now):
                    await self._start(job, now)
                else:
                    waiting.append(job)
            if not self._again:
                break
            # Asked for again while this round ran (or before it started: on the concurrent
            # engine a spawned round starts in a task of its own, later).
            self._again = False
        wake = wake_at(waiting, self.engine.now, self.params.poll_ms)
        if wake is not None:
            self.wake(wake)

    async def _start(self, job: JobState, now: Ms) -> None:
        """Start ``job``, found due at ``now`` (the round's read); the run starts when its row
        is written, later than ``now`` if the earlier writes took time."""
        trigger = trigger_of(job, now)
        planned = job.next_run_at_ms
        if trigger is RunTrigger.MANUAL and job.run_requested_at_ms is not None:
            planned = job.run_requested_at_ms
        started = self.engine.now
        run_id = await self.table.start_run(
            job.name,
            trigger,
            planned,
            started,
            self.holder,
            partial(slot_key, job, trigger, started),
        )
        if run_id is None:  # another executor's run is in progress: no re-entry
            return
        eng = self.engine
        log = self.logs[job.name]
        if trigger is RunTrigger.MANUAL:
            self._run_started(eng.now, log.name_idx, run_id, RUN_TRIGGER.code(trigger), planned)
        proc = eng.spawn(
            self._run(job, trigger, run_id, planned),
            name=job.name,
            on_done=partial(self._ended, job.name, planned),
        )
        proc.lazy = log.announcer(planned, proc)
        self._runs[job.name] = (proc, planned)

    async def _run(
        self, job: JobState, trigger: RunTrigger, run_id: int, planned: Ms
    ) -> tuple[int, Ms]:
        eng = self.engine
        processor = self.processors[job.name]
        status, error = RunStatus.SUCCEEDED, ""
        try:
            await processor(
                Job(run_id, job.name, self.logs[job.name].name_idx, processor, None, None, planned)
            )
        except JobFailed as exc:
            status, error = RunStatus.FAILED, str(exc) or type(exc).__name__
        ended = eng.now
        nxt = next_run_after(job, ended, trigger, self.tz)
        await self.table.finish_run(run_id, status, ended, nxt, error, self.params.runs_kept)
        return int(status is RunStatus.SUCCEEDED), nxt

    def _ended(self, name: str, planned: Ms, value: Any, exc: BaseException | None) -> None:
        if exc is not None:
            self.engine.fail(exc)
            return
        ok, nxt = value
        del self._runs[name]
        self.logs[name].finished(planned, ok)
        self.wake(nxt)

    # -- waking -----------------------------------------------------------------------------
    def wake(self, t_ms: Ms) -> None:
        """Hold a round at ``t_ms`` (on the poll grid), unless one is due before then. An
        executor that does not hold the lock ignores it."""
        eng = self.engine
        t = max(t_ms, eng.now)
        poll = self.params.poll_ms
        if poll > 0:
            t = -(-t // poll) * poll
        if not self.holding or (self._wake_ms is not None and self._wake_ms <= t):
            return
        self._wake_ms = t
        self._generation += 1
        eng.call_at(t, self._on_wake, self._generation)

    def _on_wake(self, generation: int) -> None:
        if generation != self._generation or not self.holding:
            return
        self._wake_ms = None
        if self._round is not None:
            self._again = True
            return
        self._round = self.engine.spawn(
            self._rounds(), name=f"round:{self.holder}", on_done=self._round_ended
        )

    def _round_ended(self, value: Any, exc: BaseException | None) -> None:
        self._round = None
        if exc is not None:
            self.engine.fail(exc)

    # -- operators --------------------------------------------------------------------------
    async def request(self, name: str) -> bool:
        """立即执行 ``name``; True when queued, False when merged."""
        eng = self.engine
        queued = await self.table.request_run(name, eng.now)
        self._requested(eng.now, self.logs[name].name_idx, int(queued))
        return queued

    async def skip(self, name: str) -> SkippedRun | None:
        """跳过本次 ``name``: its next run moves on by one period. None while it runs (logged
        as a skip of run 0 that moved nothing)."""
        eng = self.engine
        skipped = await self.table.skip_run(
            name, eng.now, self.params.runs_kept, partial(skipped_next, tz=self.tz)
        )
        idx = self.logs[name].name_idx
        if skipped is None:
            nxt = next(j for j in await self.table.jobs() if j.name == name).next_run_at_ms
            self._skipped(eng.now, idx, 0, nxt, nxt)
        else:
            self._skipped(eng.now, idx, *skipped)
        return skipped

    # -- faults -----------------------------------------------------------------------------
    async def crash(self) -> None:
        """The process dies: its runs stop where they are (left ``running`` in the table), and
        the lock goes with its connection."""
        eng = self.engine
        self._generation += 1
        self._wake_ms = None
        for name, (proc, planned) in sorted(self._runs.items()):
            eng.kill(proc)
            self.logs[name].forget(planned)
        self._runs.clear()
        for serving in (self._main, self._round):
            if serving is not None:
                eng.kill(serving)
        self._main = self._round = None
        self._again = False
        # Logged first: on the concurrent engine another deployment may take the lock while
        # the drop is in flight. Dropped always: a try in flight when the process died may
        # have taken it without this process knowing.
        if self.holding:
            self.holding = False
            self._lost(eng.now, self._holder_idx)
        await self.table.drop_lock(self.holder)


def table_params(periodic: PeriodicSection) -> TableParams:
    """The runner's numbers from ``[periodic]``."""
    return TableParams(poll_ms=periodic.poll, lock_retry_ms=periodic.lock_retry)
