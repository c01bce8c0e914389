"""``milestone`` rows, design profile: candidates, the ETA, the clamp, moves and the re-ETA.

Seed 000 "milestone类型：成就预判": every 5 min, videos near 100k, 1M, 2M ... or with an ETA below
2300 h; the ETA from the latest snapshot and the snapshots closest to 3 min, 20 min, 1 h, 3 h, 6 h
and 72 h ago, at the largest speed, divided by the acceleration factor
``log(4.5 / log(x + 100), 1.054) + 0.601``; ETA < 144 h -> a row at now + ETA clamped to
[2 s, 1.2 h]; an existing pending row is only moved earlier (scheduleSnapshot 1., in one
transaction with its window count); after a milestone snapshot: reached -> stop, else re-ETA and
schedule again. Reference §5 step 2, §9 step 7, §11.1-11.5 (the ``+1e-5`` epsilons, the [4.5, 100]
truncation and the base-10 inner log the note leaves implicit).

Expected delays are computed from the note's formula (``tests.timing._support``), independently
of ``sim.cvsa``.
"""

from __future__ import annotations

import pytest

from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType
from sim.events.cvsa_kinds import (
    ScheduleCreated,
    ScheduleDispatched,
    ScheduleMoved,
    ScheduleNotCreated,
    SnapshotTaken,
    WindowReleased,
)
from sim.ports import EtaRow
from sim.scheduler.context import Ctx
from sim.testing.runs import T0, ModelRun, Video, run_model
from sim.units import DAY_MS, HOUR_MS, MINUTE_MS, Ms
from tests.timing._support import (
    CAUSE,
    NOT_CREATED,
    PLACEMENT,
    Setup,
    eta_hours,
    lookback_speed,
    milestone_delay_ms,
    note_factor,
    of_type,
    single_tick_at,
    times,
)

AID = 1
CLAMP_MIN, CLAMP_MAX = 2_000, 72 * MINUTE_MS  # seed 000: 2 秒 ~ 1.2 小时
speed = lookback_speed
delay_ms = milestone_delay_ms


def linear(at_t0: int, per_hour: int) -> Video:
    """A song with ``at_t0`` views at T0 growing by ``per_hour``, with snapshots at T0 - 1 h and
    T0 on that line."""
    return Video(
        AID,
        T0 - 30 * DAY_MS,
        song=True,
        views=lambda t: at_t0 + (t - T0) * per_hour // HOUR_MS,
        history=[(T0 - HOUR_MS, at_t0 - per_hour), (T0, at_t0)],
    )


def far_rows(*extra: tuple[str, Ms, str]) -> Setup:
    """Keep the regular and archive dispatchers away (an active normal and archive row far
    ahead), plus ``extra`` rows (type, due, status)."""

    async def setup(ctx: Ctx) -> None:
        await ctx.store.insert_schedule(AID, ScheduleType.NORMAL, T0 + 10 * DAY_MS, T0)
        await ctx.store.insert_schedule(AID, ScheduleType.ARCHIVE, T0 + 10 * DAY_MS, T0)
        for type_, due, status in extra:
            row = await ctx.store.insert_schedule(AID, ScheduleType(type_), due, T0)
            if status != "pending":
                await ctx.store.set_schedule_status([row], ScheduleStatus(status))

    return setup


def run_ms(video: Video, until: str, setup: Setup | None = None, **switches: object) -> ModelRun:
    return run_model([video], until=until, setup=setup or far_rows(), switches=switches)


def test_first_dispatch_schedules_now_plus_eta_and_repeats_every_5_minutes() -> None:
    """95 000 views growing 1000/h: 5000 to go, speed 1000/(1 h + 1e-5), factor 4.5 (the note's
    formula gives 4.28, truncated up) -> ETA 1.11 h, inside the clamp: a row at T0 + 4000039 ms,
    exact (milestone rows are not levelled). The dispatcher runs again every 5 min; its target
    (now + the same ETA, the snapshots being unchanged) is later, so the row stays
    ("milestone_not_earlier"). The 1 s tick takes the row with priority 1."""
    run = run_ms(linear(95_000, 1_000), "66m40s")
    due = delay_ms(eta_hours(5_000, speed(1_000, 1)))
    assert due == 4_000_039
    created = of_type(run, ScheduleCreated, "milestone")
    assert [(c.t_ms - T0, c.requested_ms - T0, c.due_ms - T0) for c in created][:1] == [
        (0, due, due)
    ]
    assert created[0].placement == PLACEMENT["exact"]
    refused = of_type(run, ScheduleNotCreated, "milestone")
    assert times(refused) == [k * 5 * MINUTE_MS for k in range(1, 14)]
    assert times(refused, "requested_ms") == [t + due for t in times(refused)]
    assert {r.reason for r in refused} == {NOT_CREATED["milestone_not_earlier"]}
    dispatched = of_type(run, ScheduleDispatched, "milestone")
    assert [(d.t_ms - T0, d.priority) for d in dispatched] == [(single_tick_at(due), 1)]


def test_eta_uses_the_fastest_lookback() -> None:
    """Seed 000 "取最大速度": with snapshots at 72 h, 6 h, 1 h, 20 min and 3 min before T0, the
    20-min lookback is the fastest (500 views in 20 min = 1500/h) and sets the ETA. The 3-h
    lookback finds the 1-h snapshot (the closest), the others their own."""
    history = [
        (T0 - 72 * HOUR_MS, 50_000),  # 72 h: 45 000 in 72 h = 625/h
        (T0 - 6 * HOUR_MS, 92_000),  # 6 h: 500/h
        (T0 - HOUR_MS, 94_000),  # 1 h and 3 h: 1000/h
        (T0 - 20 * MINUTE_MS, 94_500),  # 20 min: 1500/h
        (T0 - 3 * MINUTE_MS, 94_950),  # 3 min: 1000/h
        (T0, 95_000),
    ]
    video = Video(AID, T0 - 30 * DAY_MS, song=True, views=lambda t: 95_000, history=history)
    run = run_ms(video, "1m")
    speeds = [
        speed(50, 3 / 60),
        speed(500, 20 / 60),
        speed(1_000, 1),
        speed(1_000, 1),
        speed(3_000, 6),
        speed(45_000, 72),
    ]
    assert max(speeds) == speeds[1]
    due = delay_ms(eta_hours(5_000, max(speeds)))
    assert times(of_type(run, ScheduleCreated, "milestone"), "due_ms") == [due]


@pytest.mark.parametrize(
    ("at_t0", "per_hour", "expected"),
    [
        (99_990, 9_990, CLAMP_MIN),  # 10 to go at ~10k/h: 0.06 s -> 2 s
        (95_000, 1_000, 4_000_039),  # 1.11 h: unclamped
        (90_000, 100, CLAMP_MAX),  # 10 000 to go at 100/h: 22 h -> 1.2 h
        (90_000, 16, CLAMP_MAX),  # 10 000 to go at 16/h: 139 h -> 1.2 h
        (90_000, 15, None),  # 10 000 to go at 15/h: 148 h > 144 h -> no row
    ],
)
def test_eta_clamp_and_144_hour_limit(at_t0: int, per_hour: int, expected: Ms | None) -> None:
    """Seed 000 调度策略: ETA < 144 h -> a row at now + ETA clamped to [2 s, 1.2 h]; beyond 144 h
    nothing (the video stays a candidate: it is near 100k)."""
    eta = eta_hours(100_000 - at_t0, speed(per_hour, 1))
    assert (eta < 144) == (expected is not None)
    if expected is not None:
        assert delay_ms(eta) == expected
    run = run_ms(linear(at_t0, per_hour), "30m")
    created = of_type(run, ScheduleCreated, "milestone")
    if expected is None:
        assert created == []
    else:  # the first row (later ones follow each snapshot)
        assert [(c.t_ms - T0, c.due_ms - T0) for c in created][:1] == [(0, expected)]


@pytest.mark.parametrize(
    ("at_t0", "candidate"),
    [
        (89_000, False),
        (90_000, True),  # [90k, 100k)
        (899_000, False),
        (950_000, True),  # [900k, 1M)
        (1_850_000, False),
        (1_950_000, True),  # [1.9M, 2M): "then every 1M"
    ],
)
def test_candidates_are_videos_near_a_milestone(at_t0: int, candidate: bool) -> None:
    """Seed 000 getVideosNearMilestone: near 100k, 1M, 2M, ... -- "near" being the deployed band
    of 10k below 100k and 100k below each million (reference §11.1 set B). Every video grows
    fast enough for an ETA under 144 h (50 000/h), so only candidacy decides."""
    run = run_ms(linear(at_t0, 50_000), "1m")
    assert len(of_type(run, ScheduleCreated, "milestone")) == int(candidate)


@pytest.mark.parametrize("eta_row", [None, 100.0, 2_299.0, 2_300.0])
def test_an_eta_below_2300_hours_makes_a_candidate(eta_row: float | None) -> None:
    """Seed 000 "或 ETA < 2300小时的视频" (reference §11.1 set C: the ``eta`` table): a video at
    500 000 views, far from a milestone, is a candidate only with an eta row below 2300 h. Its
    own ETA (500 000 to go at 5000/h, factor 4.5: 22 h) is then clamped to 1.2 h."""

    async def setup(ctx: Ctx) -> None:
        await far_rows()(ctx)
        if eta_row is not None:
            await ctx.store.upsert_eta(EtaRow(AID, eta_row, 5_000.0, 500_000, T0))

    run = run_ms(linear(500_000, 5_000), "1m", setup)
    created = of_type(run, ScheduleCreated, "milestone")
    if eta_row is not None and eta_row < 2_300:
        assert times(created, "due_ms") == [CLAMP_MAX]
    else:
        assert created == []


def test_a_pending_row_is_only_moved_earlier_with_its_window_count() -> None:
    """Seed 000 scheduleSnapshot 1.: a pending milestone row due at T0 + 3 h is moved to the
    dispatcher's earlier target (T0 + 4000039 ms) in one transaction: its old window [3 h, 3 h
    5 min) is decremented, the new one [65 min, 70 min) incremented (reference §5 step 2). Later
    runs ask for later times and leave it."""
    old = 3 * HOUR_MS
    run = run_ms(linear(95_000, 1_000), "20m", far_rows(("milestone", T0 + old, "pending")))
    new = delay_ms(eta_hours(5_000, speed(1_000, 1)))
    moved = run.events(ScheduleMoved)
    assert [(m.t_ms - T0, m.from_ms - T0, m.to_ms - T0, m.was_pending) for m in moved] == [
        (0, old, new, 1)
    ]
    assert moved[0].window_count == 1  # the new window's count
    released = [e for e in run.events(WindowReleased) if e.cause == CAUSE["move"]]
    assert [(e.t_ms - T0, e.window_ms - T0, e.value) for e in released] == [(0, old, 0)]
    assert of_type(run, ScheduleCreated, "milestone") == []
    refused = of_type(run, ScheduleNotCreated, "milestone")
    assert times(refused) == [300_000, 600_000, 900_000, 1_200_000]


def test_design_does_not_move_a_processing_row() -> None:
    """Seed 000 "若视频已有同类型待处理调度" reads a *pending* row (switch
    ``milestone_move_processing``): with only a processing milestone row, the dispatcher's
    earlier target is refused as a duplicate and nothing moves."""
    run = run_ms(linear(95_000, 1_000), "1m", far_rows(("milestone", T0 + HOUR_MS, "processing")))
    assert run.events(ScheduleMoved) == []
    refused = of_type(run, ScheduleNotCreated, "milestone")
    assert [(r.t_ms - T0, r.reason) for r in refused] == [(0, NOT_CREATED["duplicate_active"])]


def test_after_a_milestone_snapshot_the_eta_is_recomputed() -> None:
    """Seed 000 "若未达成 → 重新计算ETA并调度下一次": the snapshot at 4000 s reads 96 111 views;
    the new lookbacks (1 h: the T0 snapshot; 3 h, 6 h, 72 h: the T0 - 1 h one; 3 and 20 min:
    the new snapshot itself, skipped) give the next row at 4000 s + ETA, the factor now above
    its floor (3889 to go: 4.84)."""
    run = run_ms(linear(95_000, 1_000), "2h")
    taken = of_type(run, SnapshotTaken, "milestone")
    assert [(s.t_ms - T0, s.views) for s in taken[:1]] == [(4_000_000, 96_111)]
    now_h = 4_000_000 / HOUR_MS
    best = max(speed(1_111, now_h), speed(2_111, now_h + 1))
    assert note_factor(3_889) > 4.5
    second = 4_000_000 + delay_ms(eta_hours(100_000 - 96_111, best))
    created = of_type(run, ScheduleCreated, "milestone")
    assert [(c.t_ms - T0, c.due_ms - T0) for c in created[:2]] == [
        (0, 4_000_039),
        (4_000_000, second),
    ]


def jumping_to(at_400_s: int) -> Video:
    """A song at 99 000 views growing 1000/h, whose views jump to ``at_400_s`` at T0 + 400 s."""

    def views(t: Ms) -> int:
        return at_400_s if t >= T0 + 400_000 else 99_000 + (t - T0) * 1_000 // HOUR_MS

    return Video(
        AID,
        T0 - 30 * DAY_MS,
        song=True,
        views=views,
        history=[(T0 - HOUR_MS, 98_000), (T0, 99_000)],
    )


def test_after_a_milestone_snapshot_past_the_milestone_tracking_stops() -> None:
    """Seed 000 "若已达成成就 → 不再调度": 99 000 views at 1000/h, then a jump to 100 500 at 400 s.
    The row due at 1000/(1000/h)/8.05 h ~ 447 s reads 100 500 > 100 000: no further milestone
    row from the worker (reference §9 step 7); the dispatcher at 5 min came before the snapshot
    and was refused (not earlier)."""

    run = run_ms(jumping_to(100_500), "9m")
    due = delay_ms(eta_hours(1_000, speed(1_000, 1)))
    taken = of_type(run, SnapshotTaken, "milestone")
    assert [(s.t_ms - T0, s.views) for s in taken] == [(single_tick_at(due), 100_500)]
    assert times(of_type(run, ScheduleCreated, "milestone"), "due_ms") == [due]
    assert times(of_type(run, ScheduleNotCreated, "milestone")) == [300_000]


@pytest.mark.parametrize("strict", [False, True])
def test_a_milestone_snapshot_exactly_on_the_milestone(strict: bool) -> None:
    """Seed 000 "若已达成成就则不再调度": the snapshot reads exactly 100 000, which design counts
    as reached: no further milestone row. The deployed code tests ``views > milestone``
    (reference §9 step 7; switch ``milestone_reached_strict``): exactly 100 000 is not reached,
    so the worker re-ETAs at once -- ``closest_milestone(100 000)`` is 1M -- and books a new row
    there and then."""

    run = run_ms(jumping_to(100_000), "9m", milestone_reached_strict=strict)
    due = delay_ms(eta_hours(1_000, speed(1_000, 1)))
    taken = of_type(run, SnapshotTaken, "milestone")
    assert [(s.t_ms - T0, s.views) for s in taken] == [(single_tick_at(due), 100_000)]
    created = of_type(run, ScheduleCreated, "milestone")
    if not strict:
        assert times(created, "due_ms") == [due]  # reached: tracking stops
    else:
        assert [c.t_ms - T0 for c in created] == [0, single_tick_at(due)]  # the re-ETA's row
        # Aimed at 1M: 900 000 to go at about 8 000/h, a day away, clamped to 1.2 h (design).
        assert created[1].due_ms - created[1].t_ms == CLAMP_MAX
