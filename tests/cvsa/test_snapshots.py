"""findSnapshotBefore / findClosestSnapshot over a sorted list (reference §11.3, §19.7)."""

from __future__ import annotations

from sim.cvsa.snapshots import Snapshot, find_closest_snapshot, find_snapshot_before

A, B, C = Snapshot(1_000, 10), Snapshot(2_000, 20), Snapshot(4_000, 40)
ROWS = [A, B, C]


def test_find_snapshot_before_is_inclusive() -> None:
    assert find_snapshot_before(ROWS, 999) is None
    assert find_snapshot_before(ROWS, 1_000) == A
    assert find_snapshot_before(ROWS, 1_999) == A
    assert find_snapshot_before(ROWS, 2_000) == B
    assert find_snapshot_before(ROWS, 10_000) == C
    assert find_snapshot_before([], 10_000) is None


def test_find_closest_snapshot() -> None:
    assert find_closest_snapshot([], 5) is None
    assert find_closest_snapshot(ROWS, 0) == A
    assert find_closest_snapshot(ROWS, 2_000) == B  # exact hit
    assert find_closest_snapshot(ROWS, 2_999) == B
    assert find_closest_snapshot(ROWS, 3_001) == C
    assert find_closest_snapshot(ROWS, 9_000) == C


def test_find_closest_snapshot_tie_returns_the_earlier_row() -> None:
    assert find_closest_snapshot(ROWS, 3_000) == B  # 1000 ms either side (§19.7)
    assert find_closest_snapshot(ROWS, 1_500) == A
