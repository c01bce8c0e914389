"""The memory store's milestone candidates stay in ascending order as videos join and leave
(``videos.Candidates`` keeps the sorted list instead of sorting the set on every ask)."""

from __future__ import annotations

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.backends import MemoryStore
from sim.backends.memory.videos import Candidates
from sim.cvsa.params import DEFAULT_PARAMS
from sim.ports import EtaRow

LADDER = DEFAULT_PARAMS.milestone_ladder

ops = st.lists(st.tuples(st.booleans(), st.integers(-50, 50)), max_size=200)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_candidates_are_the_sorted_members(steps: list[tuple[bool, int]]) -> None:
    kept, members = Candidates(), set()
    for join, aid in steps:
        if join:
            kept.add(aid)
            members.add(aid)
        else:
            kept.discard(aid)
            members.discard(aid)
        assert kept.ascending == sorted(members)
        assert kept.members == members


def test_the_store_answers_a_copy_in_ascending_order() -> None:
    async def main() -> None:
        store = MemoryStore()
        for aid in (30, 10, 20):
            await store.add_video(aid, 0)
            await store.insert_snapshot(aid, 1, 95_000)  # near 100k: a candidate
        got = await store.milestone_candidates(False, 2300.0, LADDER)
        assert got == [10, 20, 30]
        got.append(5)  # the caller's list: the store's is not changed
        await store.upsert_eta(EtaRow(20, 9000.0, 1.0, 95_000, 2))
        await store.insert_snapshot(20, 3, 50_000)  # far from a milestone: leaves
        assert await store.milestone_candidates(False, 2300.0, LADDER) == [10, 30]

    trio.run(main)
