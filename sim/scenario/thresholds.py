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


class PeriodicThresholds(Section):
    """``[findings.periodic]``: periodic work run more than once (finding ``periodic``)."""

    warn_twice: int = Field(default=1, ge=1)
    """Warn when this many slots of the periodic jobs ran in two deployments (work done twice:
    two deployments without a single executor, docs/periodic.md)."""
    warn_reentries: int = Field(default=1, ge=1)
    """Warn when this many runs started while another run of their job was still running."""


class WritePathThresholds(Section):
    """``[findings.write_path]``: the snapshot write backlog (finding ``write_path``)."""

    warn_drain: DurationMs = duration_default("10m")
    """Warn when the write backlog stayed above one flush (``flush_rows``) this long at a stretch,
    or never drained before the end: snapshots fetched that long ago were not yet in the table,
    so every rule reading them (ETA, milestones, intervals) used older counts."""


class ModesThresholds(Section):
    """``[findings.modes]``: deferred work under seed 003's traffic modes (finding ``modes``)."""

    warn_lost: int = Field(default=1, ge=1)
    """Warn when this many deferred rows were deleted by cleanup before they ran."""
    warn_catch_up: DurationMs = duration_default("2h")
    """Warn when back-filling a mode's deferred rows took this long after it ended."""


class LostWorkThresholds(Section):
    """``[findings.lost_work]``: rows deleted without a snapshot, work lost or repeated."""

    warn_lost: int = Field(default=1, ge=1)
    """Warn when this many rows were deleted by cleanup without ever getting a snapshot."""
    fail_lost_share: float = Field(default=0.01, gt=0, le=1)
    """Fail when the lost rows are this share of all rows created (the design then drops a
    noticeable part of the work it plans)."""


class LatenessThresholds(Section):
    """``[findings.lateness]``: executed minus due time of scheduled snapshots."""

    warn_p99: DurationMs = duration_default("60s")
    """Warn when a schedule type's p99 lateness reaches this: a snapshot a minute late no
    longer brackets a milestone tightly (milestone rows are due seconds before a crossing,
    seed 000 §11) and shows the ticks or workers falling behind."""
    fail_p99: DurationMs = duration_default("1h")
    """Fail when a type's p99 lateness reaches this (the capture bound of a milestone, and
    most of the shortest regular interval)."""


class CapacityThresholds(Section):
    """``[findings.capacity]``: capped demand per local day against the windows' capacity
    (finding ``capacity``; capacity = ``design.window_cap`` x windows per day)."""

    warn_share: float = Field(default=0.8, gt=0)
    """Warn when the peak day's capped demand reaches this share of the day's capacity (the
    windows hold, with little headroom)."""
    fail_share: float = Field(default=1.0, gt=0)
    """Fail when a day's capped demand exceeds this share of its capacity (1.0: more rows than
    slots; the rest spill into later days and the backlog horizon grows)."""


class LevellingThresholds(Section):
    """``[findings.levelling]``: how far load levelling moved capped rows (finding
    ``levelling``)."""

    warn_p99: DurationMs = duration_default("1h")
    """Warn when the p99 delay (due minus requested time) of ``normal`` rows reaches this. With
    room a row moves by less than one 5-minute window; one hour is twelve full windows in a row,
    a sixth of the shortest regular interval (6 h, reference §11.6)."""
    fail_p99: DurationMs = duration_default("6h")
    """Fail when the p99 delay of ``normal`` rows reaches this: the shortest regular interval
    (6 h, §11.6), so the fastest videos lose a whole snapshot interval to levelling."""
    warn_p99_archive: DurationMs = duration_default("1d")
    """Warn when the p99 delay of ``archive`` rows reaches this: archive snapshots are weekly
    (reference §13b), and a day is a seventh of that cadence; hours are expected, since one
    dispatcher run gives every song the same target and the rows spill forward a cap at a
    time (§13b step 2)."""
    fail_p99_archive: DurationMs = duration_default("7d")
    """Fail when the p99 delay of ``archive`` rows reaches this: a whole week, the archive
    cadence (§13b), lost to levelling."""


class ExecutedLoadThresholds(Section):
    """``[findings.executed_load]``: snapshots executed per window against the cap, requests per
    proxy against the rate limits (finding ``executed_load``)."""

    warn_over_cap_share: float = Field(default=0.1, ge=0)
    """Warn when a window executed more than the cap by this share of the cap (0.1: 10 %)."""
    fail_over_cap_share: float = Field(default=1.0, ge=0)
    """Fail when a window executed more than the cap by this share (1.0: twice the cap, the
    bulk path's whole upstream budget of 200 requests of 30 videos per 5 min against the
    deployed cap of 3000, reference §14.5). A proxy over its rate limit in a window fails too."""


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


class ThrottleThresholds(Section):
    """``[findings.throttle]``: throttled answers (-412, 429) during the storms, or over the run
    when there is none (finding ``throttle``, docs/upstream-reaction.md)."""

    warn_share: float = Field(default=0.1, gt=0, le=1)
    """Warn when this share of bilibili's answers were throttled (seed 003 §6.3: risk control
    firing markedly more often is the signal to fall back)."""
    fail_share: float = Field(default=0.5, gt=0, le=1)
    """Fail when this share were throttled: half the requests wasted, and every -412 on the
    single path stored as the video's status (reference §9 step 4)."""
    peak_window: DurationMs = duration_default("1m")
    """Bins of the peak throttled share (and of the storm's answers: every bin overlapping it)."""
    peak_min_answers: int = Field(default=10, ge=1)
    """A bin with fewer answers is too small a sample for the peak share."""


class DeliveryThresholds(Section):
    """``[findings.delivery]``: jobs given up by redelivery (finding ``delivery``)."""

    warn_dropped: int = Field(default=1, ge=1)
    """Warn when this many jobs were given up: failed after too many stalls, or dropped past
    the consumer's delivery cap (their work is not done)."""


class FindingsSection(Section):
    """``[findings]``: one sub-table per finding."""

    ticks: TickHealthThresholds = TickHealthThresholds()
    periodic: PeriodicThresholds = PeriodicThresholds()
    write_path: WritePathThresholds = WritePathThresholds()
    modes: ModesThresholds = ModesThresholds()
    lost_work: LostWorkThresholds = LostWorkThresholds()
    lateness: LatenessThresholds = LatenessThresholds()
    capacity: CapacityThresholds = CapacityThresholds()
    levelling: LevellingThresholds = LevellingThresholds()
    executed_load: ExecutedLoadThresholds = ExecutedLoadThresholds()
    milestones: MilestoneThresholds = MilestoneThresholds()
    staleness: StalenessThresholds = StalenessThresholds()
    throttle: ThrottleThresholds = ThrottleThresholds()
    delivery: DeliveryThresholds = DeliveryThresholds()
