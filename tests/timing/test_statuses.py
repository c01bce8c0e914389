"""Row statuses, design profile: pending -> processing -> completed | failed | no_proxy |
bili_error, or deleted by cleanup (``test_cleanup``).

Seed 000 "调度状态流转". Reference §3 (the lifecycle), §9 step 2 and 4 (a bilibili error code is
written to the video and blocks its later single-path snapshots; their rows stay processing
until cleanup), §6.4 (leaving pending releases the window). Failed upstream calls follow the
seed-004 retry policy in the design profile (switch ``retry_policy = "backoff"``: 3 retries
after 1, 2 and 4 s, +/-50 % jitter from the ``retry`` stream; network errors and rate limits are
retried, bilibili codes are not), then the row takes the status of the last failure.
"""

from __future__ import annotations

import math

import pytest

from sim.cvsa.vocabulary import ScheduleType, UpstreamErrorKind
from sim.events.cvsa_kinds import (
    RetryScheduled,
    ScheduleCreated,
    ScheduleDeleted,
    ScheduleDispatched,
    ScheduleFinished,
    ScheduleSkipped,
    SnapshotTaken,
    UpstreamFailed,
    WindowReleased,
)
from sim.ports import UpstreamError
from sim.scheduler.context import Ctx
from sim.testing.runs import T0, Fault, ModelRun, Video, run_model
from sim.units import DAY_MS, Ms
from tests.timing._support import CAUSE, SKIP, STATUS, Setup, draws, of_aid, times

OLD = T0 - 100 * DAY_MS
AID = 1


def one_row(type_: str, due_ms: Ms, *more: Ms) -> Setup:
    async def setup(ctx: Ctx) -> None:
        await ctx.store.insert_schedule(AID, ScheduleType.ARCHIVE, T0 + 10 * DAY_MS, T0)
        for d in (due_ms, *more):
            await ctx.store.insert_schedule(AID, ScheduleType(type_), d, T0)

    return setup


def run_row(
    type_: str,
    due_ms: Ms,
    *more: Ms,
    until: str = "1m",
    fault: Fault | None = None,
    error: int = 0,
) -> ModelRun:
    video = Video(AID, OLD, song=False, views=lambda t: 123, error=lambda t: error)
    return run_model(
        [video],
        until=until,
        setup=one_row(type_, due_ms, *more),
        fault=fault,
    )


def test_completed() -> None:
    """A new row due at 5 s: pending (created, counted in its window), processing at the 4-s tick
    (its window released), snapshot taken and completed by the worker at the same instant."""
    run = run_row("new", T0 + 5_000)
    assert [(e.t_ms - T0, e.schedule) for e in run.events(ScheduleDispatched)] == [(4_000, 2)]
    released = [e for e in run.events(WindowReleased) if e.schedule == 2]
    assert [(e.t_ms - T0, e.cause, e.value) for e in released] == [
        (4_000, CAUSE["status_change"], 0)
    ]
    assert [(e.t_ms - T0, e.views) for e in run.events(SnapshotTaken)] == [(4_000, 123)]
    assert [(e.t_ms - T0, e.status) for e in run.events(ScheduleFinished)] == [
        (4_000, STATUS["completed"])
    ]


def test_bili_error_blocks_the_video_until_cleanup() -> None:
    """The API answers code -404: the row ends ``bili_error`` (seed 000), no snapshot. The code is
    kept on the video (switch ``bili_error_blocks_aid``, note silent: deployed), so the next new
    row (due 20 s) is set processing by the tick but its job stops before fetching; it stays
    processing until the cleanup at 4 min (cut-off 2 min) deletes it."""
    run = run_row("new", T0 + 5_000, T0 + 20_000, until="5m", error=-404)
    assert [(e.t_ms - T0, e.schedule, e.status) for e in run.events(ScheduleFinished)] == [
        (4_000, 2, STATUS["bili_error"])
    ]
    assert run.events(SnapshotTaken) == []
    assert [(e.t_ms - T0, e.schedule) for e in run.events(ScheduleDispatched)] == [
        (4_000, 2),
        (19_000, 3),
    ]
    skipped = run.events(ScheduleSkipped)
    assert [(e.t_ms - T0, e.schedule, e.reason) for e in skipped] == [
        (19_000, 3, SKIP["bili_status"])
    ]
    assert [(e.t_ms - T0, e.schedule, e.status) for e in run.events(ScheduleDeleted)] == [
        (240_000, 3, STATUS["processing"])
    ]
    assert len(run.upstream.calls) == 1


def backoff_delays(n: int) -> list[Ms]:
    """Seed 004 calculateDelay for attempts 1 ... n: min(1 s x 2^(k-1), 30 s) x (1 + 0.5(2u - 1)),
    u from the ``retry`` stream, whole milliseconds."""
    out = []
    for k, u in enumerate(draws("retry", n), start=1):
        d = min(1_000 * 2 ** (k - 1), 30_000)
        out.append(math.floor(d + d * 0.5 * (u * 2 - 1)))
    return out


@pytest.mark.parametrize(("kind", "status"), [("fetch_error", "failed"), ("no_proxy", "no_proxy")])
def test_retried_failures_end_failed_or_no_proxy(kind: str, status: str) -> None:
    """A new row due at 5 s whose every fetch fails: the job retries after d1, d2, d3 (seed 004),
    the fourth failure ends the row ``failed`` (a network error) or ``no_proxy`` (every proxy
    rate-limited, reference §14.3); nothing is rescheduled (the dispatchers own the video)."""
    run = run_row("new", T0 + 5_000, fault=lambda t, aids: UpstreamError(UpstreamErrorKind(kind)))
    d = backoff_delays(3)
    attempts = [4_000, 4_000 + d[0], 4_000 + d[0] + d[1], 4_000 + sum(d)]
    assert times(run.events(UpstreamFailed)) == attempts
    retries = run.events(RetryScheduled)
    assert [(e.t_ms - T0, e.attempt, e.delay_ms) for e in retries] == [
        (attempts[0], 1, d[0]),
        (attempts[1], 2, d[1]),
        (attempts[2], 3, d[2]),
    ]
    assert [(e.t_ms - T0, e.status) for e in run.events(ScheduleFinished)] == [
        (attempts[3], STATUS[status])
    ]
    assert of_aid(run, ScheduleCreated, AID) == []  # the rows were inserted directly


def test_a_bulk_batch_with_a_bilibili_code_fails_without_retry() -> None:
    """A normal row taken by the bulk tick at 15 s whose call answers a bilibili code (a business
    error: not retried, seed 004): the row ends ``failed`` at once and nothing is rescheduled
    (switch ``bulk_failure_archive_to_normal`` / ``retry_policy``)."""
    run = run_row(
        "normal",
        T0 + 20_000,
        fault=lambda t, aids: UpstreamError(UpstreamErrorKind.BILI_CODE, -352),
    )
    assert [(e.t_ms - T0, e.status) for e in run.events(ScheduleFinished)] == [
        (15_000, STATUS["failed"])
    ]
    assert run.events(RetryScheduled) == []
    assert of_aid(run, ScheduleCreated, AID) == []


@pytest.mark.parametrize("type_", ["new", "normal"])
def test_a_run_ending_during_a_backoff_closes_the_waiting_job(type_: str) -> None:
    """The run ends while a job waits out a retry's backoff (single path from 4 s, bulk path
    from the first 15-s tick, at 0 s): the engine closes the job where it waits, and the row
    stays processing, unfinished. (Compiled by mypyc 2.4, a coroutine closed while it waited
    inside an ``except`` block corrupted the interpreter: the workers keep awaits out of them.)"""
    first = 4_000 if type_ == "new" else 0
    until = "6s" if type_ == "new" else "2s"  # before the fourth attempt (>= 3.5 s after the first)
    run = run_row(
        type_,
        T0 + 5_000,
        until=until,
        fault=lambda t, aids: UpstreamError(UpstreamErrorKind.NO_PROXY),
    )
    retries = run.events(RetryScheduled)
    assert [e.attempt for e in retries][:1] == [1]
    assert retries[0].t_ms == T0 + first
    assert retries[-1].t_ms + retries[-1].delay_ms > run.engine.now  # still waiting at the end
    assert run.events(ScheduleFinished) == []
