"""The snapshot writer of seed 003 §5.1 on the engine: buffer, flushes, connections, backpressure.

Under ``[write_path]`` a worker hands each fetched snapshot to :meth:`WriteBuffer.add` and goes
on; the row reaches the ``video_snapshot`` table only when its flush has been written. What is
decided -- when to flush, which connection a flush waits for, how long it holds it, when
backpressure turns on and off, how many rows a slowed tick takes -- is the rule book's
(:mod:`sim.cvsa.write_path`); this module keeps the state and logs each step
(:mod:`sim.events.write_kinds`).

The database is modelled as ``connections`` servers, each with the instant it frees: a flush is
assigned when issued, which is FIFO service without a process waiting for a connection. The
rows of a flush are written through the store port row by row when the write ends (the same
rows an ``INSERT ... ON CONFLICT DO NOTHING`` of the batch stores: unique (aid, t), seed 003
§5.2); the writer is not a job, so these writes are not in any job's query counts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from sim.cvsa.write_path import (
    WriteParams,
    backpressure_next,
    connection_for,
    flush_deadline_ms,
    flush_now,
    regular_dispatch_runs,
    service_ms,
    tick_limit,
)
from sim.engine import Engine
from sim.events.write_kinds import (
    BackpressureChanged,
    DispatchHeldBack,
    FlushIssued,
    SnapshotsFlushed,
    WriteBufferLost,
)
from sim.ports import SnapshotWrites
from sim.scheduler.metering import Slowdown
from sim.units import Ms


class PendingSnapshot(NamedTuple):
    """A fetched snapshot waiting for its flush, with what its ``SnapshotTaken`` will say."""

    aid: int
    taken_ms: Ms
    views: int
    schedule: int
    type_code: int
    due_ms: Ms


class WriteBuffer:
    """The crawler's snapshot writer (module docstring); one per run, shared by deployments
    (they write to one database)."""

    def __init__(
        self,
        engine: Engine,
        store: SnapshotWrites,
        params: WriteParams,
        slowdown: Slowdown,
        taken: Callable[..., None],
        on_backlog: Callable[[int], None] | None = None,
    ) -> None:
        self.engine = engine
        self.store = store
        self.params = params
        self.slowdown = slowdown
        """The ``slow_database`` fault's extra latency: every flush statement pays it too."""
        self._taken = taken
        self._on_backlog = on_backlog
        """Told every new backlog (the traffic modes' degraded mark)."""
        log = engine.log
        self._emit_issued = log.emitter(FlushIssued)
        self._emit_flushed = log.emitter(SnapshotsFlushed)
        self._emit_pressure = log.emitter(BackpressureChanged)
        self._emit_lost = log.emitter(WriteBufferLost)
        self._emit_held = log.emitter(DispatchHeldBack)
        self._rows: list[PendingSnapshot] = []
        self._generation = 0
        """Bumped at every flush, so that a deadline set for an earlier buffer does nothing."""
        self._free_at_ms: list[Ms] = [engine.now] * params.connections
        self._flushes = 0
        self.backlog = 0
        """Rows fetched and not yet written: buffered, or in a flush not yet done."""
        self.backpressure = False

    def add(self, row: PendingSnapshot) -> None:
        """A worker fetched a snapshot: buffer it; flush at 100 rows, or 1 s after the first."""
        self._rows.append(row)
        self.backlog += 1
        self._pressure()
        if flush_now(len(self._rows), self.params):
            self.flush()
        elif len(self._rows) == 1:
            deadline = flush_deadline_ms(self.engine.now, self.params)
            self.engine.call_at(deadline, self._deadline, self._generation)

    def _deadline(self, generation: int) -> None:
        if generation == self._generation and self._rows:
            self.flush()

    def flush(self) -> None:
        """Issue the buffered rows as one flush on the connection that frees first."""
        rows, self._rows = self._rows, []
        self._generation += 1
        eng = self.engine
        connection, start = connection_for(self._free_at_ms, eng.now)
        end = start + service_ms(len(rows), self.params, self.slowdown.delay_ms)
        self._free_at_ms[connection] = end
        self._flushes += 1
        flush = self._flushes
        self._emit_issued(eng.now, flush, len(rows), connection, start, end, self.backlog)
        eng.spawn(self._write(flush, rows, eng.now, end), name="snapshotFlush")

    async def _write(self, flush: int, rows: list[PendingSnapshot], issued: Ms, end: Ms) -> None:
        eng = self.engine
        await eng.sleep_until(end)
        stored = 0
        for r in rows:
            new = await self.store.insert_snapshot(r.aid, r.taken_ms, r.views)
            stored += new
            self._taken(
                eng.now, r.aid, r.schedule, r.type_code, r.due_ms, r.views, int(not new), r.taken_ms
            )
        self.backlog -= len(rows)
        self._emit_flushed(eng.now, flush, len(rows), stored, issued, self.backlog)
        self._pressure()

    def tick_limit(self, limit: int, *, hot: bool) -> int:
        """The rows a tick may take now (fewer under backpressure); ``hot``: the 1 s tick."""
        return tick_limit(limit, self.backpressure, self.params, hot=hot)

    def holds_back(self, job: str) -> bool:
        """Must the dispatcher ``job`` skip this run (backpressure)? Logged when it must."""
        if regular_dispatch_runs(self.backpressure):
            return False
        self._emit_held(self.engine.now, self.engine.log.name(job))
        return True

    def crash(self) -> None:
        """The writer's process dies: its buffer is gone (flushes already issued are the
        database's and complete)."""
        lost = len(self._rows)
        self._rows = []
        self._generation += 1
        if lost:
            self.backlog -= lost
            self._emit_lost(self.engine.now, lost)
            self._pressure()

    def _pressure(self) -> None:
        if self._on_backlog is not None:
            self._on_backlog(self.backlog)
        on = backpressure_next(self.backpressure, self.backlog, self.params)
        if on != self.backpressure:
            self.backpressure = on
            self._emit_pressure(self.engine.now, int(on), self.backlog)
