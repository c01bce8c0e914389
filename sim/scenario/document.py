"""The validated scenario: the one object the engine and the model are configured from.

Each table of a scenario file is a frozen :class:`Section`; unknown keys are errors. Units are
converted here, at load: durations become ms (``DurationMs``), instants epoch ms (``InstantMs``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from sim.cvsa.params import Params
from sim.cvsa.profile import InvalidParams
from sim.cvsa.snapshots import snapshot_reach_ms
from sim.scenario.backends import BackendsSection
from sim.scenario.design import DesignOverrides, show_param
from sim.scenario.expect import ExpectSection
from sim.scenario.faults import ClockSkew, Fault
from sim.scenario.peak_modes import ModesSection
from sim.scenario.periodic import PeriodicSection
from sim.scenario.redelivery import DeliverySection
from sim.scenario.scheduler import SchedulerSection
from sim.scenario.switches import SwitchOverrides
from sim.scenario.thresholds import FindingsSection
from sim.scenario.types import DurationMs, InstantMs, Section, UtcOffsetMs
from sim.scenario.upstream import UpstreamSection
from sim.scenario.world import ArrivalsSection, CatalogSection, CurvesSection
from sim.scenario.world_videos import WorldSection
from sim.scenario.writes import WritePathSection
from sim.units import DEFAULT_EPOCH_MS, HOUR_MS, Ms, format_duration_ms


class EngineSection(Section):
    """``[engine]``: knobs of the simulator itself, not of the system under test."""

    elide_idle_ticks: bool = True
    """Skip periodic iterations that provably do nothing (the log is identical either way)."""
    warm_start: bool = False
    """Run the archive, regular and milestone dispatchers once during set-up, before the clock
    starts, so that the run begins in the steady state (every video already has its rows)
    instead of with the first dispatch of a cold catalogue (``sim load --warm``)."""
    reducers: Literal["auto", "inline", "process"] = "auto"
    """Where the metric reducers run: ``inline`` in the run's process; ``process`` in a second
    Python process fed the log's chunks, on the machine's other core (same results, bit for
    bit; docs/performance.md); ``auto`` picks ``process`` on a machine with two or more cores
    for a catalogue of 100,000 videos or more, where it pays for the child's start-up."""


class Scenario(Section):
    """A whole scenario file."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    """Names the report directory (``reports/<name>/``) and titles every plot."""
    seed: int = Field(default=0, ge=0, lt=2**63)
    """Every random stream derives from it (``--seed`` overrides): same seed, same event log."""
    start: InstantMs = DEFAULT_EPOCH_MS
    """The first simulated instant (the catalog's "now" at load)."""
    duration: DurationMs = Field(gt=0)
    """Simulated time to run."""
    timezone: UtcOffsetMs = 8 * HOUR_MS
    """The crawler's local time zone; drives the Saturday/Monday archive targets (§13b.5, Q2)."""
    profile: Literal["design", "cvsa-2026"] = "design"
    """The design note as written, or the deployed code with its bugs (docs/profiles.md)."""
    switches: SwitchOverrides = SwitchOverrides()
    """Per-switch overrides of the profile (sim.cvsa.profile; docs/profiles.md)."""
    design: DesignOverrides = DesignOverrides()
    """Overrides of the profile's numbers (sim.cvsa.params; docs/profiles.md)."""
    scheduler: SchedulerSection = SchedulerSection()
    periodic: PeriodicSection = PeriodicSection()
    """How the periodic jobs run: BullMQ job schedulers or seed 001's job table."""
    upstream: UpstreamSection = UpstreamSection()
    write_path: WritePathSection = WritePathSection()
    """Seed 003's snapshot write path: buffer, database capacity, backpressure (off by default)."""
    modes: ModesSection = ModesSection()
    """Seed 003's traffic modes: peak and degraded modes defer the cold work (off by default)."""
    delivery: DeliverySection = DeliverySection()
    """Redelivery and dedupe of queue jobs, each off by default (docs/redelivery.md)."""
    faults: list[Fault] = Field(default_factory=list)
    """What goes wrong, and when (``[[faults]]``, sim.scenario.faults)."""
    engine: EngineSection = EngineSection()
    backends: BackendsSection = BackendsSection()
    expect: ExpectSection = ExpectSection()
    """Thresholds on the run's metrics, checked by ``sim check``."""
    findings: FindingsSection = FindingsSection()
    """The thresholds that decide each finding's severity (docs/report.md "Findings")."""
    catalog: CatalogSection = CatalogSection()
    curves: CurvesSection = CurvesSection()
    arrivals: ArrivalsSection = ArrivalsSection()
    world: WorldSection = WorldSection()
    """Videos pinned to chosen curves (``[[world.videos]]``, sim.scenario.world_videos)."""

    @model_validator(mode="after")
    def _risk_storm_has_risk_control(self) -> Scenario:
        if not self.upstream.risk_control.enabled and any(
            f.kind == "risk_control_storm" for f in self.faults
        ):
            raise ValueError(
                "a risk_control_storm fault needs [upstream.risk_control] enabled = true"
            )
        return self

    @model_validator(mode="after")
    def _end_fits(self) -> Scenario:
        if self.start + self.duration >= 2**62:
            raise ValueError("start + duration is too far in the future")
        return self

    @model_validator(mode="after")
    def _pins_fit(self) -> Scenario:
        """Each pinned video replaces a drawn one of its kind, so the catalogue must have one."""
        pinned = self.world.videos
        for song, have, key in (
            (True, self.catalog.songs, "songs"),
            (False, self.catalog.non_songs, "non_songs"),
        ):
            need = sum(v.song == song for v in pinned)
            if need > have:
                raise ValueError(
                    f"world.videos pins {need} {'songs' if song else 'non-songs'} but "
                    f"catalog.{key} = {have}: each pinned video replaces a drawn one"
                )
        for i, video in enumerate(pinned):
            late = [r.after for r in video.recounts if r.after >= self.duration]
            if late:
                raise ValueError(
                    f"world.videos[{i}].recounts: a correction {late[0]} ms after the start "
                    f"falls after the run's end (duration {self.duration} ms)"
                )
        return self

    @model_validator(mode="after")
    def _actions_fit(self) -> Scenario:
        for i, action in enumerate(self.periodic.actions):
            if action.at >= self.duration:
                raise ValueError(
                    f"periodic.actions[{i}].at = {format_duration_ms(action.at)} falls after the "
                    f"run's end (duration {format_duration_ms(self.duration)})"
                )
        return self

    @model_validator(mode="after")
    def _faults_fit(self) -> Scenario:
        """A fault that begins after the end would never happen: a typo, not a plan."""
        for i, fault in enumerate(self.faults):
            key = "at" if hasattr(fault, "at") else "start"
            begins: int = getattr(fault, key)
            if begins >= self.duration:
                raise ValueError(
                    f"faults[{i}].{key} must fall before the run's end at "
                    f"{format_duration_ms(self.duration)} (got {format_duration_ms(begins)})"
                )
        return self

    @model_validator(mode="after")
    def _degraded_needs_writes(self) -> Scenario:
        modes = self.modes
        if modes.enabled and modes.degrade_at_rows is not None and not self.write_path.enabled:
            raise ValueError(
                "modes.degrade_at_rows follows the write backlog: it needs "
                "write_path.enabled = true"
            )
        return self

    @model_validator(mode="after")
    def _design_holds(self) -> Scenario:
        """The profile's numbers with ``[design]`` keep the rule book's rules (check_params)."""
        try:
            self.design.params(self.profile)
        except InvalidParams as exc:
            first = exc.problems[0]
            raise ValueError(
                f"design.{first.name} {first.rule} (got {show_param(first.name, first.value)})"
            ) from None
        return self

    @property
    def params(self) -> Params:
        """The run's numbers: the profile's, with ``[design]`` applied."""
        return self.design.params(self.profile)

    @property
    def snapshot_reach_ms(self) -> Ms:
        """How far back the run's rules read snapshots
        (:func:`sim.cvsa.snapshots.snapshot_reach_ms`), with the farthest any ``clock_skew``
        fault sets the worker's clock behind."""
        behind = max((-f.skew for f in self.faults if isinstance(f, ClockSkew)), default=0)
        return snapshot_reach_ms(self.params, behind)

    @property
    def start_ms(self) -> int:
        return self.start

    @property
    def end_ms(self) -> int:
        return self.start + self.duration
