"""Seed 003 §5.1's traffic modes on the engine: exact instants of mode changes, deferral,
the bound, and back-fill.

T0 is 2031-01-06 00:00 in the scenario's UTC+8. Peak mode holds 19:00-23:00 local: a normal row
due at 19:30 waits for 23:00, when the bulk tick (every 15 s) back-fills it; a new row due at
20:00 runs on time; with a 1 h bound the normal row runs at 20:30 instead; cleanup, which deletes
pending rows 2 minutes past due, keeps the deferred row meanwhile.
"""

from __future__ import annotations

from sim.cvsa.vocabulary import ScheduleType
from sim.events.cvsa_kinds import ScheduleDeleted, ScheduleDispatched
from sim.events.write_kinds import MODE_CAUSE, TRAFFIC_MODE, ModeChanged
from sim.scheduler.context import Ctx
from sim.testing.runs import T0, ModelRun, Video, run_model
from sim.units import DAY_MS, HOUR_MS, MINUTE_MS

OLD = T0 - 100 * DAY_MS
NORMAL_DUE = T0 + 19 * HOUR_MS + 30 * MINUTE_MS
NEW_DUE = T0 + 20 * HOUR_MS


async def _rows(ctx: Ctx) -> None:
    for aid in (1, 2):
        await ctx.store.insert_schedule(aid, ScheduleType.ARCHIVE, T0 + 10 * DAY_MS, T0)
    await ctx.store.insert_schedule(1, ScheduleType.NORMAL, NORMAL_DUE, T0)
    await ctx.store.insert_schedule(2, ScheduleType.NEW, NEW_DUE, T0)


def _run(*overrides: str, until: str = "23h2m") -> ModelRun:
    videos = [Video(a, OLD, song=False, views=lambda t: 5000) for a in (1, 2)]
    return run_model(videos, until=until, setup=_rows, overrides=overrides)


def _dispatched(run: ModelRun) -> dict[int, int]:
    return {e.aid: e.t_ms for e in run.events(ScheduleDispatched) if e.due_ms < T0 + DAY_MS}


PEAK = ("modes.enabled=true", 'modes.peak=["19:00-23:00"]')


def test_without_modes_rows_are_taken_when_due() -> None:
    assert _dispatched(_run()) == {1: NORMAL_DUE - 15_000, 2: NEW_DUE - 1000}


def test_peak_mode_defers_the_normal_row_to_its_end_and_keeps_new_work_on_time() -> None:
    run = _run(*PEAK)
    assert _dispatched(run) == {1: T0 + 23 * HOUR_MS, 2: NEW_DUE - 1000}
    assert [
        (e.t_ms, TRAFFIC_MODE.words[e.mode], MODE_CAUSE.words[e.cause])
        for e in run.events(ModeChanged)
    ] == [(T0 + 19 * HOUR_MS, "peak", "schedule"), (T0 + 23 * HOUR_MS, "default", "schedule")]
    assert run.events(ScheduleDeleted) == []  # cleanup kept the deferred row


def test_a_deferred_row_runs_once_it_has_waited_the_bound() -> None:
    run = _run(*PEAK, "modes.max_defer=1h", until="21h")
    assert _dispatched(run) == {1: NORMAL_DUE + HOUR_MS, 2: NEW_DUE - 1000}


def test_a_run_that_starts_inside_a_peak_says_so() -> None:
    run = _run("modes.enabled=true", 'modes.peak=["23:00-01:00"]', until="1h30m")
    assert [
        (e.t_ms, TRAFFIC_MODE.words[e.mode], MODE_CAUSE.words[e.cause])
        for e in run.events(ModeChanged)
    ] == [(T0, "peak", "start"), (T0 + HOUR_MS, "default", "schedule")]
