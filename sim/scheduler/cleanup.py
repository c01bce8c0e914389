"""``scheduleCleanup`` (every 2 min) and the window-count refresh (reference §12, §6.3)."""

from __future__ import annotations

from typing import Final

from sim.cvsa.lifecycle import Act, advance, window_delta
from sim.cvsa.ticks import cleanup_cutoff_ms
from sim.engine import Job
from sim.events.cvsa_kinds import WINDOW_CAUSE
from sim.scheduler.context import NEVER, STATUS_CODE, TYPE_CODE, Ctx
from sim.scheduler.schedule_snapshot import release_window
from sim.units import HOUR_MS, Ms

_CAUSE_CLEANUP: Final = WINDOW_CAUSE.code("cleanup")


async def schedule_cleanup(ctx: Ctx, job: Job) -> None:
    """Delete pending and processing rows more than 2 min past due; nothing is rescheduled.
    The deployed code never corrects the window counts; the design profile releases the windows
    of the pending rows it deletes (switch ``cleanup_decrements``, rule
    :func:`sim.cvsa.lifecycle.window_delta`)."""
    now = ctx.now
    table, switches = ctx.transitions, ctx.switches
    cutoff = cleanup_cutoff_ms(now, ctx.params)
    if ctx.modes is None:
        doomed = await ctx.store.delete_overdue_schedules(cutoff)
    else:  # seed 003 §5.1: deferred rows are kept for the modes' bound
        doomed = await ctx.store.delete_overdue_schedules(cutoff, ctx.modes.cleanup_bounds(cutoff))
    for row in doomed:
        advance(row.status, Act.CLEANUP, table)  # only active rows are deleted (§12)
        ctx.emit.deleted(
            now, row.id, row.aid, TYPE_CODE[row.type], row.started_at_ms, STATUS_CODE[row.status]
        )
        if window_delta(row.status, Act.CLEANUP, switches):
            await release_window(ctx, row, _CAUSE_CLEANUP)


async def cleanup_idle_until(ctx: Ctx, now: Ms) -> Ms:
    """Idle until the earliest active row becomes overdue (the first instant the cutoff passes
    it)."""
    first = await ctx.store.earliest_active_ms()
    return NEVER if first is None else first + ctx.params.cleanup_overdue_ms + 1


async def refresh_window_counts(ctx: Ctx) -> None:
    """``initSnapshotWindowCounts``: count pending rows per window over [start of the current UTC
    hour, +14 days), then DEL the hash and HSET each count (not atomic, §6.3)."""
    now = ctx.now
    start = now - now % HOUR_MS
    end = start + ctx.params.window_refresh_horizon_ms
    counts = await ctx.store.pending_counts_by_window(start, end, ctx.params.window_ms)
    await ctx.counter.replace_all(counts)
    ctx.emit.rebuilt(now, start, end, len(counts), sum(counts.values()))
