"""``capacity.png``: each gate's metric against the varied value, probe by probe, with the
gate's threshold and the frontier (the band between the last value that holds and the first
that fails), drawn from ``capacity.json`` (``sim capacity``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.metrics.findings.verdicts import Severity
from sim.report.plots import STYLE, legend, save
from sim.scenario.expect import Condition

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PASS, FAIL, BAND = "#2e7d32", "#c62828", "#ffe0b2"
_WORDS = [s.value for s in Severity]


def _y(value: Any) -> float | None:
    """A gate's value on the y axis: a number, or a severity's rank."""
    if isinstance(value, str) and value in _WORDS:
        return float(_WORDS.index(value))
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def frontier_figure(result: Mapping[str, Any], conditions: Mapping[str, Condition]) -> Figure:
    import matplotlib.pyplot as plt

    metrics = list(conditions) or ["(no gate)"]
    cols = min(len(metrics), 3)
    rows = math.ceil(len(metrics) / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(4.4 * cols + 1, 3.3 * rows + 0.9), squeeze=False, layout="constrained"
    )
    key, holds, fails = result["key"], result["holds"], result["fails"]
    fig.suptitle(
        f"capacity of {result['scenario']}: {key} "
        f"({'largest' if result['find'] == 'max' else 'smallest'} value that holds)",
        fontweight="bold",
    )
    probes = sorted(result["probes"], key=lambda p: p["value"])
    xs = [p["value"] for p in probes]
    for ax, metric in zip(axes.flat, metrics, strict=False):
        ax.set_title(metric, fontsize=9)
        cond = conditions.get(metric)
        points = [
            (p["value"], _y(g["value"]), g["passed"])
            for p in probes
            for g in p["gates"]
            if g["metric"] == metric
        ]
        drawn = [(x, y, ok) for x, y, ok in points if y is not None]
        if drawn:
            ax.plot([x for x, _, _ in drawn], [y for _, y, _ in drawn], color="#607d8b", lw=1)
            for ok, colour, label in ((True, PASS, "gate holds"), (False, FAIL, "gate fails")):
                sel = [(x, y) for x, y, o in drawn if o is ok]
                if sel:
                    ax.scatter(*zip(*sel, strict=True), color=colour, s=28, zorder=3, label=label)
        if cond is not None:
            bounds = [cond.bound] + ([cond.upper] if cond.upper is not None else [])
            for b in bounds:
                ax.axhline(b, color="#424242", ls="--", lw=1, label=f"threshold {cond.text}")
            if cond.severity:
                ax.set_yticks(range(len(_WORDS)), _WORDS)
        if holds is not None and fails is not None:
            ax.axvspan(min(holds, fails), max(holds, fails), color=BAND, zorder=0, label="frontier")
        ax.set_xlabel(key)
        if len(xs) > 1 and max(xs) / max(min(xs), 1e-12) > 20:
            ax.set_xscale("log")
        ax.xaxis.set_major_formatter(lambda v, _pos: f"{v:,.6g}")
        if not (cond is not None and cond.severity):
            ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:,.6g}")
        legend(ax, fontsize=7)
    for ax in axes.flat[len(metrics) :]:
        ax.set_axis_off()
    return fig


def draw_frontier(
    result: Mapping[str, Any], conditions: Mapping[str, Condition], path: Path
) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context(STYLE):
        return save(frontier_figure(result, conditions), path)
