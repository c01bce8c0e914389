"""Each series reducer on a hand-written log, cut into chunks at awkward places."""

from __future__ import annotations

import numpy as np
import pytest

from sim.events import cvsa_kinds as K
from sim.events.engine_kinds import JobAdded, JobFinished, JobStarted, RunEnded, RunStarted
from sim.report.load_series import QueueDepth, UpstreamRequests
from sim.report.milestone_tracking import GroundTruth, MilestoneTracking
from sim.report.series import CleanupDeletions, LatenessOverTime, RunSpan, Span, WindowOccupancy
from sim.units import HOUR_MS, MINUTE_MS, SECOND_MS, WINDOW_MS
from tests.report.logs import T0, Script, feed

W = WINDOW_MS
TZ = 8 * HOUR_MS
NEW, MILESTONE, NORMAL, ARCHIVE = (K.SNAPSHOT_TYPE.code(w) for w in K.SNAPSHOT_TYPE.words)
FORWARD, EXACT, EXHAUSTED = (K.PLACEMENT.code(w) for w in ("forward", "exact", "exhausted"))
PENDING = K.SCHEDULE_STATUS.code("pending")
TYPES_ = K.SNAPSHOT_TYPE.words


def test_the_span_runs_from_start_to_end_and_says_partial() -> None:
    log = Script()
    log(RunStarted, T0, T0 + HOUR_MS, 7)
    log(RunEnded, T0 + 600, 1)
    span = RunSpan()
    feed(span, log.chunks())
    assert span.span() == Span(T0, T0 + 600, True)
    cut = RunSpan()
    feed(cut, log.chunks(1)[:1])  # a log cut short: up to its last event, partial
    assert cut.span() == Span(T0, T0, True)
    assert Span(T0, T0 + 2 * W, False).bins(W).tolist() == [T0 // W, T0 // W + 1, T0 // W + 2]


def test_windows_count_placements_moves_cleanup_releases_and_executions() -> None:
    log = Script()
    log(K.ScheduleCreated, T0, 1, 10, NORMAL, T0 + W, T0 + W + 5, T0 + W, 1, 1, FORWARD, 0, 0)
    log(K.ScheduleCreated, T0, 2, 11, MILESTONE, T0 + W, T0 + W + 9, T0 + W, 2, 1, EXACT, 0, 0)
    log(K.ScheduleCreated, T0, 3, 12, ARCHIVE, T0, T0, K.NO_WINDOW, 0, 4032, EXHAUSTED, 0, 0)
    log(K.ScheduleMoved, T0 + 1, 2, 11, T0 + W + 9, T0 + 10, 1, 1)
    log(K.ScheduleDeleted, T0 + 2, 1, 10, NORMAL, T0 + W + 5, PENDING)
    log(K.WindowReleased, T0 + 2, T0 + W, 1, K.WINDOW_CAUSE.code("cleanup"), 0)
    log(K.SnapshotTaken, T0 + 10, 11, 2, MILESTONE, T0 + 10, 99_000, 0, T0 + 10)
    log(K.SnapshotTaken, T0 + W + 3, 13, -1, -1, -1, 5, 0, T0 + W + 3)
    occupancy = WindowOccupancy(TZ)
    feed(occupancy, log.chunks(5))  # the release comes in the chunk after its deletion
    table = occupancy.tables(Span(T0, T0 + 2 * W, False))["windows"]
    assert table.ints("window_start_ms").tolist() == [T0, T0 + W, T0 + 2 * W]
    assert table.texts("window_start")[0] == "2031-01-06T00:00+08:00"
    assert table.ints("reserved_milestone").tolist() == [1, 0, 0]
    assert table.ints("reserved_normal").tolist() == [0, 0, 0]
    assert table.ints("reserved_archive").tolist() == [0, 0, 0]  # exhausted: nothing reserved
    assert table.ints("peak_count").tolist() == [1, 2, 0]
    assert table.ints("executed_milestone").tolist() == [1, 0, 0]
    assert table.ints("executed_discovery").tolist() == [0, 1, 0]


def test_queue_depth_is_the_most_waiting_and_active_in_each_minute() -> None:
    log = Script()
    for job in (1, 2, 3):
        log(JobAdded, T0, 0, job, 1, 3, T0)
    log(JobStarted, T0 + SECOND_MS, 0, 1, 1, T0)
    log(JobStarted, T0 + SECOND_MS, 0, 2, 1, T0)
    log(JobFinished, T0 + 61 * SECOND_MS, 0, 1, 1, 1)
    log(JobStarted, T0 + 125 * SECOND_MS, 0, 3, 1, T0)
    log(JobFinished, T0 + 130 * SECOND_MS, 0, 2, 1, 1)
    log(JobFinished, T0 + 130 * SECOND_MS, 0, 3, 1, 1)
    depth = QueueDepth(TZ)
    feed(depth, log.chunks(4, 7), ["snapshot", "snapshotVideo"])  # cut inside minute 0 and 2
    table = depth.tables(Span(T0, T0 + 3 * MINUTE_MS, False))["queue_depth"]
    assert table.texts("queue").tolist() == ["snapshot"] * 4
    assert table.ints("waiting_max").tolist() == [3, 1, 1, 0]
    assert table.ints("active_max").tolist() == [2, 2, 2, 0]


def test_upstream_counts_calls_retries_and_failures_by_path() -> None:
    names = ["snapshot", "snapshotVideo", "bulkSnapshotVideo"]
    log = Script()
    log(JobStarted, T0, 0, 5, 2, T0)
    for schedule, aid in ((1, 10), (2, 11), (3, 12)):
        log(K.ScheduleStarted, T0, schedule, aid, NORMAL, T0, 5)
    timeout = K.UPSTREAM_ERROR.code("timeout")
    log(K.UpstreamFailed, T0, 5, 3, timeout, 0)
    log(K.RetryScheduled, T0, 5, -1, 1, W + 1, timeout)
    log(JobFinished, T0 + W + 1, 0, 5, 2, 1)
    log(JobStarted, T0 + W + 2, 0, 6, 1, T0)
    log(K.ScheduleStarted, T0 + W + 2, 4, 13, NEW, T0, 6)
    log(JobFinished, T0 + W + 2, 0, 6, 1, 1)
    upstream = UpstreamRequests(TZ)
    feed(upstream, log.chunks(2, 3), names)  # the bulk job's rows straddle two cuts
    table = upstream.tables(Span(T0, T0 + 2 * W, False))["upstream"]
    rows = list(
        zip(
            (table.ints("bin_start_ms") - T0).tolist(),
            table.texts("path").tolist(),
            table.texts("event").tolist(),
            table.ints("count").tolist(),
            table.ints("aids").tolist(),
            strict=True,
        )
    )
    assert rows == [
        (0, "bulk", "failed.timeout", 1, 3),
        (0, "bulk", "request", 1, 3),
        (W, "bulk", "retry", 1, 3),
        (W, "single", "request", 1, 1),
    ]


def test_hourly_lateness_percentiles_per_type_and_all() -> None:
    log = Script()
    late_new = [100, 200, 300, 4000]
    for i, late in enumerate(late_new):
        log(K.SnapshotTaken, T0 + 1000 + late, 20 + i, i, NEW, T0 + 1000, 1, 0, T0 + 1000 + late)
    log(K.SnapshotTaken, T0 + 2000, 30, 9, NORMAL, T0 + 2500, 1, 0, T0 + 2000)  # 0.5 s early
    log(K.SnapshotTaken, T0 + 3000, 31, -1, -1, -1, 1, 0, T0 + 3000)  # discovery: no due time
    log(K.SnapshotTaken, T0 + HOUR_MS + 5, 32, 10, NORMAL, T0 + HOUR_MS, 1, 0, T0 + HOUR_MS + 5)
    lateness = LatenessOverTime(TZ)
    feed(lateness, log.chunks(3))
    t = lateness.tables(Span(T0, T0 + 2 * HOUR_MS, False))["lateness_hourly"]
    hours = ((t.ints("hour_start_ms") - T0) // HOUR_MS).tolist()
    assert list(zip(hours, t.texts("type").tolist(), t.ints("count").tolist(), strict=True)) == [
        (0, "new", 4),
        (0, "normal", 1),
        (0, "all", 5),
        (1, "normal", 1),
        (1, "all", 1),
    ]
    expected = np.percentile(np.array(late_new) / 1000, [50, 90, 99], method="linear")
    assert [t.floats(f"p{p}_s")[0] for p in (50, 90, 99)] == expected.tolist()
    assert t.floats("max_s").tolist() == [4.0, -0.5, 4.0, 0.005, 0.005]


def test_hourly_lateness_streams_hour_by_hour_and_equals_keeping_every_sample() -> None:
    """Rows of complete hours are computed as the log moves on and their samples dropped; the
    table is what grouping every sample at the end gives, however the log is chunked."""
    rng = np.random.default_rng(11)
    n = 3_000
    t = np.sort(rng.integers(T0, T0 + 6 * HOUR_MS, n))
    types = rng.integers(-1, 4, n)  # discovery (-1) included: it has no due time
    late = rng.integers(-2_000, 900_000, n)
    log = Script()
    for ti, ty, la in zip(t.tolist(), types.tolist(), late.tolist(), strict=True):
        due = -1 if ty < 0 else ti - la
        log(K.SnapshotTaken, ti, 5, -1 if ty < 0 else 1, ty, due, 1, 0, ti)
    expected = []
    hours = (t + TZ) // HOUR_MS
    for h in np.unique(hours).tolist():
        mine = (hours == h) & (types >= 0)
        groups = [(c, late[mine & (types == c)]) for c in range(4)]
        for word, g in [*((TYPES_[c], g) for c, g in groups if len(g)), ("all", late[mine])]:
            pct = np.percentile(g / 1000, [50, 90, 99], method="linear").tolist()
            expected.append((h * HOUR_MS - TZ, word, len(g), *pct, g.max() / 1000))
    for size in (1, 7, 500, n):
        lateness = LatenessOverTime(TZ)
        feed(lateness, log.chunks(*range(size, n, size)))
        if size < 60:  # a chunk within one hour: only the last hour still holds samples
            assert len(lateness._open) == 1
        table = lateness.tables(Span(T0, T0 + 6 * HOUR_MS, False))["lateness_hourly"]
        got = list(
            zip(
                table.ints("hour_start_ms").tolist(),
                table.texts("type").tolist(),
                table.ints("count").tolist(),
                *(table.floats(c).tolist() for c in ("p50_s", "p90_s", "p99_s", "max_s")),
                strict=True,
            )
        )
        assert got == expected, size


def test_hourly_lateness_refuses_a_log_that_goes_back_an_hour() -> None:
    log = Script()
    log(K.SnapshotTaken, T0 + 2 * HOUR_MS, 5, 1, NEW, T0, 1, 0, T0)
    log(K.SnapshotTaken, T0 + 5, 5, 2, NEW, T0, 1, 0, T0)
    lateness = LatenessOverTime(TZ)
    with pytest.raises(RuntimeError, match="went back"):
        feed(lateness, log.chunks(1))


def test_cleanup_deletions_per_local_hour_and_type() -> None:
    log = Script()
    log(K.ScheduleDeleted, T0 + 2 * MINUTE_MS, 1, 10, NEW, T0, PENDING)
    log(K.ScheduleDeleted, T0 + 2 * MINUTE_MS, 2, 11, ARCHIVE, T0, PENDING)
    log(K.ScheduleDeleted, T0 + HOUR_MS + 1, 3, 12, NEW, T0, PENDING)
    cleanup = CleanupDeletions(TZ)
    feed(cleanup, log.chunks(1))
    t = cleanup.tables(Span(T0, T0 + 2 * HOUR_MS - 1, False))["cleanup_hourly"]
    assert t.texts("hour_start").tolist() == ["2031-01-06T00:00+08:00", "2031-01-06T01:00+08:00"]
    assert t.ints("new").tolist() == [1, 1]
    assert t.ints("archive").tolist() == [1, 0]


TRUTH = GroundTruth(
    aid=np.array([10, 20, 30, 40], dtype=np.int64),
    milestone=np.array([100_000, 1_000_000, 100_000, 100_000], dtype=np.int64),
    t_ms=np.array([T0 + 1000, T0 + 2000, T0 + 3000, T0 + HOUR_MS], dtype=np.int64),
    visible=np.array([True, True, False, True]),
    song=np.array([True, False, True, True]),
)


def test_milestones_are_captured_by_the_first_snapshot_at_or_above_them() -> None:
    log = Script()
    log(K.SnapshotTaken, T0, 10, 1, MILESTONE, T0, 99_000, 0, T0)
    log(K.SnapshotTaken, T0 + 500, 10, 2, MILESTONE, T0 + 500, 99_900, 0, T0 + 500)
    log(K.SnapshotTaken, T0 + 3000, 10, 3, MILESTONE, T0 + 3000, 100_100, 0, T0 + 3000)
    log(K.SnapshotTaken, T0 + 4000, 10, 4, MILESTONE, T0 + 4000, 100_200, 0, T0 + 4000)
    log(K.SnapshotTaken, T0 + 2500, 20, 5, MILESTONE, T0 + 2500, 999_000, 0, T0 + 2500)
    tracking = MilestoneTracking(TRUTH, TZ)
    feed(tracking, log.chunks(2))
    t = tracking.tables(Span(T0, T0 + 10_000, False))["milestones"]
    # aid 30 was hidden at its crossing; aid 40 crosses after the end of the log
    assert t.ints("aid").tolist() == [10, 20]
    assert t.ints("song").tolist() == [1, 0]
    assert t.ints("captured_ms").tolist() == [T0 + 3000, -1]
    assert t.floats("latency_s")[0] == 2.0
    assert np.isnan(t.floats("latency_s")[1])
    assert t.floats("bracket_s")[0] == 2.5
    assert np.isnan(t.floats("bracket_s")[1])
