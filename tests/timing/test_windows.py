"""The window-count hash ``cvsa:snapshot_window_counts``, design profile.

Seed 000 流量控制 (the hash, HINCRBY +1 / undo -1 in adjustSnapshotTime) and scheduleSnapshot 1.
(the move's decrement and increment). Reference §6.3 (the rebuild from pending rows over [start of
the current UTC hour, +14 days): DEL then HSET), §6.4 (decrement when a pending row leaves
pending), §19.3 (fields at 0 stay in the hash). The design profile rebuilds only at start-up
(switch ``window_refresh_every_ms = "never"``; the deployed 5-min refresh is in
``test_profiles_cvsa``).
"""

from __future__ import annotations

from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType
from sim.events.cvsa_kinds import WindowReleased, WindowsRebuilt
from sim.scheduler.context import Ctx
from sim.testing.runs import T0, ModelRun, Video, run_model
from sim.units import DAY_MS, HOUR_MS, MINUTE_MS, Ms
from tests.timing._support import CAUSE, at, rel

OLD = T0 - 100 * DAY_MS
START = T0 + 40 * MINUTE_MS  # 00:40 +08:00: the current UTC hour started at T0
HORIZON = 14 * DAY_MS


def pending_layout() -> list[tuple[Ms, str]]:
    """(due, status) of the rows in the start-up test."""
    return [
        (T0 - 1, "pending"),  # before the current hour: not rebuilt
        (T0 + 10 * MINUTE_MS, "pending"),  # in the current hour, already past: rebuilt
        (T0 + HOUR_MS, "pending"),
        (T0 + HOUR_MS + 4 * MINUTE_MS + 59_999, "pending"),  # same window
        (T0 + 2 * HOUR_MS, "processing"),  # not pending: not counted
        (T0 + 2 * HOUR_MS, "pending"),
        (T0 + HORIZON - 1, "pending"),  # the last window of the horizon
        (T0 + HORIZON, "pending"),  # past the horizon: not rebuilt
    ]


def run_with_rows(
    profile: str, probe_at: list[Ms], until: str
) -> tuple[ModelRun, list[dict[Ms, int]]]:
    """Rows of ``pending_layout`` (videos 1...8, not songs, each with a far archive row), the run
    starting at ``START``; the hash is read at each of ``probe_at``."""
    seen: list[dict[Ms, int]] = []

    async def setup(ctx: Ctx) -> None:
        for aid, (due, status) in enumerate(pending_layout(), start=1):
            await ctx.store.insert_schedule(aid, ScheduleType.ARCHIVE, T0 + 20 * DAY_MS, T0)
            row = await ctx.store.insert_schedule(aid, ScheduleType.MILESTONE, due, T0)
            if status != "pending":
                await ctx.store.set_schedule_status([row], ScheduleStatus(status))

        async def probe(c: Ctx) -> None:
            seen.append(await c.counter.get_all())

        for t in probe_at:
            at(ctx, t, probe)

    videos = [Video(aid, OLD, song=False, views=lambda t: 10) for aid in range(1, 9)]
    run = run_model(
        videos, until=until, start="2031-01-06T00:40:00+08:00", setup=setup, profile=profile
    )
    return run, seen


def test_start_up_rebuild_counts_pending_rows_of_the_next_14_days() -> None:
    """Before the first tick the hash is rebuilt from pending rows per 5-min window, over
    [00:00 UTC+8 = the current UTC hour's start, +14 days): the overdue row at 00:10 counts, the
    rows before the hour or 14 days ahead do not, nor the processing row; archive rows far
    ahead (T0 + 20 d) are beyond the horizon."""
    run, seen = run_with_rows("design", [START], "1s")
    rebuilt = run.events(WindowsRebuilt)
    assert [(rel(e.t_ms), rel(e.from_ms), rel(e.to_ms), e.windows, e.total) for e in rebuilt] == [
        (40 * MINUTE_MS, 0, HORIZON, 4, 5)
    ]
    # Read just after the periodic jobs of the start instant: the tick (no lower bound in design)
    # took both overdue rows and released their windows -- the 00:10 one to 0, and the one before
    # the hour, which the rebuild never wrote, to -1 (drift; fields stay, reference §6.4, §19.3).
    assert {rel(w): n for w, n in seen[0].items()} == {
        -5 * MINUTE_MS: -1,
        10 * MINUTE_MS: 0,
        HOUR_MS: 2,
        2 * HOUR_MS: 1,
        HORIZON - 5 * MINUTE_MS: 1,
    }


def test_design_rebuilds_only_at_start_up() -> None:
    """Design has no periodic refresh: a count changed by hand at 1 min (a drift) is still there
    at 30 min, and the run logs one rebuild."""

    async def setup(ctx: Ctx) -> None:
        async def drift(c: Ctx) -> None:
            await c.counter.incr(T0 + DAY_MS, 7)

        async def probe(c: Ctx) -> None:
            seen.append(await c.counter.get_all())

        at(ctx, T0 + MINUTE_MS, drift)
        at(ctx, T0 + 30 * MINUTE_MS, probe)

    seen: list[dict[Ms, int]] = []
    run = run_model([], until="31m", setup=setup)
    assert seen == [{T0 + DAY_MS: 7}]
    assert [rel(e.t_ms) for e in run.events(WindowsRebuilt)] == [0]


def test_a_status_change_from_pending_releases_the_window() -> None:
    """Two rows in window [1 h, 1 h 5 min): the start-up count is 2; each dispatch (pending ->
    processing) releases one (reference §6.4), down to a field at 0."""
    run, _ = run_with_rows("design", [], "1h6m")
    released = [e for e in run.events(WindowReleased) if e.window_ms == T0 + HOUR_MS]
    assert [(rel(e.t_ms), e.cause, e.value) for e in released] == [
        (HOUR_MS - 1_000, CAUSE["status_change"], 1),
        (HOUR_MS + 4 * MINUTE_MS + 59_000, CAUSE["status_change"], 0),
    ]
