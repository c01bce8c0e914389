"""Files of ``sim compare``: the metric table (CSV, JSON) and the overlay plot of two runs.

The overlay puts run B over run A against the time since each run's start (the runs may start at
different instants): reserved rows per 5-minute window with each run's cap, and hourly lateness
percentiles over every schedule type. It is drawn from the runs' CSV files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sim.report.series import TYPES
from sim.report.store import Table, read_tables, to_csv, write_atomic
from sim.units import HOUR_MS, WINDOW_MS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from sim.report.compare import Comparison
    from sim.report.plots import PlotContext

RUN_COLOURS = ("#1f77b4", "#ff7f0e")


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def comparison_table(result: Comparison) -> Table:
    def text(v: Any) -> str:
        return "" if v is None else v if isinstance(v, str) else json.dumps(v, sort_keys=True)

    rows = result.rows
    return Table(
        {
            "metric": np.array([r.metric for r in rows], dtype=np.str_),
            "a": np.array([text(r.a) for r in rows], dtype=np.str_),
            "b": np.array([text(r.b) for r in rows], dtype=np.str_),
            "delta": np.array([np.nan if r.delta is None else r.delta for r in rows], np.float64),
            "delta_pct": np.array([np.nan if r.pct is None else r.pct for r in rows], np.float64),
            "change": np.array([r.change for r in rows], dtype=np.str_),
        }
    )


def comparison_json(result: Comparison) -> dict[str, Any]:
    doc = result.to_json()
    doc.pop("files")
    for verdict in doc["tolerances"]:
        verdict["moved"] = _json_safe(verdict["moved"])
    return doc


def _context(run_dir: Path) -> PlotContext:
    from sim.report.build import load_run_scenario, read_json
    from sim.report.plots import PlotContext
    from sim.runner import MANIFEST_FILE

    return PlotContext.of(load_run_scenario(run_dir), read_json(run_dir / MANIFEST_FILE))


def overlay_figure(runs: list[tuple[str, dict[str, Table], PlotContext]]) -> Figure:
    import matplotlib.pyplot as plt

    from sim.report.plots import legend

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


def write_comparison(result: Comparison, a_dir: Path, b_dir: Path, out_dir: Path) -> list[Path]:
    """Write ``comparison.csv``, ``comparison.json`` and ``overlay.png`` into ``out_dir``; the
    overlay needs both runs' CSV series and scenario.json (it is skipped, with a note in
    ``result.notes``, when one lacks them)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sim.report.plots import STYLE, save

    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out_dir / "comparison.csv", out_dir / "comparison.json"
    write_atomic(csv_path, to_csv(comparison_table(result)).encode())
    doc = json.dumps(comparison_json(result), indent=2, sort_keys=True) + "\n"
    write_atomic(json_path, doc.encode())
    try:
        runs = [
            (f"{tag} {d.name}", read_tables(d, ["windows", "lateness_hourly"]), _context(d))
            for tag, d in (("A", a_dir), ("B", b_dir))
        ]
    except FileNotFoundError as exc:
        result.notes.append(f"no overlay plot: {exc}")
        return [csv_path, json_path]
    with plt.rc_context(STYLE):
        png = save(overlay_figure(runs), out_dir / "overlay.png")
    return [csv_path, json_path, png]
