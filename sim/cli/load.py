"""``sim load``: the scheduler on real backends and the real clock, K times faster than
production -- the servers see the scenario's load shape compressed K-fold (issue 7)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from sim.cli.common import (
    backend_errors,
    backend_options,
    backend_spec,
    load_or_exit,
    out_dir_option,
    scenario_options,
)
from sim.cli.exits import EXIT_INTERRUPTED
from sim.cli.progress import Progress
from sim.report.load_report import LOAD_HTML, step_row, worst_overrun, write_load_report
from sim.runner import RunOptions, run_scenario
from sim.scenario import Scenario
from sim.units import SECOND_MS

OVERRUN_LIMIT = 0.01
"""A speed is sustained while at most 1 % of periodic iterations overrun their period ..."""
LAG_LIMIT_S = 1.0
"""... and the p99 lag of periodic iterations stays within one snapshotTick period (1 s)."""


def _sustained(metrics: dict[str, Any]) -> bool:
    worst = worst_overrun(metrics)
    lag = metrics.get("load.lag.p99_s", 0.0)
    return worst is not None and worst <= OVERRUN_LIMIT and lag <= LAG_LIMIT_S


@click.command()
@scenario_options
@backend_options
@click.option(
    "--speed",
    type=click.FloatRange(min=0, min_open=True),
    metavar="K",
    default=100.0,
    show_default=True,
    help="Run K times faster than production (the starting speed with --ramp).",
)
@click.option(
    "--ramp",
    is_flag=True,
    help="Double K step by step (fresh state each step) until the backends stop "
    "keeping up; report the highest K sustained.",
)
@click.option(
    "--step",
    "step_s",
    type=click.FloatRange(min=1),
    default=20.0,
    show_default=True,
    metavar="SECONDS",
    help="With --ramp: wall seconds per step.",
)
@click.option(
    "--max-speed",
    type=click.FloatRange(min=1),
    default=100_000.0,
    show_default=True,
    metavar="K",
    help="With --ramp: stop doubling here.",
)
@click.option(
    "--warm",
    is_flag=True,
    help="Dispatch every video once during set-up (untimed), so each step measures the steady "
    "state rather than the first dispatch of a cold catalogue (slow to set up on a big one).",
)
@out_dir_option("Report directory [default: reports/<scenario name>-load/].")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress display.")
def load(
    scenario_path: Path,
    seed: int | None,
    overrides: tuple[str, ...],
    store: str | None,
    counter: str | None,
    reservation: str | None,
    reset: bool,
    speed: float,
    ramp: bool,
    step_s: float,
    max_speed: float,
    warm: bool,
    out_dir: Path | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Drive real backends with SCENARIO's load shape, K times faster than production.

    Every query is timed (per query kind: p50, p99, max); every periodic job is checked
    against its period (an overrun: a run that took longer than its period at this speed); the
    lag of each iteration behind its schedule is recorded. Jobs run concurrently, as the 50
    workers of the snapshot queue do; tick elision is off, so idle ticks query like the real
    ones. Example:

    \b
        sim load scenarios/baseline.toml --reset --ramp --speed 10 \\
          --store postgresql://postgres@127.0.0.1:5432/test \\
          --counter redis://127.0.0.1:6379/0
    """
    from sim.scheduler import build_cvsa_model

    scenario = load_or_exit(scenario_path, overrides, seed)
    spec = backend_spec(scenario, store, counter, reservation, reset)
    out = out_dir or Path("reports") / f"{scenario.name}-load"
    steps: list[dict[str, Any]] = []
    k = speed
    while True:
        step = _one(scenario, ramp, step_s, k, warm)
        step_spec = dataclasses.replace(spec, reset=spec.reset or (ramp and bool(steps)))
        with (
            backend_errors(),
            Progress(
                f"{scenario.name} x{k:g}",
                step.start_ms,
                step.end_ms,
                enabled=not quiet and not as_json,
            ) as progress,
        ):
            options = RunOptions(
                out_dir=out / f"x{k:g}" if ramp else out,
                report=True,
                speed=k,
                backends=step_spec,
                concurrent=True,
                observer=progress.observe,
                handle_sigint=True,
            )
            result = run_scenario(step, build_cvsa_model, options)
        ok = _sustained(result.metrics) and not result.partial
        steps.append(
            {
                "speed": k,
                "sustained": ok,
                "metrics": result.metrics,
                "wall_seconds": result.manifest["wall_seconds"],
                "backends": result.manifest["backends"],
                "simulated_s": (step.end_ms - step.start_ms) / SECOND_MS,
            }
        )
        if result.partial or not ramp or not ok or k * 2 > max_speed:
            break
        k *= 2
    best = max((s["speed"] for s in steps if s["sustained"]), default=None)
    summary = {
        "steps": [{k2: v for k2, v in s.items() if k2 != "metrics"} for s in steps],
        "highest_sustained_speed": best,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "load.json").write_text(
        json.dumps({**summary, "metrics": steps[-1]["metrics"]}, indent=2, sort_keys=True) + "\n"
    )
    write_load_report(
        out,
        steps,
        best,
        scenario_name=scenario.name,
        backends=steps[-1]["backends"],
        ramp=ramp,
        overrun_limit=OVERRUN_LIMIT,
        lag_limit_s=LAG_LIMIT_S,
    )
    if as_json:
        json.dump(
            {**summary, "metrics": steps[-1]["metrics"]}, sys.stdout, indent=2, sort_keys=True
        )
        sys.stdout.write("\n")
    else:
        _print(steps, best, out)
    if steps[-1]["wall_seconds"] is None or any(s.get("partial") for s in steps):
        sys.exit(EXIT_INTERRUPTED)


def _one(scenario: Scenario, ramp: bool, step_s: float, speed: float, warm: bool) -> Scenario:
    """The scenario for one step: with --ramp, as much virtual time as ``step_s`` wall seconds
    at this speed; always without tick elision (idle ticks must query, as the real ones do);
    with --warm, a warm start (``[engine] warm_start``)."""
    engine = {"elide_idle_ticks": False} | ({"warm_start": True} if warm else {})
    update: dict[str, Any] = {"engine": scenario.engine.model_copy(update=engine)}
    if ramp:
        update["duration"] = round(step_s * speed * SECOND_MS)
    return scenario.model_copy(update=update)


def _print(steps: list[dict[str, Any]], best: float | None, out: Path) -> None:
    # Rich wraps to 80 columns when stdout is not a terminal; this table needs more.
    console = Console(width=None if sys.stdout.isatty() else 120)
    table = Table(title="sim load")
    for col in (
        "speed",
        "simulated",
        "wall",
        "tick overruns",
        "lag p99",
        "slowest query p99",
        "verdict",
    ):
        table.add_column(col, justify="right")
    for r in (step_row(s, None) for s in steps):
        table.add_row(
            f"x{r['speed']:g}",
            r["simulated"],
            f"{r['wall_s']:.1f}s",
            f"{r['overrun_pct']:.2f}%",
            f"{r['lag_p99_s']:.3f}s",
            f"{r['slowest_p99_ms']:.2f}ms ({r['slowest']})",
            "[green]sustained[/]" if r["sustained"] else "[red]falls behind[/]",
        )
    console.print(table)
    verdict = f"x{best:g}" if best else "none"
    click.echo(f"highest speed sustained: {verdict}; report: {out / LOAD_HTML}")
