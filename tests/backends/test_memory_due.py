"""The memory store's due query and idle hints equal the queries they stand for, whatever came
before.

``due_schedules`` walks its per-type heaps in key order without popping them, and the heaps keep
stale entries (rows that left ``pending``, or moved) until they reach the top: the answers must
still be those of the deployed SELECTs (reference §7.1, §8.1), in their order, for any history
of inserts, status changes, moves and cleanups."""

from __future__ import annotations

from typing import Any

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.backends import MemoryStore
from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType
from sim.ports import ScheduleRow

TYPES = tuple(ScheduleType)
AIDS = 6
ORDER_RANK = {ScheduleType.NORMAL: 0, ScheduleType.ARCHIVE: 1}
MINUTE_MS = 60_000
# Instants over 20 minutes (four 5-minute windows), often on the same minute (equal times, ids
# decide), sometimes anywhere (several rows inside one window, out of order).
times = st.one_of(
    st.integers(0, 20).map(lambda m: m * MINUTE_MS),
    st.integers(0, 20 * MINUTE_MS),
)

steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("insert"),
            st.integers(1, AIDS),
            st.sampled_from(TYPES),
            times,
        ),
        st.tuples(
            st.just("status"),
            st.integers(1, 40),
            st.sampled_from(
                [ScheduleStatus.PENDING, ScheduleStatus.PROCESSING, ScheduleStatus.COMPLETED]
            ),
        ),
        st.tuples(st.just("move"), st.integers(1, 40), times),
        st.tuples(st.just("cleanup"), times),
        st.tuples(
            st.just("due"),
            st.one_of(st.none(), times),
            times,
            st.sampled_from(
                [
                    (ScheduleType.MILESTONE, ScheduleType.NEW),
                    (ScheduleType.NORMAL, ScheduleType.ARCHIVE),
                    TYPES,
                ]
            ),
            st.integers(1, 6),
            st.sampled_from(["started_at", "normal_first"]),
        ),
    ),
    max_size=80,
)


def expected(
    rows: dict[int, ScheduleRow],
    from_ms: int | None,
    to_ms: int,
    types: Any,
    limit: int,
    order: str,
) -> list[ScheduleRow]:
    """The SELECT: pending rows of the types due in [from, to], by (type rank,) time, then id."""
    hits = [
        r
        for r in rows.values()
        if r.status == "pending"
        and r.type in types
        and r.started_at_ms <= to_ms
        and (from_ms is None or r.started_at_ms >= from_ms)
    ]

    def key(r: ScheduleRow) -> tuple[int, int, int]:
        rank = ORDER_RANK.get(r.type, 2) if order == "normal_first" else 0
        return (rank, r.started_at_ms, r.id)

    return sorted(hits, key=key)[:limit]


@settings(max_examples=1000, deadline=None)
@given(steps)
def test_due_schedules_always_equals_the_query(sequence: list[tuple[Any, ...]]) -> None:
    async def run() -> None:
        store = MemoryStore()
        rows: dict[int, ScheduleRow] = {}
        for step in sequence:
            if step[0] == "insert":
                _, aid, type, t = step
                i = await store.insert_schedule(aid, type, t, 0)
                rows[i] = ScheduleRow(i, aid, type, ScheduleStatus.PENDING, t, 0)
            elif step[0] == "status":
                _, i, status = step
                if i in rows:
                    await store.set_schedule_status([i], status)
                    rows[i] = rows[i]._replace(status=status)
            elif step[0] == "move":
                _, i, t = step
                if i in rows:
                    await store.move_schedule(i, t)
                    rows[i] = rows[i]._replace(started_at_ms=t)
            elif step[0] == "cleanup":
                gone = await store.delete_overdue_schedules(step[1])
                for r in gone:
                    del rows[r.id]
            else:
                _, from_ms, to_ms, types, limit, order = step
                got = await store.due_schedules(
                    from_ms=from_ms, to_ms=to_ms, types=types, limit=limit, order=order
                )
                assert got == expected(rows, from_ms, to_ms, types, limit, order), step
                first = await store.earliest_pending_ms(types)
                want = [
                    r.started_at_ms
                    for r in rows.values()
                    if r.status == "pending" and r.type in types
                ]
                assert first == (min(want) if want else None), step

    trio.run(run)
