"""Retries: the seed-004 backoff (profile ``design``) and the deployed retry table (``cvsa-2026``).

Switch ``retry_policy`` picks one:

* ``"backoff"`` (seed 004, "推荐：指数退避 + 抖动"): a failed fetch is retried inside the same job
  after :func:`backoff_delay_ms`, up to ``max_retries`` times, and only for errors
  :func:`is_retryable` accepts. A snapshot read is a "查询类（只读）" call: 3 retries from 1 s
  (seed 004 "各场景推荐配置"). After the last attempt the row gets the status of the outcome
  table for that failure and nothing is rescheduled: the dispatchers re-add the video (seed 000).

Which class and which deployed outcome a failure has is decided here too, from its
:class:`~sim.cvsa.vocabulary.UpstreamErrorKind` (:func:`error_class`, :func:`deployed_outcome`).
* ``"cvsa"``: no in-job retries (every processor catches its own errors, reference §1.2); the
  outcome table (:func:`cvsa_outcomes`) says which status is written and which row is scheduled
  again, and when (reference §9 error handling, §10.2-§10.4, §17 "Single/Bulk outcomes").

Random parts take a uniform draw ``u`` in [0, 1) from the caller's stream.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Literal

from sim.cvsa.params import Params
from sim.cvsa.profile import Switches
from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType, UpstreamErrorKind
from sim.units import Ms


class ErrorKind(StrEnum):
    """Seed 004's classes of failure (``isRetryableError``)."""

    NETWORK = "network"  # "fetch failed", ECONNRESET
    TIMEOUT = "timeout"  # "timeout", ETIMEDOUT
    HTTP_5XX = "http_5xx"
    RATE_LIMITED = "rate_limited"  # 429 / "rate limit": retryable, usually after a longer wait
    HTTP_4XX = "http_4xx"  # any other 4xx: parameters, permissions
    BUSINESS = "business"  # an API-level error code ("Open API 错误")
    OTHER = "other"  # anything unrecognised: seed 004 returns false


RETRYABLE: Final = frozenset(
    {ErrorKind.NETWORK, ErrorKind.TIMEOUT, ErrorKind.HTTP_5XX, ErrorKind.RATE_LIMITED}
)


def is_retryable(kind: ErrorKind) -> bool:
    """Seed 004 ``isRetryableError``: network, timeout, 5xx and 429 yes; 4xx, business, other no."""
    return kind in RETRYABLE


@dataclass(frozen=True)
class Backoff:
    """Seed 004 ``RetryOptions``; the defaults are its ``DEFAULT_RETRY`` (also "查询类")."""

    max_retries: int = 3
    base_ms: Ms = 1000
    cap_ms: Ms = 30_000
    jitter: float = 0.5
    by_class: bool = False
    """Retry by class (issue 28): a rate-limited failure waits from ``rate_limited_base_ms``
    and honours a Retry-After (:func:`class_retry_ms`). Off: every retryable class alike."""
    rate_limited_base_ms: Ms = 5000
    """First delay of a rate-limited failure (seed 004: 429 "通常需要更长等待")."""
    retry_after_cap_ms: Ms = 60_000
    """The longest Retry-After honoured: a longer one waits this long."""


def backoff_delay_ms(
    attempt: int,
    base_ms: Ms = 1000,
    cap_ms: Ms = 30_000,
    jitter: float = 0.5,
    *,
    u: float,
) -> Ms:
    """Seed 004 ``calculateDelay``: ``min(base·2^(attempt−1), cap)`` ± ``jitter`` of it.

    The jitter is ``delay × jitter × (2u − 1)``, so ±50% by default, and the result is never
    negative. Virtual time is integral, so the fraction of a millisecond is dropped (as a
    JavaScript timer does).

    Args:
        attempt: the attempt that just failed, from 1.
        base_ms: delay after the first failure.
        cap_ms: the most the exponential part may reach.
        jitter: the jitter factor in [0, 1].
        u: a uniform draw in [0, 1) (``Math.random()``).

    Raises:
        ValueError: for ``attempt < 1`` or ``u`` outside [0, 1).
    """
    if attempt < 1:
        raise ValueError(f"attempt counts from 1 (got {attempt})")
    if not 0.0 <= u < 1.0:
        raise ValueError(f"u must be in [0, 1) (got {u!r})")
    # 2^(attempt-1) as a shift; past 2^62 the cap has long been reached.
    delay = min(base_ms * (1 << min(attempt - 1, 62)), cap_ms)
    return max(0, math.floor(delay + delay * jitter * (u * 2 - 1)))


def backoff_retry_ms(
    policy: Backoff, attempt: int, kind: ErrorKind, u: float, retry_after_ms: Ms = 0
) -> Ms | None:
    """After ``attempt`` failed with ``kind``: the delay before the next attempt, or None to give
    up (seed 004 ``withRetry``: attempts 1 … ``max_retries`` + 1, retryable errors only).
    With ``policy.by_class`` the delay is :func:`class_retry_ms`'s (``retry_after_ms``: the
    answer's Retry-After, 0 if none); without, ``retry_after_ms`` is ignored."""
    if attempt > policy.max_retries or not is_retryable(kind):
        return None
    if policy.by_class:
        return class_retry_ms(policy, attempt, kind, u, retry_after_ms)
    return backoff_delay_ms(attempt, policy.base_ms, policy.cap_ms, policy.jitter, u=u)


def class_retry_ms(
    policy: Backoff, attempt: int, kind: ErrorKind, u: float, retry_after_ms: Ms = 0
) -> Ms:
    """The delay of a retry by class (issue 28), for a retryable ``kind``:

    * a rate-limited failure (429, or no proxy: "rate limit" in seed 004's test) with a
      Retry-After waits exactly that long, at most ``retry_after_cap_ms`` and without jitter
      (the server said when; RFC 9110 §10.2.3);
    * without one it backs off from ``rate_limited_base_ms`` instead of ``base_ms`` (seed 004
      "429 限流：可重试（通常需要更长等待）"), same cap and jitter;
    * any other class backs off as :func:`backoff_delay_ms` does.
    """
    if kind is ErrorKind.RATE_LIMITED:
        if retry_after_ms > 0:
            return min(retry_after_ms, policy.retry_after_cap_ms)
        base = policy.rate_limited_base_ms
    else:
        base = policy.base_ms
    return backoff_delay_ms(attempt, base, max(policy.cap_ms, base), policy.jitter, u=u)


# --- the deployed outcome table -----------------------------------------------------------------


class Path(StrEnum):
    """Which worker handled the row: ``snapshotVideo`` (single) or ``bulkSnapshotVideo``."""

    SINGLE = "single"
    BULK = "bulk"


class Outcome(StrEnum):
    """How a snapshot job ended (the deployed code's error names, reference §9, §10, §14)."""

    SUCCESS = "success"
    BILI_CODE = "bili_code"  # API body code != 0
    NO_PROXY = "NO_PROXY_AVAILABLE"  # every proxy rate-limited right now (§14.3)
    ALICLOUD_PROXY_ERR = "ALICLOUD_PROXY_ERR"  # non-200 or exception through Ali FC (§14.4)
    OTHER = "other"  # FETCH_ERROR, database errors, the TypeError of §9 step 7


_DEPLOYED_OUTCOME: Final[Mapping[UpstreamErrorKind, Outcome]] = {
    UpstreamErrorKind.BILI_CODE: Outcome.BILI_CODE,
    UpstreamErrorKind.NO_PROXY: Outcome.NO_PROXY,
    UpstreamErrorKind.ALICLOUD_ERROR: Outcome.ALICLOUD_PROXY_ERR,
}

ERROR_CLASS: Final[Mapping[UpstreamErrorKind, ErrorKind]] = {
    UpstreamErrorKind.BILI_CODE: ErrorKind.BUSINESS,
    UpstreamErrorKind.NO_PROXY: ErrorKind.RATE_LIMITED,  # "no proxy": rate-limited everywhere
    UpstreamErrorKind.ALICLOUD_ERROR: ErrorKind.HTTP_5XX,  # a failing proxy, not a bad request
    UpstreamErrorKind.FETCH_ERROR: ErrorKind.NETWORK,  # fetch failure or abort timeout
    UpstreamErrorKind.TIMEOUT: ErrorKind.TIMEOUT,
    UpstreamErrorKind.HTTP_429: ErrorKind.RATE_LIMITED,
    UpstreamErrorKind.HTTP_5XX: ErrorKind.HTTP_5XX,
    UpstreamErrorKind.HTTP_4XX: ErrorKind.HTTP_4XX,  # "HTTP 4\d\d": not retryable
}
"""How seed 004 classifies each upstream failure (``retry_policy = "backoff"``)."""


def deployed_outcome(kind: UpstreamErrorKind) -> Outcome:
    """The deployed error class of an upstream failure: bilibili code, no proxy and the Ali FC
    error have their own handling; FETCH_ERROR and everything else is OTHER (reference §9,
    §10, §14)."""
    return _DEPLOYED_OUTCOME.get(kind, Outcome.OTHER)


def error_class(kind: UpstreamErrorKind) -> ErrorKind:
    """Seed 004's class of an upstream failure (:data:`ERROR_CLASS`)."""
    return ERROR_CLASS[kind]


Reschedule = Literal["same", "normal", "rule"]


@dataclass(frozen=True, kw_only=True)
class CvsaOutcome:
    """One row of the deployed outcome table (reference §17 "Single/Bulk outcomes")."""

    status: ScheduleStatus
    """Status written to the row (bulk: to every schedule id of the batch)."""
    reschedule: Reschedule | None
    """None: nothing; ``same``: the row's type again; ``normal``: a normal row for every fetched
    aid (archive rows too, switch ``bulk_failure_archive_to_normal``); ``rule``: the type's own
    follow-up (new continuation, milestone re-ETA, regular interval)."""
    delay_ms: Ms = 0
    """Fixed part of the delay (single path: the non-milestone retryInterval)."""
    milestone_delay_ms: Ms | None = None
    """Single path: the milestone retryInterval."""
    random_delay_ms: Ms = 0
    """Plus ``floor(u × random_delay_ms)``, one draw per batch."""
    force: bool = False
    adjust: bool = True
    cite: str


OutcomeTable = Mapping[tuple[Path, Outcome], CvsaOutcome]


def cvsa_outcomes(params: Params) -> OutcomeTable:
    """The deployed outcome of every (path, outcome) pair, with the run's retry delays; force is
    False and adjust True in all. Built once per run (the scheduler keeps it)."""
    return {
        (Path.SINGLE, Outcome.SUCCESS): CvsaOutcome(
            status=ScheduleStatus.COMPLETED, reschedule="rule", cite="reference §9 steps 4-7"
        ),
        (Path.SINGLE, Outcome.BILI_CODE): CvsaOutcome(
            status=ScheduleStatus.BILI_ERROR, reschedule=None, cite="reference §9 step 4, §16.12"
        ),
        (Path.SINGLE, Outcome.NO_PROXY): CvsaOutcome(
            status=ScheduleStatus.NO_PROXY,
            reschedule="same",
            delay_ms=params.single_retry_other_ms,
            milestone_delay_ms=params.single_retry_milestone_ms,
            cite="reference §9 error handling, §16.13",
        ),
        (Path.SINGLE, Outcome.ALICLOUD_PROXY_ERR): CvsaOutcome(
            status=ScheduleStatus.FAILED,
            reschedule="same",
            delay_ms=params.single_retry_other_ms,
            milestone_delay_ms=params.single_retry_milestone_ms,
            cite="reference §9 error handling, §16.13",
        ),
        (Path.SINGLE, Outcome.OTHER): CvsaOutcome(
            status=ScheduleStatus.FAILED, reschedule=None, cite="reference §9 error handling"
        ),
        (Path.BULK, Outcome.SUCCESS): CvsaOutcome(
            status=ScheduleStatus.COMPLETED, reschedule="rule", cite="reference §10.3"
        ),
        (Path.BULK, Outcome.BILI_CODE): CvsaOutcome(
            status=ScheduleStatus.FAILED,
            reschedule="normal",
            delay_ms=params.bulk_bili_retry_ms,
            cite="reference §10.2, §16.13",
        ),
        (Path.BULK, Outcome.NO_PROXY): CvsaOutcome(
            status=ScheduleStatus.NO_PROXY,
            reschedule="normal",
            random_delay_ms=params.bulk_no_proxy_retry_max_ms,
            cite="reference §10.4, §16.13",
        ),
        (Path.BULK, Outcome.ALICLOUD_PROXY_ERR): CvsaOutcome(
            status=ScheduleStatus.FAILED, reschedule=None, cite="reference §10.4"
        ),
        (Path.BULK, Outcome.OTHER): CvsaOutcome(
            status=ScheduleStatus.FAILED, reschedule=None, cite="reference §10.4"
        ),
    }


@dataclass(frozen=True)
class CvsaRetry:
    """A concrete reschedule: ``scheduleSnapshot(aid, type, now + delay_ms, force, adjust)``."""

    snapshot_type: ScheduleType
    delay_ms: Ms
    force: bool
    adjust: bool


def cvsa_retry(
    row: CvsaOutcome, snapshot_type: ScheduleType, switches: Switches, u: float
) -> CvsaRetry | None:
    """The deployed retry of a failed row, or None (reference §9, §10.2, §10.4).

    Success (``reschedule == "rule"``) and failures without a retry give None. For a bulk batch,
    call once per fetched aid with the **same** ``u`` (one draw per batch, §10.4). With
    ``bulk_failure_archive_to_normal`` off, a bulk archive row is re-queued as archive.

    Args:
        row: the outcome table's row for the worker's path and how the job ended.
        snapshot_type: the failed row's type.
        switches: the run's switches.
        u: a uniform draw in [0, 1); only used for the bulk no-proxy delay.
    """
    if row.reschedule is None or row.reschedule == "rule":
        return None
    delay = row.delay_ms
    if snapshot_type is ScheduleType.MILESTONE and row.milestone_delay_ms is not None:
        delay = row.milestone_delay_ms
    delay += math.floor(u * row.random_delay_ms)
    new_type = snapshot_type
    if row.reschedule == "normal" and (
        snapshot_type is not ScheduleType.ARCHIVE or switches.bulk_failure_archive_to_normal
    ):
        new_type = ScheduleType.NORMAL
    return CvsaRetry(new_type, delay, row.force, row.adjust)
