"""The snapshot record the rules read, and the two lookups CVSA runs against ``video_snapshot``.

The rules never query anything: callers hand them the snapshots they found. These helpers do the
finding over an in-memory, time-ordered sequence, with the deployed tie-breaks, so an in-memory
store and the tests agree with the SQL (reference §11.3, §19.7).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from sim.cvsa.params import Params
from sim.ports import Snapshot
from sim.units import Ms

__all__ = ["Snapshot", "find_closest_snapshot", "find_snapshot_before", "snapshot_reach_ms"]


def _times(snapshots: Sequence[Snapshot]) -> list[Ms]:
    return [s.created_at_ms for s in snapshots]


def find_snapshot_before(snapshots: Sequence[Snapshot], t_ms: Ms) -> Snapshot | None:
    """The latest snapshot with ``created_at <= t_ms`` (``findSnapshotBefore``, reference §11.3).

    Args:
        snapshots: one video's snapshots in ascending ``created_at`` order.
        t_ms: the instant to look before (inclusive).
    """
    i = bisect_right(_times(snapshots), t_ms)
    return snapshots[i - 1] if i else None


def find_closest_snapshot(snapshots: Sequence[Snapshot], t_ms: Ms) -> Snapshot | None:
    """The snapshot closest to ``t_ms`` in absolute time (``findClosestSnapshot``, §11.3).

    CVSA compares the latest row at or before ``t_ms`` with the earliest at or after it. A tie is
    broken by ``ROW_NUMBER`` without a promise; the deployed database returned the **earlier**
    row (reference §19.7), and so does this function.

    Args:
        snapshots: one video's snapshots in ascending ``created_at`` order.
        t_ms: the instant to look around.
    """
    times = _times(snapshots)
    i = bisect_right(times, t_ms)
    before = snapshots[i - 1] if i else None
    j = bisect_left(times, t_ms)
    after = snapshots[j] if j < len(snapshots) else None
    if before is None or after is None:
        return before if before is not None else after
    if after.created_at_ms - t_ms < t_ms - before.created_at_ms:
        return after
    return before


def snapshot_reach_ms(params: Params, worker_behind_ms: Ms = 0) -> Ms:
    """How far before the database's clock any rule asks for a snapshot: the longest of the ETA
    lookbacks (``getAdjustedShortTermETA``, reference §11.4) and the regular interval's look-back
    (``getRegularSnapshotInterval``, §11.6; the latest snapshot is the other read, §11.3), plus
    how far the worker's clock, on which those instants are computed, runs behind the
    database's (``worker_behind_ms``; the ``clock_skew`` fault). A store may let go of what lies
    further back (:class:`sim.backends.memory.MemoryStore`)."""
    return max((*params.eta_lookbacks_ms, params.regular_lookback_ms)) + max(worker_behind_ms, 0)
