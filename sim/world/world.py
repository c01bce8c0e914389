"""The simulated world: the catalog, arrivals, view counts, API errors and ground truth.

Videos are indexed ``0..n-1`` in publication order: the initial catalog first, then the
arrivals. Everything the scheduler model may ask (views, API errors) is answered from per-video
closed forms, so the world has no state that moves with time and any instant can be asked in
any order.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sim.rng import RandomStreams
from sim.scenario.document import Scenario
from sim.scenario.parse import ScenarioError
from sim.units import Ms
from sim.world.arrivals import draw_arrivals
from sim.world.availability import DELETED, Availability, draw_availability
from sim.world.catalog import B1, I1, InitialCatalog, draw_initial
from sim.world.curves import NEVER_MS, RECOUNT_BIT, CurveTable, RecountSteps
from sim.world.families import I8, Draft
from sim.world.ids import AID_BASE, AID_MIX, AID_STRIDE, AidCodec
from sim.world.pinned import apply_pins, pin_problems, pinned_curves, pinned_rows
from sim.world.scalar import ScalarWorld
from sim.world.traffic import TrafficClock
from sim.world.truth import Crossings, find_crossings


@dataclass(frozen=True)
class Catalog:
    """The videos known at the start (indices ``0..len-1``), sorted by publication time but for
    the pinned videos (``[[world.videos]]``, :mod:`sim.world.pinned`)."""

    is_song: B1
    """In the ``songs`` table (else only in ``bilibili_metadata``)."""
    published_ms: I8
    family: I1
    """A :class:`sim.world.Family` value."""

    def __len__(self) -> int:
        return len(self.published_ms)


@dataclass(frozen=True)
class ArrivalTable:
    """Videos published during the run, sorted by publication time (see :mod:`.arrivals`)."""

    published_ms: I8
    discovered_ms: I8
    classified_ms: I8
    is_song: B1
    """Labelled a song (label != 0) at ``classified_ms``; this creates ``new`` schedules."""
    family: I1

    def __len__(self) -> int:
        return len(self.published_ms)


class World:
    """A deterministic world for one scenario; build it with :meth:`World.build`.

    ``initial`` and ``arrivals`` are views into the all-video arrays ``published_ms``,
    ``family`` and ``is_song`` (indices ``0..len(initial)-1``, then the arrivals). A video's aid
    is computed from its index (:meth:`aids`, :class:`sim.world.ids.AidCodec`), not kept.
    """

    def __init__(
        self,
        scenario: Scenario,
        clock: TrafficClock,
        codec: AidCodec,
        table: CurveTable,
        availability: Availability,
        initial: Catalog,
        arrivals: ArrivalTable,
        pinned: dict[int, int] | None = None,
    ) -> None:
        self.scenario = scenario
        self.ladder = scenario.params.milestone_ladder
        """The run's milestones (``[design] milestone_ladder``): the ground truth's ladder."""
        self.clock = clock
        self.table = table
        self.availability = availability
        n0 = len(initial)
        self.published_ms: I8 = table.published_ms
        """The curve table's column (one array for both): equal to the initial videos' then the
        arrivals' publication instants."""
        mine = (table.published_ms[:n0], table.published_ms[n0:])
        if not (
            np.array_equal(mine[0], initial.published_ms)
            and np.array_equal(mine[1], arrivals.published_ms)
        ):
            raise ValueError("the curve table's publication instants are not the videos'")
        self.family: I1 = np.concatenate([initial.family, arrivals.family])
        self.is_song: B1 = np.concatenate([initial.is_song, arrivals.is_song])
        self.initial = Catalog(self.is_song[:n0], self.published_ms[:n0], self.family[:n0])
        """The videos known at the start (views into the all-video arrays)."""
        self.arrivals = dataclasses.replace(
            arrivals,
            published_ms=self.published_ms[n0:],
            is_song=self.is_song[n0:],
            family=self.family[n0:],
        )
        """The videos published during the run (views into the all-video arrays)."""
        self._codec = codec
        self._n = len(self.published_ms)
        self.pinned: dict[int, int] = dict(pinned or {})
        """The pinned videos' aids -> their indices (their aids are not the codec's)."""
        self._pinned_aid = {i: aid for aid, i in self.pinned.items()}
        self.scalar = ScalarWorld(
            self._n,
            codec.salt,
            self.published_ms.data,
            table._mv,
            table.recount.drop,
            availability._rows,
            self.pinned,
            clock.hours,
            AID_BASE,
            AID_STRIDE,
            AID_MIX,
            DELETED,
            scenario.start_ms,
        )
        """:meth:`views` and :meth:`api_error`, compiled: what the simulated upstream calls."""

    @classmethod
    def build(cls, scenario: Scenario, streams: RandomStreams) -> World:
        """Draw the whole world of ``scenario`` from ``streams`` (idempotent for equal seeds)."""
        cur = scenario.curves
        clock = TrafficClock(cur.hourly_profile, cur.day_night_amplitude, scenario.timezone)
        pins = pinned_curves(scenario, clock)
        problems = pin_problems(scenario, pins)
        if problems:
            raise ScenarioError(problems)
        first = draw_initial(scenario, streams, clock)
        late, late_draft = draw_arrivals(scenario, streams, clock)
        n0 = len(first.published_ms)
        codec = AidCodec(scenario.seed)
        rows = pinned_rows(first, scenario, codec, n0 + len(late))
        first = apply_pins(first, scenario, pins, rows)
        pinned = {v.aid: int(i) for v, i in zip(scenario.world.videos, rows, strict=True)}
        table = _with_recounts(Draft.table_of([first.draft, late_draft]), first, clock)
        catalog = draw_availability(scenario, streams, "catalog", first.published_ms, True)
        avail = Availability.concat(
            [
                (catalog.without(rows), 0),
                (draw_availability(scenario, streams, "arrivals", late.published_ms, False), n0),
            ]
        )
        initial = Catalog(first.is_song, first.published_ms, first.family)
        arrivals = ArrivalTable(
            late.published_ms,
            late.discovered_ms,
            late.classified_ms,
            late.is_song,
            late.family,
        )
        return cls(scenario, clock, codec, table, avail, initial, arrivals, pinned)

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        """Bytes held in arrays: curves, errors and the per-video columns (``published_ms`` is
        the curve table's)."""
        columns = (self.family, self.is_song)
        times = (self.arrivals.discovered_ms, self.arrivals.classified_ms)
        own = sum(a.nbytes for a in (*columns, *times))
        return own + self.table.nbytes + self.availability.nbytes

    def aids(self, idx: npt.ArrayLike | None = None) -> I8:
        """The aids of the videos ``idx`` (``None``: every video, by index), computed: the world
        keeps no column of them (8 bytes a video, 160 MB at 20M videos)."""
        i = np.arange(self._n, dtype=np.int64) if idx is None else np.asarray(idx, np.int64)
        out = self._codec.aids(i)
        for aid, row in self.pinned.items():  # a pinned row's aid is not the codec's
            out[i == row] = aid
        return out

    def aid_of(self, i: int) -> int:
        """The aid of video ``i`` (a Python int, whatever integer ``i`` is)."""
        i = int(i)
        return self._pinned_aid.get(i, self._codec.aid(i))

    def index(self, aid: int) -> int:
        """The internal index of ``aid``; raises ``KeyError`` for an aid the world never had."""
        return self.scalar.index(aid)

    def indices(self, aids: npt.ArrayLike) -> I8:
        """Element-wise :meth:`index`; raises ``KeyError`` naming the first unknown aid."""
        idx = self._codec.indices(aids, self._n)
        if self.pinned:  # a pinned row's aid is not the codec's (sim.world.pinned)
            a = np.asarray(aids, np.int64)
            idx = np.where(np.isin(idx, list(self._pinned_aid)), -1, idx)
            for aid, i in self.pinned.items():
                idx[a == aid] = i
        bad = np.flatnonzero(idx < 0)
        if bad.size:
            raise KeyError(int(np.asarray(aids).reshape(-1)[bad[0]]))
        return idx

    def views(self, aid: int, t_ms: Ms) -> int:
        """Views of ``aid`` at ``t_ms`` as the API would report them (the scalar hot path).

        The count exists even while the video is unavailable; ask :meth:`api_error` first.
        """
        return self.scalar.views(aid, t_ms)

    def views_many(self, aids: npt.ArrayLike, t_ms: Ms) -> I8:
        """Views of many aids at one instant; equal element-wise to :meth:`views`.

        Sorted aids are faster than shuffled ones: they read the columns in memory order
        (bench/world.py).
        """
        idx = self.indices(aids)
        return self.table.values(idx, self.clock.hours(t_ms), t_ms)

    def views_all(self, t_ms: Ms) -> I8:
        """Views of every video (by index) at one instant."""
        return self.table.values(None, self.clock.hours(t_ms), t_ms)

    def views_at(self, idx: I8, t_ms: npt.ArrayLike) -> I8:
        """Views of videos ``idx`` at instants ``t_ms`` (element-wise, broadcast)."""
        idx, t = np.broadcast_arrays(np.asarray(idx, np.int64), np.asarray(t_ms, np.int64))
        idx, t = np.ascontiguousarray(idx), np.ascontiguousarray(t)
        return self.table.values(idx, self.clock.hours_many(t), t)

    def api_error(self, aid: int, t_ms: Ms) -> int:
        """0 when ``aid`` is visible at ``t_ms``, else bilibili's error code (-404 before it is
        published or once deleted, 62002 hidden, 62004 under review)."""
        return self.scalar.api_error(aid, t_ms)

    def api_errors(self, aids: npt.ArrayLike, t_ms: Ms) -> I8:
        """Element-wise :meth:`api_error` at one instant."""
        idx = self.indices(aids)
        out = self.availability.errors(idx, t_ms)
        out[self.published_ms[idx] > t_ms] = DELETED
        return out

    def crossings(self, t0_ms: Ms, t1_ms: Ms) -> Crossings:
        """Ground truth: every ladder milestone first crossed in ``(t0, t1]``, exact to 1 ms
        (``V(t - 1 ms) < milestone <= V(t)``); see :mod:`sim.world.truth`."""
        idx, milestone, t = find_crossings(
            self.views_at, self._n, self.table.recount, t0_ms, t1_ms, self.ladder
        )
        errors = self.availability.errors(idx, t) if len(idx) else np.zeros(0, np.int64)
        visible = (errors == 0) & (self.published_ms[idx] <= t)
        return Crossings(self.aids(idx), idx, milestone, t, visible)


def _with_recounts(table: CurveTable, first: InitialCatalog, clock: TrafficClock) -> CurveTable:
    """Attach recount steps: each drops a fraction of the views just before it, at least one
    view and never below zero (the drop is judged on the curve with the earlier drops applied)."""
    rows, steps = first.recount_index, first.recount_ms
    cum = np.zeros(len(rows), np.int64)
    cum_drop = np.zeros_like(steps)
    for j in range(steps.shape[1]):
        valid = np.flatnonzero(steps[:, j] != NEVER_MS)
        t = steps[valid, j] - 1
        before = table.values(rows[valid], clock.hours_many(t), t) - cum[valid]
        frac = first.recount_fraction[valid, j]
        drop = np.minimum(np.maximum(np.floor(frac * before), 1), before).astype(np.int64)
        cum[valid] += np.maximum(drop, 0)
        cum_drop[:, j] = cum
    flags = table.flags.copy()
    flags[rows] |= RECOUNT_BIT
    return dataclasses.replace(table, flags=flags, recount=RecountSteps(rows, steps, cum_drop))
