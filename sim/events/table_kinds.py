"""Event kinds of seed 001's table-driven periodic runner (codes 130-139).

A run of a job is logged as a BullMQ iteration is (:mod:`sim.engine.jobs` ``IterationLog``):
``IterationStarted`` when it does something, ``IterationFinished`` with ``ok`` (0 = the run
failed), idle runs as run-length ``IdleIterations``, each keyed by the job's name and the run's
planned time. So every periodic metric and finding reads both policies alike. What only the
table has is logged here: the executor lock, requests ("run now", merged or queued), skips and
runs a successor found interrupted.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from sim.cvsa.vocabulary import RunTrigger
from sim.events.schema import enum, event

RUN_TRIGGER: Final = enum("run_trigger", *(t.value for t in RunTrigger))


@event(130)
class ExecutorLockTaken(NamedTuple):
    """``holder`` (a deployment's name) took the executor lock: it runs the table from now on
    (seed 001: 调度器取得执行权)."""

    seq: int
    t_ms: int
    holder: int


@event(131)
class ExecutorLockLost(NamedTuple):
    """``holder`` lost the executor lock (its process died): until another takes it, no process
    runs the table (the scheduler is offline)."""

    seq: int
    t_ms: int
    holder: int


@event(132)
class JobRunRequested(NamedTuple):
    """立即执行 for ``job``: ``queued`` 1, or 0 when merged with a pending request or a running
    run (the next run time does not change)."""

    seq: int
    t_ms: int
    job: int
    queued: int


@event(133)
class JobRunSkipped(NamedTuple):
    """跳过本次 for ``job``: run ``run`` is recorded with ``trigger=skip``, and the next run moves
    from ``was_ms`` to ``next_run_at_ms``. ``run`` 0: refused, the job was running (its end
    sets the next run time)."""

    seq: int
    t_ms: int
    job: int
    run: int
    was_ms: int
    next_run_at_ms: int


@event(134)
class JobRunInterrupted(NamedTuple):
    """The new executor found run ``run`` of ``job`` left ``running`` by ``holder`` (dead) and
    marked it failed (中断恢复); it had started at ``started_at_ms``, planned for
    ``planned_ms``."""

    seq: int
    t_ms: int
    job: int
    run: int
    holder: int
    planned_ms: int
    started_at_ms: int


@event(135)
class ManualRunStarted(NamedTuple):
    """Run ``run`` of ``job`` started for ``trigger`` (a code of ``run_trigger``), planned for
    ``planned_ms``: logged for a requested run only (a scheduled run is its iteration's record);
    its slot is ``manual:<run>``."""

    seq: int
    t_ms: int
    job: int
    run: int
    trigger: int
    planned_ms: int
