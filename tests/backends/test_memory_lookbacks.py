"""The memory store's lookback answers (``closest_snapshots``) equal the reference
``find_closest_snapshot`` whatever came before: the answer it keeps between calls (reused while
each target stays between the same midpoints) must never outlive a moved target or a new row."""

from __future__ import annotations

from typing import Any

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.backends import MemoryStore
from sim.cvsa.snapshots import find_closest_snapshot
from sim.ports import Snapshot

AID = 7
BACKS = [0, 3, 20, 60, 180]

steps = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), st.integers(0, 400), st.integers(0, 10**6)),
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
                targets = [now - back for back in BACKS[: step[1]]]
                got = await store.closest_snapshots(AID, targets)
                ordered = [Snapshot(t, v) for t, v in sorted(rows.items())]
                assert got == [find_closest_snapshot(ordered, t) for t in targets], step

    trio.run(run)


def test_a_kept_answer_follows_the_midpoint_and_the_tie_rule() -> None:
    async def run() -> list[list[Snapshot | None]]:
        store = MemoryStore()
        for t in (0, 10, 20):
            await store.insert_snapshot(AID, t, t)
        # Midpoints at 5 and 15; a target exactly on one goes to the earlier row (§19.7).
        return [await store.closest_snapshots(AID, [t, t - 100]) for t in (4, 5, 6, 15, 16)]

    answers = trio.run(run)
    assert [a[0] for a in answers] == [Snapshot(0, 0), Snapshot(0, 0), Snapshot(10, 10),
                                       Snapshot(10, 10), Snapshot(20, 20)]  # fmt: skip
