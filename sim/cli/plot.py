"""``sim plot``: redraw a run's plots and ``report.html`` without re-running it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from sim.cli.exits import EXIT_USAGE


@click.command()
@click.argument(
    "run_dir", metavar="RUN_DIR", type=click.Path(file_okay=False, exists=True, path_type=Path)
)
@click.option(
    "--from",
    "source",
    type=click.Choice(["auto", "events", "csv"]),
    default="auto",
    show_default=True,
    help="events: recompute every series from events.simlog (and rewrite the CSV files); "
    "csv: draw from the CSV files; auto: events when the run saved them.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the files written as JSON.")
def plot(run_dir: Path, source: str, as_json: bool) -> None:
    """Redraw every plot and report.html of RUN_DIR (a `sim run` report directory).

    A run made with --save-events is re-reduced from its event log, which must match the
    manifest's fingerprint; the files come out byte-identical to the run's own. Without saved
    events the plots are drawn from the saved CSV files.
    """
    from sim.report import redraw
    from sim.report.run_files import EVENTS_FILE

    has_log = (run_dir / EVENTS_FILE).exists()
    if source == "events" and not has_log:
        click.echo(f"error: {run_dir / EVENTS_FILE}: missing (run with --save-events)", err=True)
        sys.exit(EXIT_USAGE)
    from_log = has_log if source == "auto" else source == "events"
    try:
        paths = redraw(run_dir, from_log=from_log)
    except (FileNotFoundError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    if as_json:
        doc = {
            "run_dir": str(run_dir),
            "source": "events" if from_log else "csv",
            "files": [str(p) for p in paths],
        }
        json.dump(doc, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        click.echo(f"{run_dir}: redrawn from {'events.simlog' if from_log else 'the CSV files'}")
        for p in paths:
            click.echo(f"wrote {p}")
