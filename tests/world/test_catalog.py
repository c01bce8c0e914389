"""The catalog and arrivals match the scenario's parameters within sampling error."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import numpy.typing as npt
import pytest

from sim.rng import RandomStreams
from sim.scenario import Scenario
from sim.units import DAY_MS, HOUR_MS
from sim.world import DELETED, UNDER_REVIEW, AidCodec, Family, World
from sim.world.availability import CODES

from .conftest import small_scenario

Z = 5.0
"""Tolerance in standard errors: a correct generator fails one check in ~2 million."""


def binomial_ok(hits: int, n: int, p: float) -> bool:
    return abs(hits - n * p) <= Z * math.sqrt(n * p * (1 - p)) + 1


@pytest.fixture(scope="module")
def large() -> World:
    # Enough videos that a 5-sigma band on the medians is a few percent wide.
    sc = small_scenario("catalog.songs=40000", "catalog.non_songs=160000")
    return World.build(sc, RandomStreams(sc.seed))


def test_counts_and_family_shares(large: World) -> None:
    sc, cat = large.scenario, large.initial
    assert len(cat) == sc.catalog.songs + sc.catalog.non_songs
    assert int(cat.is_song.sum()) == sc.catalog.songs
    weights = np.array(sc.curves.weights.as_tuple())
    counts = np.bincount(cat.family, minlength=len(Family))
    for fam, p in zip(Family, weights / weights.sum(), strict=True):
        assert binomial_ok(int(counts[fam]), len(cat), p), fam


def test_publication_times(large: World) -> None:
    sc, cat = large.scenario, large.initial
    assert (cat.published_ms < sc.start_ms).all()
    assert (cat.published_ms >= sc.start_ms - sc.catalog.max_age).all()
    assert (np.diff(cat.published_ms) >= 0).all()
    fresh = cat.family == Family.FRESH
    assert (cat.published_ms[fresh] >= sc.start_ms - sc.curves.fresh_window).all()
    old = cat.family == Family.DORMANT  # truncated exponential on [window, max_age]
    age = (sc.start_ms - cat.published_ms[old] - sc.curves.fresh_window).astype(float)
    span, scale = sc.catalog.max_age - sc.curves.fresh_window, sc.catalog.age_scale
    mean = scale - span / math.expm1(span / scale)
    assert abs(age.mean() - mean) <= Z * age.std() / math.sqrt(len(age))


def test_median_of_the_heavy_tail(large: World) -> None:
    sc, cat = large.scenario, large.initial
    views = large.views_all(sc.start_ms)[: len(cat)]
    free = np.isin(cat.family, [Family.DORMANT, Family.STEADY])  # their views are drawn as is
    for song, median, sigma in (
        (True, sc.catalog.song_views_median, sc.catalog.song_views_sigma),
        (False, sc.catalog.other_views_median, sc.catalog.other_views_sigma),
    ):
        v = views[free & (cat.is_song == song)]
        # standard error of a sample median of a log-normal, on the log scale
        err = 1.2533 * sigma / math.sqrt(len(v))
        assert abs(math.log(np.median(v) + 0.5) - math.log(median)) <= Z * err + 1e-3
        assert np.quantile(v, 0.999) > 100 * median  # heavy tail


def test_aids(world: World) -> None:
    aid = world.aids()
    assert aid.dtype == np.int64
    assert (np.diff(aid) > 0).all()  # unique and growing with publication time
    assert aid.min() > 10_000_000
    assert world.index(int(aid[123])) == 123
    assert world.indices(aid[[5, 0, 7]]).tolist() == [5, 0, 7]
    with pytest.raises(KeyError):
        world.index(int(aid[123]) + 1)
    with pytest.raises(KeyError):
        world.views(int(aid[-1]) + 10**7, world.scenario.start_ms)
    with pytest.raises(KeyError):
        world.views_many(np.array([aid[0], 3]), world.scenario.start_ms)


def test_arrivals(world: World) -> None:
    sc, arr = world.scenario, world.arrivals
    days = sc.duration / DAY_MS
    expected = sc.arrivals.per_day * days
    assert abs(len(arr) - expected) <= Z * math.sqrt(expected)
    assert (np.diff(arr.published_ms) >= 0).all()
    assert (arr.published_ms >= sc.start_ms).all()
    assert (arr.published_ms < sc.end_ms).all()
    n0 = len(world.initial)
    assert (world.aids(np.arange(n0, len(world))) > world.aid_of(n0 - 1)).all()
    assert (arr.discovered_ms >= arr.published_ms).all()
    assert (arr.classified_ms >= arr.discovered_ms).all()
    assert binomial_ok(int(arr.is_song.sum()), len(arr), sc.arrivals.song_fraction)
    delay = np.median(arr.classified_ms - arr.discovered_ms)
    assert abs(math.log(delay / sc.arrivals.classification_delay_median)) < 0.15
    local_hour = (arr.published_ms + sc.timezone) % DAY_MS // HOUR_MS
    evening = np.isin(local_hour, [19, 20, 21, 22]).sum()
    small_hours = np.isin(local_hour, [3, 4, 5, 6]).sum()
    assert evening > 2 * small_hours


def test_api_errors(world: World) -> None:
    sc, av = world.scenario, world.availability
    assert set(av.code.tolist()) <= set(CODES)
    assert len(av.index) > 100
    at_start = world.api_errors(world.aids(np.arange(len(world.initial))), sc.start_ms)
    assert binomial_ok(
        int((at_start != 0).sum()), len(world.initial), sc.catalog.unavailable_at_start
    )
    # before publication an arrival does not exist
    first = world.arrivals
    first_aid = world.aid_of(len(world.initial))
    assert world.api_error(first_aid, int(first.published_ms[0]) - 1) == DELETED
    assert world.api_error(first_aid, int(first.published_ms[0])) in {0, *CODES}
    for k in range(len(av.index)):
        aid = world.aid_of(int(av.index[k]))
        start, until, code = int(av.from_ms[k]), int(av.until_ms[k]), int(av.code[k])
        assert world.api_error(aid, start) == code
        assert world.api_error(aid, start - 1) in (0, DELETED)  # DELETED: not yet published
        if code == UNDER_REVIEW:
            assert world.api_error(aid, until) == 0
            assert until > start
        else:
            assert world.api_error(aid, sc.end_ms + 100 * DAY_MS) == code
    sample = world.aids()[::97]
    for t in (sc.start_ms, sc.end_ms - 1):
        assert world.api_errors(sample, t).tolist() == [world.api_error(int(a), t) for a in sample]


def digest(world: World) -> list[bytes]:
    t = world.table
    arrays: list[npt.NDArray[np.generic]] = [world.aids(), world.published_ms, world.family]
    arrays += [world.is_song, t.offset, t.published_ms]
    arrays += [t.rate, *t.terms.columns, t.flags]
    arrays += [t.recount.t_ms, t.recount.cum_drop, world.availability.from_ms]
    arrays += [world.arrivals.discovered_ms, world.arrivals.classified_ms]
    return [a.tobytes() for a in arrays]


def test_deterministic(scenario: Scenario, world: World) -> None:
    streams = RandomStreams(scenario.seed)
    again = World.build(scenario, streams)
    assert digest(again) == digest(world)
    assert digest(World.build(scenario, streams)) == digest(world)  # streams are not consumed
    other = World.build(scenario, RandomStreams(scenario.seed + 1))
    assert digest(other) != digest(world)


def test_adding_non_songs_leaves_songs_alone() -> None:
    def songs(extra: int) -> set[tuple[int, int, float, float]]:
        sc = small_scenario(f"catalog.non_songs={36000 + extra}")
        w = World.build(sc, RandomStreams(sc.seed))
        s = np.flatnonzero(w.initial.is_song)
        cols = (w.published_ms[s], w.family[s], w.table.offset[s], w.table.rate[s])
        return set(zip(*(c.tolist() for c in cols), strict=True))

    assert songs(0) == songs(5000)


def test_a_world_refuses_a_curve_table_of_other_videos(world: World) -> None:
    # The world's publication instants are the curve table's column; a table drawn for other
    # videos would give every video another curve's start.
    table = dataclasses.replace(world.table, published_ms=world.table.published_ms + 1)
    args = (world.availability, world.initial, world.arrivals)
    with pytest.raises(ValueError, match="publication instants"):
        World(world.scenario, world.clock, AidCodec(world.scenario.seed), table, *args)
