"""``normal`` rows, design profile: dispatchRegularSnapshots every 30 min.

Seed 000 "normal类型：常规追踪": songs without a pending/processing normal row; the interval from
the growth of the last 24 h -- = 0 -> 72 h, < 6/day -> 36 h, 6-119 -> 24 h, 120-319 -> 12 h,
>= 320 -> 6 h; the target levelled by adjustSnapshotTime (a uniform offset inside its 5-min
window). Reference §11.6 (growth from the last snapshot at or before 24 h ago to the latest, per
day over the span + 0.001 h; 0 h when there is no second snapshot), §11.7. The design target is
now + interval (switch ``regular_target_from_last_snapshot``), and normal rows come only from
this dispatcher (switch ``bulk_reschedules_normal``).
"""

from __future__ import annotations

from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType
from sim.events.cvsa_kinds import ScheduleCreated, ScheduleDispatched, SnapshotTaken
from sim.scheduler.context import Ctx
from sim.testing.runs import T0, Video, run_model
from sim.units import DAY_MS, HOUR_MS, MINUTE_MS, WINDOW_MS
from tests.timing._support import (
    PLACEMENT,
    at,
    bulk_tick_at,
    jitter_offsets,
    of_aid,
    of_type,
    times,
)

OLD = T0 - 100 * DAY_MS

GAINS = [0, 3, 50, 200, 400]
"""Views gained between snapshots at T0 - 24 h and T0 - 1 min, one song each."""


def note_interval_h(gain: int, span_h: float) -> int:
    """Seed 000's table on the growth per day, over the span + 0.001 h (reference §11.6)."""
    per_day = gain / (span_h + 0.001) * 24
    if gain == 0:
        return 72
    if per_day < 6:
        return 36
    if per_day < 120:
        return 24
    return 12 if per_day < 320 else 6


def test_interval_follows_the_growth_of_the_last_24_hours() -> None:
    """Five songs with snapshots at T0 - 24 h and T0 - 1 min: the dispatcher at T0 asks for
    T0 + 72, 36, 24, 12 and 6 h (T0 is a window start, so each target is too). Each row lands in
    its target's window at the offset of the next ``jitter`` draw (songs in ascending aid
    order; they are the first adjusted rows of the run)."""
    videos = [
        Video(
            aid,
            OLD,
            song=True,
            views=lambda t: 1_000,
            history=[(T0 - DAY_MS, 1_000), (T0 - MINUTE_MS, 1_000 + gain)],
        )
        for aid, gain in enumerate(GAINS, start=1)
    ]
    hours = [note_interval_h(gain, 24 - 1 / 60) for gain in GAINS]
    assert hours == [72, 36, 24, 12, 6]  # one song per row of the table
    run = run_model(videos, until="1m")
    created = of_type(run, ScheduleCreated, "normal")
    assert [c.aid for c in created] == [1, 2, 3, 4, 5]
    targets = [h * HOUR_MS for h in hours]
    assert times(created) == [0] * 5
    assert times(created, "requested_ms") == targets
    assert times(created, "window_ms") == targets
    offsets = jitter_offsets(5)
    assert times(created, "due_ms") == [t + j for t, j in zip(targets, offsets, strict=True)]
    assert {c.placement for c in created} == {PLACEMENT["forward"]}


def test_the_six_hour_row_is_taken_by_the_bulk_tick() -> None:
    """The row of a song growing >= 320/day is due 6 h and a jitter offset after T0; the first bulk
    tick whose 15-s look-ahead reaches it takes it, and the next normal row comes from the first
    dispatcher run after that snapshot (design: the bulk worker does not reschedule)."""
    video = Video(
        1,
        OLD,
        song=True,
        views=lambda t: 1_400,
        history=[(T0 - DAY_MS, 1_000), (T0 - MINUTE_MS, 1_400)],
    )
    run = run_model([video], until="7h")
    due = 6 * HOUR_MS + jitter_offsets(1)[0]
    taken = bulk_tick_at(due)
    assert times(of_aid(run, ScheduleDispatched, 1)) == [taken]
    assert times(of_aid(run, SnapshotTaken, 1)) == [taken]
    created = of_type(run, ScheduleCreated, "normal")
    next_run = -(-taken // (30 * MINUTE_MS)) * 30 * MINUTE_MS
    assert times(created) == [0, next_run]


def test_dispatcher_runs_every_30_minutes() -> None:
    """Three videos become songs at 10, 40 and 70 min; each gets its normal row from the next
    dispatcher run -- at 30, 60 and 90 min -- at that instant + 72 h (their two snapshots show
    no growth), levelled with the next jitter draw (an active archive row, inserted at T0, keeps
    the archive dispatcher from drawing)."""
    history = [(T0 - DAY_MS, 1_000), (T0 - HOUR_MS, 1_000)]
    aids = [1, 2, 3]

    async def setup(ctx: Ctx) -> None:
        for k, aid in enumerate(aids):
            await ctx.store.insert_schedule(aid, ScheduleType.ARCHIVE, T0 + 10 * DAY_MS, T0)

            async def become_song(c: Ctx, aid: int = aid) -> None:
                await c.store.add_song(aid, OLD)

            at(ctx, T0 + (10 + 30 * k) * MINUTE_MS, become_song)

    videos = [Video(aid, OLD, song=False, views=lambda t: 1_000, history=history) for aid in aids]
    run = run_model(videos, until="100m", setup=setup)
    created = of_type(run, ScheduleCreated, "normal")
    runs = [30 * MINUTE_MS, 60 * MINUTE_MS, 90 * MINUTE_MS]
    assert [(c.t_ms - T0, c.aid) for c in created] == list(zip(runs, aids, strict=True))
    targets = [t + 72 * HOUR_MS for t in runs]
    assert times(created, "requested_ms") == targets
    offsets = jitter_offsets(3)
    assert times(created, "due_ms") == [t + j for t, j in zip(targets, offsets, strict=True)]


def test_only_songs_without_an_active_normal_row() -> None:
    """Seed 000 getVideosWithoutActiveSnapshotScheduleByType("normal"): in songs, and no pending
    or processing normal row. Of a song with a pending row, a song with a processing row, a
    song with only a completed row and a video that is not a song, only the third gets a row."""

    async def setup(ctx: Ctx) -> None:
        await ctx.store.insert_schedule(1, ScheduleType.NORMAL, T0 + DAY_MS, T0)
        processing = await ctx.store.insert_schedule(2, ScheduleType.NORMAL, T0 + DAY_MS, T0)
        await ctx.store.set_schedule_status([processing], ScheduleStatus.PROCESSING)
        completed = await ctx.store.insert_schedule(3, ScheduleType.NORMAL, T0 - DAY_MS, T0)
        await ctx.store.set_schedule_status([completed], ScheduleStatus.COMPLETED)

    videos = [
        Video(1, OLD, song=True),
        Video(2, OLD, song=True),
        Video(3, OLD, song=True),
        Video(4, OLD, song=False),
    ]
    run = run_model(videos, until="1s", setup=setup)
    assert [c.aid for c in of_type(run, ScheduleCreated, "normal")] == [3]


def test_design_target_is_now_plus_the_interval() -> None:
    """The design target is now + interval (seed 000; switch
    ``regular_target_from_last_snapshot``): a song whose last snapshot is 2 h old and grows
    >= 320/day is asked for at T0 + 6 h, not 4 h."""
    video = Video(
        1,
        OLD,
        song=True,
        views=lambda t: 5_000,
        history=[(T0 - DAY_MS, 1_000), (T0 - 2 * HOUR_MS, 5_000)],
    )
    run = run_model([video], until="1s")
    created = of_type(run, ScheduleCreated, "normal")
    assert times(created, "requested_ms") == [6 * HOUR_MS]
    assert times(created, "due_ms")[0] - 6 * HOUR_MS in range(WINDOW_MS)
