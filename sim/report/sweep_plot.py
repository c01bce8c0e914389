"""``sweep.png``: each chosen metric against the first swept parameter (capacity-planning
curves), one line per combination of the other parameters, drawn from a sweep's table
(:class:`sim.report.sweep.SweepResult`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import tomli

from sim.report.plots import STYLE, legend, save
from sim.report.sweep import SweepResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _numeric(values: tuple[str, ...]) -> list[float] | None:
    """The values as numbers when every one is a TOML number (durations stay text)."""
    out = []
    for v in values:
        try:
            x = tomli.loads(f"v = {v}")["v"]
        except tomli.TOMLDecodeError:
            return None
        if isinstance(x, bool) or not isinstance(x, int | float):
            return None
        out.append(float(x))
    return out


def sweep_figure(result: SweepResult) -> Figure:
    import matplotlib.pyplot as plt

    metrics = result.metrics or ["(no metric)"]
    cols = min(len(metrics), 3)
    rows = math.ceil(len(metrics) / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(4.2 * cols + 1, 3.2 * rows + 0.8), squeeze=False, layout="constrained"
    )
    first = result.axes[0] if result.axes else None
    others = result.axes[1:]
    title = "sweep: " + (" x ".join(f"{a.key} ({len(a.values)})" for a in result.axes) or "one run")
    fig.suptitle(title, fontweight="bold")
    numeric = _numeric(first.values) if first else None
    positions: dict[str, float] = {}
    if first is not None:
        xs = numeric if numeric is not None else list(range(len(first.values)))
        positions = dict(zip(first.values, xs, strict=True))
    table = result.table()
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, p in enumerate(result.points):
        groups.setdefault(tuple(p[a.key] for a in others), []).append(i)
    for ax, metric in zip(axes.flat, metrics, strict=False):
        ax.set_title(metric, fontsize=9)
        if metric not in table.columns or first is None:
            continue
        y = table.floats(metric)
        for key, members in groups.items():
            label = ", ".join(
                f"{a.key.rsplit('.', 1)[-1]}={v}" for a, v in zip(others, key, strict=True)
            )
            x = [positions[result.points[i][first.key]] for i in members]
            ax.plot(x, y[members], marker="o", ms=4, lw=1.3, label=label or None)
        ax.set_xlabel(first.key)
        if numeric is None or len(positions) <= 12:
            ax.set_xticks(list(positions.values()), list(positions), rotation=20)
        ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:,.6g}")
        if others:
            legend(ax, fontsize=7)
    for ax in axes.flat[len(metrics) :]:
        ax.set_axis_off()
    return fig


def draw_sweep(result: SweepResult, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context(STYLE):
        return save(sweep_figure(result), path)
