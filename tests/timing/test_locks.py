"""Dispatcher locks: switches ``dispatcher_locks`` and ``lock_release_bug`` (reference §2.8,
§11.7 steps 1-2 and 5, §13b.1).

Two deployments run at once (the ``second_instance`` fault, its timers 0.5 s behind). Every
INSERT of a normal row takes 50 s, so the first deployment's regular dispatcher run (three
songs) lasts from T0 to T0 + 150 s, and the second's run at T0 + 0.5 s finds the lock held.
"""

from __future__ import annotations

from typing import Any

import pytest

from sim.cvsa.vocabulary import ScheduleType
from sim.events.cvsa_kinds import LOCK_OUTCOME, DispatcherLocked, ScheduleCreated
from sim.scheduler.context import Ctx
from sim.testing.runs import T0, ModelRun, Video, run_model
from sim.units import DAY_MS, SECOND_MS
from tests.timing._support import SlowInserts, at, of_type, rel

DESIGN, CVSA = "design", "cvsa-2026"
SONGS = [1, 2, 3]
TWO_DEPLOYMENTS = """
[[faults]]
kind = "second_instance"
start = "0s"
duration = "1h"
phase = "0.5s"
"""
LOCK = "dispatchRegularSnapshots"


def _run(profile: str, switches: dict[str, object] | None = None) -> tuple[ModelRun, list[Any]]:
    held: list[tuple[int, bool]] = []

    async def probe(ctx: Ctx) -> None:
        held.append((rel(ctx.now), await ctx.locks.is_locked(LOCK, ctx.now)))

    async def setup(ctx: Ctx) -> None:
        for aid in SONGS:  # an active archive row each: the archive dispatcher has nothing to do
            await ctx.store.insert_schedule(aid, ScheduleType.ARCHIVE, T0 + 30 * DAY_MS, T0)
        ctx.store = SlowInserts(ctx.store, ctx, "normal", 50 * SECOND_MS)
        for t in (10 * SECOND_MS, 200 * SECOND_MS):
            at(ctx, T0 + t, probe)

    videos = [Video(aid, T0 - 30 * DAY_MS, song=True) for aid in SONGS]
    run = run_model(
        videos, until="40m", setup=setup, profile=profile, switches=switches, faults=TWO_DEPLOYMENTS
    )
    return run, held


def _locked(run: ModelRun) -> list[tuple[int, str, str]]:
    names = run.engine.log.names
    return [
        (rel(e.t_ms), names[e.name], LOCK_OUTCOME.word(e.outcome))
        for e in run.events(DispatcherLocked)
    ]


def _by_second_deployment(run: ModelRun) -> list[int]:
    """Songs the second deployment gave a normal row: its timers run 0.5 s behind, so every row
    it dispatches carries a half second (the first's never do)."""
    return [c.aid for c in of_type(run, ScheduleCreated, "normal") if rel(c.t_ms) % 1000]


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_the_second_run_finds_the_lock_held_and_does_nothing(profile: str) -> None:
    run, _ = _run(profile)
    assert _by_second_deployment(run) == []
    first: dict[int, int] = {}
    for c in of_type(run, ScheduleCreated, "normal"):
        first.setdefault(c.aid, rel(c.t_ms))
    assert first == {1: 0, 2: 50 * SECOND_MS, 3: 100 * SECOND_MS}, "the first run's rows"
    if profile == DESIGN:  # the next round (T0 + 30 min) is slow again: busy again
        assert _locked(run) == [(500, LOCK, "busy"), (1_800_500, LOCK, "busy")]
    else:  # deployed, bulk snapshots rescheduled the songs: the next round is instant
        assert _locked(run) == [(500, LOCK, "busy"), (500, LOCK, "released_other")]


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_lock_release_bug_frees_the_running_dispatchers_lock(profile: str) -> None:
    """Deployed, the busy run's ``finally`` deletes the lock while the first run still works
    (probe at T0 + 10 s); design keeps it until the first run releases it (T0 + 150 s)."""
    _, held = _run(profile)
    assert held == [(10 * SECOND_MS, profile == DESIGN), (200 * SECOND_MS, False)]


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_without_locks_both_deployments_dispatch_every_song(profile: str) -> None:
    """Switch ``dispatcher_locks`` off: the second run checks for active rows while the first
    is still inserting them, so every song gets a second normal row (reference §11.7)."""
    run, held = _run(profile, {"dispatcher_locks": False})
    assert _by_second_deployment(run)[:3] == SONGS
    assert _locked(run) == []
    assert held == [(10 * SECOND_MS, False), (200 * SECOND_MS, False)]


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_locks_metrics_count_the_lock_events(profile: str) -> None:
    from sim.metrics.cvsa import ScheduleCounts
    from tests.metrics.loglib import reduce_recorded

    run, _ = _run(profile)
    m = reduce_recorded([ScheduleCounts()], run.recorder)
    locked = {k: v for k, v in m.items() if k.startswith("locks.")}
    if profile == DESIGN:
        assert locked == {"locks.dispatchRegularSnapshots.busy": 2}
    else:
        assert locked == {
            "locks.dispatchRegularSnapshots.busy": 1,
            "locks.dispatchRegularSnapshots.released_other": 1,
        }
