"""The two estimates the scheduler computes from stored snapshots: the milestone ETA and the
regular interval. The queries are here; the arithmetic is in :mod:`sim.cvsa`."""

from __future__ import annotations

from collections.abc import Sequence

from sim.cvsa.intervals import regular_interval_hours
from sim.cvsa.milestones import adjusted_eta_hours, eta_row
from sim.ports import Snapshot
from sim.scheduler.context import Ctx


async def adjusted_eta(ctx: Ctx, aid: int) -> float:
    """``getAdjustedShortTermETA(aid)`` in hours, with its ``eta`` upsert (reference §11.4)."""
    store = ctx.store
    latest = await store.latest_snapshot(aid)
    if latest is None:
        return 0.0  # the deployed function returns 0 and writes nothing
    lookbacks = await store.lookback_snapshots(aid, ctx.worker_now, ctx.params.eta_lookbacks_ms)
    return await eta_from(ctx, aid, latest, lookbacks)


async def eta_from(
    ctx: Ctx, aid: int, latest: Snapshot, lookbacks: Sequence[Snapshot | None]
) -> float:
    """The rest of :func:`adjusted_eta`, once its inputs are read (also by the batched
    :meth:`~sim.ports.SnapshotStore.eta_inputs`)."""
    backs = tuple(lookbacks)  # the same object when it is one (the memory store's answer)
    kept = remembered_eta(ctx, aid, latest, backs)
    if kept is not None:
        return kept
    params = ctx.params
    est = adjusted_eta_hours(latest, backs, ctx.switches.piecewise_factor, params)
    row = eta_row(
        aid, latest.views, est.max_speed, params.eta_delta, ctx.worker_now, params.milestone_ladder
    )
    await ctx.store.upsert_eta(row)
    ctx.eta_memo[aid] = (latest, backs, est.eta_hours)
    return est.eta_hours


def remembered_eta(
    ctx: Ctx, aid: int, latest: Snapshot, lookbacks: tuple[Snapshot | None, ...]
) -> float | None:
    """The milestone dispatcher asks for the ETA of every candidate every five minutes, and
    most answers come from the same snapshots as last time. The estimate is a pure function of
    the snapshots found, so when they are the same it is reused, and the upsert, which would
    write the same values (only ``updated_at`` moves, and nothing reads it, §11.1), is
    skipped. None: not the same inputs."""
    cached = ctx.eta_memo.get(aid)
    if cached is None:
        return None
    # The memory store hands back the same tuple while its answer holds: identity first; the
    # latest snapshot is a new tuple each time, compared field by field (two native compares).
    if cached[1] is not lookbacks and cached[1] != lookbacks:
        return None
    was = cached[0]
    if was.created_at_ms == latest.created_at_ms and was.views == latest.views:
        return cached[2]
    return None


async def regular_interval(ctx: Ctx, aid: int) -> int:
    """``getRegularSnapshotInterval(aid)`` in hours (reference §11.6)."""
    store = ctx.store
    point = ctx.worker_now - ctx.params.regular_lookback_ms
    older = await store.snapshot_before(aid, point) or await store.closest_snapshot(aid, point)
    return regular_interval_hours(older, await store.latest_snapshot(aid), ctx.params)
