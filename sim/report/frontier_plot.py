"""``capacity.png``: each gate's metric against the varied value, probe by probe, with the
gate's threshold and the frontier (the band between the last value that holds and the first
that fails), drawn from ``capacity.json`` (``sim capacity``)."""

from __future__ import annotations

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


def _near(xs: list[float], holds: float | None, fails: float | None) -> tuple[float, float] | None:
    """An x range around the frontier when the probes far from it would squash it (the band is
    under 5 % of the whole range): the probes within a factor 1.3 of the frontier, padded."""
    if holds is None or fails is None or len(xs) < 3:
        return None
    lo, hi = min(holds, fails), max(holds, fails)
    span = max(xs) - min(xs)
    if span <= 0 or (hi - lo) / span >= 0.05:
        return None
    near = [x for x in xs if lo / 1.3 <= x <= hi * 1.3] or [lo, hi]
    a, b = min([*near, lo]), max([*near, hi])
    pad = max((b - a) * 0.08, (hi - lo) * 0.5, 1e-9)
    return (a - pad, b + pad)


def _gate_panel(
    ax: Any,
    metric: str,
    cond: Condition | None,
    probes: list[dict[str, Any]],
    result: Mapping[str, Any],
    xlim: tuple[float, float] | None,
) -> None:
    """One gate's value at each probe (green held, red failed), its threshold and the frontier."""
    key, holds, fails = result["key"], result["holds"], result["fails"]
    gates = [(p["value"], g) for p in probes for g in p["gates"] if g["metric"] == metric]
    # A severity whose finding has a score: draw the score against the score where the bound
    # is crossed, which says how near each probe was (the severity only says which side).
    scored = bool(gates) and all(isinstance(g.get("score"), int | float) for _, g in gates)
    at = next((g.get("score_at") for _, g in gates if g.get("score_at") is not None), None)
    title = f"{metric}: its score" if scored else metric
    ax.set_title(title + (" (near the frontier)" if xlim else ""), fontsize=9)
    points = [(x, _y(g["score"] if scored else g["value"]), g["passed"]) for x, g in gates]
    drawn = [(x, y, ok) for x, y, ok in points if y is not None]
    if xlim is not None:
        drawn = [d for d in drawn if xlim[0] <= d[0] <= xlim[1]]
    if drawn:
        ax.plot([x for x, _, _ in drawn], [y for _, y, _ in drawn], color="#607d8b", lw=1)
        for ok, colour, label in ((True, PASS, "gate holds"), (False, FAIL, "gate fails")):
            sel = [(x, y) for x, y, o in drawn if o is ok]
            if sel:
                ax.scatter(*zip(*sel, strict=True), color=colour, s=28, zorder=3, label=label)
    if scored and cond is not None and isinstance(at, int | float):
        ax.axhline(at, color="#424242", ls="--", lw=1, label=f"{cond.text} while below {at:g}")
    elif cond is not None:
        bounds = [cond.bound] + ([cond.upper] if cond.upper is not None else [])
        for b in bounds:
            ax.axhline(b, color="#424242", ls="--", lw=1, label=f"threshold {cond.text}")
        if cond.severity:
            ax.set_yticks(range(len(_WORDS)), _WORDS)
    if holds is not None and fails is not None:
        ax.axvspan(min(holds, fails), max(holds, fails), color=BAND, zorder=0, label="frontier")
    ax.set_xlabel(key)
    xs = [p["value"] for p in probes]
    if xlim is not None:
        ax.set_xlim(*xlim)
    elif len(xs) > 1 and max(xs) / max(min(xs), 1e-12) > 8:
        from matplotlib.ticker import NullFormatter

        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(lambda v, _pos: f"{v:,.6g}")
    if scored or not (cond is not None and cond.severity):
        ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:,.6g}")
    legend(ax, fontsize=7)


def frontier_figure(result: Mapping[str, Any], conditions: Mapping[str, Condition]) -> Figure:
    import textwrap

    import matplotlib.pyplot as plt

    metrics = list(conditions) or ["(no gate)"]
    probes = sorted(result["probes"], key=lambda p: p["value"])
    zoom = _near([p["value"] for p in probes], result["holds"], result["fails"])
    cols = 2 if zoom else 1
    fig, axes = plt.subplots(
        len(metrics),
        cols,
        figsize=(5.6 * cols + 0.6, 3.3 * len(metrics) + 1.0),
        squeeze=False,
        layout="constrained",
    )
    best = "largest" if result["find"] == "max" else "smallest"
    title = f"capacity of {result['scenario']}: the {best} {result['key']} that holds"
    fig.suptitle(textwrap.fill(title, 48 * cols), fontweight="bold")
    for row, metric in enumerate(metrics):
        _gate_panel(axes[row][0], metric, conditions.get(metric), probes, result, None)
        if zoom:
            _gate_panel(axes[row][1], metric, conditions.get(metric), probes, result, zoom)
    return fig


def draw_frontier(
    result: Mapping[str, Any], conditions: Mapping[str, Condition], path: Path
) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context(STYLE):
        return save(frontier_figure(result, conditions), path)
