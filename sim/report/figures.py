"""The figures of a run report, one function each, from the CSV tables (see ``sim.report.series``).

``RUN_FIGURES`` lists them in report order: file name, caption (used by ``report.html``) and the
drawing function; :func:`draw_run` draws them all. matplotlib is imported inside each function
(this module is imported lazily).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from sim.report import capacity_plot, periodic_series, why_late, write_series
from sim.report.milestones_plot import milestones
from sim.report.plots import (
    COLOURS,
    F8,
    STYLE,
    FigureFn,
    PlotContext,
    SummaryFigureFn,
    coarsen,
    count_axis,
    days,
    dense_bins,
    empty_note,
    legend,
    limit_line,
    save,
    seconds_label,
    step_fill,
    step_line,
    time_axis,
)
from sim.report.proxies import proxies_figure
from sim.report.series import TAKEN_TYPES, TYPES
from sim.report.tables import Table
from sim.units import DAY_MS, HOUR_MS, MINUTE_MS, WINDOW_MS

if TYPE_CHECKING:
    from matplotlib.colors import Colormap, Normalize
    from matplotlib.figure import Figure


def _stack(
    table: Table, prefix: str, types: tuple[str, ...], inside: npt.NDArray[np.bool_]
) -> list[tuple[str, npt.NDArray[np.int64]]]:
    return [(ty, table.ints(f"{prefix}{ty}")[inside]) for ty in types]


def _labelled(
    series: list[tuple[str, npt.NDArray[np.int64]]],
) -> list[tuple[str, str, npt.NDArray[np.int64]]]:
    """(type, legend label with the series' total, values)."""
    return [(ty, f"{ty} ({int(v.sum()):,})", v) for ty, v in series]


def occupancy(tables: dict[str, Table], ctx: PlotContext) -> Figure:
    import matplotlib.pyplot as plt

    w = tables["windows"]
    t = w.ints("window_start_ms")
    inside = (t + WINDOW_MS > ctx.start_ms) & (t < ctx.end_ms)
    later = t >= ctx.end_ms
    x = days(t[inside])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(12, 7), sharex=True, layout="constrained")
    fig.suptitle(ctx.title("window occupancy per 5-minute window"), fontweight="bold")
    reserved = _stack(w, "reserved_", TYPES, inside)
    step_fill(top, x, _labelled(reserved), width=WINDOW_MS / DAY_MS)
    peak = w.ints("peak_count")[inside]
    if len(x):
        top.step(
            np.r_[x, x[-1] + WINDOW_MS / DAY_MS],
            np.r_[peak, peak[-1]],
            where="post",
            color="black",
            lw=0.7,
            label="window counter (its peak; executions release rows)",
        )
    booked = np.sum([v for _, v in reserved], axis=0)
    high = float(max(np.max(booked, initial=0), np.max(peak, initial=0)))
    limit_line(top, ctx.cap, high, f"cap {ctx.cap:,}", "#b00000")
    n_later = int(sum(w.ints(f"reserved_{ty}")[later].sum() for ty in TYPES))
    top.set_title(
        "reserved: rows placed into each window by type (moves and cleanup releases counted; "
        f"{n_later:,} more rows are booked after the end of the run)",
        fontweight="normal",
    )
    top.set_ylabel("rows per window")
    executed = _stack(w, "executed_", TAKEN_TYPES, inside)
    step_fill(bottom, x, _labelled(executed), width=WINDOW_MS / DAY_MS)
    done = np.sum([v for _, v in executed], axis=0)
    limit_line(bottom, ctx.cap, float(np.max(done, initial=0)), f"cap {ctx.cap:,}", "#b00000")
    bottom.set_title(
        "executed: snapshots taken in each window by type (discovery: no schedule asked for it)",
        fontweight="normal",
    )
    bottom.set_ylabel("snapshots per window")
    for ax in (top, bottom):
        count_axis(ax)
        legend(ax, loc="upper left", ncol=7)
        time_axis(ax, ctx, label=ax is bottom)
    return fig


def _day_grid(t: npt.NDArray[np.int64], values: F8, ctx: PlotContext) -> tuple[F8, list[str]]:
    """Windows -> (local day x time-of-day slot) grid; NaN outside the run."""
    local = t + ctx.tz_ms
    day0 = (ctx.start_ms + ctx.tz_ms) // DAY_MS
    n_days = max(int((ctx.end_ms - 1 + ctx.tz_ms) // DAY_MS - day0) + 1, 1)
    grid = np.full((n_days, DAY_MS // WINDOW_MS), np.nan)
    inside = (t + WINDOW_MS > ctx.start_ms) & (t < ctx.end_ms)
    row = local[inside] // DAY_MS - day0
    col = (local[inside] % DAY_MS) // WINDOW_MS
    grid[row, col] = values[inside]
    labels = [
        np.datetime_as_string(np.datetime64((day0 + d) * DAY_MS, "ms"), unit="D")
        + " "
        + ("Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed")[(day0 + d) % 7]
        for d in range(n_days)
    ]
    return grid, labels


def occupancy_heatmap(tables: dict[str, Table], ctx: PlotContext) -> Figure:
    import matplotlib.pyplot as plt

    w = tables["windows"]
    t = w.ints("window_start_ms")
    reserved = sum(w.floats(f"reserved_{ty}") for ty in TYPES)
    executed = sum(w.floats(f"executed_{ty}") for ty in TYPES)
    grids = [_day_grid(t, np.asarray(v, np.float64), ctx) for v in (reserved, executed)]
    n_days = len(grids[0][1])
    height = 1.6 + 2 * (0.8 + 0.32 * n_days)
    fig, axes = plt.subplots(2, 1, figsize=(12, height), sharex=True, layout="constrained")
    peak = float(max(np.nanmax(grids[0][0]), np.nanmax(grids[1][0]), 1))
    cmap, norm = occupancy_colours(float(ctx.cap), peak)
    scale = (
        f"0 to the cap, {ctx.cap:,}; reds above it, up to {peak:,.0f}"
        if peak > ctx.cap
        else f"0 to {peak:,.0f}; cap {ctx.cap:,}"
    )
    fig.suptitle(
        ctx.title(f"occupancy by day and time of day (colour: {scale})"), fontweight="bold"
    )
    image = None
    for ax, (grid, labels), what in zip(
        axes, grids, ("reserved rows", "scheduled snapshots executed"), strict=True
    ):
        image = ax.imshow(
            grid,
            aspect="auto",
            interpolation="nearest",
            cmap=cmap,
            norm=norm,
            extent=(0, 24, len(labels), 0),
        )
        ax.set_yticks(np.arange(len(labels)) + 0.5, labels)
        ax.set_title(f"{what} per 5-min window (grey: outside the run)", fontweight="normal")
        ax.grid(False)
    axes[-1].set_xticks(np.arange(0, 25, 2))
    axes[-1].set_xlabel(f"time of day ({ctx.tz_label})")
    assert image is not None
    bar = fig.colorbar(image, ax=list(axes), fraction=0.03, pad=0.01)
    if peak > ctx.cap:  # the cap as a line, the peak as a tick: the reds' scale is short
        bar.ax.axhline(ctx.cap, color="black", linewidth=1.5)
        ticks = [t for t in bar.get_ticks() if 0 <= t < peak * 0.97 and t != ctx.cap]
        bar.set_ticks(sorted([*ticks, float(ctx.cap), peak]))
    bar.set_label("rows per window")
    return fig


def occupancy_colours(cap: float, peak: float) -> tuple[Colormap, Normalize]:
    """The heatmap's colours: viridis from 0 to the cap and, when some window holds more, a
    light-to-dark red ramp from the cap to the peak, each on half of the colour bar. A
    saturated design (every window over the cap for weeks, as at full scale) would otherwise
    be one flat red, when how far over the cap each window went is what a reader wants then."""
    import matplotlib
    from matplotlib.colors import ListedColormap, Normalize, TwoSlopeNorm

    colours: Colormap = matplotlib.colormaps["viridis"]
    norm = Normalize(0.0, peak)
    if peak > cap:
        below = colours(np.linspace(0.0, 1.0, 128))
        above = matplotlib.colormaps["Reds"](np.linspace(0.3, 1.0, 128))
        colours = ListedColormap(np.vstack([below, above]), name="occupancy")
        norm = TwoSlopeNorm(cap, 0.0, peak)
    return colours.with_extremes(bad="0.92"), norm


def load(tables: dict[str, Table], ctx: PlotContext) -> Figure:
    import matplotlib.pyplot as plt

    fig, (rate, calls, depth) = plt.subplots(
        3, 1, figsize=(12, 9), sharex=True, layout="constrained"
    )
    fig.suptitle(ctx.title("load shape"), fontweight="bold")
    s = tables["snapshots_per_minute"]
    minutes, counts, k = coarsen(
        s.ints("minute_start_ms"), [s.ints(ty) for ty in TAKEN_TYPES], "mean"
    )
    totals = [int(s.ints(ty).sum()) for ty in TAKEN_TYPES]
    step_fill(
        rate,
        days(minutes),
        [(ty, f"{ty} ({n:,})", c) for ty, n, c in zip(TAKEN_TYPES, totals, counts, strict=True)],
        width=k * MINUTE_MS / DAY_MS,
    )
    over = f" (mean over {k}-minute bins)" if k > 1 else ""
    rate.set_title(f"snapshots per minute, by type{over}", fontweight="normal")
    rate.set_ylabel("snapshots / min")
    u = tables["upstream"]
    lo = ctx.start_ms - ctx.start_ms % WINDOW_MS
    hi = ctx.end_ms + (-ctx.end_ms) % WINDOW_MS
    ut, count = u.ints("bin_start_ms"), u.floats("count")
    path, event = u.texts("path"), u.texts("event")
    bins = np.arange(lo, hi, WINDOW_MS) if hi > lo else np.zeros(0, np.int64)
    lines = [
        ("single-path calls (snapshotVideo)", (path == "single") & (event == "request"), "C0"),
        ("bulk calls (bulkSnapshotVideo)", (path == "bulk") & (event == "request"), "C2"),
        ("retries", event == "retry", "C1"),
        ("failed calls", np.char.startswith(event, "failed."), "C3"),
    ]
    dense = [dense_bins(ut[sel], count[sel], lo, hi, WINDOW_MS) for _, sel, _ in lines]
    cx, dense, k = coarsen(bins, dense, "mean")
    for (label, _, colour), y in zip(lines, dense, strict=True):
        if len(y) and (y.any() or label.startswith(("single", "bulk"))):
            step_line(calls, days(cx), y, k * WINDOW_MS / DAY_MS, color=colour, lw=1, label=label)
    over = f" (mean over {k * 5}-minute bins)" if k > 1 else ""
    calls.set_title(
        f"upstream requests per 5 minutes: first calls and retries{over}", fontweight="normal"
    )
    calls.set_ylabel("calls / 5 min")
    q = tables["queue_depth"]
    high = 0
    k = 1
    for name in sorted(set(q.texts("queue").tolist())):
        mine = q.texts("queue") == name
        waiting, active = q.ints("waiting_max")[mine], q.ints("active_max")[mine]
        qx, (w, a), k = coarsen(q.ints("minute_start_ms")[mine], [waiting, active], "max")
        width = k * MINUTE_MS / DAY_MS
        step_line(depth, days(qx), w, width, lw=1, label=f"{name}: waiting")
        step_line(depth, days(qx), a, width, lw=1, label=f"{name}: active")
        high = max(high, int(waiting.max(initial=0)), int(active.max(initial=0)))
    limit_line(depth, ctx.concurrency, high, f"workers ({ctx.concurrency})", "0.3")
    each = f"{k} minutes" if k > 1 else "minute"
    depth.set_title(
        f"queue depth: the most jobs waiting / active in each {each}", fontweight="normal"
    )
    depth.set_ylabel("jobs")
    for ax in (rate, calls, depth):
        count_axis(ax)
        if ax is not depth:
            ax.set_ylim(0, max(ax.get_ylim()[1], 1) * 1.15)
        legend(ax, loc="upper left", ncol=6)
        time_axis(ax, ctx, label=ax is depth)
    return fig


def lateness(tables: dict[str, Table], ctx: PlotContext) -> Figure:
    import matplotlib.pyplot as plt

    lt = tables["lateness_hourly"]
    fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True, layout="constrained")
    fig.suptitle(ctx.title("lateness (executed minus due) per hour, by type"), fontweight="bold")
    kinds = lt.texts("type")
    for ax, ty in zip(axes.flat, TYPES, strict=True):
        mine = kinds == ty
        middle = lt.ints("hour_start_ms")[mine] + HOUR_MS // 2
        x = days(np.clip(middle, ctx.start_ms, ctx.end_ms))
        n = int(lt.ints("count")[mine].sum())
        ax.set_title(f"{ty} ({n:,} snapshot{'' if n == 1 else 's'})", color=COLOURS[ty])
        if not n:
            empty_note(ax, f"no {ty} snapshots")
            ax.set_yticks([])
        for p, style in (("p50", "-"), ("p90", "--"), ("p99", ":")):
            ax.plot(x, lt.floats(f"{p}_s")[mine], style, marker="o", ms=3, lw=1.1, label=p)
        values = np.r_[lt.floats("p99_s")[mine], lt.floats("p50_s")[mine]]
        if len(values) and np.nanmax(np.abs(values)) > 120:
            ax.set_yscale("symlog", linthresh=1)
        if n:
            ax.yaxis.set_major_formatter(lambda v, _pos: seconds_label(v))
            ax.axhline(0, color="0.5", lw=0.6)
            ax.margins(y=0.15)
            legend(ax, loc="best", ncol=3)
        time_axis(ax, ctx, label=ax in axes[-1])
    for ax in axes[:, 0]:
        ax.set_ylabel("lateness (negative: early)")
    return fig


def cleanup(tables: dict[str, Table], ctx: PlotContext) -> Figure:
    import matplotlib.pyplot as plt

    c = tables["cleanup_hourly"]
    fig, ax = plt.subplots(figsize=(12, 3.6), layout="constrained")
    fig.suptitle(ctx.title("rows deleted by scheduleCleanup per hour"), fontweight="bold")
    x = days(c.ints("hour_start_ms"))
    base = np.zeros(len(x))
    total = 0
    for ty in TYPES:
        y = c.ints(ty)
        total += int(y.sum())
        if y.any():
            label = f"{ty} ({int(y.sum()):,})"
            ax.bar(
                x,
                y,
                width=HOUR_MS / DAY_MS,
                bottom=base,
                align="edge",
                color=COLOURS[ty],
                label=label,
            )
        base = base + y
    if total:
        legend(ax, loc="upper left", ncol=4)
    else:
        empty_note(ax, "no rows were deleted (nothing went overdue)")
    ax.set_ylabel("rows deleted / hour")
    ax.set_ylim(bottom=0, top=max(float(base.max(initial=0)) * 1.15, 1))
    count_axis(ax)
    time_axis(ax, ctx)
    return fig


RUN_FIGURES: list[tuple[str, str, FigureFn]] = [
    (
        "occupancy.png",
        "Reserved and executed rows per 5-minute window, stacked by type, against the cap.",
        occupancy,
    ),
    (
        "occupancy_heatmap.png",
        "The same windows as a calendar: one row per local day, one column per 5 minutes.",
        occupancy_heatmap,
    ),
    ("load.png", "Snapshots per minute, upstream calls per 5 minutes, queue depth.", load),
    (
        "proxies.png",
        "Upstream requests per proxy per 5 minutes, by outcome, against the rate limits.",
        proxies_figure,
    ),
    ("lateness.png", "Hourly p50/p90/p99 of executed minus due, per schedule type.", lateness),
    ("cleanup.png", "Rows deleted by the timeout cleanup, per hour and type.", cleanup),
    (periodic_series.FILE, periodic_series.CAPTION, periodic_series.periodic),
    (write_series.FILE, write_series.CAPTION, write_series.write_path),
    (
        "milestones.png",
        "Distributions (ECDF) of capture latency and bracket width over every milestone crossing.",
        milestones,
    ),
]


def draw_run(out_dir: Path, tables: dict[str, Table], ctx: PlotContext) -> list[Path]:
    """Draw every figure of a run report into ``out_dir``; returns the PNG paths in order."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    with plt.rc_context(STYLE):
        for name, _caption, draw in RUN_FIGURES:
            fig = draw(tables, ctx)
            if fig is not None:  # a figure of a mechanism the run did not use
                paths.append(save(fig, out_dir / name))
    return paths


SUMMARY_FIGURES: list[tuple[str, str, SummaryFigureFn]] = [
    (capacity_plot.FILE, capacity_plot.CAPTION, capacity_plot.capacity),
    (why_late.FILE, why_late.CAPTION, why_late.why_late),
]
"""Figures drawn from ``summary.json`` (the findings' numbers), not from the series tables."""


def draw_summary(out_dir: Path, summary: dict[str, Any], ctx: PlotContext) -> list[Path]:
    """Draw every figure of :data:`SUMMARY_FIGURES` into ``out_dir``; returns the PNG paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context(STYLE):
        return [
            save(draw(summary, ctx), out_dir / name) for name, _caption, draw in SUMMARY_FIGURES
        ]
