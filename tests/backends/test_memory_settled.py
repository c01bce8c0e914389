"""The memory store's settled ETA inputs (``SettledEtaInputs``): a settled video is left out of
its reader's ``eta_inputs`` only while its answer is the one it was settled with, whatever
snapshots, clock moves and per-video lookups come in between; and it is left out."""

from __future__ import annotations

from typing import Any

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.backends import MemoryStore
from sim.cvsa.snapshots import find_closest_snapshot
from sim.ports import Snapshot

AIDS = (7, 8)
BACKS = (0, 3, 20, 60)
READER = 1

steps = st.lists(
    st.one_of(
        # Rows before, around and far after the clock (which starts at 200).
        st.tuples(st.just("insert"), st.sampled_from(AIDS), st.integers(0, 1500)),
        st.tuples(st.just("advance"), st.integers(-5, 40)),  # a skewed clock may go back
        st.tuples(st.just("pass"), st.booleans()),  # a milestone pass; settle what it read?
        st.tuples(st.just("lookup"), st.sampled_from(AIDS)),  # the per-candidate path
    ),
    max_size=60,
)


def _answer(rows: dict[int, int], now: int) -> tuple[Snapshot, list[Snapshot | None]]:
    ordered = [Snapshot(t, v) for t, v in sorted(rows.items())]
    return ordered[-1], [find_closest_snapshot(ordered, now - back) for back in BACKS]


@settings(max_examples=300, deadline=None)
@given(steps)
def test_a_settled_video_is_left_out_only_while_its_answer_holds(
    sequence: list[tuple[Any, ...]],
) -> None:
    async def run() -> None:
        store, now = MemoryStore(), 200
        rows: dict[int, dict[int, int]] = {aid: {} for aid in AIDS}
        settled_with: dict[int, tuple[Snapshot, list[Snapshot | None]]] = {}
        for step in sequence:
            if step[0] == "insert":
                _, aid, t = step
                if await store.insert_snapshot(aid, t, 1000 + t):
                    rows[aid][t] = 1000 + t
            elif step[0] == "advance":
                now += step[1]
            elif step[0] == "lookup":
                await store.lookback_snapshots(step[1], now, BACKS)
            else:
                got = await store.eta_inputs(AIDS, now, BACKS, READER)
                for aid in set(AIDS) - set(got.aids):  # left out: the answer it settled with
                    assert rows[aid], step
                    assert _answer(rows[aid], now) == settled_with[aid], step
                for i, aid in enumerate(got.aids):
                    if got.latest_ms[i] is not None:
                        latest = Snapshot(got.latest_ms[i], got.latest_views[i])
                        assert (latest, list(got.lookbacks[i])) == _answer(rows[aid], now)
                if step[1]:
                    answered = [a for a in got.aids if rows[a]]
                    await store.settle_eta_inputs(answered, now, READER)
                    settled_with.update((a, _answer(rows[a], now)) for a in answered)

    trio.run(run)


def test_a_settled_video_is_left_out_until_its_next_snapshot() -> None:
    async def run() -> list[tuple[list[int], int]]:
        store = MemoryStore()
        for t in (0, 100, 200):
            await store.insert_snapshot(7, t, 95_000 + t)
        out = []
        got = await store.eta_inputs([7], 260, BACKS, READER)
        await store.settle_eta_inputs(got.aids, 260, READER)
        for now in (280, 300):  # every target (now - 0 ... now - 60) still nearest row 200
            got = await store.eta_inputs([7], now, BACKS, READER)
            out.append((got.aids, got.settled))
        # Appended far ahead: every lookback still finds row 200, but the latest snapshot moved.
        await store.insert_snapshot(7, 1000, 95_300)
        got = await store.eta_inputs([7], 300, BACKS, READER)
        out.append((got.aids, got.settled))
        return out

    assert trio.run(run) == [([], 1), ([], 1), ([7], 0)]
