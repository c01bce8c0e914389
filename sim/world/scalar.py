"""The world's answers for one video at one instant, compiled (sim._native).

The simulated upstream asks ``views`` and ``api_error`` for every aid of every request: about
twice per snapshot taken, some 18 million times in a full-scale month. So the aid check, the
traffic-clock cache and the curve are here, in one compiled class, where interpreted code spread
over four classes would cost several Python frames per answer. The arithmetic is
:func:`curve_value`, which :meth:`sim.world.curves.CurveTable.value` also calls, so there is one
scalar form of a curve; its vectorised twin :meth:`~sim.world.curves.CurveTable.values` performs
the same operations in the same order (the curves module says why that makes them equal bit for
bit).

The columns arrive as memoryviews of the world's numpy arrays, typed ``Any`` here: indexing one
gives a Python float (float32 and float64 columns alike, widened exactly) or int, which the
annotated locals below unbox, so the arithmetic is on C doubles with Python's semantics.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from sim.units import Ms

FRESH_BIT: Final = 1
"""``flags`` bit: the burst term is non-zero."""
SURGE_BIT: Final = 2
"""``flags`` bit: the surge term is non-zero."""
RECOUNT_BIT: Final = 4
"""``flags`` bit: the video has recount steps."""
ROW_SHIFT: Final = 3
"""``flags >> ROW_SHIFT``: the row of a video's burst and surge terms, if it has either."""


def curve_value(
    cols: tuple[Any, ...],
    drop: Callable[[int, Ms], int],
    hours_of: Callable[[Ms], float],
    i: int,
    hours: float,
    t_ms: Ms,
) -> int:
    """Views of video ``i`` at ``t_ms``, whose traffic clock reads ``hours``; ``cols`` are the
    curve columns (offset, published_ms, rate, burst, half, surge, surge_at, rise, decay,
    flags), ``drop`` the recount steps' ``drop(i, t_ms)`` and ``hours_of`` the traffic clock's
    ``T``. burst to decay are kept only for the videos with a burst or a surge, by the row in
    their flags' high bits (:class:`sim.world.curves.ShapeTerms`)."""
    start = hours_of(cols[1][i])
    s = hours - start
    if s < 0.0:
        s = 0.0
    offset: float = cols[0][i]
    rate: float = cols[2][i]
    g = offset + rate * s
    fl: int = cols[9][i]
    if not fl:
        v = math.floor(g)
        return v if v > 0 else 0
    r = fl >> ROW_SHIFT
    if fl & FRESH_BIT:
        burst: float = cols[3][r]
        half: float = cols[4][r]
        g = g + burst * s / (s + half)
    if fl & SURGE_BIT:
        surge: float = cols[5][r]
        c: float = cols[6][r]
        rise: float = cols[7][r]
        decay: float = cols[8][r]
        d = s - c
        y = d / (rise if d < 0 else decay)
        y0 = -c / rise
        g = g + surge * 0.5 * (y / math.sqrt(1 + y * y) - y0 / math.sqrt(1 + y0 * y0))
    v = math.floor(g)
    if fl & RECOUNT_BIT:
        v -= drop(i, t_ms)
    return v if v > 0 else 0


def error_in_force(unavailable: dict[int, tuple[int, int, int]], i: int, t_ms: Ms) -> int:
    """The code in force for video ``i`` at ``t_ms`` (0 = visible); ``unavailable`` maps a
    video to its (from, until, code) (:class:`sim.world.availability.Availability`)."""
    row = unavailable.get(i)
    if row is None or not row[0] <= t_ms < row[1]:
        return 0
    return row[2]


class ScalarWorld:
    """``views(aid, t)`` and ``api_error(aid, t)`` of :class:`sim.world.World`, one video at a
    time (the world builds one and delegates to it)."""

    def __init__(
        self,
        n: int,
        aid_salt: int,
        published_ms: Any,
        cols: tuple[Any, ...],
        drop: Callable[[int, Ms], int],
        unavailable: dict[int, tuple[int, int, int]],
        pinned: dict[int, int],
        hours: Callable[[Ms], float],
        aid_base: int,
        aid_stride: int,
        aid_mix: int,
        deleted_code: int,
        start_ms: Ms,
    ) -> None:
        self._published = published_ms
        self._n = n
        self._salt = aid_salt
        self._cols = cols
        self._drop = drop
        self._unavailable = unavailable
        self._pinned = pinned
        self._pinned_rows = set(pinned.values())
        self._hours = hours
        self._base = aid_base
        self._stride = aid_stride
        self._mix = aid_mix
        self._deleted = deleted_code
        self._last_t: Ms = start_ms  # a one-entry cache of T(t): a request asks one instant
        self._last_hours: float = hours(start_ms)

    def index(self, aid: int) -> int:
        """The video index of ``aid``; ``KeyError`` for an aid the world never had. An aid is
        the codec's (:class:`sim.world.ids.AidCodec`, computed here, not read from a column of
        8 bytes a video), but for a pinned video's (:mod:`sim.world.pinned`): that one is looked
        up in ``pinned``, and the aid its row would have had is no longer found."""
        stride = self._stride
        i = (aid - self._base) // stride
        jitter = aid - self._base - i * stride
        known = 0 <= i < self._n and (i + self._salt) * self._mix % stride == jitter
        if known and not (self._pinned_rows and i in self._pinned_rows):
            return i
        return self._pinned[aid]

    def views(self, aid: int, t_ms: Ms) -> int:
        i = self.index(aid)
        if t_ms != self._last_t:
            self._last_hours = self._hours(t_ms)
            self._last_t = t_ms
        return curve_value(self._cols, self._drop, self._hours, i, self._last_hours, t_ms)

    def api_error(self, aid: int, t_ms: Ms) -> int:
        i = self.index(aid)
        published: int = self._published[i]
        if t_ms < published:
            return self._deleted
        return error_in_force(self._unavailable, i, t_ms)
