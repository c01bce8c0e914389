"""Finding ``periodic``: work run once per slot, from one place; runs cut off; time offline."""

from __future__ import annotations

from sim.events import cvsa_kinds as K
from sim.events import table_kinds as T
from sim.events.engine_kinds import (
    FaultEnded,
    FaultStarted,
    IdleIterations,
    IterationFinished,
    IterationStarted,
)
from sim.metrics.findings import Finding, PeriodicRuns, Severity, findings_in
from tests.metrics.loglib import T0, Log

TZ = 8 * 3_600_000
NAMES = ["tick", "tick#2", "scheduler", "scheduler#2"]
TICK, TICK2, HOLDER, HOLDER2 = range(4)


def _finding(log: Log, policy: str) -> Finding:
    reducer = PeriodicRuns({"tick": 1000}, policy, TZ, warn_twice=1, warn_reentries=1)
    for chunk in log.chunks(cuts=(2, 5)):
        reducer.feed(chunk, NAMES)
    (f,) = findings_in(reducer.result())
    return f


def test_two_deployments_run_the_same_slots() -> None:
    """BullMQ in two deployments: tick runs slots 0-9, tick#2 (half a second behind) runs
    slots 5-9 as well."""
    log = Log()
    log.add(IdleIterations, T0 + 10_000, TICK, T0, T0 + 9_000, 10)
    log.add(IdleIterations, T0 + 10_000, TICK2, T0 + 5_500, T0 + 9_500, 5)
    log.ended(T0 + 10_000)
    f = _finding(log, "bullmq")
    assert f.severity is Severity.WARN
    assert f.numbers["slots_run_twice"] == 5
    assert f.numbers["runs"] == 15
    assert f.sentence.startswith(
        "Periodic work ran more than once as BullMQ job schedulers: 5 slot(s) ran in two "
        "deployments (tick 5)"
    )


def test_a_run_beside_the_previous_one_is_a_re_entry() -> None:
    log = Log()
    log.add(IterationStarted, T0, TICK, T0)
    log.add(IterationStarted, T0 + 1_000, TICK, T0 + 1_000)
    log.add(IterationFinished, T0 + 1_500, TICK, T0, 1)
    log.add(IterationFinished, T0 + 1_600, TICK, T0 + 1_000, 0)
    log.ended(T0 + 2_000)
    f = _finding(log, "bullmq")
    assert (f.numbers["reentries"], f.numbers["failed_runs"], f.numbers["runs"]) == (1, 1, 2)
    assert "1 run(s) started while their job was still running (tick 1)" in f.sentence


def test_table_takeover_counts_the_cut_off_run_and_the_time_offline() -> None:
    log = Log()
    log.add(T.ExecutorLockTaken, T0, HOLDER)
    log.add(IdleIterations, T0 + 4_000, TICK, T0, T0 + 3_000, 4)
    log.add(IterationStarted, T0 + 4_100, TICK, T0 + 4_000)  # cut off: it never finishes
    log.add(FaultStarted, T0 + 4_500, 0, K.FAULT_KIND.code("scheduler_restart"))
    log.add(T.ExecutorLockLost, T0 + 4_500, HOLDER)
    log.add(T.ExecutorLockTaken, T0 + 64_500, HOLDER)
    log.add(T.JobRunInterrupted, T0 + 64_500, TICK, 5, HOLDER, T0 + 4_000, T0 + 4_000)
    log.add(FaultEnded, T0 + 64_500, 0, K.FAULT_KIND.code("scheduler_restart"))
    log.add(IterationStarted, T0 + 64_500, TICK, T0 + 4_000)  # run again at once: no re-entry
    log.add(IterationFinished, T0 + 64_600, TICK, T0 + 4_000, 1)
    log.ended(T0 + 70_000)
    f = _finding(log, "table")
    assert f.severity is Severity.OK
    assert (f.numbers["interrupted_runs"], f.numbers["offline_s"]) == (1, 60.0)
    assert (f.numbers["reentries"], f.numbers["runs"]) == (0, 5)
    assert f.sentence == (
        "Each periodic job ran once per slot from seed 001's job table, run by the one process "
        "holding its lock: 5 runs, none beside another of its job, no slot run by two "
        "deployments; 1 "
        "run(s) cut off by a crash; no process ran the periodic jobs for 1m "
        "(2031-01-06T00:00:04+08:00 for 1m)."
    )


def test_the_series_counts_each_slot_once_per_deployment() -> None:
    """``periodic_runs``: per 5 minutes, runs over the job's slots: a 1 s tick in two
    deployments for the second 5 minutes reads 1 and 0, then 1 and 1."""
    from sim.report.periodic_series import PeriodicSlots
    from sim.report.series import Span

    log = Log()
    log.add(IdleIterations, T0 + 600_000, TICK, T0, T0 + 599_000, 600)
    log.add(IterationStarted, T0 + 300_500, TICK2, T0 + 300_500)
    log.add(IdleIterations, T0 + 600_000, TICK2, T0 + 301_500, T0 + 599_500, 299)
    log.ended(T0 + 600_000)
    series = PeriodicSlots(TZ, {"tick": 1000})
    for chunk in log.chunks(cuts=(2,)):
        series.feed(chunk, NAMES)
    table = series.tables(Span(T0, T0 + 600_000, False))["periodic_runs"]
    assert table.ints("bin_start_ms").tolist() == [T0, T0 + 300_000]  # the end instant's bin: out
    assert table.floats("tick").tolist() == [1.0, 1.0]
    assert table.floats("tick#2").tolist() == [0.0, 1.0]
