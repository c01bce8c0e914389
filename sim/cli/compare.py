"""``sim compare``: two runs side by side, an overlay plot, and regression gates (exit 99)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from sim.cli.exits import EXIT_THRESHOLD, EXIT_USAGE

_STYLE = {"worse": "bold red", "better": "green", "changed": "yellow", "added": "cyan"}


@click.command()
@click.argument(
    "run_a", metavar="RUN_A", type=click.Path(file_okay=False, exists=True, path_type=Path)
)
@click.argument(
    "run_b", metavar="RUN_B", type=click.Path(file_okay=False, exists=True, path_type=Path)
)
@click.option(
    "--tolerance",
    "tolerances",
    multiple=True,
    metavar="METRIC=LIMIT",
    help="Fail (exit 99) when METRIC (a name or a pattern such as 'lateness.*.p99_s') moves "
    "in its bad direction by more than LIMIT: 5% (of A's value) or 2 (units); +5% only "
    "up, -5% only down, +-5% either way (repeatable). See docs/report.md.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory for comparison.csv/.json and overlay.png "
    "[default: reports/compare/<A>-vs-<B>/].",
)
@click.option("--all", "show_all", is_flag=True, help="List unchanged metrics too.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def compare(
    run_a: Path,
    run_b: Path,
    tolerances: tuple[str, ...],
    out_dir: Path | None,
    show_all: bool,
    as_json: bool,
) -> None:
    """Compare the metrics of two `sim run` report directories, RUN_A (the baseline) and RUN_B.

    Prints every metric that differs with its delta (--all: every metric), writes the table and
    an overlay plot of occupancy and lateness, and checks each --tolerance. Exit status: 0 when
    every tolerance holds (or none is given), 99 when a metric regressed beyond its tolerance,
    2 for a usage error.
    """
    from sim.report.compare import compare_runs, comparison_json, parse_tolerance

    try:
        parsed = [parse_tolerance(t) for t in tolerances]
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    out = (
        out_dir or Path("reports") / "compare" / f"{run_a.resolve().name}-vs-{run_b.resolve().name}"
    )
    try:
        result = compare_runs(run_a, run_b, parsed, out)
    except (FileNotFoundError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    if as_json:
        doc = comparison_json(result)
        doc["files"] = [str(p) for p in result.files]
        json.dump(doc, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        _print(result, show_all)
    if not result.passed:
        sys.exit(EXIT_THRESHOLD)


def _print(result: Any, show_all: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    from sim.report.compare import metric_cell
    from sim.report.findings_term import print_changes

    console = Console()
    if not console.is_terminal:  # a log or a pipe: keep metric names whole
        console = Console(width=160)
    print_changes(console, result.findings)
    rows = result.rows if show_all else result.changed()
    table = Table(title=f"A = {result.a['dir']}   B = {result.b['dir']}")
    for col in ("metric", "A", "B", "delta", "delta %", "change"):
        table.add_column(col, justify="left" if col in ("metric", "change") else "right")
    for r in rows:
        pct = "" if r.pct is None else f"{r.pct:+,.2f}%"
        delta = "" if r.delta is None else f"{r.delta:+,.6g}"
        style = _STYLE.get(r.change, "")
        change = f"[{style}]{r.change}[/]" if style else r.change
        table.add_row(r.metric, metric_cell(r.a), metric_cell(r.b), delta, pct, change)
    console.print(table)
    same = len(result.rows) - len(result.changed())
    click.echo(f"{len(result.rows)} metrics: {len(result.changed())} differ, {same} the same")
    for v in result.verdicts:
        mark = "pass" if v.passed else "FAIL"
        click.echo(f"{mark}  {v.tolerance}: {v.metric}: {v.reason}")
    for p in result.files:
        click.echo(f"wrote {p}")
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
