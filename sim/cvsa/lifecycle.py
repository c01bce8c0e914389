"""Schedule types and statuses, and the status state machine as data (style-anchors R1).

Rules of this module, h11 style: every status change a ``snapshot_schedule`` row can make is a
row of a transition table; :func:`advance` is the only way to compute a new status, and it
raises :class:`IllegalTransition` for anything not in the table — a bug in the caller, not in
the user's input. ``deleted`` stands for the hard delete by cleanup (the row is gone).

Two tables:

* :data:`TRANSITIONS`: the lifecycle of the design note (seed 000 "调度状态流转", reference §3):
  pending → processing → completed | failed | no_proxy | bili_error; pending or processing →
  deleted by cleanup.
* :data:`CVSA_2026_TRANSITIONS`: the same plus the edges the deployed code takes because a
  status write is an unguarded ``UPDATE`` (§6.4): bulk rows finished while still pending
  (aids passed as ids, §8.3), rows re-set to the status they have (§9), overlapping writers (a
  batch enqueued twice, an archive row in a bulk job and the single path, overlapping ticks;
  §7.3, §8.3) and unrelated rows set processing by the aids-as-ids bug (:attr:`Act.STRAY`).

The two word tables, ``snapshot_type`` and ``schedule_status``, are declared with the event kinds
(:mod:`sim.events.cvsa_kinds`), so their codes are written into every event-log header.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final

from sim.cvsa.profile import Switches
from sim.events.cvsa_kinds import SCHEDULE_STATUS, SNAPSHOT_TYPE


class SnapshotType(StrEnum):
    """``snapshot_schedule.type`` (seed 000 "调度类型概览"; reference §2.1)."""

    NEW = "new"
    MILESTONE = "milestone"
    NORMAL = "normal"
    ARCHIVE = "archive"


class Status(StrEnum):
    """``snapshot_schedule.status``, plus ``deleted`` for a row removed by cleanup (§2.1, §12)."""

    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    NO_PROXY = "no_proxy"
    BILI_ERROR = "bili_error"
    DELETED = "deleted"


# SNAPSHOT_TYPE and SCHEDULE_STATUS, the event-log code tables (code = position), live with the
# event kinds and list the words in the order above (tests/cvsa/test_lifecycle.py pins it).
__all__ = ["SCHEDULE_STATUS", "SNAPSHOT_TYPE"]  # re-exported

ACTIVE: Final = frozenset({Status.PENDING, Status.PROCESSING})
""""Active" rows: the duplicate check and cleanup look at these (reference conventions, §12)."""
TERMINAL: Final = frozenset({Status.COMPLETED, Status.FAILED, Status.NO_PROXY, Status.BILI_ERROR})


class Act(StrEnum):
    """What happens to a row."""

    DISPATCH = "dispatch"  # a tick (or snapshotVideo step 3) sets processing
    SUCCEED = "succeed"  # completed
    FAIL = "fail"  # failed
    NO_PROXY = "no_proxy"  # no_proxy: every proxy rate-limited
    BILI_ERROR = "bili_error"  # the API answered with a non-zero code
    CLEANUP = "cleanup"  # deleted by scheduleCleanup
    STRAY = "stray"  # set processing because its id equals an aid of a bulk batch (§8.3)


_RESULT: Final[Mapping[Act, Status]] = {
    Act.DISPATCH: Status.PROCESSING,
    Act.SUCCEED: Status.COMPLETED,
    Act.FAIL: Status.FAILED,
    Act.NO_PROXY: Status.NO_PROXY,
    Act.BILI_ERROR: Status.BILI_ERROR,
    Act.CLEANUP: Status.DELETED,
    Act.STRAY: Status.PROCESSING,
}
_FINISH: Final = (Act.SUCCEED, Act.FAIL, Act.NO_PROXY, Act.BILI_ERROR)

TRANSITIONS: Final[Mapping[tuple[Status, Act], Status]] = {
    (Status.PENDING, Act.DISPATCH): Status.PROCESSING,
    **{(Status.PROCESSING, a): _RESULT[a] for a in _FINISH},
    (Status.PENDING, Act.CLEANUP): Status.DELETED,
    (Status.PROCESSING, Act.CLEANUP): Status.DELETED,
}
"""The design lifecycle (seed 000 "调度状态流转"; reference §3)."""

CVSA_2026_TRANSITIONS: Final[Mapping[tuple[Status, Act], Status]] = {
    **TRANSITIONS,
    # Bulk rows stay pending (aids passed as ids) until the worker finishes them (§3, §8.3).
    **{(Status.PENDING, a): _RESULT[a] for a in (Act.SUCCEED, Act.FAIL, Act.NO_PROXY)},
    # snapshotVideo sets processing again (§9 step 3); overlapping ticks can dispatch a row
    # another tick already took, even after its job finished (§7.3).
    **{(s, Act.DISPATCH): Status.PROCESSING for s in (Status.PROCESSING, *TERMINAL)},
    # Rows finished twice: completed again after the milestone re-ETA (§9 step 7), failed again
    # after ALICLOUD_PROXY_ERR (§9), and any finish over any finish when a batch is enqueued
    # again or an archive row is in both paths (§8.3).
    **{(s, a): _RESULT[a] for s in TERMINAL for a in _FINISH},
    # The aids-as-ids bug sets whatever row has id == aid to processing (§8.3).
    **{(s, Act.STRAY): Status.PROCESSING for s in (*ACTIVE, *TERMINAL)},
}
"""The deployed lifecycle: any write to an existing row; only cleanup deletes (reference §6.4)."""


class IllegalTransition(Exception):
    """A status change that the lifecycle in use does not allow."""

    def __init__(self, status: Status, act: Act) -> None:
        self.status, self.act = status, act
        super().__init__(f"cannot {act.value} a {status.value} schedule")


def advance(
    status: Status, act: Act, table: Mapping[tuple[Status, Act], Status] = TRANSITIONS
) -> Status:
    """The status after ``act`` (reference §3).

    Raises:
        IllegalTransition: if ``table`` has no such transition.
    """
    try:
        return table[status, act]
    except KeyError:
        raise IllegalTransition(status, act) from None


def transitions_for(switches: Switches) -> Mapping[tuple[Status, Act], Status]:
    """The table a run checks against: the deployed one while the aids-as-ids bug is on (§8.3)."""
    return CVSA_2026_TRANSITIONS if switches.bulk_aids_as_ids_bug else TRANSITIONS


def window_delta(status: Status, act: Act, switches: Switches) -> int:
    """The change to the row's window count when ``act`` hits a row in ``status`` (§6.4, §12).

    A status write decrements the window of a row that **was pending** and changes status
    (``setSnapshotStatus``/``bulkSetSnapshotStatus``, §6.4), including an unrelated pending row
    hit by the aids-as-ids bug. Cleanup's delete decrements only with switch
    ``cleanup_decrements`` (design; the deployed code never does, §12, §16.11).
    """
    if status is not Status.PENDING or _RESULT[act] is Status.PENDING:
        return 0
    if act is Act.CLEANUP and not switches.cleanup_decrements:
        return 0
    return -1
