"""Seed 003 §5.1's traffic modes: default, peak and degraded; what each defers, and for how long.

Seed 003 §5.1: "预设几档流量模式：默认模式、高峰模式、降级模式。高峰模式下只保留热度靠前的房间高频采
集，冷门房间直接降频，等高峰期结束再补采" -- preset traffic modes; in a peak only the hottest items
keep their frequency, cold ones are slowed and back-filled when the peak is over. Here:

* **Which mode.** Peak mode follows a time-of-day schedule (local time, e.g. 19:00-23:00);
  degraded mode follows the write backlog (:mod:`sim.cvsa.write_path`), on at one mark and off at
  a lower one (hysteresis). Degraded wins over peak, peak over default (:func:`mode_of`).
* **What is deferred.** Milestone and new rows (the hot work: a milestone is about to be crossed,
  a song was just uploaded) always run. The types a mode lists (by default normal and archive,
  the cold work) are not taken by the ticks while it lasts (:func:`deferred`)...
* **Bounded.** ... unless a row has waited ``max_defer_ms`` past its due time: then it is taken
  anyway (:func:`deferred_due_before_ms`), so no mode starves a row for longer than the bound.
  Cleanup keeps a row of a deferrable type for the bound on top of its own timeout
  (:func:`kept_before_ms`), else the design's 2-minute cleanup would delete the deferred work
  instead of leaving it for later -- pending, and processing too: a back-filled row is overdue
  the moment the tick takes it, and cleanup only sees its due time.
* **Back-filled, cold last.** When the mode ends the deferred rows are overdue and the bulk tick
  takes them, normal before archive (its ``normal_first`` order, reference §8.1): the colder
  type, deferred with the warmer one, is restored last.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sim.cvsa.params import field_doc
from sim.cvsa.vocabulary import ScheduleType, TrafficMode
from sim.cvsa.write_path import hysteresis_next
from sim.units import DAY_MS, HOUR_MS, MINUTE_MS, Ms

COLD_TYPES: tuple[ScheduleType, ...] = (ScheduleType.NORMAL, ScheduleType.ARCHIVE)
"""The types a mode may defer, warm to cold: milestone and new are never deferred."""


@dataclass(frozen=True, kw_only=True)
class ModeParams:
    """The modes' numbers: seed 003 names the modes and what they do, not their numbers."""

    peak_windows_ms: tuple[tuple[Ms, Ms], ...] = field(
        default=(),
        metadata=field_doc(
            "local times of day (ms after midnight) of peak mode, [from, to); to < from wraps "
            "midnight",
            "seed 003 §5.1 (高峰模式); the scenario's choice of hours",
        ),
    )
    degrade_at_rows: int | None = field(
        default=None,
        metadata=field_doc(
            "write backlog (rows) at which degraded mode starts; None: never",
            "seed 003 §5.1 (降级模式)",
        ),
    )
    recover_at_rows: int = field(
        default=0,
        metadata=field_doc(
            "write backlog at which degraded mode ends (below the start mark)", "seed 003 §5.1"
        ),
    )
    peak_defers: frozenset[ScheduleType] = field(
        default=frozenset(COLD_TYPES),
        metadata=field_doc("types peak mode defers", "seed 003 §5.1 (冷门房间直接降频)"),
    )
    degraded_defers: frozenset[ScheduleType] = field(
        default=frozenset(COLD_TYPES),
        metadata=field_doc("types degraded mode defers", "seed 003 §5.1"),
    )
    max_defer_ms: Ms = field(
        default=6 * HOUR_MS,
        metadata=field_doc(
            "the longest a deferred row waits past its due time before it is taken anyway",
            "the simulator's choice (the issue's 'bounded'; seed 003 gives no bound)",
        ),
    )

    def __post_init__(self) -> None:
        for a, b in self.peak_windows_ms:
            if not (0 <= a < DAY_MS and 0 <= b < DAY_MS) or a == b:
                raise ValueError(f"a peak window must be two distinct times of day (got {a}, {b})")
        for name, types in (("peak", self.peak_defers), ("degraded", self.degraded_defers)):
            hot = sorted(t.value for t in types if t not in COLD_TYPES)
            if hot:
                raise ValueError(f"{name} mode may defer only normal and archive rows (got {hot})")
        high = self.degrade_at_rows
        if high is not None and not 0 <= self.recover_at_rows < high:
            raise ValueError(
                f"recover_at_rows must be >= 0 and below degrade_at_rows "
                f"(got {self.recover_at_rows} and {high})"
            )
        if self.max_defer_ms < MINUTE_MS:
            raise ValueError(f"max_defer must be at least 1 minute (got {self.max_defer_ms} ms)")


def _time_of_day(now_ms: Ms, tz_offset_ms: Ms) -> Ms:
    return (now_ms + tz_offset_ms) % DAY_MS


def in_peak(now_ms: Ms, tz_offset_ms: Ms, params: ModeParams) -> bool:
    """Is ``now_ms`` inside a peak window (local time)?"""
    tod = _time_of_day(now_ms, tz_offset_ms)
    return any(
        (a <= tod < b) if a < b else (tod >= a or tod < b) for a, b in params.peak_windows_ms
    )


def next_peak_edge_ms(now_ms: Ms, tz_offset_ms: Ms, params: ModeParams) -> Ms | None:
    """The first instant after ``now_ms`` at which a peak window opens or closes; None: never."""
    if not params.peak_windows_ms:
        return None
    tod = _time_of_day(now_ms, tz_offset_ms)
    waits = [
        (edge - tod) % DAY_MS or DAY_MS for window in params.peak_windows_ms for edge in window
    ]
    return now_ms + min(waits)


def degraded_next(degraded: bool, backlog_rows: int, params: ModeParams) -> bool:
    """Degraded after the write backlog changed to ``backlog_rows``: from ``degrade_at_rows``
    down to ``recover_at_rows`` (the same hysteresis as backpressure)."""
    return hysteresis_next(degraded, backlog_rows, params.degrade_at_rows, params.recover_at_rows)


def mode_of(peak: bool, degraded: bool) -> TrafficMode:
    """Degraded wins over peak, peak over default."""
    if degraded:
        return TrafficMode.DEGRADED
    return TrafficMode.PEAK if peak else TrafficMode.DEFAULT


def deferred(snapshot_type: ScheduleType, mode: TrafficMode, params: ModeParams) -> bool:
    """Does ``mode`` defer rows of ``snapshot_type``? Never milestone or new ones."""
    if mode is TrafficMode.PEAK:
        return snapshot_type in params.peak_defers
    if mode is TrafficMode.DEGRADED:
        return snapshot_type in params.degraded_defers
    return False


def deferred_due_before_ms(now_ms: Ms, params: ModeParams) -> Ms:
    """A tick takes a row of a deferred type only when it is due at or before this instant: it
    has waited the bound (``max_defer_ms``) past its due time."""
    return now_ms - params.max_defer_ms


def split_types(
    types: Sequence[ScheduleType], mode: TrafficMode, params: ModeParams
) -> tuple[tuple[ScheduleType, ...], tuple[ScheduleType, ...]]:
    """A tick's types as (taken as usual, deferred now), each in the tick's order."""
    late = tuple(t for t in types if deferred(t, mode, params))
    return tuple(t for t in types if t not in late), late


def kept_before_ms(cleanup_before_ms: Ms, params: ModeParams) -> Mapping[ScheduleType, Ms]:
    """Cleanup's bound for rows of each deferrable type: due before this, an active row
    is deleted. The bound of the other rows (``cleanup_before_ms``) moved back by
    ``max_defer_ms``: a deferred row survives as long as it may be deferred, and then as long as
    any overdue row."""
    types = params.peak_defers | params.degraded_defers
    return {t: cleanup_before_ms - params.max_defer_ms for t in COLD_TYPES if t in types}
