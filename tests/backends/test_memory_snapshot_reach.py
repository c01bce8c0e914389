"""Built with a reach, the memory store lets go of the snapshots no read can reach, and every
read within the reach answers what the store that keeps everything answers.

The reach is how far before the clock any rule asks (the ETA lookbacks' 72 hours, the regular
interval's 24, the worker's clock skew: :func:`sim.cvsa.snapshots.snapshot_reach_ms`), and a
snapshot is never taken after the clock. Hypothesis draws snapshots of a few videos on a clock
that moves forward (and back, never behind the latest snapshot), inserted in order or a little
out of it, and reads at instants within the reach of the clock, from two stores: one with the
reach, one without; their answers are compared one by one."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.backends import MemoryStore
from sim.cvsa.params import DEFAULT_PARAMS
from sim.cvsa.snapshots import snapshot_reach_ms
from sim.scenario import load_scenario
from sim.units import HOUR_MS, MINUTE_MS
from tests.conftest import ROOT

LADDER = DEFAULT_PARAMS.milestone_ladder
REACH = 60
BACKS = (0, 3, 20, 60)
NEAR = 95_000
"""Views in the [90k, 100k) band: a milestone candidate (§11.1), whose lookback answer the store
keeps between calls (and shifts when old rows are let go)."""

APPEND = st.tuples(st.just("append"), st.integers(1, 2), st.integers(1, 30), st.booleans())
steps = st.lists(
    st.one_of(
        APPEND,  # three times as likely as each of the others: blocks fill and move
        APPEND,
        APPEND,
        # Out of order, but within the reach of the clock: the write path's late rows.
        st.tuples(st.just("late"), st.integers(1, 2), st.integers(0, REACH), st.booleans()),
        st.tuples(st.just("advance"), st.integers(-20, 40)),
        st.tuples(st.just("read"), st.integers(1, 2), st.integers(0, REACH)),
        st.tuples(st.just("eta inputs"), st.integers(1, 3)),
    ),
    min_size=20,
    max_size=150,
)


async def _reads(store: MemoryStore, aid: int, now: int, t: int) -> list[Any]:
    return [
        await store.latest_snapshot(aid),
        await store.snapshot_before(aid, t),
        await store.closest_snapshot(aid, t),
        await store.lookback_snapshots(aid, now, BACKS),
    ]


def _held(store: MemoryStore, aid: int) -> int:
    """The snapshots the store holds for ``aid``."""
    s = store._slot.get(aid)
    return 0 if s < 0 else store._snaps.count(s)


@settings(max_examples=300, deadline=None)
@given(steps)
def test_reads_within_the_reach_answer_as_if_everything_were_kept(
    sequence: list[tuple[Any, ...]],
) -> None:
    async def run() -> None:
        full, kept = MemoryStore(), MemoryStore(snapshot_reach_ms=REACH)
        stores = (full, kept)
        for store in stores:  # keep the candidate sets, and so the lookback answers
            await store.milestone_candidates(False, 5.0, LADDER)
        now, latest = 1_000, 1_000
        for k, step in enumerate(sequence):
            if step[0] in ("append", "late"):
                _, aid, dt, near = step
                t = latest + dt if step[0] == "append" else now - dt
                latest, now = max(latest, t), max(now, t)
                views = NEAR + k if near else k
                stored = [await s.insert_snapshot(aid, t, views) for s in stores]
                assert stored[0] == stored[1], step
            elif step[0] == "advance":
                now = max(latest, now + step[1])  # the clock may go back, never behind a row
            elif step[0] == "read":
                _, aid, back = step
                t = now - back
                assert await _reads(full, aid, now, t) == await _reads(kept, aid, now, t), step
            else:
                reader = step[1]
                got = [await s.eta_inputs([1, 2], now, BACKS, reader) for s in stores]
                assert got[0] == got[1], step
                answered = got[0].aids
                settle = [a for i, a in enumerate(answered) if got[0].latest_ms[i] is not None]
                for s in stores:
                    await s.settle_eta_inputs(settle, now, reader)
        for aid in (1, 2):
            assert _held(kept, aid) <= _held(full, aid)

    trio.run(run)


def test_a_month_of_hourly_snapshots_keeps_about_three_days() -> None:
    async def run() -> tuple[int, list[Any]]:
        store = MemoryStore(snapshot_reach_ms=72 * HOUR_MS)
        for h in range(30 * 24):
            await store.insert_snapshot(7, h * HOUR_MS, h)
        now = (30 * 24 - 1) * HOUR_MS
        reads = [
            await store.snapshot_before(7, now - 72 * HOUR_MS),
            await store.closest_snapshot(7, now - 72 * HOUR_MS - 20 * MINUTE_MS),
        ]
        return _held(store, 7), reads

    count, reads = trio.run(run)
    # 72 h back and the one before it, up to a block's room of a quarter more.
    assert 74 <= count <= 74 * 5 // 4
    assert [r.views for r in reads] == [719 - 72, 719 - 72]


def test_a_kept_lookback_answer_outlives_the_rows_left_behind() -> None:
    async def run() -> tuple[int, bool, list[Any]]:
        store = MemoryStore(snapshot_reach_ms=60)
        await store.milestone_candidates(False, 5.0, LADDER)
        for t in (0, 1, 2, 3, 4, 5, 6, 7, 8, 100):  # ten rows: the block is full
            await store.insert_snapshot(7, t, NEAR + t)
        first = await store.lookback_snapshots(7, 150, (60,))  # 90: the row at 100
        await store.insert_snapshot(7, 200, NEAR + 200)  # 140 and before: all but 100 go
        again = await store.lookback_snapshots(7, 200, (60,))  # 140: still the row at 100
        return _held(store, 7), again is first, [s.created_at_ms for s in again if s]

    held, same, rows = trio.run(run)
    assert (held, rows) == (2, [100])
    assert same  # the answer kept, its rows renumbered, not computed again


def test_without_a_reach_every_snapshot_is_kept() -> None:
    async def run() -> int:
        store = MemoryStore()
        for h in range(30 * 24):
            await store.insert_snapshot(7, h * HOUR_MS, h)
        return _held(store, 7)

    assert trio.run(run) == 30 * 24


def test_the_reach_is_the_longest_read_plus_the_worker_clock_behind() -> None:
    assert snapshot_reach_ms(DEFAULT_PARAMS) == 72 * HOUR_MS  # the longest ETA lookback
    assert snapshot_reach_ms(DEFAULT_PARAMS, 30_000) == 72 * HOUR_MS + 30_000
    assert snapshot_reach_ms(DEFAULT_PARAMS, -30_000) == 72 * HOUR_MS  # ahead: reads later
    shorter = replace(DEFAULT_PARAMS, eta_lookbacks_ms=(3 * MINUTE_MS, 6 * HOUR_MS))
    assert snapshot_reach_ms(shorter) == 24 * HOUR_MS  # then the regular interval's 24 h


def test_a_scenario_s_reach_counts_its_clock_skew() -> None:
    skewed = load_scenario(ROOT / "scenarios" / "clock-skew.toml")  # the worker 30 s behind
    assert skewed.snapshot_reach_ms == 72 * HOUR_MS + 30_000
    assert load_scenario(ROOT / "scenarios" / "baseline.toml").snapshot_reach_ms == 72 * HOUR_MS
