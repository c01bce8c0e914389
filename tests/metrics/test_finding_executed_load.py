"""Finding ``executed_load``: snapshots executed per window against the cap (reference §6.2),
requests per proxy against the rate limits (§14.2)."""

from __future__ import annotations

from typing import Any

import pytest

from sim.events import cvsa_kinds as K
from sim.metrics.findings import ExecutedLoad
from sim.scenario.thresholds import ExecutedLoadThresholds
from tests.metrics.loglib import T0, Log

W = 300_000
TZ = 8 * 3_600_000
CAP = 4
NAMES = ["snapshot", "alicloud_hangzhou", "cf-worker"]
ALI, CF = 1, 2
SINGLE, BULK = K.UPSTREAM_CALL.code("single"), K.UPSTREAM_CALL.code("bulk")
OK = K.PROXY_OUTCOME.code("ok")
P = "findings.executed_load."


def executed_load(**overrides: Any) -> ExecutedLoad:
    return ExecutedLoad(
        TZ,
        W,
        CAP,
        {"alicloud_hangzhou": 6, "cf-worker": 6},
        {"alicloud_hangzhou": 2},
        **{**ExecutedLoadThresholds().model_dump(), **overrides},
    )


def request(log: Log, t: int, proxy: int, call: int = SINGLE, latency: int = 500) -> None:
    log.add(K.UpstreamRequest, t, proxy, call, 1, latency, OK)


def reduce(log: Log, reducer: ExecutedLoad, cuts: list[int] | None = None) -> dict[str, Any]:
    for chunk in log.chunks(cuts or []):
        reducer.feed(chunk, NAMES)
    return reducer.result()


def within_log() -> Log:
    """Window 0: 4 normal snapshots (the cap) and their 4 requests; window 1: 2 milestone
    snapshots; a discovery snapshot (not scheduled: not counted)."""
    log = Log()
    for i in range(4):
        log.taken(T0 + 1000 * i, 100 + i, s=i, type="normal")
        request(log, T0 + 1000 * i + 1000, ALI)  # sent 500 ms before
    log.taken(T0 + W + 10, 200, s=10, type="milestone")
    log.taken(T0 + W + 20, 201, s=11, type="milestone")
    request(log, T0 + W + 1000, CF)
    log.taken(T0 + W + 30, 300)
    return log


def test_a_load_within_the_cap_and_the_limits_is_ok() -> None:
    m = reduce(within_log(), executed_load(), cuts=[3])
    assert m[P + "severity"] == "ok"
    assert (m[P + "peak_per_window"], m[P + "windows"], m[P + "windows_over_cap"]) == (4, 2, 0)
    assert m[P + "requests.alicloud_hangzhou.peak"] == 4
    assert m[P + "requests.alicloud_hangzhou.bulk.peak"] == 0
    assert m[P + "requests.cf-worker.peak"] == 1
    assert m[P + "examples"] == []
    assert m[P + "sentence"] == (
        "Every window executed at most the cap of 4 snapshots (the most 4, "
        "2031-01-06T00:00:00+08:00); peak requests per window within every limit "
        "(alicloud_hangzhou 4/6, alicloud_hangzhou bulk 0/2, cf-worker 1/6)."
    )


def over_log() -> Log:
    """Window 1 executes 4 normal rows due in it, 1 normal row due in window 0 (run late) and
    2 new rows: 7, 3 over the cap of 4 (75 %). Window 2: 5 normal rows due in it, 1 over."""
    log = Log()
    w1, w2 = T0 + W, T0 + 2 * W
    for i in range(4):
        log.taken(w1 + 100 * i, 100 + i, s=i, type="normal")
    log.add(K.SnapshotTaken, w1 + 500, 150, 50, K.SNAPSHOT_TYPE.code("normal"), T0 + 1, 0, 0, w1)
    log.taken(w1 + 600, 160, s=60, type="new")
    log.taken(w1 + 700, 161, s=61, type="new")
    for i in range(5):
        log.taken(w2 + 100 * i, 400 + i, s=70 + i, type="normal")
    return log


def test_windows_over_the_cap_warn_or_fail_by_their_share() -> None:
    m = reduce(over_log(), executed_load(), cuts=[5, 9])
    assert m[P + "severity"] == "warn"  # 75 % over: past 10 %, short of 100 %
    assert (m[P + "peak_per_window"], m[P + "windows_over_cap"]) == (7, 2)
    assert (m[P + "max_over_cap"], m[P + "max_over_cap_share"]) == (3, 0.75)
    # 4 over in all: 2 new rows, 1 row run late, 1 of window 2's own rows.
    assert m[P + "over_cap_total"] == 4
    assert (m[P + "over_cap_uncapped_share"], m[P + "over_cap_carried_share"]) == (0.5, 0.25)
    assert m[P + "examples"] == [
        {
            "window": "2031-01-06T00:05:00+08:00",
            "executed": 7,
            "over_cap": 3,
            "new": 2,
            "normal": 5,
            "run_after_their_window": 1,
        },
        {
            "window": "2031-01-06T00:10:00+08:00",
            "executed": 5,
            "over_cap": 1,
            "normal": 5,
            "run_after_their_window": 0,
        },
    ]
    assert m[P + "sentence"] == (
        "2 windows executed more snapshots than the cap of 4, the most 7 (75% over, "
        "2031-01-06T00:05:00+08:00); of the 4 snapshots over the cap, 50% were milestone and new "
        "rows (which the cap does not hold), 25% rows run after their own window, 25% rows the "
        "counter let in after others left pending."
    )
    assert reduce(over_log(), executed_load(fail_over_cap_share=0.75))[P + "severity"] == "fail"
    assert reduce(over_log(), executed_load(warn_over_cap_share=0.8))[P + "severity"] == "ok"


def test_a_proxy_over_its_rate_limit_fails() -> None:
    log = within_log()
    # 3 bulk requests sent in window 0 (answered in window 1: counted when sent), limit 2.
    for i in range(3):
        request(log, T0 + W + 100 * i, ALI, BULK, latency=W)
    m = reduce(log, executed_load())
    assert m[P + "severity"] == "fail"
    assert m[P + "requests.alicloud_hangzhou.peak"] == 7  # over its limit of 6 too
    assert m[P + "requests.alicloud_hangzhou.bulk.windows_over"] == 1
    assert m[P + "requests.cf-worker.windows_over"] == 0
    assert m[P + "sentence"] == (
        "Every window executed at most the cap of 4 snapshots (the most 4, "
        "2031-01-06T00:00:00+08:00); over the rate limits: alicloud_hangzhou sent 7 requests in "
        "the window of 2031-01-06T00:00:00+08:00 (limit 6; 1 window over); alicloud_hangzhou "
        "bulk sent 3 requests in the window of 2031-01-06T00:00:00+08:00 (limit 2; 1 window "
        "over)."
    )


@pytest.mark.parametrize("cuts", [[1], [4, 5, 6]])
def test_chunking_does_not_change_the_finding(cuts: list[int]) -> None:
    assert reduce(over_log(), executed_load(), cuts) == reduce(over_log(), executed_load())
