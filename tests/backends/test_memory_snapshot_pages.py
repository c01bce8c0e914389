"""The memory store's snapshot pages keep every video's snapshots in order whatever blocks they
move through: a block that fills moves to a larger one (or, leaving its oldest snapshots behind
when told to, to one that may be smaller), its old block is reused by the next of its capacity,
a block larger than an eighth of a page has a page of its own, and compacting moves blocks down
over the gaps."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.backends.memory.snapshot_pages import (
    COMPACT_OVER,
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
        st.sampled_from(["append", "insert", "compact", "append dropping"]),
        st.integers(0, 10**6),  # where, when inserting
        st.integers(-(2**62), 2**62),  # the time (any int64 is kept as it is)
    ),
    max_size=400,
)


@given(ops)
@settings(max_examples=200, deadline=None)
def test_pages_keep_what_a_list_per_slot_keeps(steps: list[tuple[int, str, int, int]]) -> None:
    pages, model = SnapshotPages(), [[] for _ in range(6)]  # type: list[list[tuple[int, int]]]
    for _ in model:
        pages.append_empty()
    for k, (s, op, where, t) in enumerate(steps):
        views = k * 7 - 3
        if op == "compact":
            pages.compact()
            assert pages.held_snapshots()[1] == 0
        elif op == "insert" and model[s]:
            i = where % len(model[s])
            pages.insert(s, i, t, views)
            model[s].insert(i, (t, views))
        elif op == "append dropping" and model[s]:
            # A block with room keeps everything; a full one leaves the first ``drop`` behind.
            drop = where % len(model[s])
            if not pages.full(s):
                drop = 0
            pages.append(s, t, views, drop)
            model[s] = [*model[s][drop:], (t, views)]
        else:
            pages.append(s, t, views)
            model[s].append((t, views))
        # Every block is its count's capacity (compact() relies on it): it is full exactly
        # when its count is a capacity.
        assert pages.full(s) == (len(model[s]) in FULL_AT)
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


def test_compacting_closes_the_gaps_and_gives_pages_back() -> None:
    pages = SnapshotPages()
    for _ in range(3):
        pages.append_empty()
    for t in range(7):  # through blocks of 2, 4 and 6: those are free, 8 holds it
        pages.append(0, t, t)
    pages.append(1, 100, 1)  # takes the free block of 2 at the start
    pages.append(2, 200, 2)
    pages.append(2, 201, 3)
    assert pages.at(1) == 0
    assert pages.held_snapshots() == (PAGE_SNAPSHOTS, 4 + 6)
    pages.compact()
    # In the order they sat: slot 1 (2 at 0), slot 0 (8 from 2 + 4 + 6 = 12), slot 2 (2 after).
    assert [pages.at(s) // 2 for s in range(3)] == [2, 0, 10]
    assert pages.held_snapshots() == (PAGE_SNAPSHOTS, 0)
    assert _read(pages, 0) == [(t, t) for t in range(7)]
    assert _read(pages, 1) == [(100, 1)]
    assert _read(pages, 2) == [(200, 2), (201, 3)]
    pages.append(1, 101, 1)  # its block of 2 now full
    assert pages.at(1) == 0
    pages.append(1, 102, 1)  # moved: a new block cut after the last one
    assert pages.at(1) // 2 == 12
    assert _read(pages, 1) == [(100, 1), (101, 1), (102, 1)]


def test_pages_compact_themselves_when_an_eighth_is_free() -> None:
    """Videos that all grow together free their small blocks faster than new videos take them:
    once an eighth of the shared pages is free (from 4 pages on), the pages are compacted."""
    pages, videos = SnapshotPages(), 20_000
    for s in range(videos):
        pages.append_empty()
        pages.append(s, 0, s)
    held_before = pages.held_snapshots()[0]
    for t in range(1, 12):
        for s in range(videos):
            pages.append(s, t, s + t)
    held, free = pages.held_snapshots()
    live = videos * capacity_for(12)
    assert COMPACT_OVER == 8
    # Compacted whenever free blocks passed an eighth, checked before each move: the last
    # move's freed block (11 snapshots at most) may come on top.
    assert free * COMPACT_OVER <= held + COMPACT_OVER * 11
    assert held < live * 8 // 7 + 2 * PAGE_SNAPSHOTS
    assert held_before == PAGE_SNAPSHOTS
    for s in (0, 1, videos // 2, videos - 1):
        assert _read(pages, s) == [(t, s + t) for t in range(12)]
