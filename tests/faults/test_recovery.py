"""Recovery from faults, with exact virtual times (issue 6 "Scenarios and tests")."""

from __future__ import annotations

from sim.cvsa.params import DEFAULT_PARAMS
from sim.cvsa.retry import backoff_delay_ms
from sim.cvsa.vocabulary import ScheduleRule, ScheduleType, UpstreamErrorKind
from sim.events.cvsa_kinds import (
    RetryScheduled,
    ScheduleCreated,
    ScheduleDeleted,
    ScheduleFinished,
    ScheduleStarted,
    SnapshotTaken,
    UpstreamFailed,
    WindowsRebuilt,
)
from sim.events.engine_kinds import FaultEnded, FaultStarted, JobInterrupted, JobLost
from sim.ports import UpstreamError
from sim.rng import RandomStreams
from sim.scheduler.context import Ctx
from sim.scheduler.feed import classify_song
from sim.scheduler.schedule_snapshot import schedule_snapshot
from sim.testing.runs import T0, Video, run_model
from sim.units import HOUR_MS, MINUTE_MS, SECOND_MS, WINDOW_MS

AID = 1001


def test_retries_during_an_outage_follow_the_seed_004_backoff_formula() -> None:
    """A 10-minute outage over a new song's first snapshots: every retry waits
    min(1 s * 2^(n-1), 30 s) +/- 50 % (seed 004), drawn from the run's retry stream; after three
    retries the row fails; the first row due after the outage is snapshotted on time."""
    outage = (T0 + 80 * SECOND_MS, T0 + 10 * MINUTE_MS + 80 * SECOND_MS)

    def fault(now: int, aids: tuple[int, ...]) -> UpstreamError | None:
        return UpstreamError(UpstreamErrorKind.HTTP_5XX) if outage[0] <= now < outage[1] else None

    async def setup(ctx: Ctx) -> None:
        await classify_song(ctx, AID, T0 - HOUR_MS)

    run = run_model(
        [Video(AID, T0 - HOUR_MS, song=False, views=lambda t: 50_000 + (t - T0) // 1000)],
        until="40m",
        setup=setup,
        fault=fault,
        seed=3,
    )
    draws = RandomStreams(3).stream("retry")
    failures = run.events(UpstreamFailed)
    retries = run.events(RetryScheduled)
    expected: list[tuple[int, int, int]] = []  # (time, attempt, delay) of each retry
    i = 0
    while i < len(failures):
        attempt = 1
        while True:
            u = draws.random()  # one draw per failure, the last one decides "give up"
            if attempt > 3:
                i += 1
                break
            delay = backoff_delay_ms(attempt, 1000, 30_000, 0.5, u=u)
            expected.append((failures[i].t_ms, attempt, delay))
            assert failures[i + 1].t_ms == failures[i].t_ms + delay  # the retry, on time
            i += 1
            attempt += 1
    assert [(r.t_ms, r.attempt, r.delay_ms) for r in retries] == expected
    assert len(retries) >= 12  # the four initial new rows, three retries each, and others
    # The first retry of the first failed row: 1 s +/- 50 % after the failure.
    assert 500 <= retries[0].delay_ms <= 1500
    # Every new row due during the outage ended failed (seed 004 gives up; design reschedules
    # nothing), and nothing failed once the outage was over.
    failed = [f for f in run.events(ScheduleFinished) if f.status == 3]
    assert len([f for f in failed if f.type == 0]) == 4
    assert all(outage[0] <= f.t_ms < outage[1] + 10 * SECOND_MS for f in failed)
    after = [s for s in run.events(SnapshotTaken) if s.t_ms >= outage[1]]
    assert after, "snapshots resume after the outage"


def test_after_counter_loss_the_rebuilt_counts_equal_the_pending_rows() -> None:
    """The hash is emptied at +30 min and rebuilt a minute later from the pending rows (§6.3):
    the rebuilt counts are exactly the pending rows per window of [hour start, +14 d)."""
    videos = [
        Video(AID + i, T0 - 30 * HOUR_MS, song=True, views=lambda t, i=i: 1000 + i)
        for i in range(40)
    ]

    async def setup(ctx: Ctx) -> None:
        for i, v in enumerate(videos):  # rows spread over the coming hours
            await schedule_snapshot(
                ctx,
                v.aid,
                ScheduleType.NORMAL,
                T0 + (i % 8) * HOUR_MS,
                rule=ScheduleRule.DISPATCHER,
            )

    run = run_model(
        videos,
        until="31m",
        setup=setup,
        faults='[[faults]]\nkind = "counter_loss"\nat = "30m"\nrebuild_after = "1m"',
    )
    store, counter = run.ctx.store, run.ctx.counter
    import trio

    async def read() -> tuple[dict[int, int], dict[int, int]]:
        start = T0 + 31 * MINUTE_MS
        hour = start - start % HOUR_MS
        return (
            await counter.get_all(),
            await store.pending_counts_by_window(hour, hour + 14 * 24 * HOUR_MS, 5 * MINUTE_MS),
        )

    counts, pending = trio.run(read)
    assert counts == pending
    assert sum(pending.values()) > 20
    rebuilt = run.events(WindowsRebuilt)
    assert [(r.t_ms - T0, r.total) for r in rebuilt][-1] == (31 * MINUTE_MS, sum(pending.values()))
    fault = run.events(FaultStarted)
    assert [(f.t_ms - T0) for f in fault] == [30 * MINUTE_MS]
    assert all(w % WINDOW_MS == 0 for w in counts)


def test_after_a_crash_processing_rows_are_gone_within_four_minutes() -> None:
    """A crash at T loses the running job; its row stays processing (nothing finishes it) until
    cleanup, which runs every 2 min and deletes rows more than 2 min past due: by T + 4 min it
    is gone. The restarted process marks the lost job interrupted (seed 001)."""
    crash_at = T0 + 10 * MINUTE_MS

    async def setup(ctx: Ctx) -> None:
        # a milestone row due just before the crash; its fetch takes 20 s, so it is in flight
        await schedule_snapshot(
            ctx, AID, ScheduleType.MILESTONE, crash_at - 5 * SECOND_MS, rule=ScheduleRule.DISPATCHER
        )

    run = run_model(
        [Video(AID, T0 - 30 * HOUR_MS, views=lambda t: 99_990)],
        until="20m",
        setup=setup,
        latency_ms=20 * SECOND_MS,
        faults='[[faults]]\nkind = "scheduler_restart"\nat = "10m"\ndowntime = "30s"',
    )
    started = [e for e in run.events(ScheduleStarted) if e.type == 1]
    assert [e.t_ms for e in started] == [crash_at - 6 * SECOND_MS]  # the tick takes it 1 s early
    lost = run.events(JobLost)
    assert [(e.t_ms, e.job) for e in lost] == [(crash_at, started[0].job)]
    assert [(e.t_ms, e.job) for e in run.events(JobInterrupted)] == [
        (crash_at + 30 * SECOND_MS, started[0].job)
    ]
    assert [e.t_ms for e in run.events(FaultEnded)] == [crash_at + 30 * SECOND_MS]
    deleted = [e for e in run.events(ScheduleDeleted) if e.schedule == started[0].schedule]
    assert len(deleted) == 1
    assert deleted[0].status == 1  # still processing when deleted
    assert deleted[0].t_ms <= crash_at + 4 * MINUTE_MS
    assert (deleted[0].t_ms - T0) % DEFAULT_PARAMS.cleanup_every_ms == 0  # by a cleanup iteration
    assert not [e for e in run.events(SnapshotTaken) if e.schedule == started[0].schedule]
    assert run.events(ScheduleCreated)
