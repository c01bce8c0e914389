"""The discrete-event core: one heap of ``(time, priority, key)`` entries, driven by one trio task.

Why not one trio task per process? A trio wake-up costs 20-35 us, which caps such a design near
40k events/s; a heap entry costs under 1 us (feasibility.md §3-4). So the engine keeps its own
heap, SimPy-style, and trio is the runtime around it:

* **Processes** are ordinary ``async def`` coroutines. ``await engine.sleep(d)`` yields a marker
  to the engine, which parks the process on the heap. Any other ``await`` that really suspends
  (a real database, a thread) yields a trio trap: the engine forwards it to trio *from its own
  task* and waits for the answer before it runs anything else, so virtual time cannot move while
  I/O is in flight (trio issue 456 cannot arise), and the order of events does not depend on I/O
  latency -- which is what makes memory, SQLite and PostgreSQL give the same log.
* **Ordering** is total: ``(t_ms, priority, key)``; ``key`` is a sequence number (or, for
  periodic-job iterations, the scheduler's registration index, so that tick elision cannot change
  tie-breaking). Never ``id()``, never set order (README "Design rules" 1).
* **Every resumption of a process is its own heap entry**, so a process that hits real I/O is run
  to its next engine suspension before anything else happens at the same instant.
"""

from __future__ import annotations

import heapq
import math
import types
from collections.abc import Callable, Coroutine, Generator
from typing import Any, Final, Protocol

import trio
from mypy_extensions import mypyc_attr

from sim.clock import Clock
from sim.events.engine_kinds import RunEnded, RunStarted
from sim.events.log import EventLog
from sim.units import Ms

PRIORITY_ITERATION: Final = 0
"""Periodic-job iterations due at an instant run before other entries at that instant."""
PRIORITY_DEFAULT: Final = 1

CHECKPOINT_EVERY: Final = 1024
"""Events between trio checkpoints (lets a Ctrl-C watcher run; costs ~4 us each)."""

OBSERVE_EVERY: Final = 4096
"""Events between calls of the progress observer."""


# Compiled (sim._native); an exception class stays a regular Python class.
@mypyc_attr(native_class=False)
class SimulationError(RuntimeError):
    """An engine-level misuse, such as sleeping into the past."""


class _Wait:
    """The marker a process yields to be resumed at ``t_ms``."""

    __slots__ = ("t_ms",)

    def __init__(self, t_ms: Ms) -> None:
        self.t_ms = t_ms

    def __await__(self) -> Generator[_Wait, None, None]:
        yield self


class _Thrown:
    """An exception trio threw into the engine task while it forwarded a process's trap."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


@types.coroutine
def _forward_trap(trap: object) -> Generator[object, object, object]:
    """Yield a process's trio trap from the engine task; return what trio sends back."""
    try:
        return (yield trap)
    except BaseException as exc:
        return _Thrown(exc)


DoneCallback = Callable[[Any, BaseException | None], None]


class Iteration(Protocol):
    """A periodic job as the engine sees it (implemented by ``sim.engine.jobs.JobScheduler``)."""

    index: int
    next_due: Ms

    def on_due(self) -> None:
        """The pending iteration is due now: hand it to its queue."""

    async def idle_horizon(self, now: Ms) -> Ms:
        """The first due time of this job not proven idle by its hint (``next_due`` if none)."""

    def skip_idle_before(self, horizon: Ms) -> None:
        """Count the iterations due before ``horizon`` as idle and move ``next_due`` past them."""


class Process:
    """A coroutine driven by the engine."""

    __slots__ = ("coro", "dead", "lazy", "name", "on_done", "scope", "tally")

    def __init__(self, coro: Coroutine[Any, Any, Any], name: str, on_done: DoneCallback | None):
        self.coro = coro
        self.name = name
        self.on_done = on_done
        # Called before this process's first event is logged (see Queue: lazy iteration headers).
        self.lazy: Callable[[], None] | None = None
        # Scratch space a model may attach to the running process (e.g. per-job query counts).
        self.tally: Any = None
        self.dead = False
        # Concurrent (load-harness) mode: the cancel scope of the trio task driving it.
        self.scope: trio.CancelScope | None = None


class Engine:
    """Virtual-time discrete-event engine (see module docstring)."""

    def __init__(
        self,
        *,
        clock: Clock,
        log: EventLog,
        seed: int = 0,
        elide: bool = True,
        concurrent: bool = False,
    ) -> None:
        if concurrent and clock.is_virtual:
            raise SimulationError("concurrent processes need a real clock (sim load, --speed)")
        self.clock = clock
        self.concurrent = concurrent
        """Load-harness mode: each process runs in its own trio task on the real clock, so jobs
        wait on I/O at the same time, as a worker pool does. Not deterministic."""
        self._nursery: trio.Nursery | None = None
        self._wake = trio.Event()
        self.log = log
        self.seed = seed
        self.elide = elide
        self.now: Ms = clock.epoch_ms
        self.until_ms: Ms = clock.epoch_ms
        self._heap: list[tuple[Any, ...]] = []
        self._iters: list[tuple[Ms, int, Iteration]] = []
        self._seq = 0
        self._trap: tuple[Process, object] | None = None
        self._crash: BaseException | None = None
        self._stop = False
        self.partial = False
        self.processed = 0
        self.observer: Callable[[Ms], None] | None = None
        self.finalizers: list[Callable[[], None]] = []
        self._resume_cb = self._resume
        self._job_ids = 0
        self._scheduler_count = 0
        self.current: Process | None = None
        """The process being stepped (None between entries)."""

    def next_job_id(self) -> int:
        """Job ids count from 1 in the order jobs are added (BullMQ's ``id`` counter)."""
        self._job_ids += 1
        return self._job_ids

    def next_scheduler_index(self) -> int:
        """Registration index of a periodic job: its tie-break key among same-instant iterations."""
        self._scheduler_count += 1
        return self._scheduler_count - 1

    # -- scheduling -------------------------------------------------------------------------
    def call_at(self, t_ms: Ms, fn: Callable[[Any], None], arg: Any = None) -> None:
        """Run ``fn(arg)`` at virtual ``t_ms`` (after entries already queued for that instant)."""
        if t_ms < self.now:
            raise SimulationError(f"cannot schedule at {t_ms}, before now ({self.now})")
        self._seq += 1
        heapq.heappush(self._heap, (t_ms, PRIORITY_DEFAULT, self._seq, fn, arg))
        if self.concurrent:
            self._wake.set()

    def call_now(self, fn: Callable[[Any], None], arg: Any = None) -> None:
        """Run ``fn(arg)`` at the current instant, after what is already queued for it."""
        self._seq += 1
        heapq.heappush(self._heap, (self.now, PRIORITY_DEFAULT, self._seq, fn, arg))
        if self.concurrent:
            self._wake.set()

    def push_iteration(self, t_ms: Ms, key: int, target: Iteration) -> None:
        """Queue a periodic-job iteration: ``target.on_due()`` is called at ``t_ms``, before other
        entries of that instant; among iterations, ``key`` (registration order) breaks ties."""
        heapq.heappush(self._iters, (t_ms, key, target))

    def remove_iteration(self, target: Iteration) -> None:
        """Drop a periodic job's pending iteration (its deployment was stopped)."""
        self._iters = [e for e in self._iters if e[2] is not target]
        heapq.heapify(self._iters)

    def peek_time(self) -> Ms | float:
        """The time of the next queued non-iteration entry, or infinity."""
        return self._heap[0][0] if self._heap else math.inf

    async def _elide_from(self, first: Iteration) -> bool:
        """Skip every periodic iteration that is provably idle, jointly for all periodic jobs.

        The horizon ``H`` is the first instant at which anything could change state: the next
        non-iteration entry, or the first iteration of any periodic job that its idle hint does
        not prove idle. Every iteration due before ``H`` would run against unchanged state, log
        nothing and schedule nothing, so it is only counted. Returns True if ``first`` was skipped.
        """
        due = first.next_due
        horizon: Ms | float = await first.idle_horizon(self.now)
        if horizon <= due:
            return False
        horizon = min(horizon, self.peek_time(), self.until_ms + 1)
        # In due order: a job's horizon is never before its next due time, so once that is at or
        # past the horizon, neither it nor any later job can bring the horizon closer.
        # (due, key) pairs are unique, so a plain sort never compares the iterations.
        for other_due, _, other in sorted(self._iters):
            if horizon <= due or other_due >= horizon:
                break
            horizon = min(horizon, await other.idle_horizon(self.now))
        if horizon <= due:
            return False
        first.skip_idle_before(int(horizon))
        for _, _, other in self._iters:
            if other.next_due < horizon:
                other.skip_idle_before(int(horizon))
        self._iters = [(it.next_due, key, it) for _, key, it in self._iters]
        heapq.heapify(self._iters)
        heapq.heappush(self._iters, (first.next_due, first.index, first))
        return True

    # -- processes ----------------------------------------------------------------------------
    def spawn(
        self,
        coro: Coroutine[Any, Any, Any],
        *,
        name: str = "process",
        on_done: DoneCallback | None = None,
    ) -> Process:
        """Start ``coro`` as a process at the current instant (as its own heap entry)."""
        proc = Process(coro, name, on_done)
        self.call_now(self._resume_cb, proc)
        return proc

    def start_now(self, proc: Process) -> None:
        """Run ``proc`` to its first suspension *now*; only as the last act of an entry."""
        if self.concurrent:
            self._resume(proc)
        else:
            self._step(proc, None)

    def sleep(self, delay_ms: Ms) -> _Wait:
        """``await engine.sleep(d)`` inside a process: resume ``d`` ms later."""
        if delay_ms < 0:
            raise SimulationError(f"cannot sleep a negative time ({delay_ms} ms)")
        return _Wait(self.now + delay_ms)

    def sleep_until(self, t_ms: Ms) -> _Wait:
        """``await engine.sleep_until(t)`` inside a process. On the real clock an instant that
        has already passed resumes at once (the process is late, not wrong)."""
        if t_ms < self.now:
            if self.concurrent:
                return _Wait(self.now)
            raise SimulationError(f"cannot sleep until {t_ms}, before now ({self.now})")
        return _Wait(t_ms)

    def _resume(self, proc: Process) -> None:
        if proc.dead:
            return
        if self.concurrent:
            assert self._nursery is not None
            self._nursery.start_soon(self._drive, proc)
        else:
            self._step(proc, None)

    async def _drive(self, proc: Process) -> None:
        """Concurrent mode: run ``proc`` to completion in this trio task, on the real clock."""
        clock = self.clock
        send: object = None
        with trio.CancelScope() as scope:
            proc.scope = scope
            while True:
                self.now = max(self.now, clock.virtual_now_ms())
                log = self.log
                log.lazy, self.current = proc.lazy, proc
                try:
                    if type(send) is _Thrown:
                        yielded = proc.coro.throw(send.exc)
                    else:
                        yielded = proc.coro.send(send)
                except StopIteration as stop:
                    self._finish(proc, stop.value, None)
                    return
                except BaseException as exc:  # routed to on_done, or it aborts the run
                    self._finish(proc, None, exc)
                    if proc.on_done is None:
                        raise
                    return
                finally:
                    log.lazy, self.current = None, None
                if type(yielded) is _Wait:
                    await clock.wait_until(yielded.t_ms)
                    send = None
                else:
                    send = await _forward_trap(yielded)

    def kill(self, proc: Process) -> None:
        """Stop ``proc`` where it is (a crashed worker): its coroutine is closed, so ``finally``
        blocks run, its pending wake-up is ignored, and ``on_done`` is never called."""
        if proc.dead:
            return
        proc.dead = True
        if proc.scope is not None:  # concurrent mode: its task unwinds it
            proc.on_done = None
            proc.scope.cancel()
            return
        self.current = proc
        try:
            proc.coro.close()
        finally:
            self.current = None

    def _step(self, proc: Process, send: object) -> None:
        log = self.log
        log.lazy = proc.lazy
        self.current = proc
        try:
            if type(send) is _Thrown:
                yielded = proc.coro.throw(send.exc)
            else:
                yielded = proc.coro.send(send)
        except StopIteration as stop:
            log.lazy = None
            self.current = None
            self._finish(proc, stop.value, None)
            return
        except BaseException as exc:
            log.lazy = None
            self.current = None
            self._finish(proc, None, exc)
            return
        log.lazy = None
        self.current = None
        if type(yielded) is _Wait:
            if yielded.t_ms < self.now:
                raise SimulationError(f"{proc.name}: resume time {yielded.t_ms} is in the past")
            self._seq += 1
            heapq.heappush(
                self._heap, (yielded.t_ms, PRIORITY_DEFAULT, self._seq, self._resume_cb, proc)
            )
        else:
            self._trap = (proc, yielded)

    def _finish(self, proc: Process, value: Any, exc: BaseException | None) -> None:
        # A job scheduler's lazy header closes over its process (jobs.py `_announcer`): an
        # iteration that logged nothing left that cycle to the garbage collector, some eight
        # objects a tick, and collecting them was about 2 % of a tenth-scale month
        # (docs/performance.md "Eighth round").
        proc.lazy = None
        if proc.on_done is not None:
            proc.on_done(value, exc)
        elif exc is not None and self._crash is None:
            self._crash = exc

    def fail(self, exc: BaseException) -> None:
        """Abort the run with ``exc`` (raised from :meth:`run` after the current entry)."""
        if self._crash is None:
            self._crash = exc

    # -- running --------------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the run to end after the current entry; the log is closed as partial."""
        self._stop = True

    async def run(
        self, until_ms: Ms, before: Callable[[], Coroutine[Any, Any, None]] | None = None
    ) -> None:
        """Run every entry with ``t_ms <= until_ms``; then close the log (partial if stopped).

        ``before`` (e.g. loading the initial database) is awaited at the start instant, after the
        ``RunStarted`` record and before any entry runs.
        """
        self.until_ms = until_ms
        self.log.emitter(RunStarted)(self.now, until_ms, self.seed)
        try:
            if before is not None:
                await before()
            # On the real clock, time starts after the setup: loading the initial database can
            # take a while on a real server, and the run must not start behind schedule.
            self.clock.start()
            if self.concurrent:
                async with trio.open_nursery() as nursery:
                    self._nursery = nursery
                    await self._loop(until_ms)
                    nursery.cancel_scope.cancel()  # processes still running at the end stop
                if not self.partial:
                    # The processes unwinding above read the clock, which runs on past the end;
                    # the run still ends at until_ms (lateness is measured by the lag records).
                    self.now = until_ms
            else:
                await self._loop(until_ms)
        except BaseException:
            self.partial = True
            raise
        finally:
            self._close_suspended()
            for fin in self.finalizers:
                fin()
            self.log.emitter(RunEnded)(self.now, int(self.partial))
            self.log.close(partial=self.partial)
            # The run is over: the periodic jobs (and through them the model) are let go, so
            # that a report drawn next does not add to the model's memory (most of the 1.6 GB
            # a full-scale run's process holds at its end).
            self._iters.clear()
            self.finalizers.clear()

    def _close_suspended(self) -> None:
        """The run is over: close every process still waiting on the heap, in heap order, so
        that their ``finally`` blocks run now (and log before ``RunEnded``), not at some later
        garbage collection -- and processes that never started do not warn."""
        for entry in sorted(self._heap, key=lambda e: (e[0], e[1], e[2])):
            if entry[3] == self._resume_cb and not entry[4].dead:
                proc = entry[4]
                proc.dead = True
                self.current = proc
                try:
                    proc.coro.close()
                finally:
                    self.current = None
        self._heap.clear()

    async def _wait_for(self, t: Ms) -> None:
        """Real clock: wait until ``t``, or -- concurrent mode -- until a process adds an entry."""
        if not self.concurrent:
            await self.clock.wait_until(t)
            return
        self._wake = trio.Event()
        with trio.move_on_at(self.clock.trio_time(t)):
            await self._wake.wait()

    async def _loop(self, until_ms: Ms) -> None:
        heap = self._heap
        pop = heapq.heappop
        clock = self.clock
        virtual = clock.is_virtual
        waited_to: Ms = self.now
        count = 0
        while not self._stop:
            iters = self._iters
            if iters and (not heap or iters[0][0] <= heap[0][0]):
                t = iters[0][0]
                if t > until_ms:
                    break
                if not virtual and t > waited_to:
                    await self._wait_for(t)
                    if self.concurrent and clock.virtual_now_ms() < t:
                        continue  # woken by a new entry: look again
                    waited_to = t
                _, _, it = pop(iters)
                self.now = t if virtual else max(self.now, t)
                if not (self.elide and await self._elide_from(it)):
                    it.on_due()
            elif heap:
                entry = heap[0]
                t = entry[0]
                if t > until_ms:
                    break
                if not virtual and t > waited_to:
                    await self._wait_for(t)
                    if self.concurrent and clock.virtual_now_ms() < t:
                        continue
                    waited_to = t
                pop(heap)
                self.now = t if virtual else max(self.now, t)
                entry[3](entry[4])
            elif self.concurrent and clock.virtual_now_ms() < until_ms:
                await self._wait_for(until_ms)  # processes may still add entries
                continue
            else:
                break
            while self._trap is not None:
                proc, trap = self._trap
                self._trap = None
                self._step(proc, await _forward_trap(trap))
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
            # On the real clock a late loop can overshoot: the run still ends at until_ms.
            self.now = until_ms if not virtual else max(self.now, until_ms)
