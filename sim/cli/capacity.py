"""``sim capacity``: the largest load, or the smallest resource, at which a scenario's gates hold.

The probe sequence is :class:`sim.scenario.frontier.FrontierSearch` (exponential, then
bisection, interpolating on the gates' margins where they are numbers); every probe is a normal
run with its report under ``OUT/probes/``; the gates are the scenario's ``[expect]`` thresholds
(a finding's severity among them). The answer, every probe and its verdicts go to
``capacity.json``; ``capacity.png`` draws each gate's metric against the value with the
pass/fail boundary (:mod:`sim.report.frontier_plot`).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import click

from sim.cli.common import (
    Number,
    dask_errors,
    dask_option,
    load_or_exit,
    out_dir_option,
    scenario_options,
    seeds_jobs_options,
    seeds_option,
    show_number,
)
from sim.cli.exits import EXIT_THRESHOLD, EXIT_USAGE
from sim.cli.outputs import ensure_out_dir
from sim.engine.interrupts import Interrupted
from sim.scenario.document import Scenario
from sim.scenario.expect import Condition, Verdict, score_names
from sim.scenario.frontier import Find, FrontierSearch

RESOURCE_PREFIXES = ("design.", "scheduler.", "upstream.")
"""Keys whose larger values give the scheduler more room: the search looks for the smallest
value that holds. Any other key (``catalog.*``, ``arrivals.*``) is a load: the largest."""


def _percent(text: str) -> float:
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise click.BadParameter(
            f"must be a fraction or a percentage, e.g. 1% (got {text!r})"
        ) from None
    if not 0 < value < 1:
        raise click.BadParameter(f"must be between 0 and 100 % (got {text!r})")
    return value


@click.command()
@scenario_options
@click.option(
    "--vary",
    "key",
    required=True,
    metavar="KEY.PATH",
    help="The numeric key to search, e.g. design.window_cap or catalog.non_songs.",
)
@click.option(
    "--low",
    type=Number(),
    default=None,
    help="Low end of the search (with --high: a bracket, its ends probed only to confirm).",
)
@click.option("--high", type=Number(), default=None, help="High end of the search.")
@click.option(
    "--find",
    type=click.Choice(["max", "min"]),
    default=None,
    help="max: the largest value that holds (a load); min: the smallest (a resource) "
    "[default: min for design.*, scheduler.* and upstream.* keys, else max].",
)
@click.option(
    "--precision",
    default="1%",
    show_default=True,
    help="Stop when the passing and failing values are this close (relative).",
)
@out_dir_option("Output directory [default: reports/capacity-<scenario name>/].")
@click.option(
    "--no-plots", is_flag=True, help="Write each probe's CSV files but no PNG or HTML of its own."
)
@seeds_jobs_options(
    "Run every probe under each of these seeds (1-5, or 1,2,5): a value holds only when "
    "the gates hold under every seed."
)
@dask_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
def capacity(
    scenario_path: Path,
    key: str,
    low: float | None,
    high: float | None,
    find: Find | None,
    precision: str,
    seed: int | None,
    overrides: tuple[str, ...],
    out_dir: Path | None,
    no_plots: bool,
    seeds_text: str | None,
    jobs: int | None,
    dask: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Find where SCENARIO's [expect] gates stop holding as KEY varies.

    For a load (catalog.non_songs, arrivals.per_day) the answer is the largest value at which
    every gate holds; for a resource (design.window_cap) the smallest. Without --low/--high the
    search starts at the scenario's own value and doubles or halves until the verdict flips,
    then bisects to --precision. Exit status: 0 when a frontier was found (or every probe
    held), 99 when no probed value holds, 2 for a usage or scenario error, 130 on Ctrl-C.
    """
    from sim.report.frontier_plot import draw_frontier
    from sim.scenario.expect import evaluate

    try:
        rel = _percent(precision)
    except click.BadParameter as exc:
        raise click.BadParameter(exc.message, param_hint="'--precision'") from None
    seeds = seeds_option(seeds_text)
    if seeds is not None and seed is not None:
        raise click.UsageError("--seed and --seeds exclude each other: give the seeds to --seeds")
    base = load_or_exit(scenario_path, overrides, seed)
    if not base.expect.root:
        click.echo(
            f"error: {scenario_path}: sim capacity needs gates, and the scenario has no "
            "[expect] thresholds; add some, or e.g. --set "
            '\'expect."findings.capacity.severity"="<= info"\'',
            err=True,
        )
        sys.exit(EXIT_USAGE)
    start = _current_value(base, key)
    direction: Find = find or ("min" if key.startswith(RESOURCE_PREFIXES) else "max")
    integer = isinstance(start, int) and not isinstance(start, bool)
    try:
        search = FrontierSearch(
            direction, float(start), integer, precision=rel, low=low, high=high, minimum=0.0
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    out = ensure_out_dir(
        out_dir or Path("reports") / f"capacity-{base.name}", default=out_dir is None
    )
    leaf = key.rsplit(".", 1)[-1]
    chatty = not quiet and not as_json

    def say(text: str) -> None:
        if chatty:
            click.echo(text, err=True)

    what = "largest" if direction == "max" else "smallest"
    say(f"finding the {what} {key} at which {len(base.expect.root)} gate(s) hold -> {out}/")
    started = time.perf_counter()
    conditions = base.expect.conditions()
    probes: list[dict[str, Any]] = []
    partial = False
    signum: int = signal.SIGINT  # the signal that cut the search short, if one did
    while (value := search.next_value()) is not None:
        shown = _spell(value, integer)
        probe_dir = out / "probes" / f"{len(probes):02d}_{leaf}={shown}"
        each: list[int | None] = list(seeds) if seeds is not None else [seed]
        scenarios = [load_or_exit(scenario_path, [*overrides, f"{key}={shown}"], s) for s in each]
        dirs = [probe_dir if s is None or seeds is None else probe_dir / f"seed-{s}" for s in each]
        stop_after = False
        try:
            outcomes = _probe(scenarios, dirs, no_plots, dask, jobs)
        except _StopAfter as stop:
            outcomes, signum, stop_after = [(stop.metrics, False)], stop.signum, True
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM before the probe's report
            signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
            partial = True
            break
        partial_run = any(p for _, p in outcomes)
        per_seed = [evaluate(base.expect, m) for m, _ in outcomes]
        margins = probe_margins(per_seed)
        held = [all(v.passed for v in vs) for vs in per_seed]
        holds = not partial_run and all(held)
        # The gates shown for a probe: the first seed's that failed, else the first seed's.
        worst = next((i for i, ok in enumerate(held) if not ok), 0)
        verdicts = per_seed[worst]
        probes.append(
            {
                "value": _number(value, integer),
                "holds": holds,
                "run": str(dirs[worst]),
                "held_in": sum(held),
                "margins": margins,
                "seeds": None
                if seeds is None
                else [
                    {"seed": s, "holds": ok, "run": str(d)}
                    for s, ok, d in zip(each, held, dirs, strict=True)
                ],
                "gates": [_gate(v, outcomes[worst][0], conditions) for v in verdicts],
            }
        )
        wall = time.perf_counter() - started
        failed = [v for v in verdicts if not v.passed]
        why = (
            "holds"
            if holds
            else "fails: "
            + "; ".join(
                f"{v.metric} = {show_number(v.value, 4)} (needs {v.condition})" for v in failed[:2]
            )
        )
        if seeds is not None:
            why += f" (held under {sum(held)} of {len(held)} seeds)"
        say(f"[{wall:7.1f}s] probe {len(probes)}: {key} = {_spell(value, integer, True)} -> {why}")
        if partial_run or stop_after:
            partial = True
            break
        search.record(value, holds, margins)
    frontier = search.frontier()
    result = {
        "scenario": base.name,
        "key": key,
        "find": direction,
        "precision": rel,
        "seeds": seeds,
        "partial": partial,
        "holds": _number(frontier.holds.value, integer) if frontier.holds else None,
        "fails": _number(frontier.fails.value, integer) if frontier.fails else None,
        "probes": probes,
    }
    result["finding"] = _sentence(result, integer)
    out.mkdir(parents=True, exist_ok=True)
    (out / "capacity.json").write_text(
        json.dumps(result, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8"
    )
    if probes:
        draw_frontier(result, base.expect.conditions(), out / "capacity.png")
    if as_json:
        json.dump(result, sys.stdout, indent=2, sort_keys=True, default=str)
        sys.stdout.write("\n")
    else:
        click.echo(result["finding"])
        click.echo(f"wrote capacity.json and capacity.png in {out}/")
    if partial:
        click.echo(f"capacity search interrupted ({signal.Signals(signum).name})", err=True)
        sys.exit(128 + signum)
    if frontier.holds is None:
        sys.exit(EXIT_THRESHOLD)


def _gate(v: Verdict, metrics: dict[str, Any], conditions: dict[str, Condition]) -> dict[str, Any]:
    """One gate of a probe for capacity.json: its value, verdict and margin, and for a
    severity its finding's score and the score where the bound is crossed (the plot draws
    those: they say how near the gate is, where the severity says only which side)."""
    out = {
        "metric": v.metric,
        "condition": v.condition,
        "value": v.value,
        "passed": v.passed,
        "margin": v.margin,
    }
    names = score_names(v.metric, conditions[v.metric])
    if names is not None and isinstance(metrics.get(names[0]), int | float):
        out["score"], out["score_at"] = metrics[names[0]], metrics.get(names[1])
    return out


def probe_margins(per_seed: list[list[Verdict]]) -> dict[str, float] | None:
    """Per gate, how far a probe is from flipping it, the least over seeds (a log ratio, > 0
    holds: :attr:`Verdict.margin`); gates without one are left out, and None when a failing
    gate has none (then no number says how far off the probe is)."""
    out: dict[str, float] = {}
    for verdicts in per_seed:
        for v in verdicts:
            if v.margin is None:
                if not v.passed:
                    return None
                continue
            out[v.metric] = min(out.get(v.metric, v.margin), v.margin)
    return out or None


def _probe(
    scenarios: list[Scenario],
    dirs: list[Path],
    no_plots: bool,
    dask: str | None,
    jobs: int | None,
) -> list[tuple[dict[str, Any], bool]]:
    """One probe: a normal run with its report per scenario (one per seed) in ``dirs``, here
    (one scenario: in this process, Ctrl-C stops it cleanly; several: in processes) or on the
    Dask cluster; returns each run's metrics and whether it was interrupted."""
    from sim.report.run_files import read_manifest, read_summary
    from sim.runner import RunOptions, run_in_processes, run_on_dask, run_scenario
    from sim.scheduler import build_cvsa_model

    if dask is None and len(scenarios) == 1:
        options = RunOptions(out_dir=dirs[0], report=True, plots=not no_plots, handle_signals=True)
        run = run_scenario(scenarios[0], build_cvsa_model, options)
        return [(run.metrics, run.partial)]
    runs = [
        (sc, RunOptions(out_dir=d, report=True, plots=not no_plots))
        for sc, d in zip(scenarios, dirs, strict=True)
    ]
    if dask is None:
        run_in_processes(runs, build_cvsa_model, jobs=jobs or os.cpu_count() or 1)
    else:
        with dask_errors(dask):
            run_on_dask(runs, build_cvsa_model, address=dask)
    return [(read_summary(d), bool(read_manifest(d)["partial"])) for d in dirs]


class _StopAfter(Exception):
    """A signal came while a probe's report was written: the probe is complete and counts,
    and the search stops after it."""

    def __init__(self, metrics: dict[str, Any], signum: int) -> None:
        super().__init__(signum)
        self.metrics = metrics
        self.signum = signum


def _current_value(scenario: Scenario, key: str) -> int | float:
    """The value ``key`` has in the validated scenario (a ``design.`` key: the profile's
    number when the scenario sets none); a usage error unless it is a plain number."""
    node: Any = scenario
    parts = key.split(".")
    if parts[0] == "design" and len(parts) == 2:
        node = scenario.params
        parts = parts[1:]
    for part in parts:
        if not hasattr(node, part):
            raise click.BadParameter(f"{key} is not a key of the scenario", param_hint="'--vary'")
        node = getattr(node, part)
    if isinstance(node, bool) or not isinstance(node, int | float):
        raise click.BadParameter(
            f"{key} is not a number (it is {node!r}): vary a count, a rate or a size",
            param_hint="'--vary'",
        )
    return node


def _number(value: float, integer: bool) -> int | float:
    return int(value) if integer else value


def _spell(value: float, integer: bool, people: bool = False) -> str:
    if integer:
        return f"{int(value):,}" if people else str(int(value))
    return f"{value:,.6g}" if people else repr(value)


def _sentence(result: dict[str, Any], integer: bool) -> str:
    """The frontier in words, with the evidence run and the gate that failed beyond it."""
    key, n = result["key"], len(result["probes"])
    best = "largest" if result["find"] == "max" else "smallest"
    probes = {p["value"]: p for p in result["probes"]}
    if result["holds"] is None:
        tried = ", ".join(_spell(p["value"], integer, True) for p in result["probes"])
        return f"No probed value of {key} holds every gate ({n} probes: {tried})."
    good = probes[result["holds"]]
    seeds = result.get("seeds")
    every = f" under all {len(seeds)} seeds" if seeds else ""
    text = (
        f"The {best} {key} at which every gate holds{every} is "
        f"{_spell(result['holds'], integer, True)}"
    )
    if result["fails"] is None:
        return (
            f"{text}, the last value probed: every probe held ({n} probes); widen the search "
            f"with --{'high' if result['find'] == 'max' else 'low'}. Evidence: {good['run']}/."
        )
    bad = probes[result["fails"]]
    failed = [g for g in bad["gates"] if not g["passed"]]
    gate = failed[0] if failed else None
    why = (
        f"; at {_spell(result['fails'], integer, True)} {gate['metric']} was "
        f"{show_number(gate['value'], 4)} (needs {gate['condition']})"
        if gate
        else f"; {_spell(result['fails'], integer, True)} fails"
    )
    if seeds:
        why += f", holding under {bad['held_in']} of {len(seeds)} seeds"
    unit = integer and abs(result["holds"] - result["fails"]) <= 1
    within = "to the unit" if unit else f"to within {result['precision'] * 100:g} %"
    return f"{text}{why}. {n} probes, {within}. Evidence: {good['run']}/."
