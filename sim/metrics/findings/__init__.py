"""Findings: pure reducers over the event log that judge whether the design held (issue 25).

Each finding reducer is a :class:`~sim.metrics.base.Reducer` whose ``result()`` is one
:class:`~sim.metrics.findings.verdicts.Finding` flattened into ``findings.<id>.*`` names. What
the log cannot tell (the window cap, the periods, the ground truth, the thresholds of the
scenario's ``[findings]`` table, the time zone for local times) is given to the constructors,
as for the invariant monitors. docs/report.md "Findings" documents each one.

The findings (id: what it judges, module):

* ``capacity``: capped demand per day against the windows' capacity (:mod:`.capacity`)
* ``levelling``: the delay levelling adds to capped rows, §6.2 (:mod:`.levelling`)
* ``executed_load``: snapshots executed per window against the cap; requests per proxy
  against the rate limits, §6.2, §14.2 (:mod:`.executed_load`)
* ``milestones``: tracked songs' milestone crossings captured, misses by cause
  (:mod:`.milestones`, :mod:`.milestone_causes`)
* ``staleness``: no available song waits past the interval bound (:mod:`.staleness`)
* ``lost_work``: rows deleted by cleanup, finished without a snapshot, lost or repeated
  (:mod:`.lost_work`)
* ``lateness``: executed minus due, split into its parts (:mod:`.lateness`)
* ``ticks``: periodic jobs keep their periods; queue wait and depth (:mod:`.tick_health`)
* ``periodic``: periodic work runs once per slot, from one place; runs cut off, time offline
  (:mod:`.periodic_runs`)
* ``delivery``: crashed jobs redelivered or lost, failed deliveries retried or dropped,
  duplicates skipped (:mod:`.redelivered`)
* ``rules``: the invariant monitors, what they checked and set aside (:mod:`.rule_checks`)
* ``write_path``: seed 003's write backlog, its drain and backpressure, runs with
  ``[write_path]`` only (:mod:`.write_backlog`)
* ``modes``: seed 003's traffic modes: what they deferred, back-filled and lost, runs with
  ``[modes]`` only (:mod:`.deferral`)
* ``throttle``: throttled answers (-412, 429), the adaptive response's rate cuts and restores,
  retry by class (:mod:`.throttled`; issue 28)
"""

from __future__ import annotations

from sim.metrics.findings.capacity import Capacity
from sim.metrics.findings.deferral import Deferral
from sim.metrics.findings.executed_load import ExecutedLoad
from sim.metrics.findings.lateness import LatenessAttribution
from sim.metrics.findings.levelling import Levelling
from sim.metrics.findings.lost_work import LostWork
from sim.metrics.findings.milestones import MilestoneFinding
from sim.metrics.findings.periodic_runs import PeriodicRuns
from sim.metrics.findings.redelivered import DeliveryFinding
from sim.metrics.findings.rule_checks import RuleChecks
from sim.metrics.findings.staleness import Staleness
from sim.metrics.findings.throttled import ThrottleFinding
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
from sim.metrics.findings.write_backlog import WriteBacklog

__all__ = [
    "Capacity",
    "Deferral",
    "DeliveryFinding",
    "ExecutedLoad",
    "Finding",
    "LatenessAttribution",
    "Levelling",
    "LostWork",
    "MilestoneFinding",
    "PeriodicRuns",
    "RuleChecks",
    "Severity",
    "Staleness",
    "ThrottleFinding",
    "TickHealth",
    "WriteBacklog",
    "finding_metrics",
    "findings_in",
    "verdict_sentence",
    "worst",
    "worst_first",
]
