"""The [catalog], [curves] and [arrivals] tables: defaults, units, errors a person can act on."""

from __future__ import annotations

import ast
import inspect

import pytest

import sim.scenario.world as world_tables
from sim.scenario import ScenarioError, parse_scenario
from sim.units import DAY_MS, HOUR_MS

HEAD = 'name = "x"\nduration = "30d"\n'


def problems(body: str) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(HEAD + body, source="s.toml")
    return info.value.problems


def test_defaults_and_units() -> None:
    sc = parse_scenario(HEAD)
    assert sc.catalog.songs + sc.catalog.non_songs == 1_000_000
    assert sc.curves.fresh_window == 7 * DAY_MS
    assert sc.curves.fresh_half_median == 10 * HOUR_MS
    assert sc.arrivals.discovery_delay_mean == 90_000
    assert len(sc.curves.hourly_profile) == 24
    custom = parse_scenario(HEAD + '[curves]\nfresh_window = "36h"\n')
    assert custom.curves.fresh_window == 36 * HOUR_MS


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "[curves.weights]\ndormant = 0\nsteady = 0\nfresh = 0\nviral = 0\napproacher = 0\n"
            "recount = 0\n",
            "s.toml:3: curves.weights must sum to > 0 (got 0)",
        ),
        (
            "[curves]\nhourly_profile = [1, 2]\n",
            "s.toml:4: curves.hourly_profile must have 24 values (got 2)",
        ),
        (
            "[curves]\nday_night_amplitude = 3\n",
            "s.toml:4: curves.day_night_amplitude must leave the quietest hour at >= 5% of the "
            "mean traffic (got -1.31)",
        ),
        (
            "[curves]\napproach_rate_min = 10\napproach_rate_max = 5\n",
            "s.toml:5: curves.approach_rate_max must be >= approach_rate_min (got 5 < 10)",
        ),
        ("[catalog]\nsongs = -1\n", "s.toml:4: catalog.songs must be >= 0 (got -1)"),
        (
            "[catalog.error_codes]\ndeleted = 0\nhidden = 0\nreview = 0\n",
            "s.toml:3: catalog.error_codes must sum to > 0 (got 0)",
        ),
        ("[arrivals]\nper_dya = 3\n", "s.toml:4: arrivals.per_dya is not a known key"),
    ],
)
def test_errors_name_the_key_and_the_rule(body: str, expected: str) -> None:
    assert problems(body)[0].startswith(expected)


def test_every_field_is_documented() -> None:
    # A docstring line right after each field (what it means, with its unit).
    tree = ast.parse(inspect.getsource(world_tables))
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        body = cls.body
        for k, node in enumerate(body):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                doc = body[k + 1] if k + 1 < len(body) else None
                assert isinstance(doc, ast.Expr), f"{cls.name}.{node.target.id}"
                assert isinstance(doc.value, ast.Constant)
                assert isinstance(doc.value.value, str)
