"""Invariant monitors on hand-built logs: each fires on a crafted violation and stays silent on
the legitimate cases next to it (sim.metrics.invariants)."""

from __future__ import annotations

import numpy as np
import pytest

from sim.cvsa.params import CVSA_2026_PARAMS, DESIGN_PARAMS
from sim.cvsa.profile import CVSA_2026, DESIGN
from sim.metrics.invariants import (
    EXAMPLES,
    LifecycleInvariants,
    MilestoneCapture,
    NoScheduleBeforeCreation,
    StaleSongs,
    WindowCapInvariant,
    invariant_reducers,
)
from sim.units import HOUR_MS, MINUTE_MS, SECOND_MS
from sim.world.truth import Crossings
from tests.metrics.loglib import T0, Log

A, B = 10_000_019, 10_048_630

# -- window_cap ---------------------------------------------------------------------------------


def test_window_cap_fires_on_a_capped_reservation_over_the_cap() -> None:
    log = Log()
    log.created(T0, 1, A, count=10)  # at the cap: fine
    log.created(T0, 2, A, count=11, placement="fallback")  # over: the violation
    log.created(T0 + 1, 3, B, count=11)  # over again
    out = log.reduce(WindowCapInvariant(cap=10))
    assert out["invariants.window_cap.violations"] == 2
    assert out["invariants.window_cap.examples"][0] == {
        "schedule": 2,
        "aid": A,
        "type": "normal",
        "t_ms": T0,
        "window_ms": T0,
        "window_count": 11,
        "placement": "fallback",
    }
    assert [e["schedule"] for e in out["invariants.window_cap.examples"]] == [2, 3]


def test_window_cap_counts_the_uncapped_exceptions_apart() -> None:
    log = Log()
    log.created(T0, 1, A, "milestone", count=11, placement="exact")
    log.created(T0, 2, A, "normal", count=12, placement="unadjusted")
    log.created(T0, 3, B, "normal", count=-1, window=-1, placement="exhausted")
    log.moved(T0, 1, A, T0 + HOUR_MS, T0 + MINUTE_MS, count=13)
    log.created(T0, 4, B, "new", count=10, placement="exact")  # not over
    out = log.reduce(WindowCapInvariant(cap=10))
    assert out["invariants.window_cap.violations"] == 0
    assert out["invariants.window_cap.examples"] == []
    assert out["invariants.window_cap.over_cap_uncapped"] == 3
    assert out["invariants.window_cap.exhausted"] == 1


def test_window_cap_keeps_the_first_examples_and_an_exact_count() -> None:
    log = Log()
    for s in range(1, 2 * EXAMPLES + 6):
        log.created(T0 + s, s, A, count=5)
    out = log.reduce(WindowCapInvariant(cap=4), cuts=[7, 23])
    assert out["invariants.window_cap.violations"] == 2 * EXAMPLES + 5
    assert [e["schedule"] for e in out["invariants.window_cap.examples"]] == list(
        range(1, EXAMPLES + 1)
    )


# -- no_schedule_before_creation ----------------------------------------------------------------


def test_due_before_creation_fires_outside_the_bare_fallback() -> None:
    now = T0 + 4 * MINUTE_MS
    log = Log()
    log.created(now, 1, A, due=now - 1, window=T0)  # forward never returns the past
    log.created(now, 2, A, "milestone", due=now - SECOND_MS, placement="exact")  # a past target
    log.created(now, 3, B, due=now - 5, window=-1, count=-1, placement="exhausted")
    log.created(now, 4, B, due=T0, window=T0, placement="fallback")  # bare fallback: allowed
    log.created(now, 5, B, due=now, window=T0)  # clamped to now
    log.created(now, 6, B, due=now + 5, window=T0)  # in the future
    log.moved(now, 2, A, now + HOUR_MS, now - 1)  # a move into the past
    out = log.reduce(NoScheduleBeforeCreation(bare_fallback=True))
    assert out["invariants.no_schedule_before_creation.violations"] == 4
    examples = out["invariants.no_schedule_before_creation.examples"]
    assert [(e["event"], e["schedule"]) for e in examples] == [
        ("created", 1),
        ("created", 2),
        ("created", 3),
        ("moved", 2),
    ]
    assert examples[1] == {
        "event": "created",
        "schedule": 2,
        "aid": A,
        "type": "milestone",
        "t_ms": now,
        "requested_ms": now - SECOND_MS,
        "due_ms": now - SECOND_MS,
        "window_ms": T0,
        "placement": "exact",
    }
    assert out["invariants.no_schedule_before_creation.allowed"] == 1
    assert out["invariants.no_schedule_before_creation.clamped_to_now"] == 1


def test_a_past_fallback_is_allowed_only_for_the_bare_window_start() -> None:
    now = T0 + 4 * MINUTE_MS
    log = Log()
    log.created(now, 1, A, due=T0 - 300_000, window=T0 - 300_000, placement="fallback")
    log.created(now, 2, A, due=T0 + 7, window=T0, placement="fallback")  # jittered: not bare
    bare = log.reduce(NoScheduleBeforeCreation(bare_fallback=True))
    assert bare["invariants.no_schedule_before_creation.allowed"] == 1
    assert bare["invariants.no_schedule_before_creation.violations"] == 1
    design = log.reduce(NoScheduleBeforeCreation(bare_fallback=False))
    assert design["invariants.no_schedule_before_creation.allowed"] == 0
    assert design["invariants.no_schedule_before_creation.violations"] == 2


# -- one_active_per_type ------------------------------------------------------------------------


def test_one_active_per_type_fires_on_a_second_unforced_active_row() -> None:
    log = Log()
    log.created(T0, 1, A, "normal")
    log.created(T0, 2, A, "archive")  # another type: fine
    log.created(T0, 3, B, "normal")  # another video: fine
    log.created(T0 + 1, 4, A, "normal")  # the violation
    out = log.reduce(LifecycleInvariants(bulk_marks_processing=True))
    assert out["invariants.one_active_per_type.violations"] == 1
    assert out["invariants.one_active_per_type.examples"] == [
        {
            "schedule": 4,
            "aid": A,
            "type": "normal",
            "t_ms": T0 + 1,
            "active": [1],
            "cause": "created",
        }
    ]


@pytest.mark.parametrize("end", ["finished", "deleted"])
def test_one_active_per_type_is_silent_once_the_row_ended(end: str) -> None:
    log = Log()
    log.created(T0, 1, A, "milestone")
    log.dispatched(T0 + 60_000, 1, A, "milestone", job=7)
    if end == "finished":
        log.finished(T0 + 60_000, 1, A, "milestone", "failed")
    else:
        log.deleted(T0 + 200_000, 1, A, "milestone", "processing")
    log.created(T0 + 300_000, 2, A, "milestone")
    out = log.reduce(LifecycleInvariants(bulk_marks_processing=True))
    assert out["invariants.one_active_per_type.violations"] == 0


def test_forced_rows_are_parallel_not_violations() -> None:
    log = Log()
    for s in range(1, 5):  # the 4 initial new rows
        log.created(T0, s, A, "new", forced=True)
    log.created(T0, 5, A, "new")  # an unforced continuation next to them: a violation
    out = log.reduce(LifecycleInvariants(bulk_marks_processing=True))
    assert out["invariants.one_active_per_type.forced_parallel"] == 3
    assert out["invariants.one_active_per_type.violations"] == 1
    assert out["invariants.one_active_per_type.examples"][0]["active"] == [1, 2, 3, 4]


def test_a_stray_revival_next_to_an_active_row_is_a_violation() -> None:
    log = Log()
    log.created(T0, 1, A, "normal")
    log.dispatched(T0 + 60_000, 1, A, "normal", job=7, single=False)
    log.finished(T0 + 60_000, 1, A, "normal")
    log.created(T0 + 60_000, 2, A, "normal")
    # aids passed as ids (§8.3): the completed row 1 becomes processing again.
    log.stray(T0 + 70_000, 1, A, "normal", "completed", "processing")
    out = log.reduce(LifecycleInvariants(bulk_marks_processing=False))
    assert out["invariants.one_active_per_type.violations"] == 1
    assert out["invariants.one_active_per_type.examples"][0]["cause"] == "stray"
    assert out["invariants.one_active_per_type.examples"][0]["active"] == [2]


# -- single_path_processing ---------------------------------------------------------------------


def test_single_path_fires_when_the_video_already_has_a_processing_row() -> None:
    log = Log()
    log.created(T0, 1, A, "milestone")
    log.created(T0, 2, A, "new", forced=True)
    log.dispatched(T0 + 1, 1, A, "milestone", job=7)
    log.dispatched(T0 + 2, 2, A, "new", job=8)  # row 1 still processing
    out = log.reduce(LifecycleInvariants(bulk_marks_processing=True))
    assert out["invariants.single_path_processing.violations"] == 1
    assert out["invariants.single_path_processing.examples"] == [
        {"schedule": 2, "aid": A, "type": "new", "t_ms": T0 + 2, "job": 8, "processing": [1]}
    ]


def test_single_path_is_silent_after_the_processing_row_finished() -> None:
    log = Log()
    log.created(T0, 1, A, "milestone")
    log.created(T0, 2, A, "new", forced=True)
    log.created(T0, 3, B, "new", forced=True)
    log.dispatched(T0 + 1, 1, A, "milestone", job=7)
    log.dispatched(T0 + 1, 3, B, "new", job=9)  # another video: fine
    log.started(T0 + 1, 1, A, "milestone", job=7)
    log.finished(T0 + 1, 1, A, "milestone")
    log.job_finished(T0 + 1, 7)
    log.dispatched(T0 + 2, 2, A, "new", job=8)
    out = log.reduce(LifecycleInvariants(bulk_marks_processing=True))
    assert out["invariants.single_path_processing.violations"] == 0


def test_a_marked_bulk_row_blocks_the_single_path_an_unmarked_one_does_not() -> None:
    log = Log()
    log.created(T0, 1, A, "normal")
    log.created(T0, 2, A, "milestone")
    log.dispatched(T0 + 1, 1, A, "normal", job=7, single=False)
    log.dispatched(T0 + 1, 1, A, "normal", job=8, single=False)  # re-enqueued (§8.3)
    log.dispatched(T0 + 2, 2, A, "milestone", job=9)
    design = log.reduce(LifecycleInvariants(bulk_marks_processing=True))
    assert design["invariants.single_path_processing.violations"] == 1
    assert design["invariants.single_path_processing.examples"][0]["processing"] == [1]
    deployed = log.reduce(LifecycleInvariants(bulk_marks_processing=False))
    assert deployed["invariants.single_path_processing.violations"] == 0
    assert deployed["invariants.single_path_processing.unmarked_bulk_overlap"] == 1
    assert deployed["invariants.single_path_processing.redispatched"] == 1


def test_a_stray_processing_row_blocks_the_single_path() -> None:
    log = Log()
    log.created(T0, 1, A, "archive")
    log.created(T0, 2, A, "new", forced=True)
    log.stray(T0 + 1, 1, A, "archive", "pending", "processing")
    log.dispatched(T0 + 2, 2, A, "new", job=9)
    out = log.reduce(LifecycleInvariants(bulk_marks_processing=False))
    assert out["invariants.single_path_processing.violations"] == 1


# -- lost_schedules -----------------------------------------------------------------------------


def test_a_row_deleted_without_a_snapshot_is_lost() -> None:
    log = Log()
    log.created(T0, 1, A, "milestone")
    log.created(T0, 2, B, "milestone")
    log.dispatched(T0 + 60_000, 1, A, "milestone", job=7)
    log.started(T0 + 60_000, 1, A, "milestone", job=7)
    log.taken(T0 + 60_000, A, 5, s=1, type="milestone")
    log.job_finished(T0 + 60_000, 7)  # row 1 got its snapshot; the worker left it processing
    log.deleted(T0 + 300_000, 1, A, "milestone", "processing")
    log.deleted(T0 + 300_000, 2, B, "milestone", "pending")  # never taken up: lost
    out = log.reduce(LifecycleInvariants(bulk_marks_processing=True))
    assert out["invariants.lost_schedules.violations"] == 1
    assert out["invariants.lost_schedules.milestone"] == 1
    assert out["invariants.lost_schedules.examples"] == [
        {
            "schedule": 2,
            "aid": B,
            "type": "milestone",
            "due_ms": T0 + 300_000 - 120_001,
            "t_ms": T0 + 300_000,
            "status": "pending",
        }
    ]


def test_a_deletion_during_the_job_waits_for_the_job() -> None:
    def run(snapshot_after_delete: bool, job_done: bool) -> dict[str, object]:
        log = Log()
        log.created(T0, 1, A, "new", forced=True)
        log.dispatched(T0 + 60_000, 1, A, "new", job=7)
        log.started(T0 + 60_000, 1, A, "new", job=7)
        log.deleted(T0 + 300_000, 1, A, "new", "processing")  # the worker sleeps in a retry
        if snapshot_after_delete:
            log.taken(T0 + 301_000, A, 5, s=1, type="new")
        if job_done:
            log.job_finished(T0 + 301_000, 7)
        result: dict[str, object] = log.reduce(LifecycleInvariants(bulk_marks_processing=True))
        return result

    assert run(True, True)["invariants.lost_schedules.violations"] == 0
    lost = run(False, True)
    assert lost["invariants.lost_schedules.violations"] == 1
    assert lost["invariants.lost_schedules.new"] == 1
    undecided = run(False, False)
    assert undecided["invariants.lost_schedules.violations"] == 0
    assert undecided["invariants.lost_schedules.undecided"] == 1


def test_a_revived_row_deleted_later_is_not_lost() -> None:
    log = Log()
    log.created(T0, 1, A, "normal")
    log.dispatched(T0 + 60_000, 1, A, "normal", job=7, single=False)
    log.finished(T0 + 60_000, 1, A, "normal", "failed")
    log.stray(T0 + 70_000, 1, A, "normal", "failed", "processing")
    log.deleted(T0 + 400_000, 1, A, "normal", "processing")
    out = log.reduce(LifecycleInvariants(bulk_marks_processing=False))
    assert out["invariants.lost_schedules.violations"] == 0
    assert out["invariants.lost_schedules.stray_deleted"] == 1


def test_rows_without_a_creation_event_are_adopted() -> None:
    log = Log()
    log.created(T0, 1, A, "milestone")
    log.skipped(T0 + 1, 2, A, "milestone", "aid_processing")  # row 2 was never announced
    log.deleted(T0 + 300_000, 3, B, "normal")  # nor was row 3
    out = log.reduce(LifecycleInvariants(bulk_marks_processing=True))
    assert out["invariants.unlogged_schedules"] == 2
    assert out["invariants.one_active_per_type.violations"] == 1  # rows 1 and 2 both active
    assert out["invariants.one_active_per_type.examples"][0]["cause"] == "unlogged"
    assert out["invariants.lost_schedules.violations"] == 1


# -- stale_songs --------------------------------------------------------------------------------


def test_stale_songs_fires_on_long_gaps_closed_and_open() -> None:
    bound = 72 * HOUR_MS + 2 * HOUR_MS
    log = Log()
    log.taken(T0 + 10 * HOUR_MS, A)  # A's gap from its baseline: 10 h, fine
    log.classified(T0 + 11 * HOUR_MS, B)  # B becomes a song
    log.taken(T0 + 10 * HOUR_MS + bound + 1, A)  # A: one gap just over the bound
    log.taken(T0 + 20 * HOUR_MS, 77)  # not a song
    log.ended(T0 + 11 * HOUR_MS + bound + 5)  # B never snapshotted: open gap
    out = log.reduce(StaleSongs({A: T0}))
    assert out["invariants.stale_songs.violations"] == 2
    assert out["invariants.stale_songs.examples"] == [
        {
            "aid": A,
            "from_ms": T0 + 10 * HOUR_MS,
            "to_ms": T0 + 10 * HOUR_MS + bound + 1,
            "gap_s": (bound + 1) / SECOND_MS,
            "open": False,
        },
        {
            "aid": B,
            "from_ms": T0 + 11 * HOUR_MS,
            "to_ms": T0 + 11 * HOUR_MS + bound + 5,
            "gap_s": (bound + 5) / SECOND_MS,
            "open": True,
        },
    ]
    assert out["invariants.stale_songs.songs"] == 2
    assert out["invariants.stale_songs.max_gap_s"] == (bound + 5) / SECOND_MS  # the open one


def test_stale_songs_is_silent_within_the_bound() -> None:
    log = Log()
    for day in range(1, 8):
        log.taken(T0 + day * 70 * HOUR_MS, A)
    log.ended(T0 + 8 * 70 * HOUR_MS)
    out = log.reduce(StaleSongs({A: T0}, max_interval_ms=70 * HOUR_MS, slack_ms=0))
    assert out["invariants.stale_songs.violations"] == 0
    assert out["invariants.stale_songs.max_gap_s"] == 70 * 3600
    tighter = log.reduce(StaleSongs({A: T0}, max_interval_ms=70 * HOUR_MS - 1, slack_ms=0))
    assert tighter["invariants.stale_songs.violations"] == 8


# -- missed_milestones --------------------------------------------------------------------------


def _crossings(rows: list[tuple[int, int, int, bool]]) -> Crossings:
    aid, milestone, t, visible = zip(*rows, strict=True)
    return Crossings(
        np.array(aid, dtype=np.int64),
        np.zeros(len(rows), dtype=np.int64),
        np.array(milestone, dtype=np.int64),
        np.array(t, dtype=np.int64),
        np.array(visible, dtype=bool),
    )


def test_milestone_capture_latency_bracket_and_misses() -> None:
    cross = _crossings(
        [
            (A, 100_000, T0 + HOUR_MS, True),  # captured after 10 min: fine
            (B, 1_000_000, T0 + HOUR_MS, True),  # captured after 2 h: missed
            (A, 1_000_000, T0 + 2 * HOUR_MS, True),  # never captured: missed
            (B, 2_000_000, T0 + 3 * HOUR_MS, False),  # hidden: not judged
        ]
    )
    log = Log()
    log.taken(T0 + HOUR_MS - 5 * MINUTE_MS, A, 99_000)  # below 100k
    log.taken(T0 + HOUR_MS - MINUTE_MS, B, 990_000)
    log.taken(T0 + HOUR_MS + 10 * MINUTE_MS, A, 100_050)  # captures 100k
    log.taken(T0 + 3 * HOUR_MS, B, 1_000_100)  # captures 1M, late
    log.taken(T0 + 5 * HOUR_MS, A, 900_000)
    log.ended(T0 + 6 * HOUR_MS)
    out = log.reduce(MilestoneCapture(cross, bound_ms=HOUR_MS), cuts=[2, 4])
    assert out["milestones.crossed"] == 3
    assert out["milestones.captured"] == 2
    assert out["milestones.hidden"] == 1
    assert out["invariants.missed_milestones.violations"] == 2
    assert out["invariants.missed_milestones.undecided"] == 0
    assert out["invariants.missed_milestones.examples"] == [
        {
            "aid": B,
            "milestone": 1_000_000,
            "t_ms": T0 + HOUR_MS,
            "deadline_ms": T0 + 2 * HOUR_MS,
            "last_below_ms": T0 + HOUR_MS - MINUTE_MS,
        },
        {
            "aid": A,
            "milestone": 1_000_000,
            "t_ms": T0 + 2 * HOUR_MS,
            "deadline_ms": T0 + 3 * HOUR_MS,
            "last_below_ms": T0 + 5 * HOUR_MS,
        },
    ]
    assert out["milestones.capture_latency.count"] == 2
    assert out["milestones.capture_latency.max_s"] == 2 * 3600
    assert out["milestones.capture_latency.p50_s"] == (600 + 7200) / 2
    assert out["milestones.bracket_width.max_s"] == 2 * 3600 + 60
    assert out["milestones.bracket_width.count"] == 2


def test_a_crossing_whose_deadline_is_not_passed_is_undecided() -> None:
    cross = _crossings([(A, 100_000, T0 + HOUR_MS, True)])
    log = Log()
    log.taken(T0 + HOUR_MS - MINUTE_MS, A, 99_000)
    log.ended(T0 + HOUR_MS + 30 * MINUTE_MS)
    out = log.reduce(MilestoneCapture(cross, bound_ms=HOUR_MS))
    assert out["invariants.missed_milestones.violations"] == 0
    assert out["invariants.missed_milestones.undecided"] == 1
    assert out["milestones.crossed"] == 1
    in_time = Log()
    in_time.taken(T0 + HOUR_MS + 59 * MINUTE_MS, A, 100_000)
    in_time.ended(T0 + 3 * HOUR_MS)
    out = in_time.reduce(MilestoneCapture(cross, bound_ms=HOUR_MS))
    assert out["invariants.missed_milestones.violations"] == 0
    assert out["invariants.missed_milestones.undecided"] == 0
    assert out["milestones.bracket_width.count"] == 0  # no snapshot below 100k was logged


def test_only_a_snapshot_at_or_after_the_crossing_captures_it() -> None:
    cross = _crossings([(A, 100_000, T0 + HOUR_MS, True)])
    log = Log()
    log.taken(T0 + HOUR_MS - 1, A, 100_000)  # before t*: cannot show the crossing
    log.taken(T0 + HOUR_MS, A, 100_001)
    log.ended(T0 + 3 * HOUR_MS)
    out = log.reduce(MilestoneCapture(cross, bound_ms=HOUR_MS))
    assert out["milestones.captured"] == 1
    assert out["milestones.capture_latency.max_s"] == 0


# -- wiring -------------------------------------------------------------------------------------


def test_invariant_reducers_take_the_run_switches() -> None:
    design = invariant_reducers(DESIGN, DESIGN_PARAMS)
    deployed = invariant_reducers(CVSA_2026, CVSA_2026_PARAMS)
    assert [type(r).__name__ for r in design] == [
        "WindowCapInvariant",
        "NoScheduleBeforeCreation",
        "LifecycleInvariants",
        "StaleSongs",
        "MilestoneCapture",
    ]
    assert isinstance(design[0], WindowCapInvariant)
    assert isinstance(deployed[0], WindowCapInvariant)
    assert (design[0].cap, deployed[0].cap) == (1000, 3000)
    assert isinstance(design[1], NoScheduleBeforeCreation)
    assert isinstance(deployed[1], NoScheduleBeforeCreation)
    assert (design[1].bare_fallback, deployed[1].bare_fallback) == (False, True)
    assert isinstance(design[2], LifecycleInvariants)
    assert isinstance(deployed[2], LifecycleInvariants)
    assert (design[2].bulk_marks_processing, deployed[2].bulk_marks_processing) == (True, False)
