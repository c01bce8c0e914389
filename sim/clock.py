"""Clocks: the one place where virtual time meets trio's time and the wall clock.

The engine keeps virtual time itself (an ``int`` of epoch ms, :mod:`sim.units`). A clock tells the
engine *when* it may run the next event:

* :class:`VirtualClock` -- never waits. Virtual time jumps from event to event, so virtual time
  cannot move while real I/O or a thread is in flight: the engine only advances ``now`` after the
  awaited call returns (the hazard of trio issue 456, feasibility.md §2b, cannot arise).
* :class:`ScaledRealClock` -- virtual time runs ``speed`` times faster than trio's real clock;
  the engine sleeps until the wall instant of each event (``sim run --speed K``, ``sim load``).

Rule code never reads either clock: ``now`` is passed in (README "Design rules" 3).
"""

from __future__ import annotations

import math
import time
from typing import Protocol

import trio

from sim.units import SECOND_MS, Ms


class Clock(Protocol):
    """Everything the engines and the load-mode meters ask of a clock.

    The wall-time methods (:meth:`trio_time`, :meth:`virtual_now_ms`) only have an answer on a
    real clock (``is_virtual`` false); the engines that call them refuse a virtual clock.
    """

    epoch_ms: Ms
    """The virtual instant at which the run starts."""

    speed: float
    """Virtual ms per wall ms: 1 is production pace; infinite on the virtual clock."""

    @property
    def is_virtual(self) -> bool:
        """True when time only moves from event to event."""

    def start(self) -> None:
        """Called once, inside ``trio.run``, when the run begins at ``epoch_ms``."""

    async def wait_until(self, t_ms: Ms) -> None:
        """Return when virtual time ``t_ms`` may be executed."""

    def trio_time(self, t_ms: Ms) -> float:
        """trio's time at which virtual ``t_ms`` is due (real clock only)."""

    def virtual_now_ms(self) -> Ms:
        """The virtual instant corresponding to trio's current time (real clock only)."""

    def lag_ms(self, t_ms: Ms) -> Ms:
        """How far the wall clock is behind (<0) or ahead (>0) of virtual ``t_ms``; 0 if virtual."""


class VirtualClock:
    """Discrete-event time: no waiting at all."""

    def __init__(self, epoch_ms: Ms) -> None:
        self.epoch_ms = epoch_ms
        self.speed = math.inf

    @property
    def is_virtual(self) -> bool:
        return True

    def start(self) -> None:
        pass

    async def wait_until(self, t_ms: Ms) -> None:
        return None

    def trio_time(self, t_ms: Ms) -> float:
        raise RuntimeError("a virtual clock is not tied to trio's time (real clock only)")

    def virtual_now_ms(self) -> Ms:
        raise RuntimeError("a virtual clock has no wall time: the engine keeps virtual time")

    def lag_ms(self, t_ms: Ms) -> Ms:
        return 0


class ScaledRealClock:
    """Virtual time = ``epoch + speed x (trio time since start)``.

    ``speed = 1`` is production pace; ``speed = 100`` runs 100 virtual seconds per wall second.
    trio's own clock is the time source, so a test may substitute ``trio.testing.MockClock``.
    """

    def __init__(self, epoch_ms: Ms, speed: float) -> None:
        if not speed > 0:
            raise ValueError(f"speed must be > 0 (got {speed!r})")
        self.epoch_ms = epoch_ms
        self.speed = float(speed)
        self._t0: float | None = None

    @property
    def is_virtual(self) -> bool:
        return False

    def start(self) -> None:
        self._t0 = trio.current_time()

    def trio_time(self, t_ms: Ms) -> float:
        assert self._t0 is not None, "clock not started"
        return self._t0 + (t_ms - self.epoch_ms) / (SECOND_MS * self.speed)

    def virtual_now_ms(self) -> Ms:
        assert self._t0 is not None, "clock not started"
        return self.epoch_ms + int((trio.current_time() - self._t0) * SECOND_MS * self.speed)

    async def wait_until(self, t_ms: Ms) -> None:
        await trio.sleep_until(self.trio_time(t_ms))

    def lag_ms(self, t_ms: Ms) -> Ms:
        return self.virtual_now_ms() - t_ms


def wall_seconds() -> float:
    """Monotonic wall seconds, for measuring how long a run took (never for rule decisions)."""
    return time.perf_counter()
