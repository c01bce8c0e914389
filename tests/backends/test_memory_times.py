"""TimeColumn: epoch-ms times as int32 offsets from a base per chunk, far ones kept whole."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.backends.memory.columns import CHUNK_BITS, TimeColumn

T0 = 1_925_000_000_000  # 2031, where scenarios start
DAY_MS = 86_400_000
LIMIT = 2**31 - 1  # the largest offset an item holds

# Times near the first one, at the edges of what an offset holds, and far off both ways.
TIMES = st.one_of(
    st.integers(T0 - 30 * DAY_MS, T0 + 30 * DAY_MS),
    st.sampled_from([T0 + LIMIT, T0 + LIMIT + 1, T0 - LIMIT, T0 - LIMIT - 1, 0, -1, 2**62]),
)
CHUNK = 1 << CHUNK_BITS


@settings(max_examples=200, deadline=None)
@given(
    st.booleans(),
    st.lists(TIMES, min_size=1, max_size=30),
    st.lists(st.tuples(st.integers(0, 10**9), TIMES), max_size=30),
)
def test_a_time_column_reads_back_what_was_written(
    padded: bool, appended: list[int], moves: list[tuple[int, int]]
) -> None:
    column, model = TimeColumn(), []
    if padded:
        column.pad()
        model.append(0)
    for t in appended:
        column.append(t)
        model.append(t)
    whole = {0} if padded else set()  # the padding is kept whole until it is written
    for k, t in moves:
        i = k % len(model)
        column.set(i, t)
        model[i] = t
        whole.discard(i)
    assert [column.get(i) for i in range(len(model))] == model
    assert len(column) == len(model)
    base = appended[0]  # the first time appended, not the padding
    whole |= {i for i, t in enumerate(model) if not -LIMIT <= t - base <= LIMIT}
    assert column.far == len(whole)


def test_each_chunk_has_its_own_base_and_padding_fixes_none() -> None:
    column = TimeColumn()
    column.pad()  # index 0 of a schedule table
    later = T0 + 40 * DAY_MS  # beyond the first chunk's base's reach
    times = [T0 + i * 30_000 for i in range(1, CHUNK)] + [later + i for i in range(3)]
    for t in times:
        column.append(t)
    assert [column.get(i) for i in range(1, CHUNK + 3)] == times
    assert column.far == 1  # only the padding: the second chunk's base is its first time
    column.set(5, later)  # moved out of its chunk's reach, then back
    assert (column.get(5), column.far) == (later, 2)
    column.set(5, T0)
    assert (column.get(5), column.far) == (T0, 1)


def test_an_offset_holds_a_signed_int32_but_its_least_value() -> None:
    column = TimeColumn()
    edges = [T0, T0 + LIMIT, T0 - LIMIT, T0 + LIMIT + 1, T0 - LIMIT - 1]
    for t in edges:
        column.append(t)
    assert [column.get(i) for i in range(5)] == edges
    assert column.far == 2  # the last two: -2^31 marks an item kept whole
