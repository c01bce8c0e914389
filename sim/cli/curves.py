"""``sim curves``: draw the simulated world of a scenario (sample curves, catalog, arrivals)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from sim.cli.common import load_or_exit, scenario_options
from sim.cli.outputs import ensure_out_dir
from sim.units import format_duration_ms


@click.command()
@scenario_options
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory for the PNGs [default: reports/<scenario name>/curves].",
)
def curves(
    scenario_path: Path, seed: int | None, overrides: tuple[str, ...], out_dir: Path | None
) -> None:
    """Draw sample view curves per family, the catalog's views and the arrivals as PNGs.

    Says what it does as it goes (a world of millions of videos takes a while to draw)."""
    sc = load_or_exit(scenario_path, overrides, seed)
    out = ensure_out_dir(
        out_dir if out_dir is not None else Path("reports") / sc.name / "curves",
        default=out_dir is None,
    )
    # Imported here: numpy worlds and matplotlib are slow to import (libraries.md §1).
    from sim.rng import RandomStreams
    from sim.world import World
    from sim.world.drawing import draw_all

    videos = sc.catalog.songs + sc.catalog.non_songs
    span = format_duration_ms(sc.duration)
    click.echo(f"drawing the world: {videos:,} videos and the arrivals of {span}", err=True)
    t = time.perf_counter()
    world = World.build(sc, RandomStreams(sc.seed))
    click.echo(
        f"built {len(world.initial):,} videos and {len(world.arrivals):,} arrivals "
        f"in {time.perf_counter() - t:.1f} s"
    )
    for path in draw_all(world, out):
        click.echo(f"wrote {path}")
