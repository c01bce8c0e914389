"""Options and error handling shared by the subcommands."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from sim.scenario import Scenario, ScenarioError, load_scenario

F = TypeVar("F", bound=Callable[..., Any])


def scenario_options(fn: F) -> F:
    """SCENARIO, --seed and --set, the same on every command that runs scenarios."""
    fn = click.option(
        "--set",
        "overrides",
        multiple=True,
        metavar="KEY.PATH=VALUE",
        help="Override a scenario field, e.g. --set switches.window_cap=2000 (repeatable).",
    )(fn)
    fn = click.option(
        "--seed", type=click.IntRange(min=0), default=None, help="Override the scenario's seed."
    )(fn)
    fn = click.argument(
        "scenario_path", metavar="SCENARIO", type=click.Path(path_type=Path, dir_okay=False)
    )(fn)
    return fn


def load_or_exit(path: Path, overrides: tuple[str, ...], seed: int | None) -> Scenario:
    """Load and validate, or print every problem and exit with status 2."""
    try:
        return load_scenario(path, overrides=overrides, seed=seed)
    except ScenarioError as exc:
        for problem in exc.problems:
            click.echo(f"error: {problem}", err=True)
        sys.exit(2)
