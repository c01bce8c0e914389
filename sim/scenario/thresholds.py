"""``[findings]``: the thresholds that decide each finding's severity (issue 25).

Every finding states the thresholds it used (``findings.<id>.thresholds.*`` in ``summary.json``);
this table is where a scenario sets them. Each sub-table's keys are the keyword arguments of the
finding's reducer (:mod:`sim.metrics.findings`), so a key documented here is exactly what the
reducer receives. The defaults are this project's reading of the design note (seed 000) and are
argued in docs/report.md.
"""

from __future__ import annotations

from pydantic import Field

from sim.scenario.types import DurationMs, Section, duration_default


class TickHealthThresholds(Section):
    """``[findings.ticks]``: periodic jobs and the snapshot queue (finding ``ticks``)."""

    warn_missed_slots: int = Field(default=1, ge=1)
    """Warn when the periodic jobs missed this many slots in all (an iteration outlasted its
    period, so the next one started late and the slots in between were skipped)."""
    warn_queue_wait: DurationMs = duration_default("60s")
    """Warn when the p99 wait of a snapshot job, from enqueue to start, reaches this (the
    workers, not the ticks, are then what makes snapshots late)."""


class MilestoneThresholds(Section):
    """``[findings.milestones]``: capture of milestone crossings (finding ``milestones``)."""

    capture_target: DurationMs = duration_default("1h")
    """A crossing of a tracked song not shown by a snapshot within this time of the crossing is
    missed; the finding fails (the invariant ``missed_milestones`` uses the same 1 h)."""
    fail_missed: int = Field(default=1, ge=1)
    """Fail when this many tracked crossings were missed (crossings too near the end of the run
    to judge are not counted)."""
    warn_latency_p99: DurationMs = duration_default("10m")
    """Warn when the p99 capture latency (snapshot minus crossing) of tracked crossings reaches
    this: two periods of the milestone dispatcher (5 min, seed 000), which pulls a row in as the
    ETA comes near."""
    warn_bracket_p99: DurationMs = duration_default("72m")
    """Warn when the p99 bracket (capturing snapshot minus the last one below the milestone)
    reaches this: a candidate always has a row due within 1.2 h (the dispatcher's clamp, seed
    000 "限制在2秒~1.2小时之间"), so the crossing should be known to that precision."""


class StalenessThresholds(Section):
    """``[findings.staleness]``: time between snapshots of a song (finding ``staleness``)."""

    max_interval: DurationMs = duration_default("72h")
    """The longest regular interval (seed 000 normal: growth 0 -> 72 h; reference §11.6)."""
    slack: DurationMs = duration_default("2h")
    """Tolerance on top of ``max_interval`` (dispatch cadence, tick delays)."""
    fail_stale_songs: int = Field(default=1, ge=1)
    """Fail when this many available songs went longer than ``max_interval + slack`` without a
    snapshot (fewer: warn). Deleted, hidden and under-review songs are never counted."""


class FindingsSection(Section):
    """``[findings]``: one sub-table per finding."""

    ticks: TickHealthThresholds = TickHealthThresholds()
    milestones: MilestoneThresholds = MilestoneThresholds()
    staleness: StalenessThresholds = StalenessThresholds()
