"""Invariants 6 and 7: songs snapshotted at least every interval plus a slack; milestone
crossings captured within a bound (against the world's ground truth)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.metrics.base import Histogram, percentiles
from sim.metrics.invariants.common import (
    DEFAULT_CAPTURE_BOUND_MS,
    DEFAULT_STALE_INTERVAL_MS,
    DEFAULT_STALE_SLACK_MS,
    EXAMPLES,
    _last_t,
    _Violations,
)
from sim.metrics.invariants.gaps import SongGaps
from sim.metrics.invariants.truth import SongBaselines, Unavailability
from sim.units import SECOND_MS, Ms


class StaleSongs:
    """``invariants.stale_songs.*``: no available song goes longer than ``max_interval_ms +
    slack_ms`` without a snapshot (module docstring of the package; the gaps: :class:`SongGaps`).

    Args:
        songs: the songs known before the log starts (the catalogue), each with the instant its
            gap is measured from (its latest snapshot before the run, or the run start).
        max_interval_ms: the longest interval a song may legitimately wait (72 h, §11.6).
        slack_ms: tolerance on top (dispatch cadence, tick delays).
        unavailable: videos deleted, hidden or under review: their gaps are counted apart.
    """

    def __init__(
        self,
        songs: Mapping[int, Ms] | SongBaselines,
        *,
        max_interval_ms: Ms = DEFAULT_STALE_INTERVAL_MS,
        slack_ms: Ms = DEFAULT_STALE_SLACK_MS,
        unavailable: Unavailability | None = None,
    ) -> None:
        # The longest gaps are kept for finding ``staleness``, which reads these gaps when its
        # bound is the same rather than following every song a second time.
        self.gaps = SongGaps(songs, max_interval_ms + slack_ms, unavailable, keep_worst=EXAMPLES)

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        self.gaps.feed(chunk)

    def result(self) -> dict[str, Any]:
        g = self.gaps
        examples = list(g.first)
        avail, excused = g.open_gaps()
        room = EXAMPLES - len(examples)
        now = g.now if g.now is not None else 0
        for p in avail[:room].tolist():
            examples.append(g.example(int(g.aid[p]), int(g.last[p]), now, True))
        return {
            "invariants.stale_songs.violations": g.over + avail.size,
            "invariants.stale_songs.examples": examples,
            "invariants.stale_songs.bound_s": g.bound / SECOND_MS,
            "invariants.stale_songs.songs": int(g.aid.size),
            "invariants.stale_songs.max_gap_s": max(g.max_gap, g.longest_open()) / SECOND_MS,
            "invariants.stale_songs.unavailable": g.excused + excused.size,
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
        tracked: per crossing, whether the design promises to capture it (the video is a song,
            ``RunTruth.tracked``); a missed untracked crossing is counted apart, not a
            violation. Default: every crossing is tracked.
    """

    def __init__(
        self,
        crossings: CrossingTable,
        *,
        bound_ms: Ms = DEFAULT_CAPTURE_BOUND_MS,
        tracked: npt.ArrayLike | None = None,
    ) -> None:
        visible = np.asarray(crossings.visible, dtype=bool)
        aid = np.asarray(crossings.aid, dtype=np.int64)[visible]
        milestone = np.asarray(crossings.milestone, dtype=np.int64)[visible]
        t_star = np.asarray(crossings.t_ms, dtype=np.int64)[visible]
        every = np.ones(visible.size, bool) if tracked is None else np.asarray(tracked, bool)
        order = np.lexsort((milestone, aid, t_star))  # by instant, then aid, then milestone
        self.aid, self.milestone, self.t_star = aid[order], milestone[order], t_star[order]
        self.tracked = every[visible][order]
        self.visible_index = np.flatnonzero(visible)[order]
        """Each crossing's row in the ``crossings`` table."""
        self.hidden = int(visible.size - np.count_nonzero(visible))
        self.bound = bound_ms
        n = self.t_star.size
        self.captured_at = np.full(n, -1, dtype=np.int64)
        self.last_below = np.full(n, -1, dtype=np.int64)
        self.first_below = np.full(n, -1, dtype=np.int64)
        self.captured_type = np.full(n, -1, dtype=np.int64)
        self.open: dict[int, list[int]] = {}
        """aid -> its crossings not yet captured (indexes, by instant)."""
        for i, aid in enumerate(self.aid.tolist()):
            self.open.setdefault(aid, []).append(i)
        self.aids = np.unique(self.aid)
        self.judged = 0
        """Crossings whose deadline the log has passed (indexes below this, by instant)."""
        self.v = _Violations("missed_milestones")
        self.untracked_missed = 0
        self.latency = Histogram()
        self.bracket = Histogram()
        self.now: Ms | None = None

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        taken = chunk.table(K.SnapshotTaken)
        if taken.size and self.open:
            mine = taken[np.isin(taken[:, 2], self.aids)]
            latency: list[int] = []
            bracket: list[int] = []
            for _, _t, aid, _s, ty, _d, views, _dup, t in mine.tolist():
                waiting = self.open.get(aid)
                if not waiting:
                    continue
                for i in list(waiting):
                    m = int(self.milestone[i])
                    if views < m:
                        self.last_below[i] = t
                        if self.first_below[i] < 0:
                            self.first_below[i] = t
                    elif t >= self.t_star[i]:
                        self.captured_at[i] = t
                        self.captured_type[i] = ty
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
            if (got < 0 or got > deadline[i]) and not self.tracked[i]:
                self.untracked_missed += 1  # the design never promised it (``tracked``)
            elif got < 0 or got > deadline[i]:
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
            "invariants.missed_milestones.checked": int(
                np.count_nonzero(self.tracked[: self.judged])
            ),
            "invariants.missed_milestones.untracked": self.untracked_missed,
            "milestones.tracked": int(np.count_nonzero(self.tracked[:crossed])),
            "milestones.crossed": crossed,
            "milestones.captured": captured,
            "milestones.hidden": self.hidden,
        }
        for name, hist in (("capture_latency", self.latency), ("bracket_width", self.bracket)):
            stats = percentiles(hist, f"milestones.{name}", SECOND_MS)
            out.update({(k if k.endswith(".count") else k + "_s"): v for k, v in stats.items()})
        return out


# -- wiring -------------------------------------------------------------------------------------


class NoCrossings:
    """An empty :class:`CrossingTable`."""

    aid = np.empty(0, dtype=np.int64)
    milestone = np.empty(0, dtype=np.int64)
    t_ms = np.empty(0, dtype=np.int64)
    visible = np.empty(0, dtype=bool)
