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

from sim.cvsa.constants import (
    BULK_TICK_LOOKAHEAD_MS,
    CLEANUP_OVERDUE_MS,
    PRIORITY_ARCHIVE_SINGLE,
    PRIORITY_MILESTONE,
    PRIORITY_NEW,
    PRIORITY_NORMAL_BULK,
    SINGLE_TICK_LOOKAHEAD_MS,
)
from sim.cvsa.lifecycle import SnapshotType
from sim.cvsa.profile import Switches
from sim.units import Ms

_T = TypeVar("_T")

BULK_TYPES: Final = frozenset({SnapshotType.NORMAL, SnapshotType.ARCHIVE})
"""Types bulkSnapshotTick takes (seed 000; reference §8.1)."""


def single_tick_types(switches: Switches) -> frozenset[SnapshotType]:
    """Types snapshotTick takes: milestone and new; deployed (``type <> 'normal'``) also archive.

    Seed 000 lists milestone and new for snapshotTick and archive for bulkSnapshotTick; the
    deployed filter also matches archive rows (switch ``single_tick_takes_archive``, §7.1,
    §16.1). Rows of NULL type match neither tick (§19.9).
    """
    if switches.single_tick_takes_archive:
        return frozenset({SnapshotType.MILESTONE, SnapshotType.NEW, SnapshotType.ARCHIVE})
    return frozenset({SnapshotType.MILESTONE, SnapshotType.NEW})


def single_tick_bounds(now_ms: Ms, switches: Switches) -> tuple[Ms | None, Ms]:
    """``(lo, hi)``: snapshotTick takes pending rows with ``lo <= started_at <= hi`` (§7.1).

    ``hi`` is now + 1 s; ``lo`` is now − ``single_tick_lookback_ms`` (1 min deployed) or None
    for no lower bound (design: "started_at 在未来1秒内到期").
    """
    lookback = switches.single_tick_lookback_ms
    return (None if lookback is None else now_ms - lookback, now_ms + SINGLE_TICK_LOOKAHEAD_MS)


def bulk_tick_bounds(now_ms: Ms, switches: Switches) -> tuple[Ms | None, Ms]:
    """``(lo, hi)`` of bulkSnapshotTick: now + 15 s, back 2 min deployed or unbounded (§8.1)."""
    lookback = switches.bulk_tick_lookback_ms
    return (None if lookback is None else now_ms - lookback, now_ms + BULK_TICK_LOOKAHEAD_MS)


def in_bounds(started_at_ms: Ms, bounds: tuple[Ms | None, Ms]) -> bool:
    """``lo <= started_at <= hi``, both inclusive (§19.9)."""
    lo, hi = bounds
    return (lo is None or lo <= started_at_ms) and started_at_ms <= hi


def single_tick_sort_key(started_at_ms: Ms, row_id: int) -> tuple[Ms, int]:
    """The order snapshotTick takes rows in: no ORDER BY in the code, so this model's choice
    (reference §7.1, §19.10, Q5)."""
    return (started_at_ms, row_id)


def bulk_tick_sort_key(
    snapshot_type: SnapshotType, started_at_ms: Ms, row_id: int
) -> tuple[int, Ms, int]:
    """Normal first, then archive, then ``started_at``; ties by id (§8.1, §19.10)."""
    return (0 if snapshot_type is SnapshotType.NORMAL else 1, started_at_ms, row_id)


def batches(rows: Sequence[_T], size: int) -> list[Sequence[_T]]:
    """Consecutive groups of ``size`` (30: one bulk API call each, §8.2)."""
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def single_priority(snapshot_type: SnapshotType) -> int:
    """BullMQ priority of a ``snapshotVideo`` job: milestone 1, new and archive 3 (§7.2)."""
    if snapshot_type is SnapshotType.MILESTONE:
        return PRIORITY_MILESTONE
    return PRIORITY_NEW if snapshot_type is SnapshotType.NEW else PRIORITY_ARCHIVE_SINGLE


def bulk_priority(types: Sequence[SnapshotType], switches: Switches) -> int:
    """BullMQ priority of a ``bulkSnapshotVideo`` job holding rows of ``types`` (§8.2, §16.2).

    Deployed: always 3. Design (seed 000: "normal=3, archive=2"): a batch holding any archive
    row gets the archive priority (the more urgent number wins; a tick's batches mix types at
    most once, where normal rows end and archive rows begin).
    """
    if SnapshotType.ARCHIVE in types:
        return min(PRIORITY_NORMAL_BULK, switches.archive_bulk_priority)
    return PRIORITY_NORMAL_BULK


def cleanup_cutoff_ms(now_ms: Ms) -> Ms:
    """Cleanup deletes pending and processing rows with ``started_at`` **strictly** before this
    (``started_at < NOW() - INTERVAL '2 minutes'``, seed 000 超时清理; reference §12)."""
    return now_ms - CLEANUP_OVERDUE_MS
