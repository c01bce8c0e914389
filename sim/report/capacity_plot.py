"""``capacity.png``: capped demand per day against the windows' capacity, and the backlog horizon.

Drawn from the run's summary (finding ``capacity``'s ``by_day`` series,
:mod:`sim.metrics.findings.capacity`), not from the series files. The upper panel stacks, per
local day, the normal and archive rows requested for that day (the capped demand; days after the
run's end are what was booked so far, drawn pale) with the uncapped milestone/new rows on top
in grey, under the line of the day's capacity (cap x windows per day). The lower panel shows the
measured backlog horizon of each day (how long a row requested for the coming day waited for a
window) next to what the fluid model predicts: the gap between the two is the windows held by
rows booked ahead (docs/report.md "Finding capacity").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sim.report.plots import COLOURS, PlotContext, count_axis, empty_note

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FILE = "capacity.png"
CAPTION = (
    "Capacity against demand: capped rows requested per day (stacked by type; pale: booked "
    "ahead of the run's end) against the windows' capacity, and the backlog horizon a row "
    "requested for the coming day met, measured and by the fluid model (finding capacity)."
)
_PREFIX = "findings.capacity."


def capacity(summary: dict[str, Any], ctx: PlotContext) -> Figure:
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Patch

    rows: list[dict[str, Any]] = summary.get(_PREFIX + "by_day") or []
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(12, 6.5), sharex=True, height_ratios=(3, 2), layout="constrained"
    )
    fig.suptitle(ctx.title("capacity against demand, per local day"), fontweight="bold")
    if not rows:
        empty_note(top, "no capped row was requested (or the run predates this finding)")
        return fig
    x = list(range(len(rows)))
    base = [0] * len(rows)
    for ty in ("normal", "archive"):
        values = [r[ty] for r in rows]
        pale = [to_rgba(COLOURS[ty], 0.35 if r["booked_only"] else 1.0) for r in rows]
        top.bar(x, values, bottom=base, color=pale, width=0.8)
        base = [b + v for b, v in zip(base, values, strict=True)]
    top.bar(x, [r["uncapped"] for r in rows], bottom=base, color="0.75", width=0.8)
    per_day = summary.get(_PREFIX + "capacity_per_day", 0)
    line = top.axhline(per_day, color="black", lw=1.2, ls="--", label=f"capacity {per_day:,}/day")
    top.set_ylabel("rows requested for the day")
    count_axis(top)
    # The bars' colours vary per day (pale: booked ahead), so the legend gets patches.
    handles = [
        line,
        *(Patch(color=COLOURS[ty], label=f"{ty} (capped)") for ty in ("normal", "archive")),
        Patch(color="0.75", label="milestone/new (uncapped)"),
        Patch(color=COLOURS["archive"], alpha=0.35, label="booked ahead of the run's end"),
    ]
    top.legend(handles=handles, loc="upper left", ncol=5, fontsize="small")

    in_run = [xi for xi, r in zip(x, rows, strict=True) if not r["booked_only"]]
    bottom.plot(
        in_run, [rows[i]["horizon_h"] / 24 for i in in_run], marker="o", ms=3,
        color="#d62728", label="measured: wait of a row requested for the coming day",
    )  # fmt: skip
    bottom.plot(
        in_run, [rows[i]["fluid_h"] / 24 for i in in_run], ls="--", color="0.3",
        label="fluid model (rows served in target order)",
    )  # fmt: skip
    bottom.set_ylabel("backlog horizon (days)")
    bottom.set_ylim(bottom=0)
    bottom.legend(loc="center right", fontsize="small")
    step = max(1, len(rows) // 15)
    bottom.set_xticks(x[::step], [r["day"][5:] for r in rows][::step])
    bottom.set_xlabel(f"local day ({ctx.tz_label}; demand by target day, horizon by creation day)")
    return fig
