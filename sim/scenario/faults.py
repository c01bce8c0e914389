"""``[[faults]]``: what goes wrong, and when (issue 6; anchors.md: a scheduler-specific fault
catalogue). Times are offsets from the run's start (``start = "1d2h"``); a fault either lasts
(``start`` + ``duration``) or happens at an instant (``at``).

    [[faults]]
    kind = "upstream_outage"     # every upstream request fails
    start = "2h"
    duration = "10m"
    error = "http_5xx"           # http_5xx | timeout | fetch_error
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from sim.scenario.types import DurationMs, Section, duration_default
from sim.units import parse_duration_ms


def _signed(value: Any) -> Any:
    if isinstance(value, str) and value.strip().startswith("-"):
        return -parse_duration_ms(value.strip()[1:])
    if isinstance(value, str):
        return parse_duration_ms(value.strip().lstrip("+"))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return -parse_duration_ms(-value) if value < 0 else parse_duration_ms(value)
    return value


SignedDurationMs = Annotated[int, BeforeValidator(_signed)]
"""A duration that may be negative (``"-30s"``), in ms."""


class _Lasting(Section):
    start: DurationMs = Field(ge=0)
    """When the fault begins, after the run's start."""
    duration: DurationMs = Field(gt=0)
    """How long it lasts."""


class UpstreamOutage(_Lasting):
    """Every upstream request fails (proxies up, bilibili down; or the network gone)."""

    kind: Literal["upstream_outage"]
    error: Literal["http_5xx", "timeout", "fetch_error"] = "http_5xx"
    """How requests fail: bilibili answers 5xx, requests hang until the proxy's timeout, or
    connections fail at once."""


class ThrottlingStorm(_Lasting):
    """Every rate limit (provider and task tiers, reference §14.2) is divided by ``factor``."""

    kind: Literal["throttling_storm"]
    factor: float = Field(gt=1)
    """Divisor of every limit (10: a tenth of the deployed rates)."""


class RiskControlStorm(_Lasting):
    """bilibili's own tolerance (``[upstream.risk_control]``) is divided by ``factor``: requests
    beyond it are answered -412 (or 429). Unlike ``throttling_storm``, which tightens the
    crawler's own limiters, slowing down helps here (issue 28; docs/upstream-reaction.md)."""

    kind: Literal["risk_control_storm"]
    factor: float = Field(gt=1)
    """Divisor of the tolerance (4: a quarter of ``risk_control.limit``)."""


class LatencySpike(_Lasting):
    """Every upstream request takes ``factor`` times as long."""

    kind: Literal["latency_spike"]
    factor: float = Field(gt=0)
    """Multiplier of every request's latency (timeouts still apply)."""


class CounterLoss(Section):
    """The Redis hash ``cvsa:snapshot_window_counts`` is emptied (a Redis restart without
    persistence, a FLUSHDB)."""

    kind: Literal["counter_loss"]
    at: DurationMs = Field(ge=0)
    """When the hash is emptied, after the run's start."""
    rebuild_after: DurationMs | None = None
    """Rebuild it from the pending rows this long after the loss (an operator re-running
    ``initSnapshotWindowCounts``). Unset: only the profile's periodic refresh, if any
    (``design.window_refresh_every_ms``), ever rebuilds it."""


class SchedulerRestart(Section):
    """The worker process crashes: running jobs are lost, their rows stay ``processing``;
    waiting and delayed jobs and the job schedulers' next iterations survive in Redis. After
    ``downtime`` a new process starts and marks the lost jobs interrupted (seed 001)."""

    kind: Literal["scheduler_restart"]
    at: DurationMs = Field(ge=0)
    """When the process dies, after the run's start."""
    downtime: DurationMs = Field(default=duration_default("30s"), ge=0)
    """How long no worker runs before the new process starts."""


class SlowDatabase(_Lasting):
    """Every query takes ``query_latency`` longer (a slow disk, lock contention)."""

    kind: Literal["slow_database"]
    query_latency: DurationMs = Field(gt=0)
    """Added to every query of the schedule and snapshot stores (Redis stays fast)."""


class ClockSkew(_Lasting):
    """The worker's clock (``Date.now()``) is ``skew`` off the database's (``NOW()``): due
    queries and cleanup use the database's time, the times the worker computes use its own."""

    kind: Literal["clock_skew"]
    skew: SignedDurationMs
    """Worker clock minus database clock: ``"-30s"`` is a worker running 30 s behind."""


class SecondInstance(_Lasting):
    """A second scheduler deployment (its own job schedulers and workers, no leader election)
    runs against the same database and Redis hash, its timers ``phase`` after the first's."""

    kind: Literal["second_instance"]
    phase: DurationMs = Field(default=duration_default("0.5s"), ge=0)
    """How far the second deployment's timers are behind the first's."""
    query_latency: DurationMs = Field(default=0, ge=0)
    """Query latency for both instances while it runs: without any, every tick is atomic and
    the two cannot interleave inside one (the races need a non-zero latency)."""


Fault = Annotated[
    UpstreamOutage
    | ThrottlingStorm
    | RiskControlStorm
    | LatencySpike
    | CounterLoss
    | SchedulerRestart
    | SlowDatabase
    | ClockSkew
    | SecondInstance,
    Field(discriminator="kind"),
]
