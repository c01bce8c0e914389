"""``snapshotTick`` (every 1 s) and ``bulkSnapshotTick`` (every 15 s): due rows into jobs.

Reference §7 and §8; seed 000 "调度扫描对比". What each tick selects, in which order and with
which priority is the rule book's (:mod:`sim.cvsa.ticks`); this module runs the queries and
enqueues the jobs. Each tick has an idle hint for the engine's elision: the earliest pending row
it could take, minus its look-ahead. An idle tick runs exactly one query (its due query) and
logs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sim.cvsa.lifecycle import Act
from sim.cvsa.ticks import (
    BULK_TYPES,
    batches,
    bulk_priority,
    bulk_tick_bounds,
    single_priority,
    single_tick_bounds,
    single_tick_types,
)
from sim.cvsa.vocabulary import ScheduleType
from sim.engine import Job
from sim.events.cvsa_kinds import SKIP_REASON
from sim.ports import DueOrder, ScheduleRow
from sim.scheduler.context import NEVER, TYPE_CODE, Ctx
from sim.scheduler.schedule_snapshot import set_status
from sim.units import Ms

_AID_PROCESSING: Final = SKIP_REASON.code("aid_processing")


def _limit(ctx: Ctx, limit: int, *, hot: bool) -> int:
    """A tick's row limit; under the write path's backpressure, a share of it (seed 003 §5.1).
    ``hot``: the 1 s tick of milestone and new rows."""
    return limit if ctx.writes is None else ctx.writes.tick_limit(limit, hot=hot)


async def _due(
    ctx: Ctx,
    *,
    from_ms: Ms | None,
    to_ms: Ms,
    types: Sequence[ScheduleType],
    limit: int,
    order: DueOrder,
) -> list[ScheduleRow]:
    """A tick's due query; under a traffic mode, the types it defers wait (seed 003 §5.1)."""
    if ctx.modes is None:
        return await ctx.store.due_schedules(
            from_ms=from_ms, to_ms=to_ms, types=types, limit=limit, order=order
        )
    return await ctx.modes.due(
        ctx.store, from_ms=from_ms, to_ms=to_ms, types=types, limit=limit, order=order
    )


async def snapshot_tick(ctx: Ctx, job: Job) -> None:
    """Take up to 10 pending rows due within the next second; skip a video that already has a
    processing row; set the row processing and enqueue ``snapshotVideo`` (§7.2)."""
    now, params = ctx.now, ctx.params
    lo, hi = single_tick_bounds(now, params)
    rows = await _due(
        ctx,
        from_ms=lo,
        to_ms=hi,
        types=single_tick_types(ctx.switches),
        limit=_limit(ctx, params.single_tick_limit, hot=True),
        order="started_at",
    )
    for row in rows:
        if await ctx.store.has_processing_schedule(row.aid):
            ctx.emit.skipped(
                now, row.id, row.aid, TYPE_CODE[row.type], row.started_at_ms, _AID_PROCESSING
            )
            continue
        priority = single_priority(row.type, params)
        await set_status(ctx, [row.id], Act.DISPATCH)
        assert ctx.snapshot_video is not None
        snap_job = ctx.queue.add("snapshotVideo", ctx.snapshot_video, row, priority=priority)
        ctx.emit.dispatched(
            now, row.id, row.aid, TYPE_CODE[row.type], row.started_at_ms, snap_job.id, priority
        )


async def snapshot_tick_idle_until(ctx: Ctx, now: Ms) -> Ms:
    first = await ctx.store.earliest_pending_ms(single_tick_types(ctx.switches))
    return NEVER if first is None else first - ctx.params.single_tick_lookahead_ms


async def bulk_snapshot_tick(ctx: Ctx, job: Job) -> None:
    """Take up to 1000 pending normal and archive rows due within 15 s (normal first), in groups
    of ``bulk_batch_size`` aids, one ``bulkSnapshotVideo`` job (one API call) each (§8)."""
    now, sw, params = ctx.now, ctx.switches, ctx.params
    lo, hi = bulk_tick_bounds(now, params)
    rows = await _due(
        ctx,
        from_ms=lo,
        to_ms=hi,
        types=BULK_TYPES,
        limit=_limit(ctx, params.bulk_tick_limit, hot=False),
        order="normal_first",
    )
    for batch in batches(rows, params.bulk_batch_size):
        if sw.bulk_aids_as_ids_bug:
            # §8.2-8.3: the "filter" keeps every aid (each pending row is itself non-processing),
            # and the aids are then passed where schedule ids are expected: the batch's rows stay
            # pending, and unrelated rows whose id equals one of the aids become processing.
            await set_status(ctx, list(dict.fromkeys(r.aid for r in batch)), Act.STRAY)
        else:
            await set_status(ctx, [r.id for r in batch], Act.DISPATCH)
        priority = bulk_priority([r.type for r in batch], params)
        assert ctx.bulk_snapshot_video is not None
        bulk_job = ctx.queue.add(
            "bulkSnapshotVideo", ctx.bulk_snapshot_video, batch, priority=priority
        )
        for r in batch:
            ctx.emit.dispatched(
                now, r.id, r.aid, TYPE_CODE[r.type], r.started_at_ms, bulk_job.id, priority
            )


async def bulk_tick_idle_until(ctx: Ctx, now: Ms) -> Ms:
    first = await ctx.store.earliest_pending_ms(BULK_TYPES)
    return NEVER if first is None else first - ctx.params.bulk_tick_lookahead_ms
