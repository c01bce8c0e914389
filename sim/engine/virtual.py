"""The virtual-clock engine: time jumps from entry to entry (``sim run``, ``sim check``, tests).

Nothing here waits for the wall clock: an entry runs as soon as the one before it is done, and
virtual time is simply the time of the entry being run. A process's real I/O is awaited inside
that entry (:meth:`Engine._forward_traps`), so it takes no virtual time at all.
"""

from __future__ import annotations

import heapq

import trio

from sim.clock import Clock
from sim.engine.core import CHECKPOINT_EVERY, OBSERVE_EVERY, Engine, SimulationError
from sim.events.log import EventLog
from sim.units import Ms


class VirtualEngine(Engine):
    """Deterministic discrete-event engine on a :class:`sim.clock.VirtualClock`."""

    def __init__(self, *, clock: Clock, log: EventLog, seed: int = 0, elide: bool = True) -> None:
        if not clock.is_virtual:
            raise SimulationError("the virtual engine needs a virtual clock (use RealClockEngine)")
        super().__init__(clock=clock, log=log, seed=seed, elide=elide)

    async def _loop(self, until_ms: Ms) -> None:
        """Run the earliest entry, then the next, until the next is after ``until_ms``.

        At an instant, the periodic-job iterations due then run first (by registration index),
        then the main heap's entries in the order they were queued.
        """
        heap = self._heap
        pop = heapq.heappop
        count = 0
        t: Ms = self.now
        while not self._stop:
            iters = self._iters  # rebuilt by elision: read it afresh on every pass
            if iters and (not heap or iters[0][0] <= heap[0][0]):
                t = iters[0][0]
                if t > until_ms:
                    break
                _, _, it = pop(iters)
                self.now = t
                if not (self.elide and await self._elide_from(it)):
                    it.on_due()
            elif heap:
                entry = heap[0]
                t = entry[0]
                if t > until_ms:
                    break
                pop(heap)
                self.now = t
                entry[3](entry[4])
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
            self.now = max(self.now, until_ms)
