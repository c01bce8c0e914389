"""``sim load``: the scheduler on real backends and the real clock, K times faster than
production -- the servers see the scenario's load shape compressed K-fold (issue 7)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.console import Console
from rich.table import Table

from sim.cli.common import (
    Number,
    backend_errors,
    backend_options,
    backend_spec,
    load_or_exit,
    out_dir_option,
    scenario_options,
)
from sim.cli.outputs import ensure_out_dir, interrupted
from sim.cli.progress import Progress
from sim.engine.interrupts import Interrupted
from sim.report.load_report import LOAD_HTML, step_row, step_verdict, write_load_report
from sim.runner import RunOptions, run_scenario
from sim.scenario import Scenario
from sim.units import SECOND_MS


@click.command()
@scenario_options
@backend_options
@click.option(
    "--speed",
    type=Number(min=0, min_open=True),
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
    type=Number(min=1),
    default=20.0,
    show_default=True,
    metavar="SECONDS",
    help="With --ramp: wall seconds per step (an error without --ramp).",
)
@click.option(
    "--max-speed",
    type=Number(min=1),
    default=100_000.0,
    show_default=True,
    metavar="K",
    help="With --ramp: stop doubling here (an error without --ramp).",
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

    ctx = click.get_current_context()
    for name, flag in (("step_s", "--step"), ("max_speed", "--max-speed")):
        if not ramp and ctx.get_parameter_source(name) is not ParameterSource.DEFAULT:
            raise click.UsageError(
                f"{flag} sets a --ramp step; without --ramp the run lasts the scenario's "
                "duration (set it with --set 'duration=\"10m\"')"
            )
    scenario = load_or_exit(scenario_path, overrides, seed)
    spec = backend_spec(scenario, store, counter, reservation, reset)
    out = ensure_out_dir(
        out_dir or Path("reports") / f"{scenario.name}-load", default=out_dir is None
    )
    steps: list[dict[str, Any]] = []
    signum: int | None = None
    k = speed
    while True:
        step = _one(scenario, ramp, step_s, k, warm)
        step_spec = dataclasses.replace(spec, reset=spec.reset or (ramp and bool(steps)))
        step_out = out / f"x{k:g}" if ramp else out
        try:
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
                    out_dir=step_out,
                    report=True,
                    speed=k,
                    backends=step_spec,
                    concurrent=True,
                    observer=progress.observe,
                    on_stage=progress.stage,
                    handle_signals=True,
                )
                result = run_scenario(step, build_cvsa_model, options)
        except Interrupted as exc:
            if not steps:  # nothing measured yet: nothing to report
                interrupted(exc, step_out)
            click.echo(f"interrupted ({exc.args[0]}) while setting up x{k:g}", err=True)
            signum = exc.signum
            break
        sustained, _ = step_verdict(result.metrics, result.partial)
        steps.append(
            {
                "speed": k,
                "sustained": sustained,
                "partial": result.partial,
                "metrics": result.metrics,
                "wall_seconds": result.manifest["wall_seconds"],
                "backends": result.manifest["backends"],
                "simulated_s": result.manifest["simulated_seconds"],
            }
        )
        signum = result.signum
        if signum is not None or not ramp or not sustained or k * 2 > max_speed:
            break
        k *= 2
    best = max((s["speed"] for s in steps if s["sustained"]), default=None)
    summary = {
        "steps": [{k2: v for k2, v in s.items() if k2 != "metrics"} for s in steps],
        "highest_sustained_speed": best,
        "partial": any(s["partial"] for s in steps),
    }
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
    )
    if as_json:
        json.dump(
            {**summary, "metrics": steps[-1]["metrics"]}, sys.stdout, indent=2, sort_keys=True
        )
        sys.stdout.write("\n")
    else:
        _print(steps, best, out)
    if signum is not None:
        sys.exit(128 + signum)


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
            f"[{_colour(r)}]{r['verdict']}[/]",
        )
    console.print(table)
    verdict = f"x{best:g}" if best else "none"
    partial = " (PARTIAL: interrupted)" if any(s["partial"] for s in steps) else ""
    click.echo(f"highest speed sustained: {verdict}{partial}; report: {out / LOAD_HTML}")


def _colour(row: dict[str, Any]) -> str:
    """Green sustained, red falls behind, yellow for a step that decides nothing."""
    if row["sustained"]:
        return "green"
    return "red" if row["verdict"].startswith("falls") else "yellow"
