"""The periodic jobs and the two ticks, design profile.

Seed 000 "调度扫描对比": snapshotTick every 1 s (type != normal, due within the next second,
LIMIT 10, milestone priority 1, new 3, skip a video with a processing row); bulkSnapshotTick every
15 s (normal and archive, up to 1000 rows, normal 3, archive 2). Reference §1.3-1.4 (BullMQ job
schedulers: first iteration at registration, then every period; dispatchArchiveSnapshots runs at
start despite ``immediately: false``), §7, §8 (15 s look-ahead, groups of 30 aids per API call,
normal rows first), §19.9 (both tick bounds inclusive).
"""

from __future__ import annotations

from collections import Counter

from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType
from sim.events.cvsa_kinds import (
    ScheduleDeleted,
    ScheduleDispatched,
    ScheduleSkipped,
    SnapshotTaken,
)
from sim.events.engine_kinds import IdleIterations, IterationStarted
from sim.scheduler.context import Ctx
from sim.testing.runs import T0, Video, run_model
from sim.units import DAY_MS, SECOND_MS
from tests.timing._support import SKIP, STATUS, TYPE, job_names, of_aid, times

OLD = T0 - 100 * DAY_MS  # publication date of videos whose curve does not matter


def idle(aid: int) -> Video:
    """A known video that is not a song, with constant views."""
    return Video(aid, OLD, song=False, views=lambda t: 1_000)


def test_periodic_jobs_run_at_fixed_instants_from_t0() -> None:
    """BullMQ job schedulers (reference §1.3, §1.4): every periodic job runs at T0 and then every
    period -- snapshotTick 1 s, bulkSnapshotTick 15 s, dispatchMilestoneSnapshots 5 min,
    dispatchRegularSnapshots 30 min, dispatchArchiveSnapshots 2 h (at start too),
    scheduleCleanup 2 min (seed 000). Over an idle 10 min (both ends included) each job's
    iterations are exactly these instants; with tick elision off the log is the same."""
    expected = {
        "snapshotTick": (0, 600_000, 601),
        "bulkSnapshotTick": (0, 600_000, 41),
        "dispatchMilestoneSnapshots": (0, 600_000, 3),
        "dispatchRegularSnapshots": (0, 0, 1),
        "dispatchArchiveSnapshots": (0, 0, 1),
        "scheduleCleanup": (0, 600_000, 6),
    }
    for elide in (True, False):
        run = run_model([], until="10m", elide=elide)
        names = run.engine.log.names
        assert run.events(IterationStarted) == []  # nothing to do, so every iteration is idle
        got = {
            names[e.scheduler]: (e.first_due_ms - T0, e.last_due_ms - T0, e.iterations)
            for e in run.events(IdleIterations)
        }
        assert got == expected


def test_archive_dispatcher_runs_at_start_and_every_two_hours() -> None:
    """Reference §1.4: ``immediately: false`` has no effect on an ``every`` scheduler in BullMQ
    5.x, so dispatchArchiveSnapshots runs at T0, then at T0 + 2 h, T0 + 4 h."""
    run = run_model([Video(1, OLD, song=True, views=lambda t: 1_000)], until="4h")
    names = run.engine.log.names
    started = [
        e.due_ms - T0
        for e in run.events(IterationStarted)
        if names[e.scheduler] == "dispatchArchiveSnapshots"
    ]
    idle_runs = [
        (e.first_due_ms - T0, e.last_due_ms - T0, e.iterations)
        for e in run.events(IdleIterations)
        if names[e.scheduler] == "dispatchArchiveSnapshots"
    ]
    # The first run gives the song its archive row; the two later runs find nothing to do.
    assert started == [0]
    assert idle_runs == [(7_200_000, 14_400_000, 2)]


def test_single_tick_takes_rows_due_within_the_next_second() -> None:
    """Seed 000 "started_at 在未来1秒内到期": the tick at t takes pending rows due at or before
    t + 1 s (inclusive, reference §19.9), so a row is taken up to 1 s before it is due."""
    due = {1: 1_000, 2: 1_001, 3: 2_500, 4: 3_000, 5: 3_001}

    async def setup(ctx: Ctx) -> None:
        for aid, d in due.items():
            await ctx.store.insert_schedule(aid, ScheduleType.MILESTONE, T0 + d, T0)

    run = run_model([idle(a) for a in due], until="5s", setup=setup)
    got = {e.aid: e.t_ms - T0 for e in run.events(ScheduleDispatched)}
    assert got == {1: 0, 2: 1_000, 3: 2_000, 4: 2_000, 5: 3_000}


def test_single_tick_takes_at_most_ten_rows_in_due_order() -> None:
    """Seed 000 LIMIT 10: twelve milestone rows of twelve videos due at 5 s -- ten go at 4 s, the
    other two at 5 s. The deployed query has no ORDER BY (reference §7.1, Q5); this model takes
    rows by due time, then id (sim.cvsa.ticks), so ids 1-10 go first."""
    aids = list(range(101, 113))

    async def setup(ctx: Ctx) -> None:
        for aid in aids:
            await ctx.store.insert_schedule(aid, ScheduleType.MILESTONE, T0 + 5_000, T0)

    run = run_model([idle(a) for a in aids], until="6s", setup=setup)
    dispatched = run.events(ScheduleDispatched)
    assert [(e.t_ms - T0, e.schedule) for e in dispatched] == [
        *[(4_000, i) for i in range(1, 11)],
        (5_000, 11),
        (5_000, 12),
    ]


def test_single_tick_priorities_milestone_1_new_3() -> None:
    """Seed 000: priority milestone 1, new 3. With one worker (``snapshot_concurrency = 1``) the
    priority decides the order: a new row and a milestone row taken by the same tick (new first,
    being due earlier) are snapshotted milestone first (BullMQ: lower number first, reference
    §1.4)."""

    async def setup(ctx: Ctx) -> None:
        await ctx.store.insert_schedule(1, ScheduleType.NEW, T0 + 1_500, T0)
        await ctx.store.insert_schedule(2, ScheduleType.MILESTONE, T0 + 1_800, T0)

    run = run_model(
        [idle(1), idle(2)],
        until="3s",
        setup=setup,
        overrides=["scheduler.snapshot_concurrency=1"],
    )
    dispatched = run.events(ScheduleDispatched)
    assert [(e.t_ms - T0, e.aid, e.type, e.priority) for e in dispatched] == [
        (1_000, 1, TYPE["new"], 3),
        (1_000, 2, TYPE["milestone"], 1),
    ]
    assert [(e.t_ms - T0, e.aid) for e in run.events(SnapshotTaken)] == [(1_000, 2), (1_000, 1)]


def test_single_tick_skips_a_video_with_a_processing_row() -> None:
    """Seed 000 "检查 videoHasProcessingSchedule(aid) 避免同一视频并发执行" (reference §7.2): a
    pending row of a video that has a processing row (of any type) is skipped at every tick and
    stays pending. The processing row (due at T0, its job lost) is deleted by the cleanup at
    4 min (the first whose cut-off, now - 2 min, is after T0); the tick at 4 min runs before that
    cleanup (registration order, reference §1.3), so the pending row goes at 4 min 1 s -- 116 s
    after it was due: the design tick has no lower bound (seed 000; reference §16.1)."""
    state: dict[str, int] = {}

    async def setup(ctx: Ctx) -> None:
        blocker = await ctx.store.insert_schedule(1, ScheduleType.MILESTONE, T0, T0)
        await ctx.store.set_schedule_status([blocker], ScheduleStatus.PROCESSING)
        state["row"] = await ctx.store.insert_schedule(1, ScheduleType.NEW, T0 + 125_000, T0)

    run = run_model([idle(1)], until="5m", setup=setup)
    skipped = [e for e in run.events(ScheduleSkipped) if e.schedule == state["row"]]
    assert times(skipped) == list(range(124_000, 241_000, SECOND_MS))
    assert {e.reason for e in skipped} == {SKIP["aid_processing"]}
    assert [(e.t_ms - T0, e.status) for e in run.events(ScheduleDeleted)] == [
        (240_000, STATUS["processing"])
    ]
    dispatched = run.events(ScheduleDispatched)
    assert [(e.t_ms - T0, e.schedule) for e in dispatched] == [(241_000, state["row"])]


def test_skipped_rows_use_up_the_limit() -> None:
    """LIMIT 10 is applied by the query, the processing check after it (seed 000 执行逻辑;
    reference §7.1-7.2): ten pending rows of a blocked video fill every tick's ten, so the row of
    another video due at the same instant (a later id) is never dispatched -- it is deleted,
    still pending, by the cleanup at 4 min, with the blocker and the ten."""
    state: dict[str, int] = {}

    async def setup(ctx: Ctx) -> None:
        blocker = await ctx.store.insert_schedule(1, ScheduleType.MILESTONE, T0, T0)
        await ctx.store.set_schedule_status([blocker], ScheduleStatus.PROCESSING)
        for _ in range(10):
            await ctx.store.insert_schedule(1, ScheduleType.NEW, T0 + 5_000, T0)
        state["starved"] = await ctx.store.insert_schedule(
            2, ScheduleType.MILESTONE, T0 + 5_000, T0
        )

    run = run_model([idle(1), idle(2)], until="5m", setup=setup)
    assert run.events(ScheduleDispatched) == []
    skipped = run.events(ScheduleSkipped)
    assert Counter(e.t_ms - T0 for e in skipped) == dict.fromkeys(range(4000, 241000, 1000), 10)
    assert state["starved"] not in {e.schedule for e in skipped}
    deleted = run.events(ScheduleDeleted)
    assert [(e.t_ms - T0, e.schedule) for e in deleted] == [(240_000, i) for i in range(1, 13)]
    assert deleted[-1].status == STATUS["pending"]


def test_bulk_tick_groups_thirty_aids_per_call() -> None:
    """Reference §8.2 (the note is silent on the batch size; switch ``bulk_batch_size``): 65
    normal rows due at 20 s are taken by the bulk tick at 15 s (look-ahead 15 s, inclusive) as
    three jobs of 30, 30 and 5 rows, one upstream call each, priority 3 (seed 000)."""
    aids = list(range(1, 66))

    async def setup(ctx: Ctx) -> None:
        for aid in aids:
            await ctx.store.insert_schedule(aid, ScheduleType.NORMAL, T0 + 20_000, T0)

    run = run_model([idle(a) for a in aids], until="30s", setup=setup)
    assert run.upstream.calls == [
        (T0 + 15_000, tuple(aids[:30])),
        (T0 + 15_000, tuple(aids[30:60])),
        (T0 + 15_000, tuple(aids[60:])),
    ]
    dispatched = run.events(ScheduleDispatched)
    assert set(times(dispatched)) == {15_000}
    assert sorted(Counter(e.job for e in dispatched).values()) == [5, 30, 30]
    assert {e.priority for e in dispatched} == {3}
    assert times(run.events(SnapshotTaken)) == [15_000] * 65


def test_bulk_tick_takes_normal_rows_first_up_to_1000() -> None:
    """Seed 000 "1000条/次"; reference §8.1: normal rows first, then archive, then due time. 1000
    normal rows due at 20 s and 5 archive rows due earlier, at 16 s: the tick at 15 s takes the
    1000 normal rows (34 jobs: 33 of 30 and one of 10); the archive rows go at 30 s, as one job
    of priority 2 (seed 000: archive=2)."""
    normal = list(range(1, 1_001))
    archive = list(range(2_001, 2_006))

    async def setup(ctx: Ctx) -> None:
        for aid in normal:
            await ctx.store.insert_schedule(aid, ScheduleType.NORMAL, T0 + 20_000, T0)
        for aid in archive:
            await ctx.store.insert_schedule(aid, ScheduleType.ARCHIVE, T0 + 16_000, T0)

    run = run_model([idle(a) for a in normal + archive], until="30s", setup=setup)
    dispatched = run.events(ScheduleDispatched)
    first = [e for e in dispatched if e.t_ms == T0 + 15_000]
    assert {e.aid for e in first} == set(normal)
    assert sorted(Counter(e.job for e in first).values()) == [10] + [30] * 33
    assert {e.priority for e in first} == {3}
    second = [e for e in dispatched if e.t_ms == T0 + 30_000]
    assert [(e.aid, e.type, e.priority) for e in second] == [
        (aid, TYPE["archive"], 2) for aid in archive
    ]
    assert len(dispatched) == 1_005


def test_a_batch_holding_archive_rows_gets_priority_2() -> None:
    """Seed 000 "normal=3, archive=2" is per type, but one bulk job holds up to 30 rows: this model
    gives a job the most urgent priority of its rows (``sim.cvsa.ticks.bulk_priority``).
    35 normal rows and 5 archive rows: the second job holds 5 normal and 5 archive rows."""
    normal = list(range(1, 36))
    archive = list(range(101, 106))

    async def setup(ctx: Ctx) -> None:
        for aid in normal:
            await ctx.store.insert_schedule(aid, ScheduleType.NORMAL, T0 + 20_000, T0)
        for aid in archive:
            await ctx.store.insert_schedule(aid, ScheduleType.ARCHIVE, T0 + 20_000, T0)

    run = run_model([idle(a) for a in normal + archive], until="15s", setup=setup)
    jobs: dict[int, tuple[int, set[int]]] = {}
    for e in run.events(ScheduleDispatched):
        jobs.setdefault(e.job, (e.priority, set()))[1].add(e.type)
    assert sorted(jobs.values(), key=lambda j: -j[0]) == [
        (3, {TYPE["normal"]}),
        (2, {TYPE["normal"], TYPE["archive"]}),
    ]


def test_design_single_tick_leaves_archive_rows_to_the_bulk_tick() -> None:
    """Seed 000 类型概览: archive rows are scanned by bulkSnapshotTick. An archive row due at
    0.5 s is not taken by the 1 s tick at T0 (which runs first) but by the bulk tick at T0, with
    the archive priority 2 (switch ``single_tick_takes_archive``)."""

    async def setup(ctx: Ctx) -> None:
        await ctx.store.insert_schedule(1, ScheduleType.ARCHIVE, T0 + 500, T0)

    run = run_model([idle(1)], until="2s", setup=setup)
    dispatched = of_aid(run, ScheduleDispatched, 1)
    assert [(e.t_ms - T0, e.priority) for e in dispatched] == [(0, 2)]
    assert job_names(run, dispatched) == ["bulkSnapshotVideo"]
    assert run.upstream.calls == [(T0, (1,))]
