"""``write_path``: seed 003's write backlog, backpressure and traffic modes, per minute.

Columns per local minute: the most rows fetched but not yet written (``backlog_max``, from the
backlog each ``FlushIssued`` and ``SnapshotsFlushed`` record reports), the rows written, the rows
dispatched by the ticks (``hot_dispatched``: milestone and new; ``cold_dispatched``: normal and
archive, the work a mode defers), and whether backpressure was on and which traffic mode held at
any time in the minute (``ModeChanged``, ``BackpressureChanged``). A run without ``[write_path]``
and ``[modes]`` has an empty table and no figure. The same numbers as the findings
``write_path`` and ``modes`` (:mod:`sim.metrics.findings.write_backlog`,
:mod:`sim.metrics.findings.deferral`), over time; docs/write-path.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.events.write_kinds import (
    TRAFFIC_MODE,
    BackpressureChanged,
    FlushIssued,
    ModeChanged,
    SnapshotsFlushed,
)
from sim.report.plots import PlotContext, days, legend, step_line, time_axis
from sim.report.series import Span, timed
from sim.report.tables import Table
from sim.units import DAY_MS, MINUTE_MS, Ms

TABLE = "write_path"
FILE = "write_path.png"
CAPTION = (
    "Seed 003's write path and traffic modes per minute: rows fetched but not yet written, rows "
    "dispatched (hot: milestone and new; cold: normal and archive), backpressure and modes."
)
_HOT = np.array([K.SNAPSHOT_TYPE.code("milestone"), K.SNAPSHOT_TYPE.code("new")], np.int64)
_MODE_COLOURS = {"peak": "#DD8452", "degraded": "#C44E52"}

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


class WriteBacklogSeries:
    """Series reducer of ``write_path`` (module docstring)."""

    def __init__(self, tz_ms: Ms) -> None:
        self.tz_ms = tz_ms
        self.backlog: dict[int, int] = {}  # local minute -> most rows waiting
        self.last: dict[int, int] = {}  # local minute -> rows waiting at its last sample
        self.dispatched: dict[tuple[int, bool], int] = {}  # (local minute, hot) -> rows
        self.written: dict[int, int] = {}
        self.pressure: list[tuple[Ms, int]] = []  # (t, on)
        self.modes: list[tuple[Ms, int]] = []  # (t, mode code)
        self.seen = False

    def _minute(self, t: Ms) -> int:
        return (t + self.tz_ms) // MINUTE_MS

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        samples = [(seq, t, b) for seq, t, *_, b in chunk.table(FlushIssued).tolist()]
        flushed = chunk.table(SnapshotsFlushed).tolist()
        samples += [(seq, t, b) for seq, t, *_, b in flushed]
        for _, t, b in sorted(samples):
            m = self._minute(t)
            self.backlog[m] = max(self.backlog.get(m, 0), b)
            self.last[m] = b
        for _, t, _, rows, *_ in flushed:
            m = self._minute(t)
            self.written[m] = self.written.get(m, 0) + rows
        d = chunk.table(K.ScheduleDispatched)
        if d.shape[0]:
            hot = np.isin(d[:, 4], _HOT)
            minutes = (d[:, 1] + self.tz_ms) // MINUTE_MS
            for m, h in zip(minutes.tolist(), hot.tolist(), strict=True):
                self.dispatched[m, h] = self.dispatched.get((m, h), 0) + 1
        self.pressure += [(t, on) for _, t, on, _ in chunk.table(BackpressureChanged).tolist()]
        self.modes += [(t, mode) for _, t, mode, _, _ in chunk.table(ModeChanged).tolist()]
        self.seen = self.seen or bool(samples or self.modes)

    def tables(self, span: Span) -> dict[str, Table]:
        bins = span.bins(MINUTE_MS, self.tz_ms) if self.seen else np.zeros(0, np.int64)
        cols = timed(bins, MINUTE_MS, self.tz_ms, "minute_start")
        # A minute without a sample holds what the last sample before it said.
        backlog, last = np.zeros(len(bins), np.int64), 0
        for k, m in enumerate(bins.tolist()):
            backlog[k] = max(self.backlog.get(m, 0), last)
            last = self.last.get(m, last)
        cols["backlog_max"] = backlog
        cols["rows_written"] = np.array([self.written.get(m, 0) for m in bins.tolist()], np.int64)
        for name, hot in (("hot_dispatched", True), ("cold_dispatched", False)):
            cols[name] = np.array(
                [self.dispatched.get((m, hot), 0) for m in bins.tolist()], np.int64
            )
        cols["backpressure"] = _held(bins, self.tz_ms, self.pressure, 1)
        for word in ("peak", "degraded"):
            cols[word] = _held(bins, self.tz_ms, self.modes, TRAFFIC_MODE.code(word))
        return {TABLE: Table(cols)}


def _held(bins: np.ndarray, tz_ms: Ms, changes: list[tuple[Ms, int]], value: int) -> np.ndarray:
    """1 in every minute in which the logged state was ``value`` at some instant."""
    out = np.zeros(len(bins), np.int64)
    if not len(bins):
        return out
    first, start = int(bins[0]), None
    for t, logged in [*changes, (2**61, value - 1)]:  # a last change ends an open stretch
        m = (t + tz_ms) // MINUTE_MS
        if start is not None:
            lo, hi = max(start - first, 0), min(m - first + 1, len(bins))
            out[lo:hi] = 1
            start = None
        if logged == value:
            start = m
    return out


def write_path(tables: dict[str, Table], ctx: PlotContext) -> Figure | None:
    """The backlog (with the write path) and the rows dispatched per minute, hot and cold, against
    time, shaded where backpressure or a traffic mode held. None for a run with neither."""
    import matplotlib.pyplot as plt

    t = tables.get(TABLE)
    if t is None or not len(t):
        return None
    writes = bool(t.ints("backlog_max").any() or t.ints("rows_written").any())
    fig, axes = plt.subplots(
        2 if writes else 1,
        1,
        figsize=(12, 5.2 if writes else 3.4),
        sharex=True,
        layout="constrained",
        squeeze=False,
    )
    fig.suptitle(
        ctx.title(
            "write path and traffic modes: rows not yet written, rows dispatched"
            if writes
            else "traffic modes: rows dispatched per minute, hot and cold"
        ),
        fontweight="bold",
    )
    x = days(t.ints("minute_start_ms"))
    width = MINUTE_MS / DAY_MS
    for ax in axes[:, 0]:
        for word, colour in _MODE_COLOURS.items():
            _shade(ax, x, width, t.ints(word), colour, f"{word} mode", alpha=0.18)
        _shade(ax, x, width, t.ints("backpressure"), "#8172B3", "backpressure on", alpha=0.28)
    if writes:
        top = axes[0, 0]
        step_line(top, x, t.ints("backlog_max"), width, color="#4C72B0", lw=1.2, label="backlog")
        top.set_ylabel("rows not yet written")
        top.set_ylim(bottom=0)
        legend(top, loc="upper left")
    bottom = axes[-1, 0]
    step_line(
        bottom,
        x,
        t.ints("hot_dispatched"),
        width,
        color="#C44E52",
        lw=1.0,
        label="milestone and new",
    )
    step_line(
        bottom,
        x,
        t.ints("cold_dispatched"),
        width,
        color="#55A868",
        lw=1.0,
        label="normal and archive",
    )
    bottom.set_ylabel("rows dispatched / min")
    bottom.set_ylim(bottom=0)
    legend(bottom, loc="upper left")
    time_axis(bottom, ctx)
    return fig


def _shade(
    ax: Axes, x: np.ndarray, width: float, on: np.ndarray, colour: str, label: str, alpha: float
) -> None:
    """Shade the minutes where ``on`` is 1, labelled once."""
    if not on.any():
        return
    edges = np.flatnonzero(np.diff(np.r_[0, on, 0]))
    for i, (a, b) in enumerate(zip(edges[::2], edges[1::2], strict=True)):
        ax.axvspan(
            x[a], x[b - 1] + width, color=colour, alpha=alpha, lw=0, label=label if i == 0 else None
        )
