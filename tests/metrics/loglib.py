"""Hand-built event logs for reducer tests: typed records, cut into chunks wherever a test says."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from sim.events import Chunk
from sim.events import cvsa_kinds as K
from sim.events.engine_kinds import JobAdded, JobFinished, RunEnded
from sim.events.schema import BY_RECORD
from sim.metrics import Reducer, ReducerSink
from sim.testing import Recorder

NAMES = ["snapshot", "snapshotVideo", "bulkSnapshotVideo"]
SINGLE, BULK = 1, 2
T0 = 1_925_395_200_000  # a window start


def ty(word: str) -> int:
    return K.SNAPSHOT_TYPE.code(word)


def status(word: str) -> int:
    return K.SCHEDULE_STATUS.code(word)


def chunks_of(records: Sequence[Any], cuts: Sequence[int] = ()) -> list[Chunk]:
    """``records`` (typed, ``seq`` = position) as chunks cut before each seq in ``cuts``."""
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(records)), len(records)]
    out = []
    for lo, hi in pairwise(bounds):
        tables: dict[int, list[list[int]]] = {}
        for r in records[lo:hi]:
            tables.setdefault(BY_RECORD[type(r)].code, []).append(list(r))
        out.append(
            Chunk(
                lo,
                hi - lo,
                {code: np.array(rows, dtype=np.int64) for code, rows in sorted(tables.items())},
            )
        )
    return out


def reduce(reducer: Reducer, chunks: Sequence[Chunk], names: Sequence[str] = NAMES) -> Any:
    for chunk in chunks:
        reducer.feed(chunk, names)
    return reducer.result()


def reduce_recorded(reducers: Sequence[Reducer], recorder: Recorder) -> dict[str, Any]:
    """Run ``reducers`` over a recorded run's chunks, exactly as the runner's sink does."""
    sink = ReducerSink(reducers)
    sink.open(recorder.header)
    for chunk in recorder.chunks:
        sink.write(chunk, b"")
    return sink.result()


class Log:
    """A log under construction; each helper appends one record (or two) at instant ``t``."""

    def __init__(self) -> None:
        self.records: list[Any] = []
        self._jobs: set[int] = set()

    def add(self, kind: type, t: int, *fields: int) -> None:
        self.records.append(kind(len(self.records), t, *fields))

    def chunks(self, cuts: Sequence[int] = ()) -> list[Chunk]:
        return chunks_of(self.records, cuts)

    def reduce(self, reducer: Reducer, cuts: Sequence[int] = ()) -> Any:
        return reduce(reducer, self.chunks(cuts))

    def created(
        self,
        t: int,
        s: int,
        aid: int,
        type: str = "normal",
        *,
        due: int | None = None,
        requested: int | None = None,
        window: int | None = None,
        count: int = 1,
        placement: str = "forward",
        forced: bool = False,
        rule: str = "dispatcher",
    ) -> None:
        due = t + 60_000 if due is None else due
        requested = due if requested is None else requested
        window = due - due % 300_000 if window is None else window
        self.add(
            K.ScheduleCreated,
            t,
            s,
            aid,
            ty(type),
            requested,
            due,
            window,
            count,
            1,
            K.PLACEMENT.code(placement),
            int(forced),
            K.SCHEDULE_RULE.code(rule),
        )

    def dispatched(
        self, t: int, s: int, aid: int, type: str, job: int, *, single: bool = True
    ) -> None:
        if job not in self._jobs:
            self._jobs.add(job)
            self.add(JobAdded, t, 0, job, SINGLE if single else BULK, 3, t)
        self.add(K.ScheduleDispatched, t, s, aid, ty(type), t, job, 3)

    def started(self, t: int, s: int, aid: int, type: str, job: int) -> None:
        self.add(K.ScheduleStarted, t, s, aid, ty(type), t, job)

    def skipped(self, t: int, s: int, aid: int, type: str, reason: str) -> None:
        self.add(K.ScheduleSkipped, t, s, aid, ty(type), t, K.SKIP_REASON.code(reason))

    def finished(self, t: int, s: int, aid: int, type: str, final: str = "completed") -> None:
        self.add(K.ScheduleFinished, t, s, aid, ty(type), t, status(final))

    def deleted(self, t: int, s: int, aid: int, type: str, was: str = "pending") -> None:
        self.add(K.ScheduleDeleted, t, s, aid, ty(type), t - 120_001, status(was))

    def stray(self, t: int, s: int, aid: int, type: str, was: str, to: str) -> None:
        self.add(K.StrayStatusChange, t, s, aid, ty(type), t, status(was), status(to))

    def taken(self, t: int, aid: int, views: int = 0, *, s: int = -1, type: str = "") -> None:
        code = ty(type) if type else -1
        self.add(K.SnapshotTaken, t, aid, s, code, t if s >= 0 else -1, views, 0, t)

    def job_finished(self, t: int, job: int, *, single: bool = True) -> None:
        self.add(JobFinished, t, 0, job, SINGLE if single else BULK, 1)

    def moved(self, t: int, s: int, aid: int, from_ms: int, to_ms: int, count: int = 1) -> None:
        self.add(K.ScheduleMoved, t, s, aid, from_ms, to_ms, 1, count)

    def classified(self, t: int, aid: int) -> None:
        self.add(K.SongClassified, t, aid, t - 3_600_000)

    def ended(self, t: int) -> None:
        self.add(RunEnded, t, 0)
