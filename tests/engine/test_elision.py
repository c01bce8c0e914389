"""Tick elision is an optimisation only: with it on or off the log is byte-identical.

The model below is a small scheduler: work items become due at random instants (added by a
process and by the tick's own jobs); a 1 s tick takes due items, a 2 min sweep drops stale ones
and a 5 min job without an idle hint always runs. Elision may only skip iterations that would have
logged nothing.
"""

from __future__ import annotations

import random

import pytest

from sim.engine import Engine, Job, Queue
from sim.testing import run_engine
from sim.units import MINUTE_MS, SECOND_MS


def build(seed: int, log_of_work: list[tuple[int, int]]) -> object:
    def setup(eng: Engine) -> None:
        rng = random.Random(seed)
        due: list[int] = []  # sorted due times of pending work
        q = Queue(eng, "snapshot", 3)

        async def work(job: Job) -> None:
            await eng.sleep(rng.randrange(100, 4000))
            log_of_work.append((job.data, eng.now))
            if rng.random() < 0.3:  # follow-up work, like a new-song continuation
                due.append(eng.now + rng.randrange(1, 600) * SECOND_MS)
                due.sort()

        async def tick(job: Job) -> None:
            taken = [t for t in due if t <= eng.now + SECOND_MS][:10]
            for t in taken:
                due.remove(t)
                q.add("work", work, t, priority=1)

        async def tick_idle_until(now: int) -> int:
            return due[0] - SECOND_MS if due else 2**62

        async def sweep(job: Job) -> None:
            stale = [t for t in due if t < eng.now - 2 * MINUTE_MS]
            for t in stale:
                due.remove(t)
                q.add("dropped", work, t, priority=9)

        async def sweep_idle_until(now: int) -> int:
            return due[0] + 2 * MINUTE_MS + 1 if due else 2**62

        async def dispatch(job: Job) -> None:
            if rng.random() < 0.5:
                due.append(eng.now + rng.randrange(0, 3600) * SECOND_MS)
                due.sort()

        async def arrivals() -> None:
            while True:
                await eng.sleep(rng.randrange(1, 3 * 3600) * SECOND_MS)
                due.append(eng.now + rng.randrange(0, 120) * SECOND_MS)
                due.sort()

        q.every("snapshotTick", SECOND_MS, tick, idle_until=tick_idle_until)
        q.every("scheduleCleanup", 2 * MINUTE_MS, sweep, idle_until=sweep_idle_until)
        q.every("dispatch", 5 * MINUTE_MS, dispatch)
        eng.spawn(arrivals())

    return setup


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_elision_leaves_the_log_unchanged(seed: int) -> None:
    day = 24 * 3600 * SECOND_MS
    work_on: list[tuple[int, int]] = []
    work_off: list[tuple[int, int]] = []
    eng_on, rec_on = run_engine(build(seed, work_on), day, elide=True)
    eng_off, rec_off = run_engine(build(seed, work_off), day, elide=False)
    assert work_on == work_off
    assert len(work_on) > 20
    assert rec_on.fingerprint == rec_off.fingerprint
    # and it actually elided most of the 86,400 one-second ticks
    assert eng_on.processed * 5 < eng_off.processed
