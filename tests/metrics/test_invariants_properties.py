"""Property tests (issue 4): the design profile keeps invariants 1-4 on random small scenarios
with random switch flips, and the monitors' results do not depend on where chunks are cut."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.cvsa.profile import PARAM_NAMES
from sim.cvsa.vocabulary import ScheduleRule, ScheduleType
from sim.metrics.invariants import invariant_reducers
from sim.metrics.invariants.schedule_rows import LifecycleInvariants
from sim.runner import run_scenario
from sim.scenario import load_scenario
from sim.scheduler import build_cvsa_model
from sim.testing.runs import T0, Video, run_model
from sim.units import HOUR_MS, MINUTE_MS, SECOND_MS
from tests.conftest import DATA
from tests.metrics.loglib import chunks_of, reduce
from tests.metrics.test_invariants_model import approacher, growing, new_song_setup

HELD = (
    "window_cap",
    "one_active_per_type",
    "no_schedule_before_creation",
    "single_path_processing",
)
"""Invariants 1-4: what the design profile must never violate."""

# Switches and numbers a design run may change without leaving the design's guarantees (the
# aids-as-ids bug is not among them: it is the deployed defect the invariants exist to expose).
FLIPS: dict[str, st.SearchStrategy[Any]] = {
    "bulk_batch_size": st.integers(1, 60),
    "forward_search_windows": st.sampled_from([1, 8, 288, 4032]),
    "backward_search_windows": st.integers(0, 6),
    "fallback_bare_window_start": st.booleans(),
    "cleanup_decrements": st.booleans(),
    "window_refresh_every_ms": st.sampled_from(["never", "5m"]),
    "single_tick_lookback_ms": st.sampled_from(["unbounded", "1m"]),
    "bulk_tick_lookback_ms": st.sampled_from(["unbounded", "2m"]),
    "single_tick_takes_archive": st.booleans(),
    "new_successors_forced": st.booleans(),
    "milestone_move_processing": st.booleans(),
    "milestone_reeta_clamped": st.booleans(),
    "regular_target_from_last_snapshot": st.booleans(),
    "bulk_reschedules_normal": st.booleans(),
    "bulk_failure_archive_to_normal": st.booleans(),
    "archive_keeps_time_of_day": st.booleans(),
    "retry_policy": st.sampled_from(["backoff", "cvsa"]),
}

scenarios = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 2**31),
        "duration": st.sampled_from(["6h", "9h", "12h"]),
        # Monday midnight, or Friday evening: the design's archive rows all fall due at
        # Saturday 00:00, a burst the small caps must spread.
        "start": st.sampled_from(["2031-01-06T00:00:00+08:00", "2031-01-10T18:00:00+08:00"]),
        "unavailable": st.sampled_from([0.002, 0.1, 0.3]),
        "window_cap": st.integers(3, 50),
    },
    optional=FLIPS,
)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def run_small(case: dict[str, Any]) -> dict[str, Any]:
    overrides = [
        'profile="design"',
        f"seed={case['seed']}",
        f'duration="{case["duration"]}"',
        f'start="{case["start"]}"',
        f"catalog.unavailable_at_start={case['unavailable']}",
    ]
    overrides += [
        f"{'design' if k in PARAM_NAMES else 'switches'}.{k}={_toml(v)}"
        for k, v in case.items()
        if k not in ("seed", "duration", "start", "unavailable")
    ]
    result = run_scenario(load_scenario(DATA / "small.toml", overrides=overrides), build_cvsa_model)
    return result.metrics


def assert_design_holds(metrics: dict[str, Any], cap: int) -> None:
    assert metrics["invariants.window_cap.cap"] == cap  # the run's cap reached the monitor
    for name in HELD:
        assert metrics[f"invariants.{name}.violations"] == 0, (
            name,
            metrics[f"invariants.{name}.examples"][:3],
        )
    assert metrics["invariants.unlogged_schedules"] == 0


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios)
def test_design_keeps_invariants_1_to_4(case: dict[str, Any]) -> None:
    assert_design_holds(run_small(case), case["window_cap"])


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios, st.sampled_from(["1d", "2d"]))
def test_design_keeps_invariants_1_to_4_longer(case: dict[str, Any], duration: str) -> None:
    assert_design_holds(run_small({**case, "duration": duration}), case["window_cap"])


def test_design_on_the_small_scenario_saturated_and_idle() -> None:
    """Two fixed points of the space: a tiny cap and short searches on the Saturday burst
    (rows placed forward, by the fallback and nowhere), and the plain small world."""
    saturated = {
        "seed": 3,
        "duration": "9h",
        "start": "2031-01-10T18:00:00+08:00",
        "unavailable": 0.1,
        "window_cap": 3,
        "forward_search_windows": 8,
        "single_tick_takes_archive": True,
    }
    metrics = run_small(saturated)
    assert_design_holds(metrics, 3)
    assert metrics["windows.placement.exhausted"] > 0  # the burst really saturated the windows
    assert metrics["windows.placement.forward"] > 0
    assert metrics["dispatch.archive"] > 0
    plain = {"seed": 7, "duration": "6h", "start": "2031-01-06T00:00:00+08:00"}
    assert_design_holds(run_small({**plain, "unavailable": 0.002, "window_cap": 1000}), 1000)


# -- streaming: chunk boundaries change nothing -------------------------------------------------


def _recorded_run() -> tuple[list[Any], list[str], Any]:
    blocked = Video(10_243_074, published_ms=T0 - HOUR_MS)

    async def setup(ctx: Any) -> None:
        await new_song_setup(10_194_463)(ctx)
        await ctx.store.set_video_status(blocked.aid, -404)
        from sim.scheduler.schedule_snapshot import schedule_snapshot

        for offset in (MINUTE_MS, 90 * SECOND_MS):
            await schedule_snapshot(
                ctx,
                blocked.aid,
                ScheduleType.MILESTONE,
                ctx.now + offset,
                force=True,
                rule=ScheduleRule.DISPATCHER,
            )

    young = Video(10_194_463, published_ms=T0 - HOUR_MS, views=lambda t: 2_000 + (t - T0) // 1000)
    run = run_model(
        [growing(10_000_019), approacher(10_048_630), young, blocked],
        until="6h",
        profile="cvsa-2026",
        setup=setup,
    )
    names = list(json.loads(run.recorder.header[len(b"SIMLOG1\n") :])["names"])
    for chunk in run.recorder.chunks:
        names += [text for _, text in chunk.new_names]
    return run.events(), names, run.ctx.switches, run.ctx.params


RECORDED = _recorded_run()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, len(RECORDED[0]) - 1), max_size=12))
def test_results_do_not_depend_on_chunk_boundaries(cuts: list[int]) -> None:
    events, names, switches, params = RECORDED

    def everything(cut: list[int]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for reducer in invariant_reducers(switches, params, songs={10_000_019: T0}):
            out.update(reduce(reducer, chunks_of(events, cut), names))
        return out

    whole = everything([])
    assert whole["invariants.lost_schedules.violations"] == 2  # the log has something to find
    assert everything(cuts) == whole


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, len(RECORDED[0]) - 1), min_size=1, max_size=12))
def test_packing_quiet_rows_into_arrays_changes_nothing(cuts: list[int]) -> None:
    """The lifecycle monitor packs its live rows into arrays between chunks (``warm_rows``):
    packing after every chunk gives the results and live rows of never packing."""
    events, names, switches, _ = RECORDED
    bulk_marks = not switches.bulk_aids_as_ids_bug
    never = LifecycleInvariants(bulk_marks_processing=bulk_marks, warm_rows=1 << 30)
    always = LifecycleInvariants(bulk_marks_processing=bulk_marks, warm_rows=1)
    assert reduce(always, chunks_of(events, cuts), names) == reduce(never, chunks_of(events), names)
    assert always.active_rows() == never.active_rows()
    assert always.processing_rows() == never.processing_rows()
    assert never.active_rows()  # there were live rows to pack
