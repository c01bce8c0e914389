"""The real-clock engines: each entry runs at its wall instant (`sim run --speed K`, `sim load`).

* :class:`RealClockEngine` runs the same entries in the same order as the virtual engine, one at a
  time in the engine's task, but first sleeps until the wall instant of each new entry time. A
  late entry runs at once: lateness shows in the clock's lag, not in the order of events.
* :class:`ConcurrentEngine` is the load harness: every process runs in a trio task of its own, so
  jobs wait on I/O at the same time, as a worker pool does. Processes queue entries while the loop
  waits, so the loop's wait ends early when one is queued. Not deterministic.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

import trio

from sim.clock import Clock
from sim.engine.core import (
    CHECKPOINT_EVERY,
    ENDED,
    OBSERVE_EVERY,
    Engine,
    Process,
    SimulationError,
    Wait,
    forward_trap,
)
from sim.events.log import EventLog
from sim.units import Ms


class RealClockEngine(Engine):
    """Entries in virtual-time order, each started no earlier than its wall instant."""

    def __init__(self, *, clock: Clock, log: EventLog, seed: int = 0, elide: bool = True) -> None:
        if clock.is_virtual:
            raise SimulationError("a real-clock engine needs a real clock (sim load, --speed)")
        super().__init__(clock=clock, log=log, seed=seed, elide=elide)

    async def _wait_for(self, t: Ms) -> bool:
        """Wait until virtual ``t`` is due; False if the wait ended early (look again)."""
        await self.clock.wait_until(t)
        return True

    async def _wait_for_entries(self, until_ms: Ms) -> bool:
        """Nothing is queued: True if an entry may still be queued by ``until_ms`` (look again),
        False to end the run. Here nothing runs between entries, so nothing can queue one."""
        return False

    async def _loop(self, until_ms: Ms) -> None:
        """The virtual engine's loop, with a wait before each new entry time.

        ``now`` never goes back: on the concurrent engine, processes move it to the clock's time
        as they run, which may be past the entry's time.
        """
        heap = self._heap
        pop = heapq.heappop
        count = 0
        t: Ms = self.now
        waited_to: Ms = self.now
        while not self._stop:
            iters = self._iters
            if iters and (not heap or iters[0][0] <= heap[0][0]):
                t = iters[0][0]
                if t > until_ms:
                    if await self._wait_for_entries(until_ms):
                        continue
                    break
                if t > waited_to:
                    if not await self._wait_for(t):
                        continue
                    waited_to = t
                    if self.observer is not None:  # each wall wait: progress moves with time
                        self.observer(t)
                _, _, it = pop(iters)
                self.now = max(self.now, t)
                if not (self.elide and await self._elide_from(it)):
                    it.on_due()
            elif heap:
                entry = heap[0]
                t = entry[0]
                if t > until_ms:
                    # Past the end, unless a running process (concurrent engine) still queues
                    # an earlier entry: a job that reschedules itself when it ends.
                    if await self._wait_for_entries(until_ms):
                        continue
                    break
                if t > waited_to:
                    if not await self._wait_for(t):
                        continue
                    waited_to = t
                    if self.observer is not None:  # each wall wait: progress moves with time
                        self.observer(t)
                pop(heap)
                self.now = max(self.now, t)
                entry[3](entry[4])
            elif await self._wait_for_entries(until_ms):
                continue
            else:
                break
            if self._trap is not None:
                await self._forward_traps()
            if self._crash is not None:
                raise self._crash
            count += 1
            if count % CHECKPOINT_EVERY == 0:
                await trio.lowlevel.checkpoint()
                if count % OBSERVE_EVERY == 0 and self.observer is not None:
                    self.observer(t)
        self.processed += count
        if self._stop:
            self.partial = True
        else:
            # A late loop can overshoot: the run still ends at until_ms.
            self.now = until_ms


class ConcurrentEngine(RealClockEngine):
    """The load harness (module docstring).

    Tick elision is always off, whatever ``elide`` says (it is accepted so that every engine is
    built alike): proving an iteration idle needs a world in which nothing runs meanwhile.
    """

    def __init__(self, *, clock: Clock, log: EventLog, seed: int = 0, elide: bool = False) -> None:
        super().__init__(clock=clock, log=log, seed=seed, elide=False)
        self.concurrent = True
        self._nursery: trio.Nursery | None = None
        # Set when an entry is queued or the run fails: the loop's wait then ends early.
        self._wake = trio.Event()

    # -- entries queued while the loop waits wake it ------------------------------------------
    def call_at(self, t_ms: Ms, fn: Callable[[Any], None], arg: Any = None) -> None:
        super().call_at(t_ms, fn, arg)
        self._wake.set()

    def call_now(self, fn: Callable[[Any], None], arg: Any = None) -> None:
        super().call_now(fn, arg)
        self._wake.set()

    def fail(self, exc: BaseException) -> None:
        super().fail(exc)
        self._wake.set()

    async def _wait_for(self, t: Ms) -> bool:
        self._wake = trio.Event()
        with trio.move_on_at(self.clock.trio_time(t)):
            await self._wake.wait()
        if self._crash is not None:  # a process failed in its own task
            raise self._crash
        return self.clock.virtual_now_ms() >= t

    async def _wait_for_entries(self, until_ms: Ms) -> bool:
        if self.clock.virtual_now_ms() >= until_ms:
            return False
        await self._wait_for(until_ms)  # processes may still queue entries
        return True

    async def _loop(self, until_ms: Ms) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            await super()._loop(until_ms)
            nursery.cancel_scope.cancel()  # processes still running at the end stop
        if not self.partial:
            # The processes unwinding above read the clock, which runs on past the end; the run
            # still ends at until_ms (lateness is measured by the lag records).
            self.now = until_ms

    # -- processes: one trio task each ----------------------------------------------------------
    def start_now(self, proc: Process) -> None:
        self._resume(proc)

    def _resume(self, proc: Process) -> None:
        if not proc.dead:
            assert self._nursery is not None, "processes start once the run is under way"
            self._nursery.start_soon(self._drive, proc)

    def sleep_until(self, t_ms: Ms) -> Wait:
        """An instant that has already passed resumes at once (the process is late, not wrong:
        ``now`` follows the wall clock here)."""
        return Wait(max(t_ms, self.now))

    def kill(self, proc: Process) -> None:
        if proc.scope is None or proc.dead:  # its task has not started: close it here
            super().kill(proc)
            return
        proc.dead = True
        proc.scope.cancel()  # its task unwinds it; _finish ignores the end of a dead process

    async def _drive(self, proc: Process) -> None:
        """Run ``proc`` to completion in this trio task, on the real clock."""
        if proc.dead:  # killed before its task started
            return
        clock = self.clock
        send: object = None
        with trio.CancelScope() as scope:
            proc.scope = scope
            while True:
                self.now = max(self.now, clock.virtual_now_ms())
                yielded = self._advance(proc, send)
                if yielded is ENDED:
                    return
                if type(yielded) is Wait:
                    await clock.wait_until(yielded.t_ms)
                    send = None
                else:
                    send = await forward_trap(yielded)
