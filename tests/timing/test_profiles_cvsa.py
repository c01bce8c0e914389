"""The ``cvsa-2026`` profile: one test per switch of ``docs/profiles.md``, each showing the deployed
behaviour (reference §16, §19) and, where the two differ, the design behaviour beside it.

``collect_songs_fallback`` has no test: it is true in both profiles and the model has no state in
which it could act (a classified video joins ``songs`` in the same step as its four new rows,
``sim.scheduler.feed.classify_song``); see ``docs/conformance.md``.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import pytest

from sim.cvsa.vocabulary import ScheduleRule, ScheduleStatus, ScheduleType, UpstreamErrorKind
from sim.events.cvsa_kinds import (
    RetryScheduled,
    ScheduleCreated,
    ScheduleDeleted,
    ScheduleDispatched,
    ScheduleFinished,
    ScheduleMoved,
    ScheduleNotCreated,
    ScheduleSkipped,
    SnapshotTaken,
    StrayStatusChange,
    UpstreamFailed,
    WindowReleased,
    WindowsRebuilt,
)
from sim.ports import UpstreamError
from sim.scheduler.context import Ctx
from sim.scheduler.feed import classify_song
from sim.scheduler.schedule_snapshot import schedule_snapshot
from sim.testing.runs import T0, Fault, ModelRun, Video, run_model
from sim.units import DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS, WEEK_MS, WINDOW_MS, Ms
from tests.timing._support import (
    CAUSE,
    NOT_CREATED,
    PLACEMENT,
    SKIP,
    STATUS,
    TYPE,
    Setup,
    SlowInserts,
    at,
    deployed_factor,
    draws,
    eta_hours,
    jitter_offsets,
    job_names,
    lookback_speed,
    milestone_delay_ms,
    note_factor,
    of_aid,
    of_type,
    rel,
    times,
)

CVSA = "cvsa-2026"
DESIGN = "design"
OLD = T0 - 100 * DAY_MS
NOW = T0 + HOUR_MS + 7  # an instant between ticks, after the refresh at 1 h
W = T0 + DAY_MS


def far(aid: int, *types: str) -> Setup:
    """Active rows far ahead (``types``, default normal and archive) keep the dispatchers away."""

    async def setup(ctx: Ctx) -> None:
        for type_ in types or ("normal", "archive"):
            await ctx.store.insert_schedule(aid, ScheduleType(type_), T0 + 30 * DAY_MS, T0)

    return setup


def chain(*setups: Setup) -> Setup:
    async def setup(ctx: Ctx) -> None:
        for s in setups:
            await s(ctx)

    return setup


def plain(aid: int, views: int = 10, song: bool = False, **kw: Any) -> Video:
    return Video(aid, OLD, song=song, views=lambda t: views, **kw)


# --- windows (§6) --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "count", "same_window"),
    [(DESIGN, 999, True), (DESIGN, 1_000, False), (CVSA, 2_999, True), (CVSA, 3_000, False)],
)
def test_window_cap(profile: str, count: int, same_window: bool) -> None:
    """Switch ``window_cap``: 1000 rows per window in design (seed 000), 3000 deployed (reference
    §6.2, §16.9). A normal row whose target window already holds ``count`` rows lands there or in
    the next window."""

    async def action(ctx: Ctx) -> None:
        await ctx.counter.incr(W, count)
        await schedule_snapshot(
            ctx, 1, ScheduleType.NORMAL, W + 10_000, rule=ScheduleRule.DISPATCHER
        )

    async def setup(ctx: Ctx) -> None:
        at(ctx, NOW, action)

    run = run_model([], until="60m1s", setup=setup, profile=profile)
    (c,) = run.events(ScheduleCreated)
    window = W if same_window else W + WINDOW_MS
    assert (c.window_ms, c.window_count) == (window, count + 1 if same_window else 1)
    assert c.due_ms == window + jitter_offsets(1)[0]


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_fallback_after_4032_windows_and_6_back(profile: str) -> None:
    """Switches ``forward_search_windows`` (4032 in both), ``backward_search_windows`` (6 in both)
    and ``fallback_bare_window_start`` (reference §6.2 step 3, §19.4), with a cap of 1. The target
    is 20 min ago, window w0; w0 ... w0 + 4031 are full, so the forward search fails and the
    fallback re-probes w0 (full), then w0 - 1 (free): deployed, the row is due at that bare window
    start, 25 min in the past, with no jitter draw; design jitters in it and clips to now. With
    w0 - 1 ... w0 - 5 full, the next row finds no room (w0 - 6 is not probed) and keeps its
    target."""
    target = NOW - 20 * MINUTE_MS
    w0 = target - (target - T0) % WINDOW_MS

    async def action(ctx: Ctx) -> None:
        for i in range(4032):
            await ctx.counter.incr(w0 + i * WINDOW_MS, 1)
        await schedule_snapshot(ctx, 1, ScheduleType.NORMAL, target, rule=ScheduleRule.DISPATCHER)
        for i in range(2, 6):
            await ctx.counter.incr(w0 - i * WINDOW_MS, 1)
        await schedule_snapshot(ctx, 2, ScheduleType.NORMAL, target, rule=ScheduleRule.DISPATCHER)

    async def setup(ctx: Ctx) -> None:
        at(ctx, NOW, action)

    run = run_model([], until="60m1s", setup=setup, profile=profile, design={"window_cap": 1})
    first, second = run.events(ScheduleCreated)
    due = w0 - WINDOW_MS if profile == CVSA else NOW
    assert (first.due_ms, first.window_ms, first.probes) == (due, w0 - WINDOW_MS, 4032 + 2)
    assert first.placement == PLACEMENT["fallback"]
    assert (second.due_ms, second.probes, second.placement) == (
        target,
        4032 + 6,
        PLACEMENT["exhausted"],
    )


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_window_refresh_every_5_minutes(profile: str) -> None:
    """Switch ``window_refresh_every_ms``: the deployed jobAdder rebuilds the hash from pending rows
    every 5 min after start-up (reference §6.3): a drifted count set at 1 min is still there at
    4 min and gone at 6 min. Design rebuilds only at start-up."""
    seen: list[dict[Ms, int]] = []

    async def setup(ctx: Ctx) -> None:
        async def drift(c: Ctx) -> None:
            await c.counter.incr(W, 7)

        async def probe(c: Ctx) -> None:
            seen.append(await c.counter.get_all())

        at(ctx, T0 + MINUTE_MS, drift)
        at(ctx, T0 + 4 * MINUTE_MS, probe)
        at(ctx, T0 + 6 * MINUTE_MS, probe)

    run = run_model([], until="30m", setup=setup, profile=profile)
    rebuilt = times(run.events(WindowsRebuilt))
    if profile == CVSA:
        assert rebuilt == [k * 5 * MINUTE_MS for k in range(7)]
        assert seen == [{W: 7}, {}]
    else:
        assert rebuilt == [0]
        assert seen == [{W: 7}, {W: 7}]


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_cleanup_decrements(profile: str) -> None:
    """Switch ``cleanup_decrements``: deleting an overdue pending row (its video blocked by a
    processing row, so no tick took it) releases its window in design and not deployed (reference
    §6.4, §12, §16.11): the window [0, 5 min) keeps counting it until the next refresh."""
    seen: list[int] = []

    async def setup(ctx: Ctx) -> None:
        blocker = await ctx.store.insert_schedule(1, ScheduleType.MILESTONE, T0 + 10_000, T0)
        await ctx.store.set_schedule_status([blocker], ScheduleStatus.PROCESSING)
        await ctx.store.insert_schedule(1, ScheduleType.NEW, T0 + 60_000, T0)
        await far(1, "archive")(ctx)

        async def probe(c: Ctx) -> None:
            seen.append((await c.counter.get_all())[T0])

        at(ctx, T0 + 240_001, probe)

    run = run_model([plain(1)], until="4m1s", setup=setup, profile=profile)
    assert [(rel(e.t_ms), e.status) for e in run.events(ScheduleDeleted)] == [
        (240_000, STATUS["processing"]),
        (240_000, STATUS["pending"]),
    ]
    released = [e for e in run.events(WindowReleased) if e.cause == CAUSE["cleanup"]]
    assert times(released) == ([] if profile == CVSA else [240_000])
    assert seen == [1 if profile == CVSA else 0]


# --- ticks (§7, §8) ------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_single_tick_lookback(profile: str) -> None:
    """Switch ``single_tick_lookback_ms``: deployed, the 1 s tick only takes rows due at most 1 min
    ago (reference §7.1, §16.1, inclusive §19.9). Two new rows of a video blocked until the
    cleanup at 4 min, due at 3 min and 3 min 1 s: at 4 min 1 s the first is 61 s overdue -- never
    taken, deleted by the cleanup at 6 min -- and the second, 60 s overdue, is taken. Design has
    no lower bound: both go, one per tick."""
    rows: list[int] = []

    async def setup(ctx: Ctx) -> None:
        blocker = await ctx.store.insert_schedule(1, ScheduleType.MILESTONE, T0, T0)
        await ctx.store.set_schedule_status([blocker], ScheduleStatus.PROCESSING)
        for due in (180_000, 181_000):
            rows.append(await ctx.store.insert_schedule(1, ScheduleType.NEW, T0 + due, T0))
        await far(1, "archive")(ctx)

    run = run_model([plain(1)], until="7m", setup=setup, profile=profile)
    dispatched = [(rel(e.t_ms), e.schedule) for e in run.events(ScheduleDispatched)]
    deleted = [(rel(e.t_ms), e.schedule) for e in run.events(ScheduleDeleted)]
    if profile == CVSA:
        assert dispatched == [(241_000, rows[1])]
        assert deleted[1:] == [(360_000, rows[0])]
    else:
        assert dispatched == [(241_000, rows[0]), (242_000, rows[1])]
        assert deleted[1:] == []


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_single_tick_takes_archive(profile: str) -> None:
    """Switch ``single_tick_takes_archive``: the deployed ``type <> 'normal'`` also matches archive
    rows (reference §7.1, §16.1): an archive row due at 0.5 s goes to the 1 s tick at T0 (which
    runs first) as a snapshotVideo job of the default priority 3. Design leaves it to the bulk
    tick (priority 2)."""

    async def setup(ctx: Ctx) -> None:
        await ctx.store.insert_schedule(1, ScheduleType.ARCHIVE, T0 + 500, T0)

    run = run_model([plain(1)], until="2s", setup=setup, profile=profile)
    dispatched = run.events(ScheduleDispatched)
    assert [(rel(e.t_ms), e.priority) for e in dispatched] == [(0, 3 if profile == CVSA else 2)]
    name = "snapshotVideo" if profile == CVSA else "bulkSnapshotVideo"
    assert job_names(run, dispatched) == [name]


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_archive_bulk_priority(profile: str) -> None:
    """Switch ``archive_bulk_priority``: the bulk job of an archive row has priority 3 deployed
    (there is no archive = 2 anywhere, reference §8.2, §16.2), 2 in design (seed 000)."""

    async def setup(ctx: Ctx) -> None:
        await ctx.store.insert_schedule(1, ScheduleType.ARCHIVE, T0 + 20_000, T0)

    run = run_model([plain(1)], until="20s", setup=setup, profile=profile)
    dispatched = run.events(ScheduleDispatched)
    assert [(rel(e.t_ms), e.priority) for e in dispatched] == [
        (15_000, 3 if profile == CVSA else 2)
    ]
    assert job_names(run, dispatched) == ["bulkSnapshotVideo"]


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_bulk_tick_lookback(profile: str) -> None:
    """Switch ``bulk_tick_lookback_ms``: the deployed bulk tick skips rows due more than 2 min ago
    (reference §8.1, §16.3). Two normal rows inserted at 7.5 s, due 2 min and 2 min + 1 ms before
    the bulk tick at 15 s: deployed, only the first is taken (the bound is inclusive); the second
    is deleted by the cleanup at 2 min. Design takes both."""
    rows: list[int] = []

    async def setup(ctx: Ctx) -> None:
        async def insert(c: Ctx) -> None:
            rows.append(
                await c.store.insert_schedule(101, ScheduleType.NORMAL, T0 - 105_000, c.now)
            )
            rows.append(
                await c.store.insert_schedule(102, ScheduleType.NORMAL, T0 - 105_001, c.now)
            )

        at(ctx, T0 + 7_500, insert)

    # History without growth: a bulk success re-queues the video 72 h out (deployed).
    history = [(T0 - DAY_MS, 10), (T0 - HOUR_MS, 10)]
    videos = [plain(101, history=history), plain(102, history=history)]
    run = run_model(videos, until="2m", setup=setup, profile=profile)
    dispatched = [(rel(e.t_ms), e.schedule) for e in run.events(ScheduleDispatched)]
    deleted = [(rel(e.t_ms), e.schedule) for e in run.events(ScheduleDeleted)]
    if profile == CVSA:
        assert dispatched == [(15_000, rows[0])]
        assert deleted == [(120_000, rows[1])]
    else:
        assert dispatched == [(15_000, rows[1]), (15_000, rows[0])]  # by due time
        assert deleted == []


def test_bulk_batch_size_deployed() -> None:
    """Switch ``bulk_batch_size`` (30 in both; reference §8.2, §16.14): 31 normal rows due at 20 s
    are fetched in two calls at 15 s, of 30 aids and 1 aid."""
    aids = list(range(1_001, 1_032))

    async def setup(ctx: Ctx) -> None:
        for aid in aids:
            await ctx.store.insert_schedule(aid, ScheduleType.NORMAL, T0 + 20_000, T0)
            await far(aid, "archive")(ctx)

    history = [(T0 - DAY_MS, 10), (T0 - HOUR_MS, 10)]
    videos = [plain(a, history=history) for a in aids]
    run = run_model(videos, until="20s", setup=setup, profile=CVSA)
    assert run.upstream.calls == [(T0 + 15_000, tuple(aids[:30])), (T0 + 15_000, tuple(aids[30:]))]


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_bulk_aids_as_ids(profile: str) -> None:
    """Switch ``bulk_aids_as_ids_bug`` (reference §8.3, §16.3): the deployed bulk tick passes the
    batch's *aids* where schedule ids are expected. With a 40-s upstream, the normal row of video
    3 (id 4, due 20 s) stays pending, so the ticks at 15, 30 and 45 s all enqueue it; the three
    jobs each snapshot the video (55, 70, 85 s), and its window is released only at the first
    completion. Meanwhile the row whose *id* is 3 -- a milestone row of video 50 -- is set
    processing by the first tick (a ``StrayStatusChange``, its window released). Design sets the
    batch's own row processing: one job, one snapshot."""

    async def setup(ctx: Ctx) -> None:
        await ctx.store.insert_schedule(50, ScheduleType.NEW, T0 + DAY_MS, T0)  # id 1
        await ctx.store.insert_schedule(50, ScheduleType.ARCHIVE, T0 + DAY_MS, T0)  # id 2
        await ctx.store.insert_schedule(50, ScheduleType.MILESTONE, T0 + DAY_MS, T0)  # id 3
        await ctx.store.insert_schedule(3, ScheduleType.NORMAL, T0 + 20_000, T0)  # id 4
        await ctx.store.insert_schedule(3, ScheduleType.ARCHIVE, T0 + 30 * DAY_MS, T0)

    history = [(T0 - DAY_MS, 10), (T0 - HOUR_MS, 10)]  # no growth: the next row is 72 h out
    videos = [plain(3, history=history), plain(50)]
    run = run_model(videos, until="100s", setup=setup, profile=profile, latency_ms=40_000)
    row4 = [e for e in run.events(ScheduleDispatched) if e.schedule == 4]
    released4 = [e for e in run.events(WindowReleased) if e.schedule == 4]
    taken = of_aid(run, SnapshotTaken, 3)
    stray = run.events(StrayStatusChange)
    if profile == CVSA:
        assert times(row4) == [15_000, 30_000, 45_000]
        assert times(taken) == [55_000, 70_000, 85_000]
        assert times(released4) == [55_000]
        assert [(rel(e.t_ms), e.schedule, e.aid, e.from_status, e.to_status) for e in stray] == [
            (15_000, 3, 50, STATUS["pending"], STATUS["processing"])
        ]
        released3 = [e for e in run.events(WindowReleased) if e.schedule == 3]
        assert [(rel(e.t_ms), rel(e.window_ms)) for e in released3] == [(15_000, DAY_MS)]
    else:
        assert times(row4) == [15_000]
        assert times(taken) == [55_000]
        assert times(released4) == [15_000]
        assert stray == []


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_bulk_archive_rows_are_also_taken_by_the_single_tick(profile: str) -> None:
    """Switches ``bulk_aids_as_ids_bug`` and ``single_tick_takes_archive`` together (reference
    §8.3: "snapshotTick can also take the batch's archive rows"): with a 40-s upstream, the bulk
    tick at 15 s enqueues an archive row due at 20 s but leaves it pending, so the 1 s tick at
    19 s takes it as well (setting it processing and releasing its window): two jobs, two
    snapshots of one row. Design: one bulk job."""

    async def setup(ctx: Ctx) -> None:
        await ctx.store.insert_schedule(101, ScheduleType.ARCHIVE, T0 + 20_000, T0)
        await far(101, "normal")(ctx)

    history = [(T0 - DAY_MS, 10), (T0 - HOUR_MS, 10)]
    run = run_model(
        [plain(101, history=history)], until="70s", setup=setup, profile=profile, latency_ms=40_000
    )
    dispatched = run.events(ScheduleDispatched)
    released = [(rel(e.t_ms), e.schedule) for e in run.events(WindowReleased)]
    if profile == CVSA:
        assert [(rel(e.t_ms), e.schedule) for e in dispatched] == [(15_000, 1), (19_000, 1)]
        assert job_names(run, dispatched) == ["bulkSnapshotVideo", "snapshotVideo"]
        assert times(run.events(SnapshotTaken)) == [55_000, 59_000]
        assert released == [(19_000, 1)]
    else:
        assert [(rel(e.t_ms), e.schedule) for e in dispatched] == [(15_000, 1)]
        assert times(run.events(SnapshotTaken)) == [55_000]
        assert released == [(15_000, 1)]


# --- new rows (§9, §13) --------------------------------------------------------------------------

NEW_AID = 7
INITIAL_TAKEN = [97_000, 187_000, 307_000, 607_000]  # see test_new


def run_new(views: int, published_ms: Ms, profile: str, until: str = "11m") -> ModelRun:
    async def setup(ctx: Ctx) -> None:
        async def classify(c: Ctx) -> None:
            await classify_song(c, NEW_AID, published_ms)

        await far(NEW_AID)(ctx)
        at(ctx, T0 + 7_250, classify)

    video = Video(NEW_AID, published_ms, song=False, views=lambda t: views)
    return run_model([video], until=until, setup=setup, profile=profile)


def successors(run: ModelRun) -> list[tuple[Ms, Ms, int]]:
    """(created, due, forced) of the new rows after the four initial ones."""
    rows = of_type(run, ScheduleCreated, "new")[4:]
    return [(rel(c.t_ms), rel(c.due_ms), c.forced) for c in rows]


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_new_successors_forced(profile: str) -> None:
    """Switch ``new_successors_forced``: every deployed continuation is forced, so each of the four
    initial rows starts its own chain (reference §13.3, §16.4): four successors, 15 min after each
    snapshot. Design drops the first three (another new row is active) and keeps one chain."""
    run = run_new(5_000, T0 - HOUR_MS, profile)
    if profile == CVSA:
        assert successors(run) == [(t, t + 15 * MINUTE_MS, 1) for t in INITIAL_TAKEN]
        assert of_type(run, ScheduleNotCreated, "new") == []
    else:
        assert successors(run) == [(607_000, 607_000 + 15 * MINUTE_MS, 0)]
        assert times(of_type(run, ScheduleNotCreated, "new")) == INITIAL_TAKEN[:3]


@pytest.mark.parametrize(
    ("published_ago", "chains"),
    [(HOUR_MS, 4), (3 * HOUR_MS, 0)],
)
def test_new_speed_floor_after_2_hours(published_ago: Ms, chains: int) -> None:
    """Switch ``new_speed_floor_after_ms``: deployed, the 10 views/h floor applies only to videos
    older than 2 h (reference §9 step 5, §16.4). Five views: published 1 h before T0, each chain
    continues at 240 min; published 3 h before, none does. (Design stops both:
    ``test_new.test_slow_song_stops_and_is_left_to_the_regular_schedule``.)"""
    run = run_new(5, T0 - published_ago, CVSA)
    assert successors(run) == [(t, t + 240 * MINUTE_MS, 1) for t in INITIAL_TAKEN][:chains]


@pytest.mark.parametrize(
    ("views", "published_rel"),
    [
        (30, 607_000 - 3 * HOUR_MS),  # exactly 10 views/h at the fourth snapshot
        (10**6, 607_000 - 2 * DAY_MS),  # exactly 48 h old at the fourth snapshot
    ],
)
@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_new_stop_at_bounds(profile: str, views: int, published_rel: Ms) -> None:
    """Switch ``new_stop_at_bounds``: at exactly 10 views/h or exactly 48 h, the deployed code
    continues ("vph < 10", "age > 48 h", reference §9 step 5); seed 000 ("> 10/小时", "< 48小时")
    stops. The first three snapshots are within the bounds in both profiles."""
    run = run_new(views, T0 + published_rel, profile)
    interval = 240 * MINUTE_MS if views == 30 else 15 * MINUTE_MS
    if profile == CVSA:
        assert successors(run) == [(t, t + interval, 1) for t in INITIAL_TAKEN]
    else:
        assert successors(run) == []
        assert times(of_type(run, ScheduleNotCreated, "new")) == INITIAL_TAKEN[:3]


# --- milestones (§5, §9, §11) --------------------------------------------------------------------

MS_AID = 1


def linear(at_t0: int, per_hour: int, song: bool = True) -> Video:
    return Video(
        MS_AID,
        OLD,
        song=song,
        views=lambda t: at_t0 + (t - T0) * per_hour // HOUR_MS,
        history=[(T0 - HOUR_MS, at_t0 - per_hour), (T0, at_t0)],
    )


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_piecewise_factor(profile: str) -> None:
    """Switch ``piecewise_factor``: with 1000 views to go the deployed factor is
    ``log(4.5 / log10(1001), 1.054)`` = 7.71, the note's ``... + 0.601`` with ``log10(1100)`` =
    8.05 (reference §11.4, §16.6), so the first milestone row of a video at 99 000 growing 1000/h
    is due at different instants."""
    factor = deployed_factor if profile == CVSA else note_factor
    assert round(factor(1_000), 2) == (7.71 if profile == CVSA else 8.05)
    due = milestone_delay_ms(eta_hours(1_000, lookback_speed(1_000, 1), factor))
    run = run_model([linear(99_000, 1_000)], until="1s", setup=far(MS_AID), profile=profile)
    assert times(of_type(run, ScheduleCreated, "milestone"), "due_ms") == [due]


@pytest.mark.parametrize(
    ("views", "song", "deployed_only"),
    [(70_000, True, True), (1_500_000, True, True), (70_000, False, False)],
)
@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_wide_milestone_candidates(
    profile: str, views: int, song: bool, deployed_only: bool
) -> None:
    """Switch ``wide_milestone_candidates``: deployed candidates add set A -- songs in [60k, 100k)
    and above 1M (reference §11.1, §16.5). A song at 70 000 or 1.5M views growing 50 000/h gets a
    milestone row deployed only; a non-song at 70 000 in neither profile."""
    run = run_model([linear(views, 50_000, song)], until="1s", setup=far(MS_AID), profile=profile)
    expected = 1 if (deployed_only and profile == CVSA) else 0
    assert len(of_type(run, ScheduleCreated, "milestone")) == expected


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_milestone_reeta_clamped(profile: str) -> None:
    """Switch ``milestone_reeta_clamped``: the dispatcher clamps to 1.2 h (a video at 90 000 growing
    100/h: ETA 22 h -> a row at 72 min). After that snapshot (4319 s, 90 119 views) the deployed
    worker schedules the re-ETA unclamped, ~22 h out (reference §9 step 7, §16.7), and the next
    dispatcher run, at 75 min, pulls the row back to now + 72 min; design clamps at once, and the
    75-min run is refused (not earlier)."""
    run = run_model([linear(90_000, 100)], until="76m", setup=far(MS_AID), profile=profile)
    factor = deployed_factor if profile == CVSA else note_factor
    t = 4_319_000  # the tick before the row due at 72 min; views 90 000 + floor(4319 s x 100/h)
    now_h = t / HOUR_MS
    # The 1-h lookback finds the T0 snapshot (+119 views), the 3-h, 6-h and 72-h ones the
    # T0 - 1 h snapshot (+219); the 3- and 20-min ones the new snapshot itself (skipped).
    best = max(lookback_speed(119, now_h), lookback_speed(219, now_h + 1))
    eta = eta_hours(100_000 - 90_119, best, factor)
    assert 1.2 < eta < 144
    created = of_type(run, ScheduleCreated, "milestone")
    assert [rel(c.t_ms) for c in created] == [0, t]
    assert rel(created[1].due_ms) == t + milestone_delay_ms(eta, clamp=profile == DESIGN)
    moved = [(rel(m.t_ms), rel(m.to_ms)) for m in run.events(ScheduleMoved)]
    if profile == CVSA:
        assert moved == [(75 * MINUTE_MS, 75 * MINUTE_MS + 72 * MINUTE_MS)]
    else:
        assert moved == []
        refused = of_type(run, ScheduleNotCreated, "milestone")
        assert [rel(r.t_ms) for r in refused][-1] == 75 * MINUTE_MS


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_milestone_move_processing(profile: str) -> None:
    """Switch ``milestone_move_processing``: deployed, an earlier target moves the latest active
    milestone row even when it is processing, and no window count changes (reference §19.11):
    the processing row due at 3 h goes to T0 + 4000039 ms. Design moves pending rows only."""

    async def setup(ctx: Ctx) -> None:
        await far(MS_AID)(ctx)
        row = await ctx.store.insert_schedule(MS_AID, ScheduleType.MILESTONE, T0 + 3 * HOUR_MS, T0)
        await ctx.store.set_schedule_status([row], ScheduleStatus.PROCESSING)

    run = run_model([linear(95_000, 1_000)], until="1s", setup=setup, profile=profile)
    moved = run.events(ScheduleMoved)
    if profile == CVSA:
        assert [(rel(m.from_ms), rel(m.to_ms), m.was_pending, m.window_count) for m in moved] == [
            (3 * HOUR_MS, 4_000_039, 0, -1)
        ]
        assert [e for e in run.events(WindowReleased) if e.cause == CAUSE["move"]] == []
    else:
        assert moved == []
        reasons = [r.reason for r in of_type(run, ScheduleNotCreated, "milestone")]
        assert reasons == [NOT_CREATED["duplicate_active"]]


# --- regular rows (§10, §11) ---------------------------------------------------------------------


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_regular_target_from_last_snapshot(profile: str) -> None:
    """Switch ``regular_target_from_last_snapshot``: deployed, the target is the last snapshot +
    the interval, never before now + 1 ms (reference §11.7, §16.8). Song 1 (last snapshot 2 h
    ago, 4000 views in 22 h: 6 h) is asked for at T0 + 4 h, song 2 (last snapshot 30 h ago, alone
    in its 24-h look-back: 0 h) at T0 + 1 ms. Design: now + interval, T0 + 6 h and T0."""
    videos = [
        Video(1, OLD, song=True, history=[(T0 - DAY_MS, 1_000), (T0 - 2 * HOUR_MS, 5_000)]),
        Video(2, OLD, song=True, history=[(T0 - 2 * DAY_MS, 1_000), (T0 - 30 * HOUR_MS, 1_000)]),
    ]
    setup = chain(far(1, "archive"), far(2, "archive"))
    run = run_model(videos, until="1s", setup=setup, profile=profile)
    requested = times(of_type(run, ScheduleCreated, "normal"), "requested_ms")
    assert requested == ([4 * HOUR_MS, 1] if profile == CVSA else [6 * HOUR_MS, 0])


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_bulk_reschedules_normal(profile: str) -> None:
    """Switch ``bulk_reschedules_normal``: deployed, each bulk success schedules the next normal
    row at now + interval (reference §10.3, §16.8): the snapshot at 15 s (growth 4000 over the
    last day: 6 h) gives a row at 15 s + 6 h. Design waits for the dispatcher at 30 min, which
    asks for 30 min + 6 h."""

    async def setup(ctx: Ctx) -> None:
        await far(1, "archive")(ctx)
        await ctx.store.insert_schedule(1, ScheduleType.NORMAL, T0 + 20_000, T0)

    video = Video(
        1,
        OLD,
        song=True,
        views=lambda t: 5_000,
        history=[(T0 - DAY_MS, 1_000), (T0 - 2 * HOUR_MS, 5_000)],
    )
    run = run_model([video], until="31m", setup=setup, profile=profile)
    created = of_type(run, ScheduleCreated, "normal")
    if profile == CVSA:
        assert [(rel(c.t_ms), rel(c.requested_ms)) for c in created] == [
            (15_000, 15_000 + 6 * HOUR_MS)
        ]
    else:
        assert [(rel(c.t_ms), rel(c.requested_ms)) for c in created] == [
            (30 * MINUTE_MS, 30 * MINUTE_MS + 6 * HOUR_MS)
        ]


@pytest.mark.parametrize(
    ("type_", "songs", "cap_s", "until"),
    [("normal", 32, 25 * 60, "29m"), ("archive", 40, 30 * 60, "40m")],
)
@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_dispatch_time_caps(profile: str, type_: str, songs: int, cap_s: int, until: str) -> None:
    """Switch ``dispatch_time_caps``: the deployed regular dispatcher stops once a run has lasted
    more than 25 min, the archive dispatcher 30 min (reference §11.7, §13b.4). With each INSERT
    of the type taking 50 s, the run calls scheduleSnapshot for song k (from 0) at k x 50 s --
    the instant its ``ScheduleCreated`` carries -- after checking the cap, so it stops at the
    first k with k x 50 s > the cap: 31 of 32 regular rows (k = 31 > 30), 37 of 40 archive rows
    (k = 37 > 36). Design schedules every song."""
    other = "archive" if type_ == "normal" else "normal"
    aids = list(range(1, songs + 1))

    async def setup(ctx: Ctx) -> None:
        for aid in aids:
            await ctx.store.insert_schedule(aid, ScheduleType(other), T0 + 30 * DAY_MS, T0)
        ctx.store = SlowInserts(ctx.store, ctx, type_, 50 * SECOND_MS)

    history = [(T0 - DAY_MS, 1_000), (T0 - HOUR_MS, 1_000)]
    videos = [Video(aid, OLD, song=True, views=lambda t: 1_000, history=history) for aid in aids]
    run = run_model(videos, until=until, setup=setup, profile=profile)
    created = of_type(run, ScheduleCreated, type_)
    n = math.floor(cap_s / 50) + 1 if profile == CVSA else songs
    assert [(rel(c.t_ms), c.aid) for c in created] == [
        (k * 50 * SECOND_MS, aid) for k, aid in enumerate(aids[:n])
    ]


# --- archive (§13b) ------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_archive_keeps_time_of_day(profile: str) -> None:
    """Switch ``archive_keeps_time_of_day``: date-fns ``nextSaturday``/``nextMonday`` keep the clock
    time (reference §13b.2, §16.10): a run at Monday 10:30 asks for Saturday 10:30 and for the
    week from Monday 10:30; design for Saturday 00:00 and the week from Monday 00:00."""
    start = "2031-01-06T10:30:00+08:00"
    videos = [Video(1, OLD, song=True), Video(2, OLD, song=False)]
    run = run_model(videos, until="1s", start=start, setup=far(1, "normal"), profile=profile)
    clock = "10:30" if profile == CVSA else "00:00"
    saturday = int(datetime.fromisoformat(f"2031-01-11T{clock}:00+08:00").timestamp() * 1000)
    monday = int(datetime.fromisoformat(f"2031-01-13T{clock}:00+08:00").timestamp() * 1000)
    u = draws("archive", 1)[0]
    assert [c.requested_ms for c in of_type(run, ScheduleCreated, "archive")] == [
        saturday,
        monday + math.floor(u * WEEK_MS),
    ]


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_bulk_failure_archive_to_normal(profile: str) -> None:
    """Switch ``bulk_failure_archive_to_normal`` (and ``retry_policy``): a bulk call answering a
    bilibili code fails every row of the batch; deployed, every fetched aid -- the non-song's
    archive row included -- is re-queued as *normal* at now + 15 s (reference §4, §10.2, §16.10),
    levelled in the window of 30 s (jitter draws 0 and 1, not before now). Design re-queues
    nothing."""

    async def setup(ctx: Ctx) -> None:
        await ctx.store.insert_schedule(1, ScheduleType.NORMAL, T0 + 20_000, T0)
        await ctx.store.insert_schedule(1, ScheduleType.ARCHIVE, T0 + 30 * DAY_MS, T0)
        await ctx.store.insert_schedule(2, ScheduleType.ARCHIVE, T0 + 20_000, T0)

    def fault(t: Ms, aids: tuple[int, ...]) -> UpstreamError:
        return UpstreamError(UpstreamErrorKind.BILI_CODE, -352)

    videos = [Video(1, OLD, song=True), Video(2, OLD, song=False)]
    run = run_model(videos, until="20s", setup=setup, profile=profile, fault=fault)
    assert [(rel(e.t_ms), e.aid, e.type, e.status) for e in run.events(ScheduleFinished)] == [
        (15_000, 1, TYPE["normal"], STATUS["failed"]),
        (15_000, 2, TYPE["archive"], STATUS["failed"]),
    ]
    created = [
        (rel(c.t_ms), c.aid, c.type, rel(c.requested_ms), rel(c.due_ms))
        for c in run.events(ScheduleCreated)
    ]
    if profile == CVSA:
        j = jitter_offsets(2)
        assert created == [
            (15_000, 1, TYPE["normal"], 30_000, max(j[0], 15_000)),
            (15_000, 2, TYPE["normal"], 30_000, max(j[1], 15_000)),
        ]
    else:
        assert created == []


def test_bili_error_blocks_aid_deployed() -> None:
    """Switch ``bili_error_blocks_aid`` (true in both; reference §9 step 2, §16.12): deployed as in
    design (``test_statuses``), a bilibili code ends the row ``bili_error``, and the video's next
    single-path row is set processing but never fetched; the cleanup at 4 min deletes it."""

    async def setup(ctx: Ctx) -> None:
        await far(1)(ctx)
        for due in (5_000, 20_000):
            await ctx.store.insert_schedule(1, ScheduleType.NEW, T0 + due, T0)

    video = plain(1, error=lambda t: -404)
    run = run_model([video], until="5m", setup=setup, profile=CVSA)
    assert [(rel(e.t_ms), e.status) for e in run.events(ScheduleFinished)] == [
        (4_000, STATUS["bili_error"])
    ]
    skipped = run.events(ScheduleSkipped)
    assert [(rel(e.t_ms), e.reason) for e in skipped] == [(19_000, SKIP["bili_status"])]
    assert [(rel(e.t_ms), e.status) for e in run.events(ScheduleDeleted)] == [
        (240_000, STATUS["processing"])
    ]


# --- retries (§9, §10) ---------------------------------------------------------------------------


def first_call_fails(kind: str) -> Fault:
    """Only the first upstream call fails, with ``kind``."""
    failed: list[bool] = []

    def fault(t: Ms, aids: tuple[int, ...]) -> UpstreamError | None:
        if failed:
            return None
        failed.append(True)
        return UpstreamError(UpstreamErrorKind(kind))

    return fault


@pytest.mark.parametrize(
    ("type_", "kind", "status", "retry_ms"),
    [
        ("milestone", "no_proxy", "no_proxy", 5_000),
        ("new", "no_proxy", "no_proxy", 120_000),
        ("milestone", "alicloud_error", "failed", 5_000),
        ("new", "alicloud_error", "failed", 120_000),
        ("new", "fetch_error", "failed", None),
    ],
)
def test_retry_policy_cvsa_single(type_: str, kind: str, status: str, retry_ms: Ms | None) -> None:
    """Switch ``retry_policy = "cvsa"``: no retry inside the job; NO_PROXY_AVAILABLE ends the row
    ``no_proxy`` and ALICLOUD_PROXY_ERR ``failed``, and both schedule the same type again at now
    + 5 s (milestone) or 2 min (others) -- exact times, these types are not levelled; any other
    error (FETCH_ERROR) fails the row for good (reference §9 error handling, §16.13)."""

    async def setup(ctx: Ctx) -> None:
        await far(1)(ctx)
        await ctx.store.insert_schedule(1, ScheduleType(type_), T0 + 5_000, T0)

    run = run_model(
        [plain(1, views=10)],
        until="10s",
        setup=setup,
        profile=CVSA,
        fault=first_call_fails(kind),
    )
    assert times(run.events(UpstreamFailed)) == [4_000]
    assert run.events(RetryScheduled) == []
    finished = run.events(ScheduleFinished)
    assert (rel(finished[0].t_ms), finished[0].status) == (4_000, STATUS[status])
    created = of_type(run, ScheduleCreated, type_)
    expected = [] if retry_ms is None else [(4_000, 4_000 + retry_ms, PLACEMENT["exact"])]
    assert [(rel(c.t_ms), rel(c.due_ms), c.placement) for c in created] == expected


@pytest.mark.parametrize("profile", [DESIGN, CVSA])
def test_retry_policy_bulk_no_proxy(profile: str) -> None:
    """Switch ``retry_policy``: a bulk call without a proxy ends the batch ``no_proxy``. Deployed,
    every fetched aid gets a normal row at now + 30 s x u (one ``retry`` draw per batch),
    levelled (reference §10.4). Design (seed 004) retries inside the job after the backoff delay
    and succeeds: completed, nothing re-queued."""

    async def setup(ctx: Ctx) -> None:
        await far(1, "archive")(ctx)
        await ctx.store.insert_schedule(1, ScheduleType.NORMAL, T0 + 20_000, T0)

    history = [(T0 - DAY_MS, 10), (T0 - HOUR_MS, 10)]
    run = run_model(
        [plain(1, song=True, history=history)],
        until="20s",
        setup=setup,
        profile=profile,
        fault=first_call_fails("no_proxy"),
    )
    finished = [(rel(e.t_ms), e.status) for e in run.events(ScheduleFinished)]
    if profile == CVSA:
        assert finished == [(15_000, STATUS["no_proxy"])]
        u = draws("retry", 1)[0]
        target = 15_000 + math.floor(u * 30_000)
        (c,) = of_type(run, ScheduleCreated, "normal")
        assert (rel(c.t_ms), rel(c.requested_ms)) == (15_000, target)
        window = target - target % WINDOW_MS
        assert rel(c.due_ms) == max(window + jitter_offsets(1)[0], 15_000)
    else:
        delay = run.events(RetryScheduled)[0].delay_ms
        assert finished == [(15_000 + delay, STATUS["completed"])]
        assert of_type(run, ScheduleCreated, "normal") == []
