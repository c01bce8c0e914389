"""Seed 001's job table, runs table and executor lock in memory (the ``JobTable`` port).

Plain Python, not compiled: a round touches a handful of rows. The memory and reference stores
both use it (:func:`sim.backends.make_backends`); the SQL stores hold the same tables
(:mod:`sim.backends.sql_jobs`). All pass the contract suite (``sim.testing.contracts``).
"""

from __future__ import annotations

from collections.abc import Callable

from sim.cvsa.job_table import JobSpec, JobState, RunRow, SkippedRun, request_queues
from sim.cvsa.vocabulary import RunStatus, RunTrigger
from sim.units import Ms


class MemoryJobTable:
    """``scheduled_job`` and ``scheduled_job_run`` as dicts; the lock as its holder's name."""

    def __init__(self) -> None:
        self._jobs: dict[str, JobState] = {}  # in registration order (dicts keep it)
        self._runs: dict[int, RunRow] = {}  # by id, ascending
        self._last_run_id = 0
        self._holder: str | None = None

    async def jobs(self) -> list[JobState]:
        return list(self._jobs.values())

    async def runs(self, job: str) -> list[RunRow]:
        return [run for run in self._runs.values() if run.job == job]

    async def register_job(self, spec: JobSpec, next_run_at_ms: Ms) -> bool:
        if spec.name in self._jobs:
            return False
        self._jobs[spec.name] = JobState(
            spec.name, spec.every_ms, spec.cron, spec.enabled, next_run_at_ms, None, None
        )
        return True

    def _new_run_id(self) -> int:
        self._last_run_id += 1
        return self._last_run_id

    async def start_run(
        self,
        job: str,
        trigger: RunTrigger,
        planned_ms: Ms,
        now_ms: Ms,
        holder: str,
        slot_of: Callable[[int], str],
    ) -> int | None:
        state = self._jobs[job]
        if state.running_run_id is not None:
            return None
        run_id = self._new_run_id()
        self._runs[run_id] = RunRow(
            run_id,
            job,
            trigger,
            slot_of(run_id),
            RunStatus.RUNNING,
            planned_ms,
            now_ms,
            None,
            holder,
            "",
        )
        self._jobs[job] = state._replace(run_requested_at_ms=None, running_run_id=run_id)
        return run_id

    async def finish_run(
        self,
        run_id: int,
        status: RunStatus,
        now_ms: Ms,
        next_run_at_ms: Ms,
        error: str,
        runs_kept: int,
    ) -> bool:
        run = self._runs.get(run_id)
        if run is None or run.status is not RunStatus.RUNNING:
            return False
        self._runs[run_id] = run._replace(status=status, finished_at_ms=now_ms, error=error)
        state = self._jobs[run.job]
        self._jobs[run.job] = state._replace(running_run_id=None, next_run_at_ms=next_run_at_ms)
        self._prune(run.job, runs_kept)
        return True

    def _prune(self, job: str, runs_kept: int) -> None:
        finished = [
            r.id for r in self._runs.values() if r.job == job and r.status is not RunStatus.RUNNING
        ]
        for run_id in finished[: max(0, len(finished) - runs_kept)]:
            del self._runs[run_id]

    async def request_run(self, job: str, now_ms: Ms) -> bool:
        state = self._jobs[job]
        if not request_queues(state):  # merged with a pending request or a running run
            return False
        self._jobs[job] = state._replace(run_requested_at_ms=now_ms)
        return True

    async def skip_run(
        self, job: str, now_ms: Ms, runs_kept: int, next_of: Callable[[JobState], Ms]
    ) -> SkippedRun | None:
        state = self._jobs[job]
        if state.running_run_id is not None:
            return None
        nxt = next_of(state)
        run_id = self._new_run_id()
        self._runs[run_id] = RunRow(
            run_id,
            job,
            RunTrigger.SKIP,
            "",
            RunStatus.SKIPPED,
            state.next_run_at_ms,
            now_ms,
            now_ms,
            "",
            "",
        )
        self._jobs[job] = state._replace(next_run_at_ms=nxt)
        self._prune(job, runs_kept)
        return SkippedRun(run_id, state.next_run_at_ms, nxt)

    async def interrupt_runs(self, now_ms: Ms, error: str) -> list[RunRow]:
        running = [r for r in self._runs.values() if r.status is RunStatus.RUNNING]
        for run in running:
            self._runs[run.id] = run._replace(
                status=RunStatus.FAILED, finished_at_ms=now_ms, error=error
            )
            self._jobs[run.job] = self._jobs[run.job]._replace(running_run_id=None)
        return running

    async def try_lock(self, holder: str) -> bool:
        if self._holder is None:
            self._holder = holder
        return self._holder == holder

    async def drop_lock(self, holder: str) -> None:
        if self._holder == holder:
            self._holder = None
