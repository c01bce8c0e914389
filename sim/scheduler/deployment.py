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

from sim.cvsa.delivery import retry_transitions
from sim.cvsa.job_table import SNAPSHOT_QUEUE, WORKER_JOBS, JobSpec, periodic_periods_ms, zone
from sim.cvsa.params import Params
from sim.cvsa.profile import Switches, resolve
from sim.cvsa.retry import Backoff
from sim.engine import Engine, IterationLog, Job, JobScheduler, Queue
from sim.events.cvsa_kinds import JobTimed, QueryCounts
from sim.metrics import Reducer
from sim.metrics.cvsa import SnapshotMetrics, cvsa_reducers
from sim.metrics.invariants import LifecycleInvariants, cvsa_invariant_reducers, run_truth
from sim.ports import (
    Counter,
    JobTable,
    LockManager,
    MessageMarks,
    Store,
    UpstreamApi,
    WindowCounter,
)
from sim.rng import RandomStreams
from sim.scenario import Scenario
from sim.scheduler import cleanup, dispatch, feed, snapshot_ticks, workers
from sim.scheduler.consumer import consumer
from sim.scheduler.context import Ctx, Emitters
from sim.scheduler.faults import Injector
from sim.scheduler.judges import cvsa_finding_reducers
from sim.scheduler.metering import Metered, Timing, metered
from sim.scheduler.table_runner import TableExecutor, table_params
from sim.scheduler.traffic_modes import TrafficModes
from sim.scheduler.write_buffer import WriteBuffer
from sim.units import Ms
from sim.upstream import NetworkFaults, SimulatedUpstream
from sim.world import World

Processor = Callable[[Ctx, Job], Coroutine[Any, Any, None]]
IdleHint = Callable[[Ctx, Ms], Coroutine[Any, Any, Ms]]

Periodic = tuple[str, Ms, Processor, IdleHint | None]
Processor_ = Callable[[Job], Coroutine[Any, Any, Any]]
"""A job processor as the queue runs it."""


PROCESSORS: dict[str, tuple[Processor, IdleHint | None]] = {
    "snapshotTick": (snapshot_ticks.snapshot_tick, snapshot_ticks.snapshot_tick_idle_until),
    "bulkSnapshotTick": (snapshot_ticks.bulk_snapshot_tick, snapshot_ticks.bulk_tick_idle_until),
    "dispatchMilestoneSnapshots": (
        dispatch.dispatch_milestone_snapshots,
        dispatch.milestone_idle_until,
    ),
    "dispatchRegularSnapshots": (dispatch.dispatch_regular_snapshots, dispatch.regular_idle_until),
    "dispatchArchiveSnapshots": (dispatch.dispatch_archive_snapshots, dispatch.archive_idle_until),
    "scheduleCleanup": (cleanup.schedule_cleanup, cleanup.cleanup_idle_until),
}
"""What each periodic job runs, and the hint that proves its iterations idle (tick elision)."""


def periodic_jobs(params: Params) -> list[Periodic]:
    """(BullMQ job-scheduler id, every, processor, idle hint), in the order of reference §1.3."""
    return [(name, every, *PROCESSORS[name]) for name, every in periodic_periods_ms(params).items()]


class Adapters(Protocol):
    """What the composition root hands the model: the adapters behind the ports."""

    @property
    def store(self) -> Store: ...

    @property
    def counter(self) -> Counter: ...

    @property
    def job_table(self) -> JobTable: ...

    @property
    def message_marks(self) -> MessageMarks: ...


@dataclass
class Instance:
    """One scheduler deployment: its context (queue, processors) and its periodic jobs: BullMQ
    job schedulers, or the executor of the job table (``[periodic] policy``)."""

    ctx: Ctx
    schedulers: list[JobScheduler]
    executor: TableExecutor | None = None


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
        jobs: JobTable | None = None,
        marks: MessageMarks | None = None,
    ) -> None:
        self.scenario = scenario
        self.marks = marks
        """Seed 004's message markers (``[delivery] dedupe``), on the counter's Redis."""
        self.setup = setup
        self.switches: Switches = resolve(scenario.profile, scenario.switches.values())
        self.params: Params = scenario.params
        self.world = World.build(scenario, streams)
        self.network_faults = NetworkFaults()
        self._eta_readers = 1
        """Readers of settled ETA inputs handed out: the first deployment's and one per
        instance started since (``Ctx.eta_reader``)."""
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
                streams=streams,
            ),
            switches=self.switches,
            params=self.params,
            streams=streams,
            queue=Queue(engine, SNAPSHOT_QUEUE, cfg.snapshot_concurrency),
            emit=Emitters.bind(engine),
            timezone_ms=scenario.timezone,
            backoff=Backoff(
                max_retries=cfg.retry.max_retries,
                base_ms=cfg.retry.base,
                cap_ms=cfg.retry.cap,
                jitter=cfg.retry.jitter,
                by_class=cfg.retry.by_class,
                rate_limited_base_ms=cfg.retry.rate_limited_base,
                retry_after_cap_ms=cfg.retry.retry_after_cap,
            ),
        )
        ctx = self.ctx
        self._deliver(ctx)
        # Count every port call per job (SQL-equivalent query counts, sim.scheduler.metering).
        # Load mode (a concurrent engine on the real clock) also times every call and job.
        timed = engine.concurrent
        raw_store = ctx.store
        store = Metered(ctx.store, engine, port="store", timed=timed)
        ctx.store, ctx.store_slowdown = cast(Store, store), store.slowdown
        ctx.locks = cast(LockManager, Metered(ctx.locks, engine, port="locks", timed=timed))
        ctx.counter = cast(WindowCounter, Metered(ctx.counter, engine, port="counter", timed=timed))
        if scenario.modes.enabled:  # seed 003 §5.1: peak and degraded modes
            ctx.modes = TrafficModes(engine, scenario.modes.params(), scenario.timezone)
        if scenario.write_path.enabled:  # seed 003 §5.1: buffered writes, a finite database
            ctx.writes = WriteBuffer(
                engine,
                raw_store,
                scenario.write_path.params(),
                store.slowdown,
                ctx.emit.taken,
                None if ctx.modes is None else ctx.modes.on_backlog,
            )
        # Seed 001's tables live in the store's database: a slow database slows them too.
        self.jobs: JobTable | None = None
        self.executors: list[TableExecutor] = []
        self.iteration_logs: dict[str, IterationLog] = {}
        self.specs: list[JobSpec] = []
        if scenario.periodic.policy == "table":
            if jobs is None:
                raise ValueError('[periodic] policy = "table" needs a job table (jobs=)')
            table = Metered(jobs, engine, port="jobs", timed=timed)
            table.slowdown = store.slowdown
            self.jobs = cast(JobTable, table)
            self.specs = scenario.periodic.specs(self.params)
            self.iteration_logs = {
                spec.name: IterationLog(engine, spec.name) for spec in self.specs
            }
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

    def _deliver(self, ctx: Ctx) -> None:
        """``[delivery]`` on a deployment's snapshot queue: the stalled check, redelivery of
        failed jobs (whose rows are then finished again: the lifecycle allows it)."""
        delivery = self.scenario.delivery
        stall = delivery.stall_params()
        if stall is not None:
            ctx.queue.check_stalled(stall)
        if delivery.consumer_retry:
            ctx.queue.retry_failed(delivery.retry_delay)
            ctx.transitions = retry_transitions(ctx.transitions)

    def _consumer(self, ctx: Ctx, processor: Processor_) -> Processor_:
        """A snapshot processor behind seed 004's consumer when ``[delivery]`` asks for it."""
        delivery = self.scenario.delivery
        if not delivery.consumer_on:
            return processor
        if self.marks is None:
            raise ValueError("[delivery] consumer_retry or dedupe needs message marks (marks=)")
        return consumer(
            ctx,
            processor,
            self.marks,
            delivery.delivery_params(),
            retry=delivery.consumer_retry,
            dedupe=delivery.dedupe,
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
        self.first = self._wire(ctx, "")
        refresh = self.params.window_refresh_every_ms
        if refresh is not None:
            ctx.engine.spawn(_refresh_loop(ctx, refresh), name="windowRefresh")
        ctx.engine.spawn(
            feed.arrivals_process(ctx, self.world, self.scenario.end_ms), name="arrivals"
        )
        if self.scenario.periodic.actions:
            ctx.engine.spawn(self._operator(), name="operator")
        if ctx.modes is not None:
            ctx.engine.spawn(ctx.modes.follow_schedule(), name="trafficModes")
        Injector(
            ctx,
            self.network_faults,
            self._start_instance,
            self._stop_instance,
            self.first.executor,
        ).schedule(self.scenario.faults, self.scenario.start_ms)

    def _wire(self, ctx: Ctx, suffix: str) -> Instance:
        """Register one deployment's jobs on ``ctx.queue``: the snapshot workers and the
        periodic jobs, metered, named with ``suffix`` (a second deployment's are ``#2``)."""
        ctx.snapshot_video = self._consumer(
            ctx, self._metered(WORKER_JOBS[0] + suffix, partial(workers.snapshot_video, ctx))
        )
        ctx.bulk_snapshot_video = self._consumer(
            ctx,
            self._metered(WORKER_JOBS[1] + suffix, partial(workers.bulk_snapshot_video, ctx)),
        )
        if self.jobs is not None:
            return Instance(ctx, [], self._table_executor(ctx, suffix))
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

    def _table_executor(self, ctx: Ctx, suffix: str) -> TableExecutor:
        """Seed 001's executor for one deployment. Its runs are the table's jobs, whichever
        deployment runs them: named without the suffix."""
        assert self.jobs is not None
        periodic = self.scenario.periodic
        executor = TableExecutor(
            ctx.engine,
            self.jobs,
            "scheduler" + suffix,
            self.specs,
            {
                name: self._metered(name, partial(processor, ctx), every)
                for name, every, processor, _ in periodic_jobs(ctx.params)
            },
            self.iteration_logs,
            table_params(periodic),
            zone(periodic.timezone if periodic.timezone is not None else ctx.timezone_ms),
        )
        self.executors.append(executor)
        executor.start()
        return executor

    async def _operator(self) -> None:
        """``[[periodic.actions]]``: an operator's requests, written through any deployment
        (the table is shared); the holder of the lock picks them up at once."""
        eng = self.ctx.engine
        first = self.executors[0]
        for action in sorted(self.scenario.periodic.actions, key=lambda a: a.at):
            await eng.sleep_until(self.scenario.start_ms + action.at)
            if action.action == "run":
                await first.request(action.job)
            else:
                await first.skip(action.job)
            for executor in self.executors:
                executor.wake(eng.now)

    def _start_instance(self, suffix: str) -> Instance:
        """A second scheduler deployment on the same database, Redis hash and upstream."""
        ctx = self.ctx
        queue = Queue(
            ctx.engine, SNAPSHOT_QUEUE + suffix, self.scenario.scheduler.snapshot_concurrency
        )
        self._eta_readers += 1
        other = dataclasses.replace(ctx, queue=queue, eta_memo={}, eta_reader=self._eta_readers)
        self._deliver(other)
        return self._wire(other, suffix)

    async def _stop_instance(self, instance: Instance) -> None:
        instance.ctx.queue.crash()
        for scheduler in instance.schedulers:
            instance.ctx.engine.remove_iteration(scheduler)
        if instance.executor is not None:
            await instance.executor.crash()

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
                sc.periodic.periods_ms(self.ctx.params),
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
    return CvsaModel(
        scenario,
        engine,
        streams,
        store=adapters.store,
        counter=adapters.counter,
        jobs=adapters.job_table,
        marks=adapters.message_marks,
    )
