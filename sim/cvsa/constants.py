"""Every fixed number of the CVSA scheduler that both profiles share, with where it comes from.

The numbers on which the design note and the deployed code *disagree* are switches
(:mod:`sim.cvsa.profile`); everything here is the same in both profiles, either because the note
states it or because the note is silent and the deployed code decides (reference §17). Each
constant is registered in :data:`CONSTANTS` with a description and a citation so that
``docs/profiles.md`` lists it next to the switches.

Durations are milliseconds (names end in ``_ms``), rates per hour end in ``_h`` or ``_vph``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, TypeVar

from sim.units import DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS, WEEK_MS


@dataclass(frozen=True)
class Constant:
    """One documented constant: its Python name, value, one-line meaning and citation."""

    name: str
    value: int | float | tuple[int, ...]
    doc: str
    cite: str


CONSTANTS: Final[list[Constant]] = []


_V = TypeVar("_V", int, float, tuple[int, ...])


def _c(name: str, value: _V, doc: str, cite: str) -> _V:
    CONSTANTS.append(Constant(name, value, doc, cite))
    return value


# --- Periodic jobs (BullMQ job schedulers, `every`) -------------------------------------------
SNAPSHOT_TICK_EVERY_MS: Final = _c(
    "SNAPSHOT_TICK_EVERY_MS",
    1 * SECOND_MS,
    "period of snapshotTick (single path)",
    "seed 000 调度扫描对比; reference §1.3",
)
BULK_TICK_EVERY_MS: Final = _c(
    "BULK_TICK_EVERY_MS",
    15 * SECOND_MS,
    "period of bulkSnapshotTick",
    "seed 000 调度扫描对比; reference §1.3",
)
MILESTONE_DISPATCH_EVERY_MS: Final = _c(
    "MILESTONE_DISPATCH_EVERY_MS",
    5 * MINUTE_MS,
    "period of dispatchMilestoneSnapshots",
    "seed 000 milestone 触发时机; reference §1.3",
)
REGULAR_DISPATCH_EVERY_MS: Final = _c(
    "REGULAR_DISPATCH_EVERY_MS",
    30 * MINUTE_MS,
    "period of dispatchRegularSnapshots",
    "seed 000 normal 触发时机; reference §1.3",
)
ARCHIVE_DISPATCH_EVERY_MS: Final = _c(
    "ARCHIVE_DISPATCH_EVERY_MS",
    2 * HOUR_MS,
    "period of dispatchArchiveSnapshots (BullMQ 5 runs it at start too)",
    "seed 000 archive 触发时机; reference §1.3, §1.4",
)
CLEANUP_EVERY_MS: Final = _c(
    "CLEANUP_EVERY_MS",
    2 * MINUTE_MS,
    "period of scheduleCleanup",
    "seed 000 超时清理; reference §1.3, §12",
)

# --- Tick queries -----------------------------------------------------------------------------
SINGLE_TICK_LOOKAHEAD_MS: Final = _c(
    "SINGLE_TICK_LOOKAHEAD_MS",
    1 * SECOND_MS,
    "snapshotTick takes rows with started_at <= now + this (bound inclusive)",
    "seed 000 执行逻辑; reference §7.1, §19.9",
)
SINGLE_TICK_LIMIT: Final = _c(
    "SINGLE_TICK_LIMIT", 10, "rows per snapshotTick (LIMIT)", "seed 000; reference §7.1"
)
BULK_TICK_LOOKAHEAD_MS: Final = _c(
    "BULK_TICK_LOOKAHEAD_MS",
    15 * SECOND_MS,
    "bulkSnapshotTick takes rows with started_at <= now + this (bound inclusive)",
    "reference §8.1, §19.9 (note: 每15秒)",
)
BULK_TICK_LIMIT: Final = _c(
    "BULK_TICK_LIMIT",
    1000,
    "rows per bulkSnapshotTick (LIMIT; normal first, then archive, then started_at)",
    "seed 000 调度扫描对比; reference §8.1",
)

# --- Queue priorities (BullMQ: lower number first; scheduler jobs have none and go first) -------
PRIORITY_MILESTONE: Final = _c(
    "PRIORITY_MILESTONE", 1, "snapshotVideo priority of a milestone row", "seed 000; reference §7.2"
)
PRIORITY_NEW: Final = _c(
    "PRIORITY_NEW", 3, "snapshotVideo priority of a new row", "seed 000; reference §7.2"
)
PRIORITY_ARCHIVE_SINGLE: Final = _c(
    "PRIORITY_ARCHIVE_SINGLE",
    3,
    "snapshotVideo priority of an archive row taken by the single tick (default priority)",
    "reference §7.2, §16.2",
)
PRIORITY_NORMAL_BULK: Final = _c(
    "PRIORITY_NORMAL_BULK",
    3,
    "bulkSnapshotVideo priority of a batch of normal rows",
    "seed 000; reference §8.2",
)

# --- Cleanup, dispatcher caps and locks ---------------------------------------------------------
CLEANUP_OVERDUE_MS: Final = _c(
    "CLEANUP_OVERDUE_MS",
    2 * MINUTE_MS,
    "cleanup deletes pending/processing rows with started_at < now - this",
    "seed 000 超时清理; reference §12",
)
REGULAR_DISPATCH_CAP_MS: Final = _c(
    "REGULAR_DISPATCH_CAP_MS",
    25 * MINUTE_MS,
    "dispatchRegularSnapshots stops once a run has lasted longer (switch dispatch_time_caps)",
    "reference §11.7",
)
ARCHIVE_DISPATCH_CAP_MS: Final = _c(
    "ARCHIVE_DISPATCH_CAP_MS",
    30 * MINUTE_MS,
    "dispatchArchiveSnapshots stops once a run has lasted longer (switch dispatch_time_caps)",
    "reference §13b.4",
)
DISPATCH_LOCK_TTL_MS: Final = _c(
    "DISPATCH_LOCK_TTL_MS",
    30 * MINUTE_MS,
    "TTL of the regular and archive dispatcher locks",
    "reference §11.7, §13b.1",
)

# --- Window counters ---------------------------------------------------------------------------
WINDOW_REFRESH_HORIZON_MS: Final = _c(
    "WINDOW_REFRESH_HORIZON_MS",
    14 * DAY_MS,
    "the refresh rebuilds windows in [start of the current UTC hour, + this)",
    "reference §6.3",
)

# --- Milestones --------------------------------------------------------------------------------
MILESTONE_ETA_LIMIT_H: Final = _c(
    "MILESTONE_ETA_LIMIT_H",
    144.0,
    "no milestone row when the adjusted ETA exceeds this (hours)",
    "seed 000 调度策略 (ETA < 144小时); reference §11.5, §9 step 7",
)
MILESTONE_DELAY_MIN_MS: Final = _c(
    "MILESTONE_DELAY_MIN_MS",
    2 * SECOND_MS,
    "lower clamp of a milestone delay",
    "seed 000 (限制在2秒~1.2小时之间); reference §11.5",
)
MILESTONE_DELAY_MAX_MS: Final = _c(
    "MILESTONE_DELAY_MAX_MS",
    72 * MINUTE_MS,
    "upper clamp of a milestone delay (1.2 h)",
    "seed 000; reference §11.5",
)
MILESTONE_CANDIDATE_ETA_H: Final = _c(
    "MILESTONE_CANDIDATE_ETA_H",
    2300.0,
    "a video whose eta-table ETA is below this (hours) is a milestone candidate (set C)",
    "seed 000 (ETA < 2300小时); reference §11.1",
)
ETA_DELTA: Final = _c(
    "ETA_DELTA",
    1e-5,
    "epsilon added to hours and speeds in getAdjustedShortTermETA",
    "reference §11.4",
)
BULK_ETA_DELTA: Final = _c(
    "BULK_ETA_DELTA",
    1e-4,
    "epsilon added to hours and speeds by the bulk worker's eta upsert",
    "reference §10.3",
)
ETA_LOOKBACKS_MS: Final = _c(
    "ETA_LOOKBACKS_MS",
    (3 * MINUTE_MS, 20 * MINUTE_MS, 1 * HOUR_MS, 3 * HOUR_MS, 6 * HOUR_MS, 72 * HOUR_MS),
    "lookbacks whose closest snapshots give the ETA speeds",
    "seed 000 (3分钟/20分钟/1小时/3小时/6小时/72小时前); reference §11.4",
)

# --- Regular (normal) rows ---------------------------------------------------------------------
REGULAR_LOOKBACK_MS: Final = _c(
    "REGULAR_LOOKBACK_MS",
    24 * HOUR_MS,
    "growth is measured from the last snapshot at or before now - this",
    "seed 000 (过去24小时); reference §11.6",
)
REGULAR_EPSILON_H: Final = _c(
    "REGULAR_EPSILON_H",
    0.001,
    "epsilon added to the span (hours) of the growth rate",
    "reference §11.6, §19.8",
)
REGULAR_TARGET_MAX_MS: Final = _c(
    "REGULAR_TARGET_MAX_MS",
    100_000 * WEEK_MS,
    "upper clamp of the deployed regular target, relative to now",
    "reference §11.7",
)

# --- New songs ---------------------------------------------------------------------------------
NEW_INITIAL_OFFSETS_MS: Final = _c(
    "NEW_INITIAL_OFFSETS_MS",
    (90 * SECOND_MS, 3 * MINUTE_MS, 5 * MINUTE_MS, 10 * MINUTE_MS),
    "the four forced new rows scheduled when a video is classified as a song",
    "seed 000 new 初始调度; reference §13.2",
)
COLLECT_SONGS_OFFSET_MS: Final = _c(
    "COLLECT_SONGS_OFFSET_MS",
    10 * MINUTE_MS,
    "collectSongs' one new row for a song classifyVideo missed (switch collect_songs_fallback)",
    "reference §13.2",
)
NEW_MAX_AGE_MS: Final = _c(
    "NEW_MAX_AGE_MS",
    48 * HOUR_MS,
    "new tracking stops once the video is older than this",
    "seed 000 (发布时间 < 48小时); reference §9 step 5",
)
NEW_MIN_VPH: Final = _c(
    "NEW_MIN_VPH",
    10.0,
    "new tracking stops below this average speed (views/hour)",
    "seed 000 (速度 > 10/小时); reference §9 step 5",
)

# --- Deployed retries (switch retry_policy = "cvsa") -------------------------------------------
SINGLE_RETRY_MILESTONE_MS: Final = _c(
    "SINGLE_RETRY_MILESTONE_MS",
    5 * SECOND_MS,
    "snapshotVideo retryInterval for milestone rows",
    "reference §9",
)
SINGLE_RETRY_OTHER_MS: Final = _c(
    "SINGLE_RETRY_OTHER_MS",
    2 * MINUTE_MS,
    "snapshotVideo retryInterval for new and archive rows",
    "reference §9",
)
BULK_BILI_RETRY_MS: Final = _c(
    "BULK_BILI_RETRY_MS",
    15 * SECOND_MS,
    "bulk batch with a bilibili code: normal rows again at now + this",
    "reference §10.2",
)
BULK_NO_PROXY_RETRY_MAX_MS: Final = _c(
    "BULK_NO_PROXY_RETRY_MAX_MS",
    30 * SECOND_MS,
    "bulk batch without a proxy: normal rows again at now + this x U(0, 1)",
    "reference §10.4",
)
