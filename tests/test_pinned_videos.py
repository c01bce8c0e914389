"""Pinned videos (``[[world.videos]]``): a scenario fixes one video's aid and curve, the world
draws everything else as before, and a test follows that video through a whole run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim.api import run
from sim.events import cvsa_kinds as K
from sim.report.video_story import col, read_story
from sim.rng import RandomStreams
from sim.scenario import ScenarioError, parse_scenario
from sim.units import HOUR_MS, MINUTE_MS
from sim.world import World

BASE = """
name = "pinned"
seed = 5
duration = "2h"
[catalog]
songs = 200
non_songs = 800
[arrivals]
per_day = 0
"""

APPROACHER = """
[[world.videos]]
aid = 7
family = "approacher"
age = "5d"
views = 99000
rate_per_hour = 800
"""

OTHERS = """
[[world.videos]]
aid = 170001
family = "viral"
age = "100d"
views = 50000
rate_per_hour = 10
surge = 60000
surge_after = "1h"
rise = "12m"

[[world.videos]]
aid = 170002
family = "recount"
song = false
age = "3d"
views = 1000
rate_per_hour = 5
recounts = [{after = "1h", fraction = 0.1}]

[[world.videos]]
aid = 170003
family = "fresh"
age = "2h"
views = 500
burst = 5000
half_life = "10h"
"""


def world(text: str) -> World:
    sc = parse_scenario(text, source="<test>")
    return World.build(sc, RandomStreams(sc.seed))


def test_a_pinned_video_has_its_aid_and_shows_its_views_at_the_start() -> None:
    w = world(BASE + APPROACHER + OTHERS)
    start = w.scenario.start_ms
    assert [w.views(aid, start) for aid in (7, 170001, 170002, 170003)] == [
        99_000,
        50_000,
        1_000,
        500,
    ]
    rows = [w.index(aid) for aid in (7, 170001, 170002, 170003)]
    assert list(w.indices([7, 170001, 170002, 170003])) == rows
    assert [bool(w.is_song[i]) for i in rows] == [True, True, False, True]
    assert [int(w.published_ms[i]) for i in rows] == [
        start - 5 * 24 * HOUR_MS,
        start - 100 * 24 * HOUR_MS,
        start - 3 * 24 * HOUR_MS,
        start - 2 * HOUR_MS,
    ]
    # The surge adds its views around its centre; the recount takes 10 % at its instant.
    assert w.views(170001, start + 2 * HOUR_MS) - w.views(170001, start) > 25_000
    before, after = (w.views(170002, start + HOUR_MS + d) for d in (-1, 0))
    assert after == before - before // 10
    assert w.api_error(7, start) == 0


def test_pins_change_no_other_video() -> None:
    pinned, drawn = world(BASE + APPROACHER + OTHERS), world(BASE)
    rows = np.array(sorted(pinned.pinned.values()))
    others = np.setdiff1d(np.arange(len(drawn)), rows)
    assert np.array_equal(pinned.aids(others), drawn.aids(others))
    for name in ("published_ms", "family", "is_song"):
        assert np.array_equal(getattr(pinned, name)[others], getattr(drawn, name)[others]), name
    end = drawn.scenario.end_ms
    assert np.array_equal(pinned.views_all(end)[others], drawn.views_all(end)[others])
    assert not np.isin(pinned.availability.index, rows).any()
    for aid in drawn.aids(rows):  # the replaced videos are gone, aid and all
        with pytest.raises(KeyError):
            pinned.index(int(aid))
        with pytest.raises(KeyError):
            pinned.indices([int(aid)])


def test_a_pin_takes_the_place_of_the_video_that_has_its_aid() -> None:
    drawn = world(BASE)
    natural = drawn.aid_of(123)
    w = world(BASE + APPROACHER.replace("aid = 7", f"aid = {natural}"))
    assert w.index(natural) == 123
    assert w.views(natural, w.scenario.start_ms) == 99_000
    assert int(np.count_nonzero(w.aids() == natural)) == 1


def test_the_ground_truth_knows_the_pinned_crossing() -> None:
    w = world(BASE + APPROACHER)
    c = w.crossings(w.scenario.start_ms, w.scenario.end_ms)
    mine = np.flatnonzero(c.aid == 7)
    assert len(mine) == 1
    assert int(c.milestone[mine[0]]) == 100_000
    t = int(c.t_ms[mine[0]])
    assert w.views(7, t - 1) < 100_000 <= w.views(7, t)


def test_a_run_can_be_followed_video_by_video(tmp_path: Path) -> None:
    """The approacher pinned at 99,000 views and 800 an hour: the milestone dispatcher books it
    at once, every snapshot books the next by the ETA rule, and the crossing is captured."""
    sc = parse_scenario(BASE + APPROACHER, source="<test>")
    run(sc, out=tmp_path, save_events=True, plots=False)
    story = read_story(tmp_path / "events.simlog", 7)
    start = sc.start_ms
    history = story[K.HistoryLoaded]
    assert history[:, col(K.HistoryLoaded, "views")].tolist()[-1] == 99_000
    taken = story[K.SnapshotTaken]
    t = taken[:, col(K.SnapshotTaken, "t_ms")]
    views = taken[:, col(K.SnapshotTaken, "views")]
    w = World.build(sc, RandomStreams(sc.seed))
    served = taken[:, col(K.SnapshotTaken, "taken_ms")]  # the answer's server time (§2.2)
    assert views.tolist() == [w.views(7, int(x)) for x in served]  # the world's count
    assert (t[:6] - start).tolist() == [
        559_555,
        1_056_324,
        1_497_289,
        1_888_195,
        2_236_121,
        2_545_376,
    ]
    gaps = np.diff(t[t < captured_at(t, views)])
    far = gaps[gaps > MINUTE_MS]  # the geometric approach (§11.4): each row nearer the milestone,
    assert len(far) > 10  # until the gaps reach the seconds the ticks and the ETA floor allow
    assert (np.diff(far) < 0).all()
    created = story[K.ScheduleCreated]
    rules = [story.word("schedule_rule", r) for r in created[:, col(K.ScheduleCreated, "rule")]]
    assert rules[:2] == ["dispatcher", "dispatcher"]
    # Each snapshot below the milestone booked the next row by the re-ETA (§9 step 7); the one at
    # 100,000 booked none: the next milestone, 1M, is beyond the 144 h look-ahead.
    assert rules.count("reeta") == int((views < 100_000).sum()) == len(t) - 1
    crossing = w.crossings(start, sc.end_ms)
    t_star = int(crossing.t_ms[crossing.aid == 7][0])
    above = int(np.argmax(views >= 100_000))  # the snapshots on both sides bracket the crossing
    assert served[above - 1] < t_star <= served[above]
    assert served[above] - served[above - 1] < 3_000


def captured_at(t: np.ndarray, views: np.ndarray) -> int:
    """The first snapshot at or above 100,000 views."""
    return int(t[views >= 100_000].min())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (BASE + APPROACHER.replace("5d", "30d"), "views = 99,000 at the start is fewer than"),
        (BASE + APPROACHER + "burst = 10", "burst is not a term of the approacher family"),
        (BASE + APPROACHER.replace('"approacher"', '"fresh"'), "a fresh curve needs burst and"),
        (BASE + APPROACHER * 2, "has aid 7 2 times"),
        (
            BASE.replace("songs = 200", "songs = 0") + APPROACHER,
            "world.videos pins 1 songs but catalog.songs = 0",
        ),
        (
            BASE
            + APPROACHER.replace(
                "family", 'recounts = [{after = "3h", fraction = 0.1}]\nfamily'
            ).replace('"approacher"', '"recount"'),
            "falls after the run's end",
        ),
    ],
)
def test_bad_pins_are_named(text: str, message: str) -> None:
    with pytest.raises((ScenarioError, ValueError)) as exc:
        world(text)
    assert message in str(exc.value)
