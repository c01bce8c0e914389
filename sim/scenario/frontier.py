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

**Interpolation.** A probe may come with *margins*: how far each gate is from its bound, as a
log ratio (``log(1000 / 573)`` for ``"windows.max_reserved" <= 1000`` at 573; > 0 holds;
:attr:`sim.scenario.expect.Verdict.margin`). With margins the search reads where each gate
will flip instead of only that none has yet: from one probe it assumes the gated number scales
with the load (inversely with a resource), from two on the same side it draws each gate's
secant (the gated number against the load, or against the inverse of a resource: a number that
is a fixed part plus a part in proportion to the load is a line there; a gate whose number does
not move with the key has no frontier), and between a passing and a failing probe it
interpolates the margins against the log value (regula falsi; a power law is a line there).
The frontier is where the first gate flips (from a passing probe), or where the last failing
one recovers (from a failing probe). Each guess aims half the precision inside the passing
side, so that the next probe, one precision beyond, can close the search; a number that
behaves as assumed is found in three to five probes from any start. Guesses are safeguarded: a
guess that fails to halve the bracket is followed by a bisection, two short jumps that do not
flip the verdict by a doubling, and no guess goes further than :data:`MAX_JUMP` at once.
Without margins (a gate on a severity whose finding has no score, or on ``== 0``), the search
is the plain one above.

This module decides values only: it runs nothing (sim/cli/capacity.py runs each probe as a
normal run with its report).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Find = Literal["max", "min"]

MAX_DOUBLINGS = 40
"""Bracketing gives up after this many doublings or halvings (2^40: no key spans that)."""
MAX_JUMP = math.log(1024)
"""The furthest one guess moves from the probe it starts from (a factor of 1024)."""


@dataclass
class Probe:
    """One probed value and whether every gate held there."""

    value: float
    holds: bool
    margins: Mapping[str, float] | None = None
    """Per gate, its log distance from its bound (> 0 holds), for the gates that have one."""
    guessed: bool = False
    """The value came from interpolation (the safeguards read it)."""


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
    _last_guess: float | None = field(default=None, repr=False)

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

    def record(self, value: float, holds: bool, margins: Mapping[str, float] | None = None) -> None:
        """The verdict at ``value`` (the last :meth:`next_value`), with the margins of the
        gates that have one; margins that contradict the verdict are dropped."""
        if margins is not None:
            ms = [m for m in margins.values() if math.isfinite(m)]
            if len(ms) != len(margins) or not ms or (min(ms) >= 0) != holds:
                margins = None
        self.probes.append(Probe(value, holds, margins, value == self._last_guess))

    def next_value(self) -> float | None:
        """The next value to probe, or None when the search is over."""
        value, guessed = self._next()
        self._last_guess = value if guessed else None
        return value

    def _next(self) -> tuple[float | None, bool]:
        """The next value, and whether it is a guess (interpolated) rather than a doubling, a
        halving or a bisection."""
        tried = {p.value for p in self.probes}
        if self.low is not None and self.high is not None:
            return self._within_bounds(tried)
        if not self.probes:
            first = self.low if self.low is not None else self.high
            return self._round(self.start if first is None else first), False
        good, bad = self._best_pass(), self._best_fail()
        if good is None or bad is None:
            jump = self._jump(good or bad, tried)
            return (jump, True) if jump is not None else (self._expand(good, bad), False)
        if self._narrow_enough(good.value, bad.value):
            return None, False
        between = self._between(good, bad, tried)
        if between is not None:
            return between, True
        return self._bisect(good.value, bad.value, tried), False

    def _within_bounds(self, tried: set[float]) -> tuple[float | None, bool]:
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
            return None, False  # an end was probed and contradicts the bracket: none inside
        if self._narrow_enough(good.value, bad.value):
            unconfirmed = [p.value for p in (good, bad) if p.value not in tried]
            return (unconfirmed[0] if unconfirmed else None), False
        between = self._between(good, bad, tried)
        if between is None and self.probes and min(good.value, bad.value) > 0:
            between = self._jump(self.probes[-1], tried, inside=(good.value, bad.value))
        if between is not None:
            return between, True
        return self._bisect(good.value, bad.value, tried), False

    # -- interpolation (module docstring) ----------------------------------------------------
    def _toward_fail(self) -> float:
        """+1 when failing values lie above passing ones (a load), -1 for a resource."""
        return 1.0 if self.find == "max" else -1.0

    def _between(self, good: Probe, bad: Probe, tried: set[float]) -> float | None:
        """Regula falsi between a passing and a failing probe with margins, on the gate that
        flips first; None (bisect) without margins or when the last guess did not halve the
        bracket."""
        if good.margins is None or bad.margins is None or good.value <= 0 or bad.value <= 0:
            return None
        if self.probes[-1].guessed:
            before = self.probes[:-1]
            g0, b0 = _best(before, True, self.find), _best(before, False, self.find)
            if g0 is not None and b0 is not None and g0.value > 0 and b0.value > 0:
                was = abs(math.log(b0.value / g0.value))
                if abs(math.log(bad.value / good.value)) > was / 2:
                    return None
        # Inside a bracket, each gate's margin is interpolated against the log value: a power
        # law is a line there, and anything smooth nearly is once the bracket is narrow.
        xg, xb = math.log(good.value), math.log(bad.value)
        roots = [
            xg + (xb - xg) * good.margins[gate] / (good.margins[gate] - mb)
            for gate, mb in bad.margins.items()
            if mb < 0 and good.margins.get(gate, -1.0) >= 0
        ]
        if not roots:
            return None
        return self._aim(min(roots, key=lambda r: abs(r - xg)), (good.value, bad.value), tried)

    def _jump(
        self, seen: Probe | None, tried: set[float], inside: tuple[float, float] | None = None
    ) -> float | None:
        """From ``seen`` (the probe nearest the frontier), where the gates' secants put the
        frontier (module docstring)."""
        if seen is None or seen.margins is None or seen.value <= 0:
            return None
        x0, s = math.log(seen.value), self._toward_fail()
        steps = []  # per gate, how far towards failing (in log value) it flips
        for gate, m in seen.margins.items():
            if not seen.holds and m >= 0:
                continue  # a gate that holds at a failing probe does not decide where to go
            others = [
                p
                for p in self.probes
                if p.margins is not None and gate in p.margins and 0 < p.value != seen.value
            ]
            root = self._secant_root(seen, others[-1] if others else None, gate)
            if root is not None:
                steps.append(s * (root - x0))
        if not steps:
            return None
        # From a passing probe the first gate to flip, from a failing one the last to recover:
        # in both cases the least distance towards failing.
        step = s * min(steps)
        step = max(min(step, MAX_JUMP), -MAX_JUMP)
        if inside is not None:
            return self._aim(x0 + step, inside, tried)
        if abs(step) < math.log(2) and all(p.guessed for p in self.probes[-2:]):
            return None  # two guesses in a row fell short of the frontier: double instead
        # Aim half the precision inside the passing side, but at least one precision beyond
        # ``seen``, towards failing if it held, towards passing if it failed.
        precision = math.log1p(self.precision)
        x = x0 + step - s * precision / 2
        away = s if seen.holds else -s
        x = x0 + away * max(away * (x - x0), precision)
        value = self._round_to_pass(math.exp(x))
        if value == seen.value:
            value += away
        too_far = (self.high is not None and value > self.high) or (
            self.low is not None and value < self.low
        )
        if value in tried or value <= self.minimum or too_far:
            return None
        return value

    def _secant_root(self, a: Probe, b: Probe | None, gate: str) -> float | None:
        """The log value where ``gate`` flips, on the line through ``a`` and ``b`` in the
        plane of (load, gated ratio): the load is the value (its inverse for a resource) and
        the ratio ``exp(-margin)`` (value over bound: 1 at the bound, rising towards failing).
        A number that grows in proportion to a load plus a fixed part (rows the other videos
        book) is a line there, so two probes find its frontier exactly. Without ``b``, the
        line through the origin (proportional scaling). None when the line does not rise
        towards failing: that gate's number does not move with the key."""
        assert a.margins is not None

        def point(p: Probe) -> tuple[float, float]:
            assert p.margins is not None
            load = p.value if self.find == "max" else 1.0 / p.value
            return load, math.exp(-p.margins[gate])

        ua, qa = point(a)
        if b is None:
            ub, qb = 0.0, 0.0
        else:
            ub, qb = point(b)
        if ua == ub or (qa - qb) / (ua - ub) <= 1e-12 * max(qa, qb) / max(abs(ua), abs(ub)):
            return None
        root = ua + (1.0 - qa) * (ua - ub) / (qa - qb)
        if root <= 0:
            return None
        return math.log(root) if self.find == "max" else -math.log(root)

    def _aim(self, root: float, bracket: tuple[float, float], tried: set[float]) -> float | None:
        """The value to probe for a frontier estimated at log value ``root`` inside
        ``bracket``: half the precision on its passing side, at least one precision from
        either end (the middle of a bracket narrower than that); None if already tried."""
        lo, hi = sorted(math.log(v) for v in bracket)
        precision = math.log1p(self.precision)
        x = root - self._toward_fail() * precision / 2
        x = (
            min(max(x, lo + precision), hi - precision)
            if hi - lo > 2 * precision
            else (lo + hi) / 2
        )
        value = self._round_to_pass(math.exp(x))
        if self.integer:  # strictly inside, unless the bracket is adjacent integers already
            value = min(max(value, min(bracket) + 1), max(bracket) - 1)
        if value in tried or not min(bracket) < value < max(bracket):
            return None
        return value

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

    def _round_to_pass(self, value: float) -> float:
        """An integer key rounds a guess towards the passing side (down for a load), so that a
        frontier between two integers is confirmed by the probe after it."""
        if not self.integer:
            return value
        return float(math.floor(value) if self.find == "max" else math.ceil(value))

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
