"""Virtual time never moves while real I/O is in flight; the scaled real clock keeps pace."""

from __future__ import annotations

import time

import pytest
import trio

from sim.clock import ScaledRealClock
from sim.determinism import trio_private_names_present
from sim.engine import Engine, Job, Queue
from sim.testing import run_engine


def test_trio_private_scheduler_names_exist() -> None:
    """sim.determinism seeds trio through private names; a trio upgrade must not drop them."""
    assert trio_private_names_present()


def _thread_io_model(ticks: list[int], io: list[tuple[int, int]]) -> object:
    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 2)

        async def tick(job: Job) -> None:
            ticks.append(eng.now)

        async def io_process() -> None:
            for _ in range(4):
                before = eng.now
                # A real wait of 20 ms in a worker thread: with trio's MockClock autojump this
                # would let virtual time leap ahead (trio issue 456, feasibility.md §2b).
                await trio.to_thread.run_sync(time.sleep, 0.02)
                io.append((before, eng.now))
                await eng.sleep(1500)

        q.every("tick", 1000, tick)
        eng.spawn(io_process())

    return setup


def test_virtual_time_is_frozen_during_thread_io() -> None:
    ticks: list[int] = []
    io: list[tuple[int, int]] = []
    _, rec = run_engine(_thread_io_model(ticks, io), 6000, elide=False)
    assert io == [(0, 0), (1500, 1500), (3000, 3000), (4500, 4500)]
    assert ticks == [0, 1000, 2000, 3000, 4000, 5000, 6000]
    ticks2: list[int] = []
    io2: list[tuple[int, int]] = []
    _, rec2 = run_engine(_thread_io_model(ticks2, io2), 6000, elide=False)
    assert rec.fingerprint == rec2.fingerprint


@pytest.mark.slow
def test_scaled_real_clock_runs_ticks_on_time() -> None:
    """300 virtual seconds of 1 s ticks at --speed 100 take ~3 wall seconds, each on its slot."""
    ticks: list[int] = []
    lags: list[int] = []
    clock = ScaledRealClock(0, speed=100)

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 5)

        async def tick(job: Job) -> None:
            ticks.append(eng.now)
            lags.append(clock.lag_ms(eng.now))

        q.every("tick", 1000, tick)

    t0 = time.perf_counter()
    run_engine(setup, 300_000, clock=clock, elide=False)
    wall = time.perf_counter() - t0
    assert ticks == list(range(0, 300_001, 1000))
    assert 2.9 <= wall <= 4.0, wall
    # lag is in virtual ms: 100 virtual ms = 1 wall ms at this speed
    lags.sort()
    assert lags[len(lags) // 2] < 5_000, lags[len(lags) // 2]
    assert lags[0] >= 0


@pytest.mark.slow
def test_concurrent_mode_overlaps_real_io() -> None:
    """Load-harness mode: 10 jobs that each wait 100 ms on real I/O, 5 workers: the last one is
    done after about 0.2 s, where a one-query-at-a-time client would need 1 s."""
    started: list[float] = []
    finished: list[float] = []

    def setup(eng: Engine) -> None:
        q = Queue(eng, "q", 5)

        async def io_job(job: Job) -> None:
            started.append(trio.current_time())
            await trio.sleep(0.1)  # a real round trip
            finished.append(trio.current_time())

        for _ in range(10):
            q.add("io", io_job)

    run_engine(setup, 1_000, clock=ScaledRealClock(0, speed=1), elide=False, concurrent=True)
    assert len(finished) == 10
    assert 0.19 <= max(finished) - min(started) < 0.6
