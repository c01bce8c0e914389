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
from sim.cvsa.params import FactorCoefficients, MilestoneLadder, Params
from sim.cvsa.snapshots import Snapshot, find_closest_snapshot
from sim.ports import EtaRow, new_record
from sim.units import HOUR_MS, Ms


def closest_milestone(views: int, ladder: MilestoneLadder, strict: bool = False) -> int:
    """The next milestone at or above ``views`` (``closestMilestone``, reference §11.2).

    The ladder is 100k, 1M, then every 1M (seed 000: "10万、100万、200万……";
    ``Params.milestone_ladder``: ``first``, then every ``step``). Non-strict (the default, used
    for scheduling) maps an exact multiple of 1M to itself, so views-to-go is 0; 100 000 itself
    maps to 1M because the test is ``views < 100000``. Strict (used for the ``eta`` table) jumps
    from 1M straight to 10M (``strict_next``): any views in [1M, 10M) map to 10M.

    Args:
        views: current view count.
        ladder: the milestones (``Params.milestone_ladder``).
        strict: the ``eta``-table ladder (100k, 1M, 10M, 11M, ...).
    """
    first, step = ladder.first, ladder.step
    if views < first:
        return first
    if views < step:
        return step
    if strict and views < ladder.strict_next:
        return ladder.strict_next
    return -(-views // step) * step  # ceil(views / step) * step, exact in integers


@functools.lru_cache(maxsize=1 << 16)
def milestone_factor(x: float, piecewise: bool, factor: FactorCoefficients) -> float:
    """The acceleration factor for ``x`` views to go, truncated to [4.5, 100] (reference §11.4).

    Design (seed 000): ``log(4.5 / log(x + 100), 1.054) + 0.601`` for every ``x``.
    Deployed (``piecewise``): that formula only for ``x <= 455``; above it
    ``log(4.5 / log10(x + 1), 1.054)`` with **no** +0.601 (reference §16.6). The inner log is
    base 10 in both. Both truncate to [4.5, 100]: the note is silent on bounds, so the deployed
    ones apply. Reference values: f(0)=16.02, f(100)=13.35, f(455)=10.00, f(1000)=7.71 (piecewise).

    Args:
        x: views to go (``closest_milestone(views) - views``), never negative.
        piecewise: use the deployed two-branch formula (switch ``piecewise_factor``).
        factor: the coefficients (``Params.milestone_factor``).

    Raises:
        ValueError: if ``x`` is negative (views never exceed their closest milestone).

    A pure function of an integer that the milestone dispatcher evaluates for every candidate
    every five minutes, hence the cache.
    """
    if x < 0:
        raise ValueError(f"views to go must be >= 0 (got {x!r})")
    if piecewise and x > factor.knee:
        raw = jsmath.log(factor.numerator / jsmath.log(x + 1), factor.base)
    else:
        raw = jsmath.log(factor.numerator / jsmath.log(x + 100), factor.base) + factor.offset
    return jsmath.truncate(raw, factor.floor, factor.ceiling)


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
    params: Params,
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
        lookback_snapshots: for each of ``params.eta_lookbacks_ms`` in order, the snapshot
            closest to ``now - lookback`` (:func:`sim.cvsa.snapshots.find_closest_snapshot`),
            or None where there is none.
        piecewise: switch ``piecewise_factor``.
        params: the design's numbers (``eta_delta``, ``milestone_factor``, the ladder).
    """
    if latest is None:
        return new_record(EtaEstimate, (0.0, 0.0))
    to_go = closest_milestone(latest.views, params.milestone_ladder) - latest.views
    factor = milestone_factor(to_go, piecewise, params.milestone_factor)
    delta = params.eta_delta
    best, best_speed = math.inf, 0.0
    for snap in lookback_snapshots:
        if snap is None:
            continue
        delta_views = latest.views - snap.views
        if delta_views <= 0:
            continue
        delta_hours = (latest.created_at_ms - snap.created_at_ms) / HOUR_MS
        speed = jsmath.div(delta_views, delta_hours + delta)
        adjusted = jsmath.div(jsmath.div(to_go, speed + delta), factor)
        if adjusted < best:
            best, best_speed = adjusted, speed
    if math.isnan(best):  # the deployed "NaN -> Infinity" guard (§11.4 step 4)
        best = math.inf
    return new_record(EtaEstimate, (best, best_speed))


def lookback_snapshots(
    snapshots: Sequence[Snapshot], now_ms: Ms, lookbacks_ms: Sequence[Ms]
) -> list[Snapshot | None]:
    """For each ETA lookback, the snapshot closest to ``now - lookback`` (reference §11.4 step 3).

    The input of :func:`adjusted_eta_hours`, computed over one video's snapshots in ascending
    ``created_at`` order, with the §19.7 tie-break; ``lookbacks_ms`` is
    ``Params.eta_lookbacks_ms``.
    """
    return [find_closest_snapshot(snapshots, now_ms - back) for back in lookbacks_ms]


def milestone_reached(prev_views: int, views: int, strict: bool, ladder: MilestoneLadder) -> bool:
    """After a milestone snapshot: was the milestone reached? (reference §9 step 7)

    The milestone is ``closest_milestone(prev_views)`` (non-strict), where ``prev_views`` is the
    latest snapshot read **before** the fetch; without one the deployed code throws and the row
    ends ``failed`` (§9 step 7). Design (seed 000 "若已达成成就则不再调度"): reached once the
    views are at least the milestone. Deployed (switch ``milestone_reached_strict``): only above
    it, so landing exactly on the milestone is not reached, and the re-ETA then aims at the next
    milestone (``closest_milestone`` maps an exact 100,000 to 1M).
    """
    milestone = closest_milestone(prev_views, ladder)
    return views > milestone if strict else views >= milestone


def eta_table_value(views: int, speed: float, delta: float, ladder: MilestoneLadder) -> float:
    """The ``eta`` column written by the upserts: strict views-to-go over ``speed + delta``.

    ``getAdjustedShortTermETA`` writes it with its max speed and delta 1e-5 (reference §11.4
    step 5); the bulk worker with its own speed and delta 1e-4 (§10.3, see
    :func:`bulk_eta_speed`). A zero speed gives about ``1e5 x`` the remaining views (§19.5); a
    negative speed a negative ETA, which makes the video a candidate (§10.3, Q10). The column is
    float4 (:func:`to_float4`, §19.6).

    Args:
        views: the latest views.
        speed: views/hour.
        delta: the writer's epsilon (``Params.eta_delta`` or ``Params.bulk_eta_delta``).
        ladder: the milestones (``Params.milestone_ladder``).
    """
    return jsmath.div(closest_milestone(views, ladder, strict=True) - views, speed + delta)


def eta_row(
    aid: int, views: int, speed: float, delta: float, updated_ms: Ms, ladder: MilestoneLadder
) -> EtaRow:
    """The ``eta`` row an upsert writes (reference §2.4, §10.3, §11.4 step 5): the ETA
    (:func:`eta_table_value`) and the speed, both rounded to float4 as the table's ``real``
    columns store them (§19.6), the views, and the writer's clock."""
    eta = to_float4(eta_table_value(views, speed, delta, ladder))
    return new_record(EtaRow, (aid, eta, to_float4(speed), views, updated_ms))


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


def milestone_delay_ms(eta_h: float, clamp: bool, params: Params) -> int | None:
    """How long until the next milestone snapshot, or None when none is scheduled (§11.5, §9).

    "ETA < 144小时 → 调度快照; 调度时间 = now + ETA（限制在2秒~1.2小时之间）" (seed 000). An ETA
    above 144 h (including ``inf``) schedules nothing; exactly 144 h still schedules (the code
    tests ``eta > 144``). The dispatcher clamps to [2 s, 1.2 h]; the deployed post-snapshot re-ETA
    does not (switch ``milestone_reeta_clamped``, reference §16.7). The fraction of a millisecond
    is dropped, as a JavaScript ``Date`` does.

    Args:
        eta_h: adjusted ETA in hours (never negative: views-to-go and speeds are >= 0).
        clamp: apply the [2 s, 1.2 h] clamp.
        params: the limit (``milestone_eta_limit_h``) and the clamp's bounds.
    """
    if math.isnan(eta_h) or eta_h > params.milestone_eta_limit_h:
        return None
    delay = eta_h * HOUR_MS
    if clamp:
        delay = jsmath.truncate(delay, params.milestone_delay_min_ms, params.milestone_delay_max_ms)
    return math.floor(delay)


def milestone_candidate(
    views: int,
    is_song: bool,
    eta_h: float | None,
    wide: bool,
    eta_below_h: float,
    ladder: MilestoneLadder,
) -> bool:
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
        eta_below_h: set C's threshold (``Params.milestone_candidate_eta_h``).
        ladder: the milestones and the bands (``Params.milestone_ladder``).
    """
    first, step = ladder.first, ladder.step
    if wide and is_song and (first - ladder.wide_near_first <= views < first or views > step):
        return True  # set A; its [900k, 1M) band is also in B
    next_step = -(-views // step) * step
    if (
        first - ladder.near_first <= views < first
        or next_step - ladder.near_step <= views < next_step
    ):
        return True  # set B; [900k, 1M) is the M = 1M case of the last band
    return eta_h is not None and eta_h < eta_below_h  # set C
