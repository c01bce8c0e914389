"""Event kinds of the CVSA scheduler model (codes 100-129; seed 001's job-table runner has 130-139
in :mod:`sim.events.table_kinds`) and the word tables they use.

The word tables are declared here, with the kinds, so that every log header carries them however
the process imported ``sim``. The tables of schedule types, statuses and upstream error kinds are
derived from the enums of :mod:`sim.cvsa.vocabulary` (a word's code is its position there).

Every state change of a schedule row, a window count or a snapshot is one record here (issue 4,
"Observability"); the reports, plots and invariant checks are reducers over them. Words (types,
statuses, reasons) are stored as codes of the enums below, whose tables go into every log header.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from sim.cvsa.vocabulary import ScheduleRule, ScheduleStatus, ScheduleType, UpstreamErrorKind
from sim.events.schema import enum, event

SNAPSHOT_TYPE: Final = enum("snapshot_type", *(t.value for t in ScheduleType))
SCHEDULE_STATUS: Final = enum("schedule_status", *(s.value for s in ScheduleStatus))
SCHEDULE_RULE: Final = enum("schedule_rule", *(r.value for r in ScheduleRule))
NOT_CREATED: Final = enum(
    "not_created",
    "duplicate_active",  # §5 step 3: an active row of the type exists and force is false
    "milestone_not_earlier",  # §5 step 2: the active milestone row is already as early
)
SKIP_REASON: Final = enum(
    "skip_reason",
    "aid_processing",  # §7.2: another row of the video is processing
    "row_gone",  # §9 step 1 / §10.1: cleanup deleted the row before the job ran
    "bili_status",  # §9 step 2: bilibili_metadata.status != 0 blocks the single path
)
WINDOW_CAUSE: Final = enum(
    "window_cause",
    "status_change",  # §6.4: a pending row left pending
    "move",  # §5 step 2: a pending milestone row moved to another window
    "cleanup",  # design profile: cleanup releases the windows of deleted pending rows
)
UPSTREAM_ERROR: Final = enum("upstream_error", *(k.value for k in UpstreamErrorKind))
PLACEMENT: Final = enum(
    "placement",
    "exact",  # milestone/new: the target itself, +1 on its window with no cap check (§5 step 4)
    "forward",  # adjustSnapshotTime found room searching forward (§6.2 step 2)
    "fallback",  # ... only in the backward fallback (§6.2 step 3)
    "exhausted",  # every window full: the target, nothing reserved (§6.2 step 4)
    "unadjusted",  # adjustTime = false: the target, +1 without a cap check
)
PROXY_OUTCOME: Final = enum(
    "proxy_outcome",
    "ok",
    "no_proxy",
    "fetch_error",
    "timeout",
    "http_5xx",
    "http_429",
    "throttled",
    "http_4xx",  # appended (issue 28): a plain 4xx answer
)
UPSTREAM_CALL: Final = enum("upstream_call", "single", "bulk")
LOCK_OUTCOME: Final = enum(
    "lock_outcome",
    "busy",  # §11.7 step 1, §13b.1: the lock was held: this run did nothing
    "released_other",  # ... and its finally block released the other run's lock (the bug)
)
FAULT_KIND: Final = enum(
    "fault_kind",
    "upstream_outage",
    "throttling_storm",
    "latency_spike",
    "counter_loss",
    "scheduler_restart",
    "slow_database",
    "clock_skew",
    "second_instance",
    "risk_control_storm",  # appended (issue 28): bilibili's own tolerance divided
)
NO_WINDOW: Final = -1
"""``window_ms`` of a creation that reserved nothing (every window full, §6.2 step 4)."""


@event(100)
class ScheduleCreated(NamedTuple):
    """A schedule row was inserted (§5 step 5). ``window_ms`` is the window whose count it took
    (``NO_WINDOW`` if none) and ``window_count`` that count afterwards; ``probes`` = windows
    probed (HINCRBY +1, then -1 if full; 1 for milestone/new); ``placement``: PLACEMENT;
    ``rule``: SCHEDULE_RULE, the rule that asked for the row."""

    seq: int
    t_ms: int
    schedule: int
    aid: int
    type: int
    requested_ms: int
    due_ms: int
    window_ms: int
    window_count: int
    probes: int
    placement: int
    forced: int
    rule: int


@event(101)
class ScheduleNotCreated(NamedTuple):
    """``scheduleSnapshot`` returned without inserting (``reason``: NOT_CREATED; ``rule``:
    SCHEDULE_RULE, the rule that asked)."""

    seq: int
    t_ms: int
    aid: int
    type: int
    requested_ms: int
    reason: int
    rule: int


@event(102)
class ScheduleMoved(NamedTuple):
    """An active milestone row was moved earlier in one transaction (§5 step 2); if it was pending
    its old window was released (a ``WindowReleased``) and its new window counts ``window_count``
    (-1 when it was processing and no count moved)."""

    seq: int
    t_ms: int
    schedule: int
    aid: int
    from_ms: int
    to_ms: int
    was_pending: int
    window_count: int


@event(103)
class ScheduleDispatched(NamedTuple):
    """A tick put the row into a snapshot job (``job``) with ``priority`` (§7.2, §8.2)."""

    seq: int
    t_ms: int
    schedule: int
    aid: int
    type: int
    due_ms: int
    job: int
    priority: int


@event(104)
class ScheduleSkipped(NamedTuple):
    """A tick or worker passed over the row (``reason``: SKIP_REASON)."""

    seq: int
    t_ms: int
    schedule: int
    aid: int
    type: int
    due_ms: int
    reason: int


@event(114)
class ScheduleStarted(NamedTuple):
    """A snapshot worker took up the row (its job started and the row still existed)."""

    seq: int
    t_ms: int
    schedule: int
    aid: int
    type: int
    due_ms: int
    job: int


@event(115)
class StrayStatusChange(NamedTuple):
    """A row that no job handles changed status: the bulk tick passed aids as schedule ids, so
    the row whose id equals an aid was set ``to_status`` (reference §8.3; cvsa-2026 only)."""

    seq: int
    t_ms: int
    schedule: int
    aid: int
    type: int
    due_ms: int
    from_status: int
    to_status: int


@event(105)
class ScheduleFinished(NamedTuple):
    """A worker set the row's final ``status`` (SCHEDULE_STATUS) after fetching (§9, §10)."""

    seq: int
    t_ms: int
    schedule: int
    aid: int
    type: int
    due_ms: int
    status: int


@event(106)
class ScheduleDeleted(NamedTuple):
    """``scheduleCleanup`` deleted an overdue pending or processing row (§12)."""

    seq: int
    t_ms: int
    schedule: int
    aid: int
    type: int
    due_ms: int
    status: int


@event(107)
class WindowReleased(NamedTuple):
    """A window count was decremented (``cause``: WINDOW_CAUSE); ``value`` is the new count."""

    seq: int
    t_ms: int
    window_ms: int
    schedule: int
    cause: int
    value: int


@event(108)
class WindowsRebuilt(NamedTuple):
    """The window-count hash was rebuilt from pending rows over ``[from_ms, to_ms)`` (§6.3)."""

    seq: int
    t_ms: int
    from_ms: int
    to_ms: int
    windows: int
    total: int


@event(109)
class SnapshotTaken(NamedTuple):
    """A view count was written at ``t_ms``; ``views`` is the count at ``taken_ms``, the server time
    of the answer (§2.2). ``duplicate`` = 1: unique (aid, time) refused it. ``schedule`` and
    ``due_ms`` are -1 for snapshots no schedule asked for (discovery)."""

    seq: int
    t_ms: int
    aid: int
    schedule: int
    type: int
    due_ms: int
    views: int
    duplicate: int
    taken_ms: int


@event(110)
class UpstreamFailed(NamedTuple):
    """An upstream call failed (``kind``: UPSTREAM_ERROR; ``code``: bilibili code if any)."""

    seq: int
    t_ms: int
    job: int
    aids: int
    kind: int
    code: int


@event(111)
class VideoDiscovered(NamedTuple):
    """A new video entered ``bilibili_metadata`` with its first snapshot (§13.1)."""

    seq: int
    t_ms: int
    aid: int
    published_ms: int


@event(112)
class SongClassified(NamedTuple):
    """The classifier labelled a video a song; it joined ``songs`` (§13.2)."""

    seq: int
    t_ms: int
    aid: int
    published_ms: int


@event(113)
class RetryScheduled(NamedTuple):
    """The seed-004 policy will retry a failed upstream call after ``delay_ms`` (attempt 1 is the
    first retry)."""

    seq: int
    t_ms: int
    job: int
    aid: int
    attempt: int
    delay_ms: int
    kind: int


@event(116)
class QueryCounts(NamedTuple):
    """The SQL-equivalent queries a job ran (``name``: its job name): reads, writes, and window-
    counter round trips. Idle periodic iterations log none; each ran one read (its due query)."""

    seq: int
    t_ms: int
    name: int
    job: int
    reads: int
    writes: int
    redis_ops: int


@event(117)
class UpstreamRequest(NamedTuple):
    """One request to bilibili through a proxy (``proxy``: its name; -1 when every proxy was
    rate-limited), ``call``: UPSTREAM_CALL, for ``aids`` videos, ``latency_ms`` long, ending in
    ``outcome`` (PROXY_OUTCOME). Logged by the simulated network (reference §14)."""

    seq: int
    t_ms: int
    proxy: int
    call: int
    aids: int
    latency_ms: int
    outcome: int


@event(118)
class PortCall(NamedTuple):
    """Load mode only: one call of a port method (``method``: "store.due_schedules", ...) took
    ``wall_us`` microseconds of wall time on the real backend."""

    seq: int
    t_ms: int
    method: int
    wall_us: int


@event(119)
class JobTimed(NamedTuple):
    """Load mode only: a job (``name``; periodic iterations have ``job`` = -1) started
    ``lag_ms`` virtual ms after it was due and ran ``wall_us`` microseconds; ``budget_us`` is its
    period in wall time at the run's speed (0 for jobs that are not periodic). A periodic job
    whose ``wall_us`` exceeds ``budget_us`` overran its period."""

    seq: int
    t_ms: int
    name: int
    job: int
    lag_ms: int
    wall_us: int
    budget_us: int


@event(120)
class DispatcherLocked(NamedTuple):
    """A dispatcher run found its lock (``name``: the lock's name) held by another run and did
    nothing (``outcome`` busy), or, with the release bug, also released that run's lock
    (``outcome`` released_other). Runs that take and release their own lock log nothing."""

    seq: int
    t_ms: int
    name: int
    outcome: int


@event(121)
class HistoryLoaded(NamedTuple):
    """A snapshot the video already had when the run started (``[scheduler] history``): written
    at set-up, ``t_ms`` the run's start, ``taken_ms`` the instant it describes. With these the
    inputs of every ETA and interval are in the log, not only the snapshots the run took."""

    seq: int
    t_ms: int
    aid: int
    taken_ms: int
    views: int
