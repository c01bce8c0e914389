"""Retry by class (issue 28; seed 004 ``isRetryableError``), design profile, exact times.

With ``[scheduler.retry] by_class = true`` a rate-limited failure (429, no proxy) backs off from
``rate_limited_base`` (5 s) instead of 1 s and waits exactly the Retry-After when its answer
carries one (up to ``retry_after_cap``); a plain 4xx is never retried. The row is a new row due
at 5 s, taken by the 4-s tick (as in ``test_statuses``).
"""

from __future__ import annotations

import math

from sim.cvsa.vocabulary import ScheduleType, UpstreamErrorKind
from sim.events.cvsa_kinds import RetryScheduled, ScheduleFinished, UpstreamFailed
from sim.events.upstream_kinds import RetryAfterHonoured
from sim.ports import UpstreamError
from sim.scheduler.context import Ctx
from sim.testing.runs import T0, Fault, ModelRun, Video, run_model
from sim.units import DAY_MS, Ms
from tests.timing._support import STATUS, Setup, draws, times

AID = 1
BY_CLASS = ["scheduler.retry.by_class=true"]


def _row(due_ms: Ms) -> Setup:
    async def setup(ctx: Ctx) -> None:
        await ctx.store.insert_schedule(AID, ScheduleType.NEW, due_ms, T0)

    return setup


def run_new_row(fault: Fault, overrides: list[str]) -> ModelRun:
    video = Video(AID, T0 - 100 * DAY_MS, song=False, views=lambda t: 123)
    return run_model([video], until="2m", setup=_row(T0 + 5_000), fault=fault, overrides=overrides)


def delays(base_ms: Ms, n: int) -> list[Ms]:
    """Seed 004 calculateDelay from ``base_ms`` (cap 30 s, +/-50 %) with the ``retry`` draws."""
    out = []
    for k, u in enumerate(draws("retry", n), start=1):
        d = min(base_ms * 2 ** (k - 1), 30_000)
        out.append(math.floor(d + d * 0.5 * (u * 2 - 1)))
    return out


def test_a_429_waits_from_its_own_longer_base() -> None:
    run = run_new_row(lambda t, aids: UpstreamError(UpstreamErrorKind.HTTP_429), BY_CLASS)
    d = delays(5_000, 3)
    attempts = [4_000, 4_000 + d[0], 4_000 + d[0] + d[1], 4_000 + sum(d)]
    assert times(run.events(UpstreamFailed)) == attempts
    assert [(e.t_ms - T0, e.delay_ms) for e in run.events(RetryScheduled)] == list(
        zip(attempts[:3], d, strict=True)
    )
    assert run.events(RetryAfterHonoured) == []


def test_without_by_class_a_429_waits_as_any_other_error() -> None:
    run = run_new_row(lambda t, aids: UpstreamError(UpstreamErrorKind.HTTP_429), [])
    assert [e.delay_ms for e in run.events(RetryScheduled)] == delays(1_000, 3)


def test_a_429_with_retry_after_is_retried_exactly_then() -> None:
    """Retry-After 7 s on the first answer, 90 s (over the 60 s cap) on the second, none after:
    the retries go at 4 s + 7 s = 11 s, then 60 s later at 71 s, then from the 5-s base."""
    answers = iter([7_000, 90_000, 0, 0])

    def fault(t: Ms, aids: tuple[int, ...]) -> UpstreamError:
        return UpstreamError(UpstreamErrorKind.HTTP_429, retry_after_ms=next(answers))

    run = run_new_row(fault, BY_CLASS)
    third = delays(5_000, 3)[2]  # attempt 3 backs off (the draws are taken every attempt)
    assert times(run.events(UpstreamFailed)) == [4_000, 11_000, 71_000, 71_000 + third]
    assert [(e.t_ms - T0, e.attempt, e.delay_ms) for e in run.events(RetryScheduled)] == [
        (4_000, 1, 7_000),
        (11_000, 2, 60_000),
        (71_000, 3, third),
    ]
    honoured = run.events(RetryAfterHonoured)
    assert [(e.t_ms - T0, e.attempt, e.retry_after_ms, e.delay_ms) for e in honoured] == [
        (4_000, 1, 7_000, 7_000),
        (11_000, 2, 90_000, 60_000),
    ]


def test_a_plain_4xx_is_not_retried() -> None:
    for overrides in (BY_CLASS, []):
        run = run_new_row(lambda t, aids: UpstreamError(UpstreamErrorKind.HTTP_4XX), overrides)
        assert times(run.events(UpstreamFailed)) == [4_000]
        assert run.events(RetryScheduled) == []
        assert [(e.t_ms - T0, e.status) for e in run.events(ScheduleFinished)] == [
            (4_000, STATUS["failed"])
        ]
