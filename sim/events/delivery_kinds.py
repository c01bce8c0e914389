"""Event kinds of redelivery and dedupe (issue 28, codes 20-29; docs/redelivery.md).

All of them are off by default (``[delivery]``): a run without the section logs none.

* BullMQ stalled jobs (reference §1.2): a job whose worker died is *abandoned* (it stays in the
  active list holding its lock until the lock expires), the stalled check finds it, moves it back
  to wait (*redelivered*) or, past ``maxStalledCount``, fails it (*dropped*, ``stalled_limit``).
* Consumer-side retry (seed 004 "队列消费 | 3 | 2s | 配合 acknowledge"): a failed delivery is not
  acknowledged and comes back after the retry delay (*retried*, then *redelivered*); a delivery
  past the cap is acknowledged and dropped (``delivery_cap``).
* Dedupe by message id (seed 004 ``redis.get(msg:<id>)``): a message already processed within
  the TTL is acknowledged and skipped.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from sim.events.schema import enum, event

REDELIVERY_CAUSE: Final = enum("redelivery_cause", "stalled", "retry")
"""Why a job was delivered again: the stalled check found it, or its failed delivery came back."""
DROP_REASON: Final = enum("drop_reason", "stalled_limit", "delivery_cap")
"""Why a job was given up: stalled more than ``max_stalled_count`` times (BullMQ moves it to
failed), or delivered more than the consumer's cap (acknowledged and dropped, seed 004)."""


@event(20)
class JobAbandoned(NamedTuple):
    """The worker running the job died (with the stalled check on, in place of ``JobLost``): the
    job stays active, its lock held until ``lock_expires_ms`` (last renewal + lock duration);
    ``marked`` 1 if the last stalled check before the crash had already marked it."""

    seq: int
    t_ms: int
    queue: int
    job: int
    name: int
    due_ms: int
    lock_expires_ms: int
    marked: int


@event(21)
class JobStalled(NamedTuple):
    """The stalled check found the job's lock gone; ``stalled`` is its stalled count now."""

    seq: int
    t_ms: int
    queue: int
    job: int
    name: int
    stalled: int


@event(22)
class JobRedelivered(NamedTuple):
    """The job went back to wait for delivery number ``delivery`` (2 = the second), because of
    ``cause`` (a ``redelivery_cause`` code)."""

    seq: int
    t_ms: int
    queue: int
    job: int
    name: int
    delivery: int
    cause: int


@event(23)
class JobRetried(NamedTuple):
    """Delivery ``delivery`` of the job failed and was not acknowledged: it comes back at
    ``due_ms`` (the consumer's retry delay later)."""

    seq: int
    t_ms: int
    queue: int
    job: int
    name: int
    delivery: int
    due_ms: int


@event(24)
class JobDropped(NamedTuple):
    """The job was given up at delivery ``delivery`` for ``reason`` (a ``drop_reason`` code): its
    work is not done."""

    seq: int
    t_ms: int
    queue: int
    job: int
    name: int
    delivery: int
    reason: int


@event(25)
class DuplicateSkipped(NamedTuple):
    """Delivery ``delivery`` of the job carried message ``message`` (a schedule row id: the
    first of the batch, which has ``rows`` rows), already processed within the dedupe TTL: it was
    acknowledged and skipped."""

    seq: int
    t_ms: int
    queue: int
    job: int
    name: int
    delivery: int
    message: int
    rows: int
