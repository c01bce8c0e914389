"""``scheduleCleanup``, design profile: every 2 min, delete pending and processing rows more than
2 min past due.

Seed 000 "超时清理": 删除 started_at < NOW() - INTERVAL '2 minutes' 且状态为 pending/processing
的调度 (strictly before the cut-off). Reference §12 (hard delete, no reschedule), §9 step 1 (a
job whose row is gone does nothing). The design profile releases the window count of each
deleted pending row (switch ``cleanup_decrements``; the deployed code does not, see
``test_profiles_cvsa``).
"""

from __future__ import annotations

from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType
from sim.events.cvsa_kinds import (
    ScheduleDeleted,
    ScheduleDispatched,
    ScheduleFinished,
    ScheduleSkipped,
    ScheduleStarted,
    SnapshotTaken,
    WindowReleased,
)
from sim.events.engine_kinds import IterationsMissed
from sim.scheduler.context import Ctx
from sim.testing.runs import T0, ModelRun, Video, run_model
from sim.units import DAY_MS, SECOND_MS
from tests.timing._support import CAUSE, SKIP, STATUS, Setup

OLD = T0 - 100 * DAY_MS


def blocked_rows(rows: dict[str, int]) -> Setup:
    """Video 1: a processing milestone row due at 10 s (its job lost), so the pending new rows due
    at 60 s and 120 s are skipped by every tick (reference §7.2) until cleanup removes it."""

    async def setup(ctx: Ctx) -> None:
        rows["blocker"] = await ctx.store.insert_schedule(
            1, ScheduleType.MILESTONE, T0 + 10_000, T0
        )
        await ctx.store.set_schedule_status([rows["blocker"]], ScheduleStatus.PROCESSING)
        rows["r60"] = await ctx.store.insert_schedule(1, ScheduleType.NEW, T0 + 60_000, T0)
        rows["r120"] = await ctx.store.insert_schedule(1, ScheduleType.NEW, T0 + 120_000, T0)
        await ctx.store.insert_schedule(1, ScheduleType.ARCHIVE, T0 + 10 * DAY_MS, T0)

    return setup


def run_blocked(rows: dict[str, int], until: str = "5m", profile: str = "design") -> ModelRun:
    return run_model(
        [Video(1, OLD, song=False, views=lambda t: 10)],
        until=until,
        setup=blocked_rows(rows),
        profile=profile,
    )


def test_cleanup_deletes_pending_and_processing_rows_more_than_2_minutes_overdue() -> None:
    """Cleanup runs at 0, 2, 4 min. At 2 min the cut-off is T0: nothing is older. At 4 min the
    cut-off is 2 min: the processing row (due 10 s) and the pending row due at 60 s go; the row
    due at exactly 2 min is not *before* the cut-off and stays, and the tick at 4 min 1 s -- the
    video no longer has a processing row -- takes it."""
    rows: dict[str, int] = {}
    run = run_blocked(rows)
    deleted = run.events(ScheduleDeleted)
    assert [(e.t_ms - T0, e.schedule, e.status) for e in deleted] == [
        (240_000, rows["blocker"], STATUS["processing"]),
        (240_000, rows["r60"], STATUS["pending"]),
    ]
    skipped = run.events(ScheduleSkipped)
    assert {e.reason for e in skipped} == {SKIP["aid_processing"]}
    assert [e.t_ms - T0 for e in skipped if e.schedule == rows["r60"]] == list(
        range(59_000, 241_000, SECOND_MS)
    )
    dispatched = run.events(ScheduleDispatched)
    assert [(e.t_ms - T0, e.schedule) for e in dispatched] == [(241_000, rows["r120"])]


def test_design_cleanup_releases_the_window_of_a_deleted_pending_row() -> None:
    """The start-up rebuild counts the two pending rows in window [0, 5 min) (the processing row is
    not counted, reference §6.3): 2. Cleanup deleting the pending row releases it (1, cause
    ``cleanup``); the deleted processing row was released when it left pending, so nothing more;
    the dispatch of the last row releases it (0)."""
    rows: dict[str, int] = {}
    run = run_blocked(rows)
    released = [e for e in run.events(WindowReleased) if e.window_ms == T0]
    assert [(e.t_ms - T0, e.schedule, e.cause, e.value) for e in released] == [
        (240_000, rows["r60"], CAUSE["cleanup"], 1),
        (241_000, rows["r120"], CAUSE["status_change"], 0),
    ]


def test_a_job_whose_row_was_deleted_does_nothing() -> None:
    """Reference §9 step 1, §12: with one worker and a 150-s upstream, the tick at 60 s sets two new
    rows processing; the first job holds the worker until 210 s, so the cleanup due at 2 min runs
    late, at 210 s (its missed slots are skipped, reference §1.4), with cut-off 90 s: it deletes
    the second row, still processing. Its job then starts and finds no row: no snapshot."""
    rows: list[int] = []

    async def setup(ctx: Ctx) -> None:
        for aid in (1, 2):
            rows.append(await ctx.store.insert_schedule(aid, ScheduleType.NEW, T0 + 60_500, T0))
            await ctx.store.insert_schedule(aid, ScheduleType.ARCHIVE, T0 + 10 * DAY_MS, T0)

    run = run_model(
        [Video(a, OLD, song=False, views=lambda t: 10) for a in (1, 2)],
        until="5m",
        setup=setup,
        latency_ms=150_000,
        overrides=["scheduler.snapshot_concurrency=1"],
    )
    assert [(e.t_ms - T0, e.schedule) for e in run.events(ScheduleDispatched)] == [
        (60_000, rows[0]),
        (60_000, rows[1]),
    ]
    assert [(e.t_ms - T0, e.schedule) for e in run.events(ScheduleStarted)] == [(60_000, rows[0])]
    assert [(e.t_ms - T0, e.schedule) for e in run.events(SnapshotTaken)] == [(210_000, rows[0])]
    deleted = run.events(ScheduleDeleted)
    assert [(e.t_ms - T0, e.schedule, e.status) for e in deleted] == [
        (210_000, rows[1], STATUS["processing"])
    ]
    gone = [e for e in run.events(ScheduleSkipped) if e.reason == SKIP["row_gone"]]
    assert [(e.t_ms - T0, e.schedule) for e in gone] == [(210_000, rows[1])]
    # BullMQ skips the slots a late iteration missed (reference §1.4): the tick due at 61 s
    # started at 210 s, so its next run is the next aligned slot, 211 s (149 slots skipped);
    # the bulk tick due at 75 s goes on at 225 s (9 skipped); the cleanup's next slot, 4 min,
    # is still ahead, so it skips nothing.
    names = run.engine.log.names
    missed = {
        names[e.scheduler]: (e.missed, e.next_due_ms - T0) for e in run.events(IterationsMissed)
    }
    assert missed == {"snapshotTick": (149, 211_000), "bulkSnapshotTick": (9, 225_000)}


def test_a_row_deleted_while_its_job_fetches_gets_no_final_status() -> None:
    """Reference §9 step 4, §12: with a 250-s upstream, the new row due at 5 s is processing from
    4 s; the cleanup at 4 min (cut-off 2 min) deletes it. The fetch ends at 254 s: the snapshot
    is written, but the status UPDATE matches no row, so the row has no final status -- its end
    is the deletion."""

    async def setup(ctx: Ctx) -> None:
        await ctx.store.insert_schedule(1, ScheduleType.NEW, T0 + 5_000, T0)
        await ctx.store.insert_schedule(1, ScheduleType.ARCHIVE, T0 + 10 * DAY_MS, T0)

    video = Video(1, OLD, song=False, views=lambda t: 10)
    run = run_model([video], until="5m", setup=setup, latency_ms=250_000)
    assert [(e.t_ms - T0, e.schedule) for e in run.events(ScheduleStarted)] == [(4_000, 1)]
    assert [(e.t_ms - T0, e.schedule, e.status) for e in run.events(ScheduleDeleted)] == [
        (240_000, 1, STATUS["processing"])
    ]
    assert [(e.t_ms - T0, e.schedule) for e in run.events(SnapshotTaken)] == [(254_000, 1)]
    assert run.events(ScheduleFinished) == []
