"""Finding ``levelling``: the delay adjustSnapshotTime adds to capped rows (reference §6.2)."""

from __future__ import annotations

from typing import Any

import pytest

from sim.metrics.findings import Levelling
from sim.scenario.thresholds import LevellingThresholds
from tests.metrics.loglib import T0, Log

W = 300_000  # the 5-minute window
TZ = 8 * 3_600_000
MIN, HOUR = 60_000, 3_600_000


def levelling(**overrides: Any) -> Levelling:
    return Levelling(TZ, W, **{**LevellingThresholds().model_dump(), **overrides})


def quiet_log() -> Log:
    """Ten normal rows, each placed in its own target's window (moved by 0..9 s); an archive
    row with room likewise; a milestone row (placed exactly, not levelled)."""
    log = Log()
    target = T0 + 2 * HOUR
    for i in range(10):
        log.created(T0, i, 100 + i, "normal", requested=target, due=target + i * 1000)
    log.created(T0, 10, 200, "archive", requested=target + 10_000, due=target + 20_500)
    log.created(T0, 11, 300, "milestone", requested=T0 + MIN, due=T0 + MIN, placement="exact")
    return log


def test_rows_placed_in_their_own_window_are_ok() -> None:
    m = quiet_log().reduce(levelling(), cuts=[4])
    p = "findings.levelling."
    assert m[p + "severity"] == "ok"
    assert m[p + "rows"] == 11  # the milestone row is not levelled
    assert m[p + "pushed"] == 0
    assert (m[p + "normal.delay_p50_s"], m[p + "normal.delay_p99_s"]) == (4, 9)
    assert m[p + "normal.delay_max_s"] == 9
    assert m[p + "archive.delay_p99_s"] == 10
    assert m[p + "examples"] == []
    assert m[p + "sentence"] == (
        "Levelling moved 0% of 11 capped rows out of their target's 5-minute window; the p99 "
        "delay (due minus requested time) was 9s for normal (warn at 1h) and 10s for archive "
        "(warn at 1d): within the thresholds."
    )
    assert m[p + "thresholds.warn_p99_s"] == 3600
    assert m[p + "thresholds.fail_p99_archive_s"] == 7 * 86_400


def spilled_log() -> Log:
    """Twenty normal rows with one target: 4 stay in its window, the others are pushed 16, 32,
    48 and 64 windows forward, 4 to each (as runs of full windows would push them)."""
    log = Log()
    target = T0 + 2 * HOUR  # a window start
    for i in range(20):
        due = target + (i // 4) * 16 * W + 1000
        log.created(T0, i, 100 + i, "normal", requested=target, due=due)
    return log


def test_rows_pushed_hours_past_their_window_warn_then_fail() -> None:
    log = spilled_log()
    p = "findings.levelling."
    m = log.reduce(levelling(), cuts=[7, 13])
    # Delays: 4 rows each at 1 s, 80 min, 160 min, 240 min, 320 min (16 windows apart).
    assert m[p + "rows"] == 20
    assert m[p + "pushed"] == 16
    assert m[p + "pushed_share"] == 0.8
    assert m[p + "normal.delay_p50_s"] == 160 * 60 + 1
    assert m[p + "normal.delay_p99_s"] == m[p + "normal.delay_max_s"] == 320 * 60 + 1
    assert m[p + "severity"] == "warn"  # 5.3 h: over 1 h, under 6 h
    assert m[p + "examples"] == [
        {
            "window": "2031-01-06T02:00:00+08:00",
            "pushed": 16,
            "max_delay": "5.3h",
            "aid": 119,  # the last of the largest delays
            "type": "normal",
        }
    ]
    assert m[p + "sentence"] == (
        "Levelling moved 80% of 20 capped rows out of their target's 5-minute window, the most "
        "from the window of 2031-01-06T02:00:00+08:00 (16 rows; the furthest, a normal row, by "
        "5.3h); the p99 delay (due minus "
        "requested time) was 5.3h for normal (warn at 1h): over the threshold for normal."
    )
    assert log.reduce(levelling(fail_p99=5 * HOUR))[p + "severity"] == "fail"
    assert log.reduce(levelling(warn_p99=6 * HOUR))[p + "severity"] == "ok"


@pytest.mark.parametrize("cuts", [[], [1], [5, 6, 19]])
def test_chunking_does_not_change_the_finding(cuts: list[int]) -> None:
    assert spilled_log().reduce(levelling(), cuts=cuts) == spilled_log().reduce(levelling())
