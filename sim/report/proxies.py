"""Requests per proxy per 5 minutes against the rate limits (the load shape at the network).

``proxies`` (long format): per 5-min bin and proxy, the ``count`` of requests by ``outcome``
(``UpstreamRequest``: ok, fetch_error, timeout, http_5xx, http_429, throttled), and of the
requests no proxy would take (``proxy`` = ``none``, outcome ``no_proxy``). The figure draws each
proxy's requests against its provider limit (2000 per 300 s, reference §14.2) and the bulk task
limit on alicloud_hangzhou (200 per 300 s).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.report.plots import (
    PlotContext,
    coarsen,
    count_axis,
    days,
    dense_bins,
    empty_note,
    legend,
    limit_line,
    time_axis,
)
from sim.report.series import Span
from sim.report.tables import Column, Table, local_times
from sim.units import WINDOW_MS, Ms

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PROVIDER_LIMIT_PER_WINDOW = 2000
"""The provider limiter's 300 s tier (reference §14.2): one copy per proxy."""
BULK_TASK_LIMIT_PER_WINDOW = 200
"""The bulkSnapshot task limiter's 300 s tier, on alicloud_hangzhou (reference §14.2)."""

OUTCOME_COLOURS = {
    "ok": "C0",
    "fetch_error": "C1",
    "timeout": "C4",
    "http_5xx": "C3",
    "http_429": "C6",
    "throttled": "C5",
    "http_4xx": "C8",  # issue 28
    "no_proxy": "0.45",
}
"""One colour per outcome across panels and runs (``no_proxy`` grey: nothing was sent)."""


class ProxyRequests:
    """``proxies``: requests per 5 minutes by proxy and outcome (module docstring)."""

    def __init__(self, tz_ms: Ms) -> None:
        self.tz_ms = tz_ms
        self.counts: dict[tuple[int, str, str], int] = {}

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        req = chunk.table(K.UpstreamRequest)
        if not req.size:
            return
        bins = req[:, 1] // WINDOW_MS
        for b, proxy, outcome in zip(
            bins.tolist(), req[:, 2].tolist(), req[:, 6].tolist(), strict=True
        ):
            key = (b, "none" if proxy < 0 else names[proxy], K.PROXY_OUTCOME.word(outcome))
            self.counts[key] = self.counts.get(key, 0) + 1

    def tables(self, span: Span) -> dict[str, Table]:
        keys = sorted(self.counts)
        start = np.array([k[0] for k in keys], dtype=np.int64) * WINDOW_MS
        cols: dict[str, Column] = {
            "bin_start_ms": start,
            "bin_start": local_times(start, self.tz_ms),
            "proxy": np.array([k[1] for k in keys], dtype=np.str_),
            "outcome": np.array([k[2] for k in keys], dtype=np.str_),
            "count": np.array([self.counts[k] for k in keys], dtype=np.int64),
        }
        return {"proxies": Table(cols)}


def proxies_figure(tables: dict[str, Table], ctx: PlotContext) -> Figure:
    """One panel per proxy (and one for requests no proxy would take): requests per 5 minutes
    stacked by outcome, with the provider limit (and the bulk task limit on alicloud)."""
    import matplotlib.pyplot as plt

    t = tables["proxies"]
    proxies = ["alicloud_hangzhou", "cf-worker", "native", "none"]
    fig, axes = plt.subplots(len(proxies), 1, figsize=(12, 9), sharex=True, layout="constrained")
    fig.suptitle(
        ctx.title("upstream requests per proxy per 5 minutes, by outcome"), fontweight="bold"
    )
    lo = ctx.start_ms - ctx.start_ms % WINDOW_MS
    hi = ctx.end_ms + (-ctx.end_ms) % WINDOW_MS
    bins = np.arange(lo, hi, WINDOW_MS) if hi > lo else np.zeros(0, np.int64)
    outcomes = [w for w in K.PROXY_OUTCOME.words if w != "no_proxy"] + ["no_proxy"]
    for ax, proxy in zip(axes, proxies, strict=True):
        mine = t.texts("proxy") == proxy
        ts, counts, outs = (
            t.ints("bin_start_ms")[mine],
            t.floats("count")[mine],
            t.texts("outcome")[mine],
        )
        present = [o for o in outcomes if (outs == o).any()]
        dense = [dense_bins(ts[outs == o], counts[outs == o], lo, hi, WINDOW_MS) for o in present]
        cx, dense, k = coarsen(bins, dense, "mean")
        if present and len(cx):
            colours = [OUTCOME_COLOURS[o] for o in present]
            ax.stackplot(days(cx), *dense, labels=present, colors=colours, step="post", alpha=0.85)
        top = float(np.sum(dense, axis=0).max(initial=0)) if dense else 0.0
        if proxy != "none":
            limit_line(ax, PROVIDER_LIMIT_PER_WINDOW, top, "provider limit (2000 / 5 min)", "0.2")
        if proxy == "alicloud_hangzhou":
            limit_line(
                ax,
                BULK_TASK_LIMIT_PER_WINDOW,
                top,
                "bulk task limit (200 / 5 min)",
                "C3",
                note_row=1,
            )
        # Headroom so the one-row legend sits above the bars and the limit line.
        ax.set_ylim(0, ax.get_ylim()[1] * 1.15)
        title = "every proxy rate-limited (NO_PROXY)" if proxy == "none" else proxy
        over = f" (mean over {k * 5}-minute bins)" if k > 1 else ""
        ax.set_title(f"{title}{over}", fontweight="normal")
        if not present:
            empty_note(ax, "no requests")
        ax.set_ylabel("requests / 5 min")
        count_axis(ax)
        legend(ax, loc="upper left", ncol=max(len(present) + 1, 1))
        time_axis(ax, ctx, label=ax is axes[-1])
    return fig
