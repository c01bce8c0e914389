"""Finding ``capacity``: capped demand per local day against the windows' capacity.

Two runs of tests/data/small.toml (one day) judge it: with a cap of 1 row per window (288 a day)
the archive pass and the regular rows saturate the windows; with the design's 1000 they hold.
A steady stream of rows placed by the real ``adjustSnapshotTime`` (in target order, as the
fluid model assumes) checks the measured backlog growth against the fluid model.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from sim.cvsa.windows import adjust_snapshot_time, run_against
from sim.metrics.findings import Capacity
from sim.runner import run_scenario
from sim.scenario import load_scenario
from sim.scheduler.deployment import build_cvsa_model
from sim.units import DAY_MS, HOUR_MS, MINUTE_MS
from tests.metrics.loglib import Log

DATA = Path(__file__).parents[1] / "data"
T0 = 1_925_395_200_000  # 2031-01-06T00:00:00+08:00, local midnight
TZ = 8 * HOUR_MS
WINDOW_MS = 5 * MINUTE_MS
SPAN_MS = 4032 * WINDOW_MS


def _capacity(overrides: list[str]) -> dict[str, object]:
    scenario = load_scenario(DATA / "small.toml", overrides=overrides)
    metrics = run_scenario(scenario, build_cvsa_model).metrics
    p = "findings.capacity."
    return {k[len(p) :]: v for k, v in metrics.items() if k.startswith(p)}


def test_small_cap_saturates() -> None:
    f = _capacity(["design.window_cap=1"])
    assert f["severity"] == "fail"
    assert f["capacity_per_day"] == 288
    assert f["first_saturated_day"] == "2031-01-09"
    assert (f["peak_day"], f["peak_demand"], f["saturated_days"]) == ("2031-01-16", 768, 9)
    # The archive pass books days ahead: 264 of its rows find the whole 14-day search full
    # (pushed the whole span); rows requested for the coming day wait 4.7 h.
    assert (f["spilled_rows"], f["horizon_max_h"], f["horizon_end_h"]) == (264, 336.0, 4.675)
    assert f["sentence"] == (
        "The windows saturate from day 4 (2031-01-09, booked ahead: the run ended on day 1): "
        "demand 669/day against capacity 288/day on 9 day(s) (peak 768 on 2031-01-16, 267%); "
        "over the run's 1 day(s) demand averaged 32% of capacity. A row requested for the "
        "coming day waited 4.7h for a window at the end; the fluid model, which serves rows in "
        "target order, says 0."
    )


def test_design_cap_holds() -> None:
    f = _capacity([])
    assert f["severity"] == "ok"
    assert (f["capacity_per_day"], f["peak_demand"], f["saturated_days"]) == (288_000, 768, 0)
    assert f["sentence"] == (
        "The windows hold with 99.7% headroom (peak day 2031-01-16, booked ahead: 768 of "
        "288,000 capped rows); placement pushed rows at most 5m past their target (5m for rows "
        "requested on the last day); uncapped milestone/new rows add up to 0.3% of a day's "
        "capacity."
    )


def _judge(rows: list[tuple[int, int]], cap: int, days: int) -> dict[str, object]:
    """Place ``rows`` (creation instant, target), in that order, with the deployed search on a
    plain counter (reference §6.2), and judge them with the finding."""
    counter: dict[int, int] = {}
    rng = random.Random(1)
    log = Log()
    for i, (t, target) in enumerate(rows):
        search = adjust_snapshot_time(
            target,
            t,
            cap=cap,
            forward_windows=4032,
            backward_windows=6,
            bare_fallback=False,
            window_ms=WINDOW_MS,
            rng=rng,
        )
        placed = run_against(search, counter)
        log.created(t, i, i, due=placed.time_ms, requested=target, placement=placed.outcome)
    reducer = Capacity(
        cap, WINDOW_MS, SPAN_MS, T0, T0 + days * DAY_MS, TZ, warn_share=0.8, fail_share=1.0
    )
    result = log.reduce(reducer, cuts=range(0, len(rows), 1000))
    return {k.removeprefix("findings.capacity."): v for k, v in result.items()}


def _steady(per_day: int, cap: int, days: int) -> dict[str, object]:
    """``per_day`` normal rows a day, each targeting its creation instant (target order)."""
    instants = [T0 + i * DAY_MS // per_day for i in range(per_day * days)]
    return _judge([(t, t) for t in instants], cap, days)


def test_backlog_grows_as_the_fluid_model_says() -> None:
    # 864 rows a day against 2 x 288 = 576 slots: (864 - 576) / 576 = 0.5 day more each day.
    f = _steady(864, 2, 4)
    assert f["severity"] == "fail"
    assert (f["first_saturated_day"], f["saturated_days"]) == ("2031-01-06", 4)
    assert f["fluid_growth_h_per_day"] == 12.0
    assert f["fluid_horizon_end_h"] == 48.0
    # Measured: the last row of each day is pushed 0.5 day further; within 2 % of the model.
    assert f["horizon_growth_h_per_day"] == pytest.approx(12.0, rel=0.02)
    assert f["horizon_end_h"] == pytest.approx(48.0, rel=0.02)


def test_under_capacity_stream_holds() -> None:
    # 400 rows a day against 576 slots: share 0.69, below warn_share 0.8; nothing is pushed out
    # of its own window.
    f = _steady(400, 2, 4)
    assert f["severity"] == "ok"
    assert (f["peak_share"], f["saturated_days"], f["fluid_horizon_end_h"]) == (0.6944, 0, 0.0)
    assert float(f["horizon_max_h"]) <= WINDOW_MS / HOUR_MS


def test_warns_near_capacity() -> None:
    f = _steady(500, 2, 2)  # share 0.868 >= 0.8
    assert (f["severity"], f["peak_share"]) == ("warn", 0.8681)


def test_rows_booked_ahead_hold_the_windows_first() -> None:
    # Day 1 books 3 days of full windows ahead (288 a day at a cap of 1: days 2-4), then day 2
    # asks for 12 rows for itself. By target day the demand is 300 on day 2 (the fluid model:
    # 12/288 day, 1 h), but the windows serve in booking order: the 12 rows find days 2-4 full
    # and wait until day 5, some 2.5 days (the measured horizon exceeds the model's).
    ahead = [(T0, T0 + DAY_MS + i * WINDOW_MS) for i in range(3 * 288)]
    late = [(T0 + DAY_MS + 12 * HOUR_MS + i * WINDOW_MS, T0 + DAY_MS + 12 * HOUR_MS + i * WINDOW_MS)
            for i in range(12)]  # fmt: skip
    f = _judge(ahead + late, 1, 2)
    assert (f["severity"], f["first_saturated_day"], f["fluid_horizon_end_h"]) == (
        "fail",
        "2031-01-07",
        1.0,
    )
    assert 59.0 <= float(f["horizon_end_h"]) <= 61.0  # 2.5 days
    by_day = {r["day"]: r for r in f["by_day"]}  # type: ignore[attr-defined]
    assert (by_day["2031-01-07"]["normal"], by_day["2031-01-07"]["horizon_h"]) == (
        300,
        f["horizon_end_h"],
    )
