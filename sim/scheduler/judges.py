"""The finding reducers of a CVSA run, each given what the log cannot tell (issue 25).

One place wires every finding of :mod:`sim.metrics.findings` to the run: the design's numbers
(``Params``), the profile's switches, the world's ground truth, the scenario's ``[findings]``
thresholds (each sub-table's keys are the reducer's keyword arguments) and its time zone.
"""

from __future__ import annotations

from sim.cvsa.params import Params
from sim.metrics import Reducer
from sim.metrics.findings import (
    Capacity,
    Deferral,
    DeliveryFinding,
    ExecutedLoad,
    LatenessAttribution,
    Levelling,
    LostWork,
    MilestoneFinding,
    PeriodicRuns,
    RuleChecks,
    Staleness,
    ThrottleFinding,
    TickHealth,
    WriteBacklog,
)
from sim.metrics.invariants import RunTruth, StaleSongs
from sim.scenario import Scenario
from sim.units import Ms
from sim.upstream.limiter import BULK_TASK_TIERS, PROVIDER_TIERS
from sim.upstream.network import ALICLOUD, CF_WORKER, NATIVE, TASK_PROXIES
from sim.world import World


def per_window(tiers: tuple[tuple[Ms, int], ...], window_ms: Ms) -> int:
    """Requests a limiter lets through per window at its sustained rate: its longest tier
    (the binding one, 300 s, reference §14.5), scaled to the window length."""
    period_ms, limit = max(tiers)
    return limit * window_ms // period_ms


def cvsa_finding_reducers(
    scenario: Scenario,
    params: Params,
    world: World,
    periods_ms: dict[str, int],
    lifecycle: Reducer,
    snapshots: Reducer,
    monitors: list[Reducer],
    truth: RunTruth,
) -> list[Reducer]:
    """Every finding of a CVSA run (``periods_ms``: each periodic job's period; ``lifecycle``
    and ``snapshots``: the run's lifecycle monitor and snapshot metrics, whose results
    ``lost_work`` and ``lateness`` read rather than track the same rows twice; ``monitors``:
    the invariant monitors, whose verdicts ``rules`` reports; ``truth``: the world's crossings,
    songs and availability, built once for the invariants and the findings)."""
    th, tz = scenario.findings, scenario.timezone
    window_ms = params.window_ms
    provider = per_window(PROVIDER_TIERS, window_ms)
    return [
        TickHealth(periods_ms, tz, **th.ticks.model_dump()),
        PeriodicRuns(periods_ms, scenario.periodic.policy, tz, **th.periodic.model_dump()),
        LostWork(lifecycle, tz, **th.lost_work.model_dump()),
        LatenessAttribution(snapshots, tz, **th.lateness.model_dump()),
        RuleChecks(monitors),
        Capacity(
            params.window_cap,
            params.window_ms,
            params.forward_search_windows * params.window_ms,
            scenario.start_ms,
            scenario.end_ms,
            tz,
            **th.capacity.model_dump(),
        ),
        Levelling(tz, window_ms, **th.levelling.model_dump()),
        ExecutedLoad(
            tz,
            window_ms,
            params.window_cap,
            dict.fromkeys((ALICLOUD, CF_WORKER, NATIVE), provider),
            {p: per_window(BULK_TASK_TIERS, window_ms) for p in TASK_PROXIES["bulkSnapshot"]},
            **th.executed_load.model_dump(),
        ),
        MilestoneFinding(truth, tz, **th.milestones.model_dump()),
        Staleness(
            truth,
            tz,
            **th.staleness.model_dump(),
            monitor=next((m for m in monitors if isinstance(m, StaleSongs)), None),
        ),
        ThrottleFinding(
            scenario.upstream.adaptive.enabled,
            scenario.scheduler.retry.by_class,
            tz,
            **th.throttle.model_dump(),
        ),
        *_delivery(scenario),
        *_write_path(scenario, tz),
        *_modes(scenario, tz),
    ]


def _modes(scenario: Scenario, tz: Ms) -> list[Reducer]:
    """Finding ``modes``, for a run with seed 003's traffic modes (``[modes]``) only."""
    modes = scenario.modes
    if not modes.enabled:
        return []
    defers = {"peak": modes.peak_defers, "degraded": modes.degraded_defers}
    return [Deferral(defers, modes.max_defer, tz, **scenario.findings.modes.model_dump())]


def _write_path(scenario: Scenario, tz: Ms) -> list[Reducer]:
    """Finding ``write_path``, for a run with seed 003's write path (``[write_path]``) only."""
    wp = scenario.write_path
    if not wp.enabled:
        return []
    return [
        WriteBacklog(
            wp.flush_rows,
            wp.rows_per_second,
            wp.connections,
            tz,
            **scenario.findings.write_path.model_dump(),
        )
    ]


def _delivery(scenario: Scenario) -> list[Reducer]:
    """Finding ``delivery``, for a run with ``[delivery]`` or a crash (what a crash lost)."""
    d = scenario.delivery
    crash = any(f.kind == "scheduler_restart" for f in scenario.faults)
    if not (d.stalled_check or d.consumer_retry or d.dedupe or crash):
        return []
    return [
        DeliveryFinding(
            d.stalled_check,
            d.consumer_retry,
            d.dedupe,
            scenario.timezone,
            **scenario.findings.delivery.model_dump(),
        )
    ]
