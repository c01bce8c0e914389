"""Videos published during the run: a Poisson process with a daily cycle.

The upload rate follows ``[arrivals].hourly_profile`` in local time. An inhomogeneous Poisson
process is a homogeneous one in its own cumulative-rate clock, so arrivals are drawn as a
Poisson count of uniform points on the upload clock's hours and mapped back with its exact
inverse (:meth:`TrafficClock.instant_many`): no thinning, no time stepping.

Each arrival is found by ``getLatestVideos`` after a discovery delay and labelled by
``classifyVideo`` after a classification delay; a label != 0 (``is_song``) is what creates the
four ``new`` schedules (reference §13.1-13.2). Arrivals are fresh releases; ``viral_fraction`` of
them also get a surge 1-14 days after publication.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.rng import RandomStreams
from sim.scenario.document import Scenario
from sim.units import DAY_MS
from sim.world import families as fm
from sim.world.catalog import B1, I1
from sim.world.curves import Family
from sim.world.families import F8, I8, Draft
from sim.world.traffic import TrafficClock


@dataclass(frozen=True)
class Arrivals:
    """Videos that appear during ``[start, end)``, sorted by publication time.

    ``discovered_ms`` is when the crawler first sees the video (its first snapshot, §13.1);
    ``classified_ms`` when the classifier stores its label, for songs and non-songs alike.
    """

    published_ms: I8
    discovered_ms: I8
    classified_ms: I8
    is_song: B1
    family: I1

    def __len__(self) -> int:
        return len(self.published_ms)


def upload_clock(scenario: Scenario) -> TrafficClock:
    """The clock whose hours measure expected uploads (mean 1 per hour of the day)."""
    a = scenario.arrivals
    return TrafficClock(a.hourly_profile, a.day_night_amplitude, scenario.timezone)


def draw_arrivals(
    scenario: Scenario, streams: RandomStreams, clock: TrafficClock
) -> tuple[Arrivals, Draft]:
    """Draw the arrivals and their curves (``clock`` is the view-traffic clock)."""
    cfg, cur = scenario.arrivals, scenario.curves
    start, end = scenario.start_ms, scenario.end_ms
    uploads = upload_clock(scenario)
    h0, h1 = uploads.hours(start), uploads.hours(end)
    rng = streams.fresh_numpy("arrivals", "times")
    n = int(rng.poisson(cfg.per_day / 24 * (h1 - h0)))
    published = np.clip(uploads.instant_many(np.sort(rng.uniform(h0, h1, n))), start, end - 1)
    published = np.maximum.accumulate(published)  # rounding to ms must not unsort ties

    def uniform(q: str) -> F8:
        out: F8 = streams.fresh_numpy("arrivals", q).random(n)
        return out

    def normal(q: str) -> F8:
        out: F8 = streams.fresh_numpy("arrivals", q).standard_normal(n)
        return out

    discovered = published + np.round(
        -np.log1p(-uniform("discovery")) * cfg.discovery_delay_mean
    ).astype(np.int64)
    delay = fm.lognormal(
        normal("classification"), cfg.classification_delay_median, cfg.classification_delay_sigma
    )
    classified = discovered + np.round(delay).astype(np.int64)
    is_song = uniform("song") < cfg.song_fraction
    viral = uniform("viral") < cfg.viral_fraction
    family = np.where(viral, Family.VIRAL, Family.FRESH).astype(np.int8)

    d = Draft.zeros(published, clock)
    everyone: I8 = np.arange(n)
    fm.fresh(d, everyone, normal("fresh.size"), normal("fresh.half"), cur)
    sel = np.flatnonzero(viral)
    centre_ms = published[sel] + np.round(DAY_MS * (1 + 13 * uniform("viral.when")[sel]))
    centre = clock.hours_many(centre_ms.astype(np.int64)) - d.start_hours[sel]
    z = (normal("viral.size")[sel], normal("viral.rise")[sel], normal("viral.decay")[sel])
    fm.surge(d, sel, centre, *z, cur)
    return Arrivals(published, discovered, classified, is_song, family), d
