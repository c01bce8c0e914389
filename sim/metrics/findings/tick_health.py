"""Finding ``ticks``: did the periodic jobs keep their periods, and did the workers keep up?

The design's timing rests on its ticks (seed 000 §7, §8, §11: ``snapshotTick`` every second,
``bulkSnapshotTick`` every 15 s, the dispatchers every few minutes) and on the snapshot queue's
workers taking jobs as the ticks enqueue them (reference §1.2: 50 workers). An iteration that
outlasts its period makes the next one late and, with BullMQ's job schedulers, skips the slots
in between (``IterationsMissed``); a queue that grows makes every snapshot wait for a worker.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sim.events.engine_kinds import (
    IterationFinished,
    IterationsMissed,
    IterationStarted,
    JobAdded,
    JobStarted,
)
from sim.events.log import Chunk
from sim.metrics.base import Histogram
from sim.metrics.findings.fault_windows import FaultWindows
from sim.metrics.findings.verdicts import (
    EXAMPLES,
    Finding,
    Severity,
    duration,
    finding_metrics,
    local,
)
from sim.units import Ms


class TickHealth:
    """Reducer of finding ``ticks`` (keyword arguments: ``[findings.ticks]``)."""

    ID = "ticks"

    def __init__(
        self,
        periods_ms: Mapping[str, Ms],
        tz_offset_ms: Ms,
        *,
        warn_missed_slots: int,
        warn_queue_wait: Ms,
    ) -> None:
        self.periods_ms = dict(periods_ms)
        self.tz_offset_ms = tz_offset_ms
        self.warn_missed_slots = warn_missed_slots
        self.warn_queue_wait_ms = warn_queue_wait
        self.names: list[str] = []
        self.iterations: Counter[str] = Counter()
        self.missed: Counter[str] = Counter()
        self.missed_in_fault = 0
        self.faults = FaultWindows()
        self.started: dict[tuple[int, int], int] = {}  # (job, due) -> start of an iteration
        self.overlong: list[tuple[int, int, str]] = []  # (duration, start, scheduler name)
        self.overlong_count = 0
        self.depth: dict[int, int] = {}  # queue -> jobs added and not started
        self.peak: dict[int, tuple[int, int]] = {}  # queue -> (peak depth, when)
        self.waits: dict[int, Histogram] = {}

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        self.names = list(names)
        # Iterations of one job may overlap (one that outlasts its period runs beside the
        # next, tests/engine/test_jobs.py): an iteration is known by (job, due time).
        for t, s, due in chunk.table(IterationStarted)[:, 1:4].tolist():
            self.started[(s, due)] = t
        for t, s, due in chunk.table(IterationFinished)[:, 1:4].tolist():
            name = names[s]
            self.iterations[name] += 1
            begun = self.started.pop((s, due), t)
            period = self.periods_ms.get(name)
            if period is not None and t - begun > period:
                self.overlong_count += 1
                self.overlong.append((t - begun, begun, name))
                self.overlong.sort(key=lambda o: (-o[0], o[1]))
                del self.overlong[EXAMPLES:]
        self.faults.feed(chunk)
        # Slots missed while a fault held the scheduler (a restart) are what the scenario asked
        # for; they are counted apart and do not warn.
        missed = chunk.table(IterationsMissed)
        for s, n, next_due in missed[:, 2:5].tolist():
            # The skipped slots lie between the last iteration's due time and next_due.
            period = self.periods_ms.get(names[s], 0)
            if self.faults.overlapping(next_due - (n + 1) * period, next_due) is None:
                self.missed[names[s]] += n
            else:
                self.missed_in_fault += n
        self._queues(chunk)

    def _queues(self, chunk: Chunk) -> None:
        added, started = chunk.table(JobAdded), chunk.table(JobStarted)
        if not (added.size or started.size):
            return
        # Depth = jobs added minus jobs started, in log order (seq), per queue.
        seq = np.concatenate([added[:, 0], started[:, 0]])
        queue = np.concatenate([added[:, 2], started[:, 2]])
        t = np.concatenate([added[:, 1], started[:, 1]])
        step = np.concatenate([np.ones(len(added), np.int64), -np.ones(len(started), np.int64)])
        order = np.argsort(seq, kind="stable")
        seq, queue, t, step = seq[order], queue[order], t[order], step[order]
        for q in np.unique(queue).tolist():
            sel = queue == q
            depth = self.depth.get(q, 0) + np.cumsum(step[sel])
            i = int(np.argmax(depth))
            if depth[i] > self.peak.get(q, (0, 0))[0]:
                self.peak[q] = (int(depth[i]), int(t[sel][i]))
            self.depth[q] = int(depth[-1])
        if started.size:
            for q in np.unique(started[:, 2]).tolist():
                sel = started[:, 2] == q
                self.waits.setdefault(q, Histogram()).add(started[sel, 1] - started[sel, 5])

    def finding(self) -> Finding:
        total = sum(self.iterations.values())
        missed = sum(self.missed.values())
        p99 = {self.names[q]: h.percentiles([99])[0] for q, h in sorted(self.waits.items()) if h.n}
        worst_q = max(p99, key=lambda q: (p99[q], q), default=None)
        worst_p99 = p99[worst_q] if worst_q is not None else 0.0
        peak_q, (peak, peak_at) = max(
            ((self.names[q], p) for q, p in self.peak.items()),
            key=lambda x: (x[1][0], x[0]),
            default=("", (0, 0)),
        )
        problems = []
        if missed >= self.warn_missed_slots:
            problems.append(f"{missed:,} slot(s) missed")
        if self.overlong_count:
            problems.append(
                f"{self.overlong_count:,} iteration(s) outlasted the period of their job"
            )
        if worst_p99 >= self.warn_queue_wait_ms:
            problems.append(f"p99 wait for a worker {duration(worst_p99)} on {worst_q}")
        severity = Severity.WARN if problems else Severity.OK
        wait_text = (
            f"jobs waited for a worker {duration(worst_p99)} at p99 ({worst_q})"
            if worst_q is not None
            else "no job was queued"
        )
        in_fault = (
            f" outside faults ({self.missed_in_fault:,} skipped while a fault held the scheduler)"
            if self.missed_in_fault
            else ""
        )
        depth_text = f"peak queue depth {peak:,}" + (
            f" ({peak_q}, {local(peak_at, self.tz_offset_ms)})" if peak else ""
        )
        if problems:
            sentence = f"The ticks fell behind: {'; '.join(problems)}{in_fault}; {depth_text}."
        else:
            sentence = (
                f"Every periodic job kept its period: none of {total:,} iterations outlasted "
                f"it, no slot was missed{in_fault}; {wait_text}; {depth_text}."
            )
        return Finding(
            id=self.ID,
            title="Tick and queue health",
            severity=severity,
            sentence=sentence,
            mechanism=(
                "Each periodic job runs once per period; an iteration longer than its period "
                "delays the next and skips the slots in between, so rows wait past their due "
                "time for a tick. Snapshot jobs then wait in the queue until one of the workers "
                "is free; a growing queue adds its wait to every snapshot."
            ),
            numbers={
                "iterations": total,
                "overlong_iterations": self.overlong_count,
                "missed_slots": missed,
                "missed_slots_during_faults": self.missed_in_fault,
                "queue_wait_p99_s": round(worst_p99 / 1000, 3),
                "peak_queue_depth": peak,
            },
            examples=tuple(
                {
                    "job": name,
                    "started": local(begun, self.tz_offset_ms),
                    "took": duration(took),
                    "period": duration(self.periods_ms[name]),
                }
                for took, begun, name in self.overlong
            ),
            plots=("load.png",),
            thresholds={
                "warn_missed_slots": self.warn_missed_slots,
                "warn_queue_wait_s": self.warn_queue_wait_ms / 1000,
            },
        )

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())
