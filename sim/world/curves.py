"""View curves: one closed-form cumulative-views function per video, scalar and vectorised.

A video's views at ``t`` are, with ``s = max(0, T(t) - T(published))`` in traffic hours
(:mod:`sim.world.traffic`)::

    V(t) = max(0, floor(offset + rate*s + burst*s/(s + half) + surge_term(s)) - drops(t))

* ``rate*s``: steady growth (views per traffic hour), so it follows the day/night cycle.
* ``burst*s/(s + half)``: a fresh release. Its rate ``burst*half/(s + half)^2`` is highest at
  launch and decays as a power law over days; half the burst arrives after ``half`` hours.
* ``surge_term``: a viral surge of ``surge`` views centred ``surge_at`` hours after publication,
  ``surge/2 * (q(y) - q(y0))`` with ``q(y) = y/sqrt(1 + y^2)``, ``y = (s - surge_at)/w``; ``w`` is
  the rise time before the centre and the decay time after it (``y0`` is ``y`` at ``s = 0``).
* ``drops(t)``: bilibili's recounts, downward steps at known instants (reference §18 Q10).

Every term is monotone in ``s`` and uses only ``+ - * / sqrt``, which IEEE 754 rounds correctly
in both Python and numpy, so :meth:`CurveTable.value` (Python floats, compiled in
:mod:`sim.world.scalar`; the scheduler's per-snapshot path) and :meth:`CurveTable.values`
(numpy) agree exactly when they perform the same operations in the same order, as they do
here. float32 parameters are widened to float64 before any arithmetic on both paths. Terms
whose parameter is zero are skipped: adding ``+0.0`` leaves a float unchanged, so skipping them
does not change the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from sim.units import Ms

# The flag bits live with the scalar form of a curve (compiled, light); re-exported here.
from sim.world.scalar import FRESH_BIT as FRESH_BIT
from sim.world.scalar import RECOUNT_BIT as RECOUNT_BIT
from sim.world.scalar import ROW_SHIFT as ROW_SHIFT
from sim.world.scalar import SURGE_BIT as SURGE_BIT
from sim.world.scalar import curve_value
from sim.world.traffic import TrafficClock

F8 = npt.NDArray[np.float64]
F4 = npt.NDArray[np.float32]
I8 = npt.NDArray[np.int64]
U4 = npt.NDArray[np.uint32]


NEVER_MS: Ms = np.iinfo(np.int64).max
"""An instant that never comes (padding for step tables, "until" of permanent errors)."""


class Family(IntEnum):
    """The kinds of view curve (stored as ``int8``); see ``[curves.weights]``."""

    DORMANT = 0
    STEADY = 1
    FRESH = 2
    VIRAL = 3
    APPROACHER = 4
    RECOUNT = 5


@dataclass(frozen=True)
class RecountSteps:
    """Downward corrections: for the videos ``index`` (sorted), step instants ``t_ms`` (sorted
    per row, padded with :data:`NEVER_MS`) and the *cumulative* drop in force from each step."""

    index: I8
    t_ms: I8
    cum_drop: I8
    _rows: dict[int, tuple[tuple[int, int], ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rows = {
            int(i): tuple((int(t), int(d)) for t, d in zip(ts, ds, strict=True) if t != NEVER_MS)
            for i, ts, ds in zip(self.index, self.t_ms, self.cum_drop, strict=True)
        }
        object.__setattr__(self, "_rows", rows)

    @classmethod
    def empty(cls) -> RecountSteps:
        """No recounts at all."""
        z = np.zeros((0, 1), np.int64)
        return cls(np.zeros(0, np.int64), z, z.copy())

    def drop(self, i: int, t_ms: Ms) -> int:
        """Total drop in force at ``t_ms`` for video ``i`` (0 when it has no steps)."""
        total = 0
        for step_ms, cum in self._rows.get(i, ()):
            if t_ms < step_ms:
                break
            total = cum
        return total

    def drops(self, idx: I8, t_ms: I8) -> I8:
        """Element-wise :meth:`drop`; every ``idx`` must have steps."""
        row = np.searchsorted(self.index, idx)
        out = np.zeros(len(idx), np.int64)
        for j in range(self.t_ms.shape[1]):
            out = np.where(t_ms >= self.t_ms[row, j], self.cum_drop[row, j], out)
        return out


SHAPE_TERMS = ("burst", "half", "surge", "surge_at", "rise", "decay")
"""The columns of :class:`ShapeTerms`."""


@dataclass(frozen=True)
class ShapeTerms:
    """The burst and surge parameters, kept only for the videos whose curve has either term
    (:data:`FRESH_BIT` or :data:`SURGE_BIT`), by row: video ``i``'s row is
    ``flags[i] >> ROW_SHIFT`` (:class:`CurveTable`). They are under 1 % of a drawn catalogue
    plus the uploads; the six columns held for every video were 24 bytes a video, 480 MB at
    20M videos."""

    burst: F4
    """Launch-burst size (views); 0 for none."""
    half: F4
    """Traffic hours to gain half the burst (> 0)."""
    surge: F4
    """Surge size (views); 0 for none."""
    surge_at: F4
    """Traffic hours from publication to the surge's centre."""
    rise: F4
    """Rise time of the surge (traffic hours, > 0)."""
    decay: F4
    """Decay time of the surge (traffic hours, > 0)."""

    @property
    def columns(self) -> tuple[F4, ...]:
        """The arrays, in :data:`SHAPE_TERMS`' order."""
        return tuple(getattr(self, name) for name in SHAPE_TERMS)


@dataclass(frozen=True)
class CurveTable:
    """Per-video curve parameters as compact columns (one row per video index)."""

    offset: F8
    """Views the curve starts from at publication (float views)."""
    published_ms: I8
    """When the video was published (the world's own column): its curve starts at
    ``clock.hours(published_ms)``, computed as it is needed (``hours_many`` equals ``hours``
    bit for bit), not held as another column of 8 bytes a video."""
    rate: F4
    """Steady growth, views per traffic hour."""
    flags: U4
    """:data:`FRESH_BIT` | :data:`SURGE_BIT` | :data:`RECOUNT_BIT`, and above
    :data:`ROW_SHIFT` bits the video's row in ``terms`` when it has a burst or a surge (one
    column, so the scalar form finds the row with no lookup)."""
    terms: ShapeTerms
    """The burst and surge parameters of the videos that have them."""
    recount: RecountSteps
    clock: TrafficClock = field(repr=False, compare=False)
    _mv: tuple[memoryview, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # memoryview indexing returns Python floats/ints directly, not numpy scalars, which are
        # slower to make and to compute with. The order is curve_value's.
        t = self.terms
        cols = (self.offset, self.published_ms, self.rate, t.burst, t.half, t.surge, t.surge_at)
        more = (t.rise, t.decay, self.flags)
        object.__setattr__(self, "_mv", tuple(a.data for a in (*cols, *more)))

    def __len__(self) -> int:
        return len(self.offset)

    @property
    def nbytes(self) -> int:
        """Bytes held by the columns, the burst and surge terms and the recount table."""
        rc = self.recount
        own: tuple[npt.NDArray[np.generic], ...] = (self.offset, self.published_ms, self.rate)
        own += (self.flags, *self.terms.columns, rc.index, rc.t_ms, rc.cum_drop)
        return sum(a.nbytes for a in own)

    def value(self, i: int, hours: float, t_ms: Ms) -> int:
        """Views of video ``i`` at ``t_ms``, whose traffic clock reads ``hours`` (compiled:
        :func:`sim.world.scalar.curve_value`)."""
        return curve_value(self._mv, self.recount.drop, self.clock.hours, i, hours, t_ms)

    def values(self, idx: I8 | None, hours: float | F8, t_ms: Ms | I8) -> I8:
        """Views of the videos ``idx`` (``None``: all) at ``t_ms`` (a scalar or one per video).

        ``hours`` is ``T(t_ms)`` with the same shape as ``t_ms``. Equal element for element to
        :meth:`value`.
        """

        if idx is None:
            published, offset, rate, flags = self.published_ms, self.offset, self.rate, self.flags
        else:
            published, offset, rate = self.published_ms[idx], self.offset[idx], self.rate[idx]
            flags = self.flags[idx]
        s = hours - self.clock.hours_many(published)
        np.maximum(s, 0.0, out=s)
        g = offset + rate.astype(np.float64) * s
        terms = self.terms
        sel = np.flatnonzero(flags & FRESH_BIT)
        if sel.size:
            r = flags[sel] >> ROW_SHIFT
            ss = s[sel]
            burst = terms.burst[r].astype(np.float64)
            g[sel] = g[sel] + burst * ss / (ss + terms.half[r].astype(np.float64))
        sel = np.flatnonzero(flags & SURGE_BIT)
        if sel.size:
            g[sel] = g[sel] + self._surge_terms(flags[sel] >> ROW_SHIFT, s[sel])
        v: I8 = np.floor(g).astype(np.int64)
        sel = np.flatnonzero(flags & RECOUNT_BIT)
        if sel.size:
            j = sel if idx is None else idx[sel]
            t_sel = np.broadcast_to(np.asarray(t_ms, np.int64), v.shape)[sel]
            v[sel] -= self.recount.drops(j, t_sel)
        np.maximum(v, 0, out=v)
        return v

    def _surge_terms(self, r: npt.NDArray[np.integer], s: F8) -> F8:
        t = self.terms
        c = t.surge_at[r].astype(np.float64)
        rise = t.rise[r].astype(np.float64)
        d = s - c
        y = d / np.where(d < 0, rise, t.decay[r].astype(np.float64))
        y0 = -c / rise
        surge = t.surge[r].astype(np.float64)
        out: F8 = surge * 0.5 * (y / np.sqrt(1 + y * y) - y0 / np.sqrt(1 + y0 * y0))
        return out
