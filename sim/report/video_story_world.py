"""The world's side of one video's story (``sim explain``): its true view curve, when it was
unavailable, and the milestones it crossed, next to what the scheduler saw (:mod:`.video_story`).

The world is a pure function of the scenario and its seed (:mod:`sim.world`), so rebuilding it
from a run's ``scenario.json`` gives the run's own world, as :func:`sim.report.build.crossings_for`
does. Crossings are found for this one video with the same exact bisection as the milestone
ground truth (:func:`sim.world.truth.find_crossings`): ``V(t* - 1 ms) < M <= V(t*)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.cvsa.params import MilestoneLadder
from sim.cvsa.vocabulary import VideoUnavailable
from sim.events import cvsa_kinds as K
from sim.metrics.findings.verdicts import duration, local
from sim.report.video_story import I8, Story, col
from sim.scenario import Scenario
from sim.units import Ms

API_ERRORS = {
    **{int(c): c.word.replace("_", " ") for c in VideoUnavailable},
    VideoUnavailable.DELETED: "deleted, or not yet published",
}
"""bilibili's codes (:meth:`sim.world.World.api_error`)."""
CURVE_POINTS = 800
"""Instants at which the curve is drawn (a pixel cannot show more)."""


@dataclass(frozen=True)
class Crossing:
    milestone: int
    t_ms: Ms
    visible: bool
    """The API answered normally at ``t_ms`` (a hidden video's crossing cannot be seen)."""


@dataclass(frozen=True)
class Truth:
    """One video in the world over ``[from_ms, to_ms]``."""

    ladder: MilestoneLadder
    """The run's milestones."""
    is_song: bool
    family: str
    published_ms: Ms
    t_ms: I8
    views: I8
    error: I8
    """The API's error code at each instant of ``t_ms`` (0: visible)."""
    crossings: tuple[Crossing, ...]


def world_truth(scenario: Scenario, aid: int, from_ms: Ms, to_ms: Ms) -> Truth | None:
    """The truth of ``aid`` (None when the world never had it)."""
    from sim.rng import RandomStreams
    from sim.world import World
    from sim.world.curves import Family, RecountSteps
    from sim.world.truth import find_crossings

    world = World.build(scenario, RandomStreams(scenario.seed))
    try:
        i = world.index(aid)
    except KeyError:
        return None
    one = np.array([i], np.int64)
    t = np.unique(np.linspace(from_ms, to_ms, CURVE_POINTS).astype(np.int64))
    views = world.views_at(np.full(len(t), i, np.int64), t)
    error = world.availability.errors(np.full(len(t), i, np.int64), t)
    recount = world.table.recount
    row = int(np.searchsorted(recount.index, i))
    mine = row < len(recount.index) and recount.index[row] == i
    steps = (
        RecountSteps(
            np.zeros(1, np.int64), recount.t_ms[row : row + 1], recount.cum_drop[row : row + 1]
        )
        if mine
        else RecountSteps.empty()
    )
    _, milestone, t_star = find_crossings(
        lambda idx, at: world.views_at(np.full(len(idx), i, np.int64), at),
        1,
        steps,
        from_ms,
        to_ms,
        world.ladder,
    )
    seen = world.availability.errors(np.full(len(t_star), i, np.int64), t_star) == 0
    crossings = tuple(
        Crossing(int(m), int(ts), bool(v)) for m, ts, v in zip(milestone, t_star, seen, strict=True)
    )
    return Truth(
        world.ladder,
        bool(world.is_song[one][0]),
        Family(int(world.family[i])).name.lower(),
        int(world.published_ms[i]),
        t,
        views,
        error,
        crossings,
    )


def _views(n: int) -> str:
    return f"{n:,}"


def headline(story: Story, truth: Truth | None, tz_ms: Ms, from_ms: Ms, to_ms: Ms) -> list[str]:
    """What a reader needs before the table: what the video is, what it did, what was done."""

    def at(ms: Ms) -> str:
        return local(ms, tz_ms)

    out = []
    if truth is None:
        out.append(f"aid {story.aid}: not in the world rebuilt from scenario.json (no view curve).")
    else:
        what = "a song" if truth.is_song else "not a song (not in songs)"
        first = (
            ""
            if truth.published_ms > from_ms
            else f"{_views(int(truth.views[0]))} at {at(from_ms)}, "
        )
        out.append(
            f"aid {story.aid}: {what}, curve family {truth.family}, published "
            f"{at(truth.published_ms)}; views {first}{_views(int(truth.views[-1]))} at {at(to_ms)}."
        )
        out.extend(_crossing_lines(story, truth, tz_ms))
        gone = np.flatnonzero(truth.error != 0)
        if len(gone):
            codes = sorted({int(c) for c in truth.error[gone]})
            words = ", ".join(f"{c} ({API_ERRORS.get(c, 'error')})" for c in codes)
            steady = len(gone) == gone[-1] - gone[0] + 1
            out.append(
                f"The API answered {words} {'' if steady else 'on and off '}from "
                f"{at(int(truth.t_ms[gone[0]]))} to {at(int(truth.t_ms[gone[-1]]))} "
                "(grey on the plot): no snapshot can be taken then."
            )
    out.append(_counts(story, from_ms, to_ms))
    silent = _completed_without_snapshot(story, from_ms, to_ms)
    if silent:
        out.append(
            f"{silent} rows completed without a snapshot: a bulk call completes every row of its "
            "batch, also those of videos it did not return (reference §10.3)."
        )
    return out


def _completed_without_snapshot(story: Story, from_ms: Ms, to_ms: Ms) -> int:
    done = story[K.ScheduleFinished]
    done = done[(done[:, 1] >= from_ms) & (done[:, 1] <= to_ms)]
    completed = done[:, col(K.ScheduleFinished, "status")] == story.words.get(
        "schedule_status", []
    ).index("completed")
    taken = story[K.SnapshotTaken][:, col(K.SnapshotTaken, "schedule")]
    rows = done[completed, col(K.ScheduleFinished, "schedule")]
    return int((~np.isin(rows, taken)).sum())


def _crossing_lines(story: Story, truth: Truth, tz_ms: Ms) -> list[str]:
    """Each crossing and the snapshot that captured it (the first at or after t* that reads
    views >= M; the bracket starts at the last one below M), as the milestone metrics count."""
    snap = story[K.SnapshotTaken]
    taken = snap[:, col(K.SnapshotTaken, "taken_ms")]
    views = snap[:, col(K.SnapshotTaken, "views")]
    out = []
    for c in truth.crossings:
        text = f"Crossed {_views(c.milestone)} views at {local(c.t_ms, tz_ms)}"
        if not c.visible:
            out.append(text + " while the API hid the video (no snapshot could see it).")
            continue
        hit = np.flatnonzero((taken >= c.t_ms) & (views >= c.milestone))
        if not len(hit):
            out.append(text + ": no snapshot read it before the end of the log.")
            continue
        first = int(hit[0])
        text += f": captured {duration(int(taken[first]) - c.t_ms)} later"
        below = np.flatnonzero((taken < c.t_ms) & (views < c.milestone))
        if len(below):
            text += f" (bracket {duration(int(taken[first] - taken[below[-1]]))})"
        out.append(text + ".")
    return out


def _counts(story: Story, from_ms: Ms, to_ms: Ms) -> str:
    def n(kind: type) -> int:
        t = story[kind][:, 1]
        return int(((t >= from_ms) & (t <= to_ms)).sum())

    snaps = story[K.SnapshotTaken]
    inside = snaps[(snaps[:, 1] >= from_ms) & (snaps[:, 1] <= to_ms)]
    dup = int(inside[:, col(K.SnapshotTaken, "duplicate")].sum())
    parts = [
        f"{len(inside)} snapshots" + (f" ({dup} refused as duplicates)" if dup else ""),
        f"{n(K.ScheduleCreated)} rows created",
        f"{n(K.ScheduleNotCreated)} not created",
        f"{n(K.ScheduleMoved)} moved",
        f"{n(K.ScheduleDeleted)} deleted by cleanup",
        f"{n(K.UpstreamFailed)} upstream errors",
        f"{n(K.RetryScheduled)} retries",
    ]
    return "In this span: " + ", ".join(parts) + "."
