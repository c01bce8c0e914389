"""Seed 003 §5.1's write path on the engine: exact virtual instants of flushes and writes.

A fetched snapshot waits in the writer's buffer until 100 rows (here ``flush_rows``) or 1 s, then
holds a connection for 2 ms plus its rows at the connection's rate; only then is it in the table
(``SnapshotTaken``). Compared with the same run without ``[write_path]``, where each snapshot is
written the instant it is fetched.
"""

from __future__ import annotations

import trio

from sim.backends import MemoryStore
from sim.clock import VirtualClock
from sim.cvsa.vocabulary import ScheduleType
from sim.cvsa.write_path import WriteParams
from sim.determinism import deterministic_trio
from sim.engine import VirtualEngine
from sim.events import EventLog
from sim.events.cvsa_kinds import SnapshotTaken
from sim.events.write_kinds import (
    MODE_CAUSE,
    TRAFFIC_MODE,
    BackpressureChanged,
    FlushIssued,
    ModeChanged,
    SnapshotsFlushed,
)
from sim.scheduler.context import Ctx
from sim.scheduler.metering import Slowdown
from sim.scheduler.write_buffer import PendingSnapshot, WriteBuffer
from sim.testing.harness import Recorder
from sim.testing.runs import T0, ModelRun, Video, run_model
from sim.units import DAY_MS, Ms

OLD = T0 - 100 * DAY_MS
DUE = T0 + 10_000


def _rows(*aids: int) -> list[Video]:
    return [Video(a, OLD, song=False, views=lambda t: 1000 + t % 7) for a in aids]


def _setup(*aids: int, due: Ms = DUE):  # type: ignore[no-untyped-def]
    async def setup(ctx: Ctx) -> None:
        for a in aids:
            await ctx.store.insert_schedule(a, ScheduleType.ARCHIVE, T0 + 10 * DAY_MS, T0)
            await ctx.store.insert_schedule(a, ScheduleType.NEW, due, T0)

    return setup


def _run(
    *aids: int, faults: str = "", more: tuple[str, ...] = (), **write_path: object
) -> ModelRun:
    overrides = [f"write_path.{k}={v}" for k, v in write_path.items()] + list(more)
    return run_model(
        _rows(*aids), until="1m", setup=_setup(*aids), overrides=overrides, faults=faults
    )


def _taken(run: ModelRun) -> list[tuple[int, Ms, Ms]]:
    return [(e.aid, e.taken_ms, e.t_ms) for e in run.events(SnapshotTaken)]


def test_without_the_write_path_a_snapshot_is_written_when_fetched() -> None:
    [(aid, taken, written)] = _taken(_run(1))
    assert (aid, written) == (1, taken)


def test_a_lone_row_is_flushed_1_s_after_it_was_buffered() -> None:
    [(_, fetched, _)] = _taken(_run(1))
    run = _run(1, enabled="true", rows_per_second=1000)
    assert _taken(run) == [(1, fetched, fetched + 1000 + 2 + 1)]
    [issued] = run.events(FlushIssued)
    assert (issued.t_ms, issued.rows, issued.start_ms, issued.end_ms, issued.backlog) == (
        fetched + 1000,
        1,
        fetched + 1000,
        fetched + 1003,
        1,
    )
    [flushed] = run.events(SnapshotsFlushed)
    assert (flushed.t_ms, flushed.stored, flushed.issued_ms, flushed.backlog) == (
        fetched + 1003,
        1,
        fetched + 1000,
        0,
    )


def test_a_full_buffer_is_flushed_at_once() -> None:
    [(_, fetched, _), _] = _taken(_run(1, 2))
    run = _run(1, 2, enabled="true", rows_per_second=1000, flush_rows=2)
    assert [t for _, _, t in _taken(run)] == [fetched + 2 + 2] * 2  # no 1 s wait
    assert [(e.t_ms, e.rows) for e in run.events(FlushIssued)] == [(fetched, 2)]


def test_flushes_wait_for_the_one_connection_in_the_order_issued() -> None:
    run = _run(1, 2, 3, enabled="true", rows_per_second=1, flush_rows=1, connections=1)
    t = run.events(FlushIssued)[0].t_ms
    assert [(e.t_ms, e.start_ms, e.end_ms, e.backlog) for e in run.events(FlushIssued)] == [
        (t, t, t + 1002, 1),
        (t, t + 1002, t + 2004, 2),
        (t, t + 2004, t + 3006, 3),
    ]
    assert [e.t_ms for e in run.events(SnapshotTaken)] == [t + 1002, t + 2004, t + 3006]


def test_backpressure_turns_on_at_the_high_mark_and_off_at_the_low_mark() -> None:
    run = _run(
        1,
        2,
        3,
        enabled="true",
        rows_per_second=1,
        flush_rows=1,
        connections=1,
        backpressure="true",
        backpressure_high_rows=2,
        backpressure_low_rows=1,
    )
    t = run.events(FlushIssued)[0].t_ms
    assert [(e.t_ms, e.on, e.backlog) for e in run.events(BackpressureChanged)] == [
        (t, 1, 2),
        (t + 2004, 0, 1),
    ]


def test_the_write_backlog_drives_degraded_mode_with_hysteresis() -> None:
    run = _run(
        1,
        2,
        3,
        enabled="true",
        rows_per_second=1,
        flush_rows=1,
        connections=1,
        more=(
            "modes.enabled=true",
            "modes.peak=[]",
            "modes.degrade_at_rows=2",
            "modes.recover_at_rows=1",
        ),
    )
    t = run.events(FlushIssued)[0].t_ms
    assert [
        (e.t_ms, TRAFFIC_MODE.words[e.mode], MODE_CAUSE.words[e.cause], e.backlog)
        for e in run.events(ModeChanged)
    ] == [(t, "degraded", "backlog", 2), (t + 2004, "default", "backlog", 1)]


def test_a_slow_database_holds_each_flush_longer() -> None:
    fault = (
        '[[faults]]\nkind = "slow_database"\nstart = "0s"\nduration = "1h"\nquery_latency = "100ms"'
    )
    fast = _run(1, enabled="true", rows_per_second=1000)
    slow = _run(1, enabled="true", rows_per_second=1000, faults=fault)
    [f], [s] = fast.events(FlushIssued), slow.events(FlushIssued)
    assert (f.end_ms - f.start_ms, s.end_ms - s.start_ms) == (3, 103)


def test_a_flush_written_twice_stores_each_row_once() -> None:
    """Seed 003 §5.2: unique (aid, t) makes a repeated write harmless (duplicate = 1)."""
    recorder = Recorder()
    log = EventLog([recorder])
    engine = VirtualEngine(clock=VirtualClock(T0), log=log)
    store = MemoryStore()
    emit = log.emitter(SnapshotTaken)
    buffer = WriteBuffer(engine, store, WriteParams(), Slowdown(), emit)
    log.open()

    async def before() -> None:
        await store.add_video(7, OLD)
        row = PendingSnapshot(7, T0, 500, -1, -1, -1)
        buffer.add(row)
        buffer.add(row)

    with deterministic_trio(1):
        trio.run(engine.run, T0 + 5000, before)
    assert [(e.t_ms, e.duplicate) for e in recorder.events(SnapshotTaken)] == [
        (T0 + 1000 + 2 + 1, 0),
        (T0 + 1000 + 2 + 1, 1),
    ]
    [flushed] = recorder.events(SnapshotsFlushed)
    assert (flushed.rows, flushed.stored) == (2, 1)
