"""The memory counter's full-block index: every reply and the hash equal the plain probe-by-probe
loop (:func:`sim.cvsa.windows.reserve_in` on a dict), across blocks that fill up and empty again.

Caps are small and the windows few hundred, so that whole blocks of 64 windows fill, searches
run across them and past their ends, and decrements reopen single windows inside full blocks.
"""

from __future__ import annotations

from typing import Any

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.backends import MemoryWindowCounter
from sim.backends.memory.counter import BLOCK_WINDOWS
from sim.cvsa.windows import Reserve, reserve_in
from sim.ports import Reserved
from sim.units import WINDOW_MS

W = WINDOW_MS
T0 = 1_924_992_000_000 - 3 * W  # not on a block boundary
SPAN = 5 * BLOCK_WINDOWS

# Windows after 2030, and windows either side of the epoch (negative window, block and span
# indexes).
ORIGINS = (T0, -(SPAN // 2 + 3) * W)
window = st.tuples(st.sampled_from(ORIGINS), st.integers(0, SPAN - 1)).map(
    lambda origin_k: origin_k[0] + origin_k[1] * W
)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("fill"), window, st.integers(1, 2 * BLOCK_WINDOWS), st.integers(1, 3)),
        st.tuples(st.just("incr"), window, st.integers(-3, 3)),
        st.tuples(
            st.just("reserve"),
            window,
            st.sampled_from([W, W, W, -W]),
            st.integers(0, SPAN + 10),
            st.sampled_from([1, 2, 3, 0, -1]),
        ),
        st.tuples(st.just("replace"), window),
    ),
    max_size=40,
)


def apply(counter: MemoryWindowCounter, ref: dict[int, int], op: tuple[Any, ...]) -> Any:
    """One operation on both; returns (memory reply, reference reply)."""

    async def run() -> Any:
        match op:
            case ("fill", w, n, value):  # n consecutive windows set to at least ``value``
                for k in range(n):
                    have = ref.get(w + k * W, 0)
                    if have < value:
                        ref[w + k * W] = value
                        await counter.incr(w + k * W, value - have)
                return None, None
            case ("incr", w, delta):
                ref[w] = ref.get(w, 0) + delta
                return await counter.incr(w, delta), ref[w]
            case ("reserve", w, step, count, cap):
                got = await counter.reserve(w, step, count, cap)
                return got, reserve_in(ref, Reserve(w, step, count, cap))
            case ("replace", w):  # the refresh from pending rows: the index starts over
                ref.pop(w, None)
                await counter.replace_all(ref)
                return None, None
        raise AssertionError(op)

    return trio.run(run)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_the_block_index_never_changes_an_answer(sequence: list[tuple[Any, ...]]) -> None:
    counter, ref = MemoryWindowCounter(), {}
    for op in sequence:
        mine, expected = apply(counter, ref, op)
        assert mine == expected, op
        assert trio.run(counter.get_all) == dict(sorted(ref.items())), op


def test_a_search_across_full_blocks_counts_every_window_it_passes() -> None:
    counter, ref = MemoryWindowCounter(), {}
    start = T0 + 3 * W
    apply(counter, ref, ("fill", start, 3 * BLOCK_WINDOWS + 5, 2))
    got, expected = apply(counter, ref, ("reserve", start, W, 1000, 2))
    assert got == expected == Reserved(start + (3 * BLOCK_WINDOWS + 5) * W, 1, 3 * 64 + 6)
    # A window freed inside a full block is found again.
    apply(counter, ref, ("incr", start + 100 * W, -1))
    got, expected = apply(counter, ref, ("reserve", start, W, 1000, 2))
    assert got == expected == Reserved(start + 100 * W, 2, 101)
    # Too short a search ends exhausted, however far its last block reaches.
    got, expected = apply(counter, ref, ("reserve", start, W, 70, 2))
    assert got == expected == Reserved(None, -1, 70)
    # The refresh from pending rows replaces the hash: a window gone from it has room again.
    apply(counter, ref, ("incr", start + 100 * W, 1))
    apply(counter, ref, ("replace", start + 7 * W))
    got, expected = apply(counter, ref, ("reserve", start, W, 1000, 2))
    assert got == expected == Reserved(start + 7 * W, 1, 8)
