"""``[periodic]``: how the periodic jobs run -- BullMQ job schedulers or seed 001's job table.

``policy = "bullmq"`` (the default) is the deployed crawler (reference §1.3-1.4). ``"table"``
runs the same jobs from seed 001's ``scheduled_job`` table (:mod:`sim.cvsa.job_table`,
:mod:`sim.scheduler.table_runner`; docs/periodic.md compares the two).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import Field, field_validator, model_validator

from sim.cvsa.job_table import (
    PERIODIC_JOBS,
    CronError,
    JobSpec,
    check_cron,
    periodic_periods_ms,
    zone,
)
from sim.cvsa.params import Params
from sim.scenario.types import DurationMs, Section, duration_default
from sim.units import Ms


def _checked(check: Callable[[str], object], value: str | None) -> str | None:
    """``value`` if ``check`` accepts it (or it is unset); the rule's reason as the error."""
    if value is not None:
        try:
            check(value)
        except CronError as exc:
            raise ValueError(str(exc)) from None
    return value


class PeriodicJobSection(Section):
    """``[periodic.jobs.<name>]``: one job's schedule under ``policy = "table"``, in place of
    its period from the design (``[design]``). Set ``every`` or ``cron``, not both."""

    every: DurationMs | None = Field(default=None, gt=0)
    """The period: the next run is the end of this one plus ``every`` (seed 001)."""
    cron: str | None = None
    """A five-field cron expression (minute hour day month weekday) in ``[periodic] timezone``:
    the next run is the first match after this one ends."""
    enabled: bool = True
    """A disabled job runs only when a run is requested (seed 001 到期)."""

    @field_validator("cron")
    @classmethod
    def _cron_parses(cls, value: str | None) -> str | None:
        return _checked(check_cron, value)

    @model_validator(mode="after")
    def _one_schedule(self) -> PeriodicJobSection:
        if self.every is not None and self.cron is not None:
            raise ValueError("set every or cron, not both")
        return self


class RunAction(Section):
    """``[[periodic.actions]]``: an operator's "run now" or "skip this run" (seed 001)."""

    at: DurationMs = Field(ge=0)
    """When, after the run's start."""
    job: str
    """The job's name (one of the periodic jobs)."""
    action: Literal["run", "skip"] = "run"
    """``run``: 立即执行 (merged with a pending request or a running run); ``skip``: 跳过本次
    (the next run moves on by one period)."""

    @field_validator("job")
    @classmethod
    def _known_job(cls, value: str) -> str:
        return _known(value)


def _known(name: str) -> str:
    if name not in PERIODIC_JOBS:
        raise ValueError(f"unknown periodic job {name!r} (one of: {', '.join(PERIODIC_JOBS)})")
    return name


class PeriodicSection(Section):
    """``[periodic]``."""

    policy: Literal["bullmq", "table"] = "bullmq"
    """``bullmq``: BullMQ job schedulers, as deployed (a slot is created when an iteration
    starts; late slots are skipped; iterations may overlap). ``table``: seed 001's table-driven
    runner (the next run is the end of this one plus the period; no re-entry; one executor
    holding a database lock)."""
    poll: DurationMs = 0
    """``table``: the executor's round period (``schedulerIntervalMs``); 0 = a round exactly
    when the earliest job is due."""
    lock_retry: DurationMs = Field(default=duration_default("5s"), gt=0)
    """``table``: how often a process without the lock tries to take it."""
    timezone: str | None = None
    """``table``: the server's IANA time zone for cron jobs (``"Europe/Berlin"``); unset = the
    scenario's fixed ``timezone`` offset."""
    jobs: dict[str, PeriodicJobSection] = Field(default_factory=dict)
    """``table``: per-job schedules (``[periodic.jobs.snapshotTick]``)."""
    actions: list[RunAction] = Field(default_factory=list)
    """``table``: operators' "run now" and "skip" requests."""

    @field_validator("timezone")
    @classmethod
    def _zone_exists(cls, value: str | None) -> str | None:
        return _checked(zone, value)

    @field_validator("jobs")
    @classmethod
    def _known_jobs(cls, value: dict[str, PeriodicJobSection]) -> dict[str, PeriodicJobSection]:
        for name in value:
            _known(name)
        return value

    @model_validator(mode="after")
    def _table_only(self) -> PeriodicSection:
        if self.policy == "bullmq":
            used = [key for key in ("jobs", "actions", "timezone") if getattr(self, key)]
            if used:
                raise ValueError(
                    f'{", ".join(used)} apply only to policy = "table" (BullMQ job '
                    f"schedulers take their periods from [design])"
                )
        return self

    def specs(self, params: Params) -> list[JobSpec]:
        """The periodic jobs as the table registers them: each with its period from the design
        (``params``), or the schedule ``[periodic.jobs.<name>]`` gives it."""
        specs = []
        for name, every in periodic_periods_ms(params).items():
            own = self.jobs.get(name)
            if own is None:
                specs.append(JobSpec(name, every, None, True))
            elif own.cron is not None:
                specs.append(JobSpec(name, None, own.cron, own.enabled))
            else:
                specs.append(JobSpec(name, own.every or every, None, own.enabled))
        return specs

    def periods_ms(self, params: Params) -> dict[str, Ms]:
        """Each periodic job's period under this policy (a cron job has none)."""
        if self.policy == "bullmq":
            return periodic_periods_ms(params)
        return {s.name: s.every_ms for s in self.specs(params) if s.every_ms is not None}
