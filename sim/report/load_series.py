"""Load-shape series: upstream requests per 5 minutes and queue depth per queue.

* ``upstream`` (long format, one row per non-zero ``(bin, path, event)``): per 5-min bin, for
  ``path`` ``single`` (``snapshotVideo``) and ``bulk`` (``bulkSnapshotVideo``), the ``count`` of
  each ``event`` and the videos (``aids``) it concerned:

  - ``request``: a job's first upstream call -- its rows were taken up (``ScheduleStarted``; a
    job that skipped every row made none);
  - ``retry``: a further attempt of the backoff policy, at the instant it is made
    (``RetryScheduled.t_ms + delay_ms``);
  - ``failed.<kind>``: an attempt that failed, by upstream error kind (``UpstreamFailed``).

  Rows are keyed by a tuple (bin, path, event); a per-proxy breakdown, when the log carries a
  proxy, is one more key column (:data:`UPSTREAM_KEYS`).
* ``queue_depth``: per minute and queue, the most jobs waiting (added, not yet started, delayed
  ones included) and the most jobs active (started, not finished) at any instant of the minute,
  from ``JobAdded``/``JobStarted``/``JobFinished``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events.engine_kinds import JobAdded, JobFinished, JobStarted
from sim.events.log import Chunk
from sim.report.series import I8, Span
from sim.report.tables import Column, Table, local_times
from sim.units import MINUTE_MS, WINDOW_MS, Ms

PATHS = {"snapshotVideo": "single", "bulkSnapshotVideo": "bulk"}
"""Job names that call the upstream API, and the name of their path."""
_OTHER = ("other", 0)
"""The path of a call by a job of another name (none in the CVSA model)."""
UPSTREAM_KEYS = ("path", "event")
"""Key columns of ``upstream`` after the bin (a ``proxy`` column would join them)."""


class UpstreamRequests:
    """``upstream``: requests, retries and failures per 5 minutes (module docstring)."""

    def __init__(self, tz_ms: Ms) -> None:
        self.tz_ms = tz_ms
        self.counts: dict[tuple[int, str, str], list[int]] = {}
        """(bin, path, event) -> [count, aids]."""
        self.jobs: dict[int, tuple[str, int]] = {}
        """Running upstream jobs: job -> (path, aids it took up)."""
        self._last: tuple[int, int] | None = None
        """(job, bin) of the last ``ScheduleStarted`` row: a job's rows are consecutive."""

    def _add(self, key: tuple[int, str, str], count: int, aids: int) -> None:
        cell = self.counts.setdefault(key, [0, 0])
        cell[0] += count
        cell[1] += aids

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        started = chunk.table(JobStarted)
        for job, name in zip(started[:, 3].tolist(), started[:, 4].tolist(), strict=True):
            path = PATHS.get(names[name])
            if path is not None:
                self.jobs[job] = (path, 0)
        taken_up = chunk.table(K.ScheduleStarted)
        if taken_up.size:
            job, t = taken_up[:, 6], taken_up[:, 1]
            prev = -1 if self._last is None else self._last[0]
            first = np.flatnonzero(np.r_[job[0] != prev, job[1:] != job[:-1]])
            lengths = np.diff(np.r_[first, len(job)])
            if not len(first) or first[0] > 0:  # the previous chunk's last job goes on
                assert self._last is not None
                more = int(first[0]) if len(first) else len(job)
                path, n = self.jobs.get(self._last[0], _OTHER)
                self.jobs[self._last[0]] = (path, n + more)
                self._add((self._last[1], path, "request"), 0, more)
            for j, b, n in zip(
                job[first].tolist(), (t[first] // WINDOW_MS).tolist(), lengths.tolist(), strict=True
            ):
                path, _ = self.jobs.get(j, _OTHER)
                self.jobs[j] = (path, n)
                self._add((b, path, "request"), 1, n)
                self._last = (j, b)
        for r in chunk.records(K.RetryScheduled):
            path, n = self.jobs.get(r.job, _OTHER)
            self._add(((r.t_ms + r.delay_ms) // WINDOW_MS, path, "retry"), 1, n)
        for r in chunk.records(K.UpstreamFailed):
            path, _ = self.jobs.get(r.job, _OTHER)
            event = f"failed.{K.UPSTREAM_ERROR.word(r.kind)}"
            self._add((r.t_ms // WINDOW_MS, path, event), 1, r.aids)
        for job in chunk.column(JobFinished, "job").tolist():
            self.jobs.pop(job, None)

    def tables(self, span: Span) -> dict[str, Table]:
        keys = sorted(self.counts)
        start = np.array([k[0] for k in keys], dtype=np.int64) * WINDOW_MS
        cols: dict[str, Column] = {
            "bin_start_ms": start,
            "bin_start": local_times(start, self.tz_ms),
            "path": np.array([k[1] for k in keys], dtype=np.str_),
            "event": np.array([k[2] for k in keys], dtype=np.str_),
            "count": np.array([self.counts[k][0] for k in keys], dtype=np.int64),
            "aids": np.array([self.counts[k][1] for k in keys], dtype=np.int64),
        }
        return {"upstream": Table(cols)}


class QueueDepth:
    """``queue_depth``: jobs waiting and active per queue, the most in each minute."""

    def __init__(self, tz_ms: Ms) -> None:
        self.tz_ms = tz_ms
        self.level: dict[int, tuple[int, int]] = {}
        """Queue -> (waiting, active) after the last event seen."""
        self.minutes: dict[tuple[int, int], list[int]] = {}
        """(queue, minute) -> [max waiting, max active, waiting at the end, active at the end]
        over the events of the minute."""
        self.names: list[str] = []

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        self.names = list(names)
        parts = []
        for kind, dw, da in ((JobAdded, 1, 0), (JobStarted, -1, 1), (JobFinished, 0, -1)):
            t = chunk.table(kind)
            if t.size:
                n = len(t)
                parts.append(np.stack([t[:, 0], t[:, 1], t[:, 2], np.full(n, dw), np.full(n, da)]))
        if not parts:
            return
        rows = np.concatenate(parts, axis=1).T
        rows = rows[np.argsort(rows[:, 0])]
        for q in np.unique(rows[:, 2]).tolist():
            mine = rows[rows[:, 2] == q]
            w0, a0 = self.level.get(q, (0, 0))
            waiting = w0 + np.cumsum(mine[:, 3])
            active = a0 + np.cumsum(mine[:, 4])
            self.level[q] = (int(waiting[-1]), int(active[-1]))
            minute = (mine[:, 1] + self.tz_ms) // MINUTE_MS
            first = np.flatnonzero(np.r_[True, minute[1:] != minute[:-1]])
            last = np.r_[first[1:], len(minute)] - 1
            max_w, max_a = np.maximum.reduceat(waiting, first), np.maximum.reduceat(active, first)
            for i, m in enumerate(minute[first].tolist()):
                new = [int(max_w[i]), int(max_a[i]), int(waiting[last[i]]), int(active[last[i]])]
                old = self.minutes.get((q, m))
                if old is not None:
                    new[0], new[1] = max(new[0], old[0]), max(new[1], old[1])
                self.minutes[(q, m)] = new

    def tables(self, span: Span) -> dict[str, Table]:
        bins = span.bins(MINUTE_MS, self.tz_ms)
        queues = sorted({q for q, _ in self.minutes}, key=lambda q: self.names[q])
        parts: list[tuple[str, I8, I8, I8]] = []
        for q in queues:
            waiting = np.zeros(len(bins), np.int64)
            active = np.zeros(len(bins), np.int64)
            w = a = 0  # the level carried into each minute from the one before
            for i, m in enumerate(bins.tolist()):
                cell = self.minutes.get((q, m))
                if cell is None:
                    waiting[i], active[i] = w, a
                    continue
                waiting[i], active[i] = max(w, cell[0]), max(a, cell[1])
                w, a = cell[2], cell[3]
            parts.append((self.names[q], bins, waiting, active))
        start = (
            np.concatenate([p[1] for p in parts]) * MINUTE_MS - self.tz_ms if parts else bins[:0]
        )
        cols: dict[str, Column] = {
            "minute_start_ms": start,
            "minute_start": local_times(start, self.tz_ms),
            "queue": np.array([p[0] for p in parts for _ in p[1]], dtype=np.str_),
            "waiting_max": np.concatenate([p[2] for p in parts]) if parts else bins[:0],
            "active_max": np.concatenate([p[3] for p in parts]) if parts else bins[:0],
        }
        return {"queue_depth": Table(cols)}
