"""The CVSA scheduler model: one composition of world, ports, profile and jobs on an engine.

The profile gives the switches and the design's numbers (:mod:`sim.cvsa.profile`,
:mod:`sim.cvsa.params`); the store and the counter are chosen by the caller (the runner's
composition root), never here; the upstream is the simulated bilibili of the model's own world.
The periodic jobs are registered in the deployed order (reference §1.3), which is also their
tie-break order when two are due at the same instant. All run on the ``snapshot`` queue
(concurrency 50, §1.2) as BullMQ job schedulers with no priority, so they are served before the
snapshot jobs they create (§1.4).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, cast

from sim.cvsa.params import Params
from sim.cvsa.profile import Switches, resolve
from sim.cvsa.retry import Backoff
from sim.engine import Engine, Job, JobScheduler, Queue
from sim.events.cvsa_kinds import JobTimed, QueryCounts
from sim.metrics import Reducer
from sim.metrics.cvsa import SnapshotMetrics, cvsa_reducers
from sim.metrics.invariants import LifecycleInvariants, cvsa_invariant_reducers, run_truth
from sim.ports import Counter, LockManager, Store, UpstreamApi, WindowCounter
from sim.rng import RandomStreams
from sim.scenario import Scenario
from sim.scheduler import cleanup, dispatch, feed, snapshot_ticks, workers
from sim.scheduler.context import Ctx, Emitters
from sim.scheduler.faults import Injector
from sim.scheduler.judges import cvsa_finding_reducers
from sim.scheduler.metering import Metered, Timing, metered
from sim.units import Ms
from sim.upstream import NetworkFaults, SimulatedUpstream
from sim.world import World

Processor = Callable[[Ctx, Job], Coroutine[Any, Any, None]]
IdleHint = Callable[[Ctx, Ms], Coroutine[Any, Any, Ms]]

Periodic = tuple[str, Ms, Processor, IdleHint | None]


def periodic_jobs(params: Params) -> list[Periodic]:
    """(BullMQ job-scheduler id, every, processor, idle hint), in the order of reference §1.3."""
    return [
        (
            "snapshotTick",
            params.snapshot_tick_every_ms,
            snapshot_ticks.snapshot_tick,
            snapshot_ticks.snapshot_tick_idle_until,
        ),
        (
            "bulkSnapshotTick",
            params.bulk_tick_every_ms,
            snapshot_ticks.bulk_snapshot_tick,
            snapshot_ticks.bulk_tick_idle_until,
        ),
        (
            "dispatchMilestoneSnapshots",
            params.milestone_dispatch_every_ms,
            dispatch.dispatch_milestone_snapshots,
            dispatch.milestone_idle_until,
        ),
        (
            "dispatchRegularSnapshots",
            params.regular_dispatch_every_ms,
            dispatch.dispatch_regular_snapshots,
            dispatch.regular_idle_until,
        ),
        (
            "dispatchArchiveSnapshots",
            params.archive_dispatch_every_ms,
            dispatch.dispatch_archive_snapshots,
            dispatch.archive_idle_until,
        ),
        (
            "scheduleCleanup",
            params.cleanup_every_ms,
            cleanup.schedule_cleanup,
            cleanup.cleanup_idle_until,
        ),
    ]


class Adapters(Protocol):
    """What the composition root hands the model: the adapters behind the ports."""

    @property
    def store(self) -> Store: ...

    @property
    def counter(self) -> Counter: ...


@dataclass
class Instance:
    """One scheduler deployment: its context (queue, processors) and its periodic jobs."""

    ctx: Ctx
    schedulers: list[JobScheduler]


class CvsaModel:
    """The scheduler, its world and its backends, registered on ``engine``."""

    def __init__(
        self,
        scenario: Scenario,
        engine: Engine,
        streams: RandomStreams,
        *,
        store: Store,
        counter: Counter,
        upstream: UpstreamApi | None = None,
        setup: Callable[[Ctx], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        self.scenario = scenario
        self.setup = setup
        self.switches: Switches = resolve(scenario.profile, scenario.switches.values())
        self.params: Params = scenario.params
        self.world = World.build(scenario, streams)
        self.network_faults = NetworkFaults()
        cfg = scenario.scheduler
        self.ctx = Ctx(
            engine=engine,
            store=store,
            counter=counter,
            locks=counter,  # the dispatcher locks share its Redis
            upstream=upstream
            or SimulatedUpstream(
                engine,
                scenario.upstream,
                streams.stream("upstream"),
                self.world.scalar.views,
                self.world.scalar.api_error,
                self.network_faults,
            ),
            switches=self.switches,
            params=self.params,
            streams=streams,
            queue=Queue(engine, "snapshot", cfg.snapshot_concurrency),
            emit=Emitters.bind(engine),
            timezone_ms=scenario.timezone,
            backoff=Backoff(
                max_retries=cfg.retry.max_retries,
                base_ms=cfg.retry.base,
                cap_ms=cfg.retry.cap,
                jitter=cfg.retry.jitter,
            ),
        )
        ctx = self.ctx
        # Count every port call per job (SQL-equivalent query counts, sim.scheduler.metering).
        # Load mode (a concurrent engine on the real clock) also times every call and job.
        timed = engine.concurrent
        store = Metered(ctx.store, engine, port="store", timed=timed)
        ctx.store, ctx.store_slowdown = cast(Store, store), store.slowdown
        ctx.locks = cast(LockManager, Metered(ctx.locks, engine, port="locks", timed=timed))
        ctx.counter = cast(WindowCounter, Metered(ctx.counter, engine, port="counter", timed=timed))
        self._emit_queries = engine.log.emitter(QueryCounts)
        self._timing = (
            Timing(
                engine.log.emitter(JobTimed),
                engine.clock.speed,
                engine.clock.lag_ms,
            )
            if timed
            else None
        )

    def _metered(
        self, name: str, processor: Callable[[Job], Coroutine[Any, Any, Any]], every_ms: Ms = 0
    ) -> Callable[[Job], Coroutine[Any, Any, Any]]:
        engine = self.ctx.engine
        return metered(
            engine,
            self._emit_queries,
            engine.log.name(name),
            processor,
            timing=self._timing,
            every_ms=every_ms,
        )

    async def prepare(self) -> None:
        """At the start instant: load the catalogue, build the window counts from pending rows
        (``initSnapshotWindowCounts`` runs before the job schedulers are registered, §6.3), then
        register the periodic jobs and start the background processes."""
        ctx = self.ctx
        await feed.load_catalog(ctx, self.world, self.scenario.scheduler.history)
        if self.setup is not None:  # tests: extra rows and snapshots before anything runs
            await self.setup(ctx)
        await cleanup.refresh_window_counts(ctx)
        if self.scenario.engine.warm_start:
            # The first dispatch of a cold catalogue writes a row for every video; done here, it
            # is set-up (untimed under `sim load`), and the run measures the steady state.
            for warm_up in (
                dispatch.dispatch_archive_snapshots,
                dispatch.dispatch_regular_snapshots,
                dispatch.dispatch_milestone_snapshots,
            ):
                await warm_up(ctx)
        self._wire(ctx, "")
        refresh = self.params.window_refresh_every_ms
        if refresh is not None:
            ctx.engine.spawn(_refresh_loop(ctx, refresh), name="windowRefresh")
        ctx.engine.spawn(
            feed.arrivals_process(ctx, self.world, self.scenario.end_ms), name="arrivals"
        )
        Injector(ctx, self.network_faults, self._start_instance, self._stop_instance).schedule(
            self.scenario.faults, self.scenario.start_ms
        )

    def _wire(self, ctx: Ctx, suffix: str) -> Instance:
        """Register one deployment's jobs on ``ctx.queue``: the snapshot workers and the
        periodic jobs, metered, named with ``suffix`` (a second deployment's are ``#2``)."""
        ctx.snapshot_video = self._metered(
            "snapshotVideo" + suffix, partial(workers.snapshot_video, ctx)
        )
        ctx.bulk_snapshot_video = self._metered(
            "bulkSnapshotVideo" + suffix, partial(workers.bulk_snapshot_video, ctx)
        )
        schedulers = [
            ctx.queue.every(
                name + suffix,
                every,
                self._metered(name + suffix, partial(processor, ctx), every),
                idle_until=None if hint is None else partial(hint, ctx),
            )
            for name, every, processor, hint in periodic_jobs(ctx.params)
        ]
        return Instance(ctx, schedulers)

    def _start_instance(self, suffix: str) -> Instance:
        """A second scheduler deployment on the same database, Redis hash and upstream."""
        ctx = self.ctx
        queue = Queue(ctx.engine, "snapshot" + suffix, self.scenario.scheduler.snapshot_concurrency)
        return self._wire(dataclasses.replace(ctx, queue=queue, eta_memo={}), suffix)

    def _stop_instance(self, instance: Instance) -> None:
        instance.ctx.queue.crash()
        for scheduler in instance.schedulers:
            instance.ctx.engine.remove_iteration(scheduler)

    def reducers(self) -> list[Reducer]:
        sc = self.scenario
        # The world's answers (crossings, songs, availability) are built once, for the invariant
        # monitors and the findings alike: the crossings bisect every video's curve.
        truth = run_truth(self.world, sc.start_ms, sc.end_ms, sc.scheduler.history)
        invariants = cvsa_invariant_reducers(self.switches, self.params, truth)
        lifecycle = next(r for r in invariants if isinstance(r, LifecycleInvariants))
        metrics = cvsa_reducers()
        snapshots = next(r for r in metrics if isinstance(r, SnapshotMetrics))
        return [
            *metrics,
            *invariants,
            *cvsa_finding_reducers(
                sc,
                self.ctx.params,
                self.world,
                {name: every for name, every, _, _ in periodic_jobs(self.ctx.params)},
                lifecycle,
                snapshots,
                invariants,
                truth,
            ),
        ]


async def _refresh_loop(ctx: Ctx, every_ms: Ms) -> None:
    while True:
        await ctx.engine.sleep(every_ms)
        await cleanup.refresh_window_counts(ctx)


def build_cvsa_model(
    scenario: Scenario, engine: Engine, streams: RandomStreams, adapters: Adapters
) -> CvsaModel:
    """The runner's model builder for the CVSA scheduler, on the adapters it chose."""
    return CvsaModel(scenario, engine, streams, store=adapters.store, counter=adapters.counter)
