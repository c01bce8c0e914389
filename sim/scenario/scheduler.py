"""``[scheduler]``: deployment parameters of the scheduler that are not design-vs-deployed
switches (those are ``[switches]``)."""

from __future__ import annotations

from pydantic import Field

from sim.scenario.types import DurationMs, Section, duration_default


class RetrySection(Section):
    """``[scheduler.retry]``: the seed-004 backoff (``retry_policy = "backoff"``)."""

    base: DurationMs = duration_default("1s")
    """First retry delay (seed 004: 1 s); attempt n waits base * 2^(n-1)."""
    cap: DurationMs = duration_default("30s")
    """Longest delay before jitter (seed 004: 30 s)."""
    jitter: float = Field(default=0.5, ge=0, le=1)
    """Relative jitter: the delay is multiplied by a uniform factor in [1 - j, 1 + j] (+/-50 %)."""
    max_retries: int = Field(default=3, ge=0, le=20)
    """Retries after the first attempt (seed 004: 3)."""
    by_class: bool = False
    """Retry by error class (issue 28): a rate-limited failure (429, no proxy) backs off from
    ``rate_limited_base`` and honours a Retry-After (up to ``retry_after_cap``); a 4xx is
    never retried either way. Off: every retryable class alike (seed 004's one backoff)."""
    rate_limited_base: DurationMs = Field(default=duration_default("5s"), gt=0)
    """First delay of a rate-limited failure under ``by_class`` (seed 004: 429
    "通常需要更长等待")."""
    retry_after_cap: DurationMs = Field(default=duration_default("60s"), gt=0)
    """The longest Retry-After honoured under ``by_class``."""


class SchedulerSection(Section):
    """``[scheduler]``."""

    snapshot_concurrency: int = Field(default=50, ge=1, le=10_000)
    """Workers of the ``snapshot`` queue (reference §1.2: 50)."""
    history: list[DurationMs] = Field(
        default_factory=lambda: [duration_default("24h"), 0], max_length=16
    )
    """Snapshots every known video already has at the start: one per offset before the start
    (e.g. ``["24h", "0s"]``), so that growth and ETAs can be computed from the first tick."""
    retry: RetrySection = RetrySection()
