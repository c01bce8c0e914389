"""Seed 004's consumer around the snapshot jobs (issue 28; docs/redelivery.md): exact instants.

One video, a ``new`` row due at T0 + 5 s: the snapshot tick of T0 + 4 s dispatches it, and its
job starts at once (tests/timing/test_profiles_cvsa.py). Deployed profile, whose FETCH_ERROR
fails the row for good without a reschedule (reference §9): every retry here is the consumer's.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from sim.cvsa.vocabulary import ScheduleType, UpstreamErrorKind
from sim.events.cvsa_kinds import ScheduleFinished, UpstreamFailed
from sim.events.delivery_kinds import (
    DROP_REASON,
    DuplicateSkipped,
    JobDropped,
    JobRedelivered,
    JobRetried,
)
from sim.ports import UpstreamError
from sim.scheduler.context import Ctx
from sim.testing.runs import T0, Fault, ModelRun, Video, run_model
from sim.units import DAY_MS, SECOND_MS, Ms
from tests.timing._support import STATUS, rel, times

AID = 1
S = SECOND_MS
RETRY = ["delivery.consumer_retry=true"]
DEDUPE = ["delivery.dedupe=true"]


def _setup(*again_at: Ms) -> Callable[[Ctx], Coroutine[Any, Any, None]]:
    """The row due at 5 s, dispatchers kept away; at each of ``again_at`` (after T0) the same
    row is enqueued once more, as a second dispatch of one schedule would (reference §1.4)."""

    async def setup(ctx: Ctx) -> None:
        for type_ in (ScheduleType.NORMAL, ScheduleType.ARCHIVE):
            await ctx.store.insert_schedule(AID, type_, T0 + 30 * DAY_MS, T0)
        row_id = await ctx.store.insert_schedule(AID, ScheduleType.NEW, T0 + 5 * S, T0)
        for t in again_at:
            ctx.engine.spawn(_enqueue_again(ctx, row_id, T0 + t), name="again")

    return setup


async def _enqueue_again(ctx: Ctx, row_id: int, at_ms: Ms) -> None:
    await ctx.engine.sleep_until(at_ms)
    row = await ctx.store.get_schedule(row_id)
    assert row is not None
    assert ctx.snapshot_video is not None
    ctx.queue.add("snapshotVideo", ctx.snapshot_video, row, priority=1)


def _failing(first_n: int) -> Fault:
    calls: list[Ms] = []

    def fault(t: Ms, aids: tuple[int, ...]) -> UpstreamError | None:
        calls.append(t)
        return UpstreamError(UpstreamErrorKind.FETCH_ERROR) if len(calls) <= first_n else None

    return fault


def _run(fault: Fault | None, overrides: list[str], until: str = "30s", *again: Ms) -> ModelRun:
    video = Video(AID, T0 - 100 * DAY_MS, song=False, views=lambda t: 10)
    return run_model(
        [video],
        until=until,
        setup=_setup(*again),
        profile="cvsa-2026",
        fault=fault,
        overrides=overrides,
    )


def test_off_a_failed_row_stays_failed() -> None:
    run = _run(_failing(99), [])
    assert times(run.events(UpstreamFailed)) == [4 * S]
    assert run.events(JobRetried) == []


def test_retry_at_t_t2_t4_then_dropped_past_the_cap() -> None:
    """Deliveries at 4 s, 6 s, 8 s all fail (the row ends failed each time); the 4th delivery, at
    10 s, is past ``deliveryCount > 3``: acknowledged and dropped, nothing fetched."""
    run = _run(_failing(99), RETRY)
    assert times(run.events(UpstreamFailed)) == [4 * S, 6 * S, 8 * S]
    assert [(rel(e.t_ms), e.delivery, rel(e.due_ms)) for e in run.events(JobRetried)] == [
        (4 * S, 1, 6 * S),
        (6 * S, 2, 8 * S),
        (8 * S, 3, 10 * S),
    ]
    assert [(rel(e.t_ms), e.delivery) for e in run.events(JobRedelivered)] == [
        (6 * S, 2),
        (8 * S, 3),
        (10 * S, 4),
    ]
    (drop,) = run.events(JobDropped)
    assert (rel(drop.t_ms), drop.delivery, drop.reason) == (
        10 * S,
        4,
        DROP_REASON.code("delivery_cap"),
    )


def test_retry_succeeds_on_the_second_delivery() -> None:
    """The first fetch fails (row failed at 4 s); the redelivery at 6 s completes it."""
    run = _run(_failing(1), RETRY)
    finished = [(rel(e.t_ms), e.status) for e in run.events(ScheduleFinished)]
    assert finished == [(4 * S, STATUS["failed"]), (6 * S, STATUS["completed"])]
    assert times(run.events(JobRetried)) == [4 * S]
    assert run.events(JobDropped) == []


def test_duplicate_within_the_ttl_is_skipped() -> None:
    """Processed at 4 s (marker until 4 s + 24 h); the row enqueued again at 10 s is skipped."""
    run = _run(None, DEDUPE, "30s", 10 * S)
    (dup,) = run.events(DuplicateSkipped)
    assert (rel(dup.t_ms), dup.delivery, dup.rows) == (10 * S, 1, 1)
    assert times(run.events(ScheduleFinished)) == [4 * S]


def test_duplicate_after_the_ttl_is_processed_again() -> None:
    """Enqueued again at 4 s + 24 h - 1 ms: skipped; at 4 s + 24 h: the marker has expired, the
    row is fetched and finished again."""
    last = 4 * S + DAY_MS
    run = _run(None, DEDUPE, "24h1m", last - 1, last)
    assert times(run.events(DuplicateSkipped)) == [last - 1]
    assert times(run.events(ScheduleFinished)) == [4 * S, last]
