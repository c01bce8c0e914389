"""Seed 004's queue consumer around the snapshot processors (issue 28; docs/redelivery.md).

``handleMessage`` step by step (the rules are :mod:`sim.cvsa.delivery`'s):

1. delivery past the cap (``[delivery] consumer_retry``): acknowledge and drop, logged
   ``JobDropped`` with reason ``delivery_cap``;
2. message already processed within the TTL (``dedupe``): acknowledge and skip, logged
   ``DuplicateSkipped``;
3. process (the metered ``snapshotVideo`` / ``bulkSnapshotVideo``); with ``consumer_retry``, a
   delivery that left one of its rows ``failed`` or ``no_proxy`` fails (:class:`JobFailed`: not
   acknowledged, the queue delivers it again after the retry delay);
4. on success, mark the message (``dedupe``), then acknowledge (the processor returns).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Final

from sim.cvsa.delivery import (
    DeliveryParams,
    dedupe_key,
    delivery_failed,
    marker_expires_ms,
    message_id,
    over_delivery_cap,
)
from sim.engine import Job, JobFailed
from sim.events.delivery_kinds import DROP_REASON, DuplicateSkipped, JobDropped
from sim.ports import MessageMarks, ScheduleRow
from sim.scheduler.context import Ctx

Processor = Callable[[Job], Coroutine[Any, Any, Any]]
_DELIVERY_CAP: Final = DROP_REASON.code("delivery_cap")


def consumer(
    ctx: Ctx,
    processor: Processor,
    marks: MessageMarks,
    params: DeliveryParams,
    *,
    retry: bool,
    dedupe: bool,
) -> Processor:
    """``processor`` behind seed 004's consumer (module docstring)."""
    log = ctx.engine.log
    emit_dropped = log.emitter(JobDropped)
    emit_duplicate = log.emitter(DuplicateSkipped)

    async def handle(job: Job) -> None:
        data = job.data
        rows: list[ScheduleRow] = data if isinstance(data, list) else [data]
        queue = ctx.queue.name_idx
        if retry and over_delivery_cap(job.deliveries, params):
            emit_dropped(ctx.now, queue, job.id, job.name_idx, job.deliveries, _DELIVERY_CAP)
            return
        key = dedupe_key(message_id([r.id for r in rows]))
        if dedupe and await marks.is_marked(key, ctx.now):
            first = rows[0].id if rows else -1
            emit_duplicate(ctx.now, queue, job.id, job.name_idx, job.deliveries, first, len(rows))
            return
        await processor(job)
        if retry:
            after = [await ctx.store.get_schedule(r.id) for r in rows]
            if delivery_failed(None if r is None else r.status for r in after):
                raise JobFailed(f"a row of {key} ended failed or no_proxy")
        if dedupe:
            await marks.mark(key, marker_expires_ms(ctx.now, params))

    return handle
