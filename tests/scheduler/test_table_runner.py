"""Seed 001's executor on virtual time: exact lists of instants, one test per rule."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

import trio

from sim.backends.memory.jobs import MemoryJobTable
from sim.cvsa.job_table import INTERRUPTED_ERROR, JobSpec, TableParams, zone
from sim.cvsa.vocabulary import RunStatus, RunTrigger
from sim.engine import Engine, IterationLog, Job
from sim.events.engine_kinds import IdleIterations, IterationStarted
from sim.events.table_kinds import (
    ExecutorLockLost,
    ExecutorLockTaken,
    JobRunInterrupted,
    JobRunRequested,
    JobRunSkipped,
)
from sim.scheduler.table_runner import TableExecutor
from sim.testing import Recorder, run_engine

Work = Callable[[Engine, Job], Coroutine[Any, Any, None]]


def taking(ms: int, starts: list[int]) -> Work:
    async def work(eng: Engine, job: Job) -> None:
        starts.append(eng.now)
        await eng.sleep(ms)

    return work


def executor(
    eng: Engine,
    table: MemoryJobTable,
    works: dict[str, Work],
    specs: list[JobSpec],
    *,
    holder: str = "a",
    logs: dict[str, IterationLog] | None = None,
    tz: str | int = 0,
    poll_ms: int = 0,
) -> TableExecutor:
    logs = logs if logs is not None else {s.name: IterationLog(eng, s.name) for s in specs}

    def bind(work: Work) -> Callable[[Job], Coroutine[Any, Any, None]]:
        return lambda job: work(eng, job)

    ex = TableExecutor(
        eng,
        table,
        holder,
        specs,
        {name: bind(work) for name, work in works.items()},
        logs,
        TableParams(poll_ms=poll_ms, lock_retry_ms=5000),
        zone(tz),
    )
    ex.start()
    return ex


def at(eng: Engine, t_ms: int, action: Callable[[], Coroutine[Any, Any, Any]]) -> None:
    async def later() -> None:
        await eng.sleep_until(t_ms)
        await action()

    eng.spawn(later())


def one_job(took_ms: int, until_ms: int, *, poll_ms: int = 0) -> tuple[list[int], Recorder]:
    """A 1 s job whose runs take ``took_ms``, alone in the table: when its runs started."""
    starts: list[int] = []

    def setup(eng: Engine) -> None:
        works = {"tick": taking(took_ms, starts)}
        executor(eng, MemoryJobTable(), works, [JobSpec("tick", 1000, None, True)], poll_ms=poll_ms)

    _, rec = run_engine(setup, until_ms)
    return starts, rec


def test_next_run_is_the_end_plus_the_period() -> None:
    starts, _ = one_job(300, 4000)
    assert starts == [0, 1300, 2600, 3900]


def test_a_long_run_delays_the_next_without_catch_up_or_re_entry() -> None:
    """A run of 2.5 periods: the next starts a period after it ends; nothing overlaps and the
    periods in between are not made up (BullMQ would start one beside it)."""
    starts, rec = one_job(2500, 8000)
    assert starts == [0, 3500, 7000]
    idle = [(e.first_due_ms, e.last_due_ms, e.iterations) for e in rec.events(IdleIterations)]
    assert idle == [(0, 3500, 2)]  # they log nothing: idle, keyed by their planned times


def test_run_now_merges_and_keeps_the_next_run_time() -> None:
    starts: list[int] = []
    table = MemoryJobTable()
    answers: list[bool] = []

    def setup(eng: Engine) -> None:
        ex = executor(
            eng, table, {"sweep": taking(1000, starts)}, [JobSpec("sweep", 10_000, None, True)]
        )

        async def request() -> None:
            answers.append(await ex.request("sweep"))
            ex.wake(eng.now)

        at(eng, 500, request)  # running: merged
        at(eng, 4000, request)  # idle: queued, runs at once
        at(eng, 4000, request)  # pending: merged

    _, rec = run_engine(setup, 12_000)
    assert answers == [False, True, False]
    assert starts == [0, 4000, 11_000]  # the scheduled run stays at 1000 + 10_000
    assert [(e.t_ms, e.queued) for e in rec.events(JobRunRequested)] == [
        (500, 0),
        (4000, 1),
        (4000, 0),
    ]
    runs = trio.run(table.runs, "sweep")
    assert [(r.trigger, r.slot, r.planned_ms) for r in runs] == [
        (RunTrigger.SCHEDULE, "0", 0),
        (RunTrigger.MANUAL, f"manual:{runs[1].id}", 4000),
        (RunTrigger.SCHEDULE, "1", 11_000),
    ]


def test_skip_moves_the_next_run_on_by_one_period() -> None:
    starts: list[int] = []
    table = MemoryJobTable()

    def setup(eng: Engine) -> None:
        ex = executor(eng, table, {"tick": taking(0, starts)}, [JobSpec("tick", 1000, None, True)])

        async def skip() -> None:
            await ex.skip("tick")
            ex.wake(eng.now)

        at(eng, 500, skip)

    _, rec = run_engine(setup, 3500)
    assert starts == [0, 2000, 3000]
    assert [(e.t_ms, e.was_ms, e.next_run_at_ms) for e in rec.events(JobRunSkipped)] == [
        (500, 1000, 2000)
    ]
    runs = trio.run(table.runs, "tick")
    assert [(r.trigger, r.status) for r in runs][:2] == [
        (RunTrigger.SCHEDULE, RunStatus.SUCCEEDED),
        (RunTrigger.SKIP, RunStatus.SKIPPED),
    ]


def test_a_skip_while_the_job_runs_is_refused() -> None:
    """The run in progress is "this run": its end sets the next run time (3000 + 10000), and a
    skip meanwhile moves nothing (logged as run 0)."""
    starts: list[int] = []
    answers: list[object] = []

    def setup(eng: Engine) -> None:
        works = {"sweep": taking(3000, starts)}
        ex = executor(eng, MemoryJobTable(), works, [JobSpec("sweep", 10_000, None, True)])

        async def skip() -> None:
            answers.append(await ex.skip("sweep"))

        at(eng, 1000, skip)

    _, rec = run_engine(setup, 14_000)
    assert answers == [None]
    assert starts == [0, 13_000]
    assert [(e.t_ms, e.run) for e in rec.events(JobRunSkipped)] == [(1000, 0)]


def test_a_disabled_job_runs_only_on_request() -> None:
    starts: list[int] = []

    def setup(eng: Engine) -> None:
        ex = executor(
            eng, MemoryJobTable(), {"tick": taking(0, starts)}, [JobSpec("tick", 1000, None, False)]
        )

        async def request() -> None:
            await ex.request("tick")
            ex.wake(eng.now)

        at(eng, 2500, request)

    run_engine(setup, 5000)
    assert starts == [2500]


def test_idle_runs_are_logged_as_idle_iterations() -> None:
    def setup(eng: Engine) -> None:
        async def quiet(eng: Engine, job: Job) -> None:
            return None

        executor(eng, MemoryJobTable(), {"tick": quiet}, [JobSpec("tick", 1000, None, True)])

    _, rec = run_engine(setup, 3000)
    assert rec.events(IterationStarted) == []
    idle = rec.events(IdleIterations)
    assert [(e.first_due_ms, e.last_due_ms, e.iterations) for e in idle] == [(0, 3000, 4)]


def test_one_executor_and_takeover_of_interrupted_runs() -> None:
    """Two deployments: a holds the lock and runs everything; a dies at 2600 in the middle of a
    run; b takes the lock at its next retry (5000), marks a's run failed, and runs the job at
    once: its next run time (2600) never moved."""
    starts: dict[str, list[int]] = {"a": [], "b": []}
    table = MemoryJobTable()
    specs = [JobSpec("tick", 1000, None, True)]

    def setup(eng: Engine) -> None:
        logs = {"tick": IterationLog(eng, "tick")}
        a = executor(eng, table, {"tick": taking(300, starts["a"])}, specs, holder="a", logs=logs)
        executor(eng, table, {"tick": taking(300, starts["b"])}, specs, holder="b", logs=logs)
        at(eng, 2700, a.crash)

    _, rec = run_engine(setup, 8000)
    assert starts == {"a": [0, 1300, 2600], "b": [5000, 6300, 7600]}
    assert [
        (type(e).__name__, e.t_ms)
        for e in rec.events()
        if type(e) in (ExecutorLockTaken, ExecutorLockLost)
    ] == [
        ("ExecutorLockTaken", 0),
        ("ExecutorLockLost", 2700),
        ("ExecutorLockTaken", 5000),
    ]
    (lost,) = rec.events(JobRunInterrupted)
    assert (lost.t_ms, lost.planned_ms, lost.started_at_ms) == (5000, 2600, 2600)
    runs = trio.run(table.runs, "tick")
    interrupted = [r for r in runs if r.error]
    assert [(r.status, r.holder, r.error, r.finished_at_ms) for r in interrupted] == [
        (RunStatus.FAILED, "a", INTERRUPTED_ERROR, 5000)
    ]


def test_cron_on_a_day_that_loses_an_hour() -> None:
    """``30 2 * * *`` in Europe/Berlin: 2031-03-30 has no 02:30; the run is right after the
    jump, 03:00+02:00 (cronie's rule), and the next day's at 02:30+02:00."""
    starts: list[int] = []
    t0 = _utc(2031, 3, 29, 12)

    def setup(eng: Engine) -> None:
        executor(
            eng,
            MemoryJobTable(),
            {"nightly": taking(60_000, starts)},
            [JobSpec("nightly", None, "30 2 * * *", True)],
            tz="Europe/Berlin",
        )

    run_engine(setup, _utc(2031, 4, 1), epoch_ms=t0)
    assert starts == [_utc(2031, 3, 30, 1), _utc(2031, 3, 31, 0, 30)]


def test_cron_on_a_day_that_repeats_an_hour() -> None:
    """``30 2 * * *`` runs once on 2031-10-26 (the first 02:30, +02:00); an hourly job runs in
    both copies of 02:00."""
    nightly: list[int] = []
    hourly: list[int] = []
    t0 = _utc(2031, 10, 25, 21, 30)

    def setup(eng: Engine) -> None:
        executor(
            eng,
            MemoryJobTable(),
            {"nightly": taking(0, nightly), "hourly": taking(0, hourly)},
            [
                JobSpec("nightly", None, "30 2 * * *", True),
                JobSpec("hourly", None, "0 * * * *", True),
            ],
            tz="Europe/Berlin",
        )

    run_engine(setup, _utc(2031, 10, 26, 3), epoch_ms=t0)
    assert nightly == [_utc(2031, 10, 26, 0, 30)]
    assert hourly == [_utc(2031, 10, 25, 22) + h * 3_600_000 for h in range(6)]


def test_rounds_on_the_poll_grid() -> None:
    """With a round every 250 ms, a run that ends at 300 is next due at 1300 and starts at the
    round of 1500."""
    starts, _ = one_job(300, 4000, poll_ms=250)
    assert starts == [0, 1500, 3000]


def _utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> int:
    return int(datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp() * 1000)
