"""Seed 001's rules as pure functions (sim.cvsa.job_table): exact times, one case per rule."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sim.cvsa.job_table import (
    CronError,
    JobSpec,
    JobState,
    check_cron,
    cron_next,
    first_run_at,
    is_due,
    next_run_after,
    request_queues,
    skipped_next,
    slot_key,
    trigger_of,
    wake_at,
    zone,
)
from sim.cvsa.vocabulary import RunTrigger

UTC0 = zone(0)
T = 1_000_000


def job(**kw: object) -> JobState:
    base = JobState("tick", 1000, None, True, T, None, None)
    return base._replace(**kw)  # type: ignore[arg-type]


def test_due_when_enabled_and_next_run_passed_or_requested() -> None:
    assert is_due(job(), T)
    assert not is_due(job(), T - 1)
    assert not is_due(job(enabled=False), T)
    assert is_due(job(enabled=False, run_requested_at_ms=T - 5), T - 1)
    assert not is_due(job(running_run_id=3), T + 10_000)  # no re-entry
    assert not is_due(job(running_run_id=3, run_requested_at_ms=T), T)


def test_trigger_prefers_the_schedule() -> None:
    assert trigger_of(job(run_requested_at_ms=T), T) is RunTrigger.SCHEDULE
    assert trigger_of(job(run_requested_at_ms=T), T - 1) is RunTrigger.MANUAL


def test_next_run_is_end_plus_period_and_a_manual_run_keeps_it() -> None:
    assert next_run_after(job(), T + 2500, RunTrigger.SCHEDULE, UTC0) == T + 3500
    assert next_run_after(job(), T + 2500, RunTrigger.MANUAL, UTC0) == T
    cron = job(every_ms=None, cron="*/5 * * * *")
    assert next_run_after(cron, 300_000, RunTrigger.SCHEDULE, UTC0) == 600_000  # strictly after


def test_skip_moves_one_period() -> None:
    assert skipped_next(job(), UTC0) == T + 1000
    assert skipped_next(job(every_ms=None, cron="0 * * * *", next_run_at_ms=3_600_000), UTC0) == (
        7_200_000
    )


def test_requests_merge_while_pending_or_running() -> None:
    assert request_queues(job())
    assert not request_queues(job(run_requested_at_ms=T))
    assert not request_queues(job(running_run_id=1))


def test_slots() -> None:
    assert slot_key(job(), RunTrigger.SCHEDULE, 12_345, 9) == "12"
    assert slot_key(job(), RunTrigger.MANUAL, 12_345, 9) == "manual:9"
    cron = job(every_ms=None, cron="0 * * * *", next_run_at_ms=3_600_000)
    assert slot_key(cron, RunTrigger.SCHEDULE, 3_600_200, 9) == "3600000"  # the planned time


def test_first_run() -> None:
    assert first_run_at(JobSpec("tick", 1000, None, True), T, UTC0) == T
    assert first_run_at(JobSpec("h", None, "0 * * * *", True), 3_600_000, UTC0) == 3_600_000
    assert first_run_at(JobSpec("h", None, "0 * * * *", True), 3_600_001, UTC0) == 7_200_000


def test_wake_at() -> None:
    jobs = [job(next_run_at_ms=T + 700), job(name="b", next_run_at_ms=T + 300, running_run_id=1)]
    assert wake_at(jobs, T, 0) == T + 700  # a running job wakes nobody
    assert wake_at(jobs, T, 500) == -(-(T + 700) // 500) * 500
    assert wake_at([job(enabled=False)], T, 0) is None
    assert wake_at([job(enabled=False, run_requested_at_ms=T - 9)], T, 0) == T


def test_cron_in_local_time() -> None:
    shanghai = zone(8 * 3_600_000)
    start = int(datetime(2031, 1, 6, tzinfo=UTC).timestamp() * 1000)
    # 03:30 in UTC+8 is 19:30 UTC the day before.
    assert cron_next("30 3 * * *", start, shanghai) == start + 19 * 3_600_000 + 1_800_000


def test_bad_cron_and_zone() -> None:
    with pytest.raises(CronError, match="five fields"):
        check_cron("* * * *")
    with pytest.raises(CronError, match="61"):
        check_cron("61 * * * *")
    with pytest.raises(CronError, match="unknown time zone 'Mars/Olympus'"):
        zone("Mars/Olympus")
