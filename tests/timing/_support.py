"""Shared helpers of the timing regression suite (issue 4): codes, relative times, seeded draws.

Every test runs the whole scheduler with :func:`sim.testing.runs.run_model` from ``T0``
(2031-01-06T00:00:00+08:00, a Monday) and asserts exact virtual instants relative to ``T0``.
Where a time depends on a random draw, the draw is taken from the same named stream the model
uses (:mod:`sim.rng`), so the expectation is derived, not copied from a run.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any

from sim.cvsa.params import DEFAULT_PARAMS as PARAMS
from sim.events import cvsa_kinds as K
from sim.events.engine_kinds import JobAdded
from sim.rng import RandomStreams
from sim.scheduler.context import Ctx
from sim.testing.runs import T0, ModelRun
from sim.units import WINDOW_MS, Ms

TYPE = {word: K.SNAPSHOT_TYPE.code(word) for word in K.SNAPSHOT_TYPE.words}
STATUS = {word: K.SCHEDULE_STATUS.code(word) for word in K.SCHEDULE_STATUS.words}
PLACEMENT = {word: K.PLACEMENT.code(word) for word in K.PLACEMENT.words}
NOT_CREATED = {word: K.NOT_CREATED.code(word) for word in K.NOT_CREATED.words}
SKIP = {word: K.SKIP_REASON.code(word) for word in K.SKIP_REASON.words}
CAUSE = {word: K.WINDOW_CAUSE.code(word) for word in K.WINDOW_CAUSE.words}
SEED = 1
"""``run_model``'s default seed."""

Setup = Callable[[Ctx], Coroutine[Any, Any, None]]
"""A ``run_model`` setup: runs at the start instant, before the startup window rebuild."""


def rel(t_ms: Ms) -> Ms:
    """``t_ms`` relative to ``T0``."""
    return t_ms - T0


def times(events: Iterable[Any], field: str = "t_ms") -> list[Ms]:
    """``field`` of each record, relative to ``T0``."""
    return [getattr(e, field) - T0 for e in events]


def of_aid(run: ModelRun, record_type: type, aid: int) -> list[Any]:
    """The records of ``record_type`` about ``aid``, in log order."""
    return [e for e in run.events(record_type) if e.aid == aid]


def of_type(run: ModelRun, record_type: type, type_word: str) -> list[Any]:
    """The records of ``record_type`` about rows of type ``type_word``, in log order."""
    return [e for e in run.events(record_type) if e.type == TYPE[type_word]]


def draws(stream: str, n: int, seed: int = SEED) -> list[float]:
    """The first ``n`` ``random()`` draws of the model's stream ``stream`` for ``seed``."""
    rng = RandomStreams(seed).stream(stream)
    return [rng.random() for _ in range(n)]


def jitter_offsets(n: int, seed: int = SEED) -> list[Ms]:
    """The first ``n`` offsets ``adjustSnapshotTime`` puts rows at inside their window:
    ``floor(Math.random() * 5 min)`` from the ``jitter`` stream (reference §6.2, §19.1)."""
    return [math.floor(r * WINDOW_MS) for r in draws("jitter", n, seed)]


def at(ctx: Ctx, t_ms: Ms, action: Callable[[Ctx], Awaitable[object]], name: str = "test") -> None:
    """From a ``run_model`` setup: run ``action(ctx)`` at virtual ``t_ms`` (a process of its own,
    after the periodic iterations due at that instant have been queued)."""

    async def process() -> None:
        await ctx.engine.sleep_until(t_ms)
        await action(ctx)

    ctx.engine.spawn(process(), name=name)


def job_names(run: ModelRun, dispatched: Iterable[Any]) -> list[str]:
    """The job name (``snapshotVideo`` / ``bulkSnapshotVideo``) of each dispatch record."""
    names = run.engine.log.names
    by_job = {e.job: names[e.name] for e in run.events(JobAdded)}
    return [by_job[e.job] for e in dispatched]


def _first_tick(due_rel: Ms, every: Ms, lookahead: Ms) -> Ms:
    return max(0, -(-(due_rel - lookahead) // every) * every)


def single_tick_at(due_rel: Ms) -> Ms:
    """When snapshotTick (every 1 s, rows due within the next 1 s, inclusive; seed 000, reference
    §19.9) first takes a row due at ``due_rel`` (relative to T0), if nothing blocks it."""
    return _first_tick(due_rel, PARAMS.snapshot_tick_every_ms, PARAMS.single_tick_lookahead_ms)


def bulk_tick_at(due_rel: Ms) -> Ms:
    """When bulkSnapshotTick (every 15 s, rows due within the next 15 s, inclusive; reference
    §8.1, §19.9) first takes a row due at ``due_rel`` (relative to T0)."""
    return _first_tick(due_rel, PARAMS.bulk_tick_every_ms, PARAMS.bulk_tick_lookahead_ms)


# --- the milestone arithmetic, restated from the spec (not imported from sim.cvsa) -------------

ETA_DELTA = 1e-5
"""Added to hours and speeds in getAdjustedShortTermETA (reference §11.4)."""


def note_factor(x: float) -> float:
    """Seed 000's acceleration factor ``log(4.5 / log(x + 100), 1.054) + 0.601`` (inner log base
    10), truncated to [4.5, 100] as deployed (reference §11.4; the note gives no bounds)."""
    return min(max(math.log(4.5 / math.log10(x + 100), 1.054) + 0.601, 4.5), 100.0)


def deployed_factor(x: float) -> float:
    """The deployed piecewise factor (reference §11.4, §16.6): above 455 views to go
    ``log(4.5 / log10(x + 1), 1.054)`` with no +0.601; the note's formula below."""
    if x > 455:
        return min(max(math.log(4.5 / math.log10(x + 1), 1.054), 4.5), 100.0)
    return note_factor(x)


def lookback_speed(dv: float, dh: float) -> float:
    """Views per hour over ``dh`` hours, as getAdjustedShortTermETA computes it."""
    return dv / (dh + ETA_DELTA)


def eta_hours(to_go: int, speed: float, factor: Callable[[float], float] = note_factor) -> float:
    """The adjusted ETA: views to go over the best speed, divided by the factor."""
    return to_go / (speed + ETA_DELTA) / factor(to_go)


def milestone_delay_ms(eta_h: float, clamp: bool = True) -> Ms:
    """now + ETA, clamped to [2 s, 1.2 h] by the dispatcher (seed 000), whole ms (§19.1)."""
    d = eta_h * 3_600_000
    return math.floor(min(max(d, 2_000), 72 * 60_000) if clamp else d)


class SlowInserts:
    """The store, with every INSERT of one schedule type taking ``delay_ms`` of virtual time (a
    slow database), so that a dispatcher run lasts long enough for its time cap to matter."""

    def __init__(self, inner: Any, ctx: Ctx, type_: str, delay_ms: Ms) -> None:
        self.inner, self.ctx, self.type, self.delay_ms = inner, ctx, type_, delay_ms

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def insert_schedule(
        self, aid: int, type: str, started_at_ms: Ms, created_at_ms: Ms
    ) -> int:
        if type == self.type:
            await self.ctx.engine.sleep(self.delay_ms)
        return int(await self.inner.insert_schedule(aid, type, started_at_ms, created_at_ms))
