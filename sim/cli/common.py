"""Options and error handling shared by the subcommands."""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from sim.backends import BackendError, BackendSpec
from sim.cli.exits import EXIT_ERROR, EXIT_USAGE
from sim.scenario import Scenario, ScenarioError, load_scenario

F = TypeVar("F", bound=Callable[..., Any])


MAX_SEED = 2**63 - 1


class SeedType(click.types.IntParamType):
    """``--seed``: a whole number a scenario's ``seed`` accepts, checked where it is typed, so
    that a bad one is blamed on the flag and not on the file's ``seed`` line."""

    name = "seed"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and re.fullmatch(r"[0-9]+(?:_[0-9]+)*", value.strip()):
            number = int(value.strip())
        else:
            self.fail(f"{value!r} is not a whole number from 0 to 2^63-1", param, ctx)
        if not 0 <= number <= MAX_SEED:
            self.fail(
                f"{value} is out of range: a seed is from 0 to 2^63-1 ({MAX_SEED})", param, ctx
            )
        return number


SEED = SeedType()


class WholeNumber(click.IntRange):
    """An integer flag whose error reads "'x' is not a valid whole number" (click's own
    ``IntRange`` says "integer range", which is no word for what to type)."""

    name = "whole number"


class Number(click.FloatRange):
    """A finite number flag: nan and inf are refused here, not deep in a run."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def scenario_options(fn: F) -> F:
    """SCENARIO, --seed and --set, the same on every command that runs scenarios."""
    fn = click.option(
        "--set",
        "overrides",
        multiple=True,
        metavar="KEY.PATH=VALUE",
        help="Override a scenario field, e.g. --set design.window_cap=2000 (repeatable).",
    )(fn)
    fn = click.option("--seed", type=SEED, default=None, help="Override the scenario's seed.")(fn)
    # The loader says why a path is not a scenario (a directory, missing, not UTF-8) in one line.
    fn = click.argument("scenario_path", metavar="SCENARIO", type=click.Path(path_type=Path))(fn)
    return fn


def load_or_exit(path: Path, overrides: Sequence[str], seed: int | None) -> Scenario:
    """Load and validate, or print every problem and exit with status 2. Memory is checked
    here, before anything is built (sim.scenario.footprint): a scenario that may not fit the
    machine gets one warning line on stderr and runs, one that cannot fit is refused."""
    from sim.scenario.footprint import memory_check
    from sim.world.pinned import pin_problems

    try:
        scenario = load_scenario(path, overrides=overrides, seed=seed)
        verdict = memory_check(scenario, str(path))
        if verdict is not None and verdict.refuse:
            raise ScenarioError([verdict.message])
        problems = pin_problems(scenario)  # needs the traffic clock, so not a model rule
        if problems:
            raise ScenarioError([f"{path}: {p}" for p in problems])
    except ScenarioError as exc:
        for problem in exc.problems:
            click.echo(f"error: {problem}", err=True)
        sys.exit(EXIT_USAGE)
    if verdict is not None:
        _warn_once(verdict.message)
    return scenario


def _warn_once(message: str) -> None:
    """``warning: message`` on stderr, once per command: a sweep or a capacity search loads
    the same scenario for every point and seed."""
    ctx = click.get_current_context(silent=True)
    shown: set[str] = ctx.meta.setdefault("sim.warned", set()) if ctx is not None else set()
    if message not in shown:
        shown.add(message)
        click.echo(f"warning: {message}", err=True)


def backend_options(fn: F) -> F:
    """--store, --counter, --reservation, --reset: the same on run and load."""
    fn = click.option(
        "--reset",
        is_flag=True,
        help="Drop what an earlier run left in the store's schema and under the counter's key "
        "prefix before starting (never needed for memory).",
    )(fn)
    fn = click.option(
        "--reservation",
        type=click.Choice(["loop", "lua"]),
        default=None,
        help="Window reservation on Redis: the deployed client-side loop (one round trip per "
        "probed window) or one Lua script [default: the scenario's, else loop].",
    )(fn)
    fn = click.option(
        "--counter",
        metavar="SPEC",
        default=None,
        help="Window counter: memory | reference | fakeredis | redis://HOST:PORT/DB "
        "[default: the scenario's [backends], else memory].",
    )(fn)
    fn = click.option(
        "--store",
        metavar="SPEC",
        default=None,
        help="Schedule and snapshot store: memory (the optimised one) | reference (plain "
        "Python, to check a result: add --counter reference for a wholly plain run) | "
        "sqlite:PATH | postgresql://USER@HOST:PORT/DB "
        "[default: the scenario's [backends], else memory].",
    )(fn)
    return fn


def backend_spec(
    scenario: Scenario,
    store: str | None,
    counter: str | None,
    reservation: str | None,
    reset: bool,
) -> BackendSpec:
    """The scenario's [backends], with the command line's choices on top (an unknown
    ``--store`` or ``--counter`` is a usage error: exit 2, the choices listed)."""
    from sim.backends import counter_problem, store_problem
    from sim.runner import spec_of

    for flag, given, problem in (
        ("--store", store, store_problem),
        ("--counter", counter, counter_problem),
    ):
        message = problem(given) if given is not None else None
        if message:
            raise click.BadParameter(message, param_hint=f"'{flag}'")

    spec = spec_of(scenario)
    return dataclasses.replace(
        spec,
        store=store or spec.store,
        counter=counter or spec.counter,
        reservation=reservation or spec.reservation,  # type: ignore[arg-type]
        reset=reset,
    )


@contextmanager
def backend_errors() -> Iterator[None]:
    """An unreachable server or foreign data: one line, no traceback, exit status 1."""
    try:
        yield
    except BackendError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)


def dask_option(fn: F) -> F:
    """--dask ADDRESS: run the points on an existing Dask distributed cluster."""
    return click.option(
        "--dask",
        "dask",
        metavar="ADDRESS",
        default=None,
        help="Run the points on an existing Dask distributed cluster: its scheduler's address, "
        "e.g. tcp://10.0.0.5:8786 (start one with `dask scheduler` and `dask worker ADDRESS`; "
        "every worker needs this version of sim installed). The files come back here.",
    )(fn)


@contextmanager
def dask_errors(address: str) -> Iterator[None]:
    """A missing package, an unreachable scheduler or a point that kept killing its workers:
    one line that says what to do, no traceback."""
    try:
        import distributed
    except ImportError:
        click.echo(
            "error: --dask needs the dask distributed package: pip install 'sim[dask]'", err=True
        )
        sys.exit(EXIT_USAGE)
    try:
        yield
    except distributed.KilledWorker as exc:
        click.echo(
            f"error: a point killed every worker that ran it and was given up ({exc}); run it "
            "alone with `sim run` to see why",
            err=True,
        )
        sys.exit(EXIT_ERROR)
    except (OSError, TimeoutError) as exc:
        click.echo(
            f"error: --dask {address}: no Dask scheduler answered ({exc}); start one with "
            f"`dask scheduler` and workers with `dask worker {address}`",
            err=True,
        )
        sys.exit(EXIT_ERROR)
    except ValueError as exc:
        click.echo(f"error: --dask {address}: not a scheduler address ({exc})", err=True)
        sys.exit(EXIT_USAGE)


def seeds_jobs_options(seeds_help: str) -> Callable[[F], F]:
    """--seeds SEEDS (``seeds_help`` says what is run under each seed) and --jobs N."""

    def add(fn: F) -> F:
        fn = click.option(
            "--jobs",
            "-j",
            type=WholeNumber(min=1),
            default=None,
            help="Runs at once, each in its own process [default: the number of cores].",
        )(fn)
        return click.option(
            "--seeds", "seeds_text", metavar="SEEDS", default=None, help=seeds_help
        )(fn)

    return add


def seeds_option(text: str | None) -> list[int] | None:
    """``--seeds`` as a list, or a usage error naming the flag."""
    from sim.scenario.grid import parse_seeds

    if text is None:
        return None
    try:
        return parse_seeds(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--seeds'") from None


def out_dir_option(help_text: str) -> Callable[[F], F]:
    """--out DIRECTORY (``out_dir``): where a command writes its report."""
    return click.option(
        "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), help=help_text
    )


def show_number(value: object, digits: int = 6) -> str:
    """A metric's value for a terminal table: numbers by :func:`sim.report.numbers.show_number`
    (thousands separated, ``digits`` significant digits, no exponent), "missing" for None;
    anything else as text."""
    from sim.report.numbers import show_number as for_people

    if value is None:
        return "missing"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return for_people(value, digits)
