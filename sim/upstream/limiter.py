"""Rate limiters of the deployed network layer (reference §14.1), pure: time is an argument.

Each tier ``(period, limit)`` is a GCRA -- a token bucket holding ``limit`` tokens that refills
``limit`` per ``period`` -- as in go-redis/redis_rate, which @koshnic/ratelimit ports. A request
costs one token; a denied request costs nothing. A :class:`MultiTierLimiter` walks its tiers in
order and stops at the first denial, **without refunding** what earlier tiers took (§14.1).

``scale`` divides every limit (the "throttling storm" fault): the same state, a k-times stricter
budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sim.units import SECOND_MS, Ms


@dataclass
class Gcra:
    """One tier: ``limit`` requests per ``period_ms``, burst ``limit`` (§14.1)."""

    period_ms: Ms
    limit: int
    tat: float = 0.0
    """Theoretical arrival time of the next request with the bucket full (ms)."""

    def allow(self, now_ms: Ms, scale: float = 1.0) -> bool:
        """Take one token if one is available at ``now_ms``; with ``scale`` = k the limit is
        ``limit / k`` per period (and the burst shrinks with it)."""
        limit = self.limit / scale
        if limit <= 0:
            return False
        emission = self.period_ms / limit
        tat = max(self.tat, float(now_ms))
        new_tat = tat + emission
        if new_tat - emission * limit > now_ms:
            return False
        self.tat = new_tat
        return True


class MultiTierLimiter:
    """Tiers tried in order; the first denial stops the walk and nothing is refunded (§14.1)."""

    def __init__(self, tiers: Sequence[tuple[Ms, int]]) -> None:
        self.tiers = [Gcra(period, limit) for period, limit in tiers]

    def trigger(self, now_ms: Ms, scale: float = 1.0) -> bool:
        return all(tier.allow(now_ms, scale) for tier in self.tiers)


PROVIDER_TIERS: Final[tuple[tuple[Ms, int], ...]] = (
    (1 * SECOND_MS, 20),
    (15 * SECOND_MS, 130),
    (300 * SECOND_MS, 2000),
)
"""The bilibili provider limiter, one copy per proxy (reference §14.2)."""

BULK_TASK_TIERS: Final[tuple[tuple[Ms, int], ...]] = (
    (1 * SECOND_MS, 5),
    (15 * SECOND_MS, 40),
    (300 * SECOND_MS, 200),
)
"""The ``bulkSnapshot`` task limiter on alicloud_hangzhou, checked first (reference §14.2)."""
