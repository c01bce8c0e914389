"""Invariants 6 and 7: songs snapshotted at least every interval plus a slack; milestone
crossings captured within a bound (against the world's ground truth)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.metrics.base import Samples, percentiles
from sim.metrics.invariants.common import (
    DEFAULT_CAPTURE_BOUND_MS,
    DEFAULT_STALE_INTERVAL_MS,
    DEFAULT_STALE_SLACK_MS,
    EXAMPLES,
    _last_t,
    _Violations,
)
from sim.units import SECOND_MS, Ms


class StaleSongs:
    """``invariants.stale_songs.*``: no song goes longer than ``max_interval_ms + slack_ms``
    without a snapshot (module docstring).

    Args:
        songs: the songs known before the log starts (the catalogue), each with the instant its
            gap is measured from (its latest snapshot before the run, or the run start).
        max_interval_ms: the longest interval a song may legitimately wait (72 h, §11.6).
        slack_ms: tolerance on top (dispatch cadence, tick delays).
    """

    def __init__(
        self,
        songs: Mapping[int, Ms],
        *,
        max_interval_ms: Ms = DEFAULT_STALE_INTERVAL_MS,
        slack_ms: Ms = DEFAULT_STALE_SLACK_MS,
    ) -> None:
        self.bound = max_interval_ms + slack_ms
        self.last: dict[int, Ms] = dict(songs)
        """Song -> the instant of its latest snapshot (or of its baseline)."""
        self.v = _Violations("stale_songs")
        self.max_gap: Ms = 0
        self.now: Ms | None = None

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        classified = chunk.table(K.SongClassified)
        taken = chunk.table(K.SnapshotTaken)
        end = _last_t(chunk)
        if end is not None:
            self.now = end if self.now is None else max(self.now, end)
        if not (classified.size or taken.size):
            return
        last, bound = self.last, self.bound
        # (seq, t, aid, is_snapshot) in log order: a song is known from its classification on.
        events = sorted(
            [(r[0], r[1], r[2], 0) for r in classified[:, :3].tolist()]
            + [(r[0], r[1], r[2], 1) for r in taken[:, :3].tolist()]
        )
        for _, t, aid, is_snapshot in events:
            prev = last.get(aid)
            if not is_snapshot:
                if prev is None:
                    last[aid] = t
                continue
            if prev is None:
                continue
            gap = t - prev
            if gap > self.max_gap:
                self.max_gap = gap
            if gap > bound:
                self.v.add(
                    {
                        "aid": aid,
                        "from_ms": prev,
                        "to_ms": t,
                        "gap_s": gap / SECOND_MS,
                        "open": False,
                    }
                )
            if t > prev:
                last[aid] = t

    def result(self) -> dict[str, Any]:
        count, examples, max_gap = self.v.count, list(self.v.examples), self.max_gap
        if self.now is not None:
            now = self.now
            open_gaps = sorted(
                (prev, aid) for aid, prev in self.last.items() if now - prev > self.bound
            )
            count += len(open_gaps)
            for prev, aid in open_gaps[: EXAMPLES - len(examples)]:
                examples.append(
                    {
                        "aid": aid,
                        "from_ms": prev,
                        "to_ms": now,
                        "gap_s": (now - prev) / SECOND_MS,
                        "open": True,
                    }
                )
            if self.last:
                max_gap = max(max_gap, now - min(self.last.values()))
        return {
            "invariants.stale_songs.violations": count,
            "invariants.stale_songs.examples": examples,
            "invariants.stale_songs.bound_s": self.bound / SECOND_MS,
            "invariants.stale_songs.songs": len(self.last),
            "invariants.stale_songs.max_gap_s": max_gap / SECOND_MS,
        }


# -- 7. missed_milestones -----------------------------------------------------------------------


class CrossingTable(Protocol):
    """Milestone ground truth, sorted by instant (``sim.world.truth.Crossings``)."""

    @property
    def aid(self) -> npt.NDArray[np.int64]: ...

    @property
    def milestone(self) -> npt.NDArray[np.int64]: ...

    @property
    def t_ms(self) -> npt.NDArray[np.int64]: ...

    @property
    def visible(self) -> npt.NDArray[np.bool_]: ...


class MilestoneCapture:
    """``invariants.missed_milestones.*`` and ``milestones.*``: was every milestone crossing seen
    by a snapshot within ``bound_ms``? (module docstring)

    Args:
        crossings: the world's ground truth over the run (``World.crossings(start, end)``).
        bound_ms: a crossing not shown by a snapshot within this time is missed.
    """

    def __init__(
        self, crossings: CrossingTable, *, bound_ms: Ms = DEFAULT_CAPTURE_BOUND_MS
    ) -> None:
        visible = np.asarray(crossings.visible, dtype=bool)
        aid = np.asarray(crossings.aid, dtype=np.int64)[visible]
        milestone = np.asarray(crossings.milestone, dtype=np.int64)[visible]
        t_star = np.asarray(crossings.t_ms, dtype=np.int64)[visible]
        order = np.lexsort((milestone, aid, t_star))  # by instant, then aid, then milestone
        self.aid, self.milestone, self.t_star = aid[order], milestone[order], t_star[order]
        self.hidden = int(visible.size - np.count_nonzero(visible))
        self.bound = bound_ms
        n = self.t_star.size
        self.captured_at = np.full(n, -1, dtype=np.int64)
        self.last_below = np.full(n, -1, dtype=np.int64)
        self.open: dict[int, list[int]] = {}
        """aid -> its crossings not yet captured (indexes, by instant)."""
        for i, aid in enumerate(self.aid.tolist()):
            self.open.setdefault(aid, []).append(i)
        self.aids = np.unique(self.aid)
        self.judged = 0
        """Crossings whose deadline the log has passed (indexes below this, by instant)."""
        self.v = _Violations("missed_milestones")
        self.latency = Samples()
        self.bracket = Samples()
        self.now: Ms | None = None

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        taken = chunk.table(K.SnapshotTaken)
        if taken.size and self.open:
            mine = taken[np.isin(taken[:, 2], self.aids)]
            latency: list[int] = []
            bracket: list[int] = []
            for _, _t, aid, _s, _ty, _d, views, _dup, t in mine.tolist():
                waiting = self.open.get(aid)
                if not waiting:
                    continue
                for i in list(waiting):
                    m = int(self.milestone[i])
                    if views < m:
                        self.last_below[i] = t
                    elif t >= self.t_star[i]:
                        self.captured_at[i] = t
                        latency.append(t - int(self.t_star[i]))
                        below = int(self.last_below[i])
                        if below >= 0:
                            bracket.append(t - below)
                        waiting.remove(i)
                if not waiting:
                    del self.open[aid]
            self.latency.add(np.asarray(latency, dtype=np.int64))
            self.bracket.add(np.asarray(bracket, dtype=np.int64))
        end = _last_t(chunk)
        if end is None:
            return
        self.now = end if self.now is None else max(self.now, end)
        # Judge every crossing whose deadline is strictly before the log's latest instant: every
        # snapshot up to the deadline has been seen.
        deadline = self.t_star + self.bound
        stop = int(np.searchsorted(deadline, self.now, side="left"))
        for i in range(self.judged, stop):
            got = int(self.captured_at[i])
            if got < 0 or got > deadline[i]:
                self.v.add(
                    {
                        "aid": int(self.aid[i]),
                        "milestone": int(self.milestone[i]),
                        "t_ms": int(self.t_star[i]),
                        "deadline_ms": int(deadline[i]),
                        "last_below_ms": int(self.last_below[i]),
                    }
                )
        self.judged = max(self.judged, stop)

    def result(self) -> dict[str, Any]:
        now = self.now
        crossed = 0 if now is None else int(np.searchsorted(self.t_star, now, side="right"))
        captured = int(np.count_nonzero(self.captured_at >= 0))
        rest = slice(self.judged, crossed)
        in_time = (self.captured_at[rest] >= 0) & (
            self.captured_at[rest] <= self.t_star[rest] + self.bound
        )
        out: dict[str, Any] = {
            **self.v.result(),
            "invariants.missed_milestones.bound_s": self.bound / SECOND_MS,
            "invariants.missed_milestones.undecided": int(np.count_nonzero(~in_time)),
            "milestones.crossed": crossed,
            "milestones.captured": captured,
            "milestones.hidden": self.hidden,
        }
        for name, samples in (("capture_latency", self.latency), ("bracket_width", self.bracket)):
            stats = percentiles(samples.array(), f"milestones.{name}", SECOND_MS)
            out.update({(k if k.endswith(".count") else k + "_s"): v for k, v in stats.items()})
        return out


# -- wiring -------------------------------------------------------------------------------------


class NoCrossings:
    """An empty :class:`CrossingTable`."""

    aid = np.empty(0, dtype=np.int64)
    milestone = np.empty(0, dtype=np.int64)
    t_ms = np.empty(0, dtype=np.int64)
    visible = np.empty(0, dtype=bool)
