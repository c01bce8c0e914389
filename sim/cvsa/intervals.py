"""Regular intervals, the regular dispatch target, and the new-song continuation.

Intervals are returned in the unit the deployed code uses (hours for regular rows, reference
§11.6) or in milliseconds where the caller adds them to ``now`` (new rows, §9 step 5). All
arithmetic mirrors the TypeScript expression order (:mod:`sim.cvsa.jsmath`); the boundary cases of
reference §19.8 depend on it.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.cvsa import jsmath
from sim.cvsa.params import Params
from sim.cvsa.profile import Switches
from sim.cvsa.snapshots import Snapshot, find_closest_snapshot, find_snapshot_before
from sim.units import HOUR_MS, Ms


def regular_interval_hours(older: Snapshot | None, latest: Snapshot | None, params: Params) -> int:
    """``getRegularSnapshotInterval``: hours until the next ``normal`` snapshot (§11.6, §19.8).

    Seed 000's table (= 0 → 72 h, < 6/day → 36 h, 6–119 → 24 h, 120–319 → 12 h, ≥ 320 → 6 h) on
    the growth from ``older`` to ``latest``, normalised per day as
    ``Δv / (Δh + 0.001) * 24``. Degenerate inputs give **0 h** (no baseline, or both snapshots at
    the same instant). Negative growth falls in the < 6/day band (36 h). Because of the 0.001 h
    epsilon, exactly 6/120/320 per day over 23.999 h reach the next band, while over exactly 24 h
    they stay just below it (§19.8).

    Args:
        older: the last snapshot at or before ``now - 24 h`` (``find_snapshot_before``), or if
            there is none the one closest to that instant (``find_closest_snapshot``).
        latest: the latest snapshot.
        params: the table (``regular_still_interval_h``, ``regular_interval_bands``,
            ``regular_fastest_interval_h``) and ``regular_epsilon_h``.
    """
    if older is None or latest is None or older.created_at_ms == latest.created_at_ms:
        return 0
    delta_hours = (latest.created_at_ms - older.created_at_ms) / HOUR_MS
    delta_views = latest.views - older.views
    if delta_views == 0:
        return params.regular_still_interval_h
    per_day = jsmath.div(delta_views, delta_hours + params.regular_epsilon_h) * 24
    for below, interval_h in params.regular_interval_bands:
        if per_day < below:
            return interval_h
    return params.regular_fastest_interval_h


def regular_interval_for(snapshots: Sequence[Snapshot], now_ms: Ms, params: Params) -> int:
    """:func:`regular_interval_hours` with the deployed choice of snapshots (reference §11.6).

    The baseline is the last snapshot at or before ``now - 24 h``, or if there is none the one
    closest to that instant; the other end is the latest snapshot. A video whose latest snapshot
    is over 24 h old gets the same row at both ends, hence 0 h (the re-poll loop of §10.3, Q3).

    Args:
        snapshots: one video's snapshots in ascending ``created_at`` order.
        now_ms: the caller's clock.
        params: ``regular_lookback_ms`` and the interval table.
    """
    at = now_ms - params.regular_lookback_ms
    older = find_snapshot_before(snapshots, at)
    if older is None:
        older = find_closest_snapshot(snapshots, at)
    return regular_interval_hours(older, snapshots[-1] if snapshots else None, params)


def regular_dispatch_target_ms(
    now_ms: Ms, last_snapshot_ms: Ms | None, interval_h: int, switches: Switches, params: Params
) -> Ms:
    """The target time ``dispatchRegularSnapshots`` passes to ``scheduleSnapshot`` (§11.7).

    Design (seed 000: "根据过去24小时的播放量增速决定 … 快照间隔"): ``now + interval``.
    Deployed (switch ``regular_target_from_last_snapshot``, §16.8): the latest snapshot time
    (``now`` when there is none) plus the interval, clamped to [now + 1 ms, now + 100000 weeks].

    Args:
        now_ms: the dispatcher's clock.
        last_snapshot_ms: ``latest_video_snapshot.time``, or None.
        interval_h: :func:`regular_interval_hours`.
        switches: the run's switches.
        params: ``regular_target_max_ms``.
    """
    if not switches.regular_target_from_last_snapshot:
        return now_ms + interval_h * HOUR_MS
    last = now_ms if last_snapshot_ms is None else last_snapshot_ms
    return min(max(last + interval_h * HOUR_MS, now_ms + 1), now_ms + params.regular_target_max_ms)


def new_continuation_ms(age_ms: Ms, views: int, switches: Switches, params: Params) -> Ms | None:
    """After a ``new`` snapshot: the delay to the next ``new`` row, or None to stop (§9 step 5).

    Seed 000: "发布时间 < 48小时且速度 > 10/小时 → 继续调度下一次 new". Both profiles measure speed
    as the **average since publication** (``views / age``) — the note is silent on which speed,
    so the deployed one applies. The 10 views/h floor applies once the age exceeds
    ``params.new_speed_floor_after_ms`` (0 in design; 2 h deployed, §16.4). The bounds: design
    (switch ``new_stop_at_bounds``) continues only while age < 48 h and speed > 10 views/h, as
    the note says; the deployed code stops only when age > 48 h or speed < 10 views/h, so exactly
    48 h and exactly 10 views/h continue (§9 step 5). The interval is 240 min, 120 above 50
    views/h, 60 above 100 and 15 above 1000 (note silent; deployed ladder).

    Args:
        age_ms: snapshot time minus ``songs.published_at``.
        views: the snapshot's views.
        switches: the run's switches.
        params: the bounds (``new_max_age_ms``, ``new_min_vph``) and the interval ladder.
    """
    age_h = age_ms / HOUR_MS
    vph = jsmath.div(views, age_h)  # age 0 gives inf (or NaN for 0 views), as in JavaScript
    floor_applies = age_ms > params.new_speed_floor_after_ms
    max_age, min_vph = params.new_max_age_ms, params.new_min_vph
    if switches.new_stop_at_bounds:  # seed 000: continue only if < 48 h and > 10 views/h
        if age_ms >= max_age or (floor_applies and not vph > min_vph):
            return None
    elif age_ms > max_age or (floor_applies and vph < min_vph):
        return None  # reference §9 step 5: "age > 48 h", "age > 2 h and vph < 10"
    for above, interval in params.new_interval_ladder:
        if vph > above:
            return interval
    return params.new_interval_default_ms
