"""Seed-004 backoff and the deployed retry table (reference §9, §10.2-§10.4, §17)."""

from __future__ import annotations

import pytest

from sim.cvsa.params import DEFAULT_PARAMS
from sim.cvsa.profile import CVSA_2026, DESIGN
from sim.cvsa.retry import (
    ERROR_CLASS,
    Backoff,
    CvsaRetry,
    ErrorKind,
    Outcome,
    Path,
    backoff_delay_ms,
    backoff_retry_ms,
    class_retry_ms,
    cvsa_outcomes,
    cvsa_retry,
    deployed_outcome,
    is_retryable,
)
from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType, UpstreamErrorKind

CVSA_OUTCOMES = cvsa_outcomes(DEFAULT_PARAMS)

MS, NEW, NORMAL, ARCHIVE = (
    ScheduleType.MILESTONE,
    ScheduleType.NEW,
    ScheduleType.NORMAL,
    ScheduleType.ARCHIVE,
)


@pytest.mark.parametrize(
    ("attempt", "u", "delay"),
    [
        (1, 0.5, 1000),  # 1s -> 2s -> 4s -> 8s ... (seed 004)
        (2, 0.5, 2000),
        (3, 0.5, 4000),
        (4, 0.5, 8000),
        (5, 0.5, 16_000),
        (6, 0.5, 30_000),  # 32 s capped at 30 s
        (60, 0.5, 30_000),
        (10**6, 0.5, 30_000),
        (1, 0.0, 500),  # -50%
        (1, 0.999999, 1499),  # just under +50%, fraction dropped
        (6, 0.0, 15_000),
        (3, 0.25, 3000),
    ],
)
def test_backoff_delay(attempt: int, u: float, delay: int) -> None:
    assert backoff_delay_ms(attempt, u=u) == delay


def test_backoff_delay_parameters_and_floor_at_zero() -> None:
    assert backoff_delay_ms(3, 2000, 60_000, 0.0, u=0.9) == 8000
    assert backoff_delay_ms(1, 1000, 30_000, 1.0, u=0.0) == 0
    assert backoff_delay_ms(1, 1000, 30_000, 2.0, u=0.0) == 0  # never negative
    with pytest.raises(ValueError, match="attempt counts from 1"):
        backoff_delay_ms(0, u=0.5)
    with pytest.raises(ValueError, match=r"u must be in \[0, 1\)"):
        backoff_delay_ms(1, u=1.0)


def test_is_retryable() -> None:
    retryable = {k for k in ErrorKind if is_retryable(k)}
    assert retryable == {
        ErrorKind.NETWORK,
        ErrorKind.TIMEOUT,
        ErrorKind.HTTP_5XX,
        ErrorKind.RATE_LIMITED,
    }


def test_backoff_retry_gives_up_after_max_retries_or_on_permanent_errors() -> None:
    policy = Backoff()
    assert [backoff_retry_ms(policy, a, ErrorKind.TIMEOUT, 0.5) for a in (1, 2, 3, 4)] == [
        1000,
        2000,
        4000,
        None,
    ]
    assert backoff_retry_ms(policy, 1, ErrorKind.BUSINESS, 0.5) is None
    assert backoff_retry_ms(policy, 1, ErrorKind.HTTP_4XX, 0.5) is None
    assert backoff_retry_ms(Backoff(max_retries=0), 1, ErrorKind.NETWORK, 0.5) is None


def test_upstream_failures_classified_for_seed_004() -> None:
    assert set(ERROR_CLASS) == set(UpstreamErrorKind)
    assert {k: is_retryable(c) for k, c in ERROR_CLASS.items()} == {
        UpstreamErrorKind.BILI_CODE: False,  # a business error
        UpstreamErrorKind.NO_PROXY: True,  # rate-limited everywhere
        UpstreamErrorKind.FETCH_ERROR: True,
        UpstreamErrorKind.ALICLOUD_ERROR: True,  # a failing proxy: 5xx
        UpstreamErrorKind.TIMEOUT: True,
        UpstreamErrorKind.HTTP_429: True,
        UpstreamErrorKind.HTTP_5XX: True,
        UpstreamErrorKind.HTTP_4XX: False,  # seed 004: "4xx 客户端错误：通常不可重试"
    }


def test_upstream_failures_as_the_deployed_code_names_them() -> None:
    assert {k: deployed_outcome(k) for k in UpstreamErrorKind} == {
        UpstreamErrorKind.BILI_CODE: Outcome.BILI_CODE,
        UpstreamErrorKind.NO_PROXY: Outcome.NO_PROXY,
        UpstreamErrorKind.FETCH_ERROR: Outcome.OTHER,
        UpstreamErrorKind.ALICLOUD_ERROR: Outcome.ALICLOUD_PROXY_ERR,
        UpstreamErrorKind.TIMEOUT: Outcome.OTHER,
        UpstreamErrorKind.HTTP_429: Outcome.OTHER,
        UpstreamErrorKind.HTTP_5XX: Outcome.OTHER,
        UpstreamErrorKind.HTTP_4XX: Outcome.OTHER,
    }


def test_outcome_table_statuses() -> None:
    assert set(CVSA_OUTCOMES) == {(p, o) for p in Path for o in Outcome}
    statuses = {key: row.status for key, row in CVSA_OUTCOMES.items()}
    assert statuses == {
        (Path.SINGLE, Outcome.SUCCESS): ScheduleStatus.COMPLETED,
        (Path.SINGLE, Outcome.BILI_CODE): ScheduleStatus.BILI_ERROR,
        (Path.SINGLE, Outcome.NO_PROXY): ScheduleStatus.NO_PROXY,
        (Path.SINGLE, Outcome.ALICLOUD_PROXY_ERR): ScheduleStatus.FAILED,
        (Path.SINGLE, Outcome.OTHER): ScheduleStatus.FAILED,
        (Path.BULK, Outcome.SUCCESS): ScheduleStatus.COMPLETED,
        (Path.BULK, Outcome.BILI_CODE): ScheduleStatus.FAILED,
        (Path.BULK, Outcome.NO_PROXY): ScheduleStatus.NO_PROXY,
        (Path.BULK, Outcome.ALICLOUD_PROXY_ERR): ScheduleStatus.FAILED,
        (Path.BULK, Outcome.OTHER): ScheduleStatus.FAILED,
    }
    assert all(not row.force and row.adjust for row in CVSA_OUTCOMES.values())


@pytest.mark.parametrize(
    ("path", "outcome", "kind", "u", "expected"),
    [
        (Path.SINGLE, Outcome.NO_PROXY, MS, 0.7, CvsaRetry(MS, 5_000, False, True)),
        (Path.SINGLE, Outcome.NO_PROXY, NEW, 0.7, CvsaRetry(NEW, 120_000, False, True)),
        (Path.SINGLE, Outcome.NO_PROXY, ARCHIVE, 0.7, CvsaRetry(ARCHIVE, 120_000, False, True)),
        (Path.SINGLE, Outcome.ALICLOUD_PROXY_ERR, MS, 0.7, CvsaRetry(MS, 5_000, False, True)),
        (Path.SINGLE, Outcome.ALICLOUD_PROXY_ERR, NEW, 0.7, CvsaRetry(NEW, 120_000, False, True)),
        (Path.SINGLE, Outcome.BILI_CODE, MS, 0.7, None),
        (Path.SINGLE, Outcome.OTHER, NEW, 0.7, None),
        (Path.SINGLE, Outcome.SUCCESS, MS, 0.7, None),
        (Path.BULK, Outcome.BILI_CODE, NORMAL, 0.7, CvsaRetry(NORMAL, 15_000, False, True)),
        (Path.BULK, Outcome.BILI_CODE, ARCHIVE, 0.7, CvsaRetry(NORMAL, 15_000, False, True)),
        (Path.BULK, Outcome.NO_PROXY, NORMAL, 0.5, CvsaRetry(NORMAL, 15_000, False, True)),
        (Path.BULK, Outcome.NO_PROXY, ARCHIVE, 0.99999, CvsaRetry(NORMAL, 29_999, False, True)),
        (Path.BULK, Outcome.NO_PROXY, NORMAL, 0.0, CvsaRetry(NORMAL, 0, False, True)),
        (Path.BULK, Outcome.ALICLOUD_PROXY_ERR, NORMAL, 0.7, None),
        (Path.BULK, Outcome.OTHER, NORMAL, 0.7, None),
        (Path.BULK, Outcome.SUCCESS, NORMAL, 0.7, None),
    ],
)
def test_cvsa_retry_deployed(
    path: Path, outcome: Outcome, kind: ScheduleType, u: float, expected: CvsaRetry | None
) -> None:
    assert cvsa_retry(CVSA_OUTCOMES[path, outcome], kind, CVSA_2026, u) == expected


def test_cvsa_retry_keeps_archive_rows_archive_when_the_leak_is_off() -> None:
    bili, no_proxy = (
        CVSA_OUTCOMES[Path.BULK, Outcome.BILI_CODE],
        CVSA_OUTCOMES[Path.BULK, Outcome.NO_PROXY],
    )
    assert cvsa_retry(bili, ARCHIVE, DESIGN, 0.3) == CvsaRetry(ARCHIVE, 15_000, False, True)
    assert cvsa_retry(no_proxy, ARCHIVE, DESIGN, 0.5) == CvsaRetry(ARCHIVE, 15_000, False, True)


# --- retry by class (issue 28) ------------------------------------------------------------------

BY_CLASS = Backoff(by_class=True, rate_limited_base_ms=5000, retry_after_cap_ms=60_000)


def test_by_class_rate_limited_waits_from_its_own_base() -> None:
    # u = 0.5: no jitter. 5 s, 10 s, 20 s, then the 30 s cap; other classes keep 1 s, 2 s, 4 s.
    assert [class_retry_ms(BY_CLASS, a, ErrorKind.RATE_LIMITED, 0.5) for a in (1, 2, 3, 4)] == [
        5000,
        10_000,
        20_000,
        30_000,
    ]
    assert [class_retry_ms(BY_CLASS, a, ErrorKind.HTTP_5XX, 0.5) for a in (1, 2, 3)] == [
        1000,
        2000,
        4000,
    ]
    # Jitter applies to the longer base too: u = 0 is -50 %.
    assert class_retry_ms(BY_CLASS, 1, ErrorKind.RATE_LIMITED, 0.0) == 2500


def test_by_class_honours_retry_after_up_to_the_cap_without_jitter() -> None:
    assert class_retry_ms(BY_CLASS, 1, ErrorKind.RATE_LIMITED, 0.9, retry_after_ms=7000) == 7000
    assert class_retry_ms(BY_CLASS, 3, ErrorKind.RATE_LIMITED, 0.1, retry_after_ms=7000) == 7000
    assert class_retry_ms(BY_CLASS, 1, ErrorKind.RATE_LIMITED, 0.5, 120_000) == 60_000
    # A Retry-After on another class is not a rate limit's: the backoff applies.
    assert class_retry_ms(BY_CLASS, 1, ErrorKind.HTTP_5XX, 0.5, retry_after_ms=7000) == 1000


def test_backoff_retry_uses_the_class_rule_only_when_on() -> None:
    assert backoff_retry_ms(BY_CLASS, 1, ErrorKind.RATE_LIMITED, 0.5, 7000) == 7000
    assert backoff_retry_ms(BY_CLASS, 1, ErrorKind.RATE_LIMITED, 0.5) == 5000
    assert backoff_retry_ms(Backoff(), 1, ErrorKind.RATE_LIMITED, 0.5, 7000) == 1000
    # A 4xx is never retried, by class or not; nor past max_retries.
    assert backoff_retry_ms(BY_CLASS, 1, ErrorKind.HTTP_4XX, 0.5) is None
    assert backoff_retry_ms(BY_CLASS, 4, ErrorKind.RATE_LIMITED, 0.5, 7000) is None


def test_a_plain_4xx_under_the_deployed_table() -> None:
    # Through cf-worker or native: OTHER (§9: failed, no reschedule; §10.4 likewise).
    assert deployed_outcome(UpstreamErrorKind.HTTP_4XX) is Outcome.OTHER
    assert CVSA_OUTCOMES[Path.SINGLE, Outcome.OTHER].reschedule is None
