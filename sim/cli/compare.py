"""``sim compare``: two runs side by side, an overlay plot, and regression gates (exit 99)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from sim.cli.exits import EXIT_THRESHOLD, EXIT_USAGE
from sim.cli.outputs import ensure_out_dir

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
    from sim.report.compare import (
        compare_runs,
        comparison_json,
        parse_tolerance,
        unknown_tolerances,
    )
    from sim.report.run_files import read_summary

    try:
        parsed = [parse_tolerance(t) for t in tolerances]
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    try:  # a name no run writes is refused before anything is written
        unknown = unknown_tolerances(parsed, read_summary(run_a), read_summary(run_b))
    except (FileNotFoundError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    for line in unknown:
        click.echo(f"error: {line}", err=True)
    if unknown:
        sys.exit(EXIT_USAGE)
    out = ensure_out_dir(
        out_dir
        or Path("reports") / "compare" / f"{run_a.resolve().name}-vs-{run_b.resolve().name}",
        default=out_dir is None,
    )
    try:
        result = compare_runs(run_a, run_b, parsed, out)
    except (FileNotFoundError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        doc = comparison_json(result)
        doc["files"] = [str(p) for p in result.files]
        json.dump(doc, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        from rich.console import Console

        console = Console()
        if not console.is_terminal:  # a log or a pipe: keep metric names whole
            console = Console(width=160)
        print_comparison(console, result, show_all)
    if not result.passed:
        sys.exit(EXIT_THRESHOLD)


COLUMNS = ("metric", "A", "B", "delta", "delta %", "change")
DROPPED = ("delta %", "delta")
"""The columns left out, in this order, when the table would be wider than the terminal; if it
still is, each metric gets a line of its own above its values."""


def _cells(r: Any) -> dict[str, str]:
    from sim.report.compare import delta_cells, metric_cell

    delta, pct = delta_cells(r)
    return {
        "metric": r.metric,
        "A": metric_cell(r.a),
        "B": metric_cell(r.b),
        "delta": delta,
        "delta %": pct,
        "change": r.change,
    }


def _text(col: str, value: str) -> Any:
    from rich.text import Text

    return Text(value, style=_STYLE.get(value, "") if col == "change" else "")


def _table(title: str, rows: list[dict[str, str]], columns: list[str]) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for col in columns:  # names whole; values wrap at spaces (a sentence), never inside a word
        text = col in ("metric", "change")
        table.add_column(col, justify="left" if text else "right", no_wrap=text)
    for row in rows:
        table.add_row(*(_text(c, row[c]) for c in columns))
    return table


def _fits(console: Any, table: Any) -> bool:
    from rich.measure import Measurement

    wide = console.options.update_width(1_000_000)  # measured unbounded: rich clamps to this
    return bool(Measurement.get(console, wide, table).minimum <= console.width)


def print_comparison(console: Any, result: Any, show_all: bool) -> None:
    """The comparison on ``console``: the findings whose severity changed, the metrics that
    differ (``show_all``: every one) as a table as wide as the console at most, the verdicts,
    the files. Metric names are never cut: the table drops the delta columns to fit, and when
    even that is too wide, each metric is a line of its own with its values indented below."""
    from sim.report.findings_term import print_changes

    print_changes(console, result.findings)
    rows = [_cells(r) for r in (result.rows if show_all else result.changed())]
    title = f"A = {result.a['dir']}   B = {result.b['dir']}"
    columns = list(COLUMNS)
    table = _table(title, rows, columns)
    for col in DROPPED:
        if _fits(console, table):
            break
        columns.remove(col)
        table = _table(title, rows, columns)
    if _fits(console, table):
        console.print(table)
    else:
        console.print(title, markup=False)
        for row in rows:
            console.print(row["metric"], markup=False, soft_wrap=True)
            values = [f"A {row['A'] or '-'}", f"B {row['B'] or '-'}"]
            values += [f"delta {row['delta']}"] * bool(row["delta"])
            values += [f"({row['delta %']})"] * bool(row["delta %"])
            line = _text("", "    " + "   ".join(values) + "   ")
            line.append_text(_text("change", row["change"]))
            console.print(line)
    same = len(result.rows) - len(result.changed())
    console.print(
        f"{len(result.rows)} metrics: {len(result.changed())} differ, {same} the same",
        markup=False,
    )
    for v in result.verdicts:
        mark = "pass" if v.passed else "FAIL"
        console.print(f"{mark}  {v.tolerance}: {v.metric}: {v.reason}", markup=False)
    for p in result.files:
        console.print(f"wrote {p}", markup=False, soft_wrap=True)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
