"""The load-harness report of ``sim load``: ``load.html``, ``harness_ramp.png``,
``harness_queries.png``, beside ``load.json``.

Each step of a load run also writes a full run report (``report.html`` with its plots) into
its own directory (the top directory without ``--ramp``); this page sits above them and answers
the harness's questions: how far the backends kept up at each speed (tick overruns, lag behind
the schedule), which queries cost what (wall p50/p99/max per port method), and the highest
speed sustained. Everything here comes from the steps' ``load.*`` metrics, which are reducers
over the event log's ``PortCall`` and ``JobTimed`` records (:mod:`sim.metrics.wall_timing`).
Unlike a virtual run's report, it is a measurement of this machine and these servers: it differs
run to run.
"""

from __future__ import annotations

import base64
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.report.plots import STYLE, save
from sim.report.tables import write_atomic
from sim.units import SECOND_MS, format_duration_ms

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LOAD_HTML = "load.html"
RAMP_PNG = "harness_ramp.png"
QUERIES_PNG = "harness_queries.png"
SUSTAINED, BEHIND, UNDECIDED = "#1a7f37", "#c00000", "#999999"


def worst_overrun(metrics: dict[str, Any]) -> float | None:
    """The largest ``load.jobs.*.overrun_fraction`` of a step, or None when no periodic job
    was timed (then the step proves nothing)."""
    fractions = [v for k, v in metrics.items() if k.endswith(".overrun_fraction")]
    return max(fractions) if fractions else None


OVERRUN_LIMIT = 0.01
"""A speed is sustained while at most 1 % of periodic iterations overrun their period ..."""
LAG_LIMIT_S = 1.0
"""... and the p99 lag of periodic iterations stays within one snapshotTick period (1 s)."""


def step_verdict(metrics: dict[str, Any], partial: bool) -> tuple[bool, str]:
    """Whether a step sustained its speed, and the verdict in words, which name the numbers of
    the steps table that decided it (an interrupted step, or one that timed no periodic job,
    proves nothing either way and is not sustained)."""
    if partial:
        return False, "interrupted"
    worst = worst_overrun(metrics)
    if worst is None:
        return False, "not measured: no periodic job ran"
    lag = metrics.get("load.lag.p99_s", 0.0)
    behind = [
        *(
            [f"overruns {100 * worst:.2f} % > {100 * OVERRUN_LIMIT:g} %"]
            if worst > OVERRUN_LIMIT
            else []
        ),
        *([f"lag p99 {lag:.3f} s > {LAG_LIMIT_S:g} s"] if lag > LAG_LIMIT_S else []),
    ]
    return not behind, ("falls behind: " + ", ".join(behind) if behind else "sustained")


def step_row(step: dict[str, Any], link: str | None) -> dict[str, Any]:
    """One line of the steps table (the same columns as the terminal's)."""
    m = step["metrics"]
    p99 = {k: v for k, v in m.items() if k.startswith("load.ops.") and k.endswith(".p99_ms")}
    slow = max(p99.items(), key=lambda kv: kv[1], default=("-", 0.0))
    return {
        "speed": step["speed"],
        "simulated": format_duration_ms(round(step["simulated_s"] * SECOND_MS)),
        "wall_s": step["wall_seconds"],
        "overrun_pct": 100 * (worst_overrun(m) or 0.0),
        "lag_p99_s": m.get("load.lag.p99_s", 0.0),
        "slowest": slow[0].removeprefix("load.ops.").removesuffix(".p99_ms"),
        "slowest_p99_ms": slow[1],
        "sustained": step["sustained"],
        "verdict": step_verdict(m, step.get("partial", False))[1],
        "link": link,
    }


def query_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Per port method (``store.due_schedules``, ``counter.reserve``, ...): calls and wall
    latency, slowest p99 first."""
    methods = sorted(
        k.removeprefix("load.ops.").removesuffix(".count")
        for k in metrics
        if k.startswith("load.ops.") and k.endswith(".count")
    )
    rows = [
        {
            "method": name,
            "count": metrics[f"load.ops.{name}.count"],
            **{q: metrics.get(f"load.ops.{name}.{q}_ms", 0.0) for q in ("p50", "p99", "max")},
        }
        for name in methods
    ]
    return sorted(rows, key=lambda r: (-r["p99"], r["method"]))


def job_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Per periodic job: iterations, overruns (wall time over the period at this speed), lag."""
    names = sorted(
        k.removeprefix("load.jobs.").removesuffix(".overruns")
        for k in metrics
        if k.startswith("load.jobs.") and k.endswith(".overruns")
    )
    return [
        {
            "job": name,
            "count": metrics[f"load.jobs.{name}.count"],
            "overruns": metrics[f"load.jobs.{name}.overruns"],
            "overrun_pct": 100 * metrics[f"load.jobs.{name}.overrun_fraction"],
            **{q: metrics.get(f"load.jobs.{name}.lag.{q}_s", 0.0) for q in ("p50", "p99", "max")},
        }
        for name in names
    ]


def ramp_figure(
    rows: list[dict[str, Any]], title: str, limits: tuple[float, float] | None = None
) -> Figure:
    """Worst tick overrun and lag p99 against speed, each step coloured by its verdict (grey: an
    interrupted step, or one that timed no periodic job, decides nothing); the verdict's
    ``limits`` (overrun %, lag s) as dashed lines."""
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5.2), sharex=True)
    speeds = [r["speed"] for r in rows]
    colours = [
        SUSTAINED if r["sustained"] else BEHIND if r["verdict"].startswith("falls") else UNDECIDED
        for r in rows
    ]
    for i, (ax, key, label) in enumerate(
        (
            (top, "overrun_pct", "worst tick overrun (% of runs)"),
            (bottom, "lag_p99_s", "lag behind schedule, p99 (s)"),
        )
    ):
        values = [r[key] for r in rows]
        ax.plot(speeds, values, color="#888888", lw=1, zorder=1)
        ax.scatter(speeds, values, c=colours, s=36, zorder=2)
        ax.set_ylabel(label)
        top_y = max(values, default=0.0)
        if limits is not None:
            ax.axhline(limits[i], color=BEHIND, ls="--", lw=1, alpha=0.6, label="limit")
            top_y = max(top_y, limits[i])
        ax.set_ylim(bottom=0, top=max(top_y * 1.25, 1e-3))
    bottom.set_xscale("log", base=2)
    bottom.set_xticks(speeds, [f"x{s:g}" for s in speeds])
    bottom.minorticks_off()
    bottom.set_xlabel("speed (times production)")
    top.scatter([], [], c=SUSTAINED, label="sustained")
    top.scatter([], [], c=BEHIND, label="falls behind")
    if UNDECIDED in colours:  # interrupted, or no periodic job timed: neither verdict
        top.scatter([], [], c=UNDECIDED, label="not decided")
    top.legend(loc="upper left", ncols=4, frameon=False)
    top.set_title(title)
    fig.tight_layout()
    return fig


def queries_figure(rows: list[dict[str, Any]], title: str) -> Figure:
    """Wall latency per port method: p50, p99 and max as bars on a log scale."""
    import matplotlib.pyplot as plt

    n = max(len(rows), 1)
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.32 * n))
    if not rows:
        ax.text(0.5, 0.5, "no port calls were timed", ha="center", va="center")
        ax.set_axis_off()
        return fig
    y = list(range(len(rows)))[::-1]
    for offset, q, colour in (
        (0.27, "max", "#cccccc"),
        (0.0, "p99", "#d62728"),
        (-0.27, "p50", "#1f77b4"),
    ):
        values = [max(r[q], 1e-3) for r in rows]
        ax.barh([v + offset for v in y], values, height=0.26, color=colour, label=q)
    ax.set_yticks(y, [f"{r['method']} ({r['count']:,})" for r in rows])
    ax.set_xscale("log")
    ax.set_xlabel("wall time per call (ms, log scale); calls in brackets")
    ax.legend(loc="lower right", ncols=3, frameon=False)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def write_load_report(
    out_dir: Path,
    steps: list[dict[str, Any]],
    best: float | None,
    *,
    scenario_name: str,
    backends: dict[str, str],
    ramp: bool,
) -> list[Path]:
    """Write ``load.html`` and its two figures into ``out_dir``; returns their paths. ``steps``
    are ``sim load``'s (speed, sustained, partial, metrics, wall_seconds, simulated_s); with
    ``ramp`` each step's own report is in ``x<speed>/``. A step cut short by a signal marks the
    page partial."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [step_row(s, f"x{s['speed']:g}/report.html" if ramp else "report.html") for s in steps]
    last = steps[-1]
    queries, jobs = query_rows(last["metrics"]), job_rows(last["metrics"])
    at = f"x{last['speed']:g}"
    with plt.rc_context(STYLE):
        ramp_png = save(
            ramp_figure(
                rows,
                f"{scenario_name}: keeping up, step by step",
                (100 * OVERRUN_LIMIT, LAG_LIMIT_S),
            ),
            out_dir / RAMP_PNG,
        )
        queries_png = save(
            queries_figure(queries, f"{scenario_name} at {at}: wall time per query kind"),
            out_dir / QUERIES_PNG,
        )
    html = _render(
        name=scenario_name,
        backends=backends,
        best=f"x{best:g}" if best else "none",
        overrun_limit_pct=100 * OVERRUN_LIMIT,
        lag_limit_s=LAG_LIMIT_S,
        partial=any(st.get("partial") for st in steps),
        rows=rows,
        at=at,
        queries=queries,
        jobs=jobs,
        figures=[
            (RAMP_PNG, "worst tick overrun and lag p99 at each speed", _b64(ramp_png)),
            (QUERIES_PNG, f"wall time per port method at {at}", _b64(queries_png)),
        ],
    )
    page = out_dir / LOAD_HTML
    write_atomic(page, html.encode("utf-8"))
    return [page, ramp_png, queries_png]


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode("ascii")


def _render(**context: Any) -> str:
    import jinja2

    text = resources.files("sim.report").joinpath("templates/load.html").read_text("utf-8")
    env = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True
    )
    return str(env.from_string(text).render(**context))
