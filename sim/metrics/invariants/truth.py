"""What the songs' checks need from the world, built once per run (invariants ``stale_songs`` and
``missed_milestones``, findings ``milestones`` and ``staleness``).

The catalogue load writes no events, and the log does not say which videos are songs before
they are snapshotted, when a video crosses a milestone, or when the API stops answering for it;
the world does. :func:`run_truth` reads it once (the crossings are the costly part: a bisection
over every video's curve) and every reducer that needs it gets the same :class:`RunTruth`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from sim.units import Ms

if TYPE_CHECKING:
    from sim.metrics.invariants.songs import CrossingTable
    from sim.world import World

I8 = npt.NDArray[np.int64]
NEVER = np.iinfo(np.int64).max
B1 = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Unavailability:
    """Videos the API stops answering for (deleted, hidden or under review): sorted ``aid``, the
    span ``[from_ms, until_ms)`` it answers with the non-zero ``code`` (``until_ms`` is
    :attr:`NEVER_MS` unless a review ends; ``sim.world.availability``)."""

    aid: I8 = field(default_factory=lambda: np.empty(0, np.int64))
    from_ms: I8 = field(default_factory=lambda: np.empty(0, np.int64))
    until_ms: I8 = field(default_factory=lambda: np.empty(0, np.int64))
    code: I8 = field(default_factory=lambda: np.empty(0, np.int64))

    NEVER_MS = NEVER
    """``from_ms`` of a video that stays available."""

    def lookup(self, aids: I8) -> tuple[I8, I8, I8]:
        """``(from_ms, until_ms, code)`` of each of ``aids`` (an available video: from and
        until :attr:`NEVER_MS`, code 0)."""
        aids = np.asarray(aids, np.int64)
        from_ms = np.full(aids.size, self.NEVER_MS, np.int64)
        until_ms = np.full(aids.size, self.NEVER_MS, np.int64)
        code = np.zeros(aids.size, np.int64)
        if self.aid.size and aids.size:
            pos = np.minimum(np.searchsorted(self.aid, aids), self.aid.size - 1)
            hit = self.aid[pos] == aids
            from_ms[hit], until_ms[hit] = self.from_ms[pos[hit]], self.until_ms[pos[hit]]
            code[hit] = self.code[pos[hit]]
        return from_ms, until_ms, code


@dataclass(frozen=True)
class SongBaselines:
    """Songs known before the log starts, each with the instant its first gap is measured from:
    ``aid`` sorted, ``since_ms`` aligned with it. Two arrays, not a dict: at 20M videos a dict of
    the 2M songs held about 200 MB while it was built, and a sort of its items took seconds."""

    aid: I8 = field(default_factory=lambda: np.empty(0, np.int64))
    since_ms: I8 = field(default_factory=lambda: np.empty(0, np.int64))

    @classmethod
    def of(cls, songs: Mapping[int, Ms] | SongBaselines) -> SongBaselines:
        """The baselines of ``songs`` (aid -> instant), or ``songs`` if they are baselines."""
        if isinstance(songs, SongBaselines):
            return songs
        aid = np.fromiter(songs.keys(), np.int64, len(songs))
        since = np.fromiter(songs.values(), np.int64, len(songs))
        order = np.argsort(aid, kind="stable")
        return cls(aid[order], since[order])

    def __len__(self) -> int:
        return int(self.aid.size)


@dataclass(frozen=True)
class RunTruth:
    """The world's answers the songs' checks need (module docstring)."""

    crossings: CrossingTable
    """Every milestone first crossed during the run (``World.crossings``)."""
    tracked: B1
    """Per crossing: the video was a song at the crossing (the design tracks songs: only songs get
    regular snapshots that keep their latest views current, seed 000 "normal类型")."""
    known_before: B1
    """Per crossing: the video had a snapshot before the run (the catalogue load's), so the
    scheduler knew it below the milestone."""
    songs: SongBaselines
    """The catalogue's songs, each with the instant of its latest snapshot before the run."""
    unavailable: Unavailability


def catalog_song_baselines(world: World, start_ms: Ms, history_ms: Iterable[Ms]) -> SongBaselines:
    """The initial catalogue's songs, each with the instant of its latest history snapshot (the
    catalogue load gives every video published by ``start - offset`` a snapshot at that instant,
    ``sim.scheduler.feed.load_catalog``), or ``start_ms`` when it has none."""
    cat = world.initial
    aid, published = world.aids(np.flatnonzero(cat.is_song)), cat.published_ms[cat.is_song]
    base = np.full(aid.size, start_ms, dtype=np.int64)
    found = np.zeros(aid.size, dtype=bool)
    for offset in sorted(set(history_ms)):  # the latest snapshot first
        t = start_ms - offset
        hit = ~found & (published <= t)
        base[hit] = t
        found |= hit
    order = np.argsort(aid, kind="stable")
    return SongBaselines(aid[order], base[order])


def run_truth(world: World, start_ms: Ms, end_ms: Ms, history_ms: Iterable[Ms]) -> RunTruth:
    """:class:`RunTruth` of a run over ``[start_ms, end_ms]`` of ``world``."""
    history = sorted(set(history_ms))
    crossings = world.crossings(start_ms, end_ms)
    idx = np.asarray(crossings.index, np.int64)
    n0 = len(world.initial)
    arrival = idx >= n0
    # An arrival is a song from its classification on (SongClassified); before it, nothing
    # schedules it as one.
    classified = np.full(idx.size, np.iinfo(np.int64).min, np.int64)
    classified[arrival] = world.arrivals.classified_ms[idx[arrival] - n0]
    tracked = world.is_song[idx] & (classified <= crossings.t_ms)
    known = ~arrival & bool(history)
    if history:
        known &= world.published_ms[idx] <= start_ms - history[0]
    av = world.availability
    aid = world.aids(av.index)
    order = np.argsort(aid, kind="stable")
    return RunTruth(
        crossings=crossings,
        tracked=tracked,
        known_before=known,
        songs=catalog_song_baselines(world, start_ms, history),
        unavailable=Unavailability(
            aid[order], av.from_ms[order], np.minimum(av.until_ms[order], NEVER), av.code[order]
        ),
    )
