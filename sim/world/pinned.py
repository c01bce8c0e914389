"""Pinned videos (``[[world.videos]]``): each takes the place of one drawn catalogue video.

Which one: the drawn video that already has the pinned aid, if one does (so no aid is ever held
twice), else the drawn video of the same kind (song or not) published closest to the pinned
one, ties to the lower index. The pinned video keeps that video's index, so every other video
keeps its index, aid, curve and availability; the catalogue stays in publication order but for
the pinned rows. A pinned video is never unavailable.

Its curve parameters are rounded to float32 before the offset is derived from ``views``, as the
drawn families do (:mod:`sim.world.families`), and the offset is then raised to the next float
until the curve shows ``views`` at the start exactly (a float sum may floor one view short).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from sim.scenario.document import Scenario
from sim.scenario.parse import ScenarioError
from sim.units import HOUR_MS
from sim.world import families as fm
from sim.world.catalog import InitialCatalog
from sim.world.curves import NEVER_MS, SHAPE_TERMS, Family
from sim.world.families import I8, Draft
from sim.world.ids import AidCodec
from sim.world.traffic import TrafficClock

DRAFT_COLUMNS = ("offset", "rate", *SHAPE_TERMS)
"""The curve columns a pin sets (its start hours come from its age)."""


class PinnedCurves(NamedTuple):
    """The pinned videos' curves, one row per pin in scenario order."""

    draft: Draft
    offset_needed: list[float]
    """Per pin: views the curve's own terms give at the start (the offset is ``views`` minus
    this, so ``views`` below it cannot be drawn)."""


def pinned_curves(scenario: Scenario, clock: TrafficClock) -> PinnedCurves:
    """The curves of ``[[world.videos]]`` (start hours from ``age``; offsets from ``views``)."""
    pins = scenario.world.videos
    cur = scenario.curves
    published = np.array([scenario.start_ms - v.age for v in pins], np.int64)
    d = Draft.zeros(published, clock)
    s0 = clock.hours(scenario.start_ms) - d.start_hours
    for k, v in enumerate(pins):
        d.rate[k] = v.rate_per_hour
        if v.burst is not None and v.half_life is not None:
            d.burst[k], d.half[k] = v.burst, v.half_life / HOUR_MS
        if v.surge is not None and v.surge_after is not None:
            centre = clock.hours(scenario.start_ms + v.surge_after)
            d.surge[k], d.surge_at[k] = v.surge, centre - d.start_hours[k]
            d.rise[k] = (v.rise or cur.viral_rise_median) / HOUR_MS
            d.decay[k] = (v.decay or cur.viral_decay_median) / HOUR_MS
    for name in DRAFT_COLUMNS[1:]:
        setattr(d, name, fm.f32(getattr(d, name)))
    rows = np.arange(len(pins))
    own = d.rate * s0 + d.burst * s0 / (s0 + d.half) + fm.surge_term(d, rows, s0)
    views = np.array([float(v.views) for v in pins])
    d.offset = np.maximum(views - own, 0.0)
    hours = clock.hours(scenario.start_ms)
    for k, v in enumerate(pins):  # the table's own scalar path: what the upstream will answer
        while d.table().value(k, hours, scenario.start_ms) < v.views:
            d.offset[k] = np.nextafter(d.offset[k], np.inf)
    return PinnedCurves(d, own.tolist())


def pin_problems(scenario: Scenario, curves: PinnedCurves | None = None) -> list[str]:
    """Pinned videos whose ``views`` at the start are fewer than their own growth since
    publication gives (the curve would have started below zero views). Cheap: the commands
    ask it at load, before anything runs, and the world again, with the ``curves`` it builds
    from, when it is drawn."""
    if not scenario.world.videos:
        return []
    if curves is None:
        cur = scenario.curves
        clock = TrafficClock(cur.hourly_profile, cur.day_night_amplitude, scenario.timezone)
        curves = pinned_curves(scenario, clock)
    out = []
    for k, (v, own) in enumerate(zip(scenario.world.videos, curves.offset_needed, strict=True)):
        if v.views + 0.5 < own:
            out.append(
                f"world.videos[{k}] (aid {v.aid}): views = {v.views:,} at the start is fewer "
                f"than the curve itself gains in its age of {v.age / HOUR_MS:,.1f} h "
                f"({own:,.0f} views); raise views, or lower age or the growth terms"
            )
    return out


def pinned_rows(first: InitialCatalog, scenario: Scenario, codec: AidCodec, n: int) -> I8:
    """The index each pinned video takes (module docstring); ``n`` counts every video of the
    world, arrivals included, whose aids a pin must not take."""
    pins = scenario.world.videos
    n0 = len(first.published_ms)
    rows = np.full(len(pins), -1, np.int64)
    taken = np.zeros(n0, bool)
    for k, v in enumerate(pins):
        i = codec.index(v.aid, n)
        if i >= n0:
            raise ScenarioError(
                [
                    f"world.videos[{k}]: aid {v.aid} is the aid a video published during the run "
                    f"gets under seed {scenario.seed}; pin another aid"
                ]
            )
        if i >= 0:
            rows[k], taken[i] = i, True
    for k, v in enumerate(pins):
        if rows[k] >= 0:
            continue
        published = scenario.start_ms - v.age
        free = np.flatnonzero((first.is_song == v.song) & ~taken)
        i = int(free[np.argmin(np.abs(first.published_ms[free] - published))])
        rows[k], taken[i] = i, True
    return rows


def apply_pins(
    first: InitialCatalog, scenario: Scenario, pinned: PinnedCurves, rows: I8
) -> InitialCatalog:
    """``first`` with the pinned videos in ``rows`` (curves, family, kind, publication and
    recount steps replaced; the draws of every other row untouched)."""
    pins = scenario.world.videos
    if not pins:
        return first
    curves = pinned.draft
    published, family, is_song = (
        first.published_ms.copy(),
        first.family.copy(),
        first.is_song.copy(),
    )
    d = dataclasses.replace(first.draft)
    d.start_hours, d.published_ms = d.start_hours.copy(), published
    for name in DRAFT_COLUMNS:
        setattr(d, name, getattr(d, name).copy())
    for k, v in enumerate(pins):
        i = int(rows[k])
        published[i] = scenario.start_ms - v.age
        family[i] = Family[v.family.upper()]
        is_song[i] = v.song
        d.start_hours[i] = curves.start_hours[k]
        for name in DRAFT_COLUMNS:
            getattr(d, name)[i] = getattr(curves, name)[k]
    rc_rows, rc_ms, rc_frac = _recounts(first, scenario, rows)
    return InitialCatalog(published, family, is_song, d, rc_rows, rc_ms, rc_frac)


def _recounts(first: InitialCatalog, scenario: Scenario, rows: I8) -> tuple[I8, I8, fm.F8]:
    """The recount plan with the replaced rows' steps dropped and the pinned ones' added."""
    pins = scenario.world.videos
    keep = ~np.isin(first.recount_index, rows)
    own = [(int(rows[k]), v.recounts) for k, v in enumerate(pins) if v.recounts]
    width = max([first.recount_ms.shape[1], *(len(r) for _, r in own)])
    ms = np.full((int(keep.sum()) + len(own), width), NEVER_MS, np.int64)
    frac = np.zeros(ms.shape)
    ms[: keep.sum(), : first.recount_ms.shape[1]] = first.recount_ms[keep]
    frac[: keep.sum(), : first.recount_ms.shape[1]] = first.recount_fraction[keep]
    index = np.concatenate([first.recount_index[keep], [i for i, _ in own]]).astype(np.int64)
    for j, (_, steps) in enumerate(own, start=int(keep.sum())):
        ms[j, : len(steps)] = [scenario.start_ms + r.after for r in steps]
        frac[j, : len(steps)] = [r.fraction for r in steps]
    order = np.argsort(index, kind="stable")
    return index[order], ms[order], frac[order]
