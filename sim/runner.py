"""The composition root: scenario -> backends -> engine -> model -> run -> manifest.

This is the one place where the pieces are chosen and wired (style-anchors R4): the clock
(virtual, or scaled real time for ``--speed``) and the engine that runs on it, the backends behind
the ports, the event-log sinks (fingerprint, reducers, optional saved log); the model is built
by the builder the caller hands in (``sim.scheduler.build_cvsa_model`` from the CLI and
``sim.api``). Rules and engine never choose.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import platform
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import trio

from sim import __version__, _native
from sim.backends import (
    BackendError,
    Backends,
    BackendSpec,
    make_backends,
    open_backends,
    redact,
)
from sim.clock import Clock, ScaledRealClock, VirtualClock, wall_seconds
from sim.determinism import deterministic_trio
from sim.engine import ConcurrentEngine, Engine, RealClockEngine, VirtualEngine
from sim.engine.interrupts import Interrupted, Interrupts, handled
from sim.events import EventLog, FileSink, Sink
from sim.metrics import Reducer, ReducerSink, engine_reducers
from sim.metrics.remote import Finish, ProcessReducerSink, merged_result
from sim.report import SeriesSet, write_report
from sim.report.build import series_tables
from sim.report.milestone_tracking import GroundTruth
from sim.report.run_files import EVENTS_FILE, write_run_files
from sim.report.tables import Table
from sim.rng import RandomStreams
from sim.scenario import Scenario, scenario_sha256
from sim.units import SECOND_MS, Ms, format_instant_ms
from sim.world import World


class Model(Protocol):
    """What a model needs to offer the runner (the CVSA scheduler is the main one)."""

    async def prepare(self) -> None:
        """At the start instant, inside the run: load initial state, register periodic jobs."""

    def reducers(self) -> list[Reducer]:
        """Model-specific metrics, on top of the engine's."""


ModelBuilder = Callable[[Scenario, Engine, RandomStreams, Backends], Model]
"""Registers queues, periodic jobs and processes on a fresh engine, on the given backends
(not yet connected); returns the model."""


@dataclass
class RunResult:
    """What a run produced."""

    manifest: dict[str, Any]
    metrics: dict[str, Any]
    out_dir: Path | None
    partial: bool
    engine: Engine = field(repr=False)
    files: list[Path] = field(default_factory=list)
    """The report files written besides the manifest and the summary (CSV, PNG, HTML)."""
    signum: int | None = None
    """The signal that stopped the run (then ``partial``), or that came while the report was
    written, which was finished first: either way the command ends as interrupted."""


def _manifest(
    scenario: Scenario,
    engine: Engine,
    log: EventLog,
    wall_s: float,
    speed: float | None,
    spec: BackendSpec,
) -> dict[str, Any]:
    simulated_s = (engine.now - scenario.start_ms) / SECOND_MS
    return {
        "backends": {
            "store": redact(spec.store),
            "counter": redact(spec.counter),
            "reservation": spec.reservation,
        },
        "event_log_sha256": log.fingerprint,
        "events": log.events,
        "seed": scenario.seed,
        "scenario": scenario.name,
        "scenario_sha256": scenario_sha256(scenario),
        "profile": scenario.profile,
        "sim_version": __version__,
        "start": format_instant_ms(scenario.start_ms, scenario.timezone),
        "end": format_instant_ms(engine.now, scenario.timezone),
        "simulated_seconds": simulated_s,
        "wall_seconds": round(wall_s, 3),
        "compression_ratio": round(simulated_s / wall_s, 1) if wall_s > 0 else None,
        "partial": engine.partial,
        "clock": "virtual" if speed is None else f"real x{speed:g}",
        "concurrent": engine.concurrent,
        "elide_idle_ticks": engine.elide,
        "compiled": _native.compiled(),  # mypyc-compiled rules (sim/_native.py): speed only
        "engine_entries": engine.processed,
        "versions": {
            "python": platform.python_version(),
            "trio": trio.__version__,
            "numpy": np.__version__,
        },
    }


def spec_of(scenario: Scenario) -> BackendSpec:
    """The backends a scenario's ``[backends]`` table asks for."""
    b = scenario.backends
    return BackendSpec(
        store=b.store,
        counter=b.counter,
        schema=b.schema_name,
        key_prefix=b.key_prefix,
        reservation=b.reservation,
    )


@dataclass(frozen=True)
class RunOptions:
    """How to run a scenario: where the files go, which clock and backends, what to watch.

    The default is a run on the virtual clock, on the scenario's ``[backends]``, that writes
    nothing: the manifest and the metrics come back in the :class:`RunResult`."""

    out_dir: Path | None = None
    """Where ``manifest.json``, ``summary.json`` and ``scenario.json`` go (None: nowhere)."""
    save_events: bool = False
    """Also save the event log there (``events.simlog``)."""
    report: bool = False
    """Also write the report there: the CSV time series and, with ``plots``, the PNG plots and
    ``report.html`` (:mod:`sim.report`)."""
    plots: bool = True
    """With ``report``: draw the plots and the page (False: the CSV files only)."""
    speed: float | None = None
    """None: the virtual clock; K: the real clock, K times faster than production."""
    backends: BackendSpec | None = None
    """The backends (None: the scenario's ``[backends]``)."""
    concurrent: bool = False
    """Run jobs concurrently, as the deployed workers do (``sim load``; no tick elision)."""
    observer: Callable[[int], None] | None = None
    """Called with virtual time every few thousand events (a progress display)."""
    handle_signals: bool = False
    """Ctrl-C and SIGTERM stop the run cleanly (:mod:`sim.engine.interrupts`): during set-up at
    once (:class:`~sim.engine.interrupts.Interrupted`); while running after the current event,
    the log closed and the manifest and the report saying partial (a second one cancels
    outstanding I/O); while the report is written, after the report."""
    on_stage: Callable[[str], None] | None = None
    """Told what the run is doing as it moves on (drawing the world, loading the initial
    state, running, collecting the metrics, writing the report): a progress display."""
    extra_sinks: Sequence[Sink] = ()
    """More sinks of the event log (tests, benchmarks)."""


def run_scenario(
    scenario: Scenario, build_model: ModelBuilder, options: RunOptions | None = None
) -> RunResult:
    """Run ``scenario`` with ``build_model`` as ``options`` say (:class:`RunOptions`; by default
    on the virtual clock, writing nothing) and return the manifest and the metrics."""
    opts = options or RunOptions()
    interrupts = Interrupts(_say)
    if not opts.handle_signals:
        return _run(scenario, build_model, opts, None)
    with handled(interrupts):
        result = _run(scenario, build_model, opts, interrupts)
    result.signum = interrupts.signum
    return result


def _run(
    scenario: Scenario,
    build_model: ModelBuilder,
    opts: RunOptions,
    interrupts: Interrupts | None,
) -> RunResult:
    out_dir, speed = opts.out_dir, opts.speed
    stage = opts.on_stage or _nothing
    clock: Clock = (
        VirtualClock(scenario.start_ms)
        if speed is None
        else ScaledRealClock(scenario.start_ms, speed)
    )
    streams = RandomStreams(scenario.seed)
    # Started first: the reducer process imports while the world is built.
    reduction = _Reduction(scenario, opts.report and out_dir is not None)
    try:
        stage("drawing the world")
        sinks: list[Sink] = [*opts.extra_sinks]
        saved = (
            FileSink(out_dir / EVENTS_FILE) if out_dir is not None and opts.save_events else None
        )
        if saved is not None:
            sinks.append(saved)
        log = EventLog(sinks)
        # The one place an engine is chosen: the virtual clock, a scaled real one, or the real
        # clock with one trio task per process (`sim load`; elision is off there).
        kind = (
            ConcurrentEngine
            if opts.concurrent
            else VirtualEngine
            if speed is None
            else RealClockEngine
        )
        engine = kind(
            clock=clock, log=log, seed=scenario.seed, elide=scenario.engine.elide_idle_ticks
        )
        engine.observer = opts.observer
        spec = opts.backends or spec_of(scenario)
        chosen = make_backends(
            spec, real_clock=speed is not None, snapshot_reach_ms=scenario.snapshot_reach_ms
        )
        model = build_model(scenario, engine, streams, chosen)
        if interrupts is not None:  # a signal during the world's drawing whose exception was lost
            interrupts.raise_pending()
        reduction.metrics.extend(model.reducers())
        if reduction.series is not None:
            reduction.series.append(_series_set(model, scenario))
        log.sinks[:0] = reduction.sinks()
        log.open()
    except BaseException:
        reduction.terminate()
        raise

    started = wall_seconds()
    try:
        with deterministic_trio(scenario.seed):
            try:
                trio.run(_main, engine, model, chosen, scenario.end_ms, interrupts, stage)
            except BaseExceptionGroup as group:  # trio's nurseries wrap errors in groups
                backend = group.subgroup(BackendError)
                if backend is not None:  # an environment problem: one clear line upstream
                    raise _first_leaf(backend) from None
                stopped = group.subgroup(Interrupted)
                if stopped is not None:
                    raise _first_leaf(stopped) from None
                raise
        if interrupts is not None:
            interrupts.raise_pending()
            interrupts.closing()
        # The log is closed. Nothing below needs the model: it is let go before the results
        # are waited for (a reducer process computes them now) and before the report is drawn
        # (matplotlib), so that neither adds to the model's memory (most of what a full-scale
        # run's process holds at its end). Its objects form cycles, hence the collection.
        del model, chosen
        stage("collecting the metrics")
        gc.collect()
        metrics, tables = reduction.results()
    finally:
        reduction.terminate()  # the results are in, or nobody will read them
    wall = wall_seconds() - started  # until the results are known, as the user waits
    manifest = _manifest(scenario, engine, log, wall, speed, spec)
    manifest["reducers"] = reduction.describe()
    if saved is not None and saved.error is not None:  # the run went on; the saved log did not
        manifest["events_file_error"] = (
            f"{saved.error.strerror or saved.error}: {EVENTS_FILE} ends at its last complete chunk"
        )
    if out_dir is not None:
        write_run_files(out_dir, manifest, metrics, scenario)
    files: list[Path] = []
    if tables is not None and out_dir is not None:
        stage("writing the report")
        files = write_report(out_dir, tables, scenario, manifest, metrics, plots=opts.plots)
    return RunResult(manifest, metrics, out_dir, engine.partial, engine, files)


def run_in_processes(
    runs: Sequence[tuple[Scenario, RunOptions]],
    build_model: ModelBuilder,
    *,
    jobs: int,
    on_done: Callable[[int], None] | None = None,
) -> None:
    """Run each scenario with its options, each in a process of its own, ``jobs`` at a time (the
    points of a sweep). A run's results are its files (``options.out_dir``), which the caller
    reads; ``on_done(i)`` is called as run ``i`` finishes, in the order they finish. Scenario,
    options and ``build_model`` go to the child by pickling: the options hold no observer and no
    sinks, and ``build_model`` is a module-level function. A failed run raises here, once the
    runs already under way have finished."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context("spawn")  # no fork of a process holding threads
    workers = max(1, min(jobs, len(runs)))
    with _sigterm_as_interrupt(), ProcessPoolExecutor(workers, mp_context=context) as pool:
        try:
            futures = {
                pool.submit(_run_in_child, scenario, build_model, options): i
                for i, (scenario, options) in enumerate(runs)
            }
            for future in as_completed(futures):
                future.result()
                if on_done is not None:
                    on_done(futures[future])
        except BaseException:
            # Ctrl-C reaches the workers from the terminal, SIGTERM only this process: either
            # way the runs under way are abandoned (each finished run's files are complete).
            pool.shutdown(wait=False, cancel_futures=True)
            for child in multiprocessing.active_children():
                child.terminate()
            raise


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While the points of a sweep run in other processes: SIGTERM interrupts as Ctrl-C does
    (:class:`~sim.engine.interrupts.Interrupted`), so that the workers are stopped too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigterm(signum: int, frame: object) -> None:
        raise Interrupted(signum, "running")

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_in_child(scenario: Scenario, build_model: ModelBuilder, options: RunOptions) -> None:
    run_scenario(scenario, build_model, options)  # its files are the result (not the engine)


def run_on_dask(
    runs: Sequence[tuple[Scenario, RunOptions]],
    build_model: ModelBuilder,
    *,
    address: str,
    on_done: Callable[[int], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> None:
    """:func:`run_in_processes` on an existing Dask distributed cluster (``address``, e.g.
    ``tcp://10.0.0.5:8786``). The client sends each scenario and its options; a worker runs it
    into a directory of its own and sends back the files (the event log only when
    ``save_events`` asks for it), which are written to ``options.out_dir`` here, so a point's
    files are the same as a local run's, bit for bit but for the wall times. A worker that dies
    loses its point, which the cluster runs again elsewhere; a point that kills workers again and
    again raises here (``distributed.KilledWorker``), never silently dropped. ``on_start`` is
    told how many points the cluster runs at once (its worker threads)."""
    from distributed import Client, as_completed

    # distributed's Client and as_completed carry no annotations.
    with Client(address, timeout="10s") as client:  # type: ignore[no-untyped-call]
        if on_start is not None:
            on_start(sum(client.nthreads().values()))
        futures = {
            client.submit(_run_packed, scenario, build_model, options, pure=False): i
            for i, (scenario, options) in enumerate(runs)
        }
        for future in as_completed(futures):  # type: ignore[no-untyped-call]
            i = futures[future]
            out = runs[i][1].out_dir
            assert out is not None
            for rel, data in future.result().items():
                path = out / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            if on_done is not None:
                on_done(i)


def _run_packed(
    scenario: Scenario, build_model: ModelBuilder, options: RunOptions
) -> dict[str, bytes]:
    """On a Dask worker: run into a temporary directory and return its files by relative path.

    A worker process is not a plain one, and three of its differences cost a run time, each
    undone for the run only:

    * the nanny's ``MALLOC_TRIM_THRESHOLD_`` (:func:`_undo_nanny_malloc_trim`);
    * the worker's event loop (heartbeats, memory checks) wants the GIL beside the run: on cores
      the points and their reducer processes already fill, every forced hand-over (each 5 ms by
      default) can leave the run waiting until the loop's thread is scheduled again; a 50 ms
      switch interval keeps the loop answering well within Dask's timeouts;
    * the worker's own objects (distributed, tornado, their caches) would be traversed by every
      full collection the run's allocations trigger; ``gc.freeze`` sets them aside.

    What they gain: docs/performance.md, "A point on a Dask worker" (bench/dask_overhead.py)."""
    import tempfile

    _undo_nanny_malloc_trim()
    switch_s = sys.getswitchinterval()
    sys.setswitchinterval(0.05)
    gc.freeze()
    try:
        with tempfile.TemporaryDirectory(prefix="sim-point-") as tmp:
            root = Path(tmp)
            run_scenario(scenario, build_model, dataclasses.replace(options, out_dir=root))
            return {
                p.relative_to(root).as_posix(): p.read_bytes()
                for p in sorted(root.rglob("*"))
                if p.is_file()
            }
    finally:
        gc.unfreeze()
        sys.setswitchinterval(switch_s)


def _undo_nanny_malloc_trim() -> None:
    """Give a Dask worker's run glibc's own allocator settings back.

    A Dask nanny starts its worker with ``MALLOC_TRIM_THRESHOLD_=65536``
    (``distributed.nanny.pre-spawn-environ``), so that workers hand memory back to the system.
    Setting it also freezes glibc's mmap threshold at 128 KiB: every numpy temporary above that
    is mapped and unmapped again, page faults included. Here the worker's own heap gets glibc's
    dynamic ceilings back (``mallopt``: mmap threshold 32 MiB, trim threshold 64 MiB), and the
    processes the run starts (the metric reducers) an environment without the variable. A
    process the nanny did not start is left alone."""
    if os.environ.pop("MALLOC_TRIM_THRESHOLD_", None) is None:
        return
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        mallopt = getattr(libc, "mallopt", None)
    except OSError:
        mallopt = None
    if mallopt is None:  # not glibc: the variable meant nothing
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # <malloc.h>
    mallopt(m_mmap_threshold, 32 * 2**20)
    mallopt(m_trim_threshold, 64 * 2**20)


async def _main(
    engine: Engine,
    model: Model,
    chosen: Backends,
    end_ms: Ms,
    interrupts: Interrupts | None,
    stage: Callable[[str], None],
) -> None:
    async with open_backends(chosen), trio.open_nursery() as nursery:
        if interrupts is not None:
            token, scope = trio.lowlevel.current_trio_token(), nursery.cancel_scope
            interrupts.entered(engine.stop, lambda: token.run_sync_soon(scope.cancel))

        async def prepare() -> None:
            stage("loading the initial state")
            await model.prepare()
            if interrupts is not None:
                interrupts.running()
            stage("running")

        await engine.run(end_ms, before=prepare)
        nursery.cancel_scope.cancel()


class _Reduction:
    """Where the run's reducers run (``[engine] reducers``): inline sinks of the log, or one
    child process for all of them (:class:`sim.metrics.remote.ProcessReducerSink`). Either
    way each group (the metrics; the report's series) ends in the same ``finish`` function,
    so the metrics and tables are the same, bit for bit."""

    def __init__(self, scenario: Scenario, with_series: bool) -> None:
        self.metrics: list[Reducer] = engine_reducers()
        self.series: list[Reducer] | None = [] if with_series else None
        self.remote = ProcessReducerSink() if _in_process(scenario) else None
        self._inline: list[tuple[ReducerSink, Finish]] = []

    def sinks(self) -> list[Sink]:
        """The log's reducer sinks (called once the model has added its reducers)."""
        groups: list[tuple[list[Reducer], Finish]] = [(self.metrics, merged_result)]
        if self.series is not None:
            groups.append((self.series, series_tables))
        if self.remote is not None:
            for reducers, finish in groups:
                self.remote.add(reducers, finish)
            # The child computes them: the remote sink alone holds them until it sends them.
            self.metrics, self.series = [], None
            return [self.remote]
        self._inline = [(ReducerSink(reducers), finish) for reducers, finish in groups]
        return [sink for sink, _ in self._inline]

    def results(self) -> tuple[dict[str, Any], dict[str, Table] | None]:
        """The metrics, and the report's tables (None without a report)."""
        if self.remote is not None:
            outcomes = self.remote.outcomes
        else:
            outcomes = [finish(sink.reducers) for sink, finish in self._inline]
        return outcomes[0], (outcomes[1] if len(outcomes) > 1 else None)

    def describe(self) -> dict[str, Any]:
        """For the manifest: where the reducers ran and, in a child, its peak memory."""
        if self.remote is None:
            return {"where": "inline"}
        return {"where": "process", "peak_mb": round(self.remote.child_peak_kb / 1024, 1)}

    def terminate(self) -> None:
        if self.remote is not None:
            self.remote.terminate()


def _in_process(scenario: Scenario) -> bool:
    choice = scenario.engine.reducers
    if choice != "auto":
        return choice == "process"
    videos = scenario.catalog.songs + scenario.catalog.non_songs
    return (os.cpu_count() or 1) >= 2 and videos >= 100_000


def _series_set(model: Model, scenario: Scenario) -> Reducer:
    return SeriesSet(
        scenario.timezone,
        _ground_truth(model, scenario),
        scenario.periodic.periods_ms(scenario.params),
    )


def _ground_truth(model: Model, scenario: Scenario) -> GroundTruth:
    """The milestone crossings of the model's world over the run (none for a model without one)."""
    world = getattr(model, "world", None)
    if isinstance(world, World):
        return GroundTruth.of(world, scenario.start_ms, scenario.end_ms)
    return GroundTruth.none()


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _nothing(text: str) -> None:
    pass
