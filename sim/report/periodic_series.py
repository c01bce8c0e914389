"""``periodic_runs``: how many of each periodic job's slots ran, per 5 minutes, per deployment.

A run counts in the bin of its planned time (``due``): announced iterations one by one, idle
ones from their run-length records (``IdleIterations``: ``n`` runs evenly spread from the first
to the last due time). Each column is one job in one deployment (``snapshotTick``,
``snapshotTick#2``) as a share of the job's slots over the trailing window of whole periods
ending with the bin (5 minutes for the ticks and the milestone dispatcher, 10 for cleanup, the
period itself for the 30-minute and 2-hour dispatchers): 1 is every slot run once, 2 a second
deployment running them again, 0 nobody running them (a crash, or an executor without the
lock). The same numbers as the finding ``periodic`` (:mod:`sim.metrics.findings.periodic_runs`),
over time; docs/periodic.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from sim.events.engine_kinds import IdleIterations, IterationStarted
from sim.events.log import Chunk
from sim.report.plots import PlotContext, days, empty_note, legend, time_axis
from sim.report.series import Grid, Span, timed
from sim.report.tables import Table
from sim.units import DAY_MS, Ms

BIN_MS = 5 * 60_000
MAX_WINDOW_BINS = 288
"""The longest trailing window a share is taken over: a day of 5-minute bins."""
TABLE = "periodic_runs"
FILE = "periodic.png"
CAPTION = (
    "Each periodic job's slots run per 5 minutes, per deployment: 1 = every slot once, "
    "2 = run twice, 0 = not run."
)
I8 = npt.NDArray[np.int64]
DEPLOYMENT_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52")

if TYPE_CHECKING:
    from matplotlib.figure import Figure


class PeriodicSlots:
    """Series reducer of ``periodic_runs`` (module docstring)."""

    def __init__(self, tz_ms: Ms, periods_ms: Mapping[str, Ms]) -> None:
        self.tz_ms = tz_ms
        self.periods_ms = dict(periods_ms)
        self.columns: list[str] = []  # job names as logged, in the order first seen
        self.grid = Grid(64)  # columns: at most the six jobs in a few deployments

    def _column(self, name: str) -> int | None:
        if name.partition("#")[0] not in self.periods_ms:
            return None
        if name not in self.columns:
            if len(self.columns) == self.grid.width:
                return None
            self.columns.append(name)
        return self.columns.index(name)

    def _add(self, name: str, due: I8) -> None:
        col = self._column(name)
        if col is not None:
            self.grid.add((due + self.tz_ms) // BIN_MS, col)

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        for _, _, s, due in chunk.table(IterationStarted).tolist():
            self._add(names[s], np.array([due], dtype=np.int64))
        for _, _, s, first, last, n in chunk.table(IdleIterations).tolist():
            due = np.linspace(first, last, n).round().astype(np.int64)
            self._add(names[s], due)

    def tables(self, span: Span) -> dict[str, Table]:
        bins = span.bins(BIN_MS, self.tz_ms)
        starts = bins * BIN_MS - self.tz_ms
        if len(bins) > 1 and starts[-1] >= span.end_ms:
            bins, starts = bins[:-1], starts[:-1]  # the end instant alone: no time to run in
        runs = self.grid.matrix(bins)
        # The part of each bin inside the run, so that the first and last bins are fair.
        covered = np.minimum(starts + BIN_MS, span.end_ms) - np.maximum(starts, span.start_ms)
        covered = np.clip(covered, 0, BIN_MS).astype(np.float64)
        cols = timed(bins, BIN_MS, self.tz_ms, "bin_start")
        order = list(self.periods_ms)

        def key(name: str) -> tuple[int, str]:
            base, _, deployment = name.partition("#")
            return order.index(base), deployment

        for name in sorted(self.columns, key=key):
            period = self.periods_ms[name.partition("#")[0]]
            # A trailing window of whole periods and whole bins (5 min, 10 min for a 2-minute
            # job, 2 h for a 2-hour one), so that a job running every slot reads 1 in every bin.
            k = min(math.lcm(BIN_MS, period) // BIN_MS, MAX_WINDOW_BINS)
            window = np.ones(k)
            ran = np.convolve(runs[:, self.columns.index(name)], window)[: len(bins)]
            # Slots start with the run, so a partial window at the start holds ceil(time / P).
            slots = np.ceil(np.convolve(covered, window)[: len(bins)] / period)
            share = np.divide(ran, slots, out=np.zeros(len(bins)), where=slots > 0)
            cols[name] = np.round(share, 3)
        return {TABLE: Table(cols)}


def periodic(tables: dict[str, Table], ctx: PlotContext) -> Figure:
    """One panel per job: the share of its slots each deployment ran, per 5 minutes."""
    import matplotlib.pyplot as plt

    t = tables[TABLE]
    jobs = [c for c in t.columns if c not in ("bin_start_ms", "bin_start")]
    bases = list(dict.fromkeys(c.partition("#")[0] for c in jobs))
    fig, axes = plt.subplots(
        max(len(bases), 1),
        1,
        figsize=(12, 1.2 + 1.25 * max(len(bases), 1)),
        sharex=True,
        layout="constrained",
        squeeze=False,
    )
    fig.suptitle(
        ctx.title("periodic jobs: how many times each slot ran, by deployment (1 = once)"),
        fontweight="bold",
    )
    x = days(t.ints("bin_start_ms"))
    width = BIN_MS / DAY_MS
    if not bases:
        empty_note(axes[0][0], "no periodic job ran")
    for i, (ax, base) in enumerate(zip(axes[:, 0], bases, strict=False)):
        # Deployments stacked: the top of the stack is how many times each slot ran.
        stack = np.zeros(len(x))
        for j, name in enumerate(c for c in jobs if c.partition("#")[0] == base):
            y = t.floats(name)
            deployment = name.partition("#")[2]
            label = f"deployment #{deployment}" if deployment else "first deployment"
            colour = DEPLOYMENT_COLOURS[j % len(DEPLOYMENT_COLOURS)]
            edges = np.r_[x, x[-1] + width] if len(x) else x
            top = stack + y
            ax.fill_between(
                edges,
                np.r_[stack, stack[-1:]],
                np.r_[top, top[-1:]],
                step="post",
                color=colour,
                alpha=0.8,
                lw=0,
                label=label if i == 0 else None,
            )
            stack = top
        ax.axhline(1, color="0.3", linestyle="--", linewidth=0.8)
        ax.set_ylim(0, max(1.0, float(stack.max(initial=0))) * 1.2)
        ax.set_ylabel(base, rotation=0, ha="right", va="center", fontsize=8)
    if bases:
        legend(axes[0][0], loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=4)
    time_axis(axes[-1][0], ctx)
    return fig
