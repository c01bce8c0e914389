"""The finding reducers of a CVSA run, each given what the log cannot tell (issue 25).

One place wires every finding of :mod:`sim.metrics.findings` to the run: the design's numbers
(``Params``), the profile's switches, the world's ground truth, the scenario's ``[findings]``
thresholds (each sub-table's keys are the reducer's keyword arguments) and its time zone.
"""

from __future__ import annotations

from sim.cvsa.params import Params
from sim.cvsa.profile import Switches
from sim.metrics import Reducer
from sim.metrics.findings import MilestoneFinding, Staleness, TickHealth
from sim.metrics.invariants import RunTruth
from sim.scenario import Scenario
from sim.world import World


def cvsa_finding_reducers(
    scenario: Scenario,
    params: Params,
    switches: Switches,
    world: World,
    periods_ms: dict[str, int],
    truth: RunTruth,
) -> list[Reducer]:
    """Every finding of a CVSA run (``periods_ms``: each periodic job's period; ``truth``: the
    world's crossings, songs and availability, built once for the invariants and the findings)."""
    th, tz = scenario.findings, scenario.timezone
    return [
        TickHealth(periods_ms, tz, **th.ticks.model_dump()),
        MilestoneFinding(truth, tz, **th.milestones.model_dump()),
        Staleness(truth, tz, **th.staleness.model_dump()),
    ]
