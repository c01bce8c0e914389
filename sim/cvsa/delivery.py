"""Consumer-side delivery rules: the delivery cap, which rows make a job fail, and dedupe by
message id (seed 004 "队列消费的幂等处理" ``handleMessage``; issue 28, docs/redelivery.md).

Seed 004's consumer, step by step, and where each step lives:

1. ``deliveryCount > 3`` -> acknowledge and drop (:func:`over_delivery_cap`);
2. ``redis.get(msg:<id>)`` set -> acknowledge and skip (:func:`dedupe_key`; the marker store is
   a port, :class:`sim.ports.MessageMarks`);
3. process; on success ``SET msg:<id> 1 EX 86400`` (:func:`marker_expires_ms`), then acknowledge;
4. on failure do not acknowledge: the queue delivers the message again ("队列消费 | 3 | 2s",
   :attr:`DeliveryParams.retry_delay_ms`; the queue's half is the engine's ``retry_failed``).

What a snapshot job's message is, and when it failed, is CVSA's: its message id is the schedule
row(s) it carries (:func:`message_id`): the row is what must be snapshotted once, and the same
row enqueued twice (reference §1.4: no custom ``jobId``, §7.3, §8.3) is the same message. The
deployed processors catch upstream errors and return normally (reference §1.2), so a failure
reaches the queue only through its rows: a job fails when a row it carries ended ``failed`` or
``no_proxy`` (:func:`delivery_failed`; ``bili_error`` is a business answer, not retried: seed
004 "Open API 业务错误：通常不可重试").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from sim.cvsa.lifecycle import Act, finish_act
from sim.cvsa.params import field_doc
from sim.cvsa.vocabulary import ScheduleStatus
from sim.units import DAY_MS, SECOND_MS, Ms


@dataclass(frozen=True)
class DeliveryParams:
    """The consumer's numbers (seed 004)."""

    max_deliveries: int = field(
        default=3,
        metadata=field_doc(
            "deliveries a message gets; one more is acknowledged and dropped",
            'seed 004 handleMessage "deliveryCount > 3"; "队列消费 | 3 | 2s"',
        ),
    )
    retry_delay_ms: Ms = field(
        default=2 * SECOND_MS,
        metadata=field_doc(
            "a failed delivery comes back this much later", 'seed 004 "队列消费 | 3 | 2s"'
        ),
    )
    dedupe_ttl_ms: Ms = field(
        default=DAY_MS,
        metadata=field_doc(
            "a processed message's marker lives this long",
            "seed 004 handleMessage \"redis.set(`msg:${id}`, '1', 'EX', 86400)\"",
        ),
    )


RETRYABLE: Final = frozenset({ScheduleStatus.FAILED, ScheduleStatus.NO_PROXY})
"""Row statuses that fail the delivery that wrote them (retryable errors, seed 004)."""
_FINAL: Final = (
    ScheduleStatus.COMPLETED,
    ScheduleStatus.FAILED,
    ScheduleStatus.NO_PROXY,
    ScheduleStatus.BILI_ERROR,
)


def over_delivery_cap(delivery: int, params: DeliveryParams) -> bool:
    """Step 1: is delivery number ``delivery`` (1 = the first) past the cap?"""
    return delivery > params.max_deliveries


def message_id(row_ids: Sequence[int]) -> str:
    """A snapshot job's message id: ``schedule:<id>`` for one row, the ids in batch order for a
    bulk batch (``schedule:<id>,<id>,...``)."""
    return "schedule:" + ",".join(str(i) for i in row_ids)


def dedupe_key(message: str) -> str:
    """Step 2's key (seed 004 ``msg:${message.messageId}``)."""
    return f"msg:{message}"


def marker_expires_ms(now_ms: Ms, params: DeliveryParams) -> Ms:
    """Step 3: the marker written at ``now_ms`` expires ``EX 86400`` later."""
    return now_ms + params.dedupe_ttl_ms


def delivery_failed(statuses: Iterable[ScheduleStatus | None]) -> bool:
    """Did the delivery fail, given the final status of each row it carried (None: the row is
    gone, nothing to retry)?"""
    return any(s in RETRYABLE for s in statuses)


def retry_transitions(
    table: Mapping[tuple[ScheduleStatus, Act], ScheduleStatus],
) -> dict[tuple[ScheduleStatus, Act], ScheduleStatus]:
    """The lifecycle with consumer retry on: a row a failed delivery left ``failed`` or
    ``no_proxy`` is finished again by the next delivery (any final status)."""
    return {**table, **{(s, finish_act(f)): f for s in RETRYABLE for f in _FINAL}}
