"""`sim curves` writes its PNGs; the package's public names are pinned."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

import sim.world
from sim.cli import cli

from .conftest import SMALL

PNG = b"\x89PNG\r\n\x1a\n"


def test_curves_writes_pngs(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SMALL.replace("non_songs = 36000", "non_songs = 6000"), encoding="utf-8")
    out = tmp_path / "png"
    result = CliRunner().invoke(cli, ["curves", str(scenario), "--out", str(out)])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    families = [f"family_{f.name.lower()}.png" for f in sim.world.Family]
    assert names == sorted(
        [*families, "catalog_views.png", "day_night.png", "arrivals.png", "crossings.png"]
    )
    for name in names:
        data = (out / name).read_bytes()
        assert data.startswith(PNG), name
        assert len(data) > 20_000, name
    assert f"wrote {out / 'crossings.png'}" in result.output


def test_curves_reports_scenario_errors(tmp_path: Path) -> None:
    scenario = tmp_path / "bad.toml"
    scenario.write_text('name = "x"\nduration = "1d"\n[curves]\nweights = 3\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["curves", str(scenario)])
    assert result.exit_code == 2
    assert "curves.weights must be a table" in result.output


def test_public_api() -> None:
    assert sorted(sim.world.__all__) == [
        "AidCodec", "ArrivalTable", "Catalog", "Crossings", "CurveTable", "DELETED", "Family",
        "HIDDEN", "RecountSteps", "TrafficClock", "UNDER_REVIEW", "World", "next_milestone",
        "rung_value", "rungs_reached",
    ]  # fmt: skip


SCRIPT = """
import hashlib, sys
from sim.rng import RandomStreams
from sim.world import World
from tests.world.conftest import small_scenario
sc = small_scenario("catalog.songs=300", "catalog.non_songs=3000")
w = World.build(sc, RandomStreams(sc.seed))
c = w.crossings(sc.start_ms, sc.end_ms)
h = hashlib.sha256()
for a in (w.aids(), w.published_ms, w.table.offset, w.table.rate, w.table.terms.burst, c.t_ms):
    h.update(a.tobytes())
print(h.hexdigest())
"""


def test_hash_seed_is_irrelevant() -> None:
    root = Path(__file__).resolve().parents[2]

    def run(hash_seed: str) -> str:
        env = {"PYTHONHASHSEED": hash_seed, "PATH": ""}
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT], cwd=root, env=env, capture_output=True, text=True,
            check=True,
        )  # fmt: skip
        return done.stdout.strip()

    assert run("1") == run("2")
