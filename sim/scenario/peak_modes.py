"""``[modes]``: seed 003 §5.1's traffic modes -- default, peak (a time-of-day schedule) and
degraded (the write backlog) -- and what they defer (:mod:`sim.cvsa.modes`, docs/write-path.md).

Off by default: every row is taken when due, as the design note and the deployed code do.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from sim.cvsa.modes import ModeParams
from sim.cvsa.vocabulary import ScheduleType
from sim.scenario.types import DurationMs, Section, duration_default
from sim.units import HOUR_MS, MINUTE_MS, Ms

_WINDOW = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$")
ColdType = Literal["normal", "archive"]


def _cold() -> list[ColdType]:
    return ["normal", "archive"]


def _window_ms(text: str) -> tuple[Ms, Ms]:
    m = _WINDOW.match(text)
    if m is None:
        raise ValueError(f"a peak window is written HH:MM-HH:MM in local time (got {text!r})")
    h1, m1, h2, m2 = (int(g) for g in m.groups())
    a, b = h1 * HOUR_MS + m1 * MINUTE_MS, h2 * HOUR_MS + m2 * MINUTE_MS
    if a == b:
        raise ValueError(f"a peak window must not start and end at the same time (got {text!r})")
    return a, b


class ModesSection(Section):
    """``[modes]``."""

    enabled: bool = False
    """Switch modes on: peak by the schedule below, degraded by the write backlog."""
    peak: list[str] = Field(default_factory=lambda: ["19:00-23:00"], max_length=24)
    """Peak mode's windows, ``HH:MM-HH:MM`` in the scenario's time zone (``23:00-01:00`` wraps
    midnight). bilibili's traffic peaks around 21:00 (UTC+8)."""
    degrade_at_rows: int | None = Field(default=None, ge=1)
    """Write backlog (rows) that starts degraded mode; needs ``[write_path] enabled``."""
    recover_at_rows: int = Field(default=0, ge=0)
    """Write backlog at which degraded mode ends."""
    peak_defers: list[ColdType] = Field(default_factory=_cold)
    """Types peak mode defers (milestone and new rows always run)."""
    degraded_defers: list[ColdType] = Field(default_factory=_cold)
    """Types degraded mode defers."""
    max_defer: DurationMs = Field(default=duration_default("6h"), ge=MINUTE_MS)
    """A deferred row is taken anyway once it has waited this long past its due time; cleanup
    keeps deferred rows this much longer than other overdue rows."""

    @field_validator("peak")
    @classmethod
    def _windows(cls, value: list[str]) -> list[str]:
        for text in value:
            _window_ms(text)
        return value

    @model_validator(mode="after")
    def _marks(self) -> ModesSection:
        high = self.degrade_at_rows
        if high is not None and self.recover_at_rows >= high:
            raise ValueError(
                f"recover_at_rows must be below degrade_at_rows "
                f"(got {self.recover_at_rows} >= {high})"
            )
        return self

    def params(self) -> ModeParams:
        """The rule book's parameters for this section."""
        return ModeParams(
            peak_windows_ms=tuple(_window_ms(w) for w in self.peak),
            degrade_at_rows=self.degrade_at_rows,
            recover_at_rows=self.recover_at_rows,
            peak_defers=frozenset(ScheduleType(t) for t in self.peak_defers),
            degraded_defers=frozenset(ScheduleType(t) for t in self.degraded_defers),
            max_defer_ms=self.max_defer,
        )
