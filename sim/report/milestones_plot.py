"""``milestones.png``: the capture latency and the bracket width of every milestone crossing, as
distributions (ECDFs) for songs and for other videos.

Both axes span durations from milliseconds to hours, so they are logarithmic, and every tick is
a round duration written one way (:func:`duration_ticks`, :func:`~sim.report.plots.seconds_label`:
``0.1 s``, ``2 s``, ``5 min``), never matplotlib's mix of ``10^1``, ``2×10^0`` and plain numbers,
and never so many that they overlap. A distribution of fewer than :data:`FEW` samples shows each
sample as a point, and its legend the median and the range rather than a p90 or a p99, which so
few samples cannot tell.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.report.plots import COLOURS, F8, PlotContext, empty_note, legend, seconds_label
from sim.report.tables import Table

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FEW = 20
"""Below this many samples a distribution is drawn as its points, without percentiles."""
FLOOR_S = 1e-3
"""The log axis's floor: a latency of 0 is drawn at 1 ms."""
TIERS: tuple[tuple[float, ...], ...] = (
    (1e-3, 1e-2, 0.1, 1, 10, 60, 600, 3600, 6 * 3600, 86_400, 7 * 86_400),
    (2e-3, 5e-3, 2e-2, 5e-2, 0.2, 0.5, 2, 5, 30, 120, 300, 1800, 2 * 3600, 12 * 3600, 2 * 86_400),
    (20, 1200),
)
"""Round durations, in seconds, a tick may fall on: the first tier alone, then with the second,
then with the third, the finest that keeps at most :data:`MAX_TICKS` ticks on the axis."""
MAX_TICKS = 7


def duration_ticks(lo_s: float, hi_s: float, max_ticks: int = MAX_TICKS) -> list[float]:
    """Round durations from :data:`TIERS` between ``lo_s`` and ``hi_s`` (the log axis's limits):
    as many tiers as fit in ``max_ticks``, so the labels never crowd or overlap."""
    chosen: list[float] = []
    for tier in TIERS:
        more = sorted({*chosen, *(float(t) for t in tier if lo_s <= t <= hi_s)})
        if chosen and len(more) > max_ticks:
            break
        chosen = more
    if len(chosen) > max_ticks:  # decades over a very wide span: every other one, or fewer
        chosen = chosen[:: -(-len(chosen) // max_ticks)]
    if not chosen:  # a span narrower than any two round durations: its middle
        chosen = [float(f"{(lo_s * hi_s) ** 0.5:.2g}")]
    return chosen


def _label(label: str, v: F8) -> str:
    if len(v) < FEW:  # too few for a p90 or a p99 to mean anything
        return (
            f"{label} ({len(v)}, each a point): median {seconds_label(float(np.median(v)))}, "
            f"{seconds_label(float(v[0]))} to {seconds_label(float(v[-1]))}"
        )
    p50, p90, p99 = np.percentile(v, [50, 90, 99], method="linear").tolist()
    return (
        f"{label} ({len(v):,}): p50 {seconds_label(p50)}, p90 {seconds_label(p90)}, "
        f"p99 {seconds_label(p99)}"
    )


def ecdf(ax: Axes, groups: list[tuple[str, F8, str]], what: str) -> None:
    """One ECDF per ``(label, samples, colour)`` on a log axis (module docstring)."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    drawn = []
    for label, values, colour in groups:
        v = np.sort(values[~np.isnan(values)])
        if not len(v):
            continue
        shown = np.maximum(v, FLOOR_S)
        frac = np.arange(1, len(v) + 1) / len(v)
        text = _label(label, v)
        if len(v) < FEW:
            ax.step(np.r_[shown[0], shown], np.r_[0, frac], where="post", color=colour, lw=0.8)
            ax.plot(shown, frac, "o", color=colour, ms=5, label=text)
        else:
            ax.step(np.r_[shown[0], shown], np.r_[0, frac], where="post", color=colour, lw=1.6)
            ax.plot([], [], color=colour, lw=1.6, label=text)
        drawn.append(shown)
    if not drawn:
        empty_note(ax, f"no {what}")
        return
    ax.set_xscale("log")
    every = np.concatenate(drawn)
    lo, hi = float(every.min()) / 1.5, float(every.max()) * 1.5
    ax.set_xlim(lo, hi)
    ax.xaxis.set_major_locator(FixedLocator(duration_ticks(lo, hi)))
    ax.xaxis.set_major_formatter(lambda x, _pos: seconds_label(x))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("fraction of the captured crossings")
    legend(ax, loc="upper left")  # an ECDF rises to the right: its upper left is empty


def milestones(tables: dict[str, Table], ctx: PlotContext) -> Figure:
    import matplotlib.pyplot as plt

    m = tables["milestones"]
    latency, bracket = m.floats("latency_s"), m.floats("bracket_s")
    song = m.ints("song") == 1
    got = ~np.isnan(latency)
    parts = [
        f"{who}: {int(np.count_nonzero(got & sel)):,} of {int(np.count_nonzero(sel)):,} captured"
        for who, sel in (("songs", song), ("other videos", ~song))
    ]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.4), layout="constrained")
    fig.suptitle(
        ctx.title(f"milestone crossings against ground truth ({'; '.join(parts)})"),
        fontweight="bold",
    )
    groups = [("songs", song, COLOURS["milestone"]), ("other videos", ~song, "#555555")]
    ecdf(left, [(g, latency[sel], c) for g, sel, c in groups], "captured crossings")
    left.set_title("capture latency: first snapshot >= milestone - crossing", fontweight="normal")
    left.set_xlabel("capture latency (log scale)")
    ecdf(right, [(g, bracket[sel], c) for g, sel, c in groups], "brackets (no snapshot below)")
    right.set_title("bracket width: capturing snapshot - last one below", fontweight="normal")
    right.set_xlabel("bracket width (log scale)")
    return fig
