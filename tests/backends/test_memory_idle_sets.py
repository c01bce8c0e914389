"""The memory store's anti-join sets are sets of slots, a bit a video (``SlotBits``): at 20M
videos the catalogue load puts 18M non-songs in one, which as a Python set of aids held about
1.1 GB until the start-up dispatch drained it."""

from __future__ import annotations

from collections.abc import Collection

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.backends import MemoryStore
from sim.backends.memory.columns import I64Column, SlotBits
from sim.backends.memory.schedules import TYPE_CODE
from sim.cvsa.vocabulary import ScheduleType

T0 = 1_925_395_200_000

# Slots near the words' edges (32 a word) and far apart.
SLOTS = st.one_of(st.integers(0, 100), st.sampled_from([31, 32, 33, 63, 64, 65, 4095, 70_001]))
COLUMN = I64Column()
"""What the members' values are read from: ten times the slot."""
for _slot in range(70_002):
    COLUMN.append(10 * _slot)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), SLOTS), max_size=200))
def test_slot_bits_answer_as_a_set_does(ops: list[tuple[bool, int]]) -> None:
    bits, model = SlotBits(), set()
    for add, slot in ops:
        if add:
            bits.add(slot)
            model.add(slot)
        else:
            bits.discard(slot)
            model.discard(slot)
        assert len(bits) == len(model)
    assert list(bits.values_in(COLUMN)) == [10 * slot for slot in sorted(model)]


def test_anti_joins_of_many_videos_cost_a_bit_each_and_answer_in_aid_order() -> None:
    async def run() -> tuple[Collection[int], Collection[int], SlotBits]:
        store = MemoryStore()
        # Aids in descending order: slots follow arrival, the answer follows aids.
        for aid in range(50_000, 0, -1):
            await store.add_video(aid, T0)
        everyone = await store.non_songs_without_active_schedule(ScheduleType.ARCHIVE)
        for aid in range(11, 50_001):
            await store.insert_schedule(aid, ScheduleType.ARCHIVE, T0 + aid, T0)
        left = await store.non_songs_without_active_schedule(ScheduleType.ARCHIVE)
        return everyone, left, store._idle_others[TYPE_CODE[ScheduleType.ARCHIVE]]

    everyone, left, bits = trio.run(run)
    assert list(everyone) == list(range(1, 50_001))
    assert list(left) == list(range(1, 11))
    assert len(bits) == 10
    assert len(bits._words) == 50_000 // 32 + 1  # 8 bytes a word of 32 slots
