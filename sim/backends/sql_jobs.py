"""Seed 001's job table, runs table and executor lock in SQL, written once for SQLite and
PostgreSQL (the ``JobTable`` port of :mod:`sim.ports`).

Seed 001 (``../shared/seeds/001_*.txt``, "组成" and "调度语义") drives every periodic job from
two tables, kept here with the columns the executor reads:

* ``scheduled_job``: one row per job: ``name`` (the key), ``ord`` (registration order: a round
  reads the jobs in it), ``every_ms`` or ``cron`` (the schedule), ``enabled``, ``next_run_at``,
  ``run_requested_at`` (立即执行, NULL when none is pending) and ``running_run`` (the run in
  progress, NULL when none: the row itself forbids re-entry, 同一个任务不会重入);
* ``scheduled_job_run``: one row per run: ``id``, ``job``, ``trigger`` and ``status`` (the words
  of :class:`~sim.cvsa.vocabulary.RunTrigger` and :class:`~sim.cvsa.vocabulary.RunStatus`),
  ``slot`` (时间槽), ``planned_at``, ``started_at``, ``finished_at`` (NULL while running),
  ``holder`` (the executor that started it) and ``error``. Each job keeps its newest finished
  runs only ("每个任务保留最近 50 条": ``runs_kept``, :class:`sim.cvsa.job_table.TableParams`).

Instants are ``bigint`` epoch milliseconds, as in :mod:`sim.backends.sql`. Every port method is
one transaction, so a run row and its job row never disagree.

The executor lock: the seed takes ``pg_try_advisory_lock`` on a dedicated connection, and a
process that dies loses it with its connection; :class:`sim.backends.postgres.PostgresStore`
does exactly that. SQLite has no session locks, so here the lock is a one-row table
``scheduler_lock`` naming its holder (``drop_lock`` models the holder's death).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sim.backends.sql import Row, SqlStore, bridged, marks
from sim.cvsa.job_table import JobSpec, JobState, RunRow, SkippedRun
from sim.cvsa.vocabulary import RunStatus, RunTrigger
from sim.units import Ms

JOB_SCHEMA = """
CREATE TABLE IF NOT EXISTS scheduled_job (
    name TEXT PRIMARY KEY,
    ord INTEGER NOT NULL,
    every_ms BIGINT,
    cron TEXT,
    enabled BOOLEAN NOT NULL,
    next_run_at BIGINT NOT NULL,
    run_requested_at BIGINT,
    running_run BIGINT
);
CREATE TABLE IF NOT EXISTS scheduled_job_run (
    id {id_column},
    job TEXT NOT NULL,
    trigger TEXT NOT NULL,
    slot TEXT NOT NULL,
    status TEXT NOT NULL,
    planned_at BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    finished_at BIGINT,
    holder TEXT NOT NULL,
    error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS scheduled_job_run_job_id ON scheduled_job_run (job, id);
"""
"""The two tables (``enabled`` is stored as 0/1 by SQLite); the dialect fills in the id."""

LOCK_SCHEMA = """
CREATE TABLE IF NOT EXISTS scheduler_lock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    holder TEXT NOT NULL
);
"""
"""The executor lock as a row (SQLite: no session-scoped locks to hang it on)."""

_JOB_COLUMNS = "name, every_ms, cron, enabled, next_run_at, run_requested_at, running_run"
_RUN_COLUMNS = "id, job, trigger, slot, status, planned_at, started_at, finished_at, holder, error"
_RUNNING = f"'{RunStatus.RUNNING.value}'"
_TRIGGER_OF: dict[str, RunTrigger] = {t.value: t for t in RunTrigger}
_STATUS_OF: dict[str, RunStatus] = {s.value: s for s in RunStatus}


def _job(row: Row) -> JobState:
    def opt(v: Any) -> int | None:
        return None if v is None else int(v)

    return JobState(
        str(row[0]),
        opt(row[1]),
        row[2],
        bool(row[3]),
        int(row[4]),
        opt(row[5]),
        opt(row[6]),
    )


def _run(row: Row) -> RunRow:
    return RunRow(
        int(row[0]),
        str(row[1]),
        _TRIGGER_OF[row[2]],
        str(row[3]),
        _STATUS_OF[row[4]],
        int(row[5]),
        int(row[6]),
        None if row[7] is None else int(row[7]),
        str(row[8]),
        str(row[9]),
    )


class _JobRunning(Exception):
    """start_run found a run of the job running: roll its transaction back."""


class SqlJobTable(SqlStore):
    """:class:`sim.ports.JobTable` in SQL, on :class:`SqlStore`'s primitives; a dialect store
    inherits it. The lock defaults to the ``scheduler_lock`` row; PostgreSQL overrides
    :meth:`try_lock`, :meth:`drop_lock` and :attr:`LOCK_SCHEMA`."""

    LOCK_SCHEMA = LOCK_SCHEMA

    def schema_statements(self) -> list[str]:
        ddl = (JOB_SCHEMA + self.LOCK_SCHEMA).format(id_column=self.ID_COLUMN)
        return [*super().schema_statements(), *(s.strip() for s in ddl.split(";") if s.strip())]

    # -- JobReads --------------------------------------------------------------------------
    @bridged
    async def jobs(self) -> list[JobState]:
        # ord ties (two first registrations at once on PostgreSQL) fall back to the name.
        rows = await self._all(f"SELECT {_JOB_COLUMNS} FROM scheduled_job ORDER BY ord, name")
        return [_job(r) for r in rows]

    @bridged
    async def runs(self, job: str) -> list[RunRow]:
        rows = await self._all(
            f"SELECT {_RUN_COLUMNS} FROM scheduled_job_run WHERE job = ? ORDER BY id", (job,)
        )
        return [_run(r) for r in rows]

    # -- JobWrites -------------------------------------------------------------------------
    @bridged
    async def register_job(self, spec: JobSpec, next_run_at_ms: Ms) -> bool:
        # A later registration keeps the row and its times (seed 001 "登记与用户修改").
        changed = await self._run(
            "INSERT INTO scheduled_job (name, ord, every_ms, cron, enabled, next_run_at) "
            "VALUES (?, (SELECT COALESCE(max(ord), 0) + 1 FROM scheduled_job), ?, ?, ?, ?) "
            "ON CONFLICT (name) DO NOTHING",
            (spec.name, spec.every_ms, spec.cron, spec.enabled, next_run_at_ms),
        )
        return changed > 0

    @bridged
    async def start_run(
        self,
        job: str,
        trigger: RunTrigger,
        planned_ms: Ms,
        now_ms: Ms,
        holder: str,
        slot_of: Callable[[int], str],
    ) -> int | None:
        # No re-entry (seed 001 "调度语义"), decided by the job row: the guarded UPDATE claims it
        # (PostgreSQL: a concurrent claim waits on the row lock, then sees running_run set).
        try:
            async with self._tx():
                row = await self._one(
                    "INSERT INTO scheduled_job_run (job, trigger, slot, status, planned_at, "
                    f"started_at, finished_at, holder, error) VALUES (?, ?, '', {_RUNNING}, ?, "
                    "?, NULL, ?, '') RETURNING id",
                    (job, trigger.value, planned_ms, now_ms, holder),
                )
                assert row is not None
                run_id = int(row[0])
                claimed = await self._run(
                    "UPDATE scheduled_job SET running_run = ?, run_requested_at = NULL "
                    "WHERE name = ? AND running_run IS NULL",
                    (run_id, job),
                )
                if not claimed:
                    raise _JobRunning
                # The slot names the run id for a requested run (manual:<runId>): known now.
                await self._run(
                    "UPDATE scheduled_job_run SET slot = ? WHERE id = ?", (slot_of(run_id), run_id)
                )
        except _JobRunning:
            return None
        return run_id

    @bridged
    async def finish_run(
        self,
        run_id: int,
        status: RunStatus,
        now_ms: Ms,
        next_run_at_ms: Ms,
        error: str,
        runs_kept: int,
    ) -> bool:
        async with self._tx():
            # Only a running run ends: one a successor marked interrupted stays failed.
            row = await self._one(
                "UPDATE scheduled_job_run SET status = ?, finished_at = ?, error = ? "
                f"WHERE id = ? AND status = {_RUNNING} RETURNING job",
                (status.value, now_ms, error, run_id),
            )
            if row is None:
                return False
            job = str(row[0])
            await self._run(
                "UPDATE scheduled_job SET running_run = NULL, next_run_at = ? WHERE name = ?",
                (next_run_at_ms, job),
            )
            await self._prune(job, runs_kept)
        return True

    async def _prune(self, job: str, runs_kept: int) -> None:
        """Delete ``job``'s finished runs beyond the newest ``runs_kept`` (seed 001 "组成": 50)."""
        await self._run(
            f"DELETE FROM scheduled_job_run WHERE job = ? AND status <> {_RUNNING} "
            "AND id NOT IN (SELECT id FROM scheduled_job_run "
            f"WHERE job = ? AND status <> {_RUNNING} ORDER BY id DESC LIMIT ?)",
            (job, job, max(0, runs_kept)),
        )

    @bridged
    async def request_run(self, job: str, now_ms: Ms) -> bool:
        # 立即执行 only sets run_requested_at; a pending request or a running run merges it.
        changed = await self._run(
            "UPDATE scheduled_job SET run_requested_at = ? "
            "WHERE name = ? AND run_requested_at IS NULL AND running_run IS NULL",
            (now_ms, job),
        )
        return changed > 0

    @bridged
    async def skip_run(
        self, job: str, now_ms: Ms, runs_kept: int, next_of: Callable[[JobState], Ms]
    ) -> SkippedRun | None:
        # 跳过本次: read the row and move it in one transaction, so that a run ending meanwhile
        # cannot be overwritten with a stale time; a running job is not skipped.
        async with self._tx():
            row = await self._one(
                f"SELECT {_JOB_COLUMNS} FROM scheduled_job WHERE name = ?{self.FOR_UPDATE}",
                (job,),
            )
            if row is None:
                raise KeyError(job)
            state = _job(row)
            if state.running_run_id is not None:
                return None
            nxt = next_of(state)
            run = await self._one(
                "INSERT INTO scheduled_job_run (job, trigger, slot, status, planned_at, "
                "started_at, finished_at, holder, error) "
                "VALUES (?, ?, '', ?, ?, ?, ?, '', '') RETURNING id",
                (
                    job,
                    RunTrigger.SKIP.value,
                    RunStatus.SKIPPED.value,
                    state.next_run_at_ms,
                    now_ms,
                    now_ms,
                ),
            )
            assert run is not None
            await self._run("UPDATE scheduled_job SET next_run_at = ? WHERE name = ?", (nxt, job))
            await self._prune(job, runs_kept)
        return SkippedRun(int(run[0]), state.next_run_at_ms, nxt)

    @bridged
    async def interrupt_runs(self, now_ms: Ms, error: str) -> list[RunRow]:
        # 中断恢复: the new executor fails what its predecessor left running; next_run_at stays.
        async with self._tx():
            rows = await self._all(
                f"SELECT {_RUN_COLUMNS} FROM scheduled_job_run WHERE status = {_RUNNING} "
                f"ORDER BY id{self.FOR_UPDATE}"
            )
            if not rows:
                return []
            lost = [_run(r) for r in rows]
            ids = [r.id for r in lost]
            await self._run(
                f"UPDATE scheduled_job_run SET status = ?, finished_at = ?, error = ? "
                f"WHERE id IN ({marks(len(ids))})",
                (RunStatus.FAILED.value, now_ms, error, *ids),
            )
            names = sorted({r.job for r in lost})
            await self._run(
                f"UPDATE scheduled_job SET running_run = NULL WHERE name IN ({marks(len(names))})",
                names,
            )
        return lost

    # -- SchedulerLock (the scheduler_lock row; PostgreSQL overrides) -------------------------
    @bridged
    async def try_lock(self, holder: str) -> bool:
        async with self._tx():
            await self._run(
                "INSERT INTO scheduler_lock (id, holder) VALUES (1, ?) ON CONFLICT (id) DO NOTHING",
                (holder,),
            )
            row = await self._one("SELECT holder FROM scheduler_lock WHERE id = 1")
        return row is not None and row[0] == holder

    @bridged
    async def drop_lock(self, holder: str) -> None:
        await self._run("DELETE FROM scheduler_lock WHERE id = 1 AND holder = ?", (holder,))
