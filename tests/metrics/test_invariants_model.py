"""Invariant monitors on whole model runs (``sim.testing.runs.run_model``): a crafted setup or a
faulty port makes each invariant fire; the same run without the fault keeps it silent."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import numpy as np
import pytest

from sim.cvsa.vocabulary import ScheduleRule, ScheduleType
from sim.events.cvsa_kinds import StrayStatusChange
from sim.metrics.invariants import (
    LifecycleInvariants,
    MilestoneCapture,
    NoScheduleBeforeCreation,
    StaleSongs,
    WindowCapInvariant,
    invariant_reducers,
)
from sim.ports import ScheduleRow
from sim.scheduler.context import Ctx
from sim.scheduler.schedule_snapshot import schedule_snapshot
from sim.testing.runs import T0, ModelRun, Video, run_model
from sim.units import HOUR_MS, MINUTE_MS, SECOND_MS
from sim.world.truth import Crossings
from tests.metrics.loglib import reduce_recorded

Setup = Callable[[Ctx], Coroutine[Any, Any, None]]
A, B, C, D, E = 10_000_019, 10_048_630, 10_097_241, 10_145_852, 10_194_463
DAY_AGO = T0 - 24 * HOUR_MS


def growing(aid: int, per_day: int = 1_000, base: int = 5_000) -> Video:
    """A song growing ``per_day`` views a day (6 h regular interval above 320/day)."""
    return Video(
        aid,
        published_ms=T0 - 30 * 24 * HOUR_MS,
        views=lambda t: base + per_day * (t - T0) // (24 * HOUR_MS),
        history=[(DAY_AGO, base - per_day), (T0, base)],
    )


def results(run: ModelRun, *reducers: Any) -> dict[str, Any]:
    return reduce_recorded(list(reducers), run.recorder)


def all_reducers(run: ModelRun) -> dict[str, Any]:
    return results(run, *invariant_reducers(run.ctx.switches, run.ctx.params))


def new_song_setup(aid: int) -> Setup:
    async def setup(ctx: Ctx) -> None:  # what classifyVideo does for a new song (§13.2)
        for offset in (90 * SECOND_MS, 3 * MINUTE_MS, 5 * MINUTE_MS, 10 * MINUTE_MS):
            await schedule_snapshot(
                ctx,
                aid,
                ScheduleType.NEW,
                ctx.now + offset,
                force=True,
                rule=ScheduleRule.DISPATCHER,
            )

    return setup


@pytest.mark.parametrize("profile", ["design", "cvsa-2026"])
def test_a_clean_run_violates_nothing(profile: str) -> None:
    young = Video(E, published_ms=T0 - HOUR_MS, views=lambda t: 2_000 + (t - T0) // 1000)
    run = run_model(
        [growing(A), growing(B, per_day=10), young],
        until="8h",
        profile=profile,
        setup=new_song_setup(E),
    )
    out = all_reducers(run)
    assert out["invariants.unlogged_schedules"] == 0
    for name in (
        "window_cap",
        "one_active_per_type",
        "no_schedule_before_creation",
        "single_path_processing",
        "lost_schedules",
    ):
        assert out[f"invariants.{name}.violations"] == 0, name
    assert len(run.events()) > 100  # the scheduler did something to check


# -- one_active_per_type: a store whose active-row lookup is broken -----------------------------


def approacher(aid: int) -> Video:
    """90k views and 2k/h: a milestone candidate every 5 minutes (§11.1)."""
    return Video(
        aid,
        published_ms=T0 - 30 * 24 * HOUR_MS,
        views=lambda t: 90_000 + 2_000 * (t - T0) // HOUR_MS,
        history=[(T0 - HOUR_MS, 88_000), (T0, 90_000)],
    )


@pytest.mark.parametrize("broken", [False, True])
def test_one_active_per_type_catches_a_lookup_that_misses_active_rows(broken: bool) -> None:
    async def setup(ctx: Ctx) -> None:
        if broken:

            async def no_active_rows(aid: int, type: str) -> list[ScheduleRow]:
                return []

            ctx.store.active_schedules = no_active_rows  # type: ignore[method-assign]

    run = run_model([approacher(A)], until="2h", setup=setup)
    out = results(run, LifecycleInvariants(bulk_marks_processing=True))
    if broken:
        assert out["invariants.one_active_per_type.violations"] > 0
        example = out["invariants.one_active_per_type.examples"][0]
        assert (example["aid"], example["type"], example["cause"]) == (A, "milestone", "created")
    else:
        assert out["invariants.one_active_per_type.violations"] == 0


# -- single_path_processing and lost_schedules: a blocked video ---------------------------------


def blocked_setup(*, broken_tick: bool) -> Setup:
    """A video whose bilibili status is non-zero: its dispatched row stays processing until
    cleanup (§9 step 2), while a second milestone row comes due."""

    async def setup(ctx: Ctx) -> None:
        await ctx.store.set_video_status(A, -404)
        await schedule_snapshot(
            ctx,
            A,
            ScheduleType.MILESTONE,
            ctx.now + MINUTE_MS,
            force=True,
            rule=ScheduleRule.DISPATCHER,
        )
        await schedule_snapshot(
            ctx,
            A,
            ScheduleType.MILESTONE,
            ctx.now + 90 * SECOND_MS,
            force=True,
            rule=ScheduleRule.DISPATCHER,
        )
        if broken_tick:

            async def never_processing(aid: int) -> bool:
                return False

            ctx.store.has_processing_schedule = never_processing  # type: ignore[method-assign]

    return setup


def test_single_path_processing_catches_a_tick_that_ignores_processing_rows() -> None:
    video = Video(A, published_ms=T0 - HOUR_MS)
    clean = run_model([video], until="30m", setup=blocked_setup(broken_tick=False))
    out = results(clean, LifecycleInvariants(bulk_marks_processing=True))
    assert out["invariants.single_path_processing.violations"] == 0
    assert out["invariants.one_active_per_type.violations"] == 0  # both rows were forced
    broken = run_model([video], until="30m", setup=blocked_setup(broken_tick=True))
    out = results(broken, LifecycleInvariants(bulk_marks_processing=True))
    assert out["invariants.single_path_processing.violations"] == 1
    example = out["invariants.single_path_processing.examples"][0]
    assert example["aid"] == A
    assert example["t_ms"] == T0 + 89 * SECOND_MS  # the tick looks 1 s ahead (§7.1)
    assert len(example["processing"]) == 1


def test_lost_schedules_counts_rows_cleanup_deleted_without_a_snapshot() -> None:
    blocked = run_model(
        [Video(A, published_ms=T0 - HOUR_MS)], until="30m", setup=blocked_setup(broken_tick=False)
    )
    out = results(blocked, LifecycleInvariants(bulk_marks_processing=True))
    # The processing row (skipped by its worker) and the pending one (skipped by the tick).
    assert out["invariants.lost_schedules.violations"] == 2
    assert out["invariants.lost_schedules.milestone"] == 2
    assert sorted(e["status"] for e in out["invariants.lost_schedules.examples"]) == [
        "pending",
        "processing",
    ]
    healthy = run_model(
        [Video(A, published_ms=T0 - HOUR_MS, views=lambda t: 10)],
        until="30m",
        setup=new_song_setup(A),
    )
    out = results(healthy, LifecycleInvariants(bulk_marks_processing=True))
    assert out["invariants.lost_schedules.violations"] == 0


# -- window_cap: a window counter that ignores the cap ------------------------------------------


@pytest.mark.parametrize("broken", [False, True])
def test_window_cap_catches_a_counter_that_ignores_the_cap(broken: bool) -> None:
    songs = [A, B, C, D, E]

    async def setup(ctx: Ctx) -> None:
        if broken:
            reserve = ctx.counter.reserve

            async def uncapped(first_ms: int, step_ms: int, count: int, cap: int) -> Any:
                return await reserve(first_ms, step_ms, count, 10**9)

            ctx.counter.reserve = uncapped  # type: ignore[method-assign]
        for aid in songs:
            await schedule_snapshot(
                ctx, aid, ScheduleType.NORMAL, ctx.now + HOUR_MS, rule=ScheduleRule.DISPATCHER
            )

    run = run_model([growing(a) for a in songs], until="10m", design={"window_cap": 2}, setup=setup)
    out = results(run, WindowCapInvariant(cap=2))
    if broken:  # five rows into one window, for the setup's normal rows and the archive run
        assert out["invariants.window_cap.violations"] == 6
        assert sorted(
            (e["type"], e["window_count"]) for e in out["invariants.window_cap.examples"]
        ) == [
            ("archive", 3),
            ("archive", 4),
            ("archive", 5),
            ("normal", 3),
            ("normal", 4),
            ("normal", 5),
        ]
    else:
        assert out["invariants.window_cap.violations"] == 0


# -- no_schedule_before_creation ----------------------------------------------------------------


def test_a_caller_passing_a_past_target_is_caught() -> None:
    async def setup(ctx: Ctx) -> None:
        await schedule_snapshot(
            ctx, A, ScheduleType.MILESTONE, ctx.now - 10 * MINUTE_MS, rule=ScheduleRule.DISPATCHER
        )

    run = run_model([approacher(A)], until="10m", setup=setup)
    out = results(run, NoScheduleBeforeCreation(bare_fallback=False))
    assert out["invariants.no_schedule_before_creation.violations"] == 1
    example = out["invariants.no_schedule_before_creation.examples"][0]
    assert example["due_ms"] == T0 - 10 * MINUTE_MS
    assert example["placement"] == "exact"


@pytest.mark.parametrize("profile", ["design", "cvsa-2026"])
def test_the_fallback_into_the_past_is_allowed_only_when_bare(profile: str) -> None:
    async def setup(ctx: Ctx) -> None:  # one window of room searching forward, cap 1
        await schedule_snapshot(
            ctx, A, ScheduleType.NORMAL, ctx.now + SECOND_MS, rule=ScheduleRule.DISPATCHER
        )
        await schedule_snapshot(
            ctx, B, ScheduleType.NORMAL, ctx.now + SECOND_MS, rule=ScheduleRule.DISPATCHER
        )

    run = run_model(
        [growing(A), growing(B)],
        until="10m",
        profile=profile,
        design={"window_cap": 1, "forward_search_windows": 1},
        setup=setup,
        start="2031-01-06T00:04:00+08:00",  # 4 min into a window
    )
    sw = run.ctx.switches
    out = results(run, NoScheduleBeforeCreation(bare_fallback=sw.fallback_bare_window_start))
    assert out["invariants.no_schedule_before_creation.violations"] == 0
    if profile == "cvsa-2026":  # the bare start of the previous window, 9 min ago
        assert out["invariants.no_schedule_before_creation.allowed"] == 1
    else:  # jittered in the previous window, then clamped to now
        assert out["invariants.no_schedule_before_creation.allowed"] == 0
        assert out["invariants.no_schedule_before_creation.clamped_to_now"] >= 1


# -- stale_songs --------------------------------------------------------------------------------


def test_stale_songs_reports_the_song_nobody_can_snapshot() -> None:
    broken = Video(
        B,
        published_ms=T0 - 30 * 24 * HOUR_MS,
        views=lambda t: 100,
        error=lambda t: -404,
        history=[(DAY_AGO, 100), (T0, 100)],
    )
    run = run_model([growing(A), broken], until="20h")
    out = results(run, StaleSongs({A: T0, B: T0}, max_interval_ms=6 * HOUR_MS, slack_ms=HOUR_MS))
    assert out["invariants.stale_songs.violations"] == 1
    assert out["invariants.stale_songs.examples"] == [
        {"aid": B, "from_ms": T0, "to_ms": T0 + 20 * HOUR_MS, "gap_s": 20 * 3600.0, "open": True}
    ]


# -- missed_milestones --------------------------------------------------------------------------


def test_missed_milestones_tracks_a_candidate_and_misses_a_jump() -> None:
    def first_at_or_above(views: Callable[[int], int], m: int, lo: int, hi: int) -> int:
        while lo < hi:  # views are monotone: bisect for the first ms with views >= m
            mid = (lo + hi) // 2
            if views(mid) >= m:
                hi = mid
            else:
                lo = mid + 1
        return lo

    tracked = approacher(A)  # 90k + 2k/h crosses 100k after 5 h
    jump = Video(
        B,
        published_ms=T0 - 30 * 24 * HOUR_MS,
        views=lambda t: 50_000 if t < T0 + 2 * HOUR_MS else 150_000,
        history=[(DAY_AGO, 50_000), (T0, 50_000)],
    )
    t_a = first_at_or_above(tracked.views, 100_000, T0, T0 + 10 * HOUR_MS)
    crossings = Crossings(
        np.array([B, A], dtype=np.int64),
        np.zeros(2, dtype=np.int64),
        np.array([100_000, 100_000], dtype=np.int64),
        np.array([T0 + 2 * HOUR_MS, t_a], dtype=np.int64),
        np.ones(2, dtype=bool),
    )
    run = run_model([tracked, jump], until="8h")
    out = results(run, MilestoneCapture(crossings, bound_ms=HOUR_MS))
    assert out["milestones.crossed"] == 2
    assert out["milestones.captured"] == 1
    assert out["invariants.missed_milestones.violations"] == 1
    assert out["invariants.missed_milestones.examples"][0]["aid"] == B
    assert out["milestones.capture_latency.max_s"] < 3600  # A was captured in time
    assert out["milestones.bracket_width.count"] == 1


# -- what the deployed profile does -------------------------------------------------------------


@pytest.mark.parametrize("profile", ["design", "cvsa-2026"])
def test_aids_passed_as_ids_revive_finished_rows_in_cvsa_2026(profile: str) -> None:
    """With aids as small as schedule ids, the deployed bulk tick (§8.3) sets finished rows of
    other videos back to processing: active again next to their siblings, then deleted."""
    run = run_model(
        [growing(1), growing(2), growing(3)], until="12h", profile=profile, setup=new_song_setup(3)
    )
    out = all_reducers(run)
    strays = run.events(StrayStatusChange)
    if profile == "design":
        assert strays == []
        assert out["invariants.one_active_per_type.violations"] == 0
        assert out["invariants.lost_schedules.stray_deleted"] == 0
        return
    assert strays
    assert out["invariants.one_active_per_type.violations"] > 0
    assert {e["cause"] for e in out["invariants.one_active_per_type.examples"]} == {"stray"}
    assert out["invariants.lost_schedules.stray_deleted"] > 0
    assert out["invariants.single_path_processing.violations"] == 0  # the tick sees them


# -- the rebuilt row status is the store's ------------------------------------------------------


def _now(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never suspends (the memory store's methods)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the coroutine suspended")


@pytest.mark.parametrize("profile", ["design", "cvsa-2026"])
@pytest.mark.parametrize("until", ["3m", "361m", "7h"])
def test_the_rebuilt_active_and_processing_rows_match_the_store(profile: str, until: str) -> None:
    """Small aids (hit by cvsa-2026's aids-as-ids updates), a blocked video, a new song and an
    approacher: whatever happened, the rows the monitor holds active are the store's."""
    videos = [growing(1), growing(2), growing(3), approacher(B), Video(A, T0 - HOUR_MS)]

    async def setup(ctx: Ctx) -> None:
        await new_song_setup(3)(ctx)
        await blocked_setup(broken_tick=False)(ctx)

    run = run_model(videos, until=until, profile=profile, setup=setup)
    monitor = LifecycleInvariants(bulk_marks_processing=not run.ctx.switches.bulk_aids_as_ids_bug)
    results(run, monitor)
    store = run.ctx.store
    expected = {}
    for v in videos:
        for t in ScheduleType:
            rows = _now(store.active_schedules(v.aid, t))
            if rows:
                expected[(v.aid, t)] = sorted(r.id for r in rows)
    assert monitor.active_rows() == expected
    processing: dict[int, list[int]] = {}
    for (aid, _), ids in expected.items():
        for i in ids:
            if _now(store.get_schedule(i)).status == "processing":
                processing.setdefault(aid, []).append(i)
    processing = {aid: sorted(ids) for aid, ids in sorted(processing.items())}
    assert monitor.processing_rows() == processing
    if until == "3m":  # the blocked video's row is stuck processing (§9 step 2)
        assert list(processing) == [A]
    if until == "361m" and profile == "cvsa-2026":  # two finished new rows revived by strays
        assert processing[3] == [1, 3]
