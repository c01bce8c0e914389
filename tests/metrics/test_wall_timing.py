"""``LoadMetrics``: query latency per port method, overruns and lag per periodic job."""

from __future__ import annotations

from sim.events import cvsa_kinds as K
from sim.metrics.wall_timing import LoadMetrics
from tests.metrics.loglib import T0, chunks_of, reduce

NAMES = ["store.due_schedules", "counter.incr", "snapshotTick", "bulkSnapshotVideo"]
DUE, INCR, TICK, BULK = 0, 1, 2, 3


def test_query_latency_overruns_and_lag() -> None:
    records = [
        K.PortCall(0, T0, DUE, 1_000),
        K.PortCall(1, T0, DUE, 3_000),
        K.PortCall(2, T0, INCR, 250),
        # snapshotTick at x100: a 1 s period is 10 ms of wall time.
        K.JobTimed(3, T0, TICK, -1, 0, 4_000, 10_000),
        K.JobTimed(4, T0 + 1000, TICK, -1, 2_000, 12_000, 10_000),  # overran, 2 s late
        # A queued job (not periodic): timed, but neither an overrun nor a lag sample.
        K.JobTimed(5, T0 + 1500, BULK, 7, 9_999, 50_000, 0),
    ]
    out = reduce(LoadMetrics(), chunks_of(records, cuts=[2, 4]), NAMES)
    assert out["load.ops.store.due_schedules.count"] == 2
    assert out["load.ops.store.due_schedules.p50_ms"] == 2.0
    assert out["load.ops.store.due_schedules.max_ms"] == 3.0
    assert out["load.ops.counter.incr.max_ms"] == 0.25
    assert out["load.jobs.snapshotTick.count"] == 2
    assert out["load.jobs.snapshotTick.overruns"] == 1
    assert out["load.jobs.snapshotTick.overrun_fraction"] == 0.5
    assert out["load.jobs.snapshotTick.lag.max_s"] == 2.0
    assert out["load.lag.max_s"] == 2.0
    assert not any(k.startswith("load.jobs.bulkSnapshotVideo") for k in out)


def test_a_virtual_run_has_no_load_metrics() -> None:
    assert reduce(LoadMetrics(), chunks_of([]), NAMES) == {}
