"""What the two ticks and cleanup select, in which order, and with which priority (§7, §8, §12).

The store runs the queries; these functions state their bounds and orders once, so every backend
selects the same rows. Both tick bounds are **inclusive** (reference §19.9). Where SQL leaves the
order open (no ORDER BY, or ties), this model fixes one and says so (§19.10, Q5):

* snapshotTick: ascending ``started_at``, then ascending id (the likely index plan, §7.1).
* bulkSnapshotTick: normal rows, then archive, then ascending ``started_at``, then ascending id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypeVar

from sim.cvsa.params import Params
from sim.cvsa.profile import Switches
from sim.cvsa.vocabulary import ScheduleType
from sim.units import Ms

_T = TypeVar("_T")

BULK_TYPES: Final = (ScheduleType.NORMAL, ScheduleType.ARCHIVE)
"""Types bulkSnapshotTick takes (seed 000; reference §8.1)."""
_BULK_RANK: Final = {ScheduleType.NORMAL: 0, ScheduleType.ARCHIVE: 1}
_SINGLE_DESIGN: Final = (ScheduleType.NEW, ScheduleType.MILESTONE)
_SINGLE_DEPLOYED: Final = tuple(t for t in ScheduleType if t is not ScheduleType.NORMAL)


def single_tick_types(switches: Switches) -> tuple[ScheduleType, ...]:
    """Types snapshotTick takes, in vocabulary order (the order does not change the answer).

    Seed 000 lists milestone and new for snapshotTick and archive for bulkSnapshotTick. The
    deployed query selects ``type <> 'normal'`` (switch ``single_tick_takes_archive``, §7.1,
    §16.1): every type but normal, archive included. Rows of NULL type match neither tick
    (§19.9).
    """
    return _SINGLE_DEPLOYED if switches.single_tick_takes_archive else _SINGLE_DESIGN


def single_tick_bounds(now_ms: Ms, params: Params) -> tuple[Ms | None, Ms]:
    """``(lo, hi)``: snapshotTick takes pending rows with ``lo <= started_at <= hi`` (§7.1).

    ``hi`` is now + 1 s; ``lo`` is now − ``single_tick_lookback_ms`` (1 min deployed) or None
    for no lower bound (design: "started_at 在未来1秒内到期").
    """
    lookback = params.single_tick_lookback_ms
    return (
        None if lookback is None else now_ms - lookback,
        now_ms + params.single_tick_lookahead_ms,
    )


def bulk_tick_bounds(now_ms: Ms, params: Params) -> tuple[Ms | None, Ms]:
    """``(lo, hi)`` of bulkSnapshotTick: now + 15 s, back 2 min deployed or unbounded (§8.1)."""
    lookback = params.bulk_tick_lookback_ms
    lo = None if lookback is None else now_ms - lookback
    return (lo, now_ms + params.bulk_tick_lookahead_ms)


def in_bounds(started_at_ms: Ms, bounds: tuple[Ms | None, Ms]) -> bool:
    """``lo <= started_at <= hi``, both inclusive (§19.9)."""
    lo, hi = bounds
    return (lo is None or lo <= started_at_ms) and started_at_ms <= hi


def single_tick_sort_key(started_at_ms: Ms, row_id: int) -> tuple[Ms, int]:
    """The order snapshotTick takes rows in: no ORDER BY in the code, so this model's choice
    (reference §7.1, §19.10, Q5)."""
    return (started_at_ms, row_id)


def bulk_tick_sort_key(
    snapshot_type: ScheduleType, started_at_ms: Ms, row_id: int
) -> tuple[int, Ms, int]:
    """Normal first, then archive, then any other type (the query's ``CASE``; the bulk tick
    asks only for the two), each by ``started_at``; ties by id (§8.1, §19.10)."""
    return (_BULK_RANK.get(snapshot_type, 2), started_at_ms, row_id)


def batches(rows: Sequence[_T], size: int) -> list[Sequence[_T]]:
    """Consecutive groups of ``size`` (30: one bulk API call each, §8.2)."""
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def single_priority(snapshot_type: ScheduleType, params: Params) -> int:
    """BullMQ priority of a ``snapshotVideo`` job: milestone 1, new and archive 3 (§7.2)."""
    if snapshot_type is ScheduleType.MILESTONE:
        return params.priority_milestone
    if snapshot_type is ScheduleType.NEW:
        return params.priority_new
    return params.priority_archive_single


def bulk_priority(types: Sequence[ScheduleType], params: Params) -> int:
    """BullMQ priority of a ``bulkSnapshotVideo`` job holding rows of ``types`` (§8.2, §16.2).

    Deployed: always 3. Design (seed 000: "normal=3, archive=2"): a batch holding any archive
    row gets the archive priority (the more urgent number wins; a tick's batches mix types at
    most once, where normal rows end and archive rows begin).
    """
    if ScheduleType.ARCHIVE in types:
        return min(params.priority_normal_bulk, params.archive_bulk_priority)
    return params.priority_normal_bulk


def cleanup_cutoff_ms(now_ms: Ms, params: Params) -> Ms:
    """Cleanup deletes pending and processing rows with ``started_at`` **strictly** before this
    (``started_at < NOW() - INTERVAL '2 minutes'``, seed 000 超时清理; reference §12)."""
    return now_ms - params.cleanup_overdue_ms
