"""One video's story (``sim explain``): every record of one aid in a saved event log, as lines a
person reads.

The log is streamed chunk by chunk and filtered by aid with numpy (a full-scale log is GBs; the
story of one video is a few hundred records). Upstream failures are logged per job, not per
video (``UpstreamFailed``): they belong to this video when their job is one that a row of this
aid was dispatched into or started by. Retries of a bulk job carry aid -1 and are attributed the
same way. Like every report module this reads run files and the log, never the runner.

The table's lines are made in :mod:`sim.report.video_story_lines`, the world's side in
:mod:`sim.report.video_story_world`, the drawing in :mod:`sim.report.video_story_plot`; the
command is :mod:`sim.cli.explain`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sim.events import cvsa_kinds as K
from sim.events.file import SavedLog
from sim.events.schema import kind_of
from sim.units import Ms, format_instant_ms

I8 = npt.NDArray[np.int64]

AID_KINDS: tuple[type, ...] = (
    K.VideoDiscovered,
    K.SongClassified,
    K.ScheduleCreated,
    K.ScheduleNotCreated,
    K.ScheduleMoved,
    K.ScheduleDispatched,
    K.ScheduleSkipped,
    K.ScheduleStarted,
    K.StrayStatusChange,
    K.SnapshotTaken,
    K.HistoryLoaded,
    K.ScheduleFinished,
    K.ScheduleDeleted,
)
"""Kinds that name the aid in a column of their own."""
SAMPLE_CHUNKS = 32
"""Chunks whose snapshot aids are kept to suggest aids when the asked one is not in the log."""


def col(kind: type, name: str) -> int:
    """Column index of ``name`` in ``chunk.table(kind)``."""
    return ("seq", "t_ms", *kind_of(kind).fields).index(name)


@dataclass
class Story:
    """The records of one aid (per kind, in log order) and what is needed to read them."""

    aid: int
    tables: dict[type, I8]
    words: dict[str, list[str]]
    """The log header's word tables (schedule types, statuses, reasons)."""
    complete: bool
    """The log ended with its trailer (else the run was cut short)."""
    sample_aids: I8 = field(default_factory=lambda: np.zeros(0, np.int64))
    """Snapshot aids of the log's first chunks (suggestions for an aid not in the log)."""

    def __getitem__(self, kind: type) -> I8:
        return self.tables[kind]

    @property
    def found(self) -> bool:
        return any(len(t) for t in self.tables.values())

    def word(self, table: str, code: int) -> str:
        words = self.words.get(table, [])
        return words[code] if 0 <= code < len(words) else f"{table} {code}"

    def type_word(self, code: int) -> str:
        """A schedule type; -1 (a snapshot no row asked for) is discovery's (§13.1)."""
        return "discovery" if code < 0 else self.word("snapshot_type", code)

    def jobs(self) -> I8:
        """The jobs that handled a row of this aid."""
        parts = [self[K.ScheduleDispatched][:, col(K.ScheduleDispatched, "job")]]
        parts.append(self[K.ScheduleStarted][:, col(K.ScheduleStarted, "job")])
        return np.unique(np.concatenate(parts))


def read_story(path: Path, aid: int) -> Story:
    """Stream the saved log at ``path`` and keep the records of ``aid`` (see the module doc)."""
    kinds = (*AID_KINDS, K.UpstreamFailed, K.RetryScheduled)
    parts: dict[type, list[I8]] = {k: [] for k in kinds}
    jobs = np.zeros(0, np.int64)
    sample: list[I8] = []
    fail_job, retry_job = col(K.UpstreamFailed, "job"), col(K.RetryScheduled, "job")
    retry_aid = col(K.RetryScheduled, "aid")
    with SavedLog(path) as log:
        for n, chunk in enumerate(log.chunks()):
            for kind in AID_KINDS:
                table = chunk.table(kind)
                mine = table[table[:, col(kind, "aid")] == aid]
                if len(mine):
                    parts[kind].append(mine)
                    if kind in (K.ScheduleDispatched, K.ScheduleStarted):
                        # A row is dispatched (and started) before its job calls upstream: the
                        # jobs known after this chunk's dispatches cover this chunk's failures.
                        jobs = np.union1d(jobs, mine[:, col(kind, "job")])
            failed = chunk.table(K.UpstreamFailed)
            if len(failed) and len(jobs):
                parts[K.UpstreamFailed].append(failed[np.isin(failed[:, fail_job], jobs)])
            retry = chunk.table(K.RetryScheduled)
            if len(retry):
                bulk = (retry[:, retry_aid] == -1) & np.isin(retry[:, retry_job], jobs)
                parts[K.RetryScheduled].append(retry[(retry[:, retry_aid] == aid) | bulk])
            if n < SAMPLE_CHUNKS:
                sample.append(chunk.column(K.SnapshotTaken, "aid"))
        words = {k: list(v) for k, v in log.header.get("enums", {}).items()}
        complete = log.complete
    tables = {
        k: np.concatenate(p) if p else np.zeros((0, kind_of(k).width), np.int64)
        for k, p in parts.items()
    }
    return Story(aid, tables, words, complete, np.concatenate(sample) if sample else jobs[:0])


def most_snapshotted(aids: I8, n: int) -> list[int]:
    """The ``n`` aids with the most snapshots in ``aids`` (ties: smaller aid first)."""
    values, counts = np.unique(aids[aids >= 0], return_counts=True)
    order = np.lexsort((values, -counts))[:n]
    return [int(v) for v in values[order]]


def local_second(ms: Ms, tz_ms: Ms) -> str:
    """``2031-01-06T07:05:01``: a local time to the second, without the offset (the table's
    header names the time zone once)."""
    return format_instant_ms(ms - ms % 1000, tz_ms)[:19]
