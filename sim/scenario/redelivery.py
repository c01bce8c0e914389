"""``[delivery]``: redelivery and dedupe of queue jobs (issue 28; docs/redelivery.md).

Three mechanisms, each off by default (then a crashed job is lost, ``JobLost``, and nothing
else changes):

* ``stalled_check``: BullMQ's stalled-job check (reference §1.2): a job whose worker died is
  found once its lock expires and delivered again, up to ``max_stalled_count`` stalls;
* ``consumer_retry``: seed 004's consumer: a failed delivery is not acknowledged and comes back
  ``retry_delay`` later; a delivery past ``max_deliveries`` is acknowledged and dropped;
* ``dedupe``: seed 004's ``msg:<id>`` marker: a message processed within ``dedupe_ttl`` is
  skipped.

The numbers' defaults and citations live in the parameter dataclasses
(:class:`sim.engine.StallParams`, :class:`sim.cvsa.delivery.DeliveryParams`), built here, once.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from sim.cvsa.delivery import DeliveryParams
from sim.engine import StallParams
from sim.scenario.types import DurationMs, Section, duration_default
from sim.units import SECOND_MS

_STALL = StallParams()
_DELIVERY = DeliveryParams()


def _s(ms: int) -> Any:
    """A default in ms, as a ``DurationMs`` default is given: in seconds (``duration_default``)."""
    return ms / SECOND_MS


class DeliverySection(Section):
    """``[delivery]``."""

    stalled_check: bool = False
    """BullMQ's stalled check: a crash leaves its running jobs active until their locks expire,
    then the check delivers them again (off: a crash loses them, ``JobLost``)."""
    lock: DurationMs = Field(default=_s(_STALL.lock_ms), gt=0)
    """A job's lock duration (BullMQ ``lockDuration``, 30 s, reference §1.2)."""
    lock_renew: DurationMs = Field(default=_s(_STALL.renew_ms), gt=0)
    """How often a live worker renews its locks (``lockRenewTime``, 15 s, reference §1.2)."""
    stalled_interval: DurationMs = Field(default=_s(_STALL.stalled_interval_ms), gt=0)
    """The stalled check's period (``stalledInterval``, 30 s, reference §1.2)."""
    max_stalled_count: int = Field(default=_STALL.max_stalled_count, ge=0)
    """Stalls a job survives; one more fails it (``maxStalledCount``, 1, reference §1.2)."""
    consumer_retry: bool = False
    """Seed 004's consumer: a delivery whose row ended ``failed`` or ``no_proxy`` is not
    acknowledged and comes back; past ``max_deliveries`` it is acknowledged and dropped."""
    max_deliveries: int = Field(default=_DELIVERY.max_deliveries, ge=1)
    """Deliveries a message gets (seed 004 ``deliveryCount > 3`` drops)."""
    retry_delay: DurationMs = Field(default=_s(_DELIVERY.retry_delay_ms), ge=0)
    """A failed delivery comes back this much later (seed 004 "队列消费 | 3 | 2s")."""
    dedupe: bool = False
    """Seed 004's dedupe: a snapshot job whose message (its schedule rows) was processed within
    ``dedupe_ttl`` is acknowledged and skipped."""
    dedupe_ttl: DurationMs = Field(default=duration_default("24h"), gt=0)
    """How long a processed message's marker lives (seed 004 ``EX 86400``)."""

    def stall_params(self) -> StallParams | None:
        """The stalled check's numbers, or None when it is off."""
        if not self.stalled_check:
            return None
        return StallParams(
            lock_ms=self.lock,
            renew_ms=self.lock_renew,
            stalled_interval_ms=self.stalled_interval,
            max_stalled_count=self.max_stalled_count,
        )

    def delivery_params(self) -> DeliveryParams:
        """The consumer's numbers (used only by the mechanisms that are on)."""
        return DeliveryParams(
            max_deliveries=self.max_deliveries,
            retry_delay_ms=self.retry_delay,
            dedupe_ttl_ms=self.dedupe_ttl,
        )

    @property
    def consumer_on(self) -> bool:
        """Does the consumer guard wrap the snapshot processors?"""
        return self.consumer_retry or self.dedupe
