"""``sim sweep``: run a scenario over a grid of ``--set`` values, in parallel processes.

The grid is the scenario's (:mod:`sim.scenario.grid`), the runs the runner's
(:func:`sim.runner.run_in_processes`: one run directory per point), and the table and plot the
report's, read back from those directories (:mod:`sim.report.sweep`).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import click

from sim.cli.common import load_or_exit
from sim.cli.exits import EXIT_INTERRUPTED


@click.command()
@click.argument(
    "scenario_path", metavar="SCENARIO", type=click.Path(path_type=Path, dir_okay=False)
)
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY.PATH=V1,V2,...",
    help="A parameter and its values, e.g. --set design.window_cap=1000,2000,3000; one "
    "value applies to every point (repeatable; the grid is the cartesian product).",
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=None, help="Override the scenario's seed."
)
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    metavar="NAME",
    help="A metric (or pattern, e.g. 'lateness.*.p99_s') for the table and plots (repeatable) "
    "[default: snapshots, window peaks and placements, p99 lateness, cleanup, capture latency].",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Points run at once, each in its own process [default: the number of cores].",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Output directory [default: reports/sweep-<scenario name>/].",
)
@click.option("--no-plots", is_flag=True, help="Write each point's CSV files but no PNG or HTML.")
@click.option("--json", "as_json", is_flag=True, help="Print the sweep table as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
def sweep(
    scenario_path: Path,
    sets: tuple[str, ...],
    seed: int | None,
    metrics: tuple[str, ...],
    jobs: int | None,
    out_dir: Path | None,
    no_plots: bool,
    as_json: bool,
    quiet: bool,
) -> None:
    """Run SCENARIO at every point of a parameter grid and tabulate chosen metrics.

    Each point writes a full run report under OUT/runs/; the sweep writes sweep.csv (one row
    per point, in grid order), sweep.json and sweep.png (each metric against the first
    parameter, one line per combination of the others). Every point is validated before any
    runs (exit 2 on an error); Ctrl-C stops the sweep (exit 130).
    """
    from rich.console import Console
    from rich.table import Table

    from sim.report.sweep import RUNS_DIR, tabulate, write_sweep
    from sim.report.sweep_plot import draw_sweep
    from sim.runner import RunOptions, run_in_processes
    from sim.scenario.grid import grid, parse_sets, point_labels, point_overrides
    from sim.scheduler import build_cvsa_model

    try:
        axes, fixed = parse_sets(sets)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    points = grid(axes)
    # Every point is validated up front: no half-run sweep over a typo.
    scenarios = [load_or_exit(scenario_path, point_overrides(fixed, p), seed) for p in points]
    out = out_dir or Path("reports") / f"sweep-{scenarios[0].name}"
    labels = point_labels(points)
    n_jobs = jobs or os.cpu_count() or 1
    started = time.perf_counter()
    finished = 0

    def progress(i: int) -> None:
        nonlocal finished
        finished += 1
        if not quiet and not as_json:
            wall = time.perf_counter() - started
            click.echo(f"[{wall:6.1f}s] {finished}/{len(points)} done: {labels[i]}", err=True)

    if not quiet and not as_json:
        click.echo(
            f"{len(points)} points, {min(n_jobs, len(points))} at a time -> {out}/", err=True
        )
    runs = [
        (sc, RunOptions(out_dir=out / RUNS_DIR / label, report=True, plots=not no_plots))
        for sc, label in zip(scenarios, labels, strict=True)
    ]
    try:
        run_in_processes(runs, build_cvsa_model, jobs=n_jobs, on_done=progress)
    except KeyboardInterrupt:
        click.echo("sweep interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    result = tabulate(out, axes, fixed, points, labels, metrics)
    write_sweep(result, out)
    draw_sweep(result, out / "sweep.png")
    for pattern in result.unmatched:
        click.echo(f"warning: --metric {pattern} matches no metric of any run", err=True)
    if as_json:
        json.dump(result.to_json(), sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
        return
    table = Table(title=f"sweep of {scenario_path}")
    if len(result.points) <= 6:  # one column per point, one row per metric: names stay whole
        table.add_column("metric")
        for label in result.labels:
            table.add_column(label, justify="right", overflow="fold")
        for m in result.metrics:
            table.add_row(m, *(_show(r["metrics"].get(m)) for r in result.results))
    else:
        for col in ("#", *(a.key for a in axes), *result.metrics):
            table.add_column(col, justify="right", overflow="fold")
        for i, (point, r) in enumerate(zip(result.points, result.results, strict=True)):
            shown = [_show(r["metrics"].get(m)) for m in result.metrics]
            table.add_row(str(i), *(point[a.key] for a in axes), *shown)
    Console().print(table)
    click.echo(f"wrote sweep.csv, sweep.json and sweep.png in {out}/ (each run in runs/)")


def _show(value: object) -> str:
    if value is None:
        return "missing"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:,.6g}" if isinstance(value, float) else f"{value:,}"
