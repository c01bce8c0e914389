"""PagedI32Column: a column of int32 values whose all-zero pages do not exist."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.backends.memory.columns import PagedI32Column

# Items near the pages' edges (1,024 a page) and far apart; values 0 half the time.
ITEMS = st.one_of(st.integers(0, 40), st.sampled_from([1023, 1024, 1025, 2047, 5000, 70_001]))
VALUES = st.one_of(st.just(0), st.integers(-(2**31), 2**31 - 1))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(ITEMS, VALUES), max_size=60))
def test_a_paged_column_reads_what_was_set_and_keeps_only_pages_in_use(
    writes: list[tuple[int, int]],
) -> None:
    column, model = PagedI32Column(), {}
    column.grow_to(70_002)
    for i, value in writes:
        column.set(i, value)
        model[i] = value
        assert column.get(i) == value
    assert all(column.get(i) == model.get(i, 0) for i in [*model, 0, 1023, 1024, 70_001])
    assert column.pages == len({i >> 10 for i, v in model.items() if v})
    assert len(column) == 70_002


def test_growing_adds_no_page() -> None:
    column = PagedI32Column()
    column.grow_to(20_000_000)
    assert (len(column), column.pages) == (20_000_000, 0)
    column.set(19_999_999, 7)
    column.grow_to(10)  # never shrinks
    assert (len(column), column.pages, column.get(19_999_999)) == (20_000_000, 1, 7)
