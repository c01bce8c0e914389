"""``[upstream]``: bilibili reached through proxies (reference §14), and how it misbehaves.

Defaults: the deployed proxies and rate limits (§14.2: alicloud_hangzhou, cf-worker, native;
1 s / 15 s / 300 s tiers), deployed timeouts (§14.4), and latencies and error rates that the
repository does not give (§17 "not in repo, must be parameterised"): they are plausible values
for a proxied JSON API, to be replaced by measurements when you have them.
"""

from __future__ import annotations

from pydantic import Field, model_validator

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

    @model_validator(mode="after")
    def _sum(self) -> ErrorRates:
        total = self.fetch_error + self.timeout + self.http_5xx + self.http_429 + self.throttled
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
