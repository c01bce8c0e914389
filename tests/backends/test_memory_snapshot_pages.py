"""The memory store's snapshot pages keep every video's snapshots in order whatever blocks they
move through: a block that fills moves to a larger one, its old block is reused by the next of
its capacity, and a block larger than an eighth of a page has a page of its own."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.backends.memory.snapshot_pages import (
    FULL_AT,
    OWN_PAGE_OVER,
    PAGE_SNAPSHOTS,
    SnapshotPages,
    capacity_for,
    grown,
)


def _read(pages: SnapshotPages, s: int) -> list[tuple[int, int]]:
    page, at = pages.page(s), pages.at(s)
    return [(page[at + 2 * i], page[at + 2 * i + 1]) for i in range(pages.count(s))]


ops = st.lists(
    st.tuples(
        st.integers(0, 5),  # slot
        st.booleans(),  # insert before the end (else append)
        st.integers(0, 10**6),  # where, when inserting
        st.integers(-(2**62), 2**62),  # the time (any int64 is kept as it is)
    ),
    max_size=400,
)


@given(ops)
@settings(max_examples=200, deadline=None)
def test_pages_keep_what_a_list_per_slot_keeps(steps: list[tuple[int, bool, int, int]]) -> None:
    pages, model = SnapshotPages(), [[] for _ in range(6)]  # type: list[list[tuple[int, int]]]
    for _ in model:
        pages.append_empty()
    for k, (s, insert, where, t) in enumerate(steps):
        views = k * 7 - 3
        if insert and model[s]:
            i = where % len(model[s])
            pages.insert(s, i, t, views)
            model[s].insert(i, (t, views))
        else:
            pages.append(s, t, views)
            model[s].append((t, views))
    for s in range(6):
        assert pages.count(s) == len(model[s])
        assert _read(pages, s) == model[s]
        for i, (t, v) in enumerate(model[s]):
            assert (pages.time_ms(s, i), pages.views(s, i)) == (t, v)


def test_a_freed_block_is_taken_by_the_next_block_of_its_capacity() -> None:
    pages = SnapshotPages()
    for _ in range(3):
        pages.append_empty()
    pages.append(0, 1, 10)
    pages.append(0, 2, 20)
    first_block = (pages.page(0), pages.at(0))
    pages.append(0, 3, 30)  # full at 2: moved to a block of 4, its block of 2 freed
    assert (pages.page(0), pages.at(0)) != first_block
    pages.append(1, 5, 50)  # the next block of 2 is the freed one
    assert pages.at(1) == first_block[1]
    pages.append(2, 6, 60)  # none free: cut after the block of 4
    assert pages.at(2) == 2 * (2 + 4)
    assert pages.held_snapshots() == (PAGE_SNAPSHOTS, 0)
    assert _read(pages, 0) == [(1, 10), (2, 20), (3, 30)]
    assert [_read(pages, 1), _read(pages, 2)] == [[(5, 50)], [(6, 60)]]


def test_a_large_block_has_a_page_of_its_own_and_gives_it_back() -> None:
    pages = SnapshotPages()
    pages.append_empty()
    pages.append_empty()
    pages.append(1, -1, -1)  # another video's block in the shared page
    n = capacity_for(OWN_PAGE_OVER + 1) + 1  # one past the first capacity with its own page
    for t in range(n):
        pages.append(0, t, 2 * t)
    room = capacity_for(n)
    assert room > OWN_PAGE_OVER
    assert pages.at(0) == 0  # at the start of its own page
    assert len(pages.page(0)) == 2 * room
    held, free = pages.held_snapshots()
    # The shared page, the video's own page, and no earlier own page (given back on the move).
    assert held == PAGE_SNAPSHOTS + room
    assert free == sum(c for c in FULL_AT if c <= OWN_PAGE_OVER)  # its blocks on the way up
    assert _read(pages, 0) == [(t, 2 * t) for t in range(n)]
    assert _read(pages, 1) == [(-1, -1)]


def test_capacities_grow_by_a_quarter() -> None:
    rooms = sorted(c for c in FULL_AT if c < 40)
    assert rooms == [2, 4, 6, 8, 10, 12, 15, 18, 22, 27, 33]
    assert [capacity_for(n) for n in (1, 2, 3, 15, 16)] == [2, 2, 4, 15, 18]
    assert grown(100) == 125
