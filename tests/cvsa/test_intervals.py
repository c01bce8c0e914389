"""Regular intervals (§11.6, §19.8), the regular target (§11.7) and new continuation (§9)."""

from __future__ import annotations

import pytest

from sim.cvsa.intervals import (
    new_continuation_ms,
    regular_dispatch_target_ms,
    regular_interval_for,
    regular_interval_hours,
)
from sim.cvsa.params import CVSA_2026_PARAMS
from sim.cvsa.params import DEFAULT_PARAMS as P
from sim.cvsa.profile import CVSA_2026, DESIGN
from sim.cvsa.snapshots import Snapshot
from sim.units import HOUR_MS, MINUTE_MS, SECOND_MS

T = 1_924_992_000_000
SPAN_23_999_H = 86_396_400  # ms


def test_lookbacks_and_initial_new_offsets() -> None:
    lookbacks = (180_000, 1_200_000, 3_600_000, 10_800_000, 21_600_000, 259_200_000)
    assert P.eta_lookbacks_ms == lookbacks
    assert P.new_initial_offsets_ms == (90_000, 180_000, 300_000, 600_000)


@pytest.mark.parametrize(
    ("views_per_day", "over_23_999_h", "over_24_h"),
    [(6, 24, 36), (120, 12, 24), (320, 6, 12)],
)
def test_regular_interval_boundaries_of_section_19_8(
    views_per_day: int, over_23_999_h: int, over_24_h: int
) -> None:
    older = Snapshot(T, 1_000)
    assert (
        regular_interval_hours(older, Snapshot(T + SPAN_23_999_H, 1_000 + views_per_day), P)
        == over_23_999_h
    )
    assert (
        regular_interval_hours(older, Snapshot(T + 24 * HOUR_MS, 1_000 + views_per_day), P)
        == over_24_h
    )


def test_regular_interval_table_and_degenerate_cases() -> None:
    o = Snapshot(T, 1_000)
    day = T + 24 * HOUR_MS
    assert regular_interval_hours(o, Snapshot(T + 1, 1_001), P) == 6  # 1 ms apart, +1 view (§19.8)
    assert regular_interval_hours(o, Snapshot(day, 1_000), P) == 72  # no growth
    assert regular_interval_hours(o, Snapshot(day, 1_005), P) == 36
    assert regular_interval_hours(o, Snapshot(day, 900), P) == 36  # a recount down
    assert regular_interval_hours(o, Snapshot(day, 1_100), P) == 24
    assert regular_interval_hours(o, Snapshot(day, 1_300), P) == 12
    assert regular_interval_hours(o, Snapshot(day, 5_000), P) == 6
    # Growth is per day over the whole span: 12 views over 48 h is 6/day minus epsilon -> 36.
    assert regular_interval_hours(o, Snapshot(T + 48 * HOUR_MS, 1_012), P) == 36
    assert regular_interval_hours(o, Snapshot(T + 48 * HOUR_MS, 1_013), P) == 24
    # Degenerate: no baseline, or both at the same instant.
    assert regular_interval_hours(None, o, P) == 0
    assert regular_interval_hours(o, None, P) == 0
    assert regular_interval_hours(o, Snapshot(T, 2_000), P) == 0


def test_regular_dispatch_target() -> None:
    now = T
    # design: now + interval
    assert regular_dispatch_target_ms(now, now - 30 * HOUR_MS, 24, DESIGN, P) == now + 24 * HOUR_MS
    assert regular_dispatch_target_ms(now, None, 0, DESIGN, P) == now
    # deployed: last snapshot + interval, never before now + 1 ms
    assert regular_dispatch_target_ms(now, now - 2 * HOUR_MS, 6, CVSA_2026, P) == now + 4 * HOUR_MS
    assert regular_dispatch_target_ms(now, now - 30 * HOUR_MS, 24, CVSA_2026, P) == now + 1
    assert regular_dispatch_target_ms(now, now - 6 * HOUR_MS, 6, CVSA_2026, P) == now + 1
    assert regular_dispatch_target_ms(now, None, 12, CVSA_2026, P) == now + 12 * HOUR_MS
    assert regular_dispatch_target_ms(now, None, 0, CVSA_2026, P) == now + 1


@pytest.mark.parametrize(
    ("age_ms", "views", "design", "deployed"),
    [
        (1 * HOUR_MS, 5, None, 240 * MINUTE_MS),  # slow, but the floor starts at 2 h deployed
        (2 * HOUR_MS, 19, None, 240 * MINUTE_MS),  # exactly 2 h: not "> 2 h" yet
        (2 * HOUR_MS + 1, 19, None, None),
        # exactly 10 views/h: the note's "> 10/小时" stops; the deployed "vph < 10" continues
        (3 * HOUR_MS, 30, None, 240 * MINUTE_MS),
        (3 * HOUR_MS, 31, 240 * MINUTE_MS, 240 * MINUTE_MS),
        (3 * HOUR_MS, 29, None, None),
        (1 * HOUR_MS, 50, 240 * MINUTE_MS, 240 * MINUTE_MS),  # "> 50" is strict
        (1 * HOUR_MS, 51, 120 * MINUTE_MS, 120 * MINUTE_MS),
        (1 * HOUR_MS, 100, 120 * MINUTE_MS, 120 * MINUTE_MS),
        (1 * HOUR_MS, 101, 60 * MINUTE_MS, 60 * MINUTE_MS),
        (1 * HOUR_MS, 1000, 60 * MINUTE_MS, 60 * MINUTE_MS),
        (1 * HOUR_MS, 1001, 15 * MINUTE_MS, 15 * MINUTE_MS),
        (90 * SECOND_MS, 30, 15 * MINUTE_MS, 15 * MINUTE_MS),  # 1200 views/h on average
        # exactly 48 h: the note's "< 48小时" stops; the deployed "age > 48 h" continues
        (48 * HOUR_MS, 96_000, None, 15 * MINUTE_MS),
        (48 * HOUR_MS - 1, 96_000, 15 * MINUTE_MS, 15 * MINUTE_MS),
        (48 * HOUR_MS + 1, 10**9, None, None),
        (0, 5, 15 * MINUTE_MS, 15 * MINUTE_MS),  # age 0: 5 / 0 = inf views/h
        (0, 0, 240 * MINUTE_MS, 240 * MINUTE_MS),  # 0 / 0 = NaN: no band matches
    ],
)
def test_new_continuation(
    age_ms: int, views: int, design: int | None, deployed: int | None
) -> None:
    assert new_continuation_ms(age_ms, views, DESIGN, P) == design
    assert new_continuation_ms(age_ms, views, CVSA_2026, CVSA_2026_PARAMS) == deployed


def test_new_continuation_negative_age_is_not_stopped_by_the_floor() -> None:
    # Clock skew (snapshot before publication): the floor only applies to positive ages.
    assert new_continuation_ms(-MINUTE_MS, 10, DESIGN, P) == 240 * MINUTE_MS


def test_regular_interval_for_picks_the_deployed_baseline() -> None:
    now = T + 100 * HOUR_MS
    rows = [
        Snapshot(now - 30 * HOUR_MS, 1_000),  # the last at or before now - 24 h
        Snapshot(now - 20 * HOUR_MS, 1_500),
        Snapshot(now - HOUR_MS, 1_010),
    ]
    # 10 views over 29 h: 10 / 29.001 * 24 = 8.3/day -> 24 h
    assert regular_interval_for(rows, now, P) == 24
    # No snapshot before now - 24 h: the closest after it (20 h ago) is the baseline.
    assert regular_interval_for(rows[1:], now, P) == 36  # -490 views
    # Latest older than 24 h: the same row at both ends -> 0 h (the re-poll loop of §10.3).
    assert regular_interval_for(rows[:1], now, P) == 0
    assert regular_interval_for([], now, P) == 0
