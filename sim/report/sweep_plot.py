"""``sweep.png``: each chosen metric against the first swept parameter (capacity-planning
curves), one line per combination of the other parameters, drawn from a sweep's table
(:class:`sim.report.sweep.SweepResult`). In a seed swarm each line is the median with its
5-95 % band shaded; a swarm without parameters (``sim run --seeds``) shows each seed's value,
the median and the band."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import tomli

from sim.report.plots import STYLE, legend, save
from sim.report.sweep import BAND, SweepResult

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


def sweep_figure(result: SweepResult, name: str = "") -> Figure:
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
    if result.seeds is not None:
        band = f"median and {BAND[0]:g}-{BAND[1]:g} % band over {len(result.seeds)} seeds"
        title = f"{title}; {band}" if result.axes else f"{name}: each seed, {band}"
    fig.suptitle(title, fontweight="bold")
    if first is None and result.seeds is not None:
        _swarm_panels(result, metrics, axes)
        return fig
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
            (line,) = ax.plot(x, y[members], marker="o", ms=4, lw=1.3, label=label or None)
            if result.seeds is not None:
                lo, hi = table.floats(f"{metric}.p5"), table.floats(f"{metric}.p95")
                ax.fill_between(x, lo[members], hi[members], color=line.get_color(), alpha=0.18)
        ax.set_xlabel(first.key)
        if numeric is None or len(positions) <= 12:
            ax.set_xticks(list(positions.values()), list(positions), rotation=20)
        ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:,.6g}")
        if others:
            legend(ax, fontsize=7)
    for ax in axes.flat[len(metrics) :]:
        ax.set_axis_off()
    return fig


def _swarm_panels(result: SweepResult, metrics: list[str], axes: Any) -> None:
    """One scenario under many seeds: each metric's value per seed, its median and band."""
    from matplotlib.ticker import MaxNLocator

    assert result.seeds is not None
    for ax, metric in zip(axes.flat, metrics, strict=False):
        values = result.values(0, metric)
        have = int((~np.isnan(values)).sum())
        shown = f" ({have} of {len(values)} seeds)" if have < len(values) else ""
        ax.set_title(metric + shown, fontsize=9)
        lo, mid, hi = result.band(0, metric)
        ax.axhspan(lo, hi, color="#90caf9", alpha=0.35, label=f"{BAND[0]:g}-{BAND[1]:g} %")
        ax.axhline(mid, color="#1565c0", lw=1.4, label="median")
        ax.scatter(result.seeds, values, s=14, color="#37474f", zorder=3, label="one seed")
        ax.set_xlabel("seed")
        ax.set_xlim(min(result.seeds) - 0.5, max(result.seeds) + 0.5)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if hi == lo and not math.isnan(mid):  # one value for every seed: a readable axis
            pad = max(abs(mid) * 0.1, 1.0)
            ax.set_ylim(mid - pad, mid + pad)
        ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:,.6g}")
        legend(ax, fontsize=7)
    for ax in axes.flat[len(metrics) :]:
        ax.set_axis_off()


def draw_sweep(result: SweepResult, path: Path, name: str = "") -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context(STYLE):
        return save(sweep_figure(result, name), path)
