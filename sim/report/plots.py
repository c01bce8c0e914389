"""The PNG plots of a run, drawn from its CSV tables (matplotlib, Agg, imported lazily).

Every figure is a pure function of the tables and the :class:`PlotContext`; PNGs carry fixed
metadata and no timestamps, so they are byte-identical for the same run (libraries.md §0.5).
Times are drawn in the scenario's time zone. The figures themselves, their list and
:func:`~sim.report.figures.draw_run` are in :mod:`sim.report.figures`; this module holds what the
figures share: the style, the context, axes helpers, binning and saving.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from sim.report.tables import Table, write_atomic
from sim.scenario import Scenario
from sim.units import DAY_MS, HOUR_MS, SECOND_MS, Ms

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

COLOURS = {
    "new": "#2ca02c",
    "milestone": "#d62728",
    "normal": "#1f77b4",
    "archive": "#9467bd",
    "discovery": "#ff7f0e",
}
STYLE: dict[Any, Any] = {
    "figure.dpi": 100,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "legend.fontsize": 8,
    "svg.hashsalt": "sim",
}
PNG_METADATA = {"Software": "sim (matplotlib Agg)"}
F8 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PlotContext:
    """What the figures need besides the tables: names, the time zone, the cap, the span."""

    name: str
    tz_ms: Ms
    cap: int
    concurrency: int
    start_ms: Ms
    end_ms: Ms
    partial: bool

    @classmethod
    def of(cls, scenario: Scenario, manifest: dict[str, Any]) -> PlotContext:
        simulated = manifest.get("simulated_seconds", scenario.duration / SECOND_MS)
        return cls(
            name=scenario.name,
            tz_ms=scenario.timezone,
            cap=scenario.params.window_cap,
            concurrency=scenario.scheduler.snapshot_concurrency,
            start_ms=scenario.start_ms,
            end_ms=scenario.start_ms + round(float(simulated) * SECOND_MS),
            partial=bool(manifest.get("partial")),
        )

    @property
    def tz(self) -> timezone:
        return timezone(timedelta(milliseconds=self.tz_ms))

    @property
    def tz_label(self) -> str:
        return f"UTC{self.tz_ms / HOUR_MS:+g}" if self.tz_ms else "UTC"

    def title(self, what: str) -> str:
        flag = "  [PARTIAL RUN: interrupted]" if self.partial else ""
        return f"{self.name}: {what}{flag}"


def days(t_ms: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Epoch ms -> matplotlib date numbers (days since 1970-01-01 UTC)."""
    out: npt.NDArray[np.float64] = np.asarray(t_ms, dtype=np.float64) / DAY_MS
    return out


def time_axis(ax: Axes, ctx: PlotContext, *, label: bool = True) -> None:
    """Dates in the scenario's time zone over the run's span."""
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(tz=ctx.tz, minticks=4, maxticks=9)  # type: ignore[no-untyped-call]
    formatter = mdates.ConciseDateFormatter(locator, tz=ctx.tz)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(formatter)
    ax.set_xlim(ctx.start_ms / DAY_MS, ctx.end_ms / DAY_MS)
    if label:
        ax.set_xlabel(f"local time ({ctx.tz_label})")


def count_axis(ax: Axes) -> None:
    """Whole-number ticks with thousands separators."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(nbins=6, integer=True))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))


def seconds_label(s: float) -> str:
    """``90 -> '1.5 min'``: a duration in the largest unit that keeps it readable."""
    a = abs(s)
    if a >= 2 * 3600:
        return f"{s / 3600:.3g} h"
    if a >= 120:
        return f"{s / 60:.3g} min"
    return f"{s:.3g} s"


def legend(ax: Axes, **kwargs: Any) -> None:
    """A legend, when the axes have labelled artists (an empty run has none)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def empty_note(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="0.4")


def step_line(
    ax: Axes, x: npt.NDArray[np.float64], y: npt.ArrayLike, width: float, **kwargs: Any
) -> None:
    """A per-bin series as steps, each bin drawn from its start ``x`` over ``width`` (days): the
    last bin too, which a plain ``step(where="post")`` leaves out (a one-bin run showed nothing)."""
    values = np.asarray(y, dtype=np.float64)
    if not len(x):
        return
    ax.step(np.r_[x, x[-1] + width], np.r_[values, values[-1]], where="post", **kwargs)


def step_fill(
    ax: Axes,
    x: npt.NDArray[np.float64],
    series: list[tuple[str, str, Any]],
    width: float | None = None,
) -> None:
    """Stack ``(type, label, values)`` as filled steps (one bin per x, drawn from x over
    ``width`` days; by default the spacing of x), coloured by type."""
    if not len(x):
        return
    if width is None:
        width = x[1] - x[0] if len(x) > 1 else 1.0
    edges = np.r_[x, x[-1] + width]
    base = np.zeros(len(x))
    for kind, label, values in series:
        top = base + np.asarray(values, dtype=np.float64)
        ax.fill_between(
            edges,
            np.r_[base, base[-1]],
            np.r_[top, top[-1]],
            step="post",
            color=COLOURS.get(kind),
            alpha=0.85,
            lw=0,
            label=label,
        )
        base = top


def limit_line(
    ax: Axes, limit: float, top: float, label: str, colour: str, *, note_row: int = 0
) -> None:
    """A limit (the window cap, the worker count) as a dashed line with room above it, or a note
    when it is so far above the data that drawing it would flatten the data (``note_row`` stacks
    several notes on one axes)."""
    if limit <= 4 * max(top, 1):
        ax.axhline(limit, color=colour, ls="--", lw=1.2, label=label)
        ax.set_ylim(0, max(top, limit, ax.get_ylim()[1] / 1.2) * 1.2)
    else:
        ax.set_ylim(0, max(top, 1) * 1.25)
        ax.text(
            0.995,
            0.97 - 0.09 * note_row,
            f"{label} is above this scale (peak {top:,.0f})",
            transform=ax.transAxes,
            ha="right",
            va="top",
            color=colour,
        )


def dense_bins(t: npt.NDArray[np.int64], values: F8, lo: int, hi: int, size: int) -> F8:
    """Sparse bins -> every bin of ``[lo, hi)`` (step ``size``), zeros where absent."""
    out = np.zeros((hi - lo) // size)
    keep = (t >= lo) & (t < hi)
    np.add.at(out, (t[keep] - lo) // size, values[keep])
    return out


MAX_POINTS = 1000
"""Longer series are drawn in coarser bins (a pixel cannot show more)."""
_FACTORS = (1, 2, 3, 5, 10, 12, 15, 20, 30, 60, 120, 180, 360, 720, 1440)


def coarsen(
    x: npt.NDArray[np.int64], columns: list[npt.NDArray[Any]], how: str
) -> tuple[npt.NDArray[np.int64], list[F8], int]:
    """Merge every ``k`` consecutive bins (``k`` so that at most :data:`MAX_POINTS` remain):
    ``how`` is ``mean`` (a rate stays per original bin) or ``max``; returns x, columns, k."""
    need = -(-len(x) // MAX_POINTS)
    k = next((f for f in _FACTORS if f >= need), need)
    if k == 1:
        return x, [np.asarray(c, dtype=np.float64) for c in columns], 1
    starts = np.arange(0, len(x), k)
    sizes = np.diff(np.r_[starts, len(x)])
    out = []
    for c in columns:
        values = np.asarray(c, dtype=np.float64)
        if how == "max":
            out.append(np.maximum.reduceat(values, starts))
        else:
            out.append(np.add.reduceat(values, starts) / sizes)
    return x[starts], out, k


FigureFn = Callable[[dict[str, Table], PlotContext], "Figure | None"]
"""A run figure, or None when the run has nothing for it (a mechanism it did not use)."""
SummaryFigureFn = Callable[[dict[str, Any], PlotContext], "Figure"]


def save(fig: Figure, path: Path) -> Path:
    """Write ``fig`` as a PNG with fixed metadata (byte-identical for the same figure)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata=PNG_METADATA)
    plt.close(fig)
    write_atomic(path, buf.getvalue())
    return path
