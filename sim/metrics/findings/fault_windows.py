"""The faults of a run as the log tells them, so findings can say what happened during one.

A finding that counts something a fault explains (slots missed while the scheduler was down,
rows deleted because their jobs died with it) says so, rather than calling it a failure of the
design: the scenario's ``[[faults]]`` asked for it (sim.scenario.faults).
"""

from __future__ import annotations

from sim.events import cvsa_kinds as K
from sim.events.engine_kinds import FaultEnded, FaultStarted
from sim.events.log import Chunk

_OPEN = 2**62


class FaultWindows:
    """Fed every chunk before its finding looks at it: the faults started so far, each with its
    interval (open until its ``FaultEnded``). Runs have a handful of faults."""

    def __init__(self) -> None:
        self.intervals: list[list[int]] = []  # [start_ms, end_ms, fault id, kind]

    def feed(self, chunk: Chunk) -> None:
        for t, fault, kind in chunk.table(FaultStarted)[:, 1:4].tolist():
            self.intervals.append([t, _OPEN, fault, kind])
        for t, fault in chunk.table(FaultEnded)[:, 1:3].tolist():
            for f in self.intervals:
                if f[2] == fault and f[1] == _OPEN:
                    f[1] = t

    def at(self, t_ms: int) -> str | None:
        """The kind of a fault active at ``t_ms`` (the first started), or None."""
        for start, end, _, kind in self.intervals:
            if start <= t_ms < end:
                return str(K.FAULT_KIND.word(kind))
        return None

    def overlapping(self, lo_ms: int, hi_ms: int) -> str | None:
        """The kind of a fault active at some instant of ``[lo_ms, hi_ms)``, or None."""
        for start, end, _, kind in self.intervals:
            if start < hi_ms and lo_ms < end:
                return str(K.FAULT_KIND.word(kind))
        return None
