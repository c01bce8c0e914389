"""``scheduleSnapshot``: what one call decides to do, without doing it (reference §5).

The caller looks up the aid's active rows of the same type, asks :func:`plan_schedule_snapshot`,
and carries out the returned decision:

* :class:`Skip`: nothing (an active row of the type exists and ``force`` is off, or a milestone
  row is already due earlier).
* :class:`Move`: update the row's ``started_at`` in one transaction and apply ``effects`` (the
  window counts follow the row only if it was pending, §5 step 2, §19.11).
* :class:`Insert`: insert a pending row. With ``adjust`` run
  :func:`sim.cvsa.windows.adjust_snapshot_time` and insert at its time; otherwise apply
  ``Insert.incr`` (the unconditional +1 of milestone and new rows, or of any row when the caller
  does not adjust: no cap check, §19.12) and insert at the target. The insert is not atomic with
  the count (§5 step 5).

Which calls force: the 4 initial ``new`` rows and collectSongs' row always do; a ``new``
continuation does when ``switches.new_successors_forced`` (deployed, §13.3); nothing else does
(§4).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from sim.cvsa.params import Params
from sim.cvsa.profile import Switches
from sim.cvsa.vocabulary import ScheduleStatus, ScheduleType
from sim.cvsa.windows import Incr
from sim.ports import new_record
from sim.units import Ms


class ActiveRow(NamedTuple):
    """An active (pending or processing) row of the same aid and type."""

    id: int
    status: ScheduleStatus
    started_at_ms: Ms


class Skip(NamedTuple):
    """Do nothing; ``reason`` is ``"duplicate_active"`` or ``"milestone_not_earlier"`` (the
    words of the event log's ``not_created`` table)."""

    reason: str


class Move(NamedTuple):
    """Move milestone row ``row_id`` from ``from_ms`` to ``to_ms`` and apply ``effects``."""

    row_id: int
    from_ms: Ms
    to_ms: Ms
    effects: tuple[Incr, ...]


class Insert(NamedTuple):
    """Insert a pending row at ``target_ms``: after the window search when ``adjust``; else at
    the target itself, with the unconditional window increment ``incr`` (§5 step 4). ``exact``:
    the type keeps its exact time (milestone and new rows, §19.12), rather than the caller
    having passed ``adjustTime = false``."""

    target_ms: Ms
    adjust: bool
    incr: Incr | None
    exact: bool


def _latest_first(row: ActiveRow) -> tuple[Ms, int]:
    return row.started_at_ms, row.id


SKIP_NOT_EARLIER: Final = Skip("milestone_not_earlier")
SKIP_ACTIVE: Final = Skip("duplicate_active")
_EXACT_TYPES: Final = (ScheduleType.MILESTONE, ScheduleType.NEW)


def plan_schedule_snapshot(
    snapshot_type: ScheduleType,
    target_ms: Ms,
    active: Sequence[ActiveRow],
    *,
    force: bool,
    adjust_time: bool,
    switches: Switches,
    params: Params,
) -> Skip | Move | Insert:
    """Decide one ``scheduleSnapshot(aid, type, target, force, adjustTime)`` call (§5).

    1. A milestone target for an aid with active milestone rows can only pull a row **earlier**:
       the row with the latest ``started_at`` is moved if it is due after ``target_ms``.
       Deployed (switch ``milestone_move_processing``) picks among all active rows, so a
       processing row can be moved, with no window change (§19.11); design (seed 000,
       "若视频已有同类型待处理调度，更新其时间为更早的") among pending rows only. Nothing clamps the
       move to the future.
    2. Otherwise an active row of the type means no new row unless ``force``.
    3. Milestone and new rows keep their exact time (an uncapped +1); other types go through
       the window search when ``adjust_time`` (seed 000 "时间调整策略").

    Args:
        snapshot_type: the row type.
        target_ms: the wanted due time.
        active: the aid's pending and processing rows **of this type**.
        force: insert even if an active row of the type exists.
        adjust_time: the caller's ``adjustTime`` (true everywhere in the deployed code).
        switches: the run's switches.
        params: the window length (``window_ms``).
    """
    window_ms = params.window_ms
    if snapshot_type is ScheduleType.MILESTONE and active:
        movable = [
            r
            for r in active
            if switches.milestone_move_processing or r.status is ScheduleStatus.PENDING
        ]
        if movable:
            # ORDER BY started_at DESC LIMIT 1; equal times are unordered in SQL: take the newer id.
            # (Nearly always one row: no key tuples then; the dispatcher asks every 5 minutes.)
            row = movable[0] if len(movable) == 1 else max(movable, key=_latest_first)
            if row.started_at_ms > target_ms:
                effects: tuple[Incr, ...] = ()
                if row.status is ScheduleStatus.PENDING:
                    before_ms, after_ms = row.started_at_ms, target_ms
                    effects = (
                        new_record(Incr, (before_ms - before_ms % window_ms, -1)),
                        new_record(Incr, (after_ms - after_ms % window_ms, +1)),
                    )
                return new_record(Move, (row.id, row.started_at_ms, target_ms, effects))
            if not force:
                return SKIP_NOT_EARLIER
    if active and not force:
        return SKIP_ACTIVE
    exact = snapshot_type in _EXACT_TYPES
    if adjust_time and not exact:
        return new_record(Insert, (target_ms, True, None, False))
    incr = new_record(Incr, (target_ms - target_ms % window_ms, +1))
    return new_record(Insert, (target_ms, False, incr, exact))
