"""``overlay.png`` of ``sim compare``: the series of two runs, one over the other.

The overlay puts run B over run A against the time since each run's start (the runs may start at
different instants): reserved rows per 5-minute window with each run's cap, and hourly lateness
percentiles over every schedule type. It is drawn from the runs' CSV files and ``scenario.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sim.report.plots import STYLE, PlotContext, legend, save
from sim.report.run_files import read_manifest, read_scenario
from sim.report.series import TYPES
from sim.report.tables import Table, read_tables
from sim.units import HOUR_MS, WINDOW_MS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

RUN_COLOURS = ("#1f77b4", "#ff7f0e")


def _context(run_dir: Path) -> PlotContext:
    return PlotContext.of(read_scenario(run_dir), read_manifest(run_dir))


def overlay_figure(runs: list[tuple[str, dict[str, Table], PlotContext]]) -> Figure:
    import matplotlib.pyplot as plt

    fig, (occ, late) = plt.subplots(2, 1, figsize=(12, 7.5), sharex=True, layout="constrained")
    fig.suptitle("comparison: " + "  vs  ".join(label for label, _, _ in runs), fontweight="bold")
    top = longest = 0.0
    for (label, tables, ctx), colour in zip(runs, RUN_COLOURS, strict=False):
        w = tables["windows"]
        t = w.ints("window_start_ms")
        inside = (t + WINDOW_MS > ctx.start_ms) & (t < ctx.end_ms)
        x = (t[inside] - ctx.start_ms) / HOUR_MS
        reserved = np.sum([w.ints(f"reserved_{ty}")[inside] for ty in TYPES], axis=0)
        occ.step(x, reserved, where="post", color=colour, lw=1, alpha=0.85, label=label)
        occ.axhline(ctx.cap, color=colour, ls="--", lw=1, label=f"{label}: cap {ctx.cap:,}")
        top = max(top, float(reserved.max(initial=0)), float(ctx.cap))
        lt = tables["lateness_hourly"]
        every = lt.texts("type") == "all"
        middle = np.clip(lt.ints("hour_start_ms")[every] + HOUR_MS // 2, ctx.start_ms, ctx.end_ms)
        hx = (middle - ctx.start_ms) / HOUR_MS
        longest = max(longest, (ctx.end_ms - ctx.start_ms) / HOUR_MS)
        for q, style, marker in (("p99", "-", "o"), ("p50", "--", ".")):
            late.plot(
                hx,
                lt.floats(f"{q}_s")[every],
                style,
                marker=marker,
                ms=3,
                color=colour,
                label=f"{label}: {q}",
            )
    occ.set_ylim(0, top * 1.15 if top else 1)
    occ.set_title(
        "reserved rows per 5-min window (all types), with each run's cap", fontweight="normal"
    )
    occ.set_ylabel("rows per window")
    late.set_title(
        "lateness (executed minus due) per hour, every schedule type together", fontweight="normal"
    )
    late.set_ylabel("lateness (s)")
    late.set_xlabel("hours since the start of each run")
    for ax in (occ, late):
        legend(ax, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.set_xlim(0, longest or 1)
    return fig


def draw_overlay(a_dir: Path, b_dir: Path, path: Path) -> Path:
    """Draw ``path`` (``overlay.png``) from runs A and B; ``FileNotFoundError`` names the file
    that one of them lacks (a run made without its CSV series, say)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [
        (f"{tag} {d.name}", read_tables(d, ["windows", "lateness_hourly"]), _context(d))
        for tag, d in (("A", a_dir), ("B", b_dir))
    ]
    with plt.rc_context(STYLE):
        return save(overlay_figure(runs), path)
