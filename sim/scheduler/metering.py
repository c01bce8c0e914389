"""SQL-equivalent query counts, per job (issue 4 "Observability").

Every port call a job makes is counted into the running process's tally -- reads (SELECT),
writes (INSERT/UPDATE/DELETE/upsert) and window-counter round trips (HINCRBY and friends; a
reservation costs what the deployed client-side loop would: +1 per probed window and -1 per full
one, §6.2) -- and a job that did anything logs one ``QueryCounts`` record when it ends.

An idle periodic iteration logs nothing (that is what makes tick elision invisible in the log);
each one ran exactly one query, its due query, which reports add from ``IdleIterations``.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Final

from mypy_extensions import mypyc_attr

from sim.clock import wall_seconds
from sim.engine import Engine, Job
from sim.events.cvsa_kinds import PortCall
from sim.ports import (
    EtaInputs,
    JobReads,
    JobWrites,
    LockManager,
    Reserved,
    ScheduleReads,
    SchedulerLock,
    ScheduleWrites,
    SnapshotReads,
    SnapshotWrites,
    WindowCounter,
)
from sim.units import Ms

READ: Final = 0
WRITE: Final = 1
REDIS: Final = 2

PORT_KINDS: Final = (
    (ScheduleReads, READ),
    (SnapshotReads, READ),
    (ScheduleWrites, WRITE),
    (SnapshotWrites, WRITE),
    (WindowCounter, REDIS),
    (LockManager, REDIS),
    (JobReads, READ),
    (JobWrites, WRITE),
    (SchedulerLock, READ),
)
"""What a call of each port protocol's methods costs: the protocols say which are reads, which
writes, and the window counter and the locks are Redis round trips (:mod:`sim.ports`). Seed
001's job table is in the store's database; taking its lock is a ``SELECT
pg_try_advisory_lock``, a read."""


def port_methods(protocol: type) -> list[str]:
    """The methods a port protocol declares itself (not those of the protocols it extends)."""
    return [name for name, value in vars(protocol).items() if callable(value) and name[0] != "_"]


KINDS: Final[dict[str, int]] = {
    name: kind for protocol, kind in PORT_KINDS for name in port_methods(protocol)
}
"""Port method -> the kind of query each call is counted as."""


class Slowdown:
    """Extra virtual time every call of a metered port takes inside a job (the
    ``slow_database`` fault). A native object of its own: the wrappers read it at every call,
    and an attribute of :class:`Metered` (a regular Python class) is a dict lookup."""

    def __init__(self) -> None:
        self.delay_ms: Ms = 0


# Compiled (sim._native), but a regular Python class: __getattr__ caches each wrapper in the
# instance's __dict__, which a native class has not.
@mypyc_attr(native_class=False)
class Metered:
    """A port whose calls are counted into ``engine.current.tally`` (when a tally is attached).

    In load mode (``timed``) every call's wall time is also logged (``PortCall``)."""

    def __init__(self, target: Any, engine: Engine, *, port: str = "", timed: bool = False) -> None:
        self._target = target
        self._engine = engine
        self._port = port
        self._timed = timed
        self.slowdown = Slowdown()

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._target, name)
        kind = KINDS.get(name)
        by_answer = CHARGED_BY_ANSWER.get(name)
        if kind is None and by_answer is None:
            return fn
        if self._timed:
            fn = _timed(fn, self._engine, self._engine.log.name(f"{self._port}.{name}"))
        slow = _slowed(fn, self._engine, self.slowdown)
        if by_answer is not None:
            call = _counted_by_answer(fn, slow, self._engine, self.slowdown, *by_answer)
        else:
            assert kind is not None  # returned above otherwise
            call = _counted(fn, slow, self._engine, self.slowdown, kind)
        self.__dict__[name] = call  # cached: __getattr__ runs once per method
        return call


# The wrappers are made by module-level functions, one closure each: mypyc (2.4) crashes on
# closures nested in a method that defines several of them.
Call = Callable[..., Any]


def _slowed(fn: Call, engine: Engine, slowdown: Slowdown) -> Call:
    async def slow(*args: Any, **kwargs: Any) -> Any:
        # The slow_database fault: the call takes extra virtual time first.
        await engine.sleep(slowdown.delay_ms)
        return await fn(*args, **kwargs)

    return slow


def _counted(fn: Call, slow: Call, engine: Engine, slowdown: Slowdown, kind: int) -> Call:
    def call(*args: Any, **kwargs: Any) -> Any:
        # Counted when issued, by the process issuing it; a plain function returning the
        # call's coroutine, so metering adds no coroutine of its own (it wraps millions of
        # calls a simulated day).
        proc = engine.current
        if proc is not None and proc.tally is not None:
            proc.tally[kind] += 1
        if slowdown.delay_ms and proc is not None:
            return slow(*args, **kwargs)
        return fn(*args, **kwargs)

    return call


def _reserve_cost(got: Reserved) -> int:
    """The deployed client-side loop's HINCRBYs (§6.2): +1 per probed window, -1 per full one."""
    return 2 * got.probed - (got.window_ms is not None)


def _eta_inputs_cost(got: EtaInputs) -> int:
    """The per-candidate reads the batch stands for: the latest snapshot of every aid, the
    lookbacks of every aid that has one (``SnapshotStore.eta_inputs``), settled aids included
    (each has a latest snapshot)."""
    return 2 * (len(got.latest_ms) + got.settled) - got.latest_ms.count(None)


CHARGED_BY_ANSWER: Final[dict[str, tuple[int, Callable[[Any], int]]]] = {
    "reserve": (REDIS, _reserve_cost),
    "eta_inputs": (READ, _eta_inputs_cost),
}
"""Port methods whose cost is known from their answer: kind and cost."""


def _counted_by_answer(
    fn: Call, slow: Call, engine: Engine, slowdown: Slowdown, kind: int, cost: Callable[[Any], int]
) -> Call:
    async def call(*args: Any, **kwargs: Any) -> Any:
        delayed = slowdown.delay_ms and engine.current is not None
        got = await (slow if delayed else fn)(*args, **kwargs)
        proc = engine.current
        if proc is not None and proc.tally is not None:
            proc.tally[kind] += cost(got)
        return got

    return call


def _timed(fn: Callable[..., Any], engine: Engine, method: int) -> Callable[..., Any]:
    emit = engine.log.emitter(PortCall)

    async def call(*args: Any, **kwargs: Any) -> Any:
        if engine.current is None:  # set-up (loading the catalogue) is not load
            return await fn(*args, **kwargs)
        t0 = wall_seconds()
        try:
            return await fn(*args, **kwargs)
        finally:
            emit(engine.now, method, round((wall_seconds() - t0) * 1e6))

    return call


@dataclass(frozen=True)
class Timing:
    """Load mode: log each job's wall time and lag (``JobTimed``); ``speed`` converts a
    periodic job's period into its wall budget."""

    emit: Callable[..., None]
    speed: float
    lag_ms: Callable[[Ms], Ms]
    """Virtual ms by which the wall clock is past a given virtual instant."""


def metered(
    engine: Engine,
    emit: Callable[..., None],
    name_idx: int,
    processor: Callable[[Job], Coroutine[Any, Any, Any]],
    *,
    timing: Timing | None = None,
    every_ms: Ms = 0,
) -> Callable[[Job], Coroutine[Any, Any, Any]]:
    """Wrap a job processor so that its port calls are tallied and logged when it ends (and,
    in load mode, its wall time and lag)."""

    async def run(job: Job) -> Any:
        proc = engine.current
        assert proc is not None
        tally = proc.tally = [0, 0, 0]
        if timing is not None:
            lag, t0 = timing.lag_ms(job.due_ms), wall_seconds()
        try:
            return await processor(job)
        finally:
            if timing is not None:
                budget = round(every_ms * 1000 / timing.speed) if every_ms else 0
                timing.emit(
                    engine.now, name_idx, job.id, lag, round((wall_seconds() - t0) * 1e6), budget
                )
            # Only a job that logged something (an announced iteration, or any plain job):
            # logging here must not turn an idle iteration into a busy one.
            if proc.lazy is None and any(tally):
                emit(engine.now, name_idx, job.id, *tally)

    return run
