"""The simulated world: bilibili videos whose view counts move, appear and disappear.

Build one with ``World.build(scenario, RandomStreams(scenario.seed))``; see :mod:`.world`.
"""

from sim.world.availability import DELETED, HIDDEN, UNDER_REVIEW
from sim.world.curves import CurveTable, Family, RecountSteps
from sim.world.ids import AidCodec
from sim.world.traffic import TrafficClock
from sim.world.truth import Crossings, next_milestone, rung_value, rungs_reached
from sim.world.world import ArrivalTable, Catalog, World

__all__ = [
    "DELETED",
    "HIDDEN",
    "UNDER_REVIEW",
    "AidCodec",
    "ArrivalTable",
    "Catalog",
    "Crossings",
    "CurveTable",
    "Family",
    "RecountSteps",
    "TrafficClock",
    "World",
    "next_milestone",
    "rung_value",
    "rungs_reached",
]
