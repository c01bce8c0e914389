"""Finding ``write_path``: did the database keep up with the snapshots; what did backpressure do?

Seed 003 §5.1: writes go through a buffer flushed at 100 rows or 1 s; the database writes a
finite number of rows a second on a finite number of connections; when the rows fetched but not
yet written (the backlog) pass a threshold, the ticks take fewer rows and the regular and
archive dispatchers skip their runs until the backlog is back below a lower one
(docs/write-path.md). Read from the log (:mod:`sim.events.write_kinds`): the backlog after each
flush is issued and after each is written, how long flushes waited for a connection, each
backpressure episode, dispatcher runs held back, and buffered rows a crash took.

A *backlog episode* is a stretch during which more than one flush's worth of rows
(``flush_rows``) waited: its length is how long the scheduler's rules read counts older than
the buffer alone explains.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sim.events.engine_kinds import RunEnded
from sim.events.log import Chunk
from sim.events.write_kinds import (
    BackpressureChanged,
    DispatchHeldBack,
    FlushIssued,
    SnapshotsFlushed,
    WriteBufferLost,
)
from sim.metrics.base import Histogram
from sim.metrics.findings.verdicts import Finding, Severity, duration, finding_metrics, local
from sim.units import Ms


class WriteBacklog:
    """Reducer of finding ``write_path`` (keyword arguments: ``[findings.write_path]``)."""

    ID = "write_path"

    def __init__(
        self,
        flush_rows: int,
        rows_per_second: float,
        connections: int,
        tz_offset_ms: Ms,
        *,
        warn_drain: Ms,
    ) -> None:
        self.flush_rows = flush_rows
        self.rows_per_second = rows_per_second
        self.connections = connections
        self.tz_offset_ms = tz_offset_ms
        self.warn_drain = warn_drain
        self.rows_written = 0
        self.stored = 0
        self.flushes = 0
        self.peak = 0
        self.peak_at: Ms | None = None
        self.episodes: list[tuple[Ms, Ms]] = []
        self.above_since: Ms | None = None
        self.waits = Histogram()  # flushes' waits for a connection (ms)
        self.pressure: list[tuple[Ms, Ms]] = []
        self.pressure_since: Ms | None = None
        self.held_back = 0
        self.lost = 0
        self.end_ms: Ms | None = None

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        issued = chunk.table(FlushIssued)
        flushed = chunk.table(SnapshotsFlushed)
        self.waits.add(issued[:, 5] - issued[:, 1])  # start - issued: waiting for a connection
        self.flushes += flushed.shape[0]
        self.rows_written += int(flushed[:, 3].sum())
        self.stored += int(flushed[:, 4].sum())
        samples = [(seq, t, backlog) for seq, t, *_, backlog in issued.tolist()]
        samples += [(seq, t, backlog) for seq, t, *_, backlog in flushed.tolist()]
        for _, t, backlog in sorted(samples):
            if backlog > self.peak:
                self.peak, self.peak_at = backlog, t
            if backlog > self.flush_rows and self.above_since is None:
                self.above_since = t
            elif backlog <= self.flush_rows and self.above_since is not None:
                self.episodes.append((self.above_since, t))
                self.above_since = None
        for _, t, on, _ in chunk.table(BackpressureChanged).tolist():
            if on:
                self.pressure_since = t
            elif self.pressure_since is not None:
                self.pressure.append((self.pressure_since, t))
                self.pressure_since = None
        self.held_back += chunk.table(DispatchHeldBack).shape[0]
        self.lost += int(chunk.table(WriteBufferLost)[:, 2].sum())
        for t in chunk.column(RunEnded, "t_ms").tolist():
            self.end_ms = t

    def finding(self) -> Finding:
        end = self.end_ms
        episodes = list(self.episodes)
        undrained = self.above_since is not None
        if undrained and end is not None and self.above_since is not None:
            episodes.append((self.above_since, end))
        pressure = list(self.pressure)
        if self.pressure_since is not None and end is not None:
            pressure.append((self.pressure_since, end))
        longest = max(episodes, key=lambda e: (e[1] - e[0], -e[0]), default=None)
        p99_wait = self.waits.percentiles([99])[0] if self.waits.n else 0.0
        capacity = f"capacity {self.connections} connection(s) x {self.rows_per_second:g} rows/s"
        tz = self.tz_offset_ms
        parts = []
        if self.peak_at is None:
            parts.append(f"No snapshot reached the writer ({capacity}).")
        else:
            parts.append(
                f"The write backlog peaked at {self.peak:,} rows at {local(self.peak_at, tz)} "
                f"({capacity}, flushes of up to {self.flush_rows:,} rows)"
            )
            if longest is None:
                parts[-1] += "; it never held more than one flush."
            else:
                a, b = longest
                state = "and had not drained at the end" if undrained else "before it drained"
                parts[-1] += (
                    f"; the longest backlog lasted {duration(b - a)} from {local(a, tz)} {state}"
                    f" ({len(episodes):,} stretch(es) above one flush)."
                )
            parts.append(
                f"{self.rows_written:,} rows written in {self.flushes:,} flushes, which waited "
                f"p99 {duration(p99_wait)} for a connection."
            )
        if pressure:
            on_ms = sum(b - a for a, b in pressure)
            parts.append(
                f"Backpressure was on {len(pressure):,} time(s) for {duration(on_ms)} in all "
                f"(first at {local(pressure[0][0], tz)}); {self.held_back:,} dispatcher run(s) "
                "held back."
            )
        if self.lost:
            parts.append(f"A crash took {self.lost:,} buffered row(s) that were never written.")
        longest_ms = 0 if longest is None else longest[1] - longest[0]
        problems = undrained or longest_ms >= self.warn_drain or self.lost > 0
        return Finding(
            id=self.ID,
            title="Write path",
            severity=Severity.WARN if problems else Severity.OK,
            sentence=" ".join(parts),
            mechanism=(
                "Seed 003 §5.1: each fetched snapshot waits in the writer's buffer, flushed at "
                "100 rows or after 1 s; a flush holds one database connection for its fixed cost "
                "plus its rows at the connection's rate (a slow database adds its latency), and "
                "waits when every connection is busy. Until written, a snapshot is invisible to "
                "the scheduler's rules. With backpressure set, a backlog above the high mark "
                "makes the ticks take a share of their rows and the regular and archive "
                "dispatchers skip their runs, until it falls to the low mark."
            ),
            numbers={
                "peak_backlog_rows": self.peak,
                "longest_backlog_s": round(longest_ms / 1000, 3),
                "backlog_stretches": len(episodes),
                "drained": int(not undrained),
                "rows_written": self.rows_written,
                "rows_stored": self.stored,
                "flushes": self.flushes,
                "p99_connection_wait_s": round(p99_wait / 1000, 3),
                "backpressure_episodes": len(pressure),
                "backpressure_s": round(sum(b - a for a, b in pressure) / 1000, 3),
                "dispatch_runs_held_back": self.held_back,
                "rows_lost_in_crash": self.lost,
            },
            examples=tuple(
                {"from": local(a, tz), "for": duration(b - a)}
                for a, b in sorted(episodes, key=lambda e: e[0] - e[1])[:5]
            ),
            plots=("write_path.png",),
            thresholds={"warn_drain": self.warn_drain},
        )

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())
