"""The status state machine of a schedule row, as data (style-anchors R1).

Rules of this module, h11 style: every status change a ``snapshot_schedule`` row can make is a
row of a transition table; :func:`advance` is the only way to compute a new status, and it
raises :class:`IllegalTransition` for anything not in the table — a bug in the caller, not in
the user's input. ``deleted`` stands for the hard delete by cleanup (the row is gone). The jobs
call :func:`advance` for every row they change and :func:`window_delta` for its window count
(:mod:`sim.scheduler.schedule_snapshot`, :mod:`sim.scheduler.cleanup`).

Two tables:

* :data:`TRANSITIONS`: the lifecycle of the design note (seed 000 "调度状态流转", reference §3):
  pending → processing → completed | failed | no_proxy | bili_error; pending or processing →
  deleted by cleanup.
* :data:`CVSA_2026_TRANSITIONS`: the same plus the edges the deployed code takes because a
  status write is an unguarded ``UPDATE`` (§6.4): bulk rows finished while still pending
  (aids passed as ids, §8.3), rows re-set to the status they have (§9), overlapping writers (a
  batch enqueued twice, an archive row in a bulk job and the single path, overlapping ticks;
  §7.3, §8.3) and unrelated rows set processing by the aids-as-ids bug (:attr:`Act.STRAY`).

The words themselves (types, statuses) are :mod:`sim.cvsa.vocabulary`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final

from sim.cvsa.profile import Switches
from sim.cvsa.vocabulary import ScheduleStatus

ACTIVE: Final = frozenset({ScheduleStatus.PENDING, ScheduleStatus.PROCESSING})
""""Active" rows: the duplicate check and cleanup look at these (reference conventions, §12)."""
TERMINAL: Final = frozenset(
    {
        ScheduleStatus.COMPLETED,
        ScheduleStatus.FAILED,
        ScheduleStatus.NO_PROXY,
        ScheduleStatus.BILI_ERROR,
    }
)


class Act(StrEnum):
    """What happens to a row."""

    DISPATCH = "dispatch"  # a tick (or snapshotVideo step 3) sets processing
    SUCCEED = "succeed"  # completed
    FAIL = "fail"  # failed
    NO_PROXY = "no_proxy"  # no_proxy: every proxy rate-limited
    BILI_ERROR = "bili_error"  # the API answered with a non-zero code
    CLEANUP = "cleanup"  # deleted by scheduleCleanup
    STRAY = "stray"  # set processing because its id equals an aid of a bulk batch (§8.3)


_RESULT: Final[Mapping[Act, ScheduleStatus]] = {
    Act.DISPATCH: ScheduleStatus.PROCESSING,
    Act.SUCCEED: ScheduleStatus.COMPLETED,
    Act.FAIL: ScheduleStatus.FAILED,
    Act.NO_PROXY: ScheduleStatus.NO_PROXY,
    Act.BILI_ERROR: ScheduleStatus.BILI_ERROR,
    Act.CLEANUP: ScheduleStatus.DELETED,
    Act.STRAY: ScheduleStatus.PROCESSING,
}
_FINISH: Final = (Act.SUCCEED, Act.FAIL, Act.NO_PROXY, Act.BILI_ERROR)
_FINISH_ACT: Final[Mapping[ScheduleStatus, Act]] = {_RESULT[a]: a for a in _FINISH}


def status_after(act: Act) -> ScheduleStatus:
    """The status ``act`` writes (an unguarded ``UPDATE ... SET status``, reference §6.4)."""
    return _RESULT[act]


def finish_act(status: ScheduleStatus) -> Act:
    """The act by which a worker writes a final ``status`` (completed, failed, no_proxy,
    bili_error; reference §9, §10)."""
    return _FINISH_ACT[status]


TRANSITIONS: Final[Mapping[tuple[ScheduleStatus, Act], ScheduleStatus]] = {
    (ScheduleStatus.PENDING, Act.DISPATCH): ScheduleStatus.PROCESSING,
    **{(ScheduleStatus.PROCESSING, a): _RESULT[a] for a in _FINISH},
    (ScheduleStatus.PENDING, Act.CLEANUP): ScheduleStatus.DELETED,
    (ScheduleStatus.PROCESSING, Act.CLEANUP): ScheduleStatus.DELETED,
    # A milestone row completed, then failed: the re-ETA after its snapshot finds no earlier
    # snapshot and throws (§9 step 7; the note is silent there, so design runs the deployed code).
    (ScheduleStatus.COMPLETED, Act.FAIL): ScheduleStatus.FAILED,
}
"""The design lifecycle (seed 000 "调度状态流转"; reference §3), and the one edge the worker's
step 7 adds where the note is silent."""

CVSA_2026_TRANSITIONS: Final[Mapping[tuple[ScheduleStatus, Act], ScheduleStatus]] = {
    **TRANSITIONS,
    # Bulk rows stay pending (aids passed as ids) until the worker finishes them (§3, §8.3).
    **{(ScheduleStatus.PENDING, a): _RESULT[a] for a in (Act.SUCCEED, Act.FAIL, Act.NO_PROXY)},
    # snapshotVideo sets processing again (§9 step 3); overlapping ticks can dispatch a row
    # another tick already took, even after its job finished (§7.3).
    **{
        (s, Act.DISPATCH): ScheduleStatus.PROCESSING for s in (ScheduleStatus.PROCESSING, *TERMINAL)
    },
    # Rows finished twice: completed again after the milestone re-ETA (§9 step 7), failed again
    # after ALICLOUD_PROXY_ERR (§9), and any finish over any finish when a batch is enqueued
    # again or an archive row is in both paths (§8.3).
    **{(s, a): _RESULT[a] for s in TERMINAL for a in _FINISH},
    # The aids-as-ids bug sets whatever row has id == aid to processing (§8.3).
    **{(s, Act.STRAY): ScheduleStatus.PROCESSING for s in (*ACTIVE, *TERMINAL)},
}
"""The deployed lifecycle: any write to an existing row; only cleanup deletes (reference §6.4)."""


class IllegalTransition(Exception):
    """A status change that the lifecycle in use does not allow."""

    def __init__(self, status: ScheduleStatus, act: Act) -> None:
        self.status, self.act = status, act
        super().__init__(f"cannot {act.value} a {status.value} schedule")


Transitions = Mapping[tuple[ScheduleStatus, Act], ScheduleStatus]


def advance(status: ScheduleStatus, act: Act, table: Transitions = TRANSITIONS) -> ScheduleStatus:
    """The status after ``act`` (reference §3).

    Raises:
        IllegalTransition: if ``table`` has no such transition.
    """
    try:
        return table[status, act]
    except KeyError:
        raise IllegalTransition(status, act) from None


def transitions_for(switches: Switches) -> Transitions:
    """The table a run checks against: the deployed one while the aids-as-ids bug is on (§8.3)."""
    return CVSA_2026_TRANSITIONS if switches.bulk_aids_as_ids_bug else TRANSITIONS


def window_delta(status: ScheduleStatus, act: Act, switches: Switches) -> int:
    """The change to the row's window count when ``act`` hits a row in ``status`` (§6.4, §12).

    A status write decrements the window of a row that **was pending** and changes status
    (``setSnapshotStatus``/``bulkSetSnapshotStatus``, §6.4), including an unrelated pending row
    hit by the aids-as-ids bug. Cleanup's delete decrements only with switch
    ``cleanup_decrements`` (design; the deployed code never does, §12, §16.11).
    """
    if status is not ScheduleStatus.PENDING or _RESULT[act] is ScheduleStatus.PENDING:
        return 0
    if act is Act.CLEANUP and not switches.cleanup_decrements:
        return 0
    return -1
