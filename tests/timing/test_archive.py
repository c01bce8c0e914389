"""``archive`` rows, design profile: dispatchArchiveSnapshots every 2 h (and at start).

Seed 000 "archive类型：存档追踪": songs without an active archive row -> 下周六 (next Saturday);
known videos that are not songs -> 下周一到再下周一随机 (uniform from next Monday to the Monday
after). Design reads both as dates, i.e. local midnight in UTC+8 (switch
``archive_keeps_time_of_day``); "next" is strictly after today, as date-fns ``nextSaturday`` /
``nextMonday`` (reference §13b.2-13b.5). Targets are levelled (seed 000 时间调整策略), and archive
rows are taken by bulkSnapshotTick with priority 2 (seed 000 调度扫描对比).

Calendar expectations are computed with :mod:`datetime`, independently of ``sim.cvsa.calendar``.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

from sim.cvsa.vocabulary import ScheduleType
from sim.events.cvsa_kinds import ScheduleCreated, ScheduleDispatched, SnapshotTaken
from sim.scheduler.context import Ctx
from sim.testing.runs import T0, Video, run_model
from sim.units import DAY_MS, HOUR_MS, WEEK_MS, WINDOW_MS, Ms
from tests.timing._support import (
    at,
    bulk_tick_at,
    draws,
    jitter_offsets,
    of_aid,
    of_type,
    times,
)

UTC8 = timezone(timedelta(hours=8))
OLD = T0 - 100 * DAY_MS
SONG, OTHER = 1, 2


def ms(text: str) -> Ms:
    return int(datetime.fromisoformat(text).timestamp() * 1000)


def window(t: Ms) -> Ms:
    return t - t % WINDOW_MS


def videos() -> list[Video]:
    return [Video(SONG, OLD, song=True), Video(OTHER, OLD, song=False)]


async def far_normal_row(ctx: Ctx) -> None:
    """The song's pending normal row, far ahead, keeps the regular dispatcher from drawing."""
    await ctx.store.insert_schedule(SONG, ScheduleType.NORMAL, T0 + 30 * DAY_MS, T0)


def test_targets_of_the_run_at_t0() -> None:
    """At T0 (Monday 2031-01-06 00:00 +08:00): the song is asked for at Saturday 2031-01-11 00:00,
    the other video at Monday 2031-01-13 00:00 + u x 7 days (u: the first ``archive`` draw).
    Songs go first, so the song's row takes the first jitter draw and the other video's the
    second."""
    assert datetime.fromtimestamp(T0 / 1000, UTC8).strftime("%A %H:%M") == "Monday 00:00"
    run = run_model(videos(), until="1m", setup=far_normal_row)
    created = of_type(run, ScheduleCreated, "archive")
    song_target = ms("2031-01-11T00:00:00+08:00")
    other_target = ms("2031-01-13T00:00:00+08:00") + math.floor(draws("archive", 1)[0] * WEEK_MS)
    j = jitter_offsets(2)
    assert [(c.t_ms - T0, c.aid, c.requested_ms, c.due_ms) for c in created] == [
        (0, SONG, song_target, song_target + j[0]),
        (0, OTHER, other_target, window(other_target) + j[1]),
    ]


def test_a_run_on_saturday_targets_the_saturday_after() -> None:
    """date-fns ``nextSaturday`` is strictly after today (reference §13b.2): a run on Saturday
    2031-01-11 10:00 asks for Saturday 2031-01-18 00:00; the other video's range starts on the
    coming Monday, 2031-01-13."""
    run = run_model(videos(), until="1m", start="2031-01-11T10:00:00+08:00", setup=far_normal_row)
    created = of_type(run, ScheduleCreated, "archive")
    monday = ms("2031-01-13T00:00:00+08:00")
    assert [(c.aid, c.requested_ms) for c in created] == [
        (SONG, ms("2031-01-18T00:00:00+08:00")),
        (OTHER, monday + math.floor(draws("archive", 1)[0] * WEEK_MS)),
    ]


def test_videos_are_picked_up_by_the_next_two_hourly_run() -> None:
    """The dispatcher runs every 2 h: a song that appears at 1 h gets its row at 2 h (for
    Saturday 00:00), a non-song video that appears at 3 h gets its row at 4 h (in the week from
    Monday 2031-01-13 00:00, with the second ``archive`` draw: the first went to the video known
    at T0)."""

    async def setup(ctx: Ctx) -> None:
        await far_normal_row(ctx)

        async def add_song(c: Ctx) -> None:
            await c.store.add_video(3, OLD)
            await c.store.add_song(3, OLD)
            await c.store.insert_schedule(3, ScheduleType.NORMAL, T0 + 30 * DAY_MS, c.now)

        async def add_other(c: Ctx) -> None:
            await c.store.add_video(4, OLD)

        at(ctx, T0 + HOUR_MS, add_song)
        at(ctx, T0 + 3 * HOUR_MS, add_other)

    run = run_model(videos(), until="5h", setup=setup)  # 3 and 4 are not snapshotted by 5 h
    created = of_type(run, ScheduleCreated, "archive")
    assert [(c.t_ms - T0, c.aid) for c in created] == [
        (0, SONG),
        (0, OTHER),
        (2 * HOUR_MS, 3),
        (4 * HOUR_MS, 4),
    ]
    u = draws("archive", 2)[1]
    assert [c.requested_ms for c in created[2:]] == [
        ms("2031-01-11T00:00:00+08:00"),
        ms("2031-01-13T00:00:00+08:00") + math.floor(u * WEEK_MS),
    ]


def test_saturday_snapshot_then_the_next_weeks_row() -> None:
    """The song's archive row (due Saturday 00:00 + the first jitter offset) is taken by the bulk
    tick whose 15-s look-ahead reaches it, priority 2 (seed 000: archive=2). Completing it
    schedules nothing (reference §13b.6); the next 2-hourly run that finds the song without an
    active archive row asks for the Saturday after."""
    run = run_model([Video(SONG, OLD, song=True)], until="122h5m", setup=far_normal_row)
    due = ms("2031-01-11T00:00:00+08:00") - T0 + jitter_offsets(1)[0]
    taken = bulk_tick_at(due)
    dispatched = of_aid(run, ScheduleDispatched, SONG)
    assert [(d.t_ms - T0, d.priority) for d in dispatched] == [(taken, 2)]
    assert times(of_aid(run, SnapshotTaken, SONG)) == [taken]
    created = of_type(run, ScheduleCreated, "archive")
    next_run = -(-taken // (2 * HOUR_MS)) * 2 * HOUR_MS
    assert [(c.t_ms - T0, c.requested_ms) for c in created] == [
        (0, ms("2031-01-11T00:00:00+08:00")),
        (next_run, ms("2031-01-18T00:00:00+08:00")),
    ]
