"""The snapshot write path of seed 003 §5.1: a batching buffer, a database of finite capacity, and
backpressure on the ticks.

Seed 003 §5.1 (高峰期请求积压): "写入端改成批量写，攒够 100 条或者攒够 1 秒再统一落库" --
writes are buffered and flushed at 100 rows or after 1 s, whichever comes first -- and
"当写入端积压超过阈值时调度器会自动降低扫描频率" -- when the write backlog passes a threshold the
scheduler scans less. Seed 003 §4.2 and §5.2 make every write idempotent through a unique key
(``room_id + event_time``; here (aid, t)): a flush written twice stores each row once.

The database is a service queue in virtual time: ``connections`` servers, each writing
``rows_per_second``; a flush takes the connection that frees first (FIFO), holds it for
:func:`service_ms` and only then are its rows in the table. A slow database (the
``slow_database`` fault's extra latency per statement) therefore lowers the throughput and
builds a backlog, instead of only delaying each query.

Backpressure is a two-state table with hysteresis (:func:`backpressure_next`): on at
``backpressure_high_rows`` rows not yet written, off again at ``backpressure_low_rows``; while on,
each tick takes ``slowed_share`` of its usual rows (:func:`tick_limit`) and the regular and
archive dispatchers, which only add work, skip their runs.

Everything here is a pure function of its arguments; the scheduler's buffer
(:mod:`sim.scheduler.write_buffer`) keeps the state and calls these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sim.cvsa.params import field_doc
from sim.units import SECOND_MS, Ms


@dataclass(frozen=True, kw_only=True)
class WriteParams:
    """The write path's numbers: seed 003's where it states them, the simulator's otherwise."""

    flush_rows: int = field(
        default=100,
        metadata=field_doc("rows that flush the buffer at once", "seed 003 §5.1: 100 条"),
    )
    flush_interval_ms: Ms = field(
        default=1 * SECOND_MS,
        metadata=field_doc(
            "the longest a buffered row waits for its flush", "seed 003 §5.1: 攒够 1 秒"
        ),
    )
    rows_per_second: float = field(
        default=2000.0,
        metadata=field_doc(
            "rows one database connection writes per second",
            "the simulator's choice (seed 003 gives no figure); set it from a measurement",
        ),
    )
    connections: int = field(
        default=4,
        metadata=field_doc(
            "connections the writer holds: flushes written at the same time",
            "seed 003 §5.1 (数据库连接被耗尽); the simulator's choice of number",
        ),
    )
    statement_ms: Ms = field(
        default=2,
        metadata=field_doc(
            "fixed cost of one flush statement (round trip, commit)", "the simulator's choice"
        ),
    )
    backpressure_high_rows: int | None = field(
        default=None,
        metadata=field_doc(
            "rows not yet written at which backpressure starts; None: no backpressure",
            "seed 003 §5.1 (积压超过阈值)",
        ),
    )
    backpressure_low_rows: int = field(
        default=0,
        metadata=field_doc(
            "rows not yet written at which backpressure ends (hysteresis: below the high mark)",
            "seed 003 §5.1; the simulator's choice of a second threshold",
        ),
    )
    spare_hot_tick: bool = field(
        default=False,
        metadata=field_doc(
            "backpressure leaves the 1 s tick (milestone and new rows) alone",
            "seed 003 §5.1 (宁可少采一些临时数据，也不能把核心链路拖垮); the simulator's choice",
        ),
    )
    slowed_share: float = field(
        default=0.25,
        metadata=field_doc(
            "share of its usual rows a tick takes while backpressure is on",
            "seed 003 §5.1 (降低扫描频率); the simulator's choice of share",
        ),
    )

    def __post_init__(self) -> None:
        if self.flush_rows < 1:
            raise ValueError(f"flush_rows must be >= 1 (got {self.flush_rows})")
        if self.connections < 1:
            raise ValueError(f"connections must be >= 1 (got {self.connections})")
        if self.rows_per_second <= 0:
            raise ValueError(f"rows_per_second must be > 0 (got {self.rows_per_second})")
        high = self.backpressure_high_rows
        if high is not None and not 0 <= self.backpressure_low_rows < high:
            raise ValueError(
                f"backpressure_low_rows must be >= 0 and below backpressure_high_rows "
                f"(got {self.backpressure_low_rows} and {high})"
            )
        if not 0.0 < self.slowed_share <= 1.0:
            raise ValueError(f"slowed_share must be in (0, 1] (got {self.slowed_share})")


def flush_now(buffered_rows: int, params: WriteParams) -> bool:
    """A row just joined the buffer: flush at once? Yes when it holds ``flush_rows``
    (攒够 100 条)."""
    return buffered_rows >= params.flush_rows


def flush_deadline_ms(first_buffered_ms: Ms, params: WriteParams) -> Ms:
    """When a buffer whose oldest row arrived at ``first_buffered_ms`` is flushed if it does not
    fill first (攒够 1 秒)."""
    return first_buffered_ms + params.flush_interval_ms


def service_ms(rows: int, params: WriteParams, extra_latency_ms: Ms = 0) -> Ms:
    """How long one flush of ``rows`` holds its connection: the statement's fixed cost, any extra
    latency of a slow database, and the rows at the connection's write rate (rounded up: a
    partial millisecond still occupies the connection)."""
    return (
        params.statement_ms
        + extra_latency_ms
        + math.ceil(rows * SECOND_MS / params.rows_per_second)
    )


def connection_for(free_at_ms: list[Ms], now_ms: Ms) -> tuple[int, Ms]:
    """The connection a flush issued at ``now_ms`` is written on, and when its write starts: the
    one that frees first (lowest index on a tie), FIFO -- flushes are served in the order issued."""
    best = min(range(len(free_at_ms)), key=lambda i: (free_at_ms[i], i))
    return best, max(now_ms, free_at_ms[best])


def hysteresis_next(on: bool, value: int, high: int | None, low: int) -> bool:
    """A two-state switch with hysteresis, after its input changed to ``value``.

    ========  ===============  =========
    state     value            next
    ========  ===============  =========
    off       >= ``high``      on
    on        <= ``low``       off
    either    otherwise        unchanged
    ========  ===============  =========

    Between the two marks the switch keeps its state, so it does not flap at one threshold.
    ``high`` None: never on."""
    if high is None:
        return False
    return value > low if on else value >= high


def backpressure_next(on: bool, backlog_rows: int, params: WriteParams) -> bool:
    """Backpressure after the backlog changed to ``backlog_rows``: on at
    ``backpressure_high_rows``, off again at ``backpressure_low_rows``."""
    return hysteresis_next(
        on, backlog_rows, params.backpressure_high_rows, params.backpressure_low_rows
    )


def tick_limit(limit: int, backpressure_on: bool, params: WriteParams, *, hot: bool) -> int:
    """The rows a tick takes: its limit, or ``slowed_share`` of it (at least one) under
    backpressure (seed 003 §5.1: 降低扫描频率). ``hot``: the 1 s tick of milestone and new rows,
    spared with ``spare_hot_tick`` (the core work, 核心链路)."""
    if not backpressure_on or (hot and params.spare_hot_tick):
        return limit
    return max(1, math.floor(limit * params.slowed_share))


def regular_dispatch_runs(backpressure_on: bool) -> bool:
    """Do the regular and archive dispatchers run now? Not under backpressure: they only add rows
    to a backlog the database cannot write (seed 003 §5.1: 宁可少采一些). The milestone
    dispatcher always runs: milestones are the work a peak must keep (seed 003 §5.1 高峰模式)."""
    return not backpressure_on
