"""The memory store's building blocks: the ``(time, id)`` heap pops what :mod:`heapq` pops and
keeps the heap order the due walk relies on; the aid index answers as a dict does; the chunked
columns keep every value across chunk boundaries."""

from __future__ import annotations

import heapq

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.backends.memory.columns import (
    AidIndex,
    F64Column,
    I32Column,
    I64Column,
    U8Column,
)
from sim.backends.memory.keyheap import CHUNK_BITS, MAX_ID, KeyHeap

# Few distinct times (ties decided by id), instants of 41 bits, pops interleaved with pushes.
ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("push"),
            st.one_of(st.integers(0, 5), st.integers(1_900_000_000_000, 1_900_000_000_050)),
            st.integers(1, MAX_ID),  # the largest an int32 holds
        ),
        st.tuples(st.just("pop"), st.just(0), st.just(0)),
    ),
    max_size=300,
)


def test_an_id_beyond_int32_is_refused_not_wrapped() -> None:
    heap = KeyHeap()
    heap.push(5, MAX_ID)
    with pytest.raises(OverflowError, match="schedule id 2147483648"):
        heap.push(5, MAX_ID + 1)
    assert (len(heap), heap.id_at(0)) == (1, MAX_ID)


def heap_order_holds(heap: KeyHeap) -> bool:
    entries = [(heap.t_at(p), heap.id_at(p)) for p in range(len(heap))]
    return all(entries[(p - 1) // 2] <= entries[p] for p in range(1, len(entries)))


@given(ops, st.sampled_from([0, 1, 3, CHUNK_BITS]))
@settings(max_examples=500, deadline=None)
def test_keyheap_pops_what_heapq_pops(steps: list[tuple[str, int, int]], chunk_bits: int) -> None:
    # Chunks of 1, 2 and 8 entries: a walk up or down crosses chunks at every level or so.
    heap, model = KeyHeap(chunk_bits), []
    for op, t, ident in steps:
        if op == "push":
            heap.push(t, ident)
            heapq.heappush(model, (t, ident))
        elif model:
            assert (heap.t_at(0), heap.id_at(0)) == heapq.heappop(model)
            heap.pop()
        assert len(heap) == len(model)
        assert heap_order_holds(heap)
    drained = []
    while len(heap):
        drained.append((heap.t_at(0), heap.id_at(0)))
        heap.pop()
    assert drained == sorted(model)


def test_columns_keep_values_across_chunks() -> None:
    n = 3 * 65536 + 5  # a chunk holds 2**16 values
    i64, i32, u8, f64 = I64Column(), I32Column(), U8Column(), F64Column()
    for k in range(n):
        i64.append(k * 1_000_003 - 2**40)
        i32.append(-k)
        u8.append(k % 256)
        f64.append(k / 4)
    assert len(i64) == len(i32) == len(u8) == len(f64) == n
    for k in (0, 65535, 65536, 131071, 131072, n - 1):
        assert i64.get(k) == k * 1_000_003 - 2**40
        assert (i32.get(k), u8.get(k), f64.get(k)) == (-k, k % 256, k / 4)
    i64.set(65536, -1)
    assert i64.get(65536) == -1
    assert i64.get(65535) == 65535 * 1_000_003 - 2**40
    i32.grow_to(n + 70_000)
    assert len(i32) == n + 70_000
    assert i32.get(n + 69_999) == 0


@given(
    st.lists(
        st.one_of(
            st.integers(1, 3_000),  # dense: many share a home place
            st.integers(-(2**62), 2**62),
            st.integers(0, 40).map(lambda k: k << 30),  # equal low bits
        ),
        max_size=3_000,
    ),
    st.lists(st.integers(-(2**40), 2**40), max_size=200),
)
@settings(max_examples=200, deadline=None)
def test_aid_index_answers_as_a_dict(aids: list[int], probes: list[int]) -> None:
    column = I64Column()
    index, model = AidIndex(column), {}
    for aid in aids:  # grows past its first 1,024 places
        if aid not in model:
            model[aid] = len(model)
            column.append(aid)
            index.add(aid, model[aid])
    assert len(index) == len(model)
    for aid in [*aids, *probes]:
        assert index.get(aid) == model.get(aid, -1)
