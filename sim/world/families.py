"""Parameters of each curve family, drawn vectorised from the scenario's distributions.

A :class:`Draft` holds float64 working columns for a batch of videos; each family function fills
the rows of its members. Parameters are rounded to float32 (:func:`f32`) *before* the offsets
are derived from them, so that the stored table reproduces the intended views at the start.

Every draw takes its random numbers as arguments (one array per quantity, one value per video),
so the caller decides which named stream each quantity comes from (see :mod:`sim.world.catalog`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sim.scenario.world import CurvesSection
from sim.units import HOUR_MS
from sim.world.curves import (
    FRESH_BIT,
    ROW_SHIFT,
    SHAPE_TERMS,
    SURGE_BIT,
    CurveTable,
    RecountSteps,
    ShapeTerms,
)
from sim.world.traffic import TrafficClock

F8 = npt.NDArray[np.float64]
I8 = npt.NDArray[np.int64]

MILLION = 1_000_000


def f32(x: F8) -> F8:
    """``x`` rounded to float32 and widened again: the value the table will store."""
    out: F8 = x.astype(np.float32).astype(np.float64)
    return out


def lognormal(z: F8, median: float, sigma: float) -> F8:
    """``median * exp(sigma * z)`` for standard normal ``z``."""
    out: F8 = median * np.exp(sigma * z)
    return out


@dataclass
class Draft:
    """Working float64 columns for ``n`` videos (see :class:`CurveTable` for their meaning)."""

    offset: F8
    published_ms: I8
    start_hours: F8
    """``clock.hours(published_ms)``, which the table computes as it needs it."""
    rate: F8
    burst: F8
    half: F8
    surge: F8
    surge_at: F8
    rise: F8
    decay: F8
    clock: TrafficClock

    @classmethod
    def zeros(cls, published_ms: I8, clock: TrafficClock) -> Draft:
        """A batch of dormant curves published at ``published_ms`` (the time scales are 1 h so
        that unused terms stay finite)."""
        n = len(published_ms)

        def z() -> F8:
            return np.zeros(n)

        def one() -> F8:
            return np.ones(n)

        start_hours = clock.hours_many(published_ms)
        return cls(z(), published_ms, start_hours, z(), z(), one(), z(), z(), one(), one(), clock)

    def table(self) -> CurveTable:
        """Freeze into a compact :class:`CurveTable` (float32 where it is safe), no recounts."""
        return Draft.table_of([self])

    @staticmethod
    def table_of(parts: list[Draft]) -> CurveTable:
        """The rows of ``parts`` in order, frozen as :meth:`table` does. Built a column at a
        time: at 20M videos a whole concatenated draft was another 1.4 GB at the world's peak."""

        def joined(name: str) -> F8:
            out: F8 = np.concatenate([getattr(p, name) for p in parts])
            return out

        flags = np.zeros(sum(len(p.offset) for p in parts), np.uint32)
        flags[joined("burst") > 0] |= FRESH_BIT
        flags[joined("surge") > 0] |= SURGE_BIT
        index = np.flatnonzero(flags)
        flags[index] |= np.arange(index.size, dtype=np.uint32) << ROW_SHIFT
        terms = {name: joined(name)[index].astype(np.float32) for name in SHAPE_TERMS}
        return CurveTable(
            offset=joined("offset"),
            published_ms=np.concatenate([p.published_ms for p in parts]),
            rate=joined("rate").astype(np.float32),
            flags=flags,
            terms=ShapeTerms(**terms),
            recount=RecountSteps.empty(),
            clock=parts[0].clock,
        )


def steady(d: Draft, sel: I8, views: F8, s0: F8, z_ratio: F8, cfg: CurvesSection) -> None:
    """Slow growth: the current rate is a fraction of the lifetime average (capped at 0.9, so
    the offset, the views the curve "started" from, stays positive)."""
    ratio = np.minimum(
        lognormal(z_ratio, cfg.steady_rate_ratio_median, cfg.steady_rate_ratio_sigma), 0.9
    )
    life = np.maximum(s0, 1.0)
    d.rate[sel] = f32(ratio * views / life)
    d.offset[sel] = np.maximum(views - d.rate[sel] * s0, 0.0)


def dormant(d: Draft, sel: I8, views: F8) -> None:
    """No growth: the views stay where they are."""
    d.offset[sel] = views


def fresh(d: Draft, sel: I8, z_burst: F8, z_half: F8, cfg: CurvesSection) -> None:
    """A launch burst decaying over days, then a slow tail (``fresh_tail_per_day``)."""
    burst = f32(lognormal(z_burst, cfg.fresh_total_median, cfg.fresh_total_sigma))
    d.burst[sel] = burst
    d.half[sel] = f32(lognormal(z_half, cfg.fresh_half_median / HOUR_MS, cfg.fresh_half_sigma))
    d.rate[sel] = f32(burst * cfg.fresh_tail_per_day / 24)
    d.offset[sel] = 0.0


def surge_term(d: Draft, sel: I8, s: F8) -> F8:
    """The surge term of rows ``sel`` at traffic hours ``s`` (same formula as the table)."""
    c, rise = d.surge_at[sel], d.rise[sel]
    diff = s - c
    y = diff / np.where(diff < 0, rise, d.decay[sel])
    y0 = -c / rise
    out: F8 = d.surge[sel] * 0.5 * (y / np.sqrt(1 + y * y) - y0 / np.sqrt(1 + y0 * y0))
    return out


def surge(
    d: Draft, sel: I8, centre_hours: F8, z_size: F8, z_rise: F8, z_decay: F8, cfg: CurvesSection
) -> None:
    """Add a surge centred ``centre_hours`` traffic hours after publication."""
    d.surge[sel] = f32(lognormal(z_size, cfg.viral_surge_median, cfg.viral_surge_sigma))
    d.surge_at[sel] = f32(centre_hours)
    width = cfg.viral_width_sigma
    # At least 6 minutes: keeps |y| small enough that y*y never overflows (and bursts plausible).
    rise = lognormal(z_rise, cfg.viral_rise_median / HOUR_MS, width)
    d.rise[sel] = f32(np.maximum(rise, 0.1))
    decay = lognormal(z_decay, cfg.viral_decay_median / HOUR_MS, width)
    d.decay[sel] = f32(np.maximum(decay, 0.1))


def viral_offset(d: Draft, sel: I8, views: F8, s0: F8) -> None:
    """Shift the offset so that a steady-plus-surge video shows ``views`` at ``s0``."""
    d.offset[sel] = np.maximum(views - d.rate[sel] * s0 - surge_term(d, sel, s0), 0.0)


def milestone_targets(u_kind: F8, u_n: F8, cfg: CurvesSection) -> F8:
    """Milestones an approacher heads for: 100k, 1M or N x 1M with N log-uniform in 2..max."""
    w = np.array(cfg.approach_targets.as_tuple())
    kind = np.searchsorted(np.cumsum(w) / w.sum(), u_kind, side="right")
    n = np.floor(np.exp(np.log(2) + u_n * np.log((cfg.approach_multi_max + 1) / 2)))
    n = np.clip(n, 2, cfg.approach_multi_max)
    out: F8 = np.select([kind == 0, kind == 1], [100_000.0, float(MILLION)], n * MILLION)
    return out


def approach_plan(
    u_kind: F8, u_n: F8, u_rate: F8, u_when: F8, run_hours: float, cfg: CurvesSection
) -> tuple[F8, F8, F8]:
    """Milestone, rate (views per traffic hour) and views at the start of each approacher.

    The crossing falls ``u_when`` of the way through the run, but never further below the
    milestone than ``approach_gap_max`` of it, so fast approachers cross early ("just below").
    """
    target = milestone_targets(u_kind, u_n, cfg)
    lo, hi = np.log(cfg.approach_rate_min), np.log(cfg.approach_rate_max)
    rate = f32(np.exp(lo + u_rate * (hi - lo)))
    hours = np.minimum((0.02 + 0.97 * u_when) * run_hours, cfg.approach_gap_max * target / rate)
    gap = np.maximum(rate * hours, 1.5)
    return target, rate, target - gap
