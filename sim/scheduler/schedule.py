"""``scheduleSnapshot`` and the window-count bookkeeping around status changes (reference §5, §6).

``schedule_snapshot`` runs the deployed steps in the deployed order -- the duplicate check, the
milestone move, the window reservation (Redis first), then the INSERT -- so that the non-atomic
gaps between them exist here too. The window search itself is the pure generator
:func:`sim.cvsa.windows.adjust_snapshot_time`; :func:`drive_adjust` feeds its HINCRBY effects to
the window-counter port, one round trip per probe, as the deployed client-side loop does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from sim.cvsa.windows import AdjustResult, Incr, adjust_snapshot_time
from sim.events.cvsa_kinds import NO_WINDOW, NOT_CREATED, WINDOW_CAUSE
from sim.ports import ScheduleRow
from sim.scheduler.context import TYPE_CODE, Ctx
from sim.units import Ms, window_start

_DUPLICATE = NOT_CREATED.code("duplicate_active")
_NOT_EARLIER = NOT_CREATED.code("milestone_not_earlier")
_PROCESSING = NOT_CREATED.code("milestone_processing")
_CAUSE_STATUS = WINDOW_CAUSE.code("status_change")
_CAUSE_MOVE = WINDOW_CAUSE.code("move")
UNCAPPED_TYPES = frozenset({"milestone", "new"})
"""Types that keep their exact time and add +1 to their window with no cap check (§5 step 4)."""


class Reservation(NamedTuple):
    """Where ``adjustSnapshotTime`` put a row: its due time, window, the window's count after."""

    due_ms: Ms
    window_ms: Ms
    window_count: int
    probes: int


async def drive_adjust(ctx: Ctx, expected_ms: Ms) -> Reservation:
    """Run ``adjustSnapshotTime`` against the window counter, one HINCRBY per effect (§6.2)."""
    sw = ctx.switches
    gen = adjust_snapshot_time(
        expected_ms,
        ctx.now,
        cap=sw.window_cap,
        forward_windows=sw.forward_search_windows,
        backward_windows=sw.backward_search_windows,
        bare_fallback=sw.fallback_bare_window_start,
        rng=ctx.jitter,
    )
    incr = ctx.counter.incr
    last_plus: dict[Ms, int] = {}
    try:
        effect: Incr = next(gen)
        while True:
            value = await incr(effect.window_ms, effect.delta)
            if effect.delta > 0:
                last_plus[effect.window_ms] = value
            effect = gen.send(value)
    except StopIteration as stop:
        result: AdjustResult = stop.value
    if result.window_ms is None:
        return Reservation(result.t_ms, NO_WINDOW, -1, result.probes)
    return Reservation(result.t_ms, result.window_ms, last_plus[result.window_ms], result.probes)


async def schedule_snapshot(
    ctx: Ctx, aid: int, type: str, target_ms: Ms, *, force: bool = False, adjust: bool = True
) -> int | None:
    """``scheduleSnapshot(aid, type, targetTime, force, adjustTime)`` (reference §5).

    Returns the new row's id, or None when nothing was inserted (a duplicate, or a milestone
    row that was moved or already early enough). Every outcome is logged.
    """
    store, emit, now = ctx.store, ctx.emit, ctx.now
    type_code = TYPE_CODE[type]
    has_active = await store.has_active_schedule(aid, type)
    if type == "milestone" and has_active:
        # §5 step 2: a milestone can only be moved earlier. Design moves the latest pending row
        # ("已有同类型待处理调度"); deployed moves the latest active one, even processing (§19.11).
        row = await store.latest_active_schedule(aid, "milestone")
        movable = row is not None and (
            row.status == "pending" or ctx.switches.milestone_move_processing
        )
        if row is not None and movable and row.started_at_ms > target_ms:
            await move_milestone(ctx, row, target_ms)
            return None
        reason = _NOT_EARLIER if row is None or movable else _PROCESSING
        emit.not_created(now, aid, type_code, target_ms, reason)
        return None
    if has_active and not force:
        emit.not_created(now, aid, type_code, target_ms, _DUPLICATE)
        return None
    if type not in UNCAPPED_TYPES and adjust:
        res = await drive_adjust(ctx, target_ms)
    else:
        window = window_start(target_ms)
        res = Reservation(target_ms, window, await ctx.counter.incr(window, 1), 1)
    schedule_id = await store.insert_schedule(aid, type, res.due_ms, now)
    emit.created(
        now, schedule_id, aid, type_code, target_ms, res.due_ms, res.window_ms,
        res.window_count, res.probes, int(force),
    )
    return schedule_id


async def move_milestone(ctx: Ctx, row: ScheduleRow, target_ms: Ms) -> None:
    """The move transaction of §5 step 2: SELECT ... FOR UPDATE, then, if the row was pending,
    release its old window and count the new one, and UPDATE ``started_at``."""
    before = await ctx.store.move_schedule(row.id, target_ms)
    if before is None:  # deleted between the lookup and the transaction
        return
    count = -1
    if before.status == "pending":
        old = window_start(before.started_at_ms)
        left = await ctx.counter.incr(old, -1)
        ctx.emit.released(ctx.now, old, row.id, _CAUSE_MOVE, left)
        count = await ctx.counter.incr(window_start(target_ms), 1)
    ctx.emit.moved(
        ctx.now, row.id, row.aid, before.started_at_ms, target_ms,
        int(before.status == "pending"), count,
    )


async def set_status(ctx: Ctx, ids: Sequence[int], status: str) -> list[ScheduleRow]:
    """``setSnapshotStatus``/``bulkSetSnapshotStatus``: update, then decrement the window of every
    row that left ``pending`` (reference §6.4). Returns the rows as they were before."""
    before = await ctx.store.set_schedule_status(ids, status)
    if status != "pending":
        for row in before:
            if row.status == "pending":
                window = window_start(row.started_at_ms)
                left = await ctx.counter.incr(window, -1)
                ctx.emit.released(ctx.now, window, row.id, _CAUSE_STATUS, left)
    return before
