"""Finding ``ticks``: iterations that outlast their period, missed slots, queue wait and depth."""

from __future__ import annotations

from sim.events.engine_kinds import (
    IterationFinished,
    IterationsMissed,
    IterationStarted,
    JobAdded,
    JobStarted,
)
from sim.metrics.findings import Severity, TickHealth, findings_in
from tests.metrics.loglib import Log

TICK, QUEUE, VIDEO = 3, 0, 1
NAMES = ["snapshot", "snapshotVideo", "bulkSnapshotVideo", "snapshotTick"]
TZ = 8 * 3_600_000


def _reducer() -> TickHealth:
    return TickHealth({"snapshotTick": 1_000}, TZ, warn_missed_slots=1, warn_queue_wait=60_000)


def _finding(log: Log, cuts: tuple[int, ...] = ()) -> object:
    r = _reducer()
    for chunk in log.chunks(cuts):
        r.feed(chunk, NAMES)
    (f,) = findings_in(r.result())
    return f


def test_ok_when_every_iteration_fits_its_period_and_jobs_start_at_once() -> None:
    log = Log()
    for i in range(3):
        t = 1_000 * i
        log.add(IterationStarted, t, TICK, t)
        log.add(JobAdded, t, QUEUE, i, VIDEO, 1, t)
        log.add(IterationFinished, t + 200, TICK, t, 1)
        log.add(JobStarted, t + 300, QUEUE, i, VIDEO, t)
    f = _finding(log, cuts=(5,))
    assert f.severity is Severity.OK
    assert f.numbers["iterations"] == 3
    assert f.numbers["overlong_iterations"] == 0
    assert f.numbers["peak_queue_depth"] == 1
    assert f.numbers["queue_wait_p99_s"] == 0.3
    assert f.sentence.startswith("Every periodic job kept its period: none of 3 iterations")


def test_warns_on_an_overlong_overlapping_iteration_missed_slots_and_a_long_queue_wait() -> None:
    log = Log()
    log.add(IterationStarted, 0, TICK, 0)
    log.add(IterationStarted, 1_000, TICK, 1_000)  # overlaps the first one
    log.add(IterationFinished, 1_100, TICK, 1_000, 1)
    log.add(IterationFinished, 3_500, TICK, 0, 1)  # 3.5 s against a 1 s period
    log.add(IterationsMissed, 3_500, TICK, 2, 4_000)
    for job in range(4):
        log.add(JobAdded, 0, QUEUE, job, VIDEO, 1, 0)
    for job in range(4):
        log.add(JobStarted, 90_000, QUEUE, job, VIDEO, 0)
    f = _finding(log, cuts=(2, 7))
    assert f.severity is Severity.WARN
    assert f.numbers["overlong_iterations"] == 1
    assert f.numbers["missed_slots"] == 2
    assert f.numbers["peak_queue_depth"] == 4
    assert f.numbers["queue_wait_p99_s"] == 90.0
    assert f.examples == (
        {
            "job": "snapshotTick",
            "started": "1970-01-01T08:00:00+08:00",
            "took": "3.5s",
            "period": "1s",
        },
    )
    assert f.sentence == (
        "The ticks fell behind: 2 slot(s) missed; 1 iteration(s) outlasted the period of their "
        "job; p99 wait for a worker 90s on snapshot; peak queue depth 4 (snapshot, "
        "1970-01-01T08:00:00+08:00)."
    )
