"""Finding ``capacity``: does the windows' capacity cover the rows the capped types request?

``adjustSnapshotTime`` (seed 000 "流量控制": 每个5分钟时间窗口内不超过1000个快照; reference §6.2)
gives each normal or archive row a slot in the first 5-minute window at or after its target with
fewer than ``cap`` rows. A local day holds ``cap`` x (day / window) slots (288,000 at 1000 per 5
minutes). When the rows requested for a day outnumber them, the rest spill into later days: the
placement pushes rows further and further ahead (the *backlog horizon*), and nothing but a drop
in demand brings it back.

Fluid model (what the daily numbers predict): a queue served at ``c`` rows per day with ``a_d``
rows requested on day ``d`` carries a backlog, in days of service, of
``F_d = max(0, F_{d-1} + (a_d - c) / c)``: it grows by ``(a_d - c) / c`` days per day while
``a_d > c`` and never goes below 0. It assumes rows take windows in target order. The placement
serves them in *booking* order instead: rows booked days ahead (the weekly archive pass, 72-hour
intervals) take their windows first, and a row requested later for an earlier time finds every
window up to the end of what is already booked full when utilisation is near 100 %. So the
measured horizon can exceed the model's by up to the booking horizon, and stays there while
demand averages near capacity even when no single day is far over it.

The measured *backlog horizon* of a local day is how far the placement pushed the capped rows
created that day and requested for the coming day (target within a day of creation): the wait
for a window of a row asked for now. Its trend is the least-squares slope over the days since
the first saturated day. A row that found every window of the forward search full (fallback,
exhausted) counts as pushed the whole search span, a lower bound. ``horizon_max_h`` is the
furthest any capped row was pushed, whatever its lead.

Milestone and new rows (placement ``exact``, and ``unadjusted``) increment the same counters with
no cap check (reference §5 step 4, §6.2 "The cap counts schedules of all types"). They are not
counted as demand here: they are due within minutes and released when they run (§6.4), and once
the windows saturate they land on full windows, over the cap, taking no slot from the capped
types. Their share of capacity is reported beside (``uncapped_peak_share``): while the windows
have room, each pending one does hold a slot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.metrics.findings.verdicts import (
    EXAMPLES,
    Finding,
    Score,
    Severity,
    duration,
    finding_metrics,
)
from sim.metrics.findings.verdicts import local as local_time
from sim.units import DAY_MS, HOUR_MS, Ms

_FORWARD = K.PLACEMENT.code("forward")
_CAPPED = np.array([K.PLACEMENT.code(w) for w in ("forward", "fallback", "exhausted")])
_NTYPES = len(K.SNAPSHOT_TYPE.words)
_COL = {name: i for i, name in enumerate(K.ScheduleCreated._fields)}


class Capacity:
    """Reducer of finding ``capacity`` (keyword arguments: ``[findings.capacity]``).

    ``cap``: switch ``window_cap``; ``window_ms``: ``Params.window_ms``; ``search_span_ms``: the
    forward search's reach (``forward_search_windows`` x ``window_ms``); ``start_ms``/``end_ms``:
    the run; ``tz_offset_ms``: the scenario's time zone (days are local days).
    """

    ID = "capacity"

    def __init__(
        self,
        cap: int,
        window_ms: Ms,
        search_span_ms: Ms,
        start_ms: Ms,
        end_ms: Ms,
        tz_offset_ms: Ms,
        *,
        warn_share: float,
        fail_share: float,
    ) -> None:
        self.capacity = cap * (DAY_MS // window_ms)
        self.search_span_ms = search_span_ms
        self.tz = tz_offset_ms
        self.first_day = (start_ms + tz_offset_ms) // DAY_MS
        self.last_day = (max(end_ms, start_ms + 1) - 1 + tz_offset_ms) // DAY_MS
        self.warn_share = warn_share
        self.fail_share = fail_share
        # Bounded state: per local day (and type), never per row.
        self.demand: dict[tuple[int, int], int] = {}  # (requested day, type) -> capped rows
        self.uncapped: dict[int, int] = {}  # requested day -> exact/unadjusted rows
        self.push_ms: dict[int, int] = {}  # creation day -> furthest push of a capped row
        self.near_push_ms: dict[int, int] = {}  # the same, rows requested for the coming day
        self.spilled = 0  # capped rows that found no room searching forward

    def feed(self, chunk: Chunk, names: Sequence[str]) -> None:
        rows = chunk.table(K.ScheduleCreated)
        if not rows.size:
            return
        c = _COL
        t, ty, placement = rows[:, c["t_ms"]], rows[:, c["type"]], rows[:, c["placement"]]
        req, due = rows[:, c["requested_ms"]], rows[:, c["due_ms"]]
        capped = np.isin(placement, _CAPPED)
        req_day = (req + self.tz) // DAY_MS
        _add(self.demand, req_day[capped] * _NTYPES + ty[capped], lambda k: divmod(k, _NTYPES))
        _add(self.uncapped, req_day[~capped], int)
        if not capped.any():
            return
        forward = placement[capped] == _FORWARD
        self.spilled += int(np.count_nonzero(~forward))
        start = np.maximum(req[capped], t[capped])  # a past target is placed from now (§6.2)
        push = np.where(forward, np.maximum(due[capped] - start, 0), self.search_span_ms)
        created_day = (t[capped] + self.tz) // DAY_MS
        _furthest(self.push_ms, created_day, push)
        near = req[capped] - t[capped] < DAY_MS
        _furthest(self.near_push_ms, created_day[near], push[near])

    # -- the verdict ----------------------------------------------------------------------------

    def _date(self, day: int) -> str:
        return local_time(day * DAY_MS - self.tz, self.tz)[:10]

    def finding(self) -> Finding:
        cap_day = self.capacity
        per_day: dict[int, dict[str, int]] = {}
        for (day, code), n in self.demand.items():
            per_day.setdefault(day, {})[K.SNAPSHOT_TYPE.word(code)] = n
        demand = {d: sum(v.values()) for d, v in per_day.items()}
        days = sorted(set(demand) | set(self.uncapped) | {self.first_day})
        share = {d: demand.get(d, 0) / cap_day for d in days}
        peak_day = max(days, key=lambda d: (share[d], -d))
        peak_share = share[peak_day]
        saturated = [d for d in days if share[d] > self.fail_share]
        # Fluid model over the requested days up to the run's last day (later days are only
        # booked so far); the measured horizon over the same stretch of creation days.
        fluid_ms: dict[int, float] = {}
        f = 0.0
        for d in range(min(days), self.last_day + 1):
            f = max(0.0, f + (demand.get(d, 0) - cap_day) / cap_day)
            fluid_ms[d] = f * DAY_MS
        in_run = [d for d in saturated if self.first_day <= d <= self.last_day]
        g0 = in_run[0] if in_run else self.first_day  # the stretch the trend is measured over
        span = range(g0, self.last_day + 1)
        horizon = self.near_push_ms
        seen = [horizon[d] for d in span if d in horizon] or [0]
        h_end_ms = horizon.get(self.last_day, 0)
        growth_ms = _slope_per_day(horizon, span)
        f_end_ms = fluid_ms[self.last_day]
        f_growth_ms = _slope_per_day(fluid_ms, span)
        h_max_ms = max(self.push_ms.values(), default=0)
        run_days = range(self.first_day, self.last_day + 1)
        run_share = sum(demand.get(d, 0) for d in run_days) / (len(run_days) * cap_day)
        uncapped_peak = max(self.uncapped.values(), default=0) / cap_day
        n_of = self._day_number

        if saturated:
            severity = Severity.FAIL
            over = [demand[d] for d in saturated]
            first = saturated[0]
            ahead = (
                f", booked ahead: the run ended on day {n_of(self.last_day)}"
                if first > self.last_day
                else ""
            )
            trend = fluid_trend = ""
            if len(seen) > 1:
                trend = (
                    f" ({_dur(min(seen))} to {_dur(max(seen))} since day {n_of(g0)}, "
                    f"trend {_signed(growth_ms)} per day)"
                )
                fluid_trend = f", trend {_signed(f_growth_ms)} per day"
            sentence = (
                f"The windows saturate from day {n_of(first)} ({self._date(first)}{ahead}): "
                f"demand {sum(over) / len(over):,.0f}/day against capacity {cap_day:,}/day on "
                f"{len(saturated)} day(s) (peak {demand[peak_day]:,} on {self._date(peak_day)}, "
                f"{peak_share:.0%}); over the run's {len(run_days)} day(s) demand averaged "
                f"{run_share:.0%} of capacity. A row requested for the coming day waited "
                f"{_dur(h_end_ms)} for a window at the end{trend}; the fluid model, which "
                f"serves rows in target order, says {_dur(f_end_ms)}{fluid_trend}."
            )
        else:
            severity = Severity.WARN if peak_share >= self.warn_share else Severity.OK
            sentence = (
                f"The windows hold with {1 - peak_share:.1%} headroom (peak day "
                f"{self._date(peak_day)}{', booked ahead' if peak_day > self.last_day else ''}"
                f": {demand.get(peak_day, 0):,} of {cap_day:,} capped "
                f"rows); placement pushed rows at most {_dur(h_max_ms)} past their target "
                f"({_dur(h_end_ms)} for rows requested on the last day); uncapped "
                f"milestone/new rows add up to {uncapped_peak:.1%} of a day's capacity."
            )
        worst_days = sorted(days, key=lambda d: (-share[d], d))[:EXAMPLES]
        return Finding(
            id=self.ID,
            title="Capacity against demand",
            severity=severity,
            score=Score(peak_share, self.warn_share, self.fail_share),
            sentence=sentence,
            mechanism=(
                "adjustSnapshotTime gives each normal/archive row a slot in the first 5-minute "
                "window at or after its target with fewer than window_cap rows (seed 000 "
                "流量控制; reference §6.2), so a local day holds window_cap x windows per day "
                f"slots ({cap_day:,} here). Demand is the capped rows requested for a day "
                "(placement forward, fallback or exhausted, by target day). Rows beyond a day's "
                "capacity spill into later days; the fluid model F_d = max(0, F_(d-1) + "
                "(a_d - c)/c) says the backlog grows by (a_d - c)/c days per day while a_d > c. "
                "It serves rows in target order; the placement serves them in booking order: "
                "rows booked days ahead (the weekly archive pass, 72-hour intervals) take their "
                "windows first, so near full utilisation a row requested for now finds every "
                "window up to the end of what is booked full, and the measured horizon can "
                "exceed the model's by up to the booking horizon. The measured horizon of a day "
                "is the furthest a capped row created that day and requested for the coming day "
                "was pushed past max(target, creation); its trend is the least-squares slope "
                "since the first saturated day (fallback/exhausted "
                "rows: the whole forward-search span). Milestone/new rows (exact) increment "
                "the same counters uncapped (§5 step 4) but are not counted as demand: they run "
                "within minutes and are released (§6.4), and on saturated windows they land "
                "over the cap; their share is reported beside."
            ),
            numbers={
                "capacity_per_day": cap_day,
                "peak_day": self._date(peak_day),
                "peak_demand": demand.get(peak_day, 0),
                "peak_share": round(peak_share, 4),
                "headroom": round(1 - peak_share, 4),
                "saturated_days": len(saturated),
                "first_saturated_day": self._date(saturated[0]) if saturated else "",
                "demand_total": sum(demand.values()),
                "uncapped_total": sum(self.uncapped.values()),
                "uncapped_peak_share": round(uncapped_peak, 4),
                "spilled_rows": self.spilled,
                "run_share": round(run_share, 4),
                "horizon_end_h": round(h_end_ms / HOUR_MS, 3),
                "horizon_min_h": round(min(seen) / HOUR_MS, 3),
                "horizon_peak_h": round(max(seen) / HOUR_MS, 3),
                "horizon_max_h": round(h_max_ms / HOUR_MS, 3),
                "horizon_growth_h_per_day": round(growth_ms / HOUR_MS, 3),
                "fluid_horizon_end_h": round(f_end_ms / HOUR_MS, 3),
                "fluid_growth_h_per_day": round(f_growth_ms / HOUR_MS, 3),
                "by_day": [
                    {
                        "day": self._date(d),
                        **{ty: per_day.get(d, {}).get(ty, 0) for ty in ("normal", "archive")},
                        "uncapped": self.uncapped.get(d, 0),
                        "horizon_h": round(horizon.get(d, 0) / HOUR_MS, 3),
                        "fluid_h": round(fluid_ms.get(d, 0.0) / HOUR_MS, 3),
                        "booked_only": d > self.last_day,
                    }
                    for d in days
                ],
            },
            examples=tuple(
                {
                    "day": self._date(d),
                    "day_n": n_of(d),
                    "demand": demand.get(d, 0),
                    "by_type": dict(sorted(per_day.get(d, {}).items())),
                    "uncapped": self.uncapped.get(d, 0),
                    "capacity": cap_day,
                    "share": round(share[d], 4),
                    "horizon_h": round(horizon.get(d, 0) / HOUR_MS, 3),
                    "booked_only": d > self.last_day,
                }
                for d in worst_days
            ),
            plots=("capacity.png", "occupancy.png", "occupancy_heatmap.png"),
            thresholds={"warn_share": self.warn_share, "fail_share": self.fail_share},
        )

    def _day_number(self, day: int) -> int:
        """Day 1 is the run's first local day."""
        return day - self.first_day + 1

    def result(self) -> dict[str, Any]:
        return finding_metrics(self.finding())


def _dur(ms: float) -> str:
    """A horizon as a person reads it (``0`` rather than ``0ms``)."""
    return duration(ms) if round(ms) else "0"


def _signed(ms: float) -> str:
    """A trend with its sign (``+2.1h``, ``-12m``, ``0``)."""
    return f"+{_dur(ms)}" if round(ms) > 0 else _dur(ms)


def _add(into: dict[Any, int], keys: np.ndarray, key_of: Any) -> None:
    """Count ``keys`` into ``into`` (one np.unique per chunk, not a loop over rows)."""
    if keys.size:
        values, counts = np.unique(keys, return_counts=True)
        for k, n in zip(values.tolist(), counts.tolist(), strict=True):
            key = key_of(k)
            into[key] = into.get(key, 0) + n


def _furthest(into: dict[int, int], days: np.ndarray, push: np.ndarray) -> None:
    """Keep, per day, the largest ``push`` of the rows of that day (one np.unique per chunk)."""
    if not days.size:
        return
    values, inverse = np.unique(days, return_inverse=True)
    best = np.zeros(len(values), np.int64)
    np.maximum.at(best, inverse, push)
    for d, p in zip(values.tolist(), best.tolist(), strict=True):
        into[d] = max(into.get(d, 0), p)


def _slope_per_day(points: Mapping[int, float], days: range) -> float:
    """Least-squares slope of ``points`` (value per day) over ``days`` (0 under two points)."""
    xs = [d for d in days if d in points]
    if len(xs) < 2:
        return 0.0
    return float(np.polyfit(np.array(xs, float), np.array([points[d] for d in xs]), 1)[0])
