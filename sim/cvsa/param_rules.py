"""The rules every combination of the design's numbers must keep (:func:`check_params`).

A scenario's ``[design]`` table may set any field of :class:`~sim.cvsa.params.Params`; these
are the ranges and cross-field rules without which a rule of the book would be meaningless. Apart
from :mod:`sim.cvsa.params` because they run once per scenario, not in the hot path (that module
is compiled, sim._native).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from itertools import pairwise
from typing import NamedTuple

from sim.cvsa.params import Params
from sim.units import DAY_MS, format_duration_ms


class ParamProblem(NamedTuple):
    """A value of :class:`Params` that breaks a rule: the field, the rule, the value."""

    name: str
    rule: str
    value: object


def check_params(p: Params) -> list[ParamProblem]:
    """Every rule a combination of the design's numbers must keep, in field order.

    Types are the caller's (the scenario layer validates them); these are the ranges and the
    cross-field rules without which a rule of the book would be meaningless: a window length
    that divides a day (the windows are days' slices, seed 000 流量控制), a clamp whose min is
    below its max (§11.5), interval tables whose thresholds ascend or descend as the rules scan
    them (§11.6, §9 step 5), weekdays 0-6 (JavaScript ``getDay()``, §13b).
    """
    out: list[ParamProblem] = []

    def need(ok: bool, name: str, rule: str) -> None:
        if not ok and all(q.name != name for q in out):  # one problem per field
            out.append(ParamProblem(name, rule, getattr(p, name)))

    for f in fields(p):
        v = getattr(p, f.name)
        if f.name.endswith("_every_ms") or f.name.endswith("_lookback_ms"):
            need(v is None or v > 0, f.name, "must be > 0")
        elif isinstance(v, int) and f.name.endswith("_ms"):
            need(v >= 0, f.name, "must be >= 0")
        elif isinstance(v, int | float) and f.name.endswith(("_limit", "_size", "_h", "_cap")):
            need(v > 0, f.name, "must be > 0")
        elif f.name.startswith("priority_") or f.name.endswith("_priority"):
            need(v >= 1, f.name, "must be >= 1 (a BullMQ priority)")
    need(p.window_ms > 0 and DAY_MS % p.window_ms == 0, "window_ms", "must divide a day")
    need(p.forward_search_windows >= 1, "forward_search_windows", "must be >= 1")
    need(p.backward_search_windows >= 0, "backward_search_windows", "must be >= 0")
    need(p.window_refresh_horizon_ms > 0, "window_refresh_horizon_ms", "must be > 0")
    need(
        p.milestone_delay_min_ms < p.milestone_delay_max_ms,
        "milestone_delay_min_ms",
        f"must be below milestone_delay_max_ms ({format_duration_ms(p.milestone_delay_max_ms)})",
    )
    need(p.eta_delta > 0, "eta_delta", "must be > 0")
    need(p.bulk_eta_delta > 0, "bulk_eta_delta", "must be > 0")
    backs = p.eta_lookbacks_ms
    need(
        len(backs) > 0 and backs[0] > 0 and _ascending(backs),
        "eta_lookbacks_ms",
        "must be one or more durations > 0, ascending",
    )
    fc = p.milestone_factor
    need(fc.base > 0 and fc.base != 1, "milestone_factor", "must have base > 0 and not 1")
    need(fc.numerator > 0, "milestone_factor", "must have numerator > 0")
    need(fc.floor < fc.ceiling, "milestone_factor", "must have floor below ceiling")
    need(fc.knee >= 0, "milestone_factor", "must have knee >= 0")
    lad = p.milestone_ladder
    need(0 < lad.first < lad.step, "milestone_ladder", "must have 0 < first < step")
    need(lad.strict_next >= lad.step, "milestone_ladder", "must have strict_next >= step")
    need(0 <= lad.near_first <= lad.first, "milestone_ladder", "must have near_first in [0, first]")
    need(0 <= lad.near_step <= lad.step, "milestone_ladder", "must have near_step in [0, step]")
    need(
        0 <= lad.wide_near_first <= lad.first,
        "milestone_ladder",
        "must have wide_near_first in [0, first]",
    )
    need(p.regular_epsilon_h > 0, "regular_epsilon_h", "must be > 0")
    bands = p.regular_interval_bands
    need(
        len(bands) > 0 and bands[0][0] > 0 and _ascending([b for b, _ in bands]),
        "regular_interval_bands",
        "must have thresholds > 0 that ascend",
    )
    need(all(h >= 1 for _, h in bands), "regular_interval_bands", "must have intervals >= 1 hour")
    need(p.regular_still_interval_h >= 1, "regular_still_interval_h", "must be >= 1")
    need(p.regular_fastest_interval_h >= 1, "regular_fastest_interval_h", "must be >= 1")
    need(p.regular_target_max_ms > 0, "regular_target_max_ms", "must be > 0")
    need(len(p.new_initial_offsets_ms) > 0, "new_initial_offsets_ms", "must not be empty")
    need(p.new_max_age_ms > 0, "new_max_age_ms", "must be > 0")
    need(p.new_min_vph >= 0, "new_min_vph", "must be >= 0")
    ladder = p.new_interval_ladder
    need(
        _ascending([-v for v, _ in ladder]),
        "new_interval_ladder",
        "must have thresholds that descend (the fastest band first)",
    )
    need(all(d > 0 for _, d in ladder), "new_interval_ladder", "must have intervals > 0")
    need(p.new_interval_default_ms > 0, "new_interval_default_ms", "must be > 0")
    for name in ("archive_song_weekday", "archive_nonsong_weekday"):
        need(0 <= getattr(p, name) <= 6, name, "must be a weekday 0-6 (0 = Sunday)")
    return out


def _ascending(values: Sequence[float]) -> bool:
    return all(a < b for a, b in pairwise(values))
