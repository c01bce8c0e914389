"""What every scheduler job is handed: the ports, the switches, the random streams, the emitters.

The scheduler's jobs (``sim/scheduler/*``) are the engine-facing half of the CVSA model: they read
``now`` from the engine once, call the ports, and pass everything to the pure rules in
:mod:`sim.cvsa`. This module holds no behaviour beyond small helpers shared by the jobs.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Final

from sim.cvsa.lifecycle import Transitions, transitions_for
from sim.cvsa.params import DEFAULT_PARAMS, Params
from sim.cvsa.profile import Switches
from sim.cvsa.retry import Backoff, OutcomeTable, cvsa_outcomes
from sim.engine import Engine, Job, Queue
from sim.events import cvsa_kinds as K
from sim.events import upstream_kinds as U
from sim.ports import LockManager, Snapshot, Store, UpstreamApi, WindowCounter
from sim.rng import RandomStreams
from sim.scheduler.metering import Slowdown
from sim.scheduler.traffic_modes import TrafficModes
from sim.scheduler.write_buffer import WriteBuffer
from sim.units import Ms

TYPE_CODE: Final = K.SNAPSHOT_TYPE.codes()
"""Schedule type -> its event-log code (the table is derived from the vocabulary's enum)."""
STATUS_CODE: Final = K.SCHEDULE_STATUS.codes()
"""Schedule status -> its event-log code."""
RULE_CODE: Final = K.SCHEDULE_RULE.codes()
"""The rule that asked for a row (:class:`sim.cvsa.vocabulary.ScheduleRule`) -> its code."""
NEVER: Final[Ms] = 2**62
"""An idle hint's "not before the end of any run"."""


@dataclass
class Emitters:
    """Bound emitters for every CVSA event kind (see :mod:`sim.events.cvsa_kinds`)."""

    created: Callable[..., None]
    not_created: Callable[..., None]
    moved: Callable[..., None]
    dispatched: Callable[..., None]
    skipped: Callable[..., None]
    finished: Callable[..., None]
    deleted: Callable[..., None]
    released: Callable[..., None]
    rebuilt: Callable[..., None]
    taken: Callable[..., None]
    upstream_failed: Callable[..., None]
    discovered: Callable[..., None]
    classified: Callable[..., None]
    retry: Callable[..., None]
    started: Callable[..., None]
    stray: Callable[..., None]
    locked: Callable[..., None]
    history: Callable[..., None]
    retry_after: Callable[..., None]

    @classmethod
    def bind(cls, engine: Engine) -> Emitters:
        e = engine.log.emitter
        return cls(
            created=e(K.ScheduleCreated),
            not_created=e(K.ScheduleNotCreated),
            moved=e(K.ScheduleMoved),
            dispatched=e(K.ScheduleDispatched),
            skipped=e(K.ScheduleSkipped),
            finished=e(K.ScheduleFinished),
            deleted=e(K.ScheduleDeleted),
            released=e(K.WindowReleased),
            rebuilt=e(K.WindowsRebuilt),
            taken=e(K.SnapshotTaken),
            upstream_failed=e(K.UpstreamFailed),
            discovered=e(K.VideoDiscovered),
            classified=e(K.SongClassified),
            retry=e(K.RetryScheduled),
            started=e(K.ScheduleStarted),
            stray=e(K.StrayStatusChange),
            locked=e(K.DispatcherLocked),
            history=e(K.HistoryLoaded),
            retry_after=e(U.RetryAfterHonoured),
        )


@dataclass
class Ctx:
    """The scheduler's world as its jobs see it."""

    engine: Engine
    store: Store
    counter: WindowCounter
    locks: LockManager
    """The dispatcher locks, on the window counter's Redis."""
    upstream: UpstreamApi
    switches: Switches
    """The run's design-vs-deployed switches (:mod:`sim.cvsa.profile`)."""
    streams: RandomStreams
    queue: Queue
    emit: Emitters
    timezone_ms: int
    params: Params = DEFAULT_PARAMS
    """The design's numbers (:mod:`sim.cvsa.params`), built from the profile."""
    backoff: Backoff = field(default_factory=Backoff)
    """The seed-004 retry parameters (``[scheduler.retry]``)."""
    snapshot_video: Callable[[Job], Coroutine[Any, Any, Any]] | None = None
    """The ``snapshotVideo`` processor as registered (metered), set by the model."""
    bulk_snapshot_video: Callable[[Job], Coroutine[Any, Any, Any]] | None = None
    """The ``bulkSnapshotVideo`` processor as registered (metered), set by the model."""
    eta_memo: dict[int, tuple[Snapshot, tuple[Snapshot | None, ...], float]] = field(
        default_factory=dict
    )
    """The last ETA inputs (latest, lookbacks) and result per video (``estimates.adjusted_eta``)."""
    eta_reader: int = 1
    """Who this deployment is to the store's settled ETA inputs (``SettledEtaInputs``): marks
    are a reader's own, as its ``eta_memo`` is."""
    jitter: random.Random = field(init=False)
    """Offsets inside a window (adjustSnapshotTime's ``Math.random()``)."""
    archive_rng: random.Random = field(init=False)
    """The non-song archive spread (§13b.3)."""
    retry_rng: random.Random = field(init=False)
    """Backoff jitter (seed 004) and the bulk no-proxy delay (§10.4)."""
    transitions: Transitions = field(init=False)
    """The lifecycle every status write is checked against (:func:`transitions_for`)."""
    outcomes: OutcomeTable = field(init=False)
    """The deployed outcome table with the run's retry delays (:func:`cvsa_outcomes`)."""

    def __post_init__(self) -> None:
        self.jitter = self.streams.stream("jitter")
        self.archive_rng = self.streams.stream("archive")
        self.retry_rng = self.streams.stream("retry")
        self.transitions = transitions_for(self.switches)
        self.outcomes = cvsa_outcomes(self.params)

    skew_ms: int = 0
    """How far the worker's clock is off the database's (the ``clock_skew`` fault)."""
    store_slowdown: Slowdown = field(default_factory=Slowdown)
    """The extra virtual time of every store call (the metered store's: ``slow_database``)."""

    writes: WriteBuffer | None = None
    """Seed 003's snapshot writer (``[write_path]``); None: each snapshot is inserted as fetched."""
    modes: TrafficModes | None = None
    """Seed 003's traffic modes (``[modes]``); None: every row is taken when due."""

    read_ahead: bool = True
    """Off: never :meth:`batched_reads` (a test compares the two paths' event logs)."""

    def batched_reads(self) -> bool:
        """May a job read ahead for many videos in one store call (``SnapshotStore.eta_inputs``)
        and get what its per-video calls would have got? Yes on the virtual clock, where no
        other process runs while a job's port calls are in flight, as long as they take no
        virtual time (not under ``slow_database``: then other jobs run between them). A load
        run (real clock, concurrent jobs) keeps the deployed one query per call."""
        return self.read_ahead and not self.engine.concurrent and not self.store_slowdown.delay_ms

    @property
    def now(self) -> int:
        """The database's clock (``NOW()``): the ticks' and cleanup's queries, row timestamps."""
        return self.engine.now

    @property
    def worker_now(self) -> int:
        """The worker's clock (``Date.now()``): every time the jobs compute themselves."""
        return self.engine.now + self.skew_ms
