"""The three engines: each takes the clock it is made for, and they agree where they should."""

from __future__ import annotations

import math
import time

import pytest
import trio

from sim.clock import ScaledRealClock, VirtualClock
from sim.engine import (
    ConcurrentEngine,
    Engine,
    Job,
    Queue,
    RealClockEngine,
    SimulationError,
    VirtualEngine,
)
from sim.events import EventLog
from sim.testing import run_engine


def test_each_engine_takes_its_own_clock() -> None:
    virtual, real = VirtualClock(0), ScaledRealClock(0, speed=10)
    with pytest.raises(TypeError, match="no loop"):
        Engine(clock=virtual, log=EventLog([]))
    with pytest.raises(SimulationError):
        VirtualEngine(clock=real, log=EventLog([]))
    for kind in (RealClockEngine, ConcurrentEngine):
        with pytest.raises(SimulationError):
            kind(clock=virtual, log=EventLog([]))
    assert not ConcurrentEngine(clock=real, log=EventLog([])).elide  # never elides
    assert ConcurrentEngine(clock=real, log=EventLog([])).concurrent
    assert not RealClockEngine(clock=real, log=EventLog([])).concurrent


def test_virtual_clock_has_no_wall_time() -> None:
    clock = VirtualClock(5)
    assert clock.speed == math.inf
    assert clock.lag_ms(123) == 0
    with pytest.raises(RuntimeError):
        clock.trio_time(10)
    with pytest.raises(RuntimeError):
        clock.virtual_now_ms()


def _busy_model(eng: Engine) -> None:
    """Ticks, delayed jobs and a sleeping process, with same-instant ties."""
    q = Queue(eng, "q", 2)

    async def work(job: Job) -> None:
        await eng.sleep(700)

    async def tick(job: Job) -> None:
        q.add("work", work, delay_ms=300)

    async def sleeper() -> None:
        for _ in range(5):
            await eng.sleep(1000)
            q.add("work", work, priority=1)

    q.every("tick", 1000, tick)
    eng.spawn(sleeper())


@pytest.mark.slow
def test_real_clock_engine_writes_the_virtual_log() -> None:
    """Without real I/O, waiting for the wall clock changes when entries run, not what they do."""
    _, virtual = run_engine(_busy_model, 8000, elide=False)
    _, real = run_engine(_busy_model, 8000, elide=False, clock=ScaledRealClock(0, speed=100))
    assert real.fingerprint == virtual.fingerprint


def _group_leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _group_leaves(sub)]
    return [exc]


@pytest.mark.slow
def test_concurrent_process_crash_aborts_the_run_at_once() -> None:
    """A process that fails in its own task wakes the waiting loop, which raises its error."""

    def setup(eng: Engine) -> None:
        async def doomed() -> None:
            await trio.sleep(0.05)
            raise ValueError("boom")

        eng.spawn(doomed())

    t0 = time.perf_counter()
    with pytest.raises(ExceptionGroup) as caught:
        run_engine(setup, 60_000, clock=ScaledRealClock(0, speed=1), concurrent=True)
    assert time.perf_counter() - t0 < 5
    assert [type(e) for e in _group_leaves(caught.value)] == [ValueError]


@pytest.mark.slow
def test_concurrent_kill_during_real_io_is_not_a_crash() -> None:
    """A worker crash cancels the jobs waiting on I/O; their unwinding is nobody's failure."""
    finished: list[int] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 2)

        async def slow_io(job: Job) -> None:
            await trio.sleep(10)  # a real round trip, cut short by the crash

        async def quick(job: Job) -> None:
            finished.append(eng.now)

        q.add("io", slow_io)
        eng.call_at(100, lambda _: q.crash())
        eng.call_at(200, lambda _: q.resume())
        q.add("quick", quick, delay_ms=300)

    engine, _ = run_engine(setup, 500, clock=ScaledRealClock(0, speed=1), concurrent=True)
    assert not engine.partial
    assert len(finished) == 1


def test_concurrent_run_waits_for_entries_a_running_process_may_still_queue() -> None:
    """The only queued entry lies past the end, but a process running in its own task queues
    earlier ones as it ends (a job that reschedules itself: seed 001's executor). The run goes
    on until its end instead of stopping when the queue's head is past it."""
    starts: list[int] = []

    def setup(eng: Engine) -> None:
        eng.call_at(10_000, lambda _: None)  # far past the end

        async def job(i: int) -> None:
            starts.append(eng.now)
            await eng.sleep(30)
            eng.call_at(eng.now + 100, lambda _: eng.spawn(job(i + 1)))

        eng.spawn(job(0))

    engine, _ = run_engine(setup, 1000, clock=ScaledRealClock(0, speed=10), concurrent=True)
    assert len(starts) >= 6  # one every ~130 ms of virtual time: about 7 before the end
    assert engine.now == 1000
