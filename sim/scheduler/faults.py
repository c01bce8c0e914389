"""The fault injector: one process per ``[[faults]]`` entry (issue 6).

Each fault logs ``FaultStarted`` / ``FaultEnded`` (no report reads them yet) and changes the
world for its duration: the network (outage, throttling, latency), the Redis hash (loss), the
worker process (crash and restart), the database (query latency), the worker's clock (skew), or
adds a second scheduler deployment. What the scheduler then does about it is its own business:
nothing here touches a schedule row.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sim.events.cvsa_kinds import FAULT_KIND
from sim.events.engine_kinds import FaultEnded, FaultStarted, JobInterrupted
from sim.scenario.faults import (
    ClockSkew,
    CounterLoss,
    Fault,
    LatencySpike,
    RiskControlStorm,
    SchedulerRestart,
    SecondInstance,
    SlowDatabase,
    ThrottlingStorm,
    UpstreamOutage,
)
from sim.scheduler import cleanup
from sim.scheduler.context import Ctx
from sim.scheduler.metering import Metered
from sim.scheduler.table_runner import TableExecutor
from sim.units import Ms
from sim.upstream import NetworkFaults

StartInstance = Callable[[str], Any]
"""Starts a second scheduler deployment (its name suffix) and returns a handle to stop it."""
StopInstance = Callable[[Any], Awaitable[None]]


class Injector:
    """Runs the scenario's faults against one model."""

    def __init__(
        self,
        ctx: Ctx,
        network: NetworkFaults,
        start_instance: StartInstance,
        stop_instance: StopInstance,
        executor: TableExecutor | None = None,
    ) -> None:
        self.ctx = ctx
        self.executor = executor
        """The first deployment's job-table executor (``[periodic] policy = "table"``)."""
        self.network = network
        self.start_instance = start_instance
        self.stop_instance = stop_instance
        log = ctx.engine.log
        self._started = log.emitter(FaultStarted)
        self._ended = log.emitter(FaultEnded)
        self._interrupted = log.emitter(JobInterrupted)

    def schedule(self, faults: list[Fault], start_ms: Ms) -> None:
        for i, fault in enumerate(faults):
            self.ctx.engine.spawn(self._run(i, fault, start_ms), name=f"fault{i}")

    async def _run(self, i: int, fault: Fault, start_ms: Ms) -> None:
        eng = self.ctx.engine
        code = FAULT_KIND.code(fault.kind)
        at = start_ms + (
            fault.at if isinstance(fault, CounterLoss | SchedulerRestart) else fault.start
        )
        await eng.sleep_until(at)
        self._started(eng.now, i, code)
        await self._apply(fault)
        self._ended(eng.now, i, code)

    async def _apply(self, fault: Fault) -> None:
        eng, net = self.ctx.engine, self.network
        if isinstance(fault, UpstreamOutage):
            net.outage = fault.error
            await eng.sleep(fault.duration)
            net.outage = None
        elif isinstance(fault, ThrottlingStorm):
            net.limit_scale = fault.factor
            await eng.sleep(fault.duration)
            net.limit_scale = 1.0
        elif isinstance(fault, RiskControlStorm):
            net.risk_scale = fault.factor
            await eng.sleep(fault.duration)
            net.risk_scale = 1.0
        elif isinstance(fault, LatencySpike):
            net.latency_factor = fault.factor
            await eng.sleep(fault.duration)
            net.latency_factor = 1.0
        elif isinstance(fault, CounterLoss):
            await self._lose_counts(fault)
        elif isinstance(fault, SchedulerRestart):
            await self._restart(fault)
        elif isinstance(fault, SlowDatabase):
            await self._slow(fault.query_latency, fault.duration)
        elif isinstance(fault, ClockSkew):
            self.ctx.skew_ms = fault.skew
            await eng.sleep(fault.duration)
            self.ctx.skew_ms = 0
        elif isinstance(fault, SecondInstance):
            await eng.sleep(fault.phase)  # its timers run this far behind the first's
            other = self.start_instance("#2")
            await self._slow(fault.query_latency, fault.duration)
            await self.stop_instance(other)

    async def _lose_counts(self, fault: CounterLoss) -> None:
        """The hash is emptied; the pending rows are not (§6.3: only a rebuild restores it)."""
        await self.ctx.counter.clear()
        if fault.rebuild_after is not None:
            await self.ctx.engine.sleep(fault.rebuild_after)
            await cleanup.refresh_window_counts(self.ctx)

    async def _restart(self, fault: SchedulerRestart) -> None:
        ctx = self.ctx
        lost = ctx.queue.crash()
        if ctx.writes is not None:  # the writer's buffer dies with the process (seed 003 §5.1)
            ctx.writes.crash()
        # BullMQ's job schedulers live in Redis and survive; a table executor dies with its
        # process, and its lock with its connection (seed 001).
        if self.executor is not None:
            await self.executor.crash()
        await ctx.engine.sleep(fault.downtime)
        ctx.queue.resume()
        if self.executor is not None:
            self.executor.start()
        # The new process marks what the old one left running as interrupted (seed 001 中断恢复);
        # the rows those jobs held stay processing until cleanup deletes them (§12).
        for job in lost:
            name = job.name_idx if job.scheduler is None else job.scheduler.name_idx
            self._interrupted(ctx.now, ctx.queue.name_idx, job.id, name, job.due_ms)

    async def _slow(self, latency_ms: Ms, duration_ms: Ms) -> None:
        """Every database query of every job takes ``latency_ms`` longer. Elision is off meanwhile:
        an idle tick now takes time, which elision assumes it does not."""
        eng = self.ctx.engine
        store = self.ctx.store
        metered = store if isinstance(store, Metered) else None
        saved = eng.elide
        if metered is not None and latency_ms:
            metered.slowdown.delay_ms = latency_ms
            eng.elide = False
        await eng.sleep(duration_ms)
        if metered is not None:
            metered.slowdown.delay_ms = 0
        eng.elide = saved
