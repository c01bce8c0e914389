"""Event kinds of seed 003's write path and traffic modes (codes 150-169).

The write path (:mod:`sim.cvsa.write_path`): a snapshot fetched under ``[write_path]`` waits in
the writer's buffer; a flush (at 100 rows or 1 s, seed 003 §5.1) is issued onto a database
connection (``FlushIssued``) and its rows are in the table when the write ends
(``SnapshotsFlushed``, then one ``SnapshotTaken`` per row, logged at that instant). ``backlog``
is always the rows fetched but not yet written (buffered or in a flush not yet done), after the
change the record reports; the write-path finding and plot read it from these records only.
Traffic modes (:mod:`sim.cvsa.modes`): each change of mode is a ``ModeChanged``; what a mode
defers is read from the ticks' ``ScheduleDispatched`` and cleanup's ``ScheduleDeleted``.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from sim.cvsa.vocabulary import TrafficMode
from sim.events.schema import enum, event

TRAFFIC_MODE: Final = enum("traffic_mode", *(m.value for m in TrafficMode))
MODE_CAUSE: Final = enum(
    "mode_cause",
    "start",  # the run started inside a mode
    "schedule",  # a peak window opened or closed (local time of day)
    "backlog",  # the write backlog passed a mark
)


@event(150)
class FlushIssued(NamedTuple):
    """Flush ``flush`` of ``rows`` rows went to connection ``connection``; it is written from
    ``start_ms`` (when the connection frees) to ``end_ms``."""

    seq: int
    t_ms: int
    flush: int
    rows: int
    connection: int
    start_ms: int
    end_ms: int
    backlog: int


@event(151)
class SnapshotsFlushed(NamedTuple):
    """Flush ``flush`` (issued at ``issued_ms``) is written: ``stored`` of its ``rows`` rows are new
    (the others were already there: unique (aid, t), seed 003 §5.2)."""

    seq: int
    t_ms: int
    flush: int
    rows: int
    stored: int
    issued_ms: int
    backlog: int


@event(152)
class BackpressureChanged(NamedTuple):
    """Backpressure turned ``on`` (1) or off (0) at ``backlog`` rows not yet written."""

    seq: int
    t_ms: int
    on: int
    backlog: int


@event(153)
class WriteBufferLost(NamedTuple):
    """A crash took the writer's buffer: ``rows`` fetched snapshots never reach the table."""

    seq: int
    t_ms: int
    rows: int


@event(154)
class DispatchHeldBack(NamedTuple):
    """Under backpressure, the periodic job ``job`` (a name) skipped its run: it only adds work."""

    seq: int
    t_ms: int
    job: int


@event(155)
class ModeChanged(NamedTuple):
    """The traffic mode (TRAFFIC_MODE) is now ``mode``, because of ``cause`` (MODE_CAUSE), at
    ``backlog`` rows not yet written (0 without ``[write_path]``). Seed 003 §5.1: peak and
    degraded modes defer the cold work (normal and archive rows by default)."""

    seq: int
    t_ms: int
    mode: int
    cause: int
    backlog: int
