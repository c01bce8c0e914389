"""The memory store's lookback answers (``lookback_snapshots``) equal the reference
``find_closest_snapshot`` whatever came before: the answer it keeps between calls (reused while
each target stays between the same midpoints) must never outlive a moved target or a new row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.backends import MemoryStore
from sim.cvsa.params import DEFAULT_PARAMS
from sim.cvsa.snapshots import find_closest_snapshot
from sim.ports import Snapshot

LADDER = DEFAULT_PARAMS.milestone_ladder

AID = 7
BACKS = [0, 3, 20, 60, 180]
NEAR = 95_000
"""Views in the [90k, 100k) band: the video stays a milestone candidate (§11.1), the only
kind whose lookback answer is kept between calls."""

steps = st.lists(
    st.one_of(
        # Mostly near a milestone (answers kept), sometimes not (answers dropped).
        st.tuples(
            st.just("insert"),
            st.integers(0, 400),
            st.one_of(st.integers(NEAR, NEAR + 4_999), st.integers(0, 10**6)),
        ),
        st.tuples(st.just("advance"), st.integers(-15, 40)),  # targets may also go back
        st.tuples(st.just("query"), st.integers(1, len(BACKS))),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(steps)
def test_lookbacks_always_equal_the_reference(sequence: list[tuple[Any, ...]]) -> None:
    async def run() -> None:
        store, rows, now = MemoryStore(), {}, 200
        for step in sequence:
            if step[0] == "insert":
                _, t, views = step
                if await store.insert_snapshot(AID, t, views):
                    rows[t] = views
            elif step[0] == "advance":
                now += step[1]
            else:
                backs = tuple(BACKS[: step[1]])
                targets = [now - back for back in backs]
                got = list(await store.lookback_snapshots(AID, now, backs))
                ordered = [Snapshot(t, v) for t, v in sorted(rows.items())]
                assert got == [find_closest_snapshot(ordered, t) for t in targets], step

    trio.run(run)


def test_a_kept_answer_follows_the_midpoint_and_the_tie_rule() -> None:
    async def run() -> list[list[Snapshot | None]]:
        store = MemoryStore()
        for t in (0, 10, 20):
            await store.insert_snapshot(AID, t, t)
        # Midpoints at 5 and 15; a target exactly on one goes to the earlier row (§19.7).
        times = (4, 5, 6, 15, 16, 15, 14, 5, 4, 16, 5)  # forward, back onto each tie, jumps
        return [list(await store.lookback_snapshots(AID, t, (0, 100))) for t in times]

    answers = trio.run(run)
    rows = [a[0].created_at_ms for a in answers if a[0] is not None]
    assert rows == [0, 0, 10, 10, 20, 10, 10, 0, 0, 20, 0]


def test_a_kept_answer_narrows_when_a_row_is_appended() -> None:
    async def run() -> list[Sequence[Snapshot | None]]:
        store = MemoryStore()
        for t in (0, 10):
            await store.insert_snapshot(AID, t, NEAR + t)
        out = [await store.lookback_snapshots(AID, 16, (0, 14))]  # row 10, no upper bound
        kept = store._lookbacks[AID]
        await store.insert_snapshot(AID, 20, NEAR + 20)  # its range now ends at the midpoint, 15
        assert store._lookbacks[AID] is kept  # narrowed in place, not recomputed
        assert kept.hi2 == 2 * 15  # the open upper bound is now twice the midpoint
        out.append(await store.lookback_snapshots(AID, 16, (0, 14)))
        await store.insert_snapshot(AID, 5, NEAR + 5)  # before the last row: the kept answer goes
        out.append(await store.lookback_snapshots(AID, 4, (0, 2)))
        return out

    answers = trio.run(run)
    assert [[s.created_at_ms for s in a if s] for a in answers] == [[10, 0], [20, 0], [5, 0]]


def test_a_held_answer_is_the_same_object() -> None:
    """The ETA memo (``estimates.adjusted_eta``) relies on identity to skip its comparison."""

    async def run() -> list[bool]:
        store = MemoryStore()
        for t in (0, 10, 20):
            await store.insert_snapshot(AID, t, NEAR + t)
        first = await store.lookback_snapshots(AID, 21, (0, 12))  # rows 20 and 10
        same = await store.lookback_snapshots(AID, 24, (0, 12))  # targets 24, 12: still held
        still = await store.lookback_snapshots(AID, 26, (0, 12))  # 14: row 10 (midpoint 15)
        left = await store.lookback_snapshots(AID, 28, (0, 12))  # target 16: row 20 now
        return [same is first, still is first, left is first, left[1] == Snapshot(20, NEAR + 20)]

    assert trio.run(run) == [True, True, False, True]


def test_an_answer_is_not_kept_for_a_video_that_stops_being_a_candidate() -> None:
    """Kept answers are for the milestone dispatcher's candidates, asked every five minutes; a
    video that leaves the set (here its views pass the 100k band) must not hold one all run."""

    async def run() -> tuple[bool, bool, list[Snapshot | None]]:
        store = MemoryStore()
        for t in (0, 10, 20):
            await store.insert_snapshot(AID, t, NEAR + t)
        assert await store.milestone_candidates(False, 2300.0, LADDER) == [
            AID
        ]  # the dispatcher asks
        await store.lookback_snapshots(AID, 21, (0, 12))
        held = AID in store._lookbacks
        await store.insert_snapshot(AID, 30, 150_000)  # past the milestone: not a candidate
        dropped = AID not in store._lookbacks
        return held, dropped, list(await store.lookback_snapshots(AID, 31, (0, 12)))

    held, dropped, answer = trio.run(run)
    assert held
    assert dropped
    assert answer == [Snapshot(30, 150_000), Snapshot(20, NEAR + 20)]
