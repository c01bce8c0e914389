"""``snapshotTick`` (every 1 s) and ``bulkSnapshotTick`` (every 15 s): due rows into jobs.

Reference §7 and §8; seed 000 "调度扫描对比". Each tick has an idle hint for the engine's elision:
the earliest pending row it could take, minus its look-ahead. An idle tick runs exactly one query
(its due query) and logs nothing.
"""

from __future__ import annotations

from typing import Final

from sim.cvsa.constants import (
    BULK_TICK_LIMIT,
    BULK_TICK_LOOKAHEAD_MS,
    PRIORITY_ARCHIVE_SINGLE,
    PRIORITY_MILESTONE,
    PRIORITY_NEW,
    PRIORITY_NORMAL_BULK,
    SINGLE_TICK_LIMIT,
    SINGLE_TICK_LOOKAHEAD_MS,
)
from sim.engine import Job
from sim.events.cvsa_kinds import SKIP_REASON
from sim.ports import ScheduleRow
from sim.scheduler.context import TYPE_CODE, Ctx
from sim.scheduler.schedule import set_status
from sim.units import Ms

NEVER: Final[Ms] = 2**62
_AID_PROCESSING: Final = SKIP_REASON.code("aid_processing")
SINGLE_PRIORITY: Final = {
    "milestone": PRIORITY_MILESTONE,
    "new": PRIORITY_NEW,
    "archive": PRIORITY_ARCHIVE_SINGLE,
}


def single_tick_types(ctx: Ctx) -> list[str]:
    """``type != 'normal'``: milestone and new, plus archive in the deployed code (§7.1, §16.1)."""
    return (
        ["milestone", "new", "archive"]
        if ctx.switches.single_tick_takes_archive
        else ["milestone", "new"]
    )


async def snapshot_tick(ctx: Ctx, job: Job) -> None:
    """Take up to 10 pending rows due within the next second; skip a video that already has a
    processing row; set the row processing and enqueue ``snapshotVideo`` (§7.2)."""
    now = ctx.now
    lookback = ctx.switches.single_tick_lookback_ms
    rows = await ctx.store.due_schedules(
        from_ms=None if lookback is None else now - lookback,
        to_ms=now + SINGLE_TICK_LOOKAHEAD_MS,
        types=single_tick_types(ctx),
        limit=SINGLE_TICK_LIMIT,
        order="started_at",
    )
    for row in rows:
        if await ctx.store.has_processing_schedule(row.aid):
            ctx.emit.skipped(
                now, row.id, row.aid, TYPE_CODE[row.type], row.started_at_ms, _AID_PROCESSING
            )
            continue
        priority = SINGLE_PRIORITY[row.type]
        await set_status(ctx, [row.id], "processing")
        assert ctx.snapshot_video is not None
        snap_job = ctx.queue.add("snapshotVideo", ctx.snapshot_video, row, priority=priority)
        ctx.emit.dispatched(
            now, row.id, row.aid, TYPE_CODE[row.type], row.started_at_ms, snap_job.id, priority
        )


async def snapshot_tick_idle_until(ctx: Ctx, now: Ms) -> Ms:
    first = await ctx.store.earliest_pending_ms(single_tick_types(ctx))
    return NEVER if first is None else first - SINGLE_TICK_LOOKAHEAD_MS


async def bulk_snapshot_tick(ctx: Ctx, job: Job) -> None:
    """Take up to 1000 pending normal and archive rows due within 15 s (normal first), in groups
    of ``bulk_batch_size`` aids, one ``bulkSnapshotVideo`` job (one API call) each (§8)."""
    now = ctx.now
    sw = ctx.switches
    lookback = sw.bulk_tick_lookback_ms
    rows = await ctx.store.due_schedules(
        from_ms=None if lookback is None else now - lookback,
        to_ms=now + BULK_TICK_LOOKAHEAD_MS,
        types=["normal", "archive"],
        limit=BULK_TICK_LIMIT,
        order="normal_first",
    )
    size = sw.bulk_batch_size
    for start in range(0, len(rows), size):
        batch = rows[start : start + size]
        if sw.bulk_aids_as_ids_bug:
            # §8.2-8.3: the "filter" keeps every aid (each pending row is itself non-processing),
            # and the aids are then passed where schedule ids are expected: the batch's rows stay
            # pending, and unrelated rows whose id equals one of the aids become processing.
            aids = list(dict.fromkeys(r.aid for r in batch))
            await set_status(ctx, aids, "processing", stray=True)
            priority = PRIORITY_NORMAL_BULK
        else:
            await set_status(ctx, [r.id for r in batch], "processing")
            priority = _batch_priority(ctx, batch)
        assert ctx.bulk_snapshot_video is not None
        bulk_job = ctx.queue.add(
            "bulkSnapshotVideo", ctx.bulk_snapshot_video, batch, priority=priority
        )
        for r in batch:
            ctx.emit.dispatched(
                now, r.id, r.aid, TYPE_CODE[r.type], r.started_at_ms, bulk_job.id, priority
            )


def _batch_priority(ctx: Ctx, batch: list[ScheduleRow]) -> int:
    """Seed 000 gives normal 3 and archive 2 per type; a batch is one job, so the most urgent of
    its rows decides (a batch mixes types only at the normal/archive boundary of a tick)."""
    return min(
        ctx.switches.archive_bulk_priority if r.type == "archive" else PRIORITY_NORMAL_BULK
        for r in batch
    )


async def bulk_tick_idle_until(ctx: Ctx, now: Ms) -> Ms:
    first = await ctx.store.earliest_pending_ms(["normal", "archive"])
    return NEVER if first is None else first - BULK_TICK_LOOKAHEAD_MS
