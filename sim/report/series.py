"""Time series of a run, each a pure streaming reducer over the event log (like ``sim.metrics``).

A series reducer has ``feed(chunk, names)`` and ``tables(span)``: it sees the log chunk by
chunk, live during the run (a sink of the running log) or offline from ``events.simlog``, and
returns :class:`~sim.report.tables.Table` objects, written as CSV files named by the keys.
Nothing here counts inline in the engine or the model.

Tables (bins are aligned to local time, the scenario's ``timezone``; 5-min windows are CVSA's
``floor(t / 5 min)`` windows, which coincide for whole-quarter-hour offsets):

* ``windows``: per 5-min window, rows *reserved* by type (+1 for each ``ScheduleCreated`` that
  took the window, +/-1 for milestone moves between windows, -1 for cleanup releases; executions
  do not release here, so a past window shows what it was booked for), ``peak_count`` (the
  highest count the window counter reported to a reservation or move), and snapshots *executed*
  by type (``SnapshotTaken`` by the window of its instant; ``discovery``: no schedule asked).
* ``snapshots_per_minute``: ``SnapshotTaken`` per minute by type.
* ``lateness_hourly``: executed minus due (``taken_ms - due_ms``), per local hour and type (and
  ``all``): count, p50/p90/p99/max in seconds (linear interpolation, as ``sim.metrics``).
* ``cleanup_hourly``: rows deleted by ``scheduleCleanup`` per local hour, by type.

See :mod:`sim.report.load_series` (upstream requests, queue depth) and
:mod:`sim.report.milestone_tracking` (capture latency and bracket width against ground truth).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from sim.events import cvsa_kinds as K
from sim.events.engine_kinds import RunEnded, RunStarted
from sim.events.log import Chunk
from sim.metrics.base import PERCENTILES
from sim.report.tables import Column, Table, local_times
from sim.units import HOUR_MS, MINUTE_MS, SECOND_MS, WINDOW_MS, Ms

I8 = npt.NDArray[np.int64]
TYPES: tuple[str, ...] = tuple(K.SNAPSHOT_TYPE.words)
"""Schedule types, in code order (new, milestone, normal, archive)."""
TAKEN_TYPES: tuple[str, ...] = (*TYPES, "discovery")
"""Snapshot types: the schedule types and ``discovery`` (code -1: no schedule asked for it)."""
_DISCOVERY = len(TYPES)
_CLEANUP = K.WINDOW_CAUSE.code("cleanup")


@dataclass(frozen=True)
class Span:
    """The instants a log covers: ``RunStarted`` to ``RunEnded`` (or the last event seen)."""

    start_ms: Ms
    end_ms: Ms
    partial: bool
    """Interrupted (``RunEnded.partial``) or cut short (no ``RunEnded`` at all)."""

    def bins(self, size_ms: Ms, tz_ms: Ms = 0) -> I8:
        """Indexes of the ``size_ms`` bins (aligned to local time) holding an instant of the span,
        both ends included (events at the end instant belong to the run)."""
        lo = (self.start_ms + tz_ms) // size_ms
        hi = (self.end_ms + tz_ms) // size_ms
        return np.arange(lo, hi + 1, dtype=np.int64)


class SeriesReducer(Protocol):
    """A streaming fold over the log that yields tables."""

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None: ...

    def tables(self, span: Span) -> dict[str, Table]: ...


class RunSpan:
    """The :class:`Span` of the log (``RunStarted``, ``RunEnded``, the latest instant seen)."""

    def __init__(self) -> None:
        self.start_ms: Ms | None = None
        self.end_ms: Ms | None = None
        self.last_ms: Ms | None = None
        self.partial = False

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        for r in chunk.records(RunStarted):
            self.start_ms = r.t_ms
        for e in chunk.records(RunEnded):
            self.end_ms, self.partial = e.t_ms, bool(e.partial)
        latest = [int(t[:, 1].max()) for t in chunk.tables.values() if t.size]
        if latest:
            self.last_ms = max([*latest, *([self.last_ms] if self.last_ms is not None else [])])

    def span(self) -> Span:
        if self.start_ms is None:
            raise ValueError("the log has no RunStarted record")
        if self.end_ms is None:  # a log cut short: up to the last event it holds
            return Span(self.start_ms, self.last_ms or self.start_ms, True)
        return Span(self.start_ms, self.end_ms, self.partial)


def type_index(codes: I8) -> I8:
    """Snapshot type codes to indexes of :data:`TAKEN_TYPES` (discovery, -1, is the last)."""
    out: I8 = np.where(codes < 0, _DISCOVERY, codes)
    return out


class Grid:
    """Sparse counts per (bin, label): bins are integers, labels ``0..width-1``."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.rows: dict[int, I8] = {}

    def add(self, bins: I8, labels: I8 | int, weights: I8 | None = None) -> None:
        if not len(bins):
            return
        key = np.asarray(bins, dtype=np.int64) * self.width + labels
        uniq, inverse = np.unique(key, return_inverse=True)
        sums = np.bincount(inverse, weights=weights, minlength=len(uniq))
        for k, s in zip(uniq.tolist(), sums.tolist(), strict=True):
            b, label = divmod(k, self.width)
            row = self.rows.get(b)
            if row is None:
                row = self.rows[b] = np.zeros(self.width, dtype=np.int64)
            row[label] += round(s)

    def matrix(self, bins: I8) -> I8:
        """Counts for ``bins`` (rows) by label (columns), zeros where nothing was added."""
        out = np.zeros((len(bins), self.width), dtype=np.int64)
        for i, b in enumerate(bins.tolist()):
            row = self.rows.get(b)
            if row is not None:
                out[i] = row
        return out


def timed(bins: I8, size_ms: Ms, tz_ms: Ms, name: str) -> dict[str, Column]:
    """``<name>_ms`` (epoch ms) and ``<name>`` (local time) columns for local-time bins."""
    start = bins * size_ms - tz_ms
    return {f"{name}_ms": start, name: local_times(start, tz_ms)}


class WindowOccupancy:
    """``windows``: reserved and executed rows per 5-min window (module docstring)."""

    def __init__(self, tz_ms: Ms) -> None:
        self.tz_ms = tz_ms
        self.reserved = Grid(len(TYPES))
        self.executed = Grid(len(TAKEN_TYPES))
        self.peak: dict[int, int] = {}
        self._deleted: dict[int, int] = {}
        """Schedule -> type of the rows cleanup deleted in this chunk and the one before: its
        window release follows the deletion at once, possibly in the next chunk."""

    def _peak(self, windows: I8, counts: I8) -> None:
        keep = counts >= 0
        windows, counts = windows[keep], counts[keep]
        if not len(windows):
            return
        order = np.argsort(windows, kind="stable")
        w, c = windows[order], counts[order]
        starts = np.flatnonzero(np.r_[True, w[1:] != w[:-1]])
        for b, m in zip(w[starts].tolist(), np.maximum.reduceat(c, starts).tolist(), strict=True):
            self.peak[b] = max(self.peak.get(b, 0), m)

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        created = chunk.table(K.ScheduleCreated)
        if created.size:
            placed = created[created[:, 7] != K.NO_WINDOW]
            windows = placed[:, 7] // WINDOW_MS
            self.reserved.add(windows, placed[:, 4])
            self._peak(windows, placed[:, 8])
        moved = chunk.table(K.ScheduleMoved)
        moved = moved[moved[:, 6] == 1]
        if moved.size:
            milestone = K.SNAPSHOT_TYPE.code("milestone")
            self.reserved.add(moved[:, 4] // WINDOW_MS, milestone, -np.ones(len(moved), np.int64))
            self.reserved.add(moved[:, 5] // WINDOW_MS, milestone)
            self._peak(moved[:, 5] // WINDOW_MS, moved[:, 7])
        deleted = chunk.table(K.ScheduleDeleted)
        latest = dict(zip(deleted[:, 2].tolist(), deleted[:, 4].tolist(), strict=True))
        released = chunk.table(K.WindowReleased)
        released = released[released[:, 4] == _CLEANUP]
        if released.size:
            known = {**self._deleted, **latest}
            types = np.array([known[s] for s in released[:, 3].tolist()], dtype=np.int64)
            self.reserved.add(released[:, 2] // WINDOW_MS, types, -np.ones(len(types), np.int64))
        self._deleted = latest
        taken = chunk.table(K.SnapshotTaken)
        if taken.size:
            self.executed.add(taken[:, 1] // WINDOW_MS, type_index(taken[:, 4]))

    def tables(self, span: Span) -> dict[str, Table]:
        bins = np.union1d(span.bins(WINDOW_MS), list(self.reserved.rows))
        bins = np.union1d(bins, list(self.executed.rows)).astype(np.int64)
        reserved, executed = self.reserved.matrix(bins), self.executed.matrix(bins)
        start = bins * WINDOW_MS  # CVSA's windows are aligned to the epoch, not to local time
        cols: dict[str, Column] = {
            "window_start_ms": start,
            "window_start": local_times(start, self.tz_ms),
        }
        for j, name in enumerate(TYPES):
            cols[f"reserved_{name}"] = reserved[:, j]
        cols["peak_count"] = np.array([self.peak.get(b, 0) for b in bins.tolist()], np.int64)
        for j, name in enumerate(TAKEN_TYPES):
            cols[f"executed_{name}"] = executed[:, j]
        return {"windows": Table(cols)}


class SnapshotRate:
    """``snapshots_per_minute``: ``SnapshotTaken`` per minute by type."""

    def __init__(self, tz_ms: Ms) -> None:
        self.tz_ms = tz_ms
        self.grid = Grid(len(TAKEN_TYPES))

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        taken = chunk.table(K.SnapshotTaken)
        if taken.size:
            self.grid.add((taken[:, 1] + self.tz_ms) // MINUTE_MS, type_index(taken[:, 4]))

    def tables(self, span: Span) -> dict[str, Table]:
        bins = span.bins(MINUTE_MS, self.tz_ms)
        counts = self.grid.matrix(bins)
        cols = timed(bins, MINUTE_MS, self.tz_ms, "minute_start")
        cols.update({name: counts[:, j] for j, name in enumerate(TAKEN_TYPES)})
        return {"snapshots_per_minute": Table(cols)}


class LatenessOverTime:
    """``lateness_hourly``: percentiles of executed minus due per local hour and type.

    An hour's row is computed once a later hour's snapshot arrives, and its samples dropped:
    the log's instants never go back, so that hour is complete. Keeping every sample to the
    end instead (24 bytes each, one per snapshot, millions at full scale) would hold them all
    at once, and sorting them would copy them again at the end of the run.
    """

    def __init__(self, tz_ms: Ms) -> None:
        self.tz_ms = tz_ms
        self._open: dict[int, list[I8]] = {}
        """Local hour -> (type, executed minus due in ms) rows of its scheduled snapshots."""
        self._rows: list[tuple[int, int, int, list[float], float]] = []
        """(hour, type or ``len(TYPES)`` for all, count, percentiles in s, max in s) of the
        hours already complete, in order."""
        self._complete_below: int | None = None

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        taken = chunk.table(K.SnapshotTaken)
        taken = taken[taken[:, 4] >= 0]
        if not taken.size:
            return
        hour = (taken[:, 1] + self.tz_ms) // HOUR_MS
        first = int(hour.min())
        if self._complete_below is not None and first < self._complete_below:
            raise RuntimeError(
                f"lateness_hourly: a snapshot at hour {first} after hour {self._complete_below}"
                " was complete (the log's instants went back)"
            )
        for h in sorted(h for h in self._open if h < first):
            self._rows.extend(_hour_rows(h, self._open.pop(h)))
        self._complete_below = first
        # Lateness as in the summary (sim.metrics.cvsa): the answer's server time minus due.
        rows = np.stack([taken[:, 4], taken[:, 8] - taken[:, 5]], axis=1)
        for h in np.unique(hour).tolist():
            self._open.setdefault(h, []).append(rows[hour == h])

    def tables(self, span: Span) -> dict[str, Table]:
        done = list(self._rows)
        for h in sorted(self._open):
            done.extend(_hour_rows(h, self._open[h]))
        hours = np.array([r[0] for r in done], dtype=np.int64)
        cols = timed(hours, HOUR_MS, self.tz_ms, "hour_start")
        cols["type"] = np.array([(*TYPES, "all")[r[1]] for r in done], np.str_)
        cols["count"] = np.array([r[2] for r in done], dtype=np.int64)
        pct = np.array([r[3] for r in done], np.float64).reshape(-1, len(PERCENTILES))
        for j, p in enumerate(PERCENTILES):
            cols[f"p{p}_s"] = pct[:, j]
        cols["max_s"] = np.array([r[4] for r in done], dtype=np.float64)
        return {"lateness_hourly": Table(cols)}


def _hour_rows(hour: int, parts: list[I8]) -> list[tuple[int, int, int, list[float], float]]:
    """One hour's rows: each type present, then ``all`` (percentiles do not depend on order)."""
    rows = np.concatenate(parts)
    out = []
    groups = [(c, rows[rows[:, 0] == c, 1]) for c in np.unique(rows[:, 0]).tolist()]
    for code, lateness in [*groups, (len(TYPES), rows[:, 1])]:
        seconds = lateness.astype(np.float64) / SECOND_MS
        pct = np.percentile(seconds, PERCENTILES, method="linear")
        out.append((hour, code, len(seconds), pct.tolist(), float(seconds.max())))
    return out


class CleanupDeletions:
    """``cleanup_hourly``: rows ``scheduleCleanup`` deleted, per local hour and type."""

    def __init__(self, tz_ms: Ms) -> None:
        self.tz_ms = tz_ms
        self.grid = Grid(len(TYPES))

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        deleted = chunk.table(K.ScheduleDeleted)
        if deleted.size:
            self.grid.add((deleted[:, 1] + self.tz_ms) // HOUR_MS, deleted[:, 4])

    def tables(self, span: Span) -> dict[str, Table]:
        bins = span.bins(HOUR_MS, self.tz_ms)
        counts = self.grid.matrix(bins)
        cols = timed(bins, HOUR_MS, self.tz_ms, "hour_start")
        cols.update({name: counts[:, j] for j, name in enumerate(TYPES)})
        return {"cleanup_hourly": Table(cols)}
