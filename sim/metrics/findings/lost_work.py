"""Finding ``lost_work``: work the scheduler asked for and never did, or did twice.

Four ways work goes missing or repeats (issue 25 item 6):

* ``scheduleCleanup`` deletes rows that stayed pending or processing past their cutoff (seed 000
  §12, reference §12); a deleted row for which no snapshot ever carried its id is *lost*
  (the ``lost_schedules`` rule of :mod:`sim.metrics.invariants`, whose result this finding reads);
* a row finishes without a snapshot: ``failed`` (the upstream kept failing until the retries ran
  out, seed 004), ``no_proxy`` or ``bili_error`` (the video answered with an error code, §9);
* a job is lost when its worker crashes (``JobLost``: a scheduler restart, seed 004
  redelivery is absent in the design);
* a row is dispatched again while its job is still running (the bulk re-enqueue, reference
  §8.3), and the unique (aid, created_at) index refuses a second snapshot of one instant
  (``SnapshotTaken.duplicate``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events.engine_kinds import JobLost
from sim.events.log import Chunk
from sim.metrics.base import Reducer
from sim.metrics.findings.fault_windows import FaultWindows
from sim.metrics.findings.verdicts import EXAMPLES, Finding, Severity, finding_metrics, local
from sim.units import Ms

_TYPES = K.SNAPSHOT_TYPE.words
_NOT_TAKEN = tuple(K.SCHEDULE_STATUS.code(s) for s in ("failed", "no_proxy", "bili_error"))


class LostWork:
    """Reducer of finding ``lost_work`` (keyword arguments: ``[findings.lost_work]``).

    ``lifecycle`` is the run's :class:`~sim.metrics.invariants.LifecycleInvariants`, fed the
    same log in the same group: its ``lost_schedules`` and ``redispatched`` counts are read from
    it rather than tracked twice (that rule follows every live row)."""

    ID = "lost_work"

    def __init__(
        self, lifecycle: Reducer, tz_offset_ms: Ms, *, warn_lost: int, fail_lost_share: float
    ) -> None:
        self.lifecycle = lifecycle
        self.tz_offset_ms = tz_offset_ms
        self.warn_lost = warn_lost
        self.fail_lost_share = fail_lost_share
        self.created = 0
        self.deleted: Counter[tuple[str, str]] = Counter()  # (type, status at deletion)
        self.deleted_in_fault = 0
        self.not_taken: Counter[tuple[str, str]] = Counter()  # (type, final status)
        self.jobs_lost = 0
        self.duplicates: Counter[str] = Counter()
        self.faults = FaultWindows()
        self.waiting: set[int] = set()  # rows dispatched whose job has not taken them up
        self.deleted_waiting = 0
        self.examples: list[dict[str, Any]] = []

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        self.faults.feed(chunk)
        self._waiting(chunk)
        self.created += chunk.table(K.ScheduleCreated).shape[0]
        deleted = chunk.table(K.ScheduleDeleted)
        for t, row, aid, ty, due, st in deleted[:, 1:7].tolist():
            self.deleted[(_TYPES[ty], K.SCHEDULE_STATUS.word(st))] += 1
            fault = self.faults.at(due)
            self.deleted_in_fault += fault is not None
            if row in self.waiting:
                self.waiting.discard(row)
                self.deleted_waiting += 1
            if len(self.examples) < EXAMPLES:
                self.examples.append(
                    {
                        "deleted": local(t, self.tz_offset_ms),
                        "due": local(due, self.tz_offset_ms),
                        "aid": aid,
                        "type": _TYPES[ty],
                        "status": K.SCHEDULE_STATUS.word(st),
                        "during_fault": fault or "",
                    }
                )
        fin = chunk.table(K.ScheduleFinished)
        failed = fin[np.isin(fin[:, 6], _NOT_TAKEN)]
        for ty, st in failed[:, [4, 6]].tolist():
            self.not_taken[(_TYPES[ty], K.SCHEDULE_STATUS.word(st))] += 1
        self.jobs_lost += chunk.table(JobLost).shape[0]
        taken = chunk.table(K.SnapshotTaken)
        dup = taken[taken[:, 7] == 1]
        for ty in dup[:, 4].tolist():
            self.duplicates[_TYPES[ty] if ty >= 0 else "discovery"] += 1

    def _waiting(self, chunk: Chunk) -> None:
        """Rows dispatched and not yet taken up by a worker (their job waits, or was dropped)."""
        self.waiting.update(chunk.column(K.ScheduleDispatched, "schedule").tolist())
        self.waiting.difference_update(chunk.column(K.ScheduleStarted, "schedule").tolist())
        self.waiting.difference_update(chunk.column(K.ScheduleFinished, "schedule").tolist())

    def finding(self) -> Finding:
        inv = self.lifecycle.result()
        lost = int(inv.get("invariants.lost_schedules.violations", 0))
        undecided = int(inv.get("invariants.lost_schedules.undecided", 0))
        redispatched = int(inv.get("invariants.single_path_processing.redispatched", 0))
        deleted = sum(self.deleted.values())
        not_taken = sum(self.not_taken.values())
        duplicates = sum(self.duplicates.values())
        share = lost / self.created if self.created else 0.0
        if lost and share >= self.fail_lost_share:
            severity = Severity.FAIL
        elif lost >= self.warn_lost or self.jobs_lost:
            severity = Severity.WARN
        elif deleted or not_taken or duplicates or redispatched:
            severity = Severity.INFO
        else:
            severity = Severity.OK
        parts = []
        if deleted:
            parts.append(
                f"cleanup deleted {deleted:,} row(s) ({_breakdown(self.deleted)}; "
                f"{self.deleted_waiting:,} dispatched but never taken up by a worker, "
                f"{self.deleted_in_fault:,} due during a fault), {lost:,} of which never got a "
                f"snapshot ({share:.2%} of {self.created:,} rows created)"
            )
        if not_taken:
            parts.append(
                f"{not_taken:,} row(s) finished without a snapshot ({_breakdown(self.not_taken)})"
            )
        if self.jobs_lost:
            parts.append(f"{self.jobs_lost:,} job(s) were lost in a crash")
        if redispatched:
            parts.append(f"{redispatched:,} row(s) were dispatched again while in a job")
        if duplicates:
            parts.append(
                f"{duplicates:,} duplicate snapshot(s) were refused by the unique (aid, time) index"
            )
        if parts:
            sentence = "; ".join(parts)
            sentence = sentence[0].upper() + sentence[1:] + "."
        else:
            sentence = (
                f"No work was lost or repeated: none of {self.created:,} rows was deleted by "
                "cleanup or finished without a snapshot, and no snapshot was taken twice."
            )
        return Finding(
            id=self.ID,
            title="Lost and repeated work",
            severity=severity,
            sentence=sentence,
            mechanism=(
                "scheduleCleanup deletes pending or processing rows past their cutoff (§12): a "
                "pending row there was never dispatched in time (ticks behind, or filtered), a "
                "processing one belongs to a job that did not finish (crashed, or stuck in "
                "retries); a deleted row without any snapshot is lost. Rows that end failed, "
                "no_proxy or bili_error took no snapshot (seed 004 retries exhausted, no proxy, "
                "or the video's error code). Repeats come from the bulk re-enqueue (reference "
                "§8.3) and are refused by the unique (aid, time) index."
            ),
            numbers={
                "rows_created": self.created,
                "deleted": deleted,
                "deleted_during_fault": self.deleted_in_fault,
                "deleted_never_taken_up": self.deleted_waiting,
                "lost": lost,
                "lost_share": round(share, 6),
                "lost_undecided": undecided,
                "finished_without_snapshot": not_taken,
                "jobs_lost": self.jobs_lost,
                "redispatched": redispatched,
                "duplicates": duplicates,
                **{f"deleted.{t}.{s}": n for (t, s), n in sorted(self.deleted.items())},
                **{f"not_taken.{t}.{s}": n for (t, s), n in sorted(self.not_taken.items())},
            },
            examples=tuple(self.examples),
            plots=("cleanup.png",),
            thresholds={"warn_lost": self.warn_lost, "fail_lost_share": self.fail_lost_share},
        )

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())


def _breakdown(counts: Counter[tuple[str, str]]) -> str:
    return ", ".join(f"{t} {s} {n:,}" for (t, s), n in counts.most_common())
