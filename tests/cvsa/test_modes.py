"""Seed 003 §5.1's traffic modes (sim.cvsa.modes), each rule on its own."""

from __future__ import annotations

import pytest

from sim.cvsa.modes import (
    ModeParams,
    deferred,
    deferred_due_before_ms,
    degraded_next,
    in_peak,
    kept_before_ms,
    mode_of,
    next_peak_edge_ms,
    split_types,
)
from sim.cvsa.vocabulary import ScheduleType, TrafficMode
from sim.units import HOUR_MS, MINUTE_MS

NEW, MILESTONE, NORMAL, ARCHIVE = (
    ScheduleType.NEW,
    ScheduleType.MILESTONE,
    ScheduleType.NORMAL,
    ScheduleType.ARCHIVE,
)
TZ = 8 * HOUR_MS
MIDNIGHT = 1_925_395_200_000  # 2031-01-06T00:00+08:00
EVENING = ModeParams(peak_windows_ms=((19 * HOUR_MS, 23 * HOUR_MS),))
LATE = ModeParams(peak_windows_ms=((23 * HOUR_MS, 1 * HOUR_MS),))


def test_peak_windows_are_local_times_of_day_and_may_wrap_midnight() -> None:
    at = [MIDNIGHT + h * HOUR_MS for h in (18, 19, 22, 23, 24, 25)]
    assert [in_peak(t, TZ, EVENING) for t in at] == [False, True, True, False, False, False]
    assert [in_peak(t, TZ, LATE) for t in at] == [False, False, False, True, True, False]


def test_the_next_edge_is_the_next_opening_or_closing() -> None:
    assert next_peak_edge_ms(MIDNIGHT, TZ, EVENING) == MIDNIGHT + 19 * HOUR_MS
    assert next_peak_edge_ms(MIDNIGHT + 19 * HOUR_MS, TZ, EVENING) == MIDNIGHT + 23 * HOUR_MS
    assert next_peak_edge_ms(MIDNIGHT + 23 * HOUR_MS, TZ, EVENING) == MIDNIGHT + 43 * HOUR_MS
    assert next_peak_edge_ms(MIDNIGHT, TZ, ModeParams()) is None


def test_degraded_mode_has_hysteresis() -> None:
    p = ModeParams(degrade_at_rows=500, recover_at_rows=100)
    assert [degraded_next(False, n, p) for n in (499, 500)] == [False, True]
    assert [degraded_next(True, n, p) for n in (101, 100)] == [True, False]
    assert degraded_next(False, 10**9, ModeParams()) is False


def test_degraded_wins_over_peak_over_default() -> None:
    assert mode_of(peak=True, degraded=True) is TrafficMode.DEGRADED
    assert mode_of(peak=True, degraded=False) is TrafficMode.PEAK
    assert mode_of(peak=False, degraded=False) is TrafficMode.DEFAULT


def test_hot_work_always_runs_and_cold_work_waits_in_a_mode() -> None:
    p = ModeParams(peak_defers=frozenset({ARCHIVE}))
    assert [deferred(t, TrafficMode.PEAK, p) for t in (NEW, MILESTONE, NORMAL, ARCHIVE)] == [
        False,
        False,
        False,
        True,
    ]
    assert [deferred(t, TrafficMode.DEGRADED, p) for t in (NEW, MILESTONE, NORMAL, ARCHIVE)] == [
        False,
        False,
        True,
        True,
    ]
    assert not any(deferred(t, TrafficMode.DEFAULT, p) for t in ScheduleType)
    assert split_types((NORMAL, ARCHIVE), TrafficMode.PEAK, p) == ((NORMAL,), (ARCHIVE,))
    assert split_types((NEW, MILESTONE), TrafficMode.PEAK, p) == ((NEW, MILESTONE), ())


def test_deferral_is_bounded_and_cleanup_keeps_deferred_rows_for_the_bound() -> None:
    p = ModeParams(max_defer_ms=6 * HOUR_MS)
    assert deferred_due_before_ms(MIDNIGHT, p) == MIDNIGHT - 6 * HOUR_MS
    cutoff = MIDNIGHT - 2 * MINUTE_MS
    assert kept_before_ms(cutoff, p) == {
        NORMAL: cutoff - 6 * HOUR_MS,
        ARCHIVE: cutoff - 6 * HOUR_MS,
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"peak_windows_ms": ((HOUR_MS, HOUR_MS),)}, "two distinct times"),
        ({"peak_defers": frozenset({MILESTONE})}, "only normal and archive"),
        ({"degrade_at_rows": 10, "recover_at_rows": 10}, "below degrade_at_rows"),
        ({"max_defer_ms": 1000}, "at least 1 minute"),
    ],
)
def test_bad_numbers_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ModeParams(**kwargs)  # type: ignore[arg-type]
