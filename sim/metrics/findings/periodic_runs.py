"""Finding ``periodic``: did each periodic job's work run once per slot, from one place?

Two ways to run the periodic jobs (``[periodic] policy``, docs/periodic.md):

* BullMQ job schedulers (reference §1.3-1.4): every deployment has its own, so a second
  deployment runs every job a second time; an iteration that outlasts its period runs beside
  the next (re-entry); late slots are skipped (``IterationsMissed``); a crash loses the running
  iterations, and nobody runs anything until a worker is back;
* seed 001's job table: one executor, the process holding the lock, runs the table; no job runs
  twice at once; a run cut off by a crash is marked failed by the next holder
  (``JobRunInterrupted``); while no process holds the lock, the scheduler is offline.

Counted from the log: runs (announced iterations and idle ones), re-entries (an iteration of a
job starting while another of the same job is running, as far as the log shows: idle
iterations carry no start and end), slots run by two deployments (work done twice: slot =
planned time // period), missed and skipped runs, interrupted runs and offline time.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from sim.events import cvsa_kinds as K
from sim.events import table_kinds as T
from sim.events.engine_kinds import (
    IdleIterations,
    IterationFinished,
    IterationsMissed,
    IterationStarted,
    JobInterrupted,
    JobLost,
    RunEnded,
)
from sim.events.log import Chunk
from sim.metrics.findings.fault_windows import FaultWindows
from sim.metrics.findings.verdicts import Finding, Severity, duration, finding_metrics, local
from sim.units import Ms

_RESTART = K.FAULT_KIND.code("scheduler_restart")


def _split(name: str) -> tuple[str, str]:
    """``dispatchRegularSnapshots#2`` -> (job, deployment): ``("dispatchRegularSnapshots",
    "#2")``; the first deployment is ``""``."""
    base, sep, rest = name.partition("#")
    return base, sep + rest


class PeriodicRuns:
    """Reducer of finding ``periodic`` (keyword arguments: ``[findings.periodic]``)."""

    ID = "periodic"

    def __init__(
        self,
        periods_ms: Mapping[str, Ms],
        policy: str,
        tz_offset_ms: Ms,
        *,
        warn_twice: int,
        warn_reentries: int,
    ) -> None:
        self.periods_ms = dict(periods_ms)
        self.policy = policy
        self.tz_offset_ms = tz_offset_ms
        self.warn_twice = warn_twice
        self.warn_reentries = warn_reentries
        self.runs = 0
        self.failed = 0
        self.reentries: Counter[str] = Counter()
        self.active: dict[int, set[int]] = {}  # job name -> due times of announced, unfinished
        self.slots: dict[tuple[str, str], tuple[array[int], array[int]]] = {}
        """(job, deployment) -> the ranges of slots it ran: their first and last slots, in int64
        arrays, 16 B a range, not about 140 B as a list of two ints (a skipped slot starts a new
        range; docs/performance.md "Where the reducer process's memory goes")."""
        self.missed = 0
        self.skipped = 0
        self.interrupted = 0
        self.lost_at: Ms | None = None
        self.offline: list[tuple[Ms, Ms]] = []  # (from, to) with no executor (table)
        self.end_ms: Ms | None = None
        self.faults = FaultWindows()

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        self.faults.feed(chunk)
        # Starts, ends and losses (a crash: the run never ends) in log order, for re-entries.
        marks = [(seq, 1, s, due, 1) for seq, _, s, due in chunk.table(IterationStarted).tolist()]
        marks += [
            (seq, 0, s, due, ok) for seq, _, s, due, ok in chunk.table(IterationFinished).tolist()
        ]
        marks += [(seq, -1, s, due, 0) for seq, _, _, _, s, due in chunk.table(JobLost).tolist()]
        marks += [
            (seq, -1, s, due, 0)
            for seq, _, s, _, _, due, _ in chunk.table(T.JobRunInterrupted).tolist()
        ]
        for _, what, s, due, ok in sorted(marks):
            active = self.active.setdefault(s, set())
            if what == 1:
                if active:
                    self.reentries[names[s]] += 1
                active.add(due)
                self._slots(names[s], due, due)
            else:
                active.discard(due)
                if what == 0:
                    self.runs += 1
                    self.failed += 1 - ok
        for _, _, s, first, last, n in chunk.table(IdleIterations).tolist():
            self.runs += n
            self._slots(names[s], first, last)
        self.missed += int(chunk.table(IterationsMissed)[:, 3].sum())
        self.skipped += chunk.table(T.JobRunSkipped).shape[0]
        self.interrupted += chunk.table(T.JobRunInterrupted).shape[0]
        for name in chunk.column(JobInterrupted, "name").tolist():
            self.interrupted += _split(names[name])[0] in self.periods_ms
        locks = [(seq, t, 1) for seq, t, _ in chunk.table(T.ExecutorLockTaken).tolist()]
        locks += [(seq, t, 0) for seq, t, _ in chunk.table(T.ExecutorLockLost).tolist()]
        for _, t, taken in sorted(locks):
            if not taken:
                self.lost_at = t
            elif self.lost_at is not None:
                self.offline.append((self.lost_at, t))
                self.lost_at = None
        for t in chunk.column(RunEnded, "t_ms").tolist():
            self.end_ms = t

    def _slots(self, name: str, first_due: Ms, last_due: Ms) -> None:
        job, deployment = _split(name)
        period = self.periods_ms.get(job)
        if period is None:
            return
        lo, hi = first_due // period, last_due // period
        firsts, lasts = self.slots.setdefault((job, deployment), (array("q"), array("q")))
        if firsts and firsts[-1] <= lo <= lasts[-1] + 1:
            lasts[-1] = max(lasts[-1], hi)
        else:
            firsts.append(lo)
            lasts.append(hi)

    def twice(self) -> Counter[str]:
        """Per job: slots run by more than one deployment."""
        out: Counter[str] = Counter()
        deployments = Counter(job for job, _ in self.slots)
        for job in sorted(deployments):
            if deployments[job] < 2:
                # Nothing to compare, and merging is a tuple a range: a month of full scale's
                # 1-s tick alone has 1,145,593 ranges (docs/performance.md "Where the reducer
                # process's memory goes").
                continue
            runs = [_merged(r) for (j, _), r in sorted(self.slots.items()) if j == job]
            for i, a in enumerate(runs):
                for b in runs[i + 1 :]:
                    out[job] += _overlap(a, b)
        return +out

    def _offline(self) -> list[tuple[Ms, Ms]]:
        if self.policy == "table":
            open_end = [(self.lost_at, self.end_ms)] if self.lost_at is not None else []
            return self.offline + [(a, b) for a, b in open_end if b is not None]
        return [
            (start, end)
            for start, end, _, kind in self.faults.intervals
            if kind == _RESTART and end < 2**62
        ]

    def finding(self) -> Finding:
        twice = self.twice()
        n_twice, n_reentries = sum(twice.values()), sum(self.reentries.values())
        offline = self._offline()
        offline_ms = sum(b - a for a, b in offline)
        problems = []
        if n_twice >= self.warn_twice:
            worst = ", ".join(f"{job} {n:,}" for job, n in twice.most_common(3))
            problems.append(f"{n_twice:,} slot(s) ran in two deployments ({worst})")
        if n_reentries >= self.warn_reentries:
            worst = ", ".join(f"{job} {n:,}" for job, n in self.reentries.most_common(3))
            problems.append(
                f"{n_reentries:,} run(s) started while their job was still running ({worst})"
            )
        how = (
            "from seed 001's job table, run by the one process holding its lock"
            if self.policy == "table"
            else "as BullMQ job schedulers"
        )
        extras = []
        if self.missed:
            extras.append(f"{self.missed:,} slot(s) missed")
        if self.skipped:
            extras.append(f"{self.skipped:,} run(s) skipped by an operator")
        if self.interrupted:
            extras.append(f"{self.interrupted:,} run(s) cut off by a crash")
        if offline:
            when = ", ".join(
                f"{local(a, self.tz_offset_ms)} for {duration(b - a)}" for a, b in offline[:3]
            )
            extras.append(f"no process ran the periodic jobs for {duration(offline_ms)} ({when})")
        tail = f"; {'; '.join(extras)}" if extras else ""
        if problems:
            severity = Severity.WARN
            sentence = f"Periodic work ran more than once {how}: {'; '.join(problems)}{tail}."
        else:
            severity = Severity.OK
            sentence = (
                f"Each periodic job ran once per slot {how}: {self.runs:,} runs, none "
                f"beside another of its job, no slot run by two deployments{tail}."
            )
        return Finding(
            id=self.ID,
            title="Periodic runs",
            severity=severity,
            sentence=sentence,
            mechanism=(
                "BullMQ job schedulers run in every deployment and start the next iteration "
                "when the current one starts, so a second deployment runs each job again and a "
                "long iteration runs beside the next (reference §1.3-1.4). Seed 001's job table "
                "is run by the one process holding its lock: the next run is the end of this "
                "one plus the period and a job never runs twice at once; a crash leaves its "
                "run `running` until the next holder marks it failed, and until then nobody "
                "runs the table."
            ),
            numbers={
                "runs": self.runs,
                "failed_runs": self.failed,
                "reentries": n_reentries,
                "slots_run_twice": n_twice,
                "missed_slots": self.missed,
                "skipped_runs": self.skipped,
                "interrupted_runs": self.interrupted,
                "offline_s": round(offline_ms / 1000, 3),
            },
            examples=tuple(
                {"from": local(a, self.tz_offset_ms), "for": duration(b - a)}
                for a, b in offline[:5]
            ),
            plots=("periodic.png",),
            thresholds={"warn_twice": self.warn_twice, "warn_reentries": self.warn_reentries},
        )

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())


def _merged(ranges: tuple[array[int], array[int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(zip(*ranges, strict=True)):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """Slots in both sorted, disjoint range lists."""
    i = j = n = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        n += max(0, hi - lo + 1)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return n
