"""The capacity search's probe sequence: where the gates of a scenario stop holding.

``sim capacity`` varies one key and asks, at each probed value, whether the scenario's gates
(its ``[expect]`` thresholds) hold. For a *load* (``catalog.non_songs``, ``arrivals.per_day``)
the answer is the largest value that holds; for a *resource* (``design.window_cap``,
``scheduler.snapshot_concurrency``) the smallest. The search assumes the gates are monotone in
the key and is deterministic: the same answers give the same probes, so the same scenario and
seed give the same frontier.

1. **Bracket.** Without bounds, start at the scenario's own value (or the one bound given);
   double or halve until the verdict flips.
2. **Bisect** the bracket until the passing and failing values are within ``precision`` of
   each other (relative to the passing value; integer keys stop at adjacent integers). With
   both ``low`` and ``high`` the bracket is the user's: the search bisects it at once, as if
   the frontier were inside, and probes an end only at the end, to confirm it (if it
   contradicts the bracket, the answer is "no value in the bracket holds", or "every one
   does"). A bracket of 2x then costs 8 probes for 1 %.

This module decides values only: it runs nothing (sim/cli/capacity.py runs each probe as a
normal run with its report).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

Find = Literal["max", "min"]

MAX_DOUBLINGS = 40
"""Bracketing gives up after this many doublings or halvings (2^40: no key spans that)."""


@dataclass
class Probe:
    """One probed value and whether every gate held there."""

    value: float
    holds: bool


@dataclass
class FrontierSearch:
    """The probe sequence for one key (module docstring).

    Call :meth:`next_value` for the value to run, then :meth:`record` with its verdict, until
    :meth:`next_value` returns None; :meth:`frontier` is then the answer.
    """

    find: Find
    """``max``: the largest value that holds (a load); ``min``: the smallest (a resource)."""
    start: float
    """The scenario's own value (the first probe without bounds)."""
    integer: bool
    """The key takes integers: probe whole numbers, stop at adjacent ones."""
    precision: float = 0.01
    """Relative width of the final bracket (0.01: the answer is within 1 %)."""
    low: float | None = None
    high: float | None = None
    minimum: float = 0.0
    """The smallest value the key accepts (halving stops above it)."""
    probes: list[Probe] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.low is not None and self.high is not None and not self.low < self.high:
            raise ValueError(f"--low must be below --high (got {self.low} and {self.high})")
        if not 0 < self.precision < 1:
            raise ValueError(f"--precision must be between 0 and 1 (got {self.precision})")

    # -- the two verdicts that bound the answer --------------------------------------------
    def _best_pass(self) -> Probe | None:
        return _best(self.probes, True, self.find)

    def _best_fail(self) -> Probe | None:
        return _best(self.probes, False, self.find)

    def record(self, value: float, holds: bool) -> None:
        """The verdict at ``value`` (the last :meth:`next_value`)."""
        self.probes.append(Probe(value, holds))

    def next_value(self) -> float | None:
        """The next value to probe, or None when the search is over."""
        tried = {p.value for p in self.probes}
        if self.low is not None and self.high is not None:
            return self._within_bounds(tried)
        if not self.probes:
            first = self.low if self.low is not None else self.high
            return self._round(self.start if first is None else first)
        good, bad = self._best_pass(), self._best_fail()
        if good is None or bad is None:
            return self._expand(good, bad)
        return self._bisect(good.value, bad.value, tried)

    def _within_bounds(self, tried: set[float]) -> float | None:
        """Bisect ``[low, high]`` as if its ends had the verdicts a frontier inside needs (a
        load holds at ``low`` and fails at ``high``), probing an end only to confirm the
        answer at the end of the search: a bracket the user gave costs no probe of its own."""
        assert self.low is not None
        assert self.high is not None
        low, high = self._round(self.low), self._round(self.high)
        assumed = [Probe(low, self.find == "max"), Probe(high, self.find == "min")]
        seen = self.probes + [p for p in assumed if p.value not in tried]
        good, bad = _best(seen, True, self.find), _best(seen, False, self.find)
        if good is None or bad is None:
            return None  # an end was probed and contradicts the bracket: no frontier inside
        if self._narrow_enough(good.value, bad.value):
            unconfirmed = [p.value for p in (good, bad) if p.value not in tried]
            return unconfirmed[0] if unconfirmed else None
        return self._bisect(good.value, bad.value, tried)

    def _bisect(self, good: float, bad: float, tried: set[float]) -> float | None:
        if self._narrow_enough(good, bad):
            return None
        middle = self._round((good + bad) / 2)
        return None if middle in tried else middle

    def _expand(self, good: Probe | None, bad: Probe | None) -> float | None:
        """One more doubling or halving away from the verdict seen so far, or None."""
        if self.low is not None and self.high is not None:
            return None  # both ends agree: the answer is outside the bounds the user gave
        if len(self.probes) > MAX_DOUBLINGS:
            return None
        seen = good or bad
        assert seen is not None
        # A passing load grows, a failing one shrinks; a passing resource shrinks.
        grow = (good is not None) == (self.find == "max")
        if grow:
            value = seen.value * 2 if seen.value > 0 else 1.0
            if self.high is not None:
                value = min(value, self.high)
        else:
            value = max(seen.value / 2, self.low if self.low is not None else self.minimum)
        value = self._round(value)
        return None if value in {p.value for p in self.probes} else value

    def _narrow_enough(self, good: float, bad: float) -> bool:
        gap = abs(good - bad)
        if self.integer and gap <= 1:
            return True
        return gap <= self.precision * max(abs(good), 1e-12)

    def _round(self, value: float) -> float:
        return float(math.floor(value + 0.5)) if self.integer else value

    def frontier(self) -> Frontier:
        """The answer: the last value that holds and the first that does not."""
        return Frontier(self.find, self._best_pass(), self._best_fail(), list(self.probes))


@dataclass(frozen=True)
class Frontier:
    """Where the gates stop holding (:meth:`FrontierSearch.frontier`)."""

    find: Find
    holds: Probe | None
    """The best value at which every gate held (None: none did)."""
    fails: Probe | None
    """The nearest value beyond it at which a gate failed (None: every probe held)."""
    probes: list[Probe]


def _value(p: Probe) -> float:
    return p.value


def _best(probes: list[Probe], holds: bool, find: Find) -> Probe | None:
    """The passing probe nearest the frontier (the largest for a load), or the failing one
    (the smallest for a load)."""
    chosen = [p for p in probes if p.holds is holds]
    if not chosen:
        return None
    largest = (find == "max") is holds
    return max(chosen, key=_value) if largest else min(chosen, key=_value)
