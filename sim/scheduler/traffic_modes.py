"""Seed 003 §5.1's traffic modes on the engine: which mode holds now, and the ticks' view of it.

The rules -- when peak mode opens and closes, when the write backlog makes the run degraded,
which types a mode defers and for how long, what cleanup keeps -- are the rule book's
(:mod:`sim.cvsa.modes`); this module keeps the current mode, wakes at each edge of a peak
window, hears every change of the write backlog from the writer
(:class:`~sim.scheduler.write_buffer.WriteBuffer`) and logs each change (``ModeChanged``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sim.cvsa.modes import (
    ModeParams,
    deferred_due_before_ms,
    degraded_next,
    in_peak,
    kept_before_ms,
    mode_of,
    next_peak_edge_ms,
    split_types,
)
from sim.cvsa.vocabulary import ScheduleType, TrafficMode
from sim.engine import Engine
from sim.events.write_kinds import MODE_CAUSE, TRAFFIC_MODE, ModeChanged
from sim.ports import DueOrder, ScheduleRow, Store
from sim.units import Ms

_MODE_CODE: Final = TRAFFIC_MODE.codes()


class TrafficModes:
    """The run's traffic mode (one for all deployments: they share the database and the peak)."""

    def __init__(self, engine: Engine, params: ModeParams, tz_offset_ms: Ms) -> None:
        self.engine = engine
        self.params = params
        self.tz_offset_ms = tz_offset_ms
        self._emit = engine.log.emitter(ModeChanged)
        self.peak = in_peak(engine.now, tz_offset_ms, params)
        self.degraded = False
        self.backlog = 0
        self.mode = mode_of(self.peak, self.degraded)
        if self.mode is not TrafficMode.DEFAULT:
            self._log("start")

    async def follow_schedule(self) -> None:
        """A process: wake at each edge of a peak window and switch the mode."""
        eng = self.engine
        while True:
            edge = next_peak_edge_ms(eng.now, self.tz_offset_ms, self.params)
            if edge is None:
                return
            await eng.sleep_until(edge)
            self.peak = in_peak(eng.now, self.tz_offset_ms, self.params)
            self._switch("schedule")

    def on_backlog(self, backlog_rows: int) -> None:
        """The write backlog changed (the writer calls this)."""
        self.backlog = backlog_rows
        degraded = degraded_next(self.degraded, backlog_rows, self.params)
        if degraded != self.degraded:
            self.degraded = degraded
            self._switch("backlog")

    def _switch(self, cause: str) -> None:
        mode = mode_of(self.peak, self.degraded)
        if mode is not self.mode:
            self.mode = mode
            self._log(cause)

    def _log(self, cause: str) -> None:
        self._emit(self.engine.now, _MODE_CODE[self.mode], MODE_CAUSE.code(cause), self.backlog)

    def cleanup_bounds(self, before_ms: Ms) -> dict[ScheduleType, Ms]:
        """Cleanup's own bound for pending rows of the deferrable types (kept for the bound)."""
        return dict(kept_before_ms(before_ms, self.params))

    async def due(
        self,
        store: Store,
        *,
        from_ms: Ms | None,
        to_ms: Ms,
        types: Sequence[ScheduleType],
        limit: int,
        order: DueOrder,
    ) -> list[ScheduleRow]:
        """A tick's due query under the current mode: the types it defers only once a row has
        waited the bound (``max_defer_ms``); in default mode, the tick's own query."""
        now = self.engine.now
        kept, late = split_types(types, self.mode, self.params)
        if not late:
            return await store.due_schedules(
                from_ms=from_ms, to_ms=to_ms, types=types, limit=limit, order=order
            )
        rows = []
        if kept:
            rows = await store.due_schedules(
                from_ms=from_ms, to_ms=to_ms, types=kept, limit=limit, order=order
            )
        late_to = min(to_ms, deferred_due_before_ms(now, self.params))
        if len(rows) < limit and (from_ms is None or from_ms <= late_to):
            rows += await store.due_schedules(
                from_ms=from_ms, to_ms=late_to, types=late, limit=limit - len(rows), order=order
            )
        return rows
