"""Finding ``delivery``: did crashed, failed and duplicated queue jobs get their work done once?

Three mechanisms of ``[delivery]`` (docs/redelivery.md), each off by default:

* BullMQ's stalled check (reference §1.2): a crash abandons its running jobs (``JobAbandoned``);
  once a job's lock has expired, a stalled check on a live worker finds it (``JobStalled``) and
  delivers it again (``JobRedelivered`` cause ``stalled``), or fails it past
  ``maxStalledCount`` (``JobDropped`` ``stalled_limit``). Off, a crash loses them (``JobLost``);
* seed 004's consumer retry: a failed delivery comes back after the delay (``JobRetried``), a
  delivery past the cap is acknowledged and dropped (``JobDropped`` ``delivery_cap``);
* seed 004's dedupe: a message already processed within the TTL is skipped
  (``DuplicateSkipped``).

Counted from the log: per crash instant, the jobs abandoned (or lost); the check instants, the
redeliveries and failures; what the redelivered jobs did next (finished, rows started); retries,
drops by reason, duplicates skipped. It is written for runs with one of the mechanisms on, or
with a crash (``scheduler_restart``): with everything off it is ok and says how many running
jobs the crashes lost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from sim.events import cvsa_kinds as K
from sim.events.delivery_kinds import (
    DROP_REASON,
    REDELIVERY_CAUSE,
    DuplicateSkipped,
    JobAbandoned,
    JobDropped,
    JobRedelivered,
    JobRetried,
    JobStalled,
)
from sim.events.engine_kinds import JobFinished, JobLost
from sim.events.log import Chunk
from sim.metrics.findings.verdicts import Finding, Severity, finding_metrics, local
from sim.units import Ms

_STALLED = REDELIVERY_CAUSE.code("stalled")
_RETRY = REDELIVERY_CAUSE.code("retry")
_REASONS = DROP_REASON.words


def _at(counts: Counter[Ms], tz: Ms) -> str:
    return ", ".join(f"{n:,} at {local(t, tz)}" for t, n in sorted(counts.items()))


class DeliveryFinding:
    """Reducer of finding ``delivery`` (keyword arguments: ``[findings.delivery]``)."""

    ID = "delivery"

    def __init__(
        self,
        stalled_check: bool,
        consumer_retry: bool,
        dedupe: bool,
        tz_offset_ms: Ms,
        *,
        warn_dropped: int,
    ) -> None:
        self.on = (stalled_check, consumer_retry, dedupe)
        self.tz = tz_offset_ms
        self.warn_dropped = warn_dropped
        self.lost: Counter[Ms] = Counter()
        self.abandoned: Counter[Ms] = Counter()
        self.checks: Counter[Ms] = Counter()  # stalled jobs per check instant
        self.stall_redelivered = 0
        self.retry_redelivered = 0
        self.redelivered_jobs: set[int] = set()
        self.finished_ok = 0
        self.finished_failed = 0
        self.rows_started = 0
        self.retried = 0
        self.dropped: Counter[str] = Counter()
        self.duplicates = 0
        self.duplicate_rows = 0

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        for t in chunk.column(JobLost, "t_ms").tolist():
            self.lost[t] += 1
        for t in chunk.column(JobAbandoned, "t_ms").tolist():
            self.abandoned[t] += 1
        for t in chunk.column(JobStalled, "t_ms").tolist():
            self.checks[t] += 1
        # In log order: what a job does counts once it has been redelivered.
        marks = [
            (seq, 0, job, cause)
            for seq, _, _, job, _, _, cause in chunk.table(JobRedelivered).tolist()
        ]
        marks += [(seq, 1, job, ok) for seq, _, _, job, _, ok in chunk.table(JobFinished).tolist()]
        marks += [
            (seq, 2, job, 0) for seq, job in chunk.table(K.ScheduleStarted)[:, [0, -1]].tolist()
        ]
        for _, what, job, value in sorted(marks):
            if what == 0:
                if value != _STALLED:
                    self.retry_redelivered += 1
                    continue
                self.stall_redelivered += 1
                if job >= 0:  # what a job found stalled did next (iterations have no id)
                    self.redelivered_jobs.add(job)
            elif job not in self.redelivered_jobs:
                continue
            elif what == 1:
                self.finished_ok += value
                self.finished_failed += 1 - value
            else:
                self.rows_started += 1
        self.retried += chunk.table(JobRetried).shape[0]
        for reason in chunk.column(JobDropped, "reason").tolist():
            self.dropped[_REASONS[reason]] += 1
        self.duplicates += chunk.table(DuplicateSkipped).shape[0]
        self.duplicate_rows += int(chunk.column(DuplicateSkipped, "rows").sum())

    def finding(self) -> Finding:
        stalled_check, consumer_retry, dedupe = self.on
        n_lost, n_abandoned = sum(self.lost.values()), sum(self.abandoned.values())
        n_stalled = sum(self.checks.values())
        n_dropped = sum(self.dropped.values())
        parts = []
        if stalled_check:
            if n_abandoned:
                failed = self.dropped["stalled_limit"]
                waiting = n_abandoned - n_stalled
                parts.append(
                    f"crashes abandoned {n_abandoned:,} running job(s) "
                    f"({_at(self.abandoned, self.tz)}); the stalled check found {n_stalled:,} "
                    f"({_at(self.checks, self.tz)}): "
                    f"{self.stall_redelivered:,} delivered again, {failed:,} failed past "
                    f"maxStalledCount"
                    + (f", {waiting:,} still waiting at the end" if waiting else "")
                    + f"; redelivered jobs then finished {self.finished_ok:,} time(s) and "
                    f"started {self.rows_started:,} schedule row(s); without the stalled check "
                    f"all {n_abandoned:,} would be lost (`JobLost`)"
                )
            else:
                parts.append("the stalled check was on but no worker crashed while jobs ran")
        elif n_lost:
            parts.append(
                f"crashes lost {n_lost:,} running job(s) ({_at(self.lost, self.tz)}; "
                f"`JobLost`), never delivered again: the stalled check is off"
            )
        if consumer_retry:
            cap = self.dropped["delivery_cap"]
            parts.append(
                f"consumer retry: {self.retried:,} failed delivery(ies) came back "
                f"({self.retry_redelivered:,} redelivered), {cap:,} dropped past the delivery cap"
            )
        if dedupe:
            parts.append(
                f"dedupe: {self.duplicates:,} duplicate delivery(ies) skipped "
                f"({self.duplicate_rows:,} row(s) not snapshotted twice)"
            )
        if not any(self.on):
            severity = Severity.OK
            head = "Redelivery and dedupe are off"
        elif n_dropped >= self.warn_dropped:
            severity = Severity.WARN
            why = ", ".join(f"{n:,} {r}" for r, n in sorted(self.dropped.items()))
            head = f"{n_dropped:,} job(s) were given up ({why})"
        else:
            severity = Severity.OK
            head = "No job was given up"
        sentence = f"{head}: {'; '.join(parts)}." if parts else f"{head}."
        return Finding(
            id=self.ID,
            title="Redelivery and dedupe",
            severity=severity,
            sentence=sentence,
            mechanism=(
                "BullMQ's stalled check (reference §1.2: lock 30 s renewed every 15 s, check "
                "every 30 s, maxStalledCount 1) finds a job whose worker stopped renewing its "
                "lock and moves it back to wait, or fails it after its second stall; it runs only "
                "on a live worker, so after a crash it waits for the restart and the lock's "
                "expiry. Seed 004's consumer does not acknowledge a failed delivery (it comes back "
                "2 s later), drops a message delivered more than 3 times, and skips a message "
                "whose `msg:<id>` marker (24 h) says it was processed."
            ),
            numbers={
                "lost": n_lost,
                "abandoned": n_abandoned,
                "stalled": n_stalled,
                "redelivered_stalled": self.stall_redelivered,
                "redelivered_retry": self.retry_redelivered,
                "redelivered_finished": self.finished_ok,
                "redelivered_rows_started": self.rows_started,
                "retried": self.retried,
                "dropped_stalled_limit": self.dropped["stalled_limit"],
                "dropped_delivery_cap": self.dropped["delivery_cap"],
                "duplicates_skipped": self.duplicates,
            },
            examples=tuple(
                {"check": local(t, self.tz), "stalled": n}
                for t, n in sorted(self.checks.items())[:5]
            ),
            thresholds={"warn_dropped": self.warn_dropped},
        )

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())
