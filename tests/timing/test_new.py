"""``new`` rows, design profile: the four initial rows of a new song and the continuation rule.

Seed 000 "new类型：初始追踪": when a video is classified as a song, four ``new`` rows at now + 1.5,
3, 5 and 10 min; after each ``new`` snapshot, "发布时间 < 48小时且速度 > 10/小时 → 继续调度下一次
new; 否则停止，等待常规调度接管". Reference §13.2 (classification), §9 step 5 (continuation, the
interval ladder 240/120/60/15 min the note is silent on), §4 (the initial rows are forced).

Classification goes through :func:`sim.scheduler.feed.classify_song`, the code path
``arrivals_process`` uses, at ``T0 + 7.25 s`` (between two ticks, so the offsets are visibly
relative to the classification instant, not to a tick).
"""

from __future__ import annotations

import pytest

from sim.events.cvsa_kinds import (
    ScheduleCreated,
    ScheduleDispatched,
    ScheduleNotCreated,
    SnapshotTaken,
    SongClassified,
)
from sim.scheduler.context import Ctx
from sim.scheduler.feed import classify_song
from sim.testing.runs import T0, ModelRun, Video, run_model
from sim.units import DAY_MS, HOUR_MS, MINUTE_MS, Ms
from tests.timing._support import (
    NOT_CREATED,
    PLACEMENT,
    Setup,
    at,
    of_type,
    single_tick_at,
    times,
)

AID = 7
CLASSIFIED = T0 + 7_250
INITIAL_DUE = [7_250 + 90_000, 7_250 + 180_000, 7_250 + 300_000, 7_250 + 600_000]
# snapshotTick runs every whole second and takes rows due within the next second (bounds
# inclusive): a row due at d is taken by the tick at ceil((d - 1 s) / 1 s) s.
INITIAL_TAKEN = [97_000, 187_000, 307_000, 607_000]


def classify_at(t_ms: Ms, published_ms: Ms) -> Setup:
    async def setup(ctx: Ctx) -> None:
        async def classify(c: Ctx) -> None:
            await classify_song(c, AID, published_ms)

        at(ctx, t_ms, classify)

    return setup


def run_new(views: int, published_ms: Ms, until: str, profile: str = "design") -> ModelRun:
    """A video with constant ``views`` (not yet a song) classified at ``CLASSIFIED``."""
    return run_model(
        [Video(AID, published_ms, song=False, views=lambda t: views)],
        until=until,
        profile=profile,
        setup=classify_at(CLASSIFIED, published_ms),
    )


def test_classification_schedules_four_forced_new_rows_at_exact_offsets() -> None:
    """Seed 000 初始调度: +1.5, 3, 5, 10 min, forced (reference §4, §13.2); new rows keep their
    exact time (no window levelling, +1 on their window, seed 000 时间调整策略); each is taken
    by the 1 s tick with priority 3 (seed 000 调度扫描对比)."""
    run = run_new(5_000, T0 - HOUR_MS, "11m")
    assert times(run.events(SongClassified)) == [7_250]
    created = of_type(run, ScheduleCreated, "new")[:4]
    assert times(created) == [7_250] * 4
    assert times(created, "requested_ms") == INITIAL_DUE
    assert times(created, "due_ms") == INITIAL_DUE
    assert [c.forced for c in created] == [1, 1, 1, 1]
    assert {c.placement for c in created} == {PLACEMENT["exact"]}
    # Windows [0, 5m), [0, 5m), [5m, 10m), [10m, 15m): the counts after each +1.
    assert times(created, "window_ms") == [0, 0, 300_000, 600_000]
    assert [c.window_count for c in created] == [1, 2, 1, 1]
    assert [single_tick_at(d) for d in INITIAL_DUE] == INITIAL_TAKEN
    dispatched = of_type(run, ScheduleDispatched, "new")
    assert times(dispatched) == INITIAL_TAKEN
    assert [d.priority for d in dispatched] == [3, 3, 3, 3]
    assert times(of_type(run, SnapshotTaken, "new")) == INITIAL_TAKEN


def test_fast_song_keeps_one_chain_every_15_minutes() -> None:
    """Seed 000: published < 48 h and > 10 views/h -> the next ``new``. 5000 views one hour after
    publication is > 1000 views/h, so the interval is 15 min (reference §9 step 5 ladder). In the
    design profile continuations are not forced (switch ``new_successors_forced``): after the
    first three snapshots the successor is dropped because another new row is active, and one
    chain continues from the fourth. Each successor is due 15 min after the snapshot, which the
    tick took 1 s early, so the chain drifts 1 s earlier per step."""
    run = run_new(5_000, T0 - HOUR_MS, "1h")
    dropped = of_type(run, ScheduleNotCreated, "new")
    assert times(dropped) == INITIAL_TAKEN[:3]
    assert times(dropped, "requested_ms") == [t + 15 * MINUTE_MS for t in INITIAL_TAKEN[:3]]
    assert {d.reason for d in dropped} == {NOT_CREATED["duplicate_active"]}
    successors = of_type(run, ScheduleCreated, "new")[4:]
    assert times(successors) == [607_000, 1_506_000, 2_405_000, 3_304_000]
    assert times(successors, "due_ms") == [1_507_000, 2_406_000, 3_305_000, 4_204_000]
    assert [s.forced for s in successors] == [0, 0, 0, 0]
    taken = times(of_type(run, SnapshotTaken, "new"))
    assert taken == [*INITIAL_TAKEN, 1_506_000, 2_405_000, 3_304_000]


# Published 1 h before T0, the fourth snapshot is 1 h 607 s after publication.
_AGE_AT_FOURTH_H = (HOUR_MS + 607_000) / HOUR_MS


@pytest.mark.parametrize(
    ("views", "interval_ms"),
    [
        (5_000, 15 * MINUTE_MS),  # 4279 views/h > 1000
        (500, 60 * MINUTE_MS),  # 428 views/h > 100
        (100, 120 * MINUTE_MS),  # 85.6 views/h > 50
        (20, 240 * MINUTE_MS),  # 17.1 views/h > 10
        (10, None),  # 8.6 views/h (9.7 at the first snapshot): stop
    ],
)
def test_continuation_interval_ladder(views: int, interval_ms: Ms | None) -> None:
    """The successor after the fourth initial snapshot (at 607 s) is due at 607 s + the interval of
    the average speed since publication (reference §9 step 5; the note gives only the 10 views/h
    floor). Below 10 views/h nothing is scheduled: the video is left to the regular schedule."""
    vph = views / _AGE_AT_FOURTH_H
    assert (vph > 10) == (interval_ms is not None)
    run = run_new(views, T0 - HOUR_MS, "11m")
    successors = of_type(run, ScheduleCreated, "new")[4:]
    if interval_ms is None:
        assert successors == []
        assert of_type(run, ScheduleNotCreated, "new") == []  # the rule said stop every time
    else:
        assert times(successors, "due_ms") == [607_000 + interval_ms]


def test_slow_song_stops_and_is_left_to_the_regular_schedule() -> None:
    """Seed 000 "否则停止，等待常规调度接管": 5 views one hour after publication is below 10 views/h
    at every snapshot, so no successor is asked for; the regular dispatcher (every 30 min) gives
    the new song its normal row at 30 min -- 72 h ahead, because its snapshots show no growth
    (seed 000 间隔计算: = 0 -> 72 h)."""
    run = run_new(5, T0 - HOUR_MS, "31m")
    assert len(of_type(run, ScheduleCreated, "new")) == 4
    assert of_type(run, ScheduleNotCreated, "new") == []
    normal = of_type(run, ScheduleCreated, "normal")
    assert times(normal) == [30 * MINUTE_MS]
    assert times(normal, "requested_ms") == [30 * MINUTE_MS + 72 * HOUR_MS]


def test_chain_stops_once_published_48_hours_ago() -> None:
    """Seed 000 "发布时间 < 48小时": published 47.5 h before T0, the chain's snapshot at 1506 s is
    47 h 55 min old (continue), the one at 2405 s is 48 h 10 min old (stop)."""
    published = T0 - 47 * HOUR_MS - 30 * MINUTE_MS
    assert 1_506_000 - (published - T0) < 2 * DAY_MS < 2_405_000 - (published - T0)
    run = run_new(10**6, published, "2h")
    assert times(of_type(run, SnapshotTaken, "new")) == [*INITIAL_TAKEN, 1_506_000, 2_405_000]
    assert times(of_type(run, ScheduleCreated, "new")[4:], "due_ms") == [1_507_000, 2_406_000]
    assert [t for t in times(of_type(run, ScheduleNotCreated, "new")) if t > 607_000] == []


def test_chain_stops_at_exactly_48_hours() -> None:
    """Seed 000 "< 48小时" is strict: the snapshot at 1506 s, exactly 48 h after publication,
    ends the chain (the deployed code would continue: "age > 48 h", reference §9 step 5; see
    ``test_profiles_cvsa``; switch ``new_stop_at_bounds``)."""
    published = T0 + 1_506_000 - 2 * DAY_MS
    run = run_new(10**6, published, "1h")
    assert times(of_type(run, SnapshotTaken, "new")) == [*INITIAL_TAKEN, 1_506_000]
    assert times(of_type(run, ScheduleCreated, "new")[4:], "due_ms") == [1_507_000]


@pytest.mark.parametrize(("views", "continues"), [(30, False), (31, True)])
def test_speed_must_exceed_10_views_per_hour(views: int, continues: bool) -> None:
    """Seed 000 "速度 > 10/小时" is strict: published so that the fourth snapshot (607 s) is exactly
    3 h old, 30 views is exactly 10 views/h and stops; 31 views continues at 240 min."""
    published = T0 + 607_000 - 3 * HOUR_MS
    run = run_new(views, published, "11m")
    successors = of_type(run, ScheduleCreated, "new")[4:]
    assert times(successors, "due_ms") == ([607_000 + 240 * MINUTE_MS] if continues else [])
