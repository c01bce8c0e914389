"""BullMQ semantics on virtual time: exact lists of instants (SimPy style)."""

from __future__ import annotations

import pytest

from sim.engine import Engine, Job, JobFailed, Queue
from sim.events.engine_kinds import (
    IdleIterations,
    IterationFinished,
    IterationsMissed,
    IterationStarted,
    JobFinished,
    JobLost,
)
from sim.testing import run_engine


def test_fixed_rate_from_registration() -> None:
    starts: list[int] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 5)

        async def tick(job: Job) -> None:
            starts.append(eng.now)

        q.every("tick", 1000, tick)

    run_engine(setup, 5000, elide=False)
    assert starts == [0, 1000, 2000, 3000, 4000, 5000]


def test_missed_slots_are_skipped_and_counted() -> None:
    """A busy worker delays iteration 1000 to 3700; it is not replayed, the next is aligned."""
    starts: list[int] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 1)

        async def tick(job: Job) -> None:
            starts.append(eng.now)
            if eng.now == 0:
                q.add("blocker", blocker, delay_ms=500)

        async def blocker(job: Job) -> None:
            await eng.sleep(3200)

        q.every("tick", 1000, tick)

    _, rec = run_engine(setup, 6000, elide=False)
    assert starts == [0, 3700, 4000, 5000, 6000]
    missed = rec.events(IterationsMissed)
    assert [(m.t_ms, m.missed, m.next_due_ms) for m in missed] == [(3700, 2, 4000)]


def test_missed_slot_keeps_registration_offset() -> None:
    """Registered at 250: slots are 250 + k*1000; the catch-up slot keeps that phase."""
    starts: list[int] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 1)

        async def boot(job: Job) -> None:
            q.every("tick", 1000, tick)

        async def tick(job: Job) -> None:
            starts.append(eng.now)
            if len(starts) == 1:
                q.add("blocker", blocker)

        async def blocker(job: Job) -> None:
            await eng.sleep(2600)

        q.add("boot", boot, delay_ms=250)

    run_engine(setup, 5000, elide=False)
    # blocker runs 250..2850; iteration due 1250 starts at 2850; 2250 < 2850 so the next is
    # floor(2850/1000)*1000 + 1000 + 250 = 3250 (slot 2250 skipped).
    assert starts == [250, 2850, 3250, 4250]


def test_iterations_overlap_when_a_run_outlasts_the_period() -> None:
    spans: list[tuple[int, int]] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 50)

        async def slow(job: Job) -> None:
            start = eng.now
            await eng.sleep(2500)
            spans.append((start, eng.now))

        q.every("slow", 1000, slow)

    run_engine(setup, 4000, elide=False)
    assert spans == [(0, 2500), (1000, 3500)]  # the 2000 iteration ends after the run


def test_priority_order_wait_list_first_then_ascending_priority_fifo() -> None:
    order: list[str] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 1)

        async def work(job: Job) -> None:
            order.append(job.data)
            await eng.sleep(10)

        async def start(job: Job) -> None:
            for label, prio in [
                ("p5", 5),
                ("w1", None),
                ("p1a", 1),
                ("p3", 3),
                ("w2", None),
                ("p1b", 1),
            ]:
                q.add("work", work, label, priority=prio)

        q.add("start", start)

    run_engine(setup, 1000, elide=False)
    assert order == ["w1", "w2", "p1a", "p1b", "p3", "p5"]


def test_concurrency_limit() -> None:
    starts: list[int] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 3)

        async def work(job: Job) -> None:
            starts.append(eng.now)
            await eng.sleep(100)

        for _ in range(7):
            q.add("work", work)

    run_engine(setup, 1000)
    assert starts == [0, 0, 0, 100, 100, 100, 200]


def test_delayed_jobs_become_runnable_when_due() -> None:
    seen: list[tuple[str, int]] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 1)

        async def work(job: Job) -> None:
            seen.append((job.data, eng.now))
            await eng.sleep(300)

        q.add("w", work, "later", delay_ms=500)
        q.add("w", work, "now")
        q.add("w", work, "prio", priority=1, delay_ms=100)

    run_engine(setup, 2000)
    # "prio" is due at 100 but the worker is busy until 300; "later" (due 500) waits for "prio".
    assert seen == [("now", 0), ("prio", 300), ("later", 600)]


def test_scheduler_jobs_go_before_prioritized_jobs() -> None:
    """Scheduler-produced jobs have no priority, so they are served before snapshot jobs (§1.4)."""
    order: list[str] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 1)

        async def snap(job: Job) -> None:
            order.append(f"snap@{eng.now}")
            await eng.sleep(400)

        async def tick(job: Job) -> None:
            order.append(f"tick@{eng.now}")
            if eng.now == 0:
                for _ in range(3):
                    q.add("snap", snap, priority=1)

        q.every("tick", 1000, tick)

    run_engine(setup, 1500, elide=False)
    assert order == ["tick@0", "snap@0", "snap@400", "snap@800", "tick@1200"]


def test_failed_job_is_logged_and_other_exceptions_abort() -> None:
    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 1)

        async def fails(job: Job) -> None:
            raise JobFailed("upstream said no")

        q.add("fails", fails)

    _, rec = run_engine(setup, 10)
    assert [(e.ok, e.t_ms) for e in rec.events(JobFinished)] == [(0, 0)]

    def broken(eng: Engine) -> None:
        q = Queue(eng, "q", 1)

        async def bug(job: Job) -> None:
            raise ZeroDivisionError

        q.add("bug", bug)

    with pytest.raises(ZeroDivisionError):
        run_engine(broken, 10)


def test_idle_iterations_are_run_length_encoded() -> None:
    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 1)

        async def tick(job: Job) -> None:
            if eng.now in (3000, 4000):
                eng.log.emit(IterationsMissed, eng.now, 99, 0, 0)  # any record makes it non-idle

        q.every("tick", 1000, tick)

    _, rec = run_engine(setup, 7000, elide=False)
    idle = [
        (e.t_ms, e.first_due_ms, e.last_due_ms, e.iterations) for e in rec.events(IdleIterations)
    ]
    assert idle == [(3000, 0, 2000, 3), (7000, 5000, 7000, 3)]
    assert [e.due_ms for e in rec.events(IterationStarted)] == [3000, 4000]
    assert [e.due_ms for e in rec.events(IterationFinished)] == [3000, 4000]


def test_process_wakeups_at_equal_times_are_fifo() -> None:
    order: list[int] = []

    def setup(eng: Engine) -> None:
        async def sleeper(i: int) -> None:
            await eng.sleep(100 if i % 2 else 50)
            await eng.sleep(50 if i % 2 else 100)
            order.append(i)

        for i in range(6):
            eng.spawn(sleeper(i))

    run_engine(setup, 1000)
    # All wake at 150; even ones were re-queued at 50, odd ones at 100 -> evens first.
    assert order == [0, 2, 4, 1, 3, 5]


def test_a_crash_loses_running_jobs_and_periodic_jobs_resume_by_the_scheduler_rules() -> None:
    """Reference §1.4 after a worker crash: the pending iteration survives (it lives in Redis),
    runs once when a worker is back, and the missed slots are skipped, not replayed."""
    starts: list[int] = []
    lost_jobs: list[str] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 2)

        async def tick(job: Job) -> None:
            starts.append(eng.now)

        async def slow(job: Job) -> None:
            try:
                await eng.sleep(10_000)
            finally:
                lost_jobs.append(f"{job.name}@{eng.now}")

        q.every("tick", 1000, tick)
        q.add("slow", slow, delay_ms=100)
        eng.call_at(1500, lambda _: q.crash())
        eng.call_at(4200, lambda _: q.resume())

    _, rec = run_engine(setup, 6000, elide=False)
    assert starts == [0, 1000, 4200, 5000, 6000]
    assert lost_jobs == ["slow@1500"]  # closed at the crash, never finished
    assert [(e.t_ms, e.due_ms) for e in rec.events(JobLost)] == [(1500, 100)]
    assert [e.job for e in rec.events(JobFinished)] == []
    missed = [(m.t_ms, m.missed, m.next_due_ms) for m in rec.events(IterationsMissed)]
    assert missed == [(4200, 2, 5000)]
