"""Seed 003 §5.1's write-path rules (sim.cvsa.write_path), each on its own."""

from __future__ import annotations

import pytest

from sim.cvsa.write_path import (
    WriteParams,
    backpressure_next,
    connection_for,
    flush_deadline_ms,
    flush_now,
    regular_dispatch_runs,
    service_ms,
    tick_limit,
)

P = WriteParams()
BP = WriteParams(backpressure_high_rows=500, backpressure_low_rows=100, slowed_share=0.25)


def test_defaults_are_seed_003s() -> None:
    assert (P.flush_rows, P.flush_interval_ms) == (100, 1000)  # 攒够 100 条或者攒够 1 秒


def test_flush_at_100_rows_or_after_1_s() -> None:
    assert [flush_now(n, P) for n in (1, 99, 100)] == [False, False, True]
    assert flush_deadline_ms(5_000, P) == 6_000


def test_service_time_is_statement_plus_latency_plus_rows_at_rate() -> None:
    p = WriteParams(rows_per_second=300, statement_ms=2)
    assert service_ms(1, p) == 2 + 4  # 3.33 ms rounds up: the connection is held
    assert service_ms(100, p) == 2 + 334
    assert service_ms(100, p, extra_latency_ms=150) == 2 + 150 + 334


def test_a_flush_takes_the_connection_that_frees_first() -> None:
    assert connection_for([500, 200, 200], 0) == (1, 200)  # lowest index on a tie
    assert connection_for([500, 200, 200], 300) == (1, 300)  # free already: starts now


def test_backpressure_has_hysteresis() -> None:
    assert [backpressure_next(False, n, BP) for n in (499, 500)] == [False, True]
    assert [backpressure_next(True, n, BP) for n in (500, 101, 100, 0)] == [
        True,
        True,
        False,
        False,
    ]
    assert backpressure_next(False, 10**9, P) is False  # no high mark: never


def test_ticks_take_a_share_and_dispatchers_hold_back_under_backpressure() -> None:
    """The 1 s tick of milestone and new rows may be spared (spare_hot_tick)."""
    assert [tick_limit(1000, on, BP, hot=False) for on in (False, True)] == [1000, 250]
    assert tick_limit(2, True, BP, hot=True) == 1  # at least one row
    spare = WriteParams(backpressure_high_rows=500, spare_hot_tick=True)
    assert [tick_limit(10, True, spare, hot=h) for h in (True, False)] == [10, 2]
    assert [regular_dispatch_runs(on) for on in (False, True)] == [True, False]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"flush_rows": 0}, "flush_rows must be >= 1"),
        ({"connections": 0}, "connections must be >= 1"),
        ({"rows_per_second": 0.0}, "rows_per_second must be > 0"),
        ({"backpressure_high_rows": 10, "backpressure_low_rows": 10}, "below"),
        ({"slowed_share": 0.0}, "slowed_share"),
    ],
)
def test_bad_numbers_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        WriteParams(**kwargs)  # type: ignore[arg-type]
