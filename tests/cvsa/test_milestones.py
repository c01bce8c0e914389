"""Milestone ladder, factor, ETA, delays and candidates (reference §11, §19.5, §19.6)."""

from __future__ import annotations

import math

import pytest

from sim.cvsa.milestones import (
    EtaEstimate,
    adjusted_eta_hours,
    bulk_eta_speed,
    closest_milestone,
    eta_table_value,
    lookback_snapshots,
    milestone_candidate,
    milestone_delay_ms,
    milestone_factor,
    milestone_reached,
    to_float4,
)
from sim.cvsa.params import DEFAULT_PARAMS as P
from sim.cvsa.snapshots import Snapshot
from sim.units import HOUR_MS, MINUTE_MS

L = P.milestone_ladder

T = 1_924_992_000_000  # 2031-01-01T00:00:00Z


@pytest.mark.parametrize(
    ("views", "non_strict", "strict"),
    [
        (0, 100_000, 100_000),
        (99_999, 100_000, 100_000),
        (100_000, 1_000_000, 1_000_000),  # 100k itself is not "< 100000"
        (999_999, 1_000_000, 1_000_000),
        (1_000_000, 1_000_000, 10_000_000),  # exact multiple maps to itself when non-strict
        (1_000_001, 2_000_000, 10_000_000),
        (2_000_000, 2_000_000, 10_000_000),
        (9_999_999, 10_000_000, 10_000_000),
        (10_000_000, 10_000_000, 10_000_000),
        (10_000_001, 11_000_000, 11_000_000),
        (12_000_000, 12_000_000, 12_000_000),
    ],
)
def test_closest_milestone(views: int, non_strict: int, strict: int) -> None:
    assert closest_milestone(views, L) == non_strict
    assert closest_milestone(views, L, strict=False) == non_strict
    assert closest_milestone(views, L, strict=True) == strict


# Reference §11.4 "Reference values after truncation" (deployed, piecewise).
@pytest.mark.parametrize(
    ("x", "f"),
    [
        (0, 16.02),
        (10, 15.63),
        (100, 13.35),
        (200, 11.95),
        (455, 10.00),
        (456, 10.00),
        (1000, 7.71),
        (2000, 5.89),
        (3560, 4.50),
    ],
)
def test_factor_reference_values_piecewise(x: int, f: float) -> None:
    assert round(milestone_factor(x, piecewise=True, factor=P.milestone_factor), 2) == f


def test_factor_floor_and_branches() -> None:
    # The floor: the raw piecewise value crosses 4.5 between 3560 and 3561.
    assert milestone_factor(3560, piecewise=True, factor=P.milestone_factor) > 4.5
    for x in (3561, 10_000, 31_622, 31_623, 900_000, 10**9):
        assert milestone_factor(x, piecewise=True, factor=P.milestone_factor) == 4.5
    # Up to the knee both profiles use the note's formula.
    for x in (0, 1, 10, 100, 200, 454, 455):
        assert milestone_factor(x, piecewise=False, factor=P.milestone_factor) == milestone_factor(
            x, piecewise=True, factor=P.milestone_factor
        )
    # Above it the note's formula keeps log10(x + 100) and the +0.601.
    assert round(milestone_factor(456, piecewise=False, factor=P.milestone_factor), 2) == 10.00
    assert round(milestone_factor(1000, piecewise=False, factor=P.milestone_factor), 2) == 8.05
    assert round(milestone_factor(2000, piecewise=False, factor=P.milestone_factor), 2) == 6.37
    assert milestone_factor(4531, piecewise=False, factor=P.milestone_factor) > 4.5
    assert milestone_factor(4532, piecewise=False, factor=P.milestone_factor) == 4.5
    # The ceiling is never reached for x >= 0 (f(0) = 16.02), but truncation is to [4.5, 100].
    assert milestone_factor(0, piecewise=False, factor=P.milestone_factor) == pytest.approx(
        math.log(4.5 / 2) / math.log(1.054) + 0.601, rel=1e-15
    )


def test_factor_rejects_negative_views_to_go() -> None:
    with pytest.raises(ValueError, match="views to go must be >= 0"):
        milestone_factor(-1, piecewise=True, factor=P.milestone_factor)


def test_adjusted_eta_takes_the_fastest_lookback() -> None:
    latest = Snapshot(T, 95_000)  # 5000 to go; factor floors at 4.5 in both profiles
    lookbacks = [
        Snapshot(T - 3 * MINUTE_MS, 94_990),  # 10 views in 0.05 h
        Snapshot(T - 20 * MINUTE_MS, 94_900),  # 100 views in 1/3 h: the fastest
        Snapshot(T - HOUR_MS, 94_800),
        None,
        Snapshot(T - 6 * HOUR_MS, 95_000),  # no growth: skipped
        Snapshot(T - 72 * HOUR_MS, 96_000),  # a recount downwards: skipped
    ]
    speed = 100 / ((20 * MINUTE_MS) / HOUR_MS + 1e-5)
    eta = 5000 / (speed + 1e-5) / 4.5
    assert adjusted_eta_hours(latest, lookbacks, piecewise=True, params=P) == EtaEstimate(
        eta, speed
    )
    assert adjusted_eta_hours(latest, lookbacks, piecewise=False, params=P) == EtaEstimate(
        eta, speed
    )
    assert speed == pytest.approx(299.991, abs=1e-3)
    assert eta == pytest.approx(3.70381, abs=1e-5)


def test_adjusted_eta_uses_the_factor_of_views_to_go() -> None:
    latest = Snapshot(T, 99_900)  # 100 to go: f = 13.35...
    lookbacks = [Snapshot(T - HOUR_MS, 99_800)]
    speed = 100 / (1 + 1e-5)
    expected = (
        100 / (speed + 1e-5) / milestone_factor(100, piecewise=True, factor=P.milestone_factor)
    )
    assert adjusted_eta_hours(latest, lookbacks, piecewise=True, params=P) == (expected, speed)
    assert expected == pytest.approx(0.07488, abs=1e-5)


def test_single_snapshot_gives_infinity_and_the_eta_row_of_section_19_5() -> None:
    latest = Snapshot(T, 95_000)
    result = adjusted_eta_hours(latest, [latest] * 6, piecewise=True, params=P)
    assert result == EtaEstimate(math.inf, 0.0)
    # eta = remaining / 1e-5, stored as float4.
    assert eta_table_value(latest.views, result.max_speed, P.eta_delta, ladder=L) == pytest.approx(
        5e8, rel=1e-15
    )
    assert (
        to_float4(eta_table_value(latest.views, result.max_speed, P.eta_delta, ladder=L))
        == 500_000_000.0
    )
    assert to_float4(499_999_999.99999994) == 500_000_000.0


def test_no_snapshot_at_all_gives_zero() -> None:
    assert adjusted_eta_hours(None, [], piecewise=True, params=P) == EtaEstimate(0.0, 0.0)


def test_exact_milestone_gives_zero_once_there_is_growth() -> None:
    latest = Snapshot(T, 2_000_000)
    grew = [Snapshot(T - 3 * MINUTE_MS, 1_999_000), Snapshot(T - HOUR_MS, 1_990_000)]
    first_speed = 1000 / (0.05 + 1e-5)
    assert adjusted_eta_hours(latest, grew, piecewise=True, params=P) == (0.0, first_speed)
    # Without growth the ETA stays infinite even on the milestone (§19.5 wins over §19.6).
    assert adjusted_eta_hours(latest, [latest], piecewise=True, params=P) == (math.inf, 0.0)


def test_eta_table_uses_the_strict_ladder() -> None:
    # 2M views: non-strict target is 2M (0 to go) but the eta table aims at 10M.
    assert eta_table_value(2_000_000, 1000.0, P.eta_delta, ladder=L) == 8_000_000 / (1000.0 + 1e-5)
    assert eta_table_value(95_000, 100.0, delta=1e-4, ladder=L) == 5000 / (100.0 + 1e-4)
    # A negative speed gives a negative eta (which makes the video a candidate, §10.3).
    assert eta_table_value(95_000, -10.0, P.eta_delta, ladder=L) < 0


def test_bulk_eta_speed_uses_now_and_its_own_epsilon() -> None:
    prev = Snapshot(T - 2 * HOUR_MS, 1_000)
    assert bulk_eta_speed(prev, 1_200, T, 1e-4) == 200 / (2 + 1e-4)
    assert bulk_eta_speed(Snapshot(T, 5), 5, T, 1e-4) == 0.0


@pytest.mark.parametrize(
    ("eta_h", "clamped", "unclamped"),
    [
        (0.0, 2_000, 0),
        (1.5 / 3600, 2_000, 1_500),
        (0.0001, 2_000, 360),
        (1.0, 3_600_000, 3_600_000),
        (1.2, 4_320_000, 4_320_000),
        (2.0, 4_320_000, 7_200_000),
        (144.0, 4_320_000, 518_400_000),  # exactly 144 h still schedules
        (144.000001, None, None),
        (math.inf, None, None),
        (math.nan, None, None),
    ],
)
def test_milestone_delay(eta_h: float, clamped: int | None, unclamped: int | None) -> None:
    assert milestone_delay_ms(eta_h, clamp=True, params=P) == clamped
    assert milestone_delay_ms(eta_h, clamp=False, params=P) == unclamped


def test_milestone_delay_drops_the_fraction_of_a_millisecond() -> None:
    assert milestone_delay_ms(1.0000001e-6, clamp=False, params=P) == 3  # 3.60000036 ms
    assert milestone_delay_ms(0.7 / 3600, clamp=True, params=P) == 2_000


@pytest.mark.parametrize(
    ("views", "is_song", "eta_h", "design", "deployed"),
    [
        (59_999, True, None, False, False),
        (60_000, True, None, False, True),  # set A only
        (60_000, False, None, False, False),
        (89_999, True, None, False, True),
        (90_000, False, None, True, True),  # set B
        (99_999, False, None, True, True),
        (100_000, True, None, False, False),
        (899_999, False, None, False, False),
        (900_000, False, None, True, True),
        (999_999, False, None, True, True),
        (1_000_000, False, None, False, False),  # exact multiple of 1M: out of B
        (1_000_000, True, None, False, False),  # A wants > 1M
        (1_000_001, True, None, False, True),  # every song above 1M
        (1_000_001, False, None, False, False),
        (1_899_999, False, None, False, False),
        (1_900_000, False, None, True, True),  # [M - 100k, M) with M = 2M
        (2_000_000, False, None, False, False),
        (500_000, False, 2299.9, True, True),  # set C
        (500_000, False, 2300.0, False, False),
        (500_000, False, -5.0, True, True),  # negative eta from a recount (§10.3)
        (0, False, None, False, False),
    ],
)
def test_milestone_candidate(
    views: int, is_song: bool, eta_h: float | None, design: bool, deployed: bool
) -> None:
    assert (
        milestone_candidate(
            views, is_song, eta_h, wide=False, eta_below_h=P.milestone_candidate_eta_h, ladder=L
        )
        is design
    )
    assert (
        milestone_candidate(
            views, is_song, eta_h, wide=True, eta_below_h=P.milestone_candidate_eta_h, ladder=L
        )
        is deployed
    )


def test_lookback_snapshots_pick_the_closest_to_each_lookback() -> None:
    rows = [
        Snapshot(T - 80 * HOUR_MS, 1),
        Snapshot(T - 5 * HOUR_MS, 2),
        Snapshot(T - 50 * MINUTE_MS, 3),
        Snapshot(T - 2 * MINUTE_MS, 4),
    ]
    # 3 min -> 2 min ago; 20 min -> 2 min ago (18 min off vs 30); 1 h -> 50 min ago;
    # 3 h -> 5 h ago (2 h off vs 2 h 10 min: 50 min ago is 2 h 10 min away); 6 h -> 5 h ago;
    # 72 h -> 80 h ago (8 h off vs 67 h).
    assert lookback_snapshots(rows, T, P.eta_lookbacks_ms) == [
        rows[3],
        rows[3],
        rows[2],
        rows[1],
        rows[1],
        rows[0],
    ]
    assert lookback_snapshots([], T, P.eta_lookbacks_ms) == [None] * 6


def test_deployed_milestone_is_reached_only_strictly_above_it() -> None:
    # milestone_reached_strict (cvsa-2026, reference §9 step 7): views > closest_milestone(prev)
    assert not milestone_reached(95_000, 99_999, strict=True, ladder=L)
    assert not milestone_reached(
        95_000, 100_000, strict=True, ladder=L
    )  # exactly on it: not reached
    assert milestone_reached(95_000, 100_001, strict=True, ladder=L)
    assert milestone_reached(999_000, 1_000_001, strict=True, ladder=L)
    assert not milestone_reached(
        1_000_000, 1_000_000, strict=True, ladder=L
    )  # on 1M: the target stays 1M
    assert milestone_reached(1_000_000, 1_000_001, strict=True, ladder=L)


def test_design_milestone_is_reached_at_the_milestone() -> None:
    # seed 000 "若已达成成就则不再调度": views >= closest_milestone(prev)
    assert not milestone_reached(95_000, 99_999, strict=False, ladder=L)
    assert milestone_reached(95_000, 100_000, strict=False, ladder=L)  # exactly on it: reached
    assert milestone_reached(999_000, 1_000_000, strict=False, ladder=L)
    assert milestone_reached(
        1_000_000, 1_000_000, strict=False, ladder=L
    )  # on 1M, which is its milestone
