"""The snapshot workers: ``snapshotVideo`` (single path) and ``bulkSnapshotVideo`` (bulk path).

Reference §9 and §10. What happens on an upstream failure depends on ``switches.retry_policy``:

* ``backoff`` (design; seed 004): the call is retried inside the job with exponential backoff and
  jitter (base 1 s, cap 30 s, +/-50 %, 3 retries) when the error is retryable (network errors,
  timeouts, 5xx, 429 -- and "no proxy", which is a rate limit); business errors (a bilibili code)
  are not. When retries run out the row ends ``failed`` (``no_proxy`` if rate-limited); nothing is
  rescheduled: the dispatchers pick the video up again. ``[scheduler.retry] by_class`` (issue
  28, docs/upstream-reaction.md): rate-limited failures wait longer and honour a Retry-After.
* ``cvsa`` (deployed, §9 error handling, §10.2-10.4): no retry inside the job; ``no_proxy`` and
  ALICLOUD_PROXY_ERR reschedule the row a little later, other errors fail it for good.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

from sim.cvsa.intervals import new_continuation_ms
from sim.cvsa.lifecycle import finish_act
from sim.cvsa.milestones import bulk_eta_speed, eta_row, milestone_delay_ms, milestone_reached
from sim.cvsa.retry import (
    CvsaOutcome,
    Outcome,
    Path,
    backoff_retry_ms,
    cvsa_retry,
    deployed_outcome,
    error_class,
)
from sim.cvsa.vocabulary import ScheduleRule, ScheduleStatus, ScheduleType
from sim.engine import Job
from sim.events.cvsa_kinds import SKIP_REASON, UPSTREAM_ERROR
from sim.ports import ScheduleRow, Snapshot, UpstreamError, VideoStats
from sim.scheduler.context import STATUS_CODE, TYPE_CODE, Ctx
from sim.scheduler.estimates import adjusted_eta, regular_interval
from sim.scheduler.schedule_snapshot import schedule_snapshot, set_status
from sim.scheduler.write_buffer import PendingSnapshot
from sim.units import HOUR_MS

T = TypeVar("T")
_ROW_GONE: Final = SKIP_REASON.code("row_gone")
_BILI_STATUS: Final = SKIP_REASON.code("bili_status")
_UPSTREAM_ERROR_CODE: Final = UPSTREAM_ERROR.codes()
# snapshotVideo's network task: milestone and new rows use snapshotMilestoneVideo (three
# proxies), anything else (archive rows on the single path) snapshotVideo (two), §9, §14.2.
_SINGLE_TASK: Final = {
    ScheduleType.MILESTONE: "snapshotMilestoneVideo",
    ScheduleType.NEW: "snapshotMilestoneVideo",
    ScheduleType.ARCHIVE: "snapshotVideo",
    ScheduleType.NORMAL: "snapshotVideo",
}
_COMPLETED: Final = ScheduleStatus.COMPLETED
_FAILED: Final = ScheduleStatus.FAILED


async def call_upstream(
    ctx: Ctx, job: Job, aid: int, n_aids: int, call: Callable[[], Awaitable[T]]
) -> T:
    """One upstream call under the run's retry policy; raises the last :class:`UpstreamError`.

    No ``await`` inside an ``except`` block, here or in the callers: mypyc (2.4) miscompiles a
    coroutine closed while it waits inside one (the engine closes waiting jobs when a run ends),
    which corrupted the interpreter (tests/timing/test_statuses.py, the backoff at the end)."""
    attempt = 0
    while True:
        try:
            return await call()
        except UpstreamError as caught:
            err = caught
        kind = _UPSTREAM_ERROR_CODE[err.kind]
        ctx.emit.upstream_failed(ctx.now, job.id, n_aids, kind, err.code)
        if ctx.switches.retry_policy != "backoff":
            raise err
        attempt += 1
        delay = backoff_retry_ms(
            ctx.backoff, attempt, error_class(err.kind), ctx.retry_rng.random(), err.retry_after_ms
        )
        if delay is None:
            raise err
        ctx.emit.retry(ctx.now, job.id, aid, attempt, delay, kind)
        if err.retry_after_ms and ctx.backoff.by_class:  # issue 28: the answer said when
            ctx.emit.retry_after(ctx.now, job.id, attempt, err.retry_after_ms, delay)
        await ctx.engine.sleep(delay)


async def _finish(ctx: Ctx, rows: list[ScheduleRow], status: ScheduleStatus) -> None:
    """Set ``status`` on the rows' ids and log each row that still exists: a row cleanup deleted
    while its job was fetching gets no status (the UPDATE matches nothing, reference §9 step 1,
    §12), so it is not logged as finished."""
    alive = {r.id for r in await set_status(ctx, [r.id for r in rows], finish_act(status))}
    code = STATUS_CODE[status]
    for r in rows:
        if r.id in alive:
            ctx.emit.finished(ctx.now, r.id, r.aid, TYPE_CODE[r.type], r.started_at_ms, code)


async def snapshot_video(ctx: Ctx, job: Job) -> None:
    """``snapshotVideo`` (reference §9)."""
    row: ScheduleRow = job.data
    store, now = ctx.store, ctx.now
    if await store.get_schedule(row.id) is None:  # step 1: cleanup deleted it
        ctx.emit.skipped(now, row.id, row.aid, TYPE_CODE[row.type], row.started_at_ms, _ROW_GONE)
        return
    if ctx.switches.bili_error_blocks_aid and await store.video_status(row.aid) != 0:
        # step 2: the row stays processing until cleanup deletes it
        ctx.emit.skipped(now, row.id, row.aid, TYPE_CODE[row.type], row.started_at_ms, _BILI_STATUS)
        return
    ctx.emit.started(now, row.id, row.aid, TYPE_CODE[row.type], row.started_at_ms, job.id)
    prev = await store.latest_snapshot(row.aid)  # read before the fetch, as deployed
    failure: UpstreamError | None = None
    try:
        stats = await call_upstream(
            ctx,
            job,
            row.aid,
            1,
            lambda: ctx.upstream.get_video(row.aid, ctx.now, task=_SINGLE_TASK[row.type]),
        )
    except UpstreamError as caught:
        failure = caught  # handled below: no await inside `except` (see call_upstream)
    if failure is not None:
        await _single_failed(ctx, row, failure)
        return
    await _record(ctx, row, stats)
    await _finish(ctx, [row], _COMPLETED)
    if row.type is ScheduleType.NEW:
        await _continue_new(ctx, row, stats)
    elif row.type is ScheduleType.MILESTONE:
        await _continue_milestone(ctx, row, stats, prev)


async def _record(ctx: Ctx, row: ScheduleRow | None, stats: VideoStats) -> None:
    """Write the snapshot (unique on (aid, t): a duplicate is counted, not stored); under
    ``[write_path]``, hand it to the writer's buffer (seed 003 §5.1), which logs it when written."""
    schedule, type_code, due = (
        (-1, -1, -1) if row is None else (row.id, TYPE_CODE[row.type], row.started_at_ms)
    )
    if ctx.writes is not None:
        ctx.writes.add(
            PendingSnapshot(stats.aid, stats.server_time_ms, stats.views, schedule, type_code, due)
        )
        return
    stored = await ctx.store.insert_snapshot(stats.aid, stats.server_time_ms, stats.views)
    ctx.emit.taken(
        ctx.now,
        stats.aid,
        schedule,
        type_code,
        due,
        stats.views,
        int(not stored),
        stats.server_time_ms,
    )


async def _single_failed(ctx: Ctx, row: ScheduleRow, err: UpstreamError) -> None:
    """The row's final status from the deployed outcome table (both policies); under the
    deployed policy, its reschedule too (§9 error handling)."""
    outcome = deployed_outcome(err.kind)
    if outcome is Outcome.BILI_CODE:  # §9 step 4: remember the code
        await ctx.store.set_video_status(row.aid, err.code)
    entry = ctx.outcomes[Path.SINGLE, outcome]
    await _finish(ctx, [row], entry.status)
    if ctx.switches.retry_policy == "cvsa":
        await _retry(ctx, entry, row, 0.0)


async def _retry(ctx: Ctx, entry: CvsaOutcome, row: ScheduleRow, u: float) -> None:
    """The deployed reschedule of a failed row, if its outcome has one (§9, §10.2, §10.4)."""
    retry = cvsa_retry(entry, row.type, ctx.switches, u)
    if retry is not None:
        await schedule_snapshot(
            ctx,
            row.aid,
            retry.snapshot_type,
            ctx.worker_now + retry.delay_ms,
            rule=ScheduleRule.RETRY,
            force=retry.force,
            adjust=retry.adjust,
        )


async def _continue_new(ctx: Ctx, row: ScheduleRow, stats: VideoStats) -> None:
    """§9 step 5: keep tracking a new song while it is young and fast enough."""
    published = await ctx.store.song_published_ms(row.aid)
    if published is None:
        return
    sw = ctx.switches
    delay = new_continuation_ms(stats.server_time_ms - published, stats.views, sw, ctx.params)
    if delay is not None:
        await schedule_snapshot(
            ctx,
            row.aid,
            ScheduleType.NEW,
            ctx.worker_now + delay,
            rule=ScheduleRule.CONTINUATION,
            force=sw.new_successors_forced,
        )


async def _continue_milestone(
    ctx: Ctx, row: ScheduleRow, stats: VideoStats, prev: Snapshot | None
) -> None:
    """§9 step 7: stop once the milestone is reached, else re-ETA and schedule again."""
    if prev is None:
        # The deployed code dereferences the missing previous snapshot and fails the row.
        await _finish(ctx, [row], _FAILED)
        return
    if milestone_reached(
        prev.views, stats.views, ctx.switches.milestone_reached_strict, ctx.params.milestone_ladder
    ):
        return
    eta = await adjusted_eta(ctx, row.aid)
    delay = milestone_delay_ms(eta, ctx.switches.milestone_reeta_clamped, ctx.params)
    if delay is not None:
        await schedule_snapshot(
            ctx, row.aid, ScheduleType.MILESTONE, ctx.worker_now + delay, rule=ScheduleRule.REETA
        )


async def bulk_snapshot_video(ctx: Ctx, job: Job) -> None:
    """``bulkSnapshotVideo`` (reference §10)."""
    batch: list[ScheduleRow] = job.data
    store = ctx.store
    existing = []
    for r in batch:
        if await store.get_schedule(r.id) is None:
            ctx.emit.skipped(ctx.now, r.id, r.aid, TYPE_CODE[r.type], r.started_at_ms, _ROW_GONE)
        else:
            existing.append(r)
    if not existing:
        return
    for r in existing:
        ctx.emit.started(ctx.now, r.id, r.aid, TYPE_CODE[r.type], r.started_at_ms, job.id)
    aids = [r.aid for r in existing]
    failure: UpstreamError | None = None
    try:
        items = await call_upstream(
            ctx, job, -1, len(aids), lambda: ctx.upstream.get_videos(aids, ctx.now)
        )
    except UpstreamError as caught:
        failure = caught  # handled below: no await inside `except` (see call_upstream)
    if failure is not None:
        await _bulk_failed(ctx, batch, existing, failure)
        return
    waiting: dict[int, list[ScheduleRow]] = {}
    ladder = ctx.params.milestone_ladder
    for r in existing:
        waiting.setdefault(r.aid, []).append(r)
    for item in items:
        rows = waiting.get(item.aid)
        prev = await store.latest_snapshot(item.aid)
        if prev is not None:  # §10.3 step 1: the bulk worker keeps the eta table fresh
            delta = ctx.params.bulk_eta_delta
            speed = bulk_eta_speed(prev, item.views, ctx.worker_now, delta)
            await store.upsert_eta(eta_row(item.aid, item.views, speed, delta, ctx.now, ladder))
        await _record(ctx, rows.pop(0) if rows else None, item)
    await _finish(ctx, batch, _COMPLETED)  # every id of the batch (§10.3)
    if ctx.switches.bulk_reschedules_normal:
        for r in batch:  # every row of the batch, even deleted ones; archive rows excepted
            if r.type is not ScheduleType.ARCHIVE:
                hours = await regular_interval(ctx, r.aid)
                target = ctx.worker_now + hours * HOUR_MS
                await schedule_snapshot(
                    ctx, r.aid, ScheduleType.NORMAL, target, rule=ScheduleRule.BULK_RESCHEDULE
                )


async def _bulk_failed(
    ctx: Ctx, batch: list[ScheduleRow], existing: list[ScheduleRow], err: UpstreamError
) -> None:
    """Every id of the batch gets the outcome's status; under the deployed policy every fetched
    aid is re-queued (§10.2, §10.4), with one random draw per batch."""
    entry = ctx.outcomes[Path.BULK, deployed_outcome(err.kind)]
    await _finish(ctx, batch, entry.status)
    if ctx.switches.retry_policy != "cvsa":
        return
    u = ctx.retry_rng.random()
    for r in existing:
        await _retry(ctx, entry, r, u)
