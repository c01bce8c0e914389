"""The log tells where each row came from: every schedule-created event names the rule that
asked for it, and the history the videos had at the start is in the log (issue 26)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from sim.events import cvsa_kinds as K
from sim.metrics.cvsa import ScheduleCounts
from sim.rng import RandomStreams
from sim.runner import RunOptions, run_scenario
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model
from sim.scheduler.context import Ctx
from sim.scheduler.feed import classify_song
from sim.testing.runs import T0, Recorder, Video, run_model
from sim.units import HOUR_MS
from sim.world import World
from tests.conftest import DATA
from tests.metrics.loglib import reduce_recorded

APPROACHER, NEW_SONG = 10_000_019, 10_194_463


def approacher() -> Video:
    """90k views and 2k/h: a milestone candidate from the first dispatch."""
    return Video(
        APPROACHER,
        published_ms=T0 - 30 * 24 * HOUR_MS,
        views=lambda t: 90_000 + 2_000 * (t - T0) // HOUR_MS,
        history=[(T0 - HOUR_MS, 88_000), (T0, 90_000)],
    )


def new_song() -> Video:
    """A song published an hour ago, 5k views an hour: new rows continue every 15 min."""
    return Video(
        NEW_SONG,
        published_ms=T0 - HOUR_MS,
        song=False,
        views=lambda t: 5_000 * (t - (T0 - HOUR_MS)) // HOUR_MS,
    )


async def classify(ctx: Ctx) -> None:
    await classify_song(ctx, NEW_SONG, T0 - HOUR_MS)


def test_each_path_logs_its_rule() -> None:
    run = run_model([approacher(), new_song()], until="3h", setup=classify)
    words = K.SCHEDULE_RULE.words
    created = run.events(K.ScheduleCreated)
    pairs = Counter(
        (K.SNAPSHOT_TYPE.words[e.type], words[e.rule], e.aid == NEW_SONG) for e in created
    )
    assert pairs[("new", "forced", True)] == 4  # classifyVideo's +1.5, 3, 5, 10 min (§13.2)
    assert pairs[("new", "continuation", True)] > 0  # §9 step 5
    assert pairs[("milestone", "dispatcher", False)] > 0  # §11.5
    assert pairs[("milestone", "reeta", False)] > 0  # §9 step 7
    assert pairs[("archive", "dispatcher", False)] == 1  # the archive pass at start (§13b)
    assert {rule for _, rule, _ in pairs} <= {"forced", "continuation", "dispatcher", "reeta"}
    by_rule = Counter(words[e.rule] for e in created)
    metrics = reduce_recorded([ScheduleCounts()], run.recorder)
    for rule, n in by_rule.items():
        assert metrics[f"schedules.created_by.{rule}"] == n


def test_the_seeded_history_is_in_the_log() -> None:
    scenario = load_scenario(DATA / "small.toml", overrides=['duration="10m"'])
    recorder = Recorder()
    run_scenario(scenario, build_cvsa_model, RunOptions(extra_sinks=[recorder]))
    loaded = recorder.events(K.HistoryLoaded)
    world = World.build(scenario, RandomStreams(scenario.seed))
    expected = []
    for offset in sorted(scenario.scheduler.history, reverse=True):
        t = scenario.start_ms - offset
        for i in np.flatnonzero(world.initial.published_ms <= t):
            expected.append((world.aid_of(i), t, world.views(world.aid_of(i), t)))
    got = [(e.aid, e.taken_ms, e.views) for e in loaded]
    assert got == expected
    assert {e.t_ms for e in loaded} == {scenario.start_ms}
