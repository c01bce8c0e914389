"""``why_late.png``: the late tail of each schedule type, split into the parts of its lateness.

Drawn from the run's summary (finding ``lateness``, :mod:`sim.metrics.findings.lateness`), not
from the series: for each type, one horizontal bar stacks the mean of each part over the
snapshots at or above the type's p99 -- rebook, tick, queue, backoff, upstream -- so the eye
reads which part makes the tail. Parts below zero (a tick that takes rows early) stack to the
left of zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sim.report.plots import PlotContext, empty_note, seconds_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FILE = "why_late.png"
CAPTION = (
    "Why late: the mean of each part of executed minus due over each type's latest 1 % "
    "(finding lateness)."
)
PARTS = (
    ("rebook", "#8c564b", "booked again after cleanup"),
    ("tick", "#1f77b4", "waiting for a tick"),
    ("queue", "#ff7f0e", "waiting for a worker"),
    ("backoff", "#9467bd", "retry backoff"),
    ("upstream", "#2ca02c", "upstream latency"),
)
_PREFIX = "findings.lateness."


def why_late(summary: dict[str, Any], ctx: PlotContext) -> Figure:
    import matplotlib.pyplot as plt

    types = sorted(
        {k[len(_PREFIX) :].split(".")[0] for k in summary if k.endswith(".tail.upstream_s")}
    )
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.7 * max(len(types), 1)), layout="constrained")
    fig.suptitle(ctx.title("why late: the latest 1 % of snapshots, by part"), fontweight="bold")
    if not types:
        empty_note(ax, "no scheduled snapshot was taken")
        ax.set_yticks([])
        return fig
    for y, ty in enumerate(types):
        right = left = 0.0
        for part, colour, label in PARTS:
            v = float(summary.get(f"{_PREFIX}{ty}.tail.{part}_s", 0.0))
            start = right if v >= 0 else left + v
            ax.barh(y, abs(v), left=start, color=colour, label=label if y == 0 else None)
            right, left = (right + v, left) if v >= 0 else (right, left + v)
        p99 = float(summary.get(f"{_PREFIX}{ty}.p99_s", 0.0))
        ax.plot([p99], [y], marker="|", ms=18, color="black", label="p99" if y == 0 else None)
    ax.set_yticks(range(len(types)), [f"{t} (p99 tail)" for t in types])
    ax.axvline(0, color="0.5", lw=0.6)
    ax.set_xlabel("seconds (left of zero: taken before due)")
    ax.xaxis.set_major_formatter(lambda v, _pos: seconds_label(v))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=6)
    return fig
