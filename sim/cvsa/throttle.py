"""The adaptive response to throttling: a sliding window of answers sets the crawler's rate factor.

Seed 003 §6.3: "一旦风控触发频率明显上升就要立刻回退采集频次而不是硬沖" -- once risk control fires
markedly more often, fall back on the request rate at once instead of pushing through. Issue 28
makes it a rule:

* every answer bilibili gives (not a request the crawler's own limiters refused) enters a
  window of the last ``window_ms``; an answer is *throttled* when it is -412 (risk control) or
  429 (:class:`AnswerWindow`);
* when the throttled share of a window holding at least ``min_answers`` answers exceeds
  ``threshold``, the factor is multiplied by ``lower`` (not below ``floor``): a small sample
  never cuts the rate;
* when the share is at most ``restore_below``, the factor rises by ``restore_step`` (up to 1),
  at most once per ``restore_period_ms`` (:func:`react`). Restoring needs no minimum sample: the
  cut rate itself keeps the window small, and would otherwise never let the rate back.

Hysteresis, so the factor does not flap: the drop and restore thresholds differ (a share between
them changes nothing), and after any change the rule waits a whole window before dropping again
(the window then holds only answers to the new rate) and ``restore_period_ms`` before restoring.

What the factor scales: the crawler's request rate *as it was when the throttling began*. At
the first drop (from the full rate) the window's answer count is kept as the reference
(``ref_answers``: requests per window before slowing down); while the factor is below 1 the
crawler sends at most :func:`budget_per_window` requests per window (the network layer holds
that budget as a GCRA, like its other limiters; reference §14.1). Back at the full rate, the
budget goes and the reference is forgotten. Scaling the deployed limiters instead would not bite:
they are sized for bilibili's provider limits (20/s per proxy, §14.2), far above what a
scheduler of a few thousand songs sends, while risk control fires at the rate actually sent.

The factor is kept in permille (integers: exact, and the events log it as is).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Final, Literal

from sim.cvsa.params import field_doc
from sim.units import Ms

FULL: Final = 1000
"""The factor at full rate, in permille."""

Reason = Literal["drop", "restore"]


@dataclass(frozen=True)
class ThrottleParams:
    """The adaptive response's numbers (``[upstream.adaptive]``); seed 003 gives none."""

    window_ms: Ms = field(
        default=60_000,
        metadata=field_doc("window of answers the throttled share is read over", "seed 003 §6.3"),
    )
    threshold_permille: int = field(
        default=200,
        metadata=field_doc("drop the rate when the throttled share exceeds this", "seed 003 §6.3"),
    )
    restore_below_permille: int = field(
        default=50,
        metadata=field_doc("restore only while the share is at most this (hysteresis)", "issue 28"),
    )
    min_answers: int = field(
        default=20,
        metadata=field_doc("answers a window needs before it can cut the rate", "issue 28"),
    )
    lower_permille: int = field(
        default=500, metadata=field_doc("factor multiplier on a drop", "seed 003 §6.3 立刻回退")
    )
    floor_permille: int = field(
        default=100, metadata=field_doc("lowest factor: the crawler never stops", "issue 28")
    )
    restore_step_permille: int = field(
        default=100,
        metadata=field_doc("factor added per restore (restored gradually)", "issue 28"),
    )
    restore_period_ms: Ms = field(
        default=60_000, metadata=field_doc("at most one restore per this period", "issue 28")
    )

    def __post_init__(self) -> None:
        if not 0 <= self.restore_below_permille <= self.threshold_permille < FULL:
            raise ValueError(
                "need 0 <= restore_below <= threshold < 1 "
                f"(got {self.restore_below_permille}, {self.threshold_permille} permille)"
            )
        if not 0 < self.floor_permille <= FULL or not 0 < self.lower_permille < FULL:
            raise ValueError("need 0 < floor <= 1 and 0 < lower < 1")
        if self.window_ms <= 0 or self.restore_period_ms <= 0 or self.restore_step_permille <= 0:
            raise ValueError("window, restore period and restore step must be positive")


class AnswerWindow:
    """The answers of the last ``window_ms``: how many, and how many were throttled."""

    def __init__(self, window_ms: Ms) -> None:
        self.window_ms = window_ms
        self.answers: deque[tuple[Ms, bool]] = deque()
        self.throttled = 0

    def add(self, t_ms: Ms, throttled: bool) -> None:
        """Record an answer at ``t_ms`` (answers arrive in time order)."""
        self.answers.append((t_ms, throttled))
        self.throttled += throttled
        self.evict(t_ms)

    def evict(self, now_ms: Ms) -> None:
        """Forget answers older than the window ending at ``now_ms`` (``(now - window, now]``)."""
        answers = self.answers
        while answers and answers[0][0] <= now_ms - self.window_ms:
            self.throttled -= answers.popleft()[1]

    def __len__(self) -> int:
        return len(self.answers)

    def share_permille(self) -> int:
        """Throttled answers per thousand in the window (0 when empty)."""
        return self.throttled * FULL // len(self.answers) if self.answers else 0


def react(
    params: ThrottleParams,
    factor_permille: int,
    changed_ms: Ms | None,
    answers: int,
    share_permille: int,
    now_ms: Ms,
) -> tuple[int, Reason] | None:
    """The new factor and why, or None to keep it (module docstring).

    Args:
        params: the rule's numbers.
        factor_permille: the factor now.
        changed_ms: when it last changed (None: never).
        answers: answers in the window.
        share_permille: throttled share of them.
        now_ms: the time of the answer just added.
    """
    since = None if changed_ms is None else now_ms - changed_ms
    if share_permille > params.threshold_permille:
        if (
            answers >= params.min_answers
            and factor_permille > params.floor_permille
            and (since is None or since >= params.window_ms)
        ):
            lowered = factor_permille * params.lower_permille // FULL
            return max(params.floor_permille, lowered), "drop"
        return None
    if (
        share_permille <= params.restore_below_permille
        and factor_permille < FULL
        and (since is None or since >= params.restore_period_ms)
    ):
        return min(FULL, factor_permille + params.restore_step_permille), "restore"
    return None


def budget_per_window(ref_answers: int, factor_permille: int) -> int:
    """Requests per window allowed at ``factor_permille`` of ``ref_answers`` per window (at
    least one: the crawler slows down, it never stops)."""
    return max(1, ref_answers * factor_permille // FULL)


class AdaptiveRate:
    """The rule's state for one crawler: its window, its factor and the reference rate.
    ``observe`` each answer."""

    def __init__(self, params: ThrottleParams) -> None:
        self.params = params
        self.window = AnswerWindow(params.window_ms)
        self.factor_permille = FULL
        self.changed_ms: Ms | None = None
        self.ref_answers = 0
        """Answers in the window at the first drop from the full rate (0 at the full rate)."""

    def budget(self) -> int | None:
        """Requests allowed per window now, or None at the full rate (no budget)."""
        if self.factor_permille >= FULL:
            return None
        return budget_per_window(self.ref_answers, self.factor_permille)

    def observe(self, t_ms: Ms, throttled: bool) -> tuple[int, Reason] | None:
        """Add the answer; return (new factor, reason) when the factor changes."""
        window = self.window
        window.add(t_ms, throttled)
        change = react(
            self.params,
            self.factor_permille,
            self.changed_ms,
            len(window),
            window.share_permille(),
            t_ms,
        )
        if change is not None:
            if self.factor_permille == FULL:
                self.ref_answers = len(window)
            self.factor_permille, self.changed_ms = change[0], t_ms
            if self.factor_permille == FULL:
                self.ref_answers = 0
        return change
