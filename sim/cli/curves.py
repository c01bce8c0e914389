"""``sim curves``: draw the simulated world of a scenario (sample curves, catalog, arrivals)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from sim.scenario import ScenarioError, load_scenario


@click.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory for the PNGs [default: reports/<scenario name>/curves].",
)
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a key.")
@click.option("--seed", type=int, default=None, help="Override the scenario's seed.")
def curves(
    scenario: Path, out_dir: Path | None, overrides: tuple[str, ...], seed: int | None
) -> None:
    """Draw sample view curves per family, the catalog's views and the arrivals as PNGs."""
    try:
        sc = load_scenario(scenario, overrides=overrides, seed=seed)
    except ScenarioError as exc:
        raise click.UsageError(str(exc)) from None
    # Imported here: numpy worlds and matplotlib are slow to import (libraries.md §1).
    from sim.rng import RandomStreams
    from sim.world import World
    from sim.world.drawing import draw_all

    out = out_dir if out_dir is not None else Path("reports") / sc.name / "curves"
    t = time.perf_counter()
    world = World.build(sc, RandomStreams(sc.seed))
    click.echo(
        f"built {len(world.initial):,} videos and {len(world.arrivals):,} arrivals "
        f"in {time.perf_counter() - t:.1f} s"
    )
    for path in draw_all(world, out):
        click.echo(f"wrote {path}")
