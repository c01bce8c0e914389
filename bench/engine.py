"""Engine throughput: prints numbers, asserts nothing (README "Design rules" 6).

    python bench/engine.py            # all measurements
    python bench/engine.py --quick    # smaller sizes, for a smoke run

Measures: raw timer events per wall second; process wake-ups per wall second; 1 s ticks per wall
second through the full BullMQ queue path (no elision); and the wall cost of an idle 30-day run
with the CVSA periodic jobs and tick elision on. Target (issue 2): >= 300,000 timer events per
wall second on this 2-core machine (feasibility.md §3 compares a bare heapq with one trio task
per event).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from sim.engine import Engine, Job, Queue
from sim.testing import run_engine
from sim.units import DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS


def timed(label: str, setup: Callable[[Engine], None], until_ms: int, *, elide: bool) -> float:
    t0 = time.perf_counter()
    engine, _ = run_engine(setup, until_ms, elide=elide)
    wall = time.perf_counter() - t0
    rate = engine.processed / wall
    print(f"{label:<48} {engine.processed:>10,} entries  {wall:7.3f} s  {rate:>12,.0f} /s")
    return rate


def timers(n_timers: int) -> Callable[[Engine], None]:
    """n independent timers, each re-arming itself 1-60 s later (ties are common)."""

    def setup(eng: Engine) -> None:
        rng = random.Random(1)
        draws = [rng.randrange(1, 61) * SECOND_MS for _ in range(4096)]

        def fire(i: int) -> None:
            eng.call_at(eng.now + draws[(i + eng.now) & 4095], fire, i)

        for i in range(n_timers):
            eng.call_at(eng.now + draws[i & 4095], fire, i)

    return setup


def sleepers(n_procs: int) -> Callable[[Engine], None]:
    """n processes, each looping ``await engine.sleep(1-60 s)``."""

    def setup(eng: Engine) -> None:
        rng = random.Random(2)
        draws = [rng.randrange(1, 61) * SECOND_MS for _ in range(4096)]

        async def proc(i: int) -> None:
            k = i
            while True:
                k = (k + 1) & 4095
                await eng.sleep(draws[k])

        for i in range(n_procs):
            eng.spawn(proc(i))

    return setup


def ticks(every_ms: int) -> Callable[[Engine], None]:
    """One job scheduler through the queue path; its processor does nothing (idle)."""

    def setup(eng: Engine) -> None:
        q = Queue(eng, "snapshot", 50)

        async def tick(job: Job) -> None:
            return None

        q.every("snapshotTick", every_ms, tick)

    return setup


def idle_cvsa(eng: Engine) -> None:
    """The six CVSA periodic jobs (reference §1.3) with nothing to do, and idle hints."""
    q = Queue(eng, "snapshot", 50)

    async def noop(job: Job) -> None:
        return None

    async def never(now: int) -> int:
        return 2**62

    for name, every in [
        ("snapshotTick", SECOND_MS),
        ("bulkSnapshotTick", 15 * SECOND_MS),
        ("scheduleCleanup", 2 * MINUTE_MS),
    ]:
        q.every(name, every, noop, idle_until=never)
    for name, every in [
        ("dispatchMilestoneSnapshots", 5 * MINUTE_MS),
        ("dispatchRegularSnapshots", 30 * MINUTE_MS),
        ("dispatchArchiveSnapshots", 2 * HOUR_MS),
    ]:
        q.every(name, every, noop)  # no hint: these always run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    print(f"{'measurement':<48} {'entries':>10}  {'wall':>9}  {'rate':>14}")
    timed("timer events (10k timers, 1-60 s)", timers(10_000), 3 * HOUR_MS // scale, elide=False)
    timed(
        "process wake-ups (1k processes, 1-60 s)",
        sleepers(1_000),
        10 * HOUR_MS // scale,
        elide=False,
    )
    t0 = time.perf_counter()
    engine, _ = run_engine(ticks(SECOND_MS), DAY_MS // scale, elide=False)
    wall = time.perf_counter() - t0
    n = DAY_MS // scale // SECOND_MS + 1
    print(
        f"{'1 s ticks through the queue, no elision':<48} {n:>10,} ticks    {wall:7.3f} s "
        f"{n / wall:>12,.0f} /s"
    )
    t0 = time.perf_counter()
    engine, _ = run_engine(idle_cvsa, 30 * DAY_MS, elide=True)
    wall = time.perf_counter() - t0
    print(
        f"{'idle 30 days, CVSA periodic jobs, elision on':<48} {engine.processed:>10,} entries "
        f" {wall:7.3f} s  compression {30 * DAY_MS / 1000 / wall:,.0f}x"
    )


if __name__ == "__main__":
    main()
