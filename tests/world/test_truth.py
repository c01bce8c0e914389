"""Ground truth: exact milestone crossings, complete, found without stepping through time."""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt
import pytest

from sim.cvsa.params import DEFAULT_PARAMS
from sim.units import DAY_MS, HOUR_MS, SECOND_MS
from sim.world import (
    Crossings,
    Family,
    RecountSteps,
    TrafficClock,
    World,
    next_milestone,
    rung_value,
    rungs_reached,
)
from sim.world.curves import RECOUNT_BIT
from sim.world.families import Draft
from sim.world.truth import find_crossings

L = DEFAULT_PARAMS.milestone_ladder


@pytest.mark.parametrize(
    ("views", "rungs", "following"),
    [
        (0, 0, 100_000),
        (99_999, 0, 100_000),
        (100_000, 1, 1_000_000),
        (999_999, 1, 1_000_000),
        (1_000_000, 2, 2_000_000),
        (2_500_000, 3, 3_000_000),
        (12_000_000, 13, 13_000_000),
    ],
)
def test_ladder(views: int, rungs: int, following: int) -> None:
    # 100k, 1M, then every 1M: CVSA's non-strict ladder (reference §11.2).
    assert int(rungs_reached(views, L)) == rungs
    assert next_milestone(views, L) == following
    assert int(rung_value(rungs + 1, L)) == following


def test_every_crossing_is_exact(world: World) -> None:
    sc = world.scenario
    found = world.crossings(sc.start_ms, sc.end_ms)
    assert len(found) > 1000
    columns = (found.aid.tolist(), found.milestone.tolist(), found.t_ms.tolist())
    for aid, m, t in zip(*columns, strict=True):
        assert world.views(aid, t - 1) < m <= world.views(aid, t)
        # the brief's tolerance; a recount within a second could break it, and none does here
        assert world.views(aid, t - SECOND_MS) < m <= world.views(aid, t + SECOND_MS)
        assert sc.start_ms < t <= sc.end_ms


def test_crossings_are_complete(world: World) -> None:
    sc = world.scenario
    found = world.crossings(sc.start_ms, sc.end_ms)
    per_video = np.bincount(found.index, minlength=len(world))
    end, start = world.views_all(sc.end_ms), world.views_all(sc.start_ms)
    gained = rungs_reached(end, L) - rungs_reached(start, L)
    plain = world.family != Family.RECOUNT  # a recount can undo a rung; checked below
    assert (per_video[plain] == gained[plain]).all()
    assert (per_video >= np.maximum(gained, 0)).all()
    assert set(np.unique(found.milestone).tolist()) >= {100_000, 1_000_000, 2_000_000}


def test_crossings_compose_over_sub_intervals(world: World) -> None:
    sc = world.scenario
    cut = sc.start_ms + 7 * DAY_MS + 12_345
    whole = world.crossings(sc.start_ms, sc.end_ms)
    joined = rows(world.crossings(sc.start_ms, cut)) | rows(world.crossings(cut, sc.end_ms))
    plain = world.family[whole.index] != Family.RECOUNT
    assert rows(whole, plain) <= joined
    assert (np.diff(whole.t_ms) >= 0).all()


def rows(c: Crossings, mask: npt.NDArray[np.bool_] | None = None) -> set[tuple[int, int, int]]:
    aid, m, t = c.aid, c.milestone, c.t_ms
    if mask is not None:
        aid, m, t = aid[mask], m[mask], t[mask]
    return set(zip(aid.tolist(), m.tolist(), t.tolist(), strict=True))


def test_a_recount_dip_does_not_make_a_milestone_cross_again() -> None:
    # One linear video: 99,990 views + 10 per hour on a flat clock. It reaches 100k after 1 h,
    # a recount at 3 h takes 50 views away (back below 100k), and it reaches 100k again at 6 h.
    clock = TrafficClock([1.0] * 24, 0.0, 0)
    draft = Draft.zeros(np.array([0]), clock)
    draft.offset[0], draft.rate[0] = 99_990.0, 10.0
    steps = RecountSteps(np.array([0]), np.array([[3 * HOUR_MS]]), np.array([[50]]))
    table = dataclasses.replace(draft.table(), recount=steps)
    table.flags[0] |= RECOUNT_BIT

    def evaluate(idx: npt.NDArray[np.int64], t: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        return table.values(idx, clock.hours_many(t), t)

    assert table.value(0, clock.hours(6 * HOUR_MS - 1), 6 * HOUR_MS - 1) < 100_000
    idx, milestone, t = find_crossings(evaluate, 1, steps, 0, 10 * HOUR_MS, L)
    assert (idx.tolist(), milestone.tolist(), t.tolist()) == ([0], [100_000], [HOUR_MS])
    # A window that opens inside the dip sees the second crossing as the first.
    _, _, t = find_crossings(evaluate, 1, steps, 4 * HOUR_MS, 10 * HOUR_MS, L)
    assert t.tolist() == [6 * HOUR_MS]


def test_each_milestone_is_reported_once(world: World) -> None:
    sc = world.scenario
    found = world.crossings(sc.start_ms, sc.end_ms)
    pairs = list(zip(found.index.tolist(), found.milestone.tolist(), strict=True))
    assert len(pairs) == len(set(pairs))


def test_visibility_flag(world: World) -> None:
    sc = world.scenario
    found = world.crossings(sc.start_ms, sc.end_ms)
    errors = [world.api_error(int(a), int(t)) for a, t in zip(found.aid, found.t_ms, strict=True)]
    assert found.visible.tolist() == [e == 0 for e in errors]
