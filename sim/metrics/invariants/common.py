"""Shared by the invariant monitors: example keeping, column lookup, record codes."""

from __future__ import annotations

from typing import Any

from sim.events import cvsa_kinds as K
from sim.events.log import Chunk
from sim.events.schema import BY_RECORD, HEAD_FIELDS
from sim.units import HOUR_MS, Ms

EXAMPLES = 20
"""Examples kept per invariant (the first ones, in log order); the counts are always exact."""

DEFAULT_STALE_INTERVAL_MS: Ms = 72 * HOUR_MS
"""The longest regular interval (reference §11.6): a song is due at least this often."""
DEFAULT_STALE_SLACK_MS: Ms = 2 * HOUR_MS
DEFAULT_CAPTURE_BOUND_MS: Ms = HOUR_MS
"""A milestone counts as missed when no snapshot shows it within this time of the crossing."""

SINGLE_PATH_JOB = "snapshotVideo"
"""The job name of the single path (§7.2); ``bulkSnapshotVideo`` is the bulk path (§8.2)."""

_TYPES = K.SNAPSHOT_TYPE.words
_FORWARD = K.PLACEMENT.code("forward")
_FALLBACK = K.PLACEMENT.code("fallback")
_EXACT = K.PLACEMENT.code("exact")
_UNADJUSTED = K.PLACEMENT.code("unadjusted")
_EXHAUSTED = K.PLACEMENT.code("exhausted")
_PENDING = K.SCHEDULE_STATUS.code("pending")
_PROCESSING = K.SCHEDULE_STATUS.code("processing")
_ROW_GONE = K.SKIP_REASON.code("row_gone")
_BILI_STATUS = K.SKIP_REASON.code("bili_status")


def _col(record_type: type, field: str) -> int:
    """The column of ``field`` in the numpy table of ``record_type``."""
    return (*HEAD_FIELDS, *BY_RECORD[record_type].fields).index(field)


class _Violations:
    """An exact count and the first :data:`EXAMPLES` examples of one invariant."""

    def __init__(self, name: str, *, counts_checked: bool = False) -> None:
        self.name = name
        self.count = 0
        self.counts_checked = counts_checked
        self.checked = 0
        """How many events the rule was checked on (``invariants.<name>.checked``), for the
        monitors that count them: "0 violations" then says of how many."""
        self.examples: list[dict[str, Any]] = []

    def add(self, example: dict[str, Any]) -> None:
        self.count += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(example)

    @property
    def room(self) -> int:
        """How many more examples would be kept."""
        return EXAMPLES - len(self.examples)

    def result(self) -> dict[str, Any]:
        out = {
            f"invariants.{self.name}.violations": self.count,
            f"invariants.{self.name}.examples": list(self.examples),
        }
        if self.counts_checked:
            out[f"invariants.{self.name}.checked"] = self.checked
        return out


def _last_t(chunk: Chunk) -> Ms | None:
    """The latest instant in ``chunk`` (each kind's rows are in log order, so time order)."""
    ends = [int(t[-1, 1]) for t in chunk.tables.values() if t.shape[0]]
    return max(ends) if ends else None


_CREATED = {f: _col(K.ScheduleCreated, f) for f in K.ScheduleCreated._fields}
_MOVED = {f: _col(K.ScheduleMoved, f) for f in K.ScheduleMoved._fields}


# -- 1. window_cap ------------------------------------------------------------------------------
