"""``sim sweep``: run a scenario over a grid of ``--set`` values (and, with ``--seeds``, under
many seeds each), in parallel processes.

The grid is the scenario's (:mod:`sim.scenario.grid`), the runs the runner's
(:func:`sim.runner.run_in_processes`: one run directory per point and seed), and the table and
plot the report's, read back from those directories (:mod:`sim.report.sweep`). ``sim run
--seeds`` is a sweep without parameters (:func:`run_sweep`).
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sim.cli.common import (
    SEED,
    dask_errors,
    dask_option,
    load_or_exit,
    out_dir_option,
    seeds_jobs_options,
    seeds_option,
    show_number,
)
from sim.cli.outputs import ensure_out_dir
from sim.engine.interrupts import Interrupted

if TYPE_CHECKING:
    from rich.table import Table

    from sim.report.sweep import SweepResult


@click.command()
@click.argument("scenario_path", metavar="SCENARIO", type=click.Path(path_type=Path))
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY.PATH=V1,V2,...",
    help="A parameter and its values, e.g. --set design.window_cap=1000,2000,3000; one "
    "value applies to every point (repeatable; the grid is the cartesian product).",
)
@click.option("--seed", type=SEED, default=None, help="Override the scenario's seed.")
@seeds_jobs_options(
    "Run every point under each of these seeds (1-20, or 1,2,5) and tabulate the median "
    "and the 5-95 % band of each metric, and each finding's severities across seeds."
)
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    metavar="NAME",
    help="A metric (or pattern, e.g. 'lateness.*.p99_s') for the table and plots (repeatable) "
    "[default: snapshots, window peaks and placements, p99 lateness, cleanup, capture latency].",
)
@out_dir_option("Output directory [default: reports/sweep-<scenario name>/].")
@click.option("--no-plots", is_flag=True, help="Write each point's CSV files but no PNG or HTML.")
@dask_option
@click.option("--json", "as_json", is_flag=True, help="Print the sweep table as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
def sweep(
    scenario_path: Path,
    sets: tuple[str, ...],
    seed: int | None,
    seeds_text: str | None,
    metrics: tuple[str, ...],
    jobs: int | None,
    out_dir: Path | None,
    no_plots: bool,
    dask: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Run SCENARIO at every point of a parameter grid and tabulate chosen metrics.

    Each point writes a full run report under OUT/runs/ (with --seeds, one per seed under
    OUT/runs/<point>/seed-N/); the sweep writes sweep.csv (one row per point, in grid order;
    with --seeds the median and the band's ends), sweep.json and sweep.png (each metric against
    the first parameter, one line per combination of the others; with --seeds the band
    shaded). Every point is validated before any runs (exit 2 on an error); Ctrl-C stops the
    sweep (exit 130).
    """
    seeds = seeds_option(seeds_text)
    if seeds is not None and seed is not None:
        raise click.UsageError("--seed and --seeds exclude each other: give the seeds to --seeds")
    run_sweep(
        scenario_path, sets, seed, seeds, metrics, jobs, out_dir, no_plots, as_json, quiet, dask
    )


def run_sweep(
    scenario_path: Path,
    sets: tuple[str, ...],
    seed: int | None,
    seeds: list[int] | None,
    metrics: tuple[str, ...],
    jobs: int | None,
    out_dir: Path | None,
    no_plots: bool,
    as_json: bool,
    quiet: bool,
    dask: str | None = None,
    default_out: str = "sweep-{name}",
    grid_sets: bool = True,
) -> None:
    """The sweep (or, with ``grid_sets`` false, the seed swarm of ``sim run --seeds``: every
    ``--set`` is one override, commas and all)."""
    from rich.console import Console

    from sim.metrics.catalogue import unknown_metric
    from sim.report.sweep import run_dir, tabulate, write_sweep
    from sim.report.sweep_plot import draw_sweep
    from sim.runner import RunOptions, run_in_processes, run_on_dask
    from sim.scenario.grid import grid, parse_sets, point_labels, point_overrides
    from sim.scheduler import build_cvsa_model

    try:
        axes, fixed = parse_sets(sets) if grid_sets else ([], list(sets))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    unknown = [why for m in metrics if (why := unknown_metric(m)) is not None]
    if unknown:  # before anything runs: a sweep is minutes of work
        raise click.BadParameter("; ".join(unknown), param_hint="'--metric'")
    points = grid(axes)
    each: list[int | None] = list(seeds) if seeds is not None else [seed]
    # Every run is validated up front: no half-run sweep over a typo.
    scenarios = [
        [load_or_exit(scenario_path, point_overrides(fixed, p), s) for s in each] for p in points
    ]
    out = ensure_out_dir(
        out_dir or Path("reports") / default_out.format(name=scenarios[0][0].name),
        default=out_dir is None,
    )
    labels = point_labels(points) if axes else [""]
    n_runs = len(points) * len(each)
    n_jobs = jobs or os.cpu_count() or 1
    started = time.perf_counter()
    finished = 0
    slots = min(n_jobs, n_runs)
    names = [
        ", ".join(filter(None, [label, f"seed {s}" if seeds is not None else ""])) or "the run"
        for label in labels
        for s in each
    ]

    def say(text: str) -> None:
        if not quiet and not as_json:
            click.echo(text, err=True)

    def progress(i: int) -> None:
        nonlocal finished
        finished += 1
        wall = time.perf_counter() - started
        left = n_runs - finished
        running = min(slots, left)
        eta = wall / finished * left
        say(
            f"[{wall:6.1f}s] {finished}/{n_runs} done, {running} running, "
            f"{left - running} waiting, ETA ~{eta:,.0f}s: {names[i]}"
        )

    def cluster(threads: int) -> None:
        nonlocal slots
        slots = max(1, min(threads, n_runs))
        say(f"the cluster at {dask} runs {threads} point(s) at once")

    what = f"{len(points)} point(s)" + (f" x {len(each)} seeds" if seeds is not None else "")
    where = f"on {dask}" if dask else f"{slots} at a time"
    say(f"{what}, {where} -> {out}/")
    runs = [
        (
            sc,
            RunOptions(
                out_dir=run_dir(out, label, s if seeds is not None else None),
                report=True,
                plots=not no_plots,
            ),
        )
        for label, row in zip(labels, scenarios, strict=True)
        for s, sc in zip(each, row, strict=True)
    ]
    try:
        if dask:
            with dask_errors(dask):
                run_on_dask(
                    runs, build_cvsa_model, address=dask, on_done=progress, on_start=cluster
                )
        else:
            run_in_processes(runs, build_cvsa_model, jobs=n_jobs, on_done=progress)
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        click.echo(
            f"sweep interrupted ({signal.Signals(signum).name}): {finished} of {n_runs} runs "
            f"finished, each with its report in {out}/runs/; no table was written",
            err=True,
        )
        sys.exit(128 + signum)
    result = tabulate(out, axes, fixed, points, labels, metrics, seeds)
    stem = "sweep" if grid_sets else "swarm"
    write_sweep(result, out, stem)
    draw_sweep(result, out / f"{stem}.png", scenarios[0][0].name)
    for pattern in result.unmatched:
        click.echo(f"warning: --metric {pattern} matches no metric of any run", err=True)
    if as_json:
        json.dump(result.to_json(), sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
        return
    console = Console()
    console.print(_metric_table(result, scenario_path, "sweep of" if grid_sets else "runs of"))
    if seeds is not None:
        console.print(_severity_table(result))
    click.echo(f"wrote {stem}.csv, {stem}.json and {stem}.png in {out}/ (each run in runs/)")


def _metric_table(result: SweepResult, scenario_path: Path, what: str) -> Table:
    from rich.table import Table

    swarm = result.seeds is not None
    title = f"{what} {scenario_path}"
    if swarm:
        assert result.seeds is not None
        title += f": median [5 % - 95 %] over {len(result.seeds)} seeds"
    table = Table(title=title)

    def cell(i: int, m: str) -> str:
        if not swarm:
            return show_number(result.results[i][0]["metrics"].get(m))
        lo, mid, hi = result.band(i, m)
        if math.isnan(mid):
            return "missing"
        if lo == hi:
            return show_number(mid, 4)
        return f"{show_number(mid, 4)} [{show_number(lo, 4)} - {show_number(hi, 4)}]"

    if len(result.points) <= 6:  # one column per point, one row per metric: names stay whole
        table.add_column("metric", overflow="fold")
        for label in result.labels:
            table.add_column(label or "value", justify="right", overflow="fold")
        for m in result.metrics:
            table.add_row(m, *(cell(i, m) for i in range(len(result.points))))
    else:
        for col in ("#", *(a.key for a in result.axes), *result.metrics):
            table.add_column(col, justify="right", overflow="fold")
        for i, point in enumerate(result.points):
            shown = [cell(i, m) for m in result.metrics]
            table.add_row(str(i), *(point[a.key] for a in result.axes), *shown)
    return table


def _severity_table(result: SweepResult) -> Table:
    """Each finding's severities across the seeds: "warn in 3 of 20 seeds"."""
    from rich.table import Table

    from sim.metrics.findings.verdicts import Severity

    assert result.seeds is not None
    n = len(result.seeds)
    table = Table(title=f"findings across {n} seeds")
    table.add_column("finding", no_wrap=True)
    for label in result.labels:
        table.add_column(label or "severities")
    order = [s.value for s in Severity]
    per_point = [result.severities(i) for i in range(len(result.points))]
    for finding in sorted({f for p in per_point for f in p}):
        cells = []
        for counts in per_point:
            c: Mapping[str, int] = counts.get(finding, Counter())
            worst = [w for w in reversed(order) if c.get(w)]
            parts = [f"{w} in {c[w]}" for w in worst]
            cells.append(f"{', '.join(parts)} of {n}" if parts else "missing")
        table.add_row(finding, *cells)
    return table
