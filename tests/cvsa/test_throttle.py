"""The adaptive response's rule (issue 28; seed 003 §6.3): window, drop, restore, hysteresis."""

from __future__ import annotations

import pytest

from sim.cvsa.throttle import (
    FULL,
    AdaptiveRate,
    AnswerWindow,
    ThrottleParams,
    budget_per_window,
    react,
)

P = ThrottleParams(
    window_ms=10_000,
    threshold_permille=200,
    restore_below_permille=50,
    min_answers=4,
    lower_permille=500,
    floor_permille=100,
    restore_step_permille=100,
    restore_period_ms=5000,
)


def test_window_slides_and_counts_throttled() -> None:
    w = AnswerWindow(10_000)
    for t, bad in ((0, True), (1000, False), (2000, False), (3000, True)):
        w.add(t, bad)
    assert (len(w), w.throttled, w.share_permille()) == (4, 2, 500)
    w.add(10_000, False)  # the answer at 0 is now outside (0, 10 000]
    assert (len(w), w.throttled, w.share_permille()) == (4, 1, 250)
    w.evict(13_000)
    assert (len(w), w.share_permille()) == (1, 0)
    assert AnswerWindow(5).share_permille() == 0


def test_react_drops_above_threshold_not_at_it() -> None:
    assert react(P, FULL, None, 10, 201, 0) == (500, "drop")
    assert react(P, FULL, None, 10, 200, 0) is None  # at the threshold: no drop
    assert react(P, FULL, None, 3, 1000, 0) is None  # too few answers to cut the rate
    assert react(P, 500, 0, 1, 0, 5000) == (600, "restore")  # ... but enough to restore


def test_react_waits_a_window_between_drops_and_stops_at_the_floor() -> None:
    assert react(P, 500, 0, 10, 900, 9999) is None
    assert react(P, 500, 0, 10, 900, 10_000) == (250, "drop")
    assert react(P, 150, 0, 10, 900, 10_000) == (100, "drop")  # 75 floored to 100
    assert react(P, 100, 0, 10, 900, 50_000) is None


def test_react_restores_gradually_below_the_lower_threshold_only() -> None:
    assert react(P, 250, 0, 10, 50, 4999) is None  # restore period not over
    assert react(P, 250, 0, 10, 50, 5000) == (350, "restore")
    assert react(P, 250, 0, 10, 51, 60_000) is None  # between the thresholds: hold
    assert react(P, 950, 0, 10, 0, 5000) == (FULL, "restore")  # capped at full
    assert react(P, FULL, 0, 10, 0, 5000) is None


def test_adaptive_rate_on_a_scripted_storm() -> None:
    """One answer a second: throttled from 4 s to 20 s, then clean."""
    rate = AdaptiveRate(P)
    changes = []
    for t in range(0, 60_000, 1000):
        change = rate.observe(t, 4000 <= t < 20_000)
        if change is not None:
            changes.append((t, *change))
    assert changes == [
        # Window (t - 10 s, t] at 4 s: answers 0..4 s, 1 of 5 throttled = 200: not above. 5 s: 2/6.
        (5000, 500, "drop"),
        (15_000, 250, "drop"),  # a window after the first drop
        (25_000, 125, "drop"),  # 20..25 s clean but 16..19 s throttled: 4/10 = 400
        # Window at 30 s: 21..30 s, all clean; 5 s since the drop is enough to restore.
        (30_000, 225, "restore"),
        (35_000, 325, "restore"),
        (40_000, 425, "restore"),
        (45_000, 525, "restore"),
        (50_000, 625, "restore"),
        (55_000, 725, "restore"),
    ]
    assert (rate.factor_permille, rate.changed_ms) == (725, 55_000)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"restore_below_permille": 300},  # above the threshold: no hysteresis
        {"floor_permille": 0},
        {"lower_permille": FULL},
        {"window_ms": 0},
    ],
)
def test_params_reject_nonsense(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match=r"need|must"):
        ThrottleParams(**kwargs)  # type: ignore[arg-type]


def test_budget_is_a_share_of_the_rate_before_the_first_drop() -> None:
    rate = AdaptiveRate(P)
    assert rate.budget() is None
    for t in range(0, 6000, 1000):  # 6 answers, the last two throttled: 333 > 200
        rate.observe(t, t >= 4000)
    assert (rate.factor_permille, rate.ref_answers, rate.budget()) == (500, 6, 3)
    assert budget_per_window(6, 100) == 1  # never below one request per window
    assert budget_per_window(40, 250) == 10
