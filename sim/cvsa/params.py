"""The design's numbers: one :class:`Params` object, built from the profile, read by every rule.

Periods, look-aheads, limits, priorities, the cleanup timeout, the window length, the milestone
clamps and thresholds, the interval tables, the new-song offsets, the retry delays: every number
the rules use is a field here, with its meaning and its citation, and reaches the rules as an
argument (``params``), never as a module constant. Each profile has its own :class:`Params`
(:data:`DESIGN_PARAMS`, :data:`CVSA_2026_PARAMS`): most values are shared (the design note states
them, or is silent and the deployed code decides, reference §17); the numbers on which the note
and the deployed code disagree (the cap, the look-backs, ...) carry a ``basis`` saying why
``design`` has its value. Behaviours that differ are switches (:mod:`sim.cvsa.profile`). A
scenario's ``[design]`` table overrides any field (:func:`sim.cvsa.param_rules.check_params`
states the rules every combination must keep). ``docs/profiles.md`` lists every field
(:mod:`sim.scenario.profile_doc`).

Durations are milliseconds (names end in ``_ms``); hours end in ``_h``; rates per hour in
``_vph``. A field's metadata holds ``doc`` (one line) and ``cite``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Final, NamedTuple

from sim.units import DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS, WEEK_MS, Ms


def field_doc(doc: str, cite: str, basis: str = "") -> dict[str, str]:
    """A field's metadata: its meaning in one line, where it is specified, and why the
    ``design`` profile has its value where the profiles differ (``basis``)."""
    return {"doc": doc, "cite": cite, "basis": basis}


class FactorCoefficients(NamedTuple):
    """``getFactor``'s parameters (packages/crawler/mq/scheduling.ts; reference §11.4, §17)."""

    base: float
    """a: the logarithm's base."""
    numerator: float
    """b."""
    ceiling: float
    """c: the upper truncation bound."""
    offset: float
    """u: the note's "+ 0.601"."""
    knee: int
    """g: views to go above which the deployed formula switches branch."""
    floor: float
    """The lower truncation bound (equal to b; the raw value goes negative past 10^4.5)."""


class MilestoneLadder(NamedTuple):
    """The milestones and how near one a video must be to be watched (reference §11.1, §11.2).

    Seed 000: "10万、100万、200万……" (100k, 1M, then every 1M); the near bands are the deployed
    ``getVideosNearMilestone``'s (the note says only "接近")."""

    first: int
    """The first milestone (100k)."""
    step: int
    """Every multiple of this above the first is a milestone (1M, 2M, ...)."""
    strict_next: int
    """The ``eta`` table's strict ladder jumps from ``step`` straight to this (10M, §11.2)."""
    near_first: int
    """Set B: views in [first - this, first) (90k-100k)."""
    near_step: int
    """Set B: views in [M - this, M) below every multiple M of ``step`` (900k-1M, ...)."""
    wide_near_first: int
    """Set A (switch ``wide_milestone_candidates``): songs in [first - this, first) (60k-100k)
    or above ``step``."""


@dataclass(frozen=True, kw_only=True)
class Params:
    """Every number of the design (see the module docstring); defaults are the profiles'."""

    # --- periodic jobs (BullMQ job schedulers, `every`) ---
    snapshot_tick_every_ms: Ms = field(
        default=1 * SECOND_MS,
        metadata=field_doc(
            "period of snapshotTick (single path)", "seed 000 调度扫描对比; reference §1.3"
        ),
    )
    bulk_tick_every_ms: Ms = field(
        default=15 * SECOND_MS,
        metadata=field_doc("period of bulkSnapshotTick", "seed 000 调度扫描对比; reference §1.3"),
    )
    milestone_dispatch_every_ms: Ms = field(
        default=5 * MINUTE_MS,
        metadata=field_doc(
            "period of dispatchMilestoneSnapshots", "seed 000 milestone 触发时机; reference §1.3"
        ),
    )
    regular_dispatch_every_ms: Ms = field(
        default=30 * MINUTE_MS,
        metadata=field_doc(
            "period of dispatchRegularSnapshots", "seed 000 normal 触发时机; reference §1.3"
        ),
    )
    archive_dispatch_every_ms: Ms = field(
        default=2 * HOUR_MS,
        metadata=field_doc(
            "period of dispatchArchiveSnapshots (BullMQ 5 runs it at start too)",
            "seed 000 archive 触发时机; reference §1.3, §1.4",
        ),
    )
    cleanup_every_ms: Ms = field(
        default=2 * MINUTE_MS,
        metadata=field_doc("period of scheduleCleanup", "seed 000 超时清理; reference §1.3, §12"),
    )

    # --- tick queries ---
    single_tick_lookahead_ms: Ms = field(
        default=1 * SECOND_MS,
        metadata=field_doc(
            "snapshotTick takes rows with started_at <= now + this (bound inclusive)",
            "seed 000 执行逻辑; reference §7.1, §19.9",
        ),
    )
    single_tick_limit: int = field(
        default=10,
        metadata=field_doc("rows per snapshotTick (LIMIT)", "seed 000; reference §7.1"),
    )
    bulk_tick_lookahead_ms: Ms = field(
        default=15 * SECOND_MS,
        metadata=field_doc(
            "bulkSnapshotTick takes rows with started_at <= now + this (bound inclusive)",
            "reference §8.1, §19.9 (note: 每15秒)",
        ),
    )
    single_tick_lookback_ms: Ms | None = field(
        default=None,
        metadata=field_doc(
            "snapshotTick skips rows due longer ago than this (unbounded: all due rows)",
            "seed 000; reference §7.1, §16.1",
            "note: 未来1秒内到期 (no lower bound)",
        ),
    )
    bulk_tick_lookback_ms: Ms | None = field(
        default=None,
        metadata=field_doc(
            "bulkSnapshotTick skips rows due longer ago than this (unbounded: all due rows)",
            "reference §8.1, §16.3",
            "note: no lower bound",
        ),
    )
    bulk_batch_size: int = field(
        default=30,
        metadata=field_doc(
            "aids per bulkSnapshotVideo job (one API call)",
            "reference §8.2, §16.3, §16.14",
            "note silent: deployed",
        ),
    )
    bulk_tick_limit: int = field(
        default=1000,
        metadata=field_doc(
            "rows per bulkSnapshotTick (LIMIT; normal first, then archive, then started_at)",
            "seed 000 调度扫描对比; reference §8.1",
        ),
    )

    # --- queue priorities (BullMQ: lower number first) ---
    priority_milestone: int = field(
        default=1,
        metadata=field_doc("snapshotVideo priority of a milestone row", "seed 000; reference §7.2"),
    )
    priority_new: int = field(
        default=3,
        metadata=field_doc("snapshotVideo priority of a new row", "seed 000; reference §7.2"),
    )
    priority_archive_single: int = field(
        default=3,
        metadata=field_doc(
            "snapshotVideo priority of an archive row taken by the single tick (default priority)",
            "reference §7.2, §16.2",
        ),
    )
    priority_normal_bulk: int = field(
        default=3,
        metadata=field_doc(
            "bulkSnapshotVideo priority of a batch of normal rows", "seed 000; reference §8.2"
        ),
    )
    archive_bulk_priority: int = field(
        default=2,
        metadata=field_doc(
            "BullMQ priority of a bulk job holding archive rows",
            "seed 000; reference §8.2, §16.2",
            "note: archive=2",
        ),
    )

    # --- cleanup, dispatcher caps and locks ---
    cleanup_overdue_ms: Ms = field(
        default=2 * MINUTE_MS,
        metadata=field_doc(
            "cleanup deletes pending/processing rows with started_at < now - this",
            "seed 000 超时清理; reference §12",
        ),
    )
    regular_dispatch_cap_ms: Ms = field(
        default=25 * MINUTE_MS,
        metadata=field_doc(
            "dispatchRegularSnapshots stops once a run has lasted longer "
            "(switch dispatch_time_caps)",
            "reference §11.7",
        ),
    )
    archive_dispatch_cap_ms: Ms = field(
        default=30 * MINUTE_MS,
        metadata=field_doc(
            "dispatchArchiveSnapshots stops once a run has lasted longer "
            "(switch dispatch_time_caps)",
            "reference §13b.4",
        ),
    )
    dispatch_lock_ttl_ms: Ms = field(
        default=30 * MINUTE_MS,
        metadata=field_doc(
            "TTL of the regular and archive dispatcher locks", "reference §11.7, §13b.1"
        ),
    )

    # --- windows ---
    window_ms: Ms = field(
        default=5 * MINUTE_MS,
        metadata=field_doc(
            "length of a load-levelling window (started_at_5min_utc); the jitter spans one window",
            "seed 000 adjustSnapshotTime (5分钟); reference §6.1, §6.2",
        ),
    )
    window_cap: int = field(
        default=1000,
        metadata=field_doc(
            "max rows per window that adjustSnapshotTime reserves",
            "seed 000 (每个5分钟时间窗口内不超过1000个快照); reference §6.2, §16.9",
            "note: 不超过1000",
        ),
    )
    # The note says "10天（4032个窗口）"; 4032 windows are 14 days. The issue fixes the count.
    forward_search_windows: int = field(
        default=4032,
        metadata=field_doc(
            "windows probed forward from the target's window (4032 = 14 d; 2880 = the "
            "note's literal '10 days')",
            "seed 000; reference §6.2, §16.9, §19.4",
            "note: its count 4032 (its '10天' would be 2880)",
        ),
    )
    backward_search_windows: int = field(
        default=6,
        metadata=field_doc(
            "fallback windows re-probed backwards after a failed forward search (offsets 0, "
            "-1, ...)",
            "seed 000; reference §6.2, §19.4",
            "note: for i = 0 to 5",
        ),
    )
    window_refresh_every_ms: Ms | None = field(
        default=None,
        metadata=field_doc(
            "period of the window-count rebuild from pending rows (never = only at start-up and "
            "on demand)",
            "reference §6.3",
            "issue text (the note describes no refresh)",
        ),
    )
    window_refresh_horizon_ms: Ms = field(
        default=14 * DAY_MS,
        metadata=field_doc(
            "the refresh rebuilds windows in [start of the current UTC hour, + this)",
            "reference §6.3",
        ),
    )

    # --- milestones ---
    milestone_ladder: MilestoneLadder = field(
        default=MilestoneLadder(
            first=100_000,
            step=1_000_000,
            strict_next=10_000_000,
            near_first=10_000,
            near_step=100_000,
            wide_near_first=40_000,
        ),
        metadata=field_doc(
            "the milestones (first, then every step; the eta table's strict ladder jumps to "
            "strict_next) and the bands below them whose videos are candidates",
            "seed 000 (10万、100万、200万……); reference §11.1, §11.2",
        ),
    )
    milestone_eta_limit_h: float = field(
        default=144.0,
        metadata=field_doc(
            "no milestone row when the adjusted ETA exceeds this (hours)",
            "seed 000 调度策略 (ETA < 144小时); reference §11.5, §9 step 7",
        ),
    )
    milestone_delay_min_ms: Ms = field(
        default=2 * SECOND_MS,
        metadata=field_doc(
            "lower clamp of a milestone delay", "seed 000 (限制在2秒~1.2小时之间); reference §11.5"
        ),
    )
    milestone_delay_max_ms: Ms = field(
        default=72 * MINUTE_MS,
        metadata=field_doc("upper clamp of a milestone delay (1.2 h)", "seed 000; reference §11.5"),
    )
    milestone_candidate_eta_h: float = field(
        default=2300.0,
        metadata=field_doc(
            "a video whose eta-table ETA is below this (hours) is a milestone candidate (set C)",
            "seed 000 (ETA < 2300小时); reference §11.1",
        ),
    )
    eta_delta: float = field(
        default=1e-5,
        metadata=field_doc(
            "epsilon added to hours and speeds in getAdjustedShortTermETA", "reference §11.4"
        ),
    )
    bulk_eta_delta: float = field(
        default=1e-4,
        metadata=field_doc(
            "epsilon added to hours and speeds by the bulk worker's eta upsert", "reference §10.3"
        ),
    )
    eta_lookbacks_ms: tuple[Ms, ...] = field(
        default=(
            3 * MINUTE_MS,
            20 * MINUTE_MS,
            1 * HOUR_MS,
            3 * HOUR_MS,
            6 * HOUR_MS,
            72 * HOUR_MS,
        ),
        metadata=field_doc(
            "lookbacks whose closest snapshots give the ETA speeds",
            "seed 000 (3分钟/20分钟/1小时/3小时/6小时/72小时前); reference §11.4",
        ),
    )
    milestone_factor: FactorCoefficients = field(
        default=FactorCoefficients(
            base=1.054, numerator=4.5, ceiling=100.0, offset=0.601, knee=455, floor=4.5
        ),
        metadata=field_doc(
            "acceleration factor: log(b / log10(x + 100), a) + u truncated to [floor, c]; the "
            "deployed piecewise form takes log(b / log10(x + 1), a) above g views to go",
            "seed 000 (log(4.5 / log(x + 100), 1.054) + 0.601); reference §11.4, §17",
        ),
    )

    # --- regular (normal) rows ---
    regular_lookback_ms: Ms = field(
        default=24 * HOUR_MS,
        metadata=field_doc(
            "growth is measured from the last snapshot at or before now - this",
            "seed 000 (过去24小时); reference §11.6",
        ),
    )
    regular_epsilon_h: float = field(
        default=0.001,
        metadata=field_doc(
            "epsilon added to the span (hours) of the growth rate", "reference §11.6, §19.8"
        ),
    )
    regular_still_interval_h: int = field(
        default=72,
        metadata=field_doc(
            "regular interval (hours) of a video whose views did not change",
            "seed 000 (= 0 → 72小时); reference §11.6",
        ),
    )
    regular_interval_bands: tuple[tuple[float, int], ...] = field(
        default=((6.0, 36), (120.0, 24), (320.0, 12)),
        metadata=field_doc(
            "(views per day below, interval in hours), from the slowest band up",
            "seed 000 (< 6/天 → 36, 6–119 → 24, 120–319 → 12); reference §11.6, §19.8",
        ),
    )
    regular_fastest_interval_h: int = field(
        default=6,
        metadata=field_doc(
            "regular interval (hours) at or above the last band",
            "seed 000 (≥ 320/天 → 6小时); reference §11.6",
        ),
    )
    regular_target_max_ms: Ms = field(
        default=100_000 * WEEK_MS,
        metadata=field_doc(
            "upper clamp of the deployed regular target, relative to now", "reference §11.7"
        ),
    )

    # --- new songs ---
    new_initial_offsets_ms: tuple[Ms, ...] = field(
        default=(90 * SECOND_MS, 3 * MINUTE_MS, 5 * MINUTE_MS, 10 * MINUTE_MS),
        metadata=field_doc(
            "the four forced new rows scheduled when a video is classified as a song",
            "seed 000 new 初始调度; reference §13.2",
        ),
    )
    collect_songs_offset_ms: Ms = field(
        default=10 * MINUTE_MS,
        metadata=field_doc(
            "collectSongs' one new row for a song classifyVideo missed "
            "(switch collect_songs_fallback)",
            "reference §13.2",
        ),
    )
    new_speed_floor_after_ms: Ms = field(
        default=0,
        metadata=field_doc(
            "the new continuation's speed floor applies only once the video is older than this",
            "seed 000; reference §9 step 5, §16.4",
            "note: 速度 > 10/小时 always",
        ),
    )
    new_max_age_ms: Ms = field(
        default=48 * HOUR_MS,
        metadata=field_doc(
            "new tracking stops once the video is older than this",
            "seed 000 (发布时间 < 48小时); reference §9 step 5",
        ),
    )
    new_min_vph: float = field(
        default=10.0,
        metadata=field_doc(
            "new tracking stops below this average speed (views/hour)",
            "seed 000 (速度 > 10/小时); reference §9 step 5",
        ),
    )
    new_interval_ladder: tuple[tuple[float, Ms], ...] = field(
        default=((1000.0, 15 * MINUTE_MS), (100.0, 60 * MINUTE_MS), (50.0, 120 * MINUTE_MS)),
        metadata=field_doc(
            "(views/hour strictly above, next new row after), from the fastest band down",
            "reference §9 step 5 (note silent)",
        ),
    )
    new_interval_default_ms: Ms = field(
        default=240 * MINUTE_MS,
        metadata=field_doc(
            "next new row after this when no band of the ladder applies",
            "reference §9 step 5 (note silent)",
        ),
    )

    # --- archive calendar (JavaScript getDay(): Sunday = 0) ---
    archive_song_weekday: int = field(
        default=6,
        metadata=field_doc(
            "songs: an archive row on the next such local weekday",
            "seed 000 (下周六); reference §13b.2",
        ),
    )
    archive_nonsong_weekday: int = field(
        default=1,
        metadata=field_doc(
            "other videos: uniform over the week from the next such local weekday",
            "seed 000 (下周一到再下周一); reference §13b.3",
        ),
    )

    # --- deployed retries (switch retry_policy = "cvsa") ---
    single_retry_milestone_ms: Ms = field(
        default=5 * SECOND_MS,
        metadata=field_doc("snapshotVideo retryInterval for milestone rows", "reference §9"),
    )
    single_retry_other_ms: Ms = field(
        default=2 * MINUTE_MS,
        metadata=field_doc("snapshotVideo retryInterval for new and archive rows", "reference §9"),
    )
    bulk_bili_retry_ms: Ms = field(
        default=15 * SECOND_MS,
        metadata=field_doc(
            "bulk batch with a bilibili code: normal rows again at now + this", "reference §10.2"
        ),
    )
    bulk_no_proxy_retry_max_ms: Ms = field(
        default=30 * SECOND_MS,
        metadata=field_doc(
            "bulk batch without a proxy: normal rows again at now + this x U(0, 1)",
            "reference §10.4",
        ),
    )


DESIGN_PARAMS: Final = Params()
"""The ``design`` profile's numbers (the defaults above)."""

CVSA_2026_PARAMS: Final = replace(
    DESIGN_PARAMS,
    window_cap=3000,
    window_refresh_every_ms=5 * MINUTE_MS,
    single_tick_lookback_ms=1 * MINUTE_MS,
    bulk_tick_lookback_ms=2 * MINUTE_MS,
    archive_bulk_priority=3,
    new_speed_floor_after_ms=2 * HOUR_MS,
)
"""The ``cvsa-2026`` profile's numbers: the deployed code at 421da02 (reference §16)."""

DEFAULT_PARAMS: Final = DESIGN_PARAMS
"""The numbers a bare model uses (tests, helpers): the ``design`` profile's."""
