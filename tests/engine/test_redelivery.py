"""Stalled jobs and redelivery of failed jobs (issue 28; docs/redelivery.md): exact instants.

BullMQ defaults (reference §1.2): lock 30 s renewed every 15 s, stalled check every 30 s,
maxStalledCount 1. The first worker's checks run at 0, 30 s, 60 s, ...
"""

from __future__ import annotations

from sim.engine import Engine, Job, JobFailed, Queue, StallParams
from sim.events.delivery_kinds import (
    DROP_REASON,
    REDELIVERY_CAUSE,
    JobAbandoned,
    JobDropped,
    JobRedelivered,
    JobRetried,
    JobStalled,
)
from sim.events.engine_kinds import JobFinished, JobLost, JobStarted
from sim.testing import run_engine

S = 1000


def _crash_and_restart(
    eng: Engine, q: Queue, crash_at: int, back_at: int, starts: list[tuple[int, int]]
) -> None:
    """A job started at 10 s that works for 100 s; the worker dies at ``crash_at`` and a new
    one starts at ``back_at``."""

    async def work(job: Job) -> None:
        starts.append((eng.now, job.deliveries))
        await eng.sleep(100 * S)

    q.add("work", work, delay_ms=10 * S)
    eng.call_at(crash_at, lambda _: q.crash())
    eng.call_at(back_at, lambda _: q.resume())


def test_off_a_crash_loses_the_job() -> None:
    starts: list[tuple[int, int]] = []

    def setup(eng: Engine) -> None:
        _crash_and_restart(eng, Queue(eng, "q", 5), 50 * S, 55 * S, starts)

    _, rec = run_engine(setup, 400 * S, elide=False)
    assert starts == [(10 * S, 1)]
    assert [e.t_ms for e in rec.events(JobLost)] == [50 * S]
    assert rec.events(JobAbandoned) == []
    assert rec.events(JobRedelivered) == []


def test_lock_expiry_and_check_instants() -> None:
    """Started at 10 s: renewed at 25 s and 40 s; the crash at 50 s leaves the lock until 70 s.
    The last check before the crash (30 s) came before the renewal at 40 s: not marked. The new
    worker starts at 55 s, less than an interval after that check: its first check is at 85 s
    (marks the job), the next at 115 s finds it stalled and redelivers it."""
    starts: list[tuple[int, int]] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 5)
        q.check_stalled(StallParams())
        _crash_and_restart(eng, q, 50 * S, 55 * S, starts)

    _, rec = run_engine(setup, 400 * S, elide=False)
    (ab,) = rec.events(JobAbandoned)
    assert (ab.t_ms, ab.lock_expires_ms, ab.marked) == (50 * S, 70 * S, 0)
    assert [(e.t_ms, e.stalled) for e in rec.events(JobStalled)] == [(115 * S, 1)]
    red = rec.events(JobRedelivered)
    assert [(e.t_ms, e.delivery, e.cause) for e in red] == [
        (115 * S, 2, REDELIVERY_CAUSE.code("stalled"))
    ]
    assert starts == [(10 * S, 1), (115 * S, 2)]
    assert [(e.t_ms, e.ok) for e in rec.events(JobFinished)] == [(215 * S, 1)]
    assert rec.events(JobLost) == []


def test_marked_before_the_crash_stalls_at_the_first_check() -> None:
    """Crash at 62 s: last renewal 55 s (lock until 85 s), the check at 60 s marked it. The new
    worker starts at 100 s (>= 60 s + 30 s): it checks at once, the lock is gone, the job
    stalls at 100 s."""
    starts: list[tuple[int, int]] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 5)
        q.check_stalled(StallParams())
        _crash_and_restart(eng, q, 62 * S, 100 * S, starts)

    _, rec = run_engine(setup, 400 * S, elide=False)
    (ab,) = rec.events(JobAbandoned)
    assert (ab.lock_expires_ms, ab.marked) == (85 * S, 1)
    assert [e.t_ms for e in rec.events(JobStalled)] == [100 * S]
    assert starts == [(10 * S, 1), (100 * S, 2)]


def test_marked_but_lock_still_held_waits_an_interval() -> None:
    """Crash at 62 s (lock until 85 s, marked at 60 s); back at 80 s, within an interval of the
    60 s check (its key lives until 90 s): the check at 80 s is skipped, the first runs at
    110 s and finds it stalled."""
    starts: list[tuple[int, int]] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 5)
        q.check_stalled(StallParams())
        _crash_and_restart(eng, q, 62 * S, 80 * S, starts)

    _, rec = run_engine(setup, 400 * S, elide=False)
    assert [e.t_ms for e in rec.events(JobStalled)] == [110 * S]


def test_second_stall_fails_the_job() -> None:
    """maxStalledCount 1: redelivered after its first stall, failed after its second."""
    starts: list[tuple[int, int]] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 5)
        q.check_stalled(StallParams())
        _crash_and_restart(eng, q, 50 * S, 55 * S, starts)  # redelivered at 115 s
        eng.call_at(130 * S, lambda _: q.crash())  # its second worker dies too
        eng.call_at(131 * S, lambda _: q.resume())

    _, rec = run_engine(setup, 400 * S, elide=False)
    ab = rec.events(JobAbandoned)
    # Second delivery started 115 s, renewed 130 s (the crash instant): lock until 160 s; the
    # new worker's first check at 115 s (its checker began at 85 s) marked it before renewal.
    assert [(e.t_ms, e.lock_expires_ms, e.marked) for e in ab] == [
        (50 * S, 70 * S, 0),
        (130 * S, 160 * S, 0),
    ]
    # The worker back at 131 s: the dead one's last check was 115 s, so the first runs at 161 s
    # (marks), then 191 s finds it stalled a second time: failed.
    assert [(e.t_ms, e.stalled) for e in rec.events(JobStalled)] == [(115 * S, 1), (191 * S, 2)]
    (drop,) = rec.events(JobDropped)
    assert (drop.t_ms, drop.delivery, drop.reason) == (
        191 * S,
        2,
        DROP_REASON.code("stalled_limit"),
    )
    assert starts == [(10 * S, 1), (115 * S, 2)]


def test_redelivered_iteration_runs_again_and_creates_no_next() -> None:
    """A 10 s job scheduler whose iteration due at 20 s runs for 15 s; a crash at 25 s. The
    redelivered iteration runs again (same due time); every other slot runs once."""
    runs: list[tuple[int, int]] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 5)
        q.check_stalled(StallParams())

        async def tick(job: Job) -> None:
            runs.append((eng.now, job.due_ms))
            if job.due_ms == 20 * S:
                await eng.sleep(15 * S)

        q.every("tick", 10 * S, tick)
        eng.call_at(25 * S, lambda _: q.crash())
        eng.call_at(26 * S, lambda _: q.resume())

    _, rec = run_engine(setup, 120 * S, elide=False)
    # Lock of iteration 20 s: until 50 s; the last check (0 s) came before it started: not
    # marked. Back at 26 s, within an interval of that check: the first check runs at 56 s
    # (marks it), the next at 86 s finds it stalled and redelivers it.
    assert [(e.t_ms, e.lock_expires_ms) for e in rec.events(JobAbandoned)] == [(25 * S, 50 * S)]
    assert [e.t_ms for e in rec.events(JobStalled)] == [86 * S]
    redone = [r for r in runs if r[1] == 20 * S]
    assert redone == [(20 * S, 20 * S), (86 * S, 20 * S)]
    dues = [d for _, d in runs if d != 20 * S]
    assert dues == sorted(set(dues))  # every other slot once
    assert dues[:3] == [0, 10 * S, 30 * S]


def test_failed_job_comes_back_after_the_delay() -> None:
    """Retry of failed jobs: fails at 1 s, 3 s, 5 s, succeeds at 7 s (2 s apart)."""
    starts: list[tuple[int, int]] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 5)
        q.retry_failed(2 * S)

        async def flaky(job: Job) -> None:
            starts.append((eng.now, job.deliveries))
            if job.deliveries < 4:
                raise JobFailed("upstream")

        q.add("flaky", flaky, delay_ms=1 * S)

    _, rec = run_engine(setup, 60 * S, elide=False)
    assert starts == [(1 * S, 1), (3 * S, 2), (5 * S, 3), (7 * S, 4)]
    assert [(e.t_ms, e.delivery, e.due_ms) for e in rec.events(JobRetried)] == [
        (1 * S, 1, 3 * S),
        (3 * S, 2, 5 * S),
        (5 * S, 3, 7 * S),
    ]
    retry = REDELIVERY_CAUSE.code("retry")
    assert [(e.t_ms, e.delivery, e.cause) for e in rec.events(JobRedelivered)] == [
        (3 * S, 2, retry),
        (5 * S, 3, retry),
        (7 * S, 4, retry),
    ]
    assert [e.t_ms for e in rec.events(JobStarted)] == [1 * S, 3 * S, 5 * S, 7 * S]
    assert [e.ok for e in rec.events(JobFinished)] == [0, 0, 0, 1]
