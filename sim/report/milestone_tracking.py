"""Milestone tracking against ground truth: one row per milestone crossing of the run.

Ground truth is the world's (``World.crossings``: aid, milestone M, the first instant t* with
views >= M, and whether the video was visible then; and whether the video is a song, since the
scheduler tracks milestones of songs). For each visible crossing up to the end of the log, the
series reads ``SnapshotTaken`` records of the aid:

* *captured* by the first snapshot at or after t* that reads views >= M; ``latency_s`` is its
  instant minus t*;
* ``bracket_s`` is the capturing snapshot minus the last snapshot of the aid below M (the span in
  which the scheduler knew the crossing happened), when the log holds one.

These are the rules of the ``milestones.capture_latency.*`` and ``milestones.bracket_width.*``
metrics of the invariant monitors; this module keeps every sample, for the distribution plots.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.report.series import Span
from sim.report.tables import Column, Table, local_times
from sim.units import SECOND_MS, Ms

if TYPE_CHECKING:
    from sim.world import World

I8 = npt.NDArray[np.int64]
NOT_CAPTURED = -1


@dataclass(frozen=True)
class GroundTruth:
    """Milestone crossings of a run, one entry per (aid, milestone), by instant."""

    aid: I8
    milestone: I8
    t_ms: I8
    """First instant with views >= milestone."""
    visible: npt.NDArray[np.bool_]
    """Whether the API answered normally then (a hidden video's crossing cannot be seen)."""
    song: npt.NDArray[np.bool_]

    @classmethod
    def of(cls, world: World, start_ms: Ms, end_ms: Ms) -> GroundTruth:
        """The crossings of ``world`` in ``(start_ms, end_ms]``."""
        c = world.crossings(start_ms, end_ms)
        return cls(c.aid, c.milestone, c.t_ms, c.visible, world.is_song[c.index])

    @classmethod
    def none(cls) -> GroundTruth:
        """No ground truth (a model without a world)."""
        empty = np.empty(0, dtype=np.int64)
        return cls(empty, empty, empty, empty.astype(np.bool_), empty.astype(np.bool_))


class MilestoneTracking:
    """``milestones``: capture latency and bracket width of every visible crossing."""

    def __init__(self, truth: GroundTruth, tz_ms: Ms) -> None:
        self.tz_ms = tz_ms
        visible = np.asarray(truth.visible, dtype=bool)
        aid = np.asarray(truth.aid, dtype=np.int64)[visible]
        milestone = np.asarray(truth.milestone, dtype=np.int64)[visible]
        t_star = np.asarray(truth.t_ms, dtype=np.int64)[visible]
        song = np.asarray(truth.song, dtype=bool)[visible]
        order = np.lexsort((milestone, aid, t_star))
        self.aid, self.milestone, self.t_star = aid[order], milestone[order], t_star[order]
        self.song = song[order]
        self.captured = np.full(len(order), NOT_CAPTURED, dtype=np.int64)
        self.last_below = np.full(len(order), NOT_CAPTURED, dtype=np.int64)
        self.open: dict[int, list[int]] = {}
        """aid -> indexes of its crossings not yet captured, by instant."""
        for i, a in enumerate(self.aid.tolist()):
            self.open.setdefault(a, []).append(i)

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        taken = chunk.table(K.SnapshotTaken)
        if not taken.size or not self.open:
            return
        aids = np.fromiter(self.open, dtype=np.int64, count=len(self.open))
        mine = taken[np.isin(taken[:, 2], aids)]
        # The count is the one at the answer's server time (taken_ms), as in sim.metrics.invariants.
        for t, aid, views in mine[:, [8, 2, 6]].tolist():
            waiting = self.open.get(aid)
            if not waiting:
                continue
            for i in list(waiting):
                if views < self.milestone[i]:
                    self.last_below[i] = t
                elif t >= self.t_star[i]:
                    self.captured[i] = t
                    waiting.remove(i)
            if not waiting:
                del self.open[aid]

    def tables(self, span: Span) -> dict[str, Table]:
        keep = self.t_star <= span.end_ms
        t_star, captured = self.t_star[keep], self.captured[keep]
        below = self.last_below[keep]
        got = captured != NOT_CAPTURED
        latency = np.where(got, (captured - t_star) / SECOND_MS, np.nan)
        bracket = np.where(got & (below != NOT_CAPTURED), (captured - below) / SECOND_MS, np.nan)
        cols: dict[str, Column] = {
            "aid": self.aid[keep],
            "song": self.song[keep].astype(np.int64),
            "milestone": self.milestone[keep],
            "crossed_ms": t_star,
            "crossed": local_times(t_star, self.tz_ms),
            "captured_ms": captured,
            "latency_s": latency.astype(np.float64),
            "bracket_s": bracket.astype(np.float64),
        }
        return {"milestones": Table(cols)}
