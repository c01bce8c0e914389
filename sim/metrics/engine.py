"""Engine-level metrics: events, jobs per queue and name, periodic-job iterations."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.events.engine_kinds import (
    IdleIterations,
    IterationsMissed,
    IterationStarted,
    JobFinished,
    JobStarted,
    RunEnded,
    RunStarted,
)
from sim.events.log import Chunk
from sim.events.schema import KINDS
from sim.metrics.base import Histogram, percentiles
from sim.units import SECOND_MS


class EventCounts:
    """``events.total`` and ``events.by_kind.<Kind>``; ``run.*`` from the start/end records."""

    def __init__(self) -> None:
        self.by_kind: Counter[str] = Counter()
        self.start_ms: int | None = None
        self.until_ms: int | None = None
        self.end_ms: int | None = None
        self.partial = 0

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        for code, table in chunk.tables.items():
            self.by_kind[KINDS[code].name] += table.shape[0]
        for r in chunk.records(RunStarted):
            self.start_ms, self.until_ms = r.t_ms, r.until_ms
        for e in chunk.records(RunEnded):
            self.end_ms, self.partial = e.t_ms, e.partial

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"events.total": sum(self.by_kind.values())}
        out.update({f"events.by_kind.{k}": v for k, v in sorted(self.by_kind.items())})
        if self.start_ms is not None and self.end_ms is not None:
            out["run.simulated_s"] = (self.end_ms - self.start_ms) / SECOND_MS
            out["run.partial"] = bool(self.partial)
        return out


class JobMetrics:
    """Per ``queue.job-name``: jobs started, failed, and the wait from due to start."""

    def __init__(self) -> None:
        self.waits: dict[tuple[int, int], Histogram] = {}
        self.failed: Counter[tuple[int, int]] = Counter()
        self.names: list[str] = []

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        self.names = list(names)
        started = chunk.table(JobStarted)
        if started.size:
            q, n, t, due = started[:, 2], started[:, 4], started[:, 1], started[:, 5]
            keys = q * (1 << 32) + n
            for key in np.unique(keys):
                sel = keys == key
                k = (int(key) >> 32, int(key) & 0xFFFFFFFF)
                self.waits.setdefault(k, Histogram()).add(t[sel] - due[sel])
        finished = chunk.table(JobFinished)
        for row in finished[finished[:, 5] == 0].tolist():
            self.failed[(row[2], row[4])] += 1

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for (q, n), hist in sorted(self.waits.items()):
            prefix = f"jobs.{self.names[q]}.{self.names[n]}"
            out.update(percentiles(hist, f"{prefix}.wait_s", SECOND_MS))
            out[f"{prefix}.failed"] = self.failed.get((q, n), 0)
        return out


class IterationMetrics:
    """Per periodic job: iterations that did work, idle ones, missed slots."""

    def __init__(self) -> None:
        self.busy: Counter[int] = Counter()
        self.idle: Counter[int] = Counter()
        self.missed: Counter[int] = Counter()
        self.names: list[str] = []

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        self.names = list(names)
        for s in chunk.column(IterationStarted, "scheduler").tolist():
            self.busy[s] += 1
        idle = chunk.table(IdleIterations)
        for s, n in zip(idle[:, 2].tolist(), idle[:, 5].tolist(), strict=True):
            self.idle[s] += n
        missed = chunk.table(IterationsMissed)
        for s, n in zip(missed[:, 2].tolist(), missed[:, 3].tolist(), strict=True):
            self.missed[s] += n

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for s in sorted(set(self.busy) | set(self.idle) | set(self.missed)):
            prefix = f"periodic.{self.names[s]}"
            out[f"{prefix}.iterations"] = self.busy[s] + self.idle[s]
            out[f"{prefix}.idle"] = self.idle[s]
            out[f"{prefix}.missed_slots"] = self.missed[s]
        return out


def engine_reducers() -> list[Any]:
    """The reducers every run gets."""
    return [EventCounts(), JobMetrics(), IterationMetrics()]
