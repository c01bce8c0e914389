"""The memory store's anti-join sets give back their table once drained: a set never shrinks
on removals, and at full scale the start-up dispatch drains a set of 1.8M non-songs."""

from __future__ import annotations

import sys

import trio

from sim.backends import MemoryStore
from sim.backends.memory.schedules import TYPE_CODE
from sim.cvsa.vocabulary import ScheduleType

T0 = 1_925_395_200_000


def test_a_drained_set_is_rebuilt_small_and_answers_stay_right() -> None:
    async def run() -> tuple[list[int], list[int], int, int]:
        store = MemoryStore()
        for aid in range(1, 5_001):
            await store.add_video(aid, T0)
        everyone = await store.non_songs_without_active_schedule(ScheduleType.ARCHIVE)
        full = sys.getsizeof(store._idle_others[TYPE_CODE[ScheduleType.ARCHIVE]])
        for aid in range(11, 5_001):
            await store.insert_schedule(aid, ScheduleType.ARCHIVE, T0 + aid, T0)
        left = await store.non_songs_without_active_schedule(ScheduleType.ARCHIVE)
        drained = sys.getsizeof(store._idle_others[TYPE_CODE[ScheduleType.ARCHIVE]])
        return everyone, left, full, drained

    everyone, left, full, drained = trio.run(run)
    assert everyone == list(range(1, 5_001))
    assert left == list(range(1, 11))
    assert drained * 50 < full, (full, drained)
