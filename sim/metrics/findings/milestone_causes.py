"""Why a milestone crossing was missed: the first broken link of the design's chain.

To capture a crossing of milestone M at t*, the scheduler must have seen the video below M (its
latest views bring it near, reference §11.1), the milestone dispatcher must have booked a row
(``dispatchMilestoneSnapshots`` every 5 min, §11.5) that is pending between t* and the deadline
(t* + the capture target) and due by the deadline, the row must survive cleanup (§12: pending
rows 2 min overdue are deleted), and the snapshot must succeed upstream (§9). :class:`Causes`
follows the milestone rows and the failed attempts of the videos whose crossings are near (from
``LOOKBACK_MS`` before the crossing, the longest a milestone row can be booked ahead, to the
deadline) and :meth:`Causes.classify` names the first link that broke.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.units import HOUR_MS, Ms

I8 = npt.NDArray[np.int64]

CAUSES = (
    "run_ended",  # the deadline is after the end of the log: not judged
    "no_snapshot_below",  # no snapshot below M before t*: nothing showed it approaching
    "never_candidate",  # no milestone row pending between t* and the deadline
    "upstream_failure",  # an attempt for the video failed upstream in that span
    "deleted_by_cleanup",  # a milestone row of the video was deleted by cleanup in that span
    "booked_too_late",  # every pending milestone row was due after the deadline
    "executed_late",  # a row was due in time, but its snapshot came after the deadline
)
"""Causes of a missed crossing, in the order they are tested (the first that holds)."""

LOOKBACK_MS: Ms = 145 * HOUR_MS
"""A milestone row is booked at most 144 h ahead (the ETA limit, reference §11.5, §16.7)."""

NEVER_MS = np.iinfo(np.int64).max
_MILESTONE = K.SNAPSHOT_TYPE.code("milestone")
_FAILED = [K.SCHEDULE_STATUS.code(s) for s in ("failed", "no_proxy", "bili_error")]
_BILI_STATUS = K.SKIP_REASON.code("bili_status")
CREATED, MOVED, FINISHED, DELETED, FAILED = range(5)


class Causes:
    """Per crossing (sorted by instant, as :class:`~sim.metrics.invariants.MilestoneCapture`
    holds them): was a milestone row pending in ``[t*, deadline]``, its earliest due time, and
    whether a row was deleted or an attempt failed in that span."""

    def __init__(self, aid: I8, t_star: I8, deadline: I8) -> None:
        self.aid, self.t_star, self.deadline = aid, t_star, deadline
        n = t_star.size
        self.activated = np.zeros(n, bool)
        self.row_seen = np.zeros(n, bool)
        self.due_min = np.full(n, NEVER_MS, np.int64)
        self.deleted = np.zeros(n, bool)
        self.failed = np.zeros(n, bool)
        self.of_aid: dict[int, list[int]] = {}
        for i, a in enumerate(aid.tolist()):
            self.of_aid.setdefault(a, []).append(i)
        self.rows: dict[int, dict[int, int]] = {}
        """Watched aid -> its pending milestone rows -> due time."""
        self.watch: set[int] = set()

    def feed(self, chunk: Chunk, judged: int) -> None:
        """Follow ``chunk``'s events of the watched videos (``judged``: crossings before this
        index were judged before the chunk; their events may still be in it)."""
        ends = [int(t[-1, 1]) for t in chunk.tables.values() if t.shape[0]]
        if not ends:
            return
        end = max(ends)
        stop = int(np.searchsorted(self.t_star, end + LOOKBACK_MS, side="right"))
        watch = set(self.aid[judged:stop].tolist())
        for gone in self.watch - watch:  # its crossings so far are judged: settle, forget
            self._activate(gone, end)
            self.rows.pop(gone, None)
        self.watch = watch
        if watch:
            self._events(chunk, np.fromiter(watch, np.int64, len(watch)))

    def _events(self, chunk: Chunk, aids: I8) -> None:
        parts: list[I8] = []

        def take(kind: type, cols: Sequence[int], code: int, keep: npt.ArrayLike = True) -> None:
            table = chunk.table(kind)
            if table.size:
                sel = np.isin(table[:, 3], aids) & np.asarray(keep, bool)
                rows = table[sel][:, cols]
                parts.append(np.column_stack([rows, np.full(len(rows), code, np.int64)]))

        created = chunk.table(K.ScheduleCreated)
        take(K.ScheduleCreated, (0, 1, 3, 2, 6), CREATED, created[:, 4] == _MILESTONE)
        take(K.ScheduleMoved, (0, 1, 3, 2, 5), MOVED)
        take(K.ScheduleFinished, (0, 1, 3, 2, 6), FINISHED)
        deleted = chunk.table(K.ScheduleDeleted)
        take(K.ScheduleDeleted, (0, 1, 3, 2, 4), DELETED, deleted[:, 4] == _MILESTONE)
        skipped = chunk.table(K.ScheduleSkipped)
        take(K.ScheduleSkipped, (0, 1, 3, 2, 6), FAILED, skipped[:, 6] == _BILI_STATUS)
        take(K.RetryScheduled, (0, 1, 3, 2, 4), FAILED)
        parts = [p for p in parts if p.size]
        if not parts:
            return
        events = np.concatenate(parts)
        events = events[np.argsort(events[:, 0], kind="stable")]
        for _, t, aid, sid, value, kind in events.tolist():
            self._activate(aid, t)
            rows = self.rows.setdefault(aid, {})
            if kind == CREATED or (kind == MOVED and sid in rows):
                rows[sid] = value
                for i in self._spanning(aid, t):
                    self.row_seen[i] = True
                    self.due_min[i] = min(int(self.due_min[i]), value)
            elif kind == FINISHED:
                rows.pop(sid, None)
                if value in _FAILED:
                    self.failed[self._spanning(aid, t)] = True
            elif kind == DELETED:
                rows.pop(sid, None)
                self.deleted[self._spanning(aid, t)] = True
            elif kind == FAILED:
                self.failed[self._spanning(aid, t)] = True

    def _activate(self, aid: int, t: Ms) -> None:
        """Give the crossings of ``aid`` at or before ``t`` the rows pending at their instant
        (nothing of the aid happened between their instant and ``t``)."""
        rows = self.rows.get(aid)
        for i in self.of_aid[aid]:
            if self.t_star[i] > t:
                break
            if not self.activated[i]:
                self.activated[i] = True
                if rows:
                    self.row_seen[i] = True
                    self.due_min[i] = min(rows.values())

    def _spanning(self, aid: int, t: Ms) -> list[int]:
        """The crossings of ``aid`` whose span ``[t*, deadline]`` holds ``t``."""
        return [i for i in self.of_aid[aid] if self.t_star[i] <= t <= self.deadline[i]]

    def classify(self, missed: I8, decided: I8, below_before: I8, now: Ms) -> list[str]:
        """The cause of each crossing in ``missed`` (indexes; ``decided`` and ``below_before``
        are booleans over every crossing)."""
        for aid in {int(self.aid[i]) for i in missed.tolist()}:
            self._activate(aid, now)
        conditions = [
            ~decided[missed],
            ~below_before[missed],
            ~self.row_seen[missed],
            self.failed[missed],
            self.deleted[missed],
            self.due_min[missed] > self.deadline[missed],
        ]
        choice = np.select(conditions, list(range(len(conditions))), len(conditions))
        return [CAUSES[c] for c in choice.tolist()]
