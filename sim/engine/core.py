"""The discrete-event core: one heap of ``(time, priority, key)`` entries, driven by one trio task.

Why not one trio task per process? A trio wake-up costs far more than a heap push, which would cap
the event rate (feasibility.md §3-4). So the engine keeps its own heap, SimPy-style, and trio is
the runtime around it:

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

This module holds what every engine shares: the heaps, processes and how one is resumed
(:meth:`Engine._advance`), tick elision, and the run's frame (start and end records, closing
what is left). The loop that decides *when* each entry runs is a subclass's:

* :class:`sim.engine.virtual.VirtualEngine` -- virtual time, jumping from entry to entry;
* :class:`sim.engine.realtime.RealClockEngine` -- the same entries, each at its wall instant
  (``sim run --speed K``);
* :class:`sim.engine.realtime.ConcurrentEngine` -- the load harness: every process in its own
  trio task on the real clock, so jobs wait on I/O at the same time, as a worker pool does.

The composition root (``sim.runner``) picks one; everything else sees an :class:`Engine`.
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

PRIORITY_DEFAULT: Final = 1
"""The priority of every entry of the main heap. Periodic-job iterations have a heap of their
own and run before the main heap's entries of their instant."""

CHECKPOINT_EVERY: Final = 1024
"""Entries between trio checkpoints: often enough for a Ctrl-C watcher to run, rarely enough
that the checkpoints cost nothing measurable."""

OBSERVE_EVERY: Final = 4096
"""Entries between calls of the progress observer (a multiple of CHECKPOINT_EVERY)."""


# Compiled (sim._native); an exception class stays a regular Python class.
@mypyc_attr(native_class=False)
class SimulationError(RuntimeError):
    """An engine-level misuse, such as sleeping into the past."""


class Wait:
    """The marker a process yields to be resumed at ``t_ms``."""

    __slots__ = ("t_ms",)

    def __init__(self, t_ms: Ms) -> None:
        self.t_ms = t_ms

    def __await__(self) -> Generator[Wait, None, None]:
        yield self


class _Thrown:
    """An exception trio threw into the engine task while it forwarded a process's trap."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


ENDED: Final = object()
"""What :meth:`Engine._advance` returns when the process returned or raised."""


@types.coroutine
def forward_trap(trap: object) -> Generator[object, object, object]:
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
        # ConcurrentEngine: the cancel scope of the trio task driving it.
        self.scope: trio.CancelScope | None = None


class Engine:
    """What every engine shares (module docstring); build a subclass, which supplies the loop.

    By default a process runs inside the engine's own task: :meth:`_step` resumes it, parks it
    on the heap when it sleeps and has the loop forward its trio traps.
    """

    def __init__(self, *, clock: Clock, log: EventLog, seed: int = 0, elide: bool = True) -> None:
        if type(self) is Engine:
            raise TypeError(
                "Engine has no loop: build a VirtualEngine, RealClockEngine or ConcurrentEngine"
            )
        self.clock = clock
        self.log = log
        self.seed = seed
        self.elide = elide
        """Skip the periodic iterations proven idle (jobs.py "Idle iterations and elision")."""
        self.concurrent = False
        """Processes run in trio tasks of their own, at the same time (ConcurrentEngine)."""
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
        # One bound method for every process wake-up entry, so that _close_suspended can tell
        # those entries from the others.
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

    def call_now(self, fn: Callable[[Any], None], arg: Any = None) -> None:
        """Run ``fn(arg)`` at the current instant, after what is already queued for it."""
        self._seq += 1
        heapq.heappush(self._heap, (self.now, PRIORITY_DEFAULT, self._seq, fn, arg))

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
        This relies on nothing else running meanwhile: no process may add an entry while the
        horizon is computed (so never with concurrent processes).
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
        self._step(proc, None)

    def sleep(self, delay_ms: Ms) -> Wait:
        """``await engine.sleep(d)`` inside a process: resume ``d`` ms later."""
        if delay_ms < 0:
            raise SimulationError(f"cannot sleep a negative time ({delay_ms} ms)")
        return Wait(self.now + delay_ms)

    def sleep_until(self, t_ms: Ms) -> Wait:
        """``await engine.sleep_until(t)`` inside a process."""
        if t_ms < self.now:
            raise SimulationError(f"cannot sleep until {t_ms}, before now ({self.now})")
        return Wait(t_ms)

    def kill(self, proc: Process) -> None:
        """Stop ``proc`` where it is (a crashed worker): its coroutine is closed, so ``finally``
        blocks run, its pending wake-up is ignored, and ``on_done`` is never called."""
        if proc.dead:
            return
        proc.dead = True
        self.current = proc
        try:
            proc.coro.close()
        finally:
            self.current = None

    def _resume(self, proc: Process) -> None:
        """A process's wake-up entry (``spawn``, the end of a sleep)."""
        if not proc.dead:
            self._step(proc, None)

    def _advance(self, proc: Process, send: object) -> object:
        """Run ``proc`` to its next suspension: send it ``send``, or throw it a ``_Thrown``'s.

        Returns what it yielded -- a ``Wait``, or a trio trap to forward -- or ``ENDED`` once
        it has returned or raised, its outcome then handed to :meth:`_finish`. While its code
        runs, ``current`` is the process and the log's lazy header is its own; both are cleared
        before the outcome is handed on, so ``on_done`` runs as nobody's code.
        """
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
            return ENDED
        except BaseException as exc:  # routed to on_done, or it aborts the run
            log.lazy = None
            self.current = None
            self._finish(proc, None, exc)
            return ENDED
        log.lazy = None
        self.current = None
        return yielded

    def _step(self, proc: Process, send: object) -> None:
        """Resume ``proc`` in the engine's task: a sleep parks it on the heap; a trio trap is
        left in ``_trap`` for the loop to forward before it runs anything else."""
        yielded = self._advance(proc, send)
        if type(yielded) is Wait:
            if yielded.t_ms < self.now:
                raise SimulationError(f"{proc.name}: resume time {yielded.t_ms} is in the past")
            self._seq += 1
            heapq.heappush(
                self._heap, (yielded.t_ms, PRIORITY_DEFAULT, self._seq, self._resume_cb, proc)
            )
        elif yielded is not ENDED:
            self._trap = (proc, yielded)

    async def _forward_traps(self) -> None:
        """Hand the pending trap to trio from the engine's task, resume its process with the
        answer, and so on until that process sleeps or ends (virtual time stands still)."""
        while self._trap is not None:
            proc, trap = self._trap
            self._trap = None
            self._step(proc, await forward_trap(trap))

    def _finish(self, proc: Process, value: Any, exc: BaseException | None) -> None:
        if proc.dead:  # killed: kill() promises that nobody hears of its end
            return
        # An iteration's lazy header closes over its process (jobs.py `IterationLog.announcer`):
        # dropping it here breaks that cycle, which the garbage collector would otherwise break.
        proc.lazy = None
        if proc.on_done is not None:
            proc.on_done(value, exc)
        elif exc is not None:
            self.fail(exc)

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
            # that a report drawn next does not add to the model's memory.
            self._iters.clear()
            self.finalizers.clear()

    async def _loop(self, until_ms: Ms) -> None:
        """Run the entries due up to ``until_ms`` (or until stopped); then set ``now`` to the
        run's end, ``processed`` and ``partial``. Each subclass has its own."""
        raise NotImplementedError

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
