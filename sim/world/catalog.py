"""The initial catalog: the videos known at the start, with their families and curves.

Randomness (style-anchors R9). Every quantity has its own stream, ``fresh_numpy("catalog", q)``
or ``fresh_numpy("curves", q)``, and is drawn for *every* video in slot order, songs first
(slots ``0..songs-1``), then non-songs. Consequences, by construction:

* building twice from the same seed gives identical arrays (keyed streams are not consumed);
* changing one family's weight re-labels some videos but changes no other draw;
* changing one family's parameters changes only that family's videos;
* adding non-songs appends draws and leaves every song's draws as they were (numpy draws are
  prefix-stable), and growing ``songs`` shifts non-songs' draws by that many slots only.

After the draws, videos are sorted by publication time; the aid is then a function of that rank
(:mod:`sim.world.ids`), so aids grow with publication time as bilibili's do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sim.rng import RandomStreams
from sim.scenario.document import Scenario
from sim.world import families as fm
from sim.world.curves import NEVER_MS, Family
from sim.world.families import F8, I8, Draft
from sim.world.traffic import TrafficClock

I1 = npt.NDArray[np.int8]
B1 = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class InitialCatalog:
    """The initial catalog before aids are assigned, sorted by publication time."""

    published_ms: I8
    family: I1
    is_song: B1
    draft: Draft
    recount_index: I8
    """Rows that get recount steps."""
    recount_ms: I8
    """Step instants per recount row, sorted, padded with :data:`NEVER_MS`."""
    recount_fraction: F8
    """Drop of each step as a fraction of the views just before it."""


def family_of(u: F8, weights: tuple[float, ...]) -> I1:
    """Map uniforms to families in proportion to ``weights`` (inverse CDF)."""
    w = np.asarray(weights, dtype=np.float64)
    out: I1 = np.searchsorted(np.cumsum(w) / w.sum(), u, side="right").astype(np.int8)
    return np.minimum(out, len(weights) - 1).astype(np.int8)


def ages_ms(family: I1, u: F8, scenario: Scenario) -> I8:
    """Time from publication to the start: fresh videos within ``fresh_window``, the others a
    truncated exponential on ``[fresh_window, max_age]`` (most uploads are recent)."""
    cat, window = scenario.catalog, scenario.curves.fresh_window
    lo = float(window) if window < cat.max_age else 0.0
    span, scale = cat.max_age - lo, float(cat.age_scale)
    old = lo - scale * np.log1p(-u * -np.expm1(-span / scale))
    new = u * min(window, cat.max_age)
    age = np.where(family == Family.FRESH, new, old)
    out: I8 = np.clip(np.round(age), 1, cat.max_age).astype(np.int64)
    return out


def draw_initial(scenario: Scenario, streams: RandomStreams, clock: TrafficClock) -> InitialCatalog:
    """Draw the initial catalog of ``catalog.songs + catalog.non_songs`` videos."""
    cat, cur = scenario.catalog, scenario.curves
    n = cat.songs + cat.non_songs
    is_song = np.arange(n) < cat.songs
    family = family_of(_uniform(streams, "catalog", "family", n), cur.weights.as_tuple())
    age_ms = ages_ms(family, _uniform(streams, "catalog", "age", n), scenario)
    published = scenario.start_ms - age_ms
    z = _normal(streams, "catalog", "views", n)
    views = np.where(
        is_song,
        fm.lognormal(z, cat.song_views_median, cat.song_views_sigma),
        fm.lognormal(z, cat.other_views_median, cat.other_views_sigma),
    )
    del z
    views = np.minimum(views, 2e9)  # views is an int column in video_snapshot (§2.2)
    rate = np.zeros(n)
    appr = np.flatnonzero(family == Family.APPROACHER)
    if appr.size:
        published[appr], rate[appr], views[appr] = _approachers(
            scenario, streams, clock, appr, n, published[appr]
        )
    # Slot order -> publication order; every per-slot draw moves with its video.
    order = np.argsort(published, kind="stable")
    published, family, is_song = published[order], family[order], is_song[order]
    views, rate = views[order], rate[order]
    draws = _Draws(streams, n, cur.recount_steps_max, order)
    d = Draft.zeros(published, clock)
    _fill_curves(d, family, views, rate, draws, scenario, clock)
    rc = np.flatnonzero(family == Family.RECOUNT)
    recount_ms, frac = _recount_plan(draws, rc, scenario)
    return InitialCatalog(published, family, is_song, d, rc, recount_ms, frac)


def _uniform(streams: RandomStreams, stream: str, q: str, size: int | tuple[int, int]) -> F8:
    out: F8 = streams.fresh_numpy(stream, q).random(size)
    return out


def _normal(streams: RandomStreams, stream: str, q: str, size: int | tuple[int, int]) -> F8:
    out: F8 = streams.fresh_numpy(stream, q).standard_normal(size)
    return out


@dataclass(frozen=True)
class _Draws:
    """The curves' per-slot draws, read by publication rank.

    Each quantity is drawn for every slot from its own keyed stream (the module docstring) when
    it is asked for, and only the rows asked for are kept: no more than one quantity's draws for
    every video is alive at a time (at 20M videos, all seventeen a video at once took 2.7 GB,
    and reordering them by publication made a second copy).
    """

    streams: RandomStreams
    n: int
    steps: int
    """Draws per video of the recount quantities (``recount_steps_max``)."""
    slot: I8
    """Publication rank -> slot."""

    def uniform(self, q: str, rows: I8) -> F8:
        """``curves`` quantity ``q`` of the videos at publication ranks ``rows``."""
        out: F8 = _uniform(self.streams, "curves", q, self.n)[self.slot[rows]]
        return out

    def normal(self, q: str, rows: I8) -> F8:
        out: F8 = _normal(self.streams, "curves", q, self.n)[self.slot[rows]]
        return out

    def uniform_steps(self, q: str, rows: I8) -> F8:
        """Per recount step: an ``(len(rows), steps)`` array."""
        out: F8 = _uniform(self.streams, "curves", q, (self.n, self.steps))[self.slot[rows]]
        return out

    def normal_steps(self, q: str, rows: I8) -> F8:
        out: F8 = _normal(self.streams, "curves", q, (self.n, self.steps))[self.slot[rows]]
        return out


def _fill_curves(
    d: Draft,
    family: I1,
    views: F8,
    rate: F8,
    draws: _Draws,
    scenario: Scenario,
    clock: TrafficClock,
) -> None:
    """Set every family's parameters so that each video shows ``views`` at the start."""
    cur, start, end = scenario.curves, scenario.start_ms, scenario.end_ms
    s0 = clock.hours(start) - d.start_hours

    def members(*fams: Family) -> I8:
        out: I8 = np.flatnonzero(np.isin(family, [int(f) for f in fams]))
        return out

    sel = members(Family.DORMANT)
    fm.dormant(d, sel, views[sel])
    sel = members(Family.STEADY, Family.VIRAL, Family.RECOUNT)
    fm.steady(d, sel, views[sel], s0[sel], draws.normal("steady", sel), cur)
    sel = members(Family.FRESH)
    fm.fresh(d, sel, draws.normal("fresh.size", sel), draws.normal("fresh.half", sel), cur)
    sel = members(Family.VIRAL)
    u_surge = draws.uniform("viral.when", sel)
    centre_ms = start + np.round(u_surge * (end - start)).astype(np.int64)
    centre = clock.hours_many(centre_ms) - d.start_hours[sel]
    z = (draws.normal("viral.size", sel), draws.normal("viral.rise", sel))
    fm.surge(d, sel, centre, *z, draws.normal("viral.decay", sel), cur)
    fm.viral_offset(d, sel, views[sel], s0[sel])
    sel = members(Family.APPROACHER)
    d.rate[sel] = rate[sel]
    d.offset[sel] = np.maximum(views[sel] - rate[sel] * s0[sel], 0.0)


def _recount_plan(draws: _Draws, rc: I8, scenario: Scenario) -> tuple[I8, F8]:
    """Step instants (sorted, padded with :data:`NEVER_MS`) and drop fractions of the recount
    videos at publication ranks ``rc``. The drops in views are set later, on the finished
    curve."""
    cur, start, end = scenario.curves, scenario.start_ms, scenario.end_ms
    u_steps = draws.uniform("recount.count", rc)
    count = 1 + np.floor(u_steps * cur.recount_steps_max).astype(np.int64)
    used = np.arange(cur.recount_steps_max) < count[:, None]
    recount_ms = np.full(used.shape, NEVER_MS, np.int64)
    at = start + draws.uniform_steps("recount.when", rc) * (end - start)
    recount_ms[used] = np.round(at[used]).astype(np.int64)
    recount_ms.sort(axis=1)
    z_drop = draws.normal_steps("recount.size", rc)
    frac = np.minimum(fm.lognormal(z_drop, cur.recount_drop_median, cur.recount_drop_sigma), 1.0)
    return recount_ms, frac


def _approachers(
    scenario: Scenario,
    streams: RandomStreams,
    clock: TrafficClock,
    sel: I8,
    n: int,
    published: I8,
) -> tuple[I8, F8, F8]:
    """Publication time, rate and views at the start of the approachers ``sel``.

    A linear curve cannot have started below zero views, so an approacher too fast for its
    drawn age is made younger: published when its line crossed zero.
    """

    def u(q: str) -> F8:
        out: F8 = streams.fresh_numpy("curves", f"approach.{q}").random(n)[sel]
        return out

    hours0 = clock.hours(scenario.start_ms)
    run_hours = clock.hours(scenario.end_ms) - hours0
    _, rate, views = fm.approach_plan(
        u("target"), u("n"), u("rate"), u("when"), run_hours, scenario.curves
    )
    life = np.minimum(hours0 - clock.hours_many(published), views / rate)
    pub = np.minimum(clock.instant_many(hours0 - life), scenario.start_ms - 1)
    return pub, rate, views
