"""The traffic clock: hours weighted by how busy bilibili is at each local hour.

Every view curve is written in *traffic hours* ``T(t)`` instead of wall hours: a video's
cumulative views are ``H(T(t) - T(published))`` for an analytic ``H``. By the chain rule its rate
is ``H'(...) * m(t)``, where ``m`` is the day/night profile (mean 1). So every family follows the
evening peak of UTC+8 for free, cumulative views stay closed-form, and one scalar ``T(t)`` serves
a whole vectorised evaluation at one instant.

``m`` is piecewise linear between the 24 hourly knots of the scenario's profile, so ``T`` is
piecewise quadratic: only ``+ - * /`` (plus ``sqrt`` for the inverse), all correctly rounded in
both Python and numpy. That is what lets the scalar and the vectorised paths agree bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from sim.units import DAY_MS, HOUR_MS, Ms

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class TrafficClock:
    """``T(t)``: traffic-weighted hours since the local epoch (1970-01-01 00:00 local).

    Args:
        profile: relative traffic at the start of each local hour (24 values).
        amplitude: 0 flattens the profile to 1; 1 keeps it as written.
        tz_offset_ms: local time = UTC + this offset (the scenario's ``timezone``).
    """

    def __init__(self, profile: Sequence[float], amplitude: float, tz_offset_ms: Ms) -> None:
        if len(profile) != 24:
            raise ValueError(f"profile must have 24 values (got {len(profile)})")
        mean = sum(profile) / 24
        rate = [1.0 + amplitude * (p / mean - 1.0) for p in profile]
        if min(rate) <= 0:
            raise ValueError("profile and amplitude must keep every hour's traffic > 0")
        self.tz_offset_ms = tz_offset_ms
        self.rate: list[float] = rate
        """Traffic multiplier at each knot (mean 1 over a day)."""
        nxt = [*rate[1:], rate[0]]
        self._half_slope = [(b - a) / 2 for a, b in zip(rate, nxt, strict=True)]
        cum = [0.0]
        for k in range(24):
            cum.append(cum[-1] + rate[k] + self._half_slope[k])
        self._cum = cum
        self.day_hours: float = cum[24]
        """Traffic hours in one day (24 up to rounding)."""
        self._np_rate = np.array(rate)
        self._np_half = np.array(self._half_slope)
        self._np_cum = np.array(cum)

    def hours(self, t_ms: Ms) -> float:
        """``T(t)`` for one instant (compiled: the world asks it at every new instant, and as a
        bound method of an interpreted class it would be an interpreted frame each time)."""
        local = t_ms + self.tz_offset_ms
        day = local // DAY_MS
        rem = local - day * DAY_MS
        k = rem // HOUR_MS
        f = (rem - k * HOUR_MS) / HOUR_MS
        return day * self.day_hours + self._cum[k] + f * (self.rate[k] + f * self._half_slope[k])

    def hours_many(self, t_ms: npt.ArrayLike) -> FloatArray:
        """``T(t)`` element-wise, equal bit for bit to :meth:`hours` (same operations, order)."""
        local = np.asarray(t_ms, dtype=np.int64) + self.tz_offset_ms
        day = local // DAY_MS
        rem = local - day * DAY_MS
        k = rem // HOUR_MS
        f = (rem - k * HOUR_MS) / HOUR_MS
        out: FloatArray = (
            day * self.day_hours + self._np_cum[k] + f * (self._np_rate[k] + f * self._np_half[k])
        )
        return out

    def instant_many(self, hours: npt.ArrayLike) -> IntArray:
        """The inverse of :meth:`hours_many`: the ms at which ``T`` reaches each value.

        Exact up to the final rounding to whole milliseconds (within the segment, ``T`` is a
        quadratic solved in closed form). Used to place arrivals and publication times, never
        for ground truth, which bisects the curve itself (:mod:`sim.world.truth`).
        """
        h = np.asarray(hours, dtype=np.float64)
        day = np.floor(h / self.day_hours)
        x = h - day * self.day_hours
        k = np.clip(np.searchsorted(self._np_cum, x, side="right") - 1, 0, 23)
        x = x - self._np_cum[k]
        r = self._np_rate[k]
        a = self._np_half[k]
        # Stable root of a*f^2 + r*f - x = 0 for f in [0, 1] (no cancellation when a ~ 0).
        f = 2 * x / (r + np.sqrt(np.maximum(r * r + 4 * a * x, 0.0)))
        f = np.clip(f, 0.0, 1.0)
        local = day * DAY_MS + (k + f) * HOUR_MS
        out: IntArray = np.round(local).astype(np.int64) - self.tz_offset_ms
        return out

    def instant(self, hours: float) -> Ms:
        """Scalar form of :meth:`instant_many`."""
        return int(self.instant_many(np.array([hours]))[0])

    def rate_at(self, t_ms: Ms) -> float:
        """The traffic multiplier ``m(t) = dT/dt`` (dimensionless, mean 1 over a day)."""
        local = t_ms + self.tz_offset_ms
        rem = local % DAY_MS
        k = rem // HOUR_MS
        f = (rem - k * HOUR_MS) / HOUR_MS
        return self.rate[k] + 2 * f * self._half_slope[k]
