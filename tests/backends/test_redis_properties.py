"""Property: any sequence of counter operations gives the same replies and the same hash on the
memory counter, fakeredis (client-side loop and Lua) and, when reachable, the real server.

Windows are drawn from a few neighbouring ones so that reservations collide, fill them and
cross the cap; counts may be negative (a negative count is room) and zero (fields left behind
by probes, §19.3).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.backends import MemoryWindowCounter
from sim.backends.redis import RedisWindowCounter
from sim.cvsa.windows import window_key_iso
from sim.units import WINDOW_MS
from tests.backends.redis_support import Target, make_target, opened

T0 = 1_924_992_000_000  # 2031-01-01T00:00:00Z
W = WINDOW_MS
WINDOWS = 8

window = st.integers(0, WINDOWS - 1).map(lambda k: T0 + k * W)
Op = tuple[Any, ...]
ops: st.SearchStrategy[list[Op]] = st.lists(
    st.one_of(
        st.tuples(st.just("incr"), window, st.integers(-3, 3)),
        st.tuples(
            st.just("reserve"),
            window,
            st.sampled_from([W, -W, 0, 2 * W]),
            st.integers(0, 6),  # how many windows to probe
            st.integers(-1, 4),  # the cap
        ),
        st.tuples(
            st.just("replace_all"),
            st.dictionaries(window, st.integers(-2, 5), max_size=WINDOWS),
        ),
        st.tuples(st.just("clear")),
        st.tuples(st.just("get_all")),
    ),
    max_size=14,
)


async def apply(counter: Any, op: Op) -> Any:
    name, *args = op
    if name == "incr":
        return await counter.incr(*args)
    if name == "reserve":
        first, step, count, cap = args
        return await counter.reserve(first, step, count, cap)
    if name == "replace_all":
        return await counter.replace_all(args[0])
    if name == "clear":
        return await counter.clear()
    return await counter.get_all()


def outcome(counter: Any, sequence: Sequence[Op]) -> tuple[list[Any], dict[int, int]]:
    """Replies to every operation and the final hash, on a fresh, opened ``counter``."""

    async def main() -> tuple[list[Any], dict[int, int]]:
        if isinstance(counter, RedisWindowCounter):
            async with opened(counter):
                return [await apply(counter, op) for op in sequence], await counter.get_all()
        return [await apply(counter, op) for op in sequence], await counter.get_all()

    return trio.run(main)


def stored_fields(t: Target) -> dict[str, int]:
    raw = t.sync.hgetall(f"{t.prefix}cvsa:snapshot_window_counts")
    return {k.decode(): int(v) for k, v in raw.items()}


@settings(max_examples=60, deadline=None)
@given(sequence=ops)
def test_fakeredis_loop_and_lua_behave_like_memory(sequence: list[Op]) -> None:
    wanted = outcome(MemoryWindowCounter(), sequence)
    for reservation in ("loop", "lua"):
        t = make_target("fakeredis", "prop")
        got = outcome(t.counter(reservation=reservation), sequence)
        assert got == wanted, reservation
        assert stored_fields(t) == {window_key_iso(w): n for w, n in wanted[1].items()}
        t.cleanup()


@pytest.fixture
def real_redis() -> Iterator[Target]:
    t = make_target("redis", "prop")
    yield t
    t.cleanup()


@pytest.mark.services
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(sequence=ops)
def test_redis_loop_and_lua_behave_like_memory(real_redis: Target, sequence: list[Op]) -> None:
    wanted = outcome(MemoryWindowCounter(), sequence)
    for reservation in ("loop", "lua"):
        # One prefix for the whole test: each example starts afresh with reset.
        got = outcome(real_redis.counter(reservation=reservation, reset=True), sequence)
        assert got == wanted, reservation
        assert stored_fields(real_redis) == {window_key_iso(w): n for w, n in wanted[1].items()}
