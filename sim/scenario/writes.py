"""``[write_path]``: seed 003's snapshot write path -- a batching buffer, a database of finite
write capacity, backpressure on the ticks (:mod:`sim.cvsa.write_path`, docs/write-path.md).

Off by default: each snapshot is then inserted the moment it is fetched, as the deployed code
does (reference §9 step 6), and a slow database only adds latency to each query.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from sim.cvsa.write_path import WriteParams
from sim.scenario.types import DurationMs, Section, duration_default


class WritePathSection(Section):
    """``[write_path]``."""

    enabled: bool = False
    """Route snapshot writes through the buffer and the database's capacity."""
    flush_rows: int = Field(default=100, ge=1, le=100_000)
    """A full buffer of this many rows is flushed at once (seed 003 §5.1: 100)."""
    flush_interval: DurationMs = Field(default=duration_default("1s"), gt=0)
    """The oldest buffered row waits at most this long for its flush (seed 003 §5.1: 1 s)."""
    rows_per_second: float = Field(default=2000.0, gt=0)
    """Rows one database connection writes per second (no figure in seed 003: measure yours)."""
    connections: int = Field(default=4, ge=1, le=1000)
    """Flushes written at the same time; more wait for a connection in the order issued."""
    statement: DurationMs = Field(default=duration_default("2ms"), ge=0)
    """Fixed cost of one flush statement (round trip, commit)."""
    backpressure: bool = False
    """Slow the ticks down while the backlog is high (seed 003 §5.1: 反向压力控制)."""
    backpressure_high_rows: int = Field(default=5000, ge=1)
    """Rows fetched but not yet written at which the ticks slow down."""
    backpressure_low_rows: int = Field(default=1000, ge=0)
    """Rows not yet written at which they recover (below the high mark: hysteresis)."""
    spare_hot_tick: bool = False
    """Backpressure leaves the 1 s tick (milestone and new rows) alone: only the 15 s tick and
    the regular and archive dispatchers slow down."""
    slowed_share: float = Field(default=0.25, gt=0, le=1)
    """Share of its usual rows a tick takes under backpressure; the regular and archive
    dispatchers skip their runs meanwhile."""

    @model_validator(mode="after")
    def _thresholds(self) -> WritePathSection:
        high = self.backpressure_high_rows
        if self.backpressure_low_rows >= high:
            raise ValueError(
                f"backpressure_low_rows must be below backpressure_high_rows "
                f"(got {self.backpressure_low_rows} >= {high})"
            )
        return self

    def params(self) -> WriteParams:
        """The rule book's parameters for this section."""
        return WriteParams(
            flush_rows=self.flush_rows,
            flush_interval_ms=self.flush_interval,
            rows_per_second=self.rows_per_second,
            connections=self.connections,
            statement_ms=self.statement,
            backpressure_high_rows=self.backpressure_high_rows if self.backpressure else None,
            backpressure_low_rows=self.backpressure_low_rows,
            spare_hot_tick=self.spare_hot_tick,
            slowed_share=self.slowed_share,
        )
