"""Metrics of the CVSA scheduler model, all reduced from the event log.

Names (stable, dotted; ``summary.json`` and ``[expect]`` use them):

* ``schedules.created.<type>``, ``schedules.created_by.<rule>`` (the rule that asked:
  dispatcher, forced, continuation, reeta, bulk_reschedule, retry),
  ``schedules.not_created.<reason>``, ``schedules.moved``
* ``dispatch.<type>``, ``dispatch.skipped.<reason>``
* ``finished.<type>.<status>``, ``cleanup.deleted`` and ``cleanup.deleted.<type>.<status>``
* ``snapshots.total``, ``snapshots.<type>`` (``discovery`` for unscheduled ones),
  ``snapshots.duplicates``
* ``lateness.<type>.p50_s/p90_s/p99_s/max_s/mean_s``: the snapshot's own time (the server time
  of the answer) minus the due time
* ``windows.max_reserved``: the highest count a capped reservation left (never above the cap);
  ``windows.max_count``: the highest count any increment left (milestone/new rows are uncapped);
  ``windows.probes.total/max``; ``windows.placement.<exact|forward|fallback|exhausted|...>``
* ``upstream.failed.<kind>``, ``upstream.retries``
* ``queries.<job name>.reads/writes/redis_ops``: SQL-equivalent query counts per job
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events.engine_kinds import IdleIterations
from sim.events.log import Chunk
from sim.metrics.base import Histogram, percentiles
from sim.metrics.wall_timing import LoadMetrics
from sim.units import SECOND_MS

_TYPES = K.SNAPSHOT_TYPE.words


def _word(enum: Any, code: int) -> str:
    return str(enum.word(code)) if code >= 0 else "discovery"


class ScheduleCounts:
    """How many rows were created, refused, moved, dispatched, skipped, finished, deleted."""

    def __init__(self) -> None:
        self.c: Counter[str] = Counter()

    def _count(self, prefix: str, values: np.ndarray, enum: Any) -> None:
        codes, counts = np.unique(values, return_counts=True)
        for code, n in zip(codes.tolist(), counts.tolist(), strict=True):
            self.c[f"{prefix}.{_word(enum, code)}"] += n

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        self._count("schedules.created", chunk.column(K.ScheduleCreated, "type"), K.SNAPSHOT_TYPE)
        self._count(
            "schedules.created_by", chunk.column(K.ScheduleCreated, "rule"), K.SCHEDULE_RULE
        )
        self._count(
            "schedules.not_created", chunk.column(K.ScheduleNotCreated, "reason"), K.NOT_CREATED
        )
        self.c["schedules.moved"] += chunk.table(K.ScheduleMoved).shape[0]
        self._count("dispatch", chunk.column(K.ScheduleDispatched, "type"), K.SNAPSHOT_TYPE)
        self._count("dispatch.skipped", chunk.column(K.ScheduleSkipped, "reason"), K.SKIP_REASON)
        fin = chunk.table(K.ScheduleFinished)
        for t, s in zip(fin[:, 4].tolist(), fin[:, 6].tolist(), strict=True):
            self.c[f"finished.{_TYPES[t]}.{K.SCHEDULE_STATUS.word(s)}"] += 1
        deleted = chunk.table(K.ScheduleDeleted)
        self.c["cleanup.deleted"] += deleted.shape[0]
        for t, s in zip(deleted[:, 4].tolist(), deleted[:, 6].tolist(), strict=True):
            self.c[f"cleanup.deleted.{_TYPES[t]}.{K.SCHEDULE_STATUS.word(s)}"] += 1
        locked = chunk.table(K.DispatcherLocked)  # §11.7, §13b.1: runs that found the lock held
        for name, o in zip(locked[:, 2].tolist(), locked[:, 3].tolist(), strict=True):
            self.c[f"locks.{names[name]}.{K.LOCK_OUTCOME.word(o)}"] += 1

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cleanup.deleted": 0, "schedules.moved": 0}
        out.update(self.c)
        return out


class SnapshotMetrics:
    """Snapshots by type and their lateness (executed minus due)."""

    def __init__(self) -> None:
        self.by_type: Counter[str] = Counter()
        self.duplicates = 0
        self.lateness: dict[int, Histogram] = {}

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        taken = chunk.table(K.SnapshotTaken)
        if not taken.size:
            return
        t, types, due, dup = taken[:, 8], taken[:, 4], taken[:, 5], taken[:, 7]
        self.duplicates += int(dup.sum())
        codes, counts = np.unique(types, return_counts=True)
        for code, n in zip(codes.tolist(), counts.tolist(), strict=True):
            self.by_type[_word(K.SNAPSHOT_TYPE, code)] += n
        for code in range(len(_TYPES)):
            sel = types == code
            if sel.any():
                self.lateness.setdefault(code, Histogram()).add(t[sel] - due[sel])

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "snapshots.total": sum(self.by_type.values()),
            "snapshots.duplicates": self.duplicates,
        }
        out.update({f"snapshots.{k}": v for k, v in sorted(self.by_type.items())})
        for code, hist in sorted(self.lateness.items()):
            stats = percentiles(hist, f"lateness.{_TYPES[code]}", SECOND_MS)
            out.update(
                {(k + "_s" if k.split(".")[-1] != "count" else k): v for k, v in stats.items()}
            )
        return out


class WindowMetrics:
    """Window counts: the highest a capped reservation left, the highest any increment left, and
    the probing cost. ``windows.fallback``/``windows.exhausted`` count reservations that found no
    room searching forward (exhausted ones are inserted over the cap, §6.2 step 4)."""

    _CAPPED = (K.PLACEMENT.code("forward"), K.PLACEMENT.code("fallback"))

    def __init__(self) -> None:
        self.max_reserved = 0
        self.max_count = 0
        self.probes = 0
        self.max_probes = 0
        self.placements: Counter[str] = Counter()

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        created = chunk.table(K.ScheduleCreated)
        if created.size:
            counts, probes, placement = created[:, 8], created[:, 9], created[:, 10]
            capped = np.isin(placement, self._CAPPED)
            if capped.any():
                self.max_reserved = max(self.max_reserved, int(counts[capped].max()))
            self.max_count = max(self.max_count, int(counts.max()))
            self.probes += int(probes.sum())
            self.max_probes = max(self.max_probes, int(probes.max()))
            codes, n = np.unique(placement, return_counts=True)
            for code, k in zip(codes.tolist(), n.tolist(), strict=True):
                self.placements[K.PLACEMENT.word(code)] += k
        moved = chunk.column(K.ScheduleMoved, "window_count")
        if moved.size:
            self.max_count = max(self.max_count, int(moved.max()))

    def result(self) -> dict[str, Any]:
        return {
            "windows.max_reserved": self.max_reserved,
            "windows.max_count": self.max_count,
            "windows.probes.total": self.probes,
            "windows.probes.max": self.max_probes,
            **{f"windows.placement.{w}": self.placements.get(w, 0) for w in K.PLACEMENT.words},
        }


class UpstreamMetrics:
    """Upstream failures by kind and retries."""

    def __init__(self) -> None:
        self.c: Counter[str] = Counter()

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        for k in chunk.column(K.UpstreamFailed, "kind").tolist():
            self.c[f"upstream.failed.{K.UPSTREAM_ERROR.word(k)}"] += 1
        self.c["upstream.retries"] += chunk.table(K.RetryScheduled).shape[0]

    def result(self) -> dict[str, Any]:
        return {"upstream.retries": 0, **self.c}


class QueryMetrics:
    """``queries.<job name>.reads/writes/redis_ops``: SQL-equivalent queries and window-counter
    round trips per job name, from ``QueryCounts``; an idle periodic iteration adds one read."""

    def __init__(self) -> None:
        self.totals: dict[int, list[int]] = {}
        self.names: list[str] = []

    def _row(self, name: int) -> list[int]:
        return self.totals.setdefault(name, [0, 0, 0])

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        self.names = list(names)
        q = chunk.table(K.QueryCounts)
        for name, reads, writes, redis in q[:, [2, 4, 5, 6]].tolist():
            row = self._row(name)
            row[0] += reads
            row[1] += writes
            row[2] += redis
        idle = chunk.table(IdleIterations)
        for name, n in zip(idle[:, 2].tolist(), idle[:, 5].tolist(), strict=True):
            self._row(name)[0] += n

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, (reads, writes, redis) in sorted(self.totals.items()):
            prefix = f"queries.{self.names[name]}"
            out.update(
                {f"{prefix}.reads": reads, f"{prefix}.writes": writes, f"{prefix}.redis_ops": redis}
            )
        return out


def cvsa_reducers() -> list[Any]:
    """Every reducer of the CVSA model."""
    return [
        ScheduleCounts(),
        SnapshotMetrics(),
        WindowMetrics(),
        UpstreamMetrics(),
        QueryMetrics(),
        LoadMetrics(),
    ]
