"""Finding ``lost_work``: rows deleted without a snapshot, rows without one, repeats."""

from __future__ import annotations

from sim.events import cvsa_kinds as K
from sim.events.engine_kinds import FaultEnded, FaultStarted
from sim.metrics.findings import Finding, LostWork, Severity, findings_in
from sim.metrics.invariants import LifecycleInvariants
from tests.metrics.loglib import NAMES, T0, Log

TZ = 8 * 3_600_000


def _finding(log: Log, **thresholds: float) -> Finding:
    lifecycle = LifecycleInvariants(bulk_marks_processing=True)
    lost = LostWork(
        lifecycle,
        TZ,
        warn_lost=int(thresholds.get("warn_lost", 1)),
        fail_lost_share=thresholds.get("fail_lost_share", 0.01),
    )
    for chunk in log.chunks(cuts=(3,)):
        lifecycle.feed(chunk, NAMES)
        lost.feed(chunk, NAMES)
    (f,) = findings_in(lost.result())
    return f


def test_ok_when_every_row_got_its_snapshot() -> None:
    log = Log()
    for s in range(3):
        log.created(T0, s, 100 + s)
        log.dispatched(T0 + 60_000, s, 100 + s, "normal", job=s)
        log.started(T0 + 60_000, s, 100 + s, "normal", job=s)
        log.taken(T0 + 61_000, 100 + s, s=s, type="normal")
        log.finished(T0 + 61_000, s, 100 + s, "normal")
        log.job_finished(T0 + 61_000, s)
    log.ended(T0 + 3_600_000)
    f = _finding(log)
    assert f.severity is Severity.OK
    assert f.numbers["rows_created"] == 3
    assert f.numbers["lost"] == 0
    assert f.sentence.startswith("No work was lost or repeated: none of 3 rows")


def test_fails_when_rows_dispatched_before_a_crash_are_deleted_without_a_snapshot() -> None:
    log = Log()
    log.add(FaultStarted, T0, 0, K.FAULT_KIND.code("scheduler_restart"))
    for s in range(4):
        log.created(T0, s, 100 + s, due=T0 + 1_000)
    log.dispatched(T0 + 1_000, 0, 100, "normal", job=0)  # taken by no worker: dropped
    log.add(FaultEnded, T0 + 600_000, 0, K.FAULT_KIND.code("scheduler_restart"))
    log.deleted(T0 + 1_000 + 120_001, 0, 100, "normal", was="processing")
    log.finished(T0 + 700_000, 1, 101, "normal", final="failed")
    log.ended(T0 + 3_600_000)
    f = _finding(log)
    assert f.severity is Severity.FAIL  # 1 of 4 rows lost: 25 % >= 1 %
    assert (f.numbers["deleted"], f.numbers["lost"], f.numbers["lost_share"]) == (1, 1, 0.25)
    assert f.numbers["deleted_never_taken_up"] == 1
    assert f.numbers["deleted_during_fault"] == 1
    assert f.numbers["finished_without_snapshot"] == 1
    assert f.examples[0]["during_fault"] == "scheduler_restart"
    assert f.examples[0]["due"] == "2031-01-06T00:00:01+08:00"
    assert f.sentence == (
        "Cleanup deleted 1 row(s) (normal processing 1; 1 dispatched but never taken up by a "
        "worker, 1 due during a fault), 1 of which never got a snapshot (25.00% of 4 rows "
        "created); 1 row(s) finished without a snapshot (normal failed 1)."
    )
    assert _finding(log, fail_lost_share=0.5).severity is Severity.WARN
