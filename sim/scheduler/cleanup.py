"""``scheduleCleanup`` (every 2 min) and the window-count refresh (reference §12, §6.3)."""

from __future__ import annotations

from typing import Final

from sim.cvsa.constants import CLEANUP_OVERDUE_MS, WINDOW_REFRESH_HORIZON_MS
from sim.engine import Job
from sim.events.cvsa_kinds import WINDOW_CAUSE
from sim.scheduler.context import STATUS_CODE, TYPE_CODE, Ctx
from sim.units import HOUR_MS, Ms, window_start

NEVER: Final[Ms] = 2**62
_CAUSE_CLEANUP: Final = WINDOW_CAUSE.code("cleanup")


async def schedule_cleanup(ctx: Ctx, job: Job) -> None:
    """Delete pending and processing rows more than 2 min past due; nothing is rescheduled.
    The deployed code never corrects the window counts; the design profile releases the windows
    of the pending rows it deletes (switch ``cleanup_decrements``)."""
    now = ctx.now
    for row in await ctx.store.delete_overdue_schedules(now - CLEANUP_OVERDUE_MS):
        ctx.emit.deleted(
            now, row.id, row.aid, TYPE_CODE[row.type], row.started_at_ms, STATUS_CODE[row.status]
        )
        if ctx.switches.cleanup_decrements and row.status == "pending":
            window = window_start(row.started_at_ms)
            left = await ctx.counter.incr(window, -1)
            ctx.emit.released(now, window, row.id, _CAUSE_CLEANUP, left)


async def cleanup_idle_until(ctx: Ctx, now: Ms) -> Ms:
    first = await ctx.store.earliest_active_ms()
    return NEVER if first is None else first + CLEANUP_OVERDUE_MS + 1


async def refresh_window_counts(ctx: Ctx) -> None:
    """``initSnapshotWindowCounts``: count pending rows per window over [start of the current UTC
    hour, +14 days), then DEL the hash and HSET each count (not atomic, §6.3)."""
    now = ctx.now
    start = now - now % HOUR_MS
    end = start + WINDOW_REFRESH_HORIZON_MS
    counts = await ctx.store.pending_counts_by_window(start, end)
    await ctx.counter.replace_all(counts)
    ctx.emit.rebuilt(now, start, end, len(counts), sum(counts.values()))
