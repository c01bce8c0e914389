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

import time
from typing import Protocol

import trio

from sim.units import SECOND_MS, Ms


class Clock(Protocol):
    """What the engine needs from a clock."""

    epoch_ms: Ms

    def start(self) -> None:
        """Called once, inside ``trio.run``, when the run begins at ``epoch_ms``."""

    async def wait_until(self, t_ms: Ms) -> None:
        """Return when virtual time ``t_ms`` may be executed."""

    def lag_ms(self, t_ms: Ms) -> Ms:
        """How far the wall clock is behind (<0) or ahead (>0) of virtual ``t_ms``; 0 if virtual."""

    @property
    def is_virtual(self) -> bool:
        """True when time only moves from event to event."""


class VirtualClock:
    """Discrete-event time: no waiting at all."""

    def __init__(self, epoch_ms: Ms) -> None:
        self.epoch_ms = epoch_ms

    def start(self) -> None:
        pass

    async def wait_until(self, t_ms: Ms) -> None:
        return None

    def lag_ms(self, t_ms: Ms) -> Ms:
        return 0

    @property
    def is_virtual(self) -> bool:
        return True


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

    def start(self) -> None:
        self._t0 = trio.current_time()

    def trio_time(self, t_ms: Ms) -> float:
        """trio's time at which virtual ``t_ms`` is due."""
        assert self._t0 is not None, "clock not started"
        return self._t0 + (t_ms - self.epoch_ms) / (SECOND_MS * self.speed)

    def virtual_now_ms(self) -> Ms:
        """The virtual instant corresponding to trio's current time."""
        assert self._t0 is not None, "clock not started"
        return self.epoch_ms + int((trio.current_time() - self._t0) * SECOND_MS * self.speed)

    async def wait_until(self, t_ms: Ms) -> None:
        await trio.sleep_until(self.trio_time(t_ms))

    def lag_ms(self, t_ms: Ms) -> Ms:
        return self.virtual_now_ms() - t_ms

    @property
    def is_virtual(self) -> bool:
        return False


def wall_seconds() -> float:
    """Monotonic wall seconds, for measuring how long a run took (never for rule decisions)."""
    return time.perf_counter()
