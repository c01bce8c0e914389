"""``[upstream]``: bilibili reached through proxies (reference §14), and how it misbehaves.

Defaults: the deployed proxies and rate limits (§14.2: alicloud_hangzhou, cf-worker, native;
1 s / 15 s / 300 s tiers), deployed timeouts (§14.4), and latencies and error rates that the
repository does not give (§17 "not in repo, must be parameterised"): they are plausible values
for a proxied JSON API, to be replaced by measurements when you have them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from sim.cvsa.throttle import FULL, ThrottleParams
from sim.scenario.types import DurationMs, Section, duration_default


class LatencySection(Section):
    """A log-normal latency given by its median and 99th percentile."""

    median: DurationMs = Field(gt=0)
    """Median time from request to response."""
    p99: DurationMs = Field(gt=0)
    """99th percentile; must be at least the median."""

    @model_validator(mode="after")
    def _ordered(self) -> LatencySection:
        if self.p99 < self.median:
            raise ValueError(f"p99 must be >= median (got {self.p99} ms < {self.median} ms)")
        return self


class ErrorRates(Section):
    """Per-request probabilities of each failure (independent of the video)."""

    fetch_error: float = Field(default=0.001, ge=0, le=1)
    """Transport failure (connection reset, DNS): FETCH_ERROR on native and cf-worker."""
    timeout: float = Field(default=0.0005, ge=0, le=1)
    """The request hangs until the proxy's timeout (``timeouts``), then fails."""
    http_5xx: float = Field(default=0.001, ge=0, le=1)
    """bilibili answers 5xx."""
    http_429: float = Field(default=0.0005, ge=0, le=1)
    """bilibili answers 429 Too Many Requests."""
    throttled: float = Field(default=0.0, ge=0, le=1)
    """bilibili answers 200 with code -412 (request blocked): a *business* error the deployed
    code records as the video's status (§9 step 4)."""
    http_4xx: float = Field(default=0.0, ge=0, le=1)
    """bilibili answers a 4xx that is not 429 (seed 004: a client error, never retried);
    through Aliyun FC it is ALICLOUD_PROXY_ERR like any non-200 (§14.4). Issue 28."""
    retry_after_share: float = Field(default=0.0, ge=0, le=1)
    """Share of 429 answers that carry a Retry-After header (drawn from its own stream
    ``retry_after``, only for a 429 and only when this is above 0). Through Aliyun FC the
    header is lost with the status (§14.4)."""
    retry_after: DurationMs = Field(default=duration_default("10s"), gt=0)
    """The Retry-After such an answer carries."""

    @model_validator(mode="after")
    def _sum(self) -> ErrorRates:
        total = (
            self.fetch_error
            + self.timeout
            + self.http_5xx
            + self.http_429
            + self.throttled
            + self.http_4xx
        )
        if total > 1:
            raise ValueError(f"error rates must sum to <= 1 (got {total:g})")
        return self


class TimeoutSection(Section):
    """How long each proxy waits before giving up (reference §14.4)."""

    native: DurationMs = duration_default("10s")
    """Native fetch: a 10 s abort timer."""
    cf_worker: DurationMs = duration_default("15s")
    """The Cloudflare worker: a 15 s abort."""
    alicloud: DurationMs = duration_default("15s")
    """Aliyun FC: the config says 15 s but the SDK default applies, which the repo does not
    give (§14.4, Q7); 15 s is assumed."""


class RiskControlSection(Section):
    """``[upstream.risk_control]``: bilibili's own tolerance per proxy (issue 28; seed 003 §6.3
    风控). Each proxy's requests pass a GCRA of ``limit`` per ``period`` (as the limiters of
    reference §14.1); a request beyond it is answered ``answer`` instead. Fault
    ``risk_control_storm`` divides ``limit`` while it lasts."""

    enabled: bool = False
    """Off: bilibili answers by the drawn error rates only."""
    limit: int = Field(default=10, ge=1)
    """Requests a proxy may send per ``period`` (and its burst) before bilibili throttles it."""
    period: DurationMs = Field(default=duration_default("1s"), gt=0)
    """The tolerance's period."""
    answer: Literal["throttled", "http_429"] = "throttled"
    """What a request beyond the tolerance gets: 200 with -412 (bilibili's risk control), or a
    429."""


class AdaptiveSection(Section):
    """``[upstream.adaptive]``: slow down when answers come back throttled (issue 28; seed 003
    §6.3 "一旦风控触发频率明显上升就要立刻回退采集频次"). The rule: :mod:`sim.cvsa.throttle`; while
    the factor is below 1 the crawler sends at most that factor of the requests per window it
    sent when the throttling began (docs/upstream-reaction.md)."""

    enabled: bool = False
    """Off: the crawler's limits never change (seed 000, the deployed code)."""
    window: DurationMs = Field(default=duration_default("1m"), gt=0)
    """Sliding window of answers (-412 and 429 are throttled) the share is read over."""
    threshold: float = Field(default=0.2, gt=0, lt=1)
    """Drop the rate when the throttled share of the window exceeds this."""
    restore_below: float = Field(default=0.05, ge=0, lt=1)
    """Restore only while the share is at most this (must be <= ``threshold``: hysteresis)."""
    min_answers: int = Field(default=20, ge=1)
    """Answers the window needs before it can cut the rate (restoring needs none: the cut rate
    keeps the window small)."""
    lower: float = Field(default=0.5, gt=0, lt=1)
    """Multiply the factor by this on a drop (once per window at most)."""
    floor: float = Field(default=0.1, gt=0, le=1)
    """The lowest factor."""
    restore_step: float = Field(default=0.1, gt=0, le=1)
    """Add this to the factor on a restore (up to 1)."""
    restore_period: DurationMs = Field(default=duration_default("1m"), gt=0)
    """At most one restore (and none after a drop) per this period."""

    @model_validator(mode="after")
    def _hysteresis(self) -> AdaptiveSection:
        if self.restore_below > self.threshold:
            raise ValueError(
                f"restore_below must be <= threshold (got {self.restore_below:g} > "
                f"{self.threshold:g})"
            )
        return self

    def params(self) -> ThrottleParams:
        """The rule's parameters (permille), built here and nowhere else."""
        return ThrottleParams(
            window_ms=self.window,
            threshold_permille=round(self.threshold * FULL),
            restore_below_permille=round(self.restore_below * FULL),
            min_answers=self.min_answers,
            lower_permille=round(self.lower * FULL),
            floor_permille=round(self.floor * FULL),
            restore_step_permille=round(self.restore_step * FULL),
            restore_period_ms=self.restore_period,
        )


class UpstreamSection(Section):
    """``[upstream]``."""

    single: LatencySection = LatencySection(
        median=duration_default("250ms"), p99=duration_default("2s")
    )
    """Latency of one ``x/web-interface/view`` call."""
    bulk: LatencySection = LatencySection(
        median=duration_default("600ms"), p99=duration_default("4s")
    )
    """Latency of one bulk ``medialist/.../infos`` call for up to 30 videos."""
    errors: ErrorRates = ErrorRates()
    timeouts: TimeoutSection = TimeoutSection()
    rate_limits: bool = True
    """Apply the deployed GCRA limiters (provider per proxy, and the bulk task limiter)."""
    risk_control: RiskControlSection = RiskControlSection()
    adaptive: AdaptiveSection = AdaptiveSection()
