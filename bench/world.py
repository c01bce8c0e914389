"""Benchmarks of the simulated world (issue 3 budgets). Prints numbers; asserts nothing.

    python bench/world.py [--videos 2000000] [--days 30]

Budgets: catalog of 2M videos in < 5 s and < 200 bytes per video; one scalar ``views`` call
about 1-2 us; ``views_many`` over 1M videos at one instant < 50 ms. Wall time is noisy on a
shared 2-core machine: each figure is the best of a few repeats.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from sim.rng import RandomStreams
from sim.scenario import parse_scenario
from sim.scenario.document import Scenario
from sim.units import HOUR_MS
from sim.world import World


def best_of(repeats: int, fn: Callable[[], object]) -> float:
    """The fastest of ``repeats`` runs of ``fn``, in seconds."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def scenario(videos: int, days: int) -> Scenario:
    """The default world, scaled to ``videos`` catalog videos (6% songs)."""
    songs = videos * 6 // 100
    text = f"""
name = "bench-world"
duration = "{days}d"
[catalog]
songs = {songs}
non_songs = {videos - songs}
"""
    return parse_scenario(text, source="bench")


def main() -> None:
    """Run every benchmark and print one line per figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=2_000_000)
    parser.add_argument("--days", type=int, default=30)
    args = parser.parse_args()
    sc = scenario(args.videos, args.days)

    gc.collect()
    t = time.perf_counter()
    world = World.build(sc, RandomStreams(sc.seed))
    build_s = time.perf_counter() - t
    n = len(world)
    del world
    gc.collect()
    tracemalloc.start()  # a second build, traced: tracing slows allocation down
    world = World.build(sc, RandomStreams(sc.seed))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"videos: {len(world.initial):,} initial + {len(world.arrivals):,} arrivals")
    print(f"catalog build: {build_s:.2f} s (budget 5 s)")
    print(f"stored arrays: {world.nbytes / n:.1f} bytes/video (budget 200)")
    print(f"peak allocation while building: {peak / n:.0f} bytes/video (transient)")

    rng = np.random.default_rng(0)
    t_mid = sc.start_ms + sc.duration // 2
    sample = [int(a) for a in rng.choice(world.aids(), 200_000)]
    views = world.views

    def scalar_same_instant() -> None:
        for a in sample:
            views(a, t_mid)

    instants = (t_mid + rng.integers(0, HOUR_MS, len(sample))).tolist()

    def scalar_moving_instant() -> None:
        for a, ti in zip(sample, instants, strict=True):
            views(a, ti)

    us = best_of(3, scalar_same_instant) / len(sample) * 1e6
    print(f"scalar views(), random aids, one instant: {us:.2f} us/call")
    us = best_of(3, scalar_moving_instant) / len(sample) * 1e6
    print(f"scalar views(), random aids, a new instant per call: {us:.2f} us/call")

    million = min(1_000_000, n)
    shuffled = rng.choice(world.aids(), million, replace=False)
    ordered = np.sort(shuffled)
    ms = best_of(5, lambda: world.views_many(ordered, t_mid)) * 1e3
    print(f"views_many, {million:,} sorted aids: {ms:.1f} ms (budget 50)")
    ms = best_of(5, lambda: world.views_many(shuffled, t_mid)) * 1e3
    print(f"views_many, {million:,} shuffled aids: {ms:.1f} ms")
    ms = best_of(5, lambda: world.views_all(t_mid)) * 1e3
    print(f"views_all, all {n:,} videos: {ms:.1f} ms")

    t = time.perf_counter()
    found = world.crossings(sc.start_ms, sc.end_ms)
    cross_s = time.perf_counter() - t
    print(f"crossings over {args.days} days: {len(found):,} in {cross_s:.2f} s")


if __name__ == "__main__":
    main()
