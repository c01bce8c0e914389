"""``sim run``: run one scenario and write its report directory."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from sim.cli.common import (
    Number,
    backend_errors,
    backend_options,
    backend_spec,
    dask_option,
    load_or_exit,
    out_dir_option,
    scenario_options,
    seeds_jobs_options,
    seeds_option,
)
from sim.cli.exits import EXIT_USAGE
from sim.cli.outputs import ended, ensure_out_dir, interrupted, write_failed, written_under
from sim.cli.progress import Progress
from sim.cli.sweep import run_sweep
from sim.engine.interrupts import Interrupted
from sim.metrics.findings.verdicts import findings_in
from sim.report.findings_term import print_findings
from sim.report.findings_view import verdict_line
from sim.runner import RunOptions, run_scenario
from sim.scenario import ScenarioError
from sim.scenario.expect import evaluate


@click.command()
@scenario_options
@out_dir_option("Report directory [default: reports/<scenario name>/].")
@click.option(
    "--save-events",
    is_flag=True,
    help="Also save the event log (events.simlog) for `sim plot` and offline analysis.",
)
@click.option(
    "--speed",
    type=Number(min=0, min_open=True),
    metavar="K",
    help="Run on the real clock, K times faster than production (default: virtual).",
)
@backend_options
@click.option(
    "--no-plots",
    is_flag=True,
    help="Write the CSV time series but no PNG or report.html (draw them later with `sim plot`).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the manifest, metrics, [expect] verdicts and report files as JSON.",
)
@seeds_jobs_options(
    "Run the scenario under each of these seeds (1-20, or 1,2,5), in parallel processes, "
    "and report each metric's median and 5-95 % band and each finding's severities across "
    "seeds (each run's report in OUT/runs/seed-N/)."
)
@dask_option
@click.option("-q", "--quiet", is_flag=True, help="No progress display.")
def run(
    scenario_path: Path,
    seed: int | None,
    overrides: tuple[str, ...],
    out_dir: Path | None,
    save_events: bool,
    speed: float | None,
    store: str | None,
    counter: str | None,
    reservation: str | None,
    reset: bool,
    no_plots: bool,
    seeds_text: str | None,
    jobs: int | None,
    dask: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Run SCENARIO (a TOML file) and write its report to --out: manifest.json, summary.json,
    scenario.json, CSV time series, PNG plots and report.html.

    Same scenario and seed give a byte-identical event log and report (wall-clock timings are
    only in manifest.json). Ctrl-C stops early and still writes a valid report marked partial
    (exit 130); press it twice to also abandon in-flight I/O. The [expect] verdicts are shown
    in the report; `sim check` gates on them.
    """
    from sim.scheduler import build_cvsa_model

    seeds = seeds_option(seeds_text)
    if dask is not None and seeds is None:
        raise click.UsageError("--dask runs the seeds of --seeds on a cluster: give --seeds too")
    if seeds is not None:
        alone = {
            "--seed": seed is not None,
            "--save-events": save_events,
            "--speed": speed is not None,
            "--store": store is not None,
            "--counter": counter is not None,
            "--reservation": reservation is not None,
            "--reset": reset,
        }
        clash = [flag for flag, given in alone.items() if given]
        if clash:
            raise click.UsageError(f"--seeds runs on the virtual clock alone: drop {clash[0]}")
        run_sweep(
            scenario_path,
            overrides,
            None,
            seeds,
            (),
            jobs,
            out_dir,
            no_plots,
            as_json,
            quiet,
            dask,
            default_out="{name}-seeds",
            grid_sets=False,
        )
        return
    scenario = load_or_exit(scenario_path, overrides, seed)
    out = ensure_out_dir(out_dir or Path("reports") / scenario.name, default=out_dir is None)
    spec = backend_spec(scenario, store, counter, reservation, reset)
    try:
        with (
            backend_errors(),
            Progress(
                scenario.name,
                scenario.start_ms,
                scenario.end_ms,
                enabled=not quiet and not as_json,
            ) as progress,
        ):
            options = RunOptions(
                out_dir=out,
                save_events=save_events,
                report=True,
                plots=not no_plots,
                speed=speed,
                backends=spec,
                observer=progress.observe,
                on_stage=progress.stage,
                handle_signals=True,
            )
            result = run_scenario(scenario, build_cvsa_model, options)
    except ScenarioError as exc:
        # Found only once the world is drawn: a pinned aid an arrival has (sim.world.pinned).
        for problem in exc.problems:
            click.echo(f"error: {scenario_path}: {problem}", err=True)
        sys.exit(EXIT_USAGE)
    except Interrupted as exc:
        interrupted(exc, out)
    except OSError as exc:
        if not written_under(exc, out):
            raise
        write_failed(exc, out)
    m = result.manifest
    if as_json:
        verdicts = [
            {"metric": v.metric, "condition": v.condition, "value": v.value, "passed": v.passed}
            for v in evaluate(scenario.expect, result.metrics)
        ]
        doc = {
            "manifest": m,
            "verdict": verdict_line(findings_in(result.metrics)),
            "metrics": result.metrics,
            "expect": verdicts,
            "files": [str(p) for p in result.files],
        }
        json.dump(doc, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        state = "PARTIAL (interrupted)" if result.partial else "complete"
        click.echo(
            f"{scenario.name}: {state}; simulated {m['simulated_seconds']:,.0f} s in "
            f"{m['wall_seconds']:,.2f} s (x{m['compression_ratio']:,}); {m['events']:,} events\n"
            f"event log sha256 {m['event_log_sha256']}\n"
            f"report: {out / 'report.html' if not no_plots else str(out) + '/'}"
        )
        _print_findings(result.metrics, result.partial, str(m.get("end", "")).replace(".000", ""))
    ended(result, out)


def _print_findings(summary: dict[str, Any], partial: bool, end: str) -> None:
    from rich.console import Console

    console = Console()
    if not console.is_terminal:  # a log or a pipe: keep each sentence on few lines
        console = Console(width=160)
    print_findings(console, findings_in(summary), partial_end=end if partial else "")
