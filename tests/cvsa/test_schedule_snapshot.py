"""scheduleSnapshot's decision (reference §5, §19.11, §19.12)."""

from __future__ import annotations

from sim.cvsa.params import DEFAULT_PARAMS as P
from sim.cvsa.profile import CVSA_2026, DESIGN
from sim.cvsa.schedule import ActiveRow, Insert, Move, Skip, plan_schedule_snapshot
from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType
from sim.cvsa.windows import Incr
from sim.units import MINUTE_MS, WINDOW_MS

T = 1_924_992_000_000  # a window start
MS, NEW, NORMAL, ARCHIVE = (
    ScheduleType.MILESTONE,
    ScheduleType.NEW,
    ScheduleType.NORMAL,
    ScheduleType.ARCHIVE,
)


def test_insert_adjusts_normal_and_archive_only() -> None:
    for switches in (DESIGN, CVSA_2026):
        for kind, adjust in ((NORMAL, True), (ARCHIVE, True), (MS, False), (NEW, False)):
            plan = plan_schedule_snapshot(
                kind, T + 7, [], force=False, adjust_time=True, switches=switches, params=P
            )
            exact = Insert(T + 7, adjust=False, incr=Incr(T, +1), exact=True)
            assert plan == (Insert(T + 7, adjust=True, incr=None, exact=False) if adjust else exact)
    plan = plan_schedule_snapshot(
        NORMAL, T + 7, [], force=False, adjust_time=False, switches=DESIGN, params=P
    )
    assert plan == Insert(T + 7, adjust=False, incr=Incr(T, +1), exact=False)


def test_unadjusted_insert_increments_its_window_without_a_cap() -> None:
    plan = plan_schedule_snapshot(
        NEW, T + WINDOW_MS + 5, [], force=False, adjust_time=True, switches=DESIGN, params=P
    )
    assert isinstance(plan, Insert)
    assert plan.incr == Incr(T + WINDOW_MS, +1)


def test_an_active_row_blocks_unless_forced() -> None:
    active = [ActiveRow(1, ScheduleStatus.PENDING, T)]
    assert plan_schedule_snapshot(
        NEW, T + 1, active, force=False, adjust_time=True, switches=CVSA_2026, params=P
    ) == Skip("duplicate_active")
    assert plan_schedule_snapshot(
        NEW, T + 1, active, force=True, adjust_time=True, switches=CVSA_2026, params=P
    ) == Insert(T + 1, adjust=False, incr=Incr(T, +1), exact=True)
    processing = [ActiveRow(2, ScheduleStatus.PROCESSING, T)]
    assert plan_schedule_snapshot(
        NORMAL, T + 1, processing, force=False, adjust_time=True, switches=DESIGN, params=P
    ) == Skip("duplicate_active")


def test_milestone_moves_a_pending_row_earlier_with_its_window_count() -> None:
    later = T + 2 * WINDOW_MS + 10
    active = [ActiveRow(9, ScheduleStatus.PENDING, later)]
    for switches in (DESIGN, CVSA_2026):
        plan = plan_schedule_snapshot(
            MS, T + 30, active, force=False, adjust_time=True, switches=switches, params=P
        )
        assert plan == Move(9, later, T + 30, (Incr(T + 2 * WINDOW_MS, -1), Incr(T, +1)))
        # Same time or later: keep the existing row.
        for target in (later, later + 1):
            assert plan_schedule_snapshot(
                MS, target, active, force=False, adjust_time=True, switches=switches, params=P
            ) == Skip("milestone_not_earlier")


def test_deployed_moves_the_latest_active_row_even_when_processing() -> None:
    active = [
        ActiveRow(1, ScheduleStatus.PENDING, T + 10 * MINUTE_MS),
        ActiveRow(2, ScheduleStatus.PROCESSING, T + 20 * MINUTE_MS),
    ]
    past = T - 5 * MINUTE_MS  # nothing clamps a move to the future (§19.11)
    assert plan_schedule_snapshot(
        MS, past, active, force=False, adjust_time=True, switches=CVSA_2026, params=P
    ) == Move(2, T + 20 * MINUTE_MS, past, ())
    # Design moves the latest *pending* row instead, with its window count.
    assert plan_schedule_snapshot(
        MS, past, active, force=False, adjust_time=True, switches=DESIGN, params=P
    ) == Move(1, T + 10 * MINUTE_MS, past, (Incr(T + 2 * WINDOW_MS, -1), Incr(T - WINDOW_MS, +1)))


def test_design_does_not_move_a_processing_only_row() -> None:
    active = [ActiveRow(4, ScheduleStatus.PROCESSING, T + 20 * MINUTE_MS)]
    assert plan_schedule_snapshot(
        MS, T, active, force=False, adjust_time=True, switches=DESIGN, params=P
    ) == Skip("duplicate_active")
    assert plan_schedule_snapshot(
        MS, T, active, force=False, adjust_time=True, switches=CVSA_2026, params=P
    ) == Move(4, T + 20 * MINUTE_MS, T, ())


def test_equal_times_move_the_newer_row() -> None:
    active = [
        ActiveRow(3, ScheduleStatus.PENDING, T + MINUTE_MS),
        ActiveRow(7, ScheduleStatus.PENDING, T + MINUTE_MS),
    ]
    plan = plan_schedule_snapshot(
        MS, T, active, force=False, adjust_time=True, switches=DESIGN, params=P
    )
    assert isinstance(plan, Move)
    assert plan.row_id == 7
