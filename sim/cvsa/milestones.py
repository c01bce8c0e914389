"""Milestone rules: the ladder, the acceleration factor, the ETA and who is a candidate.

Rules of this module (the reference sections are the authority; the design note, seed 000, only
gives the shape):

* Views are integers; ETAs are float hours; delays returned to callers are whole milliseconds,
  because the deployed code hands ``now + delay`` to a ``Date``, which drops the fraction
  (reference §19.1).
* Arithmetic follows the TypeScript expressions operation by operation (:mod:`sim.cvsa.jsmath`),
  so boundary cases come out as the deployed code computes them.
* Nothing here reads the database: callers pass the snapshots they found (reference §11.3 lookups
  are in :mod:`sim.cvsa.snapshots`).
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Sequence
from typing import Final, NamedTuple

from sim.cvsa import jsmath
from sim.cvsa.constants import (
    ETA_DELTA,
    ETA_LOOKBACKS_MS,
    MILESTONE_CANDIDATE_ETA_H,
    MILESTONE_DELAY_MAX_MS,
    MILESTONE_DELAY_MIN_MS,
    MILESTONE_ETA_LIMIT_H,
)
from sim.cvsa.snapshots import Snapshot, find_closest_snapshot
from sim.ports import new_record
from sim.units import HOUR_MS, Ms

MILLION: Final = 1_000_000

# getFactor's parameters (packages/crawler/mq/scheduling.ts; reference §11.4, §17).
FACTOR_BASE: Final = 1.054  # a
FACTOR_NUMERATOR: Final = 4.5  # b
FACTOR_CEILING: Final = 100.0  # c
FACTOR_OFFSET: Final = 0.601  # u: the note's "+ 0.601"
FACTOR_KNEE: Final = 455  # g: piecewise branch point
# The lower truncation bound (equal to b; the raw value goes negative past 10^4.5).
FACTOR_FLOOR: Final = 4.5


def closest_milestone(views: int, strict: bool = False) -> int:
    """The next milestone at or above ``views`` (``closestMilestone``, reference §11.2).

    The ladder is 100k, 1M, then every 1M (seed 000: "10万、100万、200万……"). Non-strict (the
    default, used for scheduling) maps an exact multiple of 1M to itself, so views-to-go is 0;
    100 000 itself maps to 1M because the test is ``views < 100000``. Strict (used for the
    ``eta`` table) jumps from 1M straight to 10M: any views in [1M, 10M) map to 10M.

    Args:
        views: current view count.
        strict: the ``eta``-table ladder (100k, 1M, 10M, 11M, ...).
    """
    if views < 100_000:
        return 100_000
    if views < MILLION:
        return MILLION
    if views < 10 * MILLION and strict:
        return 10 * MILLION
    return -(-views // MILLION) * MILLION  # ceil(views / 1e6) * 1e6, exact in integers


@functools.lru_cache(maxsize=1 << 16)
def milestone_factor(x: float, piecewise: bool) -> float:
    """The acceleration factor for ``x`` views to go, truncated to [4.5, 100] (reference §11.4).

    Design (seed 000): ``log(4.5 / log(x + 100), 1.054) + 0.601`` for every ``x``.
    Deployed (``piecewise``): that formula only for ``x <= 455``; above it
    ``log(4.5 / log10(x + 1), 1.054)`` with **no** +0.601 (reference §16.6). The inner log is
    base 10 in both. Both truncate to [4.5, 100]: the note is silent on bounds, so the deployed
    ones apply. Reference values: f(0)=16.02, f(100)=13.35, f(455)=10.00, f(1000)=7.71 (piecewise).

    Args:
        x: views to go (``closest_milestone(views) - views``), never negative.
        piecewise: use the deployed two-branch formula (switch ``piecewise_factor``).

    Raises:
        ValueError: if ``x`` is negative (views never exceed their closest milestone).

    A pure function of an integer that the milestone dispatcher evaluates for every candidate
    every five minutes, hence the cache.
    """
    if x < 0:
        raise ValueError(f"views to go must be >= 0 (got {x!r})")
    if piecewise and x > FACTOR_KNEE:
        raw = jsmath.log(FACTOR_NUMERATOR / jsmath.log(x + 1), FACTOR_BASE)
    else:
        raw = jsmath.log(FACTOR_NUMERATOR / jsmath.log(x + 100), FACTOR_BASE) + FACTOR_OFFSET
    return jsmath.truncate(raw, FACTOR_FLOOR, FACTOR_CEILING)


class EtaEstimate(NamedTuple):
    """What ``getAdjustedShortTermETA`` computes: the adjusted ETA and the speed behind it."""

    eta_hours: float
    """Adjusted hours to the next (non-strict) milestone; ``inf`` when no speed was usable."""
    max_speed: float
    """Views/hour of the lookback that gave the smallest ETA; 0.0 when none did."""


def adjusted_eta_hours(
    latest: Snapshot | None,
    lookback_snapshots: Sequence[Snapshot | None],
    piecewise: bool,
) -> EtaEstimate:
    """``getAdjustedShortTermETA`` without its queries (reference §11.4, §19.5, §19.6).

    With X = ``closest_milestone(latest.views) - latest.views`` and f = ``milestone_factor(X)``,
    each lookback snapshot S with Δv = L.views − S.views > 0 gives
    ``speed = Δv / (Δh + 1e-5)``, ``eta = X / (speed + 1e-5)`` and ``adj = eta / f``; the
    smallest ``adj`` wins (a strict ``<``, so among equal ETAs the earliest lookback's speed is
    kept). Lookbacks with Δv <= 0 (including S = L) are skipped; if all are skipped the ETA is
    ``+inf`` even with a single snapshot (§19.5). Views exactly on a milestone give X = 0 and an
    ETA of 0 as soon as one lookback has growth (§19.6).

    Without any snapshot the deployed function returns 0 **and writes no eta row**: this returns
    ``EtaEstimate(0.0, 0.0)`` and the caller must skip :func:`eta_table_value`.

    Args:
        latest: the video's latest snapshot, or None if it has none.
        lookback_snapshots: for each of ``constants.ETA_LOOKBACKS_MS`` in order, the snapshot
            closest to ``now - lookback`` (:func:`sim.cvsa.snapshots.find_closest_snapshot`),
            or None where there is none.
        piecewise: switch ``piecewise_factor``.
    """
    if latest is None:
        return new_record(EtaEstimate, (0.0, 0.0))
    to_go = closest_milestone(latest.views) - latest.views
    factor = milestone_factor(to_go, piecewise)
    best, best_speed = math.inf, 0.0
    for snap in lookback_snapshots:
        if snap is None:
            continue
        delta_views = latest.views - snap.views
        if delta_views <= 0:
            continue
        delta_hours = (latest.created_at_ms - snap.created_at_ms) / HOUR_MS
        speed = jsmath.div(delta_views, delta_hours + ETA_DELTA)
        adjusted = jsmath.div(jsmath.div(to_go, speed + ETA_DELTA), factor)
        if adjusted < best:
            best, best_speed = adjusted, speed
    if math.isnan(best):  # the deployed "NaN -> Infinity" guard (§11.4 step 4)
        best = math.inf
    return new_record(EtaEstimate, (best, best_speed))


def lookback_snapshots(snapshots: Sequence[Snapshot], now_ms: Ms) -> list[Snapshot | None]:
    """For each ETA lookback, the snapshot closest to ``now - lookback`` (reference §11.4 step 3).

    The input of :func:`adjusted_eta_hours`, computed over one video's snapshots in ascending
    ``created_at`` order, with the §19.7 tie-break.
    """
    return [find_closest_snapshot(snapshots, now_ms - back) for back in ETA_LOOKBACKS_MS]


def milestone_passed(prev_views: int, views: int) -> bool:
    """After a milestone snapshot: was the milestone passed? (reference §9 step 7)

    True when the new views exceed ``closest_milestone(prev_views)`` (non-strict) — strictly:
    landing exactly on the milestone is not "passed", and the re-ETA then finds 0 views to go.
    Seed 000 says "若已达成成就 → 不再调度" without the comparison, so both profiles use the
    deployed one. ``prev_views`` is the latest snapshot read **before** the fetch; without one the
    deployed code throws and the row ends ``failed`` (§9 step 7).
    """
    return views > closest_milestone(prev_views)


def eta_table_value(views: int, speed: float, delta: float = ETA_DELTA) -> float:
    """The ``eta`` column written by the upserts: strict views-to-go over ``speed + delta``.

    ``getAdjustedShortTermETA`` writes it with its max speed and delta 1e-5 (reference §11.4
    step 5); the bulk worker with its own speed and delta 1e-4 (§10.3, see
    :func:`bulk_eta_speed`). A zero speed gives about ``1e5 x`` the remaining views (§19.5); a
    negative speed a negative ETA, which makes the video a candidate (§10.3, Q10). The column is
    float4 (:func:`to_float4`, §19.6).

    Args:
        views: the latest views.
        speed: views/hour.
        delta: the writer's epsilon (``constants.ETA_DELTA`` or ``constants.BULK_ETA_DELTA``).
    """
    return jsmath.div(closest_milestone(views, strict=True) - views, speed + delta)


def bulk_eta_speed(prev: Snapshot, views: int, now_ms: int, delta: float) -> float:
    """The bulk worker's speed since the previous snapshot (reference §10.3 step 1).

    ``(views - prev.views) / ((now - prev.created_at) / HOUR + delta)``; ``now`` is the worker's
    clock, not the response time.
    """
    return jsmath.div(views - prev.views, (now_ms - prev.created_at_ms) / HOUR_MS + delta)


_FLOAT4: Final = struct.Struct("<f")
"""Compiled once: ``struct.pack("<f", x)`` looks the format up in struct's cache every call
(once per bulk snapshot and per ETA written)."""


def to_float4(x: float) -> float:
    """``x`` as PostgreSQL ``real`` stores it (the ``eta`` table is float4, reference §19.6)."""
    if math.isnan(x) or math.isinf(x):
        return x
    try:
        return float(_FLOAT4.unpack(_FLOAT4.pack(x))[0])
    except OverflowError:  # beyond float4's range PostgreSQL raises; keep the sign as infinity
        return math.copysign(math.inf, x)


def milestone_delay_ms(eta_h: float, clamp: bool) -> int | None:
    """How long until the next milestone snapshot, or None when none is scheduled (§11.5, §9).

    "ETA < 144小时 → 调度快照; 调度时间 = now + ETA（限制在2秒~1.2小时之间）" (seed 000). An ETA
    above 144 h (including ``inf``) schedules nothing; exactly 144 h still schedules (the code
    tests ``eta > 144``). The dispatcher clamps to [2 s, 1.2 h]; the deployed post-snapshot re-ETA
    does not (switch ``milestone_reeta_clamped``, reference §16.7). The fraction of a millisecond
    is dropped, as a JavaScript ``Date`` does.

    Args:
        eta_h: adjusted ETA in hours (never negative: views-to-go and speeds are >= 0).
        clamp: apply the [2 s, 1.2 h] clamp.
    """
    if math.isnan(eta_h) or eta_h > MILESTONE_ETA_LIMIT_H:
        return None
    delay = eta_h * HOUR_MS
    if clamp:
        delay = jsmath.truncate(delay, MILESTONE_DELAY_MIN_MS, MILESTONE_DELAY_MAX_MS)
    return math.floor(delay)


def milestone_candidate(views: int, is_song: bool, eta_h: float | None, wide: bool) -> bool:
    """Is the video returned by ``getVideosNearMilestone``? (reference §11.1)

    * **A** (songs, only when ``wide``): views in [60k, 100k) or [900k, 1M) or above 1M.
    * **B** (any video): views in [90k, 100k), [900k, 1M) or [M − 100k, M) with
      M = ceil(views / 1M)·1M, so exact multiples of 1M are out.
    * **C** (any video): an ``eta`` row with eta < 2300 h (its age is not checked).

    Design (seed 000: "接近以下成就点 … 或 ETA < 2300小时的视频") is B ∪ C, the note being silent
    on how near "near" is; deployed (switch ``wide_milestone_candidates``) is A ∪ B ∪ C (§16.5).

    Args:
        views: latest views (``latest_video_snapshot.views``).
        is_song: the aid is in ``songs``.
        eta_h: the ``eta`` table value, or None when the video has no eta row.
        wide: add set A.
    """
    if wide and is_song and (60_000 <= views < 100_000 or views > MILLION):
        return True  # set A; its [900k, 1M) band is also in B
    next_million = -(-views // MILLION) * MILLION
    if 90_000 <= views < 100_000 or next_million - 100_000 <= views < next_million:
        return True  # set B; [900k, 1M) is the M = 1M case of the last band
    return eta_h is not None and eta_h < MILESTONE_CANDIDATE_ETA_H  # set C
