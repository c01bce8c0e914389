"""Event kinds emitted by the engine itself (codes 1-49).

Names of queues, job names and schedulers are stored as indexes into the log's name table
(``EventLog.names``), which is fixed before the run starts and written into the log header.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from sim.events.schema import event

NO_PRIORITY: Final = -1
"""``priority`` of a job added without one: BullMQ's plain wait list, served first (§1.4)."""


@event(1)
class RunStarted(NamedTuple):
    """The run began at ``t_ms``; it is planned to end at ``until_ms``."""

    seq: int
    t_ms: int
    until_ms: int
    seed: int


@event(2)
class RunEnded(NamedTuple):
    """The run stopped; ``partial`` is 1 when it was interrupted before ``until_ms``."""

    seq: int
    t_ms: int
    partial: int


@event(3)
class JobAdded(NamedTuple):
    """A job entered ``queue``; it is runnable from ``due_ms`` (later than ``t_ms`` if delayed)."""

    seq: int
    t_ms: int
    queue: int
    job: int
    name: int
    priority: int
    due_ms: int


@event(4)
class JobStarted(NamedTuple):
    """A worker of ``queue`` took the job; the wait was ``t_ms - due_ms``."""

    seq: int
    t_ms: int
    queue: int
    job: int
    name: int
    due_ms: int


@event(5)
class JobFinished(NamedTuple):
    """The job's processor returned (``ok`` = 1) or raised (``ok`` = 0)."""

    seq: int
    t_ms: int
    queue: int
    job: int
    name: int
    ok: int


@event(6)
class IterationStarted(NamedTuple):
    """An iteration of a periodic job (BullMQ job scheduler) that did something began.

    Written lazily: only when the iteration's processor records its first event, so that idle
    iterations cost one counter (see ``IdleIterations``) and tick elision leaves the log unchanged.
    """

    seq: int
    t_ms: int
    scheduler: int
    due_ms: int


@event(7)
class IterationFinished(NamedTuple):
    """A non-idle iteration finished (``ok`` = 1) or raised (``ok`` = 0)."""

    seq: int
    t_ms: int
    scheduler: int
    due_ms: int
    ok: int


@event(8)
class IterationsMissed(NamedTuple):
    """An iteration began late; ``missed`` slots were skipped, never replayed (reference §1.4)."""

    seq: int
    t_ms: int
    scheduler: int
    missed: int
    next_due_ms: int


@event(9)
class IdleIterations(NamedTuple):
    """``iterations`` consecutive iterations, due ``first_due_ms`` to ``last_due_ms``, did nothing.

    Written when the streak ends (the next non-idle iteration, or the end of the run).
    """

    seq: int
    t_ms: int
    scheduler: int
    first_due_ms: int
    last_due_ms: int
    iterations: int


@event(10)
class JobLost(NamedTuple):
    """A worker crashed while the job was running: it never finishes (periodic iterations have
    ``job`` = -1 and ``name`` = the job scheduler). Its rows stay as they were."""

    seq: int
    t_ms: int
    queue: int
    job: int
    name: int
    due_ms: int


@event(11)
class JobInterrupted(NamedTuple):
    """On restart, a job the previous run lost is marked failed as "scheduler restart, previous
    run interrupted" (seed 001, 中断恢复)."""

    seq: int
    t_ms: int
    queue: int
    job: int
    name: int
    due_ms: int


@event(12)
class FaultStarted(NamedTuple):
    """Fault number ``fault`` (its index in the scenario's ``[[faults]]``) began."""

    seq: int
    t_ms: int
    fault: int
    kind: int


@event(13)
class FaultEnded(NamedTuple):
    """Fault number ``fault`` ended (instant faults end when they began)."""

    seq: int
    t_ms: int
    fault: int
    kind: int
