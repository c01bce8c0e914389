"""Finding ``lateness``: why snapshots run late, part by part (issue 25 item 7).

For every snapshot a schedule asked for, executed (the server time of the answer, §2.2) minus
due splits into five parts that add up exactly:

* ``rebook``: the row replaced one that cleanup deleted without a snapshot (§12); the new row's
  due time minus the deleted one's (lateness is then counted from the first due time);
* ``tick``: due until a tick dispatched the row (``snapshotTick`` every second takes rows due
  shortly ahead, so this part is often negative: the snapshot is early; §7.2, §8.2);
* ``queue``: dispatched until a worker took the job up (reference §1.2: 50 workers);
* ``backoff``: the retry delays of the job (seed 004: exponential backoff with jitter);
* ``upstream``: the rest of the job until the answer: request latency, failed attempts.

The reducer keeps, per schedule type, a histogram of the total over fixed bins and, per bin, the
sum of each part: memory is bounded however long the run, and the tail (the snapshots at or
above the type's p99) is decomposed by summing its bins. The exact percentiles of the total are
the ``lateness.*`` metrics, read from the run's :class:`~sim.metrics.cvsa.SnapshotMetrics`
(given to the constructor, fed the same log); the tail is the bins from the one holding the p99.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events.engine_kinds import JobFinished
from sim.events.log import Chunk
from sim.metrics.base import Reducer
from sim.metrics.findings.verdicts import Finding, Severity, duration, finding_metrics
from sim.units import Ms

PARTS = ("rebook", "tick", "queue", "backoff", "upstream")
_TYPES = K.SNAPSHOT_TYPE.words
# Bin edges in ms: every ms-scale step from -10 min to +30 days, denser near zero.
_POS = np.unique(np.round(np.geomspace(1, 30 * 86_400_000, 240)).astype(np.int64))
_EDGES = np.concatenate([-_POS[_POS <= 600_000][::-1], [0], _POS])
_BINS = _EDGES.size + 1  # below the first edge, between edges, above the last


_COMPLETED = K.SCHEDULE_STATUS.code("completed")
"""A completed row's snapshot may be logged after it (seed 003's write path)."""


def _first(keys: np.ndarray, *cols: np.ndarray) -> tuple[np.ndarray, ...]:
    """The first row per key, sorted by key."""
    uniq, index = np.unique(keys, return_index=True)
    return (uniq, *(c[index] for c in cols))


def _lookup(keys: np.ndarray, table: np.ndarray, values: np.ndarray, missing: int) -> np.ndarray:
    pos = np.searchsorted(table, keys)
    pos_ok = np.minimum(pos, max(table.size - 1, 0))
    hit = (pos < table.size) & (table[pos_ok] == keys) if table.size else np.zeros(keys.size, bool)
    out = np.full(keys.size, missing, dtype=np.int64)
    out[hit] = values[pos_ok[hit]]
    return out


def _where_in(values: np.ndarray, table: dict[int, Any]) -> list[int]:
    """The positions of ``values`` that are keys of ``table`` (a small dict: retries, rows
    rebooked after cleanup), found without a Python step per value."""
    if not table or not values.size:
        return []
    return np.flatnonzero(np.isin(values, np.fromiter(table, dtype=np.int64))).tolist()


class LatenessAttribution:
    """Reducer of finding ``lateness`` (keyword arguments: ``[findings.lateness]``)."""

    ID = "lateness"

    def __init__(self, snapshots: Reducer, tz_offset_ms: Ms, *, warn_p99: Ms, fail_p99: Ms) -> None:
        self.snapshots = snapshots
        self.tz_offset_ms = tz_offset_ms
        self.warn_p99_ms, self.fail_p99_ms = warn_p99, fail_p99
        empty = np.empty(0, dtype=np.int64)
        # Rows dispatched / taken up and not yet ended: (schedule ids sorted, times[, job]).
        self.dispatched = (empty, empty)
        self.started = (empty, empty, empty)
        self.backoff_ms: dict[int, int] = {}  # job -> retry delays so far
        # aid * 8 + type -> (seq, due) of a row cleanup deleted before it was served
        self.deleted_due: dict[int, tuple[int, int]] = {}
        self.rebooked: dict[int, int] = {}  # schedule -> the deleted row's due time
        self.rebook_count = 0
        self.rebook_ms = 0
        n = len(_TYPES)
        self.count = np.zeros((n, _BINS), dtype=np.int64)
        self.sums = np.zeros((n, len(PARTS), _BINS), dtype=np.int64)

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        d = chunk.table(K.ScheduleDispatched)
        rows, times = _first(
            np.concatenate([self.dispatched[0], d[:, 2]]),
            np.concatenate([self.dispatched[1], d[:, 1]]),
        )
        self.dispatched = (rows, times)
        s = chunk.table(K.ScheduleStarted)
        rows, times, jobs = _first(
            np.concatenate([self.started[0], s[:, 2]]),
            np.concatenate([self.started[1], s[:, 1]]),
            np.concatenate([self.started[2], s[:, 6]]),
        )
        self.started = (rows, times, jobs)
        for job, delay in chunk.table(K.RetryScheduled)[:, [2, 5]].tolist():
            self.backoff_ms[job] = self.backoff_ms.get(job, 0) + delay
        self._rebooks(chunk)
        taken = chunk.table(K.SnapshotTaken)
        taken = taken[taken[:, 3] >= 0]
        if taken.size:
            self._attribute(taken)
        for job in chunk.column(JobFinished, "job").tolist():
            self.backoff_ms.pop(job, None)
        # A row is done with at its snapshot (``_attribute``), or when it ends without one. A
        # completed row's snapshot may come after its end: under seed 003's write path it is
        # logged when written (docs/write-path.md), so completion alone does not drop it.
        finished = chunk.table(K.ScheduleFinished)
        deleted = chunk.column(K.ScheduleDeleted, "schedule")
        ended = np.concatenate([finished[finished[:, 6] != _COMPLETED, 2], deleted])
        self._forget(ended)
        # A row booked again and deleted in turn is never attributed: forgotten above, and a
        # deleted row is never dispatched again. Its due time goes with it; kept, it would stay
        # for the run (at 20M videos, where cleanup deletes rows that piled up in full windows,
        # 431 MB by day 5 of a week, and a cost per chunk that grew with them).
        for i in _where_in(deleted, self.rebooked):
            self.rebooked.pop(int(deleted[i]), None)

    def _rebooks(self, chunk: Chunk) -> None:
        """Rows deleted by cleanup before any snapshot, and the rows created after to replace
        them (the first later creation of the video's type; earlier ones in the chunk are not).
        Deletions are rare: the rows of a chunk are looked at only where their key has one."""
        deleted = chunk.table(K.ScheduleDeleted)
        for seq, _, aid, ty, due in deleted[:, [0, 2, 3, 4, 5]].tolist():
            self.deleted_due.setdefault(aid * 8 + ty, (seq, due))
        if not self.deleted_due:
            return
        taken = chunk.table(K.SnapshotTaken)
        taken = taken[taken[:, 3] >= 0]
        keys = taken[:, 2] * 8 + taken[:, 4]
        for i in _where_in(keys, self.deleted_due):
            key = int(keys[i])
            if key in self.deleted_due and self.deleted_due[key][0] < taken[i, 0]:
                del self.deleted_due[key]  # the video's type was served after all: no rebook
        created = chunk.table(K.ScheduleCreated)
        keys = created[:, 3] * 8 + created[:, 4]
        for i in _where_in(keys, self.deleted_due):
            key = int(keys[i])
            deletion = self.deleted_due.get(key)
            if deletion is not None and deletion[0] < created[i, 0]:
                self.rebooked[int(created[i, 2])] = self.deleted_due.pop(key)[1]

    def _attribute(self, taken: np.ndarray) -> None:
        row, ty, due, at = taken[:, 3], taken[:, 4], taken[:, 5], taken[:, 8]
        dispatched = _lookup(row, *self.dispatched, missing=-1)
        started = _lookup(row, self.started[0], self.started[1], missing=-1)
        job = _lookup(row, self.started[0], self.started[2], missing=-1)
        known = (dispatched >= 0) & (started >= 0)
        row, ty, due, at = row[known], ty[known], due[known], at[known]
        dispatched, started, job = dispatched[known], started[known], job[known]
        self._forget(row)
        first_due = due.copy()
        for i in _where_in(row, self.rebooked):
            first_due[i] = self.rebooked.pop(int(row[i]))
            self.rebook_count += 1
            self.rebook_ms += int(due[i] - first_due[i])
        backoff = np.zeros(job.size, dtype=np.int64)
        for i in _where_in(job, self.backoff_ms):
            backoff[i] = self.backoff_ms[int(job[i])]
        parts = np.stack(
            [
                due - first_due,
                dispatched - due,
                started - dispatched,
                backoff,
                at - started - backoff,
            ]
        )
        total = at - first_due
        bins = np.searchsorted(_EDGES, total, side="right")
        np.add.at(self.count, (ty, bins), 1)
        for p in range(len(PARTS)):
            np.add.at(self.sums[:, p], (ty, bins), parts[p])

    def _forget(self, rows: np.ndarray) -> None:
        """Stop tracking ``rows`` (their snapshot is attributed, or they ended without one)."""
        if rows.size:
            keep = ~np.isin(self.dispatched[0], rows)
            self.dispatched = (self.dispatched[0][keep], self.dispatched[1][keep])
            keep = ~np.isin(self.started[0], rows)
            self.started = (self.started[0][keep], self.started[1][keep], self.started[2][keep])

    def _tail(self, t: int, p99_ms: float) -> tuple[int, np.ndarray] | None:
        """(snapshots, mean of each part) of type ``t``'s tail: the bins from the p99's."""
        counts = self.count[t]
        n = int(counts.sum())
        if not n:
            return None
        b = int(np.searchsorted(_EDGES, p99_ms, side="right"))
        in_tail = int(counts[b:].sum())
        means = self.sums[t][:, b:].sum(axis=1) / max(in_tail, 1)
        return n, means

    def finding(self) -> Finding:
        numbers: dict[str, Any] = {}
        late: list[tuple[float, str, np.ndarray]] = []
        words = []
        exact = self.snapshots.result()
        for t, word in enumerate(_TYPES):
            p99 = 1000 * float(exact.get(f"lateness.{word}.p99_s", 0.0))
            tail = self._tail(t, p99)
            if tail is None:
                continue
            n, means = tail
            numbers[f"{word}.snapshots"] = n
            numbers[f"{word}.p99_s"] = round(p99 / 1000, 3)
            for p, m in zip(PARTS, means.tolist(), strict=True):
                numbers[f"{word}.tail.{p}_s"] = round(m / 1000, 3)
            late.append((p99, word, means))
            main = PARTS[int(np.argmax(means))]
            words.append(f"{word} {duration(p99)} (mostly {main})")
        worst = max(late, default=None, key=lambda x: (x[0], x[1]))
        p99 = worst[0] if worst else 0.0
        if worst and p99 >= self.fail_p99_ms:
            severity = Severity.FAIL
        elif worst and p99 >= self.warn_p99_ms:
            severity = Severity.WARN
        else:
            severity = Severity.OK
        if worst is None:
            sentence = "No scheduled snapshot was taken."
        else:
            p99_w, word, means = worst
            split = ", ".join(
                f"{p} {duration(m)}" for p, m in zip(PARTS, means.tolist(), strict=True) if m
            )
            ok_text = f"Snapshots ran on time (every type's p99 under {duration(self.warn_p99_ms)})"
            verdict = {
                Severity.OK: ok_text,
                Severity.WARN: f"{word} snapshots ran late (p99 {duration(p99_w)})",
                Severity.FAIL: f"{word} snapshots ran very late (p99 {duration(p99_w)})",
            }[severity]
            sentence = (
                f"{verdict}: p99 by type {'; '.join(words)}; the latest 1 % of {word} "
                f"snapshots, {duration(float(means.sum()))} late on average from their first "
                f"due time, split into {split or 'nothing'}"
            )
            if self.rebook_count:
                mean = duration(self.rebook_ms / self.rebook_count)
                sentence += (
                    f"; {self.rebook_count:,} snapshot(s) were of rows booked again after "
                    f"cleanup deleted the first, {mean} later on average"
                )
            sentence += "."
        numbers["rebooked"] = self.rebook_count
        numbers["rebook_mean_s"] = round(self.rebook_ms / max(self.rebook_count, 1) / 1000, 3)
        return Finding(
            id=self.ID,
            title="Lateness attribution",
            severity=severity,
            sentence=sentence,
            mechanism=(
                "Executed minus due = rebook (the row replaced one cleanup deleted, §12) + tick "
                "(due until a tick dispatched it; negative when the tick takes rows due shortly "
                "ahead, §7.2) + queue (until a worker took the job, reference §1.2) + backoff "
                "(retry delays, seed 004) + upstream (request latency and failed attempts). "
                "Each part is averaged over the snapshots at or above the type's p99; the "
                "severity judges the p99 of executed minus the row's own due time, as the "
                "lateness metrics do."
            ),
            numbers=numbers,
            plots=("why_late.png", "lateness.png"),
            thresholds={
                "warn_p99_s": self.warn_p99_ms / 1000,
                "fail_p99_s": self.fail_p99_ms / 1000,
            },
        )

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())
