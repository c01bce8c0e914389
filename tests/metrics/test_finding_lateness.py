"""Finding ``lateness``: executed minus due, split into rebook, tick, queue, backoff, upstream."""

from __future__ import annotations

from sim.events import cvsa_kinds as K
from sim.metrics.cvsa import SnapshotMetrics
from sim.metrics.findings import Finding, LatenessAttribution, Severity, findings_in
from tests.metrics.loglib import NAMES, T0, Log, ty

TZ = 8 * 3_600_000


def _finding(log: Log, warn_p99: int = 60_000, fail_p99: int = 3_600_000) -> Finding:
    snapshots = SnapshotMetrics()
    lateness = LatenessAttribution(snapshots, TZ, warn_p99=warn_p99, fail_p99=fail_p99)
    for chunk in log.chunks(cuts=(2, 4)):  # rows cross chunks: state carried over
        snapshots.feed(chunk, NAMES)
        lateness.feed(chunk, NAMES)
    (f,) = findings_in(lateness.result())
    return f


def _served(log: Log, s: int, aid: int, due: int, *, tick: int, queue: int, at: int) -> None:
    """Row ``s`` due at ``due``: dispatched ``tick`` ms after, started ``queue`` ms later, its
    snapshot answered at ``at`` (after one retry of 2 s)."""
    log.dispatched(due + tick, s, aid, "normal", job=s)
    log.started(due + tick + queue, s, aid, "normal", job=s)
    log.add(K.RetryScheduled, due + tick + queue + 100, s, aid, 1, 2_000, 0)
    log.add(K.SnapshotTaken, at, aid, s, ty("normal"), due, 5, 0, at)
    log.finished(at, s, aid, "normal")


def test_the_parts_add_up_to_the_lateness_and_stay_ok_under_the_threshold() -> None:
    log = Log()
    due = T0 + 60_000
    log.created(T0, 0, 100, due=due)
    _served(log, 0, 100, due, tick=10_000, queue=5_000, at=due + 18_500)
    f = _finding(log)
    assert f.severity is Severity.OK
    assert f.numbers["normal.snapshots"] == 1
    assert f.numbers["normal.p99_s"] == 18.5
    parts = {
        p: f.numbers[f"normal.tail.{p}_s"]
        for p in ("rebook", "tick", "queue", "backoff", "upstream")
    }
    assert parts == {"rebook": 0.0, "tick": 10.0, "queue": 5.0, "backoff": 2.0, "upstream": 1.5}
    assert f.sentence.startswith("Snapshots ran on time (every type's p99 under 1m)")
    assert _finding(log, warn_p99=10_000).severity is Severity.WARN


def test_a_row_rebooked_after_cleanup_counts_from_the_deleted_rows_due_time() -> None:
    log = Log()
    first_due = T0 + 60_000
    log.created(T0, 0, 100, due=first_due)
    log.deleted(first_due + 120_001, 0, 100, "normal")  # never dispatched: cleanup took it
    second_due = T0 + 300_000
    log.created(first_due + 130_000, 1, 100, due=second_due)
    _served(log, 1, 100, second_due, tick=0, queue=0, at=second_due + 3_000)
    f = _finding(log)
    assert f.severity is Severity.OK  # the p99 judged is of the row's own due time: 3 s
    assert (f.numbers["rebooked"], f.numbers["rebook_mean_s"]) == (1, 240.0)
    assert f.numbers["normal.tail.rebook_s"] == 240.0  # second due - first due
    assert f.numbers["normal.tail.upstream_s"] == 1.0
    assert f.sentence.endswith(
        "the latest 1 % of normal snapshots, 4m late on average from their first due time, "
        "split into rebook 4m, backoff 2s, upstream 1s; 1 snapshot(s) were of rows booked "
        "again after cleanup deleted the first, 4m later on average."
    )


def test_a_row_booked_again_and_deleted_in_turn_is_forgotten() -> None:
    # Cleanup deletes the first row, then the one booked to replace it; the third is served and
    # counts from the second's due time (the deletion of the second is what it replaces).
    log = Log()
    due = [T0 + 60_000, T0 + 300_000, T0 + 600_000]
    log.created(T0, 0, 100, due=due[0])
    log.deleted(due[0] + 120_001, 0, 100, "normal")
    log.created(due[0] + 130_000, 1, 100, due=due[1])
    log.deleted(due[1] + 120_001, 1, 100, "normal")
    log.created(due[1] + 130_000, 2, 100, due=due[2])
    _served(log, 2, 100, due[2], tick=0, queue=0, at=due[2] + 3_000)
    snapshots = SnapshotMetrics()
    lateness = LatenessAttribution(snapshots, TZ, warn_p99=60_000, fail_p99=3_600_000)
    for chunk in log.chunks(cuts=(2, 3, 4, 5)):  # each deletion and creation a chunk of its own
        snapshots.feed(chunk, NAMES)
        lateness.feed(chunk, NAMES)
        assert 0 not in lateness.rebooked  # row 0 was never booked again: nothing of it kept
    assert lateness.rebooked == {}  # row 1's entry went with its deletion, row 2's when served
    (f,) = findings_in(lateness.result())
    assert (f.numbers["rebooked"], f.numbers["rebook_mean_s"]) == (1, 300.0)


def test_a_snapshot_written_after_its_row_completed_is_still_attributed() -> None:
    """Seed 003's write path logs ``SnapshotTaken`` when the flush is written, after the row's
    ``ScheduleFinished``; the parts are still those of the row (the write wait is not lateness:
    ``taken_ms`` is when the counts were read)."""
    log = Log()
    due = T0 + 60_000
    log.created(T0, 0, 100, due=due)
    log.dispatched(due + 10_000, 0, 100, "normal", job=0)
    log.started(due + 15_000, 0, 100, "normal", job=0)
    at = due + 16_500
    log.finished(at, 0, 100, "normal")
    log.add(K.SnapshotTaken, at + 600_000, 100, 0, ty("normal"), due, 5, 0, at)  # 10 min later
    f = _finding(log)
    assert f.numbers["normal.p99_s"] == 16.5
    parts = {p: f.numbers[f"normal.tail.{p}_s"] for p in ("tick", "queue", "upstream")}
    assert parts == {"tick": 10.0, "queue": 5.0, "upstream": 1.5}
