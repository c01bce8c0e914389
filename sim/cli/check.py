"""``sim check``: run scenarios and gate on their ``[expect]`` thresholds (exit 0 / 99 / 2)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from sim.cli.common import SEED, load_or_exit, show_number
from sim.cli.exits import EXIT_THRESHOLD
from sim.cli.outputs import ended, ensure_out_dir, interrupted
from sim.cli.progress import Progress
from sim.engine.interrupts import Interrupted
from sim.runner import RunOptions, run_scenario
from sim.scenario.expect import Verdict, evaluate


@click.command()
@click.argument(
    "scenario_paths",
    metavar="SCENARIO...",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path),
)
@click.option("--seed", type=SEED, default=None, help="Override every scenario's seed.")
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY.PATH=VALUE",
    help="Override a field in every scenario (repeatable).",
)
@click.option(
    "--out",
    "out_root",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write each run's report under OUT/<scenario name>/ [default: reports/].",
)
@click.option("--json", "as_json", is_flag=True, help="Print the verdicts as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress display.")
def check(
    scenario_paths: tuple[Path, ...],
    seed: int | None,
    overrides: tuple[str, ...],
    out_root: Path | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Run each SCENARIO and check its [expect] thresholds.

    Exit status: 0 when every threshold holds, 99 when one fails, 2 for a usage or scenario
    error (every scenario is validated before any runs).
    """
    from sim.scheduler import build_cvsa_model

    scenarios = [load_or_exit(p, overrides, seed) for p in scenario_paths]
    root = ensure_out_dir(out_root or Path("reports"), default=out_root is None)
    results: dict[str, list[Verdict]] = {}
    for path, scenario in zip(scenario_paths, scenarios, strict=True):
        if not scenario.expect.root:
            click.echo(f"warning: {path} has no [expect] thresholds", err=True)
        out = root / scenario.name
        try:
            with Progress(
                scenario.name,
                scenario.start_ms,
                scenario.end_ms,
                enabled=not quiet and not as_json,
            ) as progress:
                options = RunOptions(
                    out_dir=out,
                    report=True,
                    plots=False,  # the CSV series: `sim plot` draws them, `sim compare` overlays
                    observer=progress.observe,
                    on_stage=progress.stage,
                    handle_signals=True,
                )
                run = run_scenario(scenario, build_cvsa_model, options)
        except Interrupted as exc:
            interrupted(exc, out)
        results[scenario.name] = evaluate(scenario.expect, run.metrics)
        if run.signum is not None:
            click.echo(f"{scenario.name}: interrupted; later scenarios did not run", err=True)
            ended(run, out)
    failed = any(not v.passed for verdicts in results.values() for v in verdicts)
    if as_json:
        doc = {
            "passed": not failed,
            "scenarios": {
                name: [
                    {
                        "metric": v.metric,
                        "condition": v.condition,
                        "value": v.value,
                        "passed": v.passed,
                    }
                    for v in verdicts
                ]
                for name, verdicts in results.items()
            },
        }
        json.dump(doc, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        _print_table(results)
    if failed:
        sys.exit(EXIT_THRESHOLD)


def _print_table(results: dict[str, list[Verdict]]) -> None:
    table = Table(title="sim check", show_lines=False)
    for col in ("scenario", "metric", "condition", "value", "result"):
        table.add_column(col, justify="right" if col == "value" else "left")
    for name, verdicts in results.items():
        for v in verdicts:
            mark = "[green]pass[/]" if v.passed else "[bold red]FAIL[/]"
            table.add_row(name, v.metric, v.condition, show_number(v.value), mark)
    Console().print(table)
    n = sum(len(v) for v in results.values())
    bad = sum(not x.passed for v in results.values() for x in v)
    click.echo(f"{n - bad} of {n} thresholds hold" + (f"; {bad} failed" if bad else ""))
