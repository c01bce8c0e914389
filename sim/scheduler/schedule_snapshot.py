"""``scheduleSnapshot`` and the window-count bookkeeping around status changes (reference §5, §6).

The decisions are the rule book's: :func:`sim.cvsa.schedule.plan_schedule_snapshot` (skip, move
or insert), :class:`sim.cvsa.windows.AdjustSearch` (the window search),
:func:`sim.cvsa.lifecycle.advance` and :func:`~sim.cvsa.lifecycle.window_delta` (what a status
write does to a row and its window). This module carries them out against the ports in the
deployed order -- the duplicate check, the milestone move, the window reservation (Redis
first), then the INSERT -- so that the non-atomic gaps between them exist here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from sim.cvsa.lifecycle import Act, advance, status_after, window_delta
from sim.cvsa.schedule import ActiveRow, Move, Skip, plan_schedule_snapshot
from sim.cvsa.vocabulary import ScheduleRule, ScheduleType
from sim.cvsa.windows import Reserve, adjust_with
from sim.events.cvsa_kinds import NO_WINDOW, NOT_CREATED, PLACEMENT, WINDOW_CAUSE
from sim.ports import ScheduleRow, new_record
from sim.scheduler.context import RULE_CODE, STATUS_CODE, TYPE_CODE, Ctx
from sim.units import Ms

_NOT_CREATED_CODE: Final = NOT_CREATED.codes()
_CAUSE_STATUS: Final = WINDOW_CAUSE.code("status_change")
_CAUSE_MOVE: Final = WINDOW_CAUSE.code("move")
_EXACT: Final = PLACEMENT.code("exact")
_UNADJUSTED: Final = PLACEMENT.code("unadjusted")
_PLACEMENT_CODE: Final = PLACEMENT.codes()


class Reservation(NamedTuple):
    """Where ``adjustSnapshotTime`` put a row: its due time, window, the window's count after."""

    due_ms: Ms
    window_ms: Ms
    window_count: int
    probes: int
    placement: int


async def drive_adjust(ctx: Ctx, expected_ms: Ms) -> Reservation:
    """Run ``adjustSnapshotTime`` against the window counter (§6.2): each of its (at most two)
    searches is one :meth:`~sim.ports.WindowCounter.reserve` call."""
    search = adjust_with(ctx.switches, ctx.params, expected_ms, ctx.worker_now, ctx.jitter)
    reserve = ctx.counter.reserve
    value = -1
    step = search.start()
    while isinstance(step, Reserve):
        got = await reserve(step.first_ms, step.step_ms, step.count, step.cap)
        value = got.value
        step = search.reply(got)
    window = step.reserved_window_ms
    placement = _PLACEMENT_CODE[step.outcome]
    if window is None:
        return new_record(Reservation, (step.time_ms, NO_WINDOW, -1, step.probes, placement))
    return new_record(Reservation, (step.time_ms, window, value, step.probes, placement))


async def schedule_snapshot(
    ctx: Ctx,
    aid: int,
    type: ScheduleType,
    target_ms: Ms,
    *,
    rule: ScheduleRule,
    force: bool = False,
    adjust: bool = True,
) -> int | None:
    """``scheduleSnapshot(aid, type, targetTime, force, adjustTime)`` (reference §5), asked for
    by ``rule`` (logged with the outcome, so a row's origin is in the log).

    The decision is :func:`sim.cvsa.schedule.plan_schedule_snapshot`; this carries it out in the
    deployed order: the window counts first (Redis), then the INSERT, not atomically. Returns the
    new row's id, or None when nothing was inserted. Every outcome is logged.
    """
    store, emit, now = ctx.store, ctx.emit, ctx.now
    type_code = TYPE_CODE[type]
    rows = await store.active_schedules(aid, type)
    active = [new_record(ActiveRow, (r.id, r.status, r.started_at_ms)) for r in rows]
    plan = plan_schedule_snapshot(
        type,
        target_ms,
        active,
        force=force,
        adjust_time=adjust,
        switches=ctx.switches,
        params=ctx.params,
    )
    if isinstance(plan, Skip):
        emit.not_created(
            now, aid, type_code, target_ms, _NOT_CREATED_CODE[plan.reason], RULE_CODE[rule]
        )
        return None
    if isinstance(plan, Move):
        await move_milestone(ctx, aid, plan)
        return None
    if plan.incr is None:
        res = await drive_adjust(ctx, target_ms)
    else:
        window = plan.incr.window_ms
        count = await ctx.counter.incr(window, plan.incr.delta)
        placement = _EXACT if plan.exact else _UNADJUSTED
        res = new_record(Reservation, (target_ms, window, count, 1, placement))
    schedule_id = await store.insert_schedule(aid, type, res.due_ms, now)
    emit.created(
        now,
        schedule_id,
        aid,
        type_code,
        target_ms,
        res.due_ms,
        res.window_ms,
        res.window_count,
        res.probes,
        res.placement,
        int(force),
        RULE_CODE[rule],
    )
    return schedule_id


async def move_milestone(ctx: Ctx, aid: int, plan: Move) -> None:
    """The move transaction of §5 step 2: SELECT ... FOR UPDATE, UPDATE ``started_at``, and -- if
    the row was pending -- move its window count (``plan.effects``)."""
    before = await ctx.store.move_schedule(plan.row_id, plan.to_ms)
    if before is None:  # deleted between the lookup and the transaction
        return
    count = -1
    for effect in plan.effects:
        value = await ctx.counter.incr(effect.window_ms, effect.delta)
        if effect.delta < 0:
            ctx.emit.released(ctx.now, effect.window_ms, plan.row_id, _CAUSE_MOVE, value)
        else:
            count = value
    ctx.emit.moved(
        ctx.now, plan.row_id, aid, plan.from_ms, plan.to_ms, int(bool(plan.effects)), count
    )


async def set_status(ctx: Ctx, ids: Sequence[int], act: Act) -> list[ScheduleRow]:
    """``setSnapshotStatus``/``bulkSetSnapshotStatus``: write the status ``act`` leads to on the
    rows that exist, then apply each row's window change (reference §6.4). Returns the rows as
    they were before.

    Every row's transition is checked against the run's lifecycle
    (:func:`sim.cvsa.lifecycle.advance`). :attr:`Act.STRAY`: the ids are not the caller's rows
    (aids passed as ids, §8.3); each row whose status this changes is logged as a
    :class:`~sim.events.cvsa_kinds.StrayStatusChange` (a row already in that status is hit again
    on every later bulk tick, but nothing changes)."""
    before = await ctx.store.set_schedule_status(ids, status_after(act))
    table, switches = ctx.transitions, ctx.switches
    for row in before:
        after = advance(row.status, act, table)
        if act is Act.STRAY and after is not row.status:
            ctx.emit.stray(
                ctx.now,
                row.id,
                row.aid,
                TYPE_CODE[row.type],
                row.started_at_ms,
                STATUS_CODE[row.status],
                STATUS_CODE[after],
            )
    for row in before:
        if window_delta(row.status, act, switches):
            await release_window(ctx, row, _CAUSE_STATUS)
    return before


async def release_window(ctx: Ctx, row: ScheduleRow, cause: int) -> None:
    """HINCRBY -1 on the window of a row that left ``pending`` (§6.4, §12), logged with its
    ``cause`` (a WINDOW_CAUSE code)."""
    started = row.started_at_ms
    window = started - started % ctx.params.window_ms
    left = await ctx.counter.incr(window, -1)
    ctx.emit.released(ctx.now, window, row.id, cause, left)
