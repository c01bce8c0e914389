"""Findings: pure reducers over the event log that judge whether the design held (issue 25).

Each finding reducer is a :class:`~sim.metrics.base.Reducer` whose ``result()`` is one
:class:`~sim.metrics.findings.verdicts.Finding` flattened into ``findings.<id>.*`` names. What
the log cannot tell (the window cap, the periods, the ground truth, the thresholds of the
scenario's ``[findings]`` table, the time zone for local times) is given to the constructors,
as for the invariant monitors. docs/report.md "Findings" documents each one.

=========  ==============================================  =====================================
id         judges                                          module
=========  ==============================================  =====================================
ticks      periodic jobs keep their periods; queue wait     :mod:`.tick_health`
milestones tracked songs' milestone crossings captured      :mod:`.milestones`
staleness  no available song waits past the interval bound  :mod:`.staleness`
=========  ==============================================  =====================================
"""

from __future__ import annotations

from sim.metrics.findings.milestones import MilestoneFinding
from sim.metrics.findings.staleness import Staleness
from sim.metrics.findings.tick_health import TickHealth
from sim.metrics.findings.verdicts import (
    Finding,
    Severity,
    finding_metrics,
    findings_in,
    verdict_sentence,
    worst,
    worst_first,
)

__all__ = [
    "Finding",
    "MilestoneFinding",
    "Severity",
    "Staleness",
    "TickHealth",
    "finding_metrics",
    "findings_in",
    "verdict_sentence",
    "worst",
    "worst_first",
]
