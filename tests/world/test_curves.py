"""View curves: monotone except recounts, integral, and the scalar path equals the vectorised."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.scenario import Scenario
from sim.units import DAY_MS, HOUR_MS
from sim.world import Family, TrafficClock, World
from sim.world import families as fm
from sim.world.curves import FRESH_BIT, ROW_SHIFT, SURGE_BIT
from sim.world.families import Draft

PROPERTY = settings(max_examples=300, deadline=None)


def window(scenario: Scenario) -> tuple[int, int]:
    """From a month before the start to a week after the end."""
    return scenario.start_ms - 30 * DAY_MS, scenario.end_ms + 7 * DAY_MS


@st.composite
def video_and_two_instants(draw: st.DrawFn, world: World) -> tuple[int, int, int]:
    lo, hi = window(world.scenario)
    i = draw(st.integers(0, len(world) - 1))
    t1 = draw(st.integers(lo, hi))
    t2 = draw(st.integers(t1, min(hi, t1 + draw(st.sampled_from([1, 1000, HOUR_MS, 40 * DAY_MS])))))
    return i, t1, t2


def test_monotone_except_recount_dips(world: World) -> None:
    @PROPERTY
    @given(video_and_two_instants(world))
    def check(case: tuple[int, int, int]) -> None:
        i, t1, t2 = case
        aid = world.aid_of(i)
        v1, v2 = world.views(aid, t1), world.views(aid, t2)
        drop = world.table.recount.drop(i, t2) - world.table.recount.drop(i, t1)
        if drop == 0:
            assert v2 >= v1
        else:  # a dip is exactly the recount in between, never more
            assert world.family[i] == Family.RECOUNT
            assert v2 + drop >= v1

    check()


def test_recounts_do_dip(world: World) -> None:
    rc = world.table.recount
    assert len(rc.index) > 100
    i, step = int(rc.index[0]), int(rc.t_ms[0, 0])
    aid = world.aid_of(i)
    assert world.views(aid, step) < world.views(aid, step - 1)


def test_scalar_equals_vectorised(world: World) -> None:
    @PROPERTY
    @given(st.lists(st.integers(0, len(world) - 1), min_size=1, max_size=20), st.data())
    def check(idx: list[int], data: st.DataObject) -> None:
        lo, hi = window(world.scenario)
        t = data.draw(st.integers(lo, hi))
        aids = world.aids(idx)
        many = world.views_many(aids, t)
        assert many.tolist() == [world.views(int(a), t) for a in aids]
        assert world.views_at(np.array(idx), t).tolist() == many.tolist()

    check()


def test_scalar_equals_vectorised_for_every_video(world: World) -> None:
    sc = world.scenario
    for t in (sc.start_ms, sc.start_ms + 12_345_678, sc.end_ms - 1):
        everyone = world.views_all(t)
        assert everyone.dtype == np.int64
        assert everyone.tolist() == [world.views(int(a), t) for a in world.aids()]


def test_views_are_non_negative_integers(world: World) -> None:
    v = world.views_all(world.scenario.end_ms)
    assert v.dtype == np.int64
    assert v.min() >= 0
    assert isinstance(world.views(world.aid_of(0), world.scenario.start_ms), int)


def test_families_behave_as_named(world: World) -> None:
    sc = world.scenario
    v0, v1 = world.views_all(sc.start_ms), world.views_all(sc.end_ms)
    grew = v1 - v0
    fam = world.family
    assert (grew[fam == Family.DORMANT] == 0).all()
    assert (grew[fam == Family.STEADY] >= 0).all()
    assert (grew[fam == Family.VIRAL] > grew[fam == Family.STEADY].mean()).mean() > 0.9
    # approachers were placed below a milestone and cross it during the run
    appr = np.flatnonzero(fam == Family.APPROACHER)
    crossed = set(world.crossings(sc.start_ms, sc.end_ms).index.tolist())
    assert set(appr.tolist()) <= crossed
    # arrivals start from nothing at publication and burst in their first day
    arr = np.arange(len(world.initial), len(world))
    pub = world.published_ms[arr]
    assert (world.views_at(arr, pub) == 0).all()
    first_day = world.views_at(arr, pub + DAY_MS)
    second_day = world.views_at(arr, pub + 2 * DAY_MS) - first_day
    assert np.median(first_day) > 3 * np.median(second_day)


def test_evening_traffic_beats_the_small_hours(world: World) -> None:
    steady = np.flatnonzero(world.family == Family.STEADY)
    i = int(steady[np.argmax(world.table.rate[steady])])
    sc = world.scenario
    midnight = sc.start_ms - (sc.start_ms + sc.timezone) % DAY_MS
    evening, dawn = midnight + 20 * HOUR_MS, midnight + 4 * HOUR_MS  # local 20:00 and 04:00
    gain = world.views_at(
        np.array([i, i, i, i]), [evening, evening + HOUR_MS, dawn, dawn + HOUR_MS]
    )
    assert gain[1] - gain[0] > 2 * (gain[3] - gain[2])


class TestTrafficClock:
    clock = TrafficClock([1.0] * 12 + [3.0] * 12, 1.0, 8 * HOUR_MS)

    @PROPERTY
    @given(st.lists(st.integers(0, 2**42), min_size=1, max_size=30))
    def test_scalar_equals_vectorised(self, ts: list[int]) -> None:
        assert self.clock.hours_many(np.array(ts)).tolist() == [self.clock.hours(t) for t in ts]

    @PROPERTY
    @given(st.integers(0, 2**42), st.integers(1, 10 * DAY_MS))
    def test_strictly_increasing(self, t: int, dt: int) -> None:
        assert self.clock.hours(t + dt) > self.clock.hours(t)

    @PROPERTY
    @given(st.integers(0, 2**42))
    def test_inverse(self, t: int) -> None:
        assert abs(self.clock.instant(self.clock.hours(t)) - t) <= 1

    def test_a_day_is_a_day_of_mean_traffic(self) -> None:
        t = 1_900_000_000_000
        assert abs(self.clock.hours(t + DAY_MS) - self.clock.hours(t) - 24) < 1e-9
        assert self.clock.day_hours == 24

    def test_local_time(self) -> None:
        midnight_local = 1_900_000_000_000 // DAY_MS * DAY_MS - 8 * HOUR_MS
        assert (
            self.clock.rate_at(midnight_local + 6 * HOUR_MS)
            < 1
            < self.clock.rate_at(midnight_local + 18 * HOUR_MS)
        )


def test_burst_and_surge_terms_are_kept_by_row_for_the_videos_that_have_them() -> None:
    # Five videos published at 0: none, a burst, none, a burst and a surge, a surge.
    clock = TrafficClock([1.0] * 24, 0.0, 0)
    d = Draft.zeros(np.zeros(5, np.int64), clock)
    d.burst[[1, 3]], d.half[[1, 3]] = [100.0, 300.0], [2.0, 4.0]
    d.surge[[3, 4]], d.surge_at[[3, 4]] = [1000.0, 2000.0], [5.0, 6.0]
    d.rise[[3, 4]], d.decay[[3, 4]] = [1.5, 2.5], [8.0, 16.0]
    table = d.table()
    assert (table.flags >> ROW_SHIFT).tolist() == [0, 0, 0, 1, 2]
    assert (table.flags & (FRESH_BIT | SURGE_BIT)).tolist() == [0, 1, 0, 3, 2]
    assert table.terms.burst.tolist() == [100.0, 300.0, 0.0]
    assert table.terms.decay.tolist() == [1.0, 8.0, 16.0]
    # The views are the dense columns' formula, video by video, on both paths.
    for hours in (0.5, 4.0, 7.0, 30.0):
        s = np.full(5, hours)
        dense = d.burst * s / (s + d.half) + fm.surge_term(d, np.arange(5), s)
        expected = np.floor(0.0 + dense).astype(np.int64).tolist()
        t_ms = round(hours * HOUR_MS)
        assert table.values(None, hours, t_ms).tolist() == expected
        assert [table.value(i, hours, t_ms) for i in range(5)] == expected
