"""Shared worlds for the world tests: built once per session (they are immutable)."""

from __future__ import annotations

import pytest

from sim.rng import RandomStreams
from sim.scenario import Scenario, parse_scenario
from sim.world import World

# Rare families boosted so that a small catalog still has hundreds of each.
SMALL = """
name = "world-test"
seed = 11
start = "2031-03-01T12:00:00+08:00"
duration = "20d"

[catalog]
songs = 4000
non_songs = 36000
unavailable_at_start = 0.01
unavailable_per_day = 0.0005

[curves.weights]
dormant = 0.3
steady = 0.45
fresh = 0.05
viral = 0.06
approacher = 0.08
recount = 0.06

[arrivals]
per_day = 300
"""


def small_scenario(*overrides: str) -> Scenario:
    """The small test scenario, with ``key.path=value`` overrides."""
    return parse_scenario(SMALL, source="world-test", overrides=overrides)


@pytest.fixture(scope="session")
def scenario() -> Scenario:
    return small_scenario()


@pytest.fixture(scope="session")
def world(scenario: Scenario) -> World:
    return World.build(scenario, RandomStreams(scenario.seed))
