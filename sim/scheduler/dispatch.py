"""The dispatchers: milestone (5 min), regular (30 min), archive (2 h). Reference §11.5, §11.7,
§13b; seed 000 "milestone类型", "normal类型", "archive类型"."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from sim.cvsa.calendar import archive_target_nonsong_ms, archive_target_song_ms
from sim.cvsa.intervals import regular_dispatch_target_ms
from sim.cvsa.milestones import milestone_delay_ms
from sim.cvsa.vocabulary import ScheduleRule, ScheduleType
from sim.engine import Job
from sim.events.cvsa_kinds import LOCK_OUTCOME
from sim.ports import DISPATCHER_LOCKS, Snapshot, new_record
from sim.scheduler.context import NEVER, Ctx
from sim.scheduler.estimates import adjusted_eta, eta_from, regular_interval
from sim.scheduler.schedule_snapshot import schedule_snapshot
from sim.units import Ms

REGULAR_LOCK, ARCHIVE_LOCK = DISPATCHER_LOCKS
_MILESTONE: Final = ScheduleType.MILESTONE
_NORMAL: Final = ScheduleType.NORMAL
_DISPATCHER: Final = ScheduleRule.DISPATCHER
_ARCHIVE: Final = ScheduleType.ARCHIVE


async def dispatch_milestone_snapshots(ctx: Ctx, job: Job | None = None) -> None:
    """For every video near a milestone: ETA < 144 h -> a milestone row at now + ETA clamped to
    [2 s, 1.2 h]; an existing row is only ever moved earlier (§11.5, §5 step 2)."""
    store, params = ctx.store, ctx.params
    aids = await store.milestone_candidates(
        ctx.switches.wide_milestone_candidates,
        params.milestone_candidate_eta_h,
        params.milestone_ladder,
    )
    if not ctx.batched_reads():
        for aid in aids:
            await _schedule_milestone(ctx, aid, await adjusted_eta(ctx, aid))
        return
    # Every candidate's ETA inputs in one call (thousands of candidates a pass at full scale,
    # two port calls each otherwise). Equivalent: nothing the pass writes (eta rows, schedule
    # rows, window counts) is among the inputs, and nothing else runs meanwhile.
    #
    # Most candidates come to nothing: an ETA above 144 h from the same snapshots as five
    # minutes before. Those are settled with the store, which leaves them out of the next
    # pass's answer (charging their reads) until a snapshot of theirs is written or a lookback
    # would find another snapshot: the ETA, a pure function of those inputs, would be the same
    # (``ctx.eta_memo`` would answer it without an upsert) and would schedule nothing again.
    now, reader = ctx.worker_now, ctx.eta_reader
    inputs = await store.eta_inputs(aids, now, params.eta_lookbacks_ms, reader)
    latest_ms, latest_views, lookbacks, answered, _ = inputs
    settled: list[int] = []
    for i in range(len(answered)):
        aid, t_ms = answered[i], latest_ms[i]
        eta = 0.0
        if t_ms is not None:
            latest = new_record(Snapshot, (t_ms, latest_views[i]))
            eta = await eta_from(ctx, aid, latest, lookbacks[i])
        if not await _schedule_milestone(ctx, aid, eta) and t_ms is not None:
            settled.append(aid)
    if settled:
        await store.settle_eta_inputs(settled, now, reader)


async def _schedule_milestone(ctx: Ctx, aid: int, eta_h: float) -> bool:
    """Schedule the milestone snapshot an ETA asks for; False: it asks for none."""
    delay = milestone_delay_ms(eta_h, True, ctx.params)
    if delay is None:
        return False
    await schedule_snapshot(ctx, aid, _MILESTONE, ctx.worker_now + delay, rule=_DISPATCHER)
    return True


async def milestone_idle_until(ctx: Ctx, now: Ms) -> Ms:
    """Idle while there is no candidate at all (each candidate's ETA is written to the eta table,
    so a run with candidates always changes state)."""
    wide, params = ctx.switches.wide_milestone_candidates, ctx.params
    candidates = await ctx.store.milestone_candidates(
        wide, params.milestone_candidate_eta_h, params.milestone_ladder
    )
    return now if candidates else NEVER


async def under_dispatcher_lock(
    ctx: Ctx, name: str, body: Callable[[Ctx], Awaitable[None]]
) -> None:
    """Run ``body`` under the lock around a dispatcher run (reference §11.7 steps 1-2 and 5,
    §13b.1); when another run holds it, this run does nothing. As deployed, the check and the
    take are separate calls, and the ``finally`` releases the lock even when this run did not
    take it (switch ``lock_release_bug``): the other, still running, run loses its lock.

    A function rather than an async context manager: mypyc compiles no async generator, and
    this module is among the compiled ones (``sim._native.COMPILED_MODULES``)."""
    sw = ctx.switches
    if not sw.dispatcher_locks:
        await body(ctx)
        return
    locks, taken = ctx.locks, False
    failure: BaseException | None = None
    try:
        # Two calls, as deployed: runs that check at the same instant both see the lock free,
        # and the one whose SET NX loses does nothing either.
        if not await locks.is_locked(name, ctx.now):
            taken = await locks.acquire_lock(name, ctx.now, ctx.params.dispatch_lock_ttl_ms)
        if taken:
            await body(ctx)
        else:
            ctx.emit.locked(ctx.now, ctx.engine.log.name(name), LOCK_OUTCOME.code("busy"))
    except GeneratorExit:
        # The process was killed (a crash: Engine.kill closes its coroutine). A dead process
        # runs nothing more: it never releases the lock, which expires with its TTL (SET NX +
        # EXPIRE, reference §2.8). Awaiting the release here would also hand a real backend's
        # I/O to a coroutine that is being closed.
        raise
    except BaseException as caught:  # a `finally` by hand: its await stays out of the handler
        failure = caught  # (workers.call_upstream says why)
    if taken or sw.lock_release_bug:
        try:
            await locks.release_lock(name)
        except BaseException as release_failed:  # chained as a `finally` would chain it
            if failure is not None and release_failed.__context__ is None:
                release_failed.__context__ = failure
            raise
        if not taken:
            code = LOCK_OUTCOME.code("released_other")
            ctx.emit.locked(ctx.now, ctx.engine.log.name(name), code)
    if failure is not None:
        raise failure


async def dispatch_regular_snapshots(ctx: Ctx, job: Job | None = None) -> None:
    """Songs without an active normal row get one at the interval their last-24-h growth gives
    (§11.6-11.7; seed 000 "间隔计算"). Skipped under the write path's backpressure."""
    if ctx.writes is not None and ctx.writes.holds_back("dispatchRegularSnapshots"):
        return
    await under_dispatcher_lock(ctx, REGULAR_LOCK, _dispatch_regular)


async def _dispatch_regular(ctx: Ctx) -> None:
    sw, params, started = ctx.switches, ctx.params, ctx.now
    for aid in await ctx.store.songs_without_active_schedule(_NORMAL):
        if sw.dispatch_time_caps and ctx.now - started > params.regular_dispatch_cap_ms:
            break
        hours = await regular_interval(ctx, aid)
        latest = await ctx.store.latest_snapshot(aid)
        last_ms = None if latest is None else latest.created_at_ms
        target = regular_dispatch_target_ms(ctx.worker_now, last_ms, hours, sw, params)
        await schedule_snapshot(ctx, aid, _NORMAL, target, rule=_DISPATCHER)


async def regular_idle_until(ctx: Ctx, now: Ms) -> Ms:
    return now if await ctx.store.songs_without_active_schedule(_NORMAL) else NEVER


async def dispatch_archive_snapshots(ctx: Ctx, job: Job | None = None) -> None:
    """Songs without an active archive row -> next Saturday; other known videos -> uniformly
    between next Monday and the Monday after (§13b; time zone from the scenario). Skipped under
    the write path's backpressure."""
    if ctx.writes is not None and ctx.writes.holds_back("dispatchArchiveSnapshots"):
        return
    await under_dispatcher_lock(ctx, ARCHIVE_LOCK, _dispatch_archive)


async def _dispatch_archive(ctx: Ctx) -> None:
    sw, params, tz, started = ctx.switches, ctx.params, ctx.timezone_ms, ctx.now
    keep, cap_ms = sw.archive_keeps_time_of_day, params.archive_dispatch_cap_ms
    for aid in await ctx.store.songs_without_active_schedule(_ARCHIVE):
        if sw.dispatch_time_caps and ctx.now - started > cap_ms:
            return
        target = archive_target_song_ms(ctx.worker_now, tz, keep, params)
        await schedule_snapshot(ctx, aid, _ARCHIVE, target, rule=_DISPATCHER)
    for aid in await ctx.store.non_songs_without_active_schedule(_ARCHIVE):
        if sw.dispatch_time_caps and ctx.now - started > cap_ms:
            return
        u = ctx.archive_rng.random()
        target = archive_target_nonsong_ms(ctx.worker_now, tz, keep, u, params)
        await schedule_snapshot(ctx, aid, _ARCHIVE, target, rule=_DISPATCHER)


async def archive_idle_until(ctx: Ctx, now: Ms) -> Ms:
    store = ctx.store
    if await store.songs_without_active_schedule(_ARCHIVE):
        return now
    return now if await store.non_songs_without_active_schedule(_ARCHIVE) else NEVER
