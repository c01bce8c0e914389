"""Event kinds of the crawler's reaction to the upstream (issue 28; codes 140-149).

What the log already has: every request and its answer (``UpstreamRequest``: ``throttled`` is
-412, ``http_429`` a 429, ``http_4xx`` a plain 4xx), every failed call (``UpstreamFailed``) and
every in-job retry with its delay (``RetryScheduled``). What only this mechanism knows is logged
here: each change of the adaptive rate factor (seed 003 §6.3), and each retry whose delay a
Retry-After set (seed 004 retry by class).
"""

from __future__ import annotations

from typing import Final, NamedTuple

from sim.events.schema import enum, event

RATE_CHANGE: Final = enum("rate_change", "drop", "restore")


@event(140)
class RateFactorChanged(NamedTuple):
    """The adaptive response set the crawler's rate factor to ``factor_permille`` (1000: the
    full rate) for ``reason`` (RATE_CHANGE), judging a window of ``answers`` answers of which
    ``share_permille`` per thousand were throttled (-412 or 429)."""

    seq: int
    t_ms: int
    factor_permille: int
    share_permille: int
    answers: int
    reason: int


@event(141)
class RetryAfterHonoured(NamedTuple):
    """Retry by class: job ``job``'s call answered 429 with a Retry-After of ``retry_after_ms``;
    its retry ``attempt`` waits ``delay_ms`` (the Retry-After, or its cap)."""

    seq: int
    t_ms: int
    job: int
    attempt: int
    retry_after_ms: int
    delay_ms: int
