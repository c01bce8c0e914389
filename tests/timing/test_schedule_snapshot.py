"""``scheduleSnapshot`` and ``adjustSnapshotTime``, design profile, driven at a virtual instant.

Seed 000 "scheduleSnapshot 函数详解": 1. the milestone special case (``test_milestone``); 2. no
second active row of a type unless forced; 3. ``adjustSnapshotTime`` for normal and archive only:
5-minute windows capped at 1000, forward up to 4032 windows, then back up to 6 (i = 0 ... 5), a
random offset of 0-5 min in the chosen window, never earlier than now, the target unchanged as
the last resort; milestone and new add +1 to their window without a cap check. Reference §5,
§6.2, §19.1-19.4, §19.12 (the reservation stays on the probed window; whole-ms offsets).

Each test calls :func:`sim.scheduler.schedule_snapshot.schedule_snapshot` from a process at ``NOW``
(after the start-up window rebuild, which would otherwise replace counts set by hand) and reads
the ``ScheduleCreated`` / ``ScheduleNotCreated`` records. Rows are far enough ahead, or the run
short enough, that no tick takes them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from sim.cvsa.vocabulary import ScheduleRule, ScheduleType
from sim.events.cvsa_kinds import NO_WINDOW, ScheduleCreated, ScheduleNotCreated
from sim.scheduler.context import Ctx
from sim.scheduler.schedule_snapshot import schedule_snapshot
from sim.testing.runs import T0, ModelRun, run_model
from sim.units import DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS, WINDOW_MS, Ms
from tests.timing._support import NOT_CREATED, PLACEMENT, at, jitter_offsets

NOW = T0 + HOUR_MS + 7  # an instant between ticks
W = T0 + DAY_MS  # a window start a day ahead


def run_at_now(
    action: Callable[[Ctx], Awaitable[None]], design: dict[str, object] | None = None
) -> ModelRun:
    """Run ``action`` at ``NOW`` in an otherwise empty world, until just after it."""

    async def setup(ctx: Ctx) -> None:
        at(ctx, NOW, action)

    return run_model([], until="60m1s", setup=setup, design=design)


def created_rows(run: ModelRun) -> list[tuple[int, Ms, Ms, Ms, int, int]]:
    """(aid, requested, due, window, window count, placement) of each creation, times from T0."""
    return [
        (
            c.aid,
            c.requested_ms - T0,
            c.due_ms - T0,
            c.window_ms - T0 if c.window_ms != NO_WINDOW else NO_WINDOW,
            c.window_count,
            c.placement,
        )
        for c in run.events(ScheduleCreated)
    ]


@pytest.mark.parametrize("type_", list(ScheduleType))
def test_no_second_active_row_of_a_type_unless_forced(type_: ScheduleType) -> None:
    """Seed 000 防重复检查 "if (hasActiveSchedule && !force) return": the second call for the same
    video and type inserts nothing; a forced third call inserts; another type is independent.
    (For milestone the later target is refused by the special case first: "not earlier".)"""

    async def action(ctx: Ctx) -> None:
        await schedule_snapshot(ctx, 1, type_, W, rule=ScheduleRule.DISPATCHER)
        await schedule_snapshot(ctx, 1, type_, W + MINUTE_MS, rule=ScheduleRule.DISPATCHER)
        await schedule_snapshot(
            ctx, 1, type_, W + 2 * MINUTE_MS, force=True, rule=ScheduleRule.DISPATCHER
        )
        other = ScheduleType.NEW if type_ is not ScheduleType.NEW else ScheduleType.NORMAL
        await schedule_snapshot(ctx, 1, other, W, rule=ScheduleRule.DISPATCHER)

    run = run_at_now(action)
    created = run.events(ScheduleCreated)
    assert [(c.requested_ms - T0, c.forced) for c in created] == [
        (W - T0, 0),
        (W - T0 + 2 * MINUTE_MS, 1),
        (W - T0, 0),
    ]
    refused = run.events(ScheduleNotCreated)
    reason = "milestone_not_earlier" if type_ is ScheduleType.MILESTONE else "duplicate_active"
    assert [(r.t_ms, r.requested_ms - T0, r.reason) for r in refused] == [
        (NOW, W - T0 + MINUTE_MS, NOT_CREATED[reason])
    ]


def test_windows_hold_at_most_1000_levelled_rows() -> None:
    """Seed 000 流量控制: a window with 999 rows takes one more (count 1000) at its own jitter
    offset; the next row for the same target goes to the next window (count 1); "随机偏移
    (0~5分钟)" is the ``jitter`` stream, whole milliseconds (reference §19.1)."""

    async def action(ctx: Ctx) -> None:
        await ctx.counter.incr(W, 999)
        await schedule_snapshot(
            ctx, 1, ScheduleType.NORMAL, W + 10 * SECOND_MS, rule=ScheduleRule.DISPATCHER
        )
        await schedule_snapshot(
            ctx, 2, ScheduleType.ARCHIVE, W + 10 * SECOND_MS, rule=ScheduleRule.DISPATCHER
        )

    run = run_at_now(action)
    j = jitter_offsets(2)
    w = W - T0
    assert created_rows(run) == [
        (1, w + 10_000, w + j[0], w, 1_000, PLACEMENT["forward"]),
        (2, w + 10_000, w + WINDOW_MS + j[1], w + WINDOW_MS, 1, PLACEMENT["forward"]),
    ]
    assert [c.probes for c in run.events(ScheduleCreated)] == [1, 2]


def test_new_and_milestone_rows_take_their_window_without_a_cap_check() -> None:
    """Seed 000 时间调整策略: milestone and new keep their exact time, "直接 Redis +1": in a
    full window (1000) they make it 1001 and 1002 (reference §19.12); a normal row moves on."""

    async def action(ctx: Ctx) -> None:
        await ctx.counter.incr(W, 1_000)
        await schedule_snapshot(ctx, 1, ScheduleType.NEW, W + 1_000, rule=ScheduleRule.DISPATCHER)
        await schedule_snapshot(
            ctx, 2, ScheduleType.MILESTONE, W + 2_000, rule=ScheduleRule.DISPATCHER
        )
        await schedule_snapshot(
            ctx, 3, ScheduleType.NORMAL, W + 3_000, rule=ScheduleRule.DISPATCHER
        )

    run = run_at_now(action)
    w = W - T0
    j = jitter_offsets(1)
    assert created_rows(run) == [
        (1, w + 1_000, w + 1_000, w, 1_001, PLACEMENT["exact"]),
        (2, w + 2_000, w + 2_000, w, 1_002, PLACEMENT["exact"]),
        (3, w + 3_000, w + WINDOW_MS + j[0], w + WINDOW_MS, 1, PLACEMENT["forward"]),
    ]


def test_a_levelled_time_is_never_before_now() -> None:
    """Seed 000 "if 最终时间 < now: return now": a target 30 min in the past has room in its own
    window; the offset drawn in that window is in the past, so the row is due now -- and the
    reservation stays on the past window (reference §19.2)."""

    async def action(ctx: Ctx) -> None:
        await schedule_snapshot(
            ctx, 1, ScheduleType.NORMAL, NOW - 30 * MINUTE_MS, rule=ScheduleRule.DISPATCHER
        )

    run = run_at_now(action)
    target = NOW - 30 * MINUTE_MS - T0
    past_window = target - target % WINDOW_MS
    assert past_window + jitter_offsets(1)[0] < NOW - T0
    assert created_rows(run) == [(1, target, NOW - T0, past_window, 1, PLACEMENT["forward"])]


def test_forward_4032_windows_then_back_6_then_the_target() -> None:
    """Seed 000 adjustSnapshotTime with a cap of 1 (``design.window_cap``; the search bounds are the
    design's): windows W ... W + 4030 are full, so the first row lands in the last forward window,
    W + 4031 (4032 probes). With W - 1 ... W - 4 full as well, the second row finds nothing
    forward and falls back to W - 5 -- the sixth and last backward window (i = 0 ... 5), jittered
    (design: "同上逻辑") and after now. With that one full too, the third row gets its target
    unchanged and reserves nothing; the counts are as they were."""
    counts: list[dict[Ms, int]] = []

    async def action(ctx: Ctx) -> None:
        for i in range(4031):
            await ctx.counter.incr(W + i * WINDOW_MS, 1)
        await schedule_snapshot(
            ctx, 1, ScheduleType.NORMAL, W + 10_000, rule=ScheduleRule.DISPATCHER
        )
        for i in range(1, 5):
            await ctx.counter.incr(W - i * WINDOW_MS, 1)
        await schedule_snapshot(
            ctx, 2, ScheduleType.NORMAL, W + 10_000, rule=ScheduleRule.DISPATCHER
        )
        before = await ctx.counter.get_all()
        await schedule_snapshot(
            ctx, 3, ScheduleType.NORMAL, W + 10_000, rule=ScheduleRule.DISPATCHER
        )
        counts.extend([before, await ctx.counter.get_all()])

    run = run_at_now(action, {"window_cap": 1})
    w = W - T0
    j = jitter_offsets(2)
    last = w + 4031 * WINDOW_MS
    assert created_rows(run) == [
        (1, w + 10_000, last + j[0], last, 1, PLACEMENT["forward"]),
        (2, w + 10_000, w - 5 * WINDOW_MS + j[1], w - 5 * WINDOW_MS, 1, PLACEMENT["fallback"]),
        (3, w + 10_000, w + 10_000, NO_WINDOW, -1, PLACEMENT["exhausted"]),
    ]
    assert [c.probes for c in run.events(ScheduleCreated)] == [4032, 4038, 4038]
    assert counts[0] == counts[1]
    assert set(counts[1].values()) == {1}
    assert len(counts[1]) == 4032 + 5  # W ... W + 4031 and W - 1 ... W - 5, one row each
