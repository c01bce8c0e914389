"""The schedule state machine and the event-log word tables (reference §3, §6.4, §8.3, §12)."""

from __future__ import annotations

import json
from itertools import product

import pytest

from sim.cvsa.lifecycle import (
    CVSA_2026_TRANSITIONS,
    SCHEDULE_STATUS,
    SNAPSHOT_TYPE,
    TERMINAL,
    TRANSITIONS,
    Act,
    IllegalTransition,
    SnapshotType,
    Status,
    advance,
    transitions_for,
    window_delta,
)
from sim.cvsa.profile import CVSA_2026, DESIGN
from sim.events.log import header_bytes
from sim.events.schema import ENUMS

P, R, C, F, N, B, D = (
    Status.PENDING,
    Status.PROCESSING,
    Status.COMPLETED,
    Status.FAILED,
    Status.NO_PROXY,
    Status.BILI_ERROR,
    Status.DELETED,
)


def test_word_tables_are_declared_for_the_log_header() -> None:
    assert ENUMS["snapshot_type"] is SNAPSHOT_TYPE
    assert SNAPSHOT_TYPE.words == ("new", "milestone", "normal", "archive")
    assert SCHEDULE_STATUS.words == (
        "pending",
        "processing",
        "completed",
        "failed",
        "no_proxy",
        "bili_error",
        "deleted",
    )
    assert tuple(SnapshotType) == SNAPSHOT_TYPE.words
    assert tuple(Status) == SCHEDULE_STATUS.words
    assert SCHEDULE_STATUS.code(Status.BILI_ERROR) == 5
    assert SNAPSHOT_TYPE.word(2) == "normal"
    enums = json.loads(header_bytes([]))["enums"]
    assert enums["schedule_status"] == list(SCHEDULE_STATUS.words)
    assert enums["snapshot_type"] == list(SNAPSHOT_TYPE.words)


def test_design_lifecycle_is_the_notes_diagram() -> None:
    assert dict(TRANSITIONS) == {
        (P, Act.DISPATCH): R,
        (R, Act.SUCCEED): C,
        (R, Act.FAIL): F,
        (R, Act.NO_PROXY): N,
        (R, Act.BILI_ERROR): B,
        (P, Act.CLEANUP): D,
        (R, Act.CLEANUP): D,
    }


def test_advance_and_illegal_transitions() -> None:
    assert advance(P, Act.DISPATCH) is R
    assert advance(R, Act.BILI_ERROR) is B
    with pytest.raises(IllegalTransition, match="cannot succeed a pending schedule") as err:
        advance(P, Act.SUCCEED)
    assert (err.value.status, err.value.act) == (P, Act.SUCCEED)
    with pytest.raises(IllegalTransition, match="cannot cleanup a completed schedule"):
        advance(C, Act.CLEANUP)
    with pytest.raises(IllegalTransition):
        advance(R, Act.STRAY)  # the aids-as-ids bug does not exist in design


def test_deployed_lifecycle_allows_unguarded_writes_but_never_revives_a_row() -> None:
    table = CVSA_2026_TRANSITIONS
    assert advance(P, Act.SUCCEED, table) is C  # a bulk row finished while still pending
    assert advance(C, Act.SUCCEED, table) is C  # completed again after the milestone re-ETA
    assert advance(C, Act.FAIL, table) is F  # a batch enqueued twice
    assert advance(F, Act.STRAY, table) is R  # its id equals an aid of a bulk batch
    illegal = {(s, a) for s, a in product(Status, Act) if (s, a) not in table}
    assert illegal == (
        {(D, a) for a in Act}
        | {(P, Act.BILI_ERROR)}  # the single path always dispatches first
        | {(t, Act.CLEANUP) for t in TERMINAL}  # cleanup only deletes active rows
    )
    assert all(new is not P for new in table.values())  # nothing writes pending after insert
    assert set(TRANSITIONS.items()) <= set(table.items())


def test_transitions_for_follows_the_aids_as_ids_switch() -> None:
    assert transitions_for(DESIGN) is TRANSITIONS
    assert transitions_for(CVSA_2026) is CVSA_2026_TRANSITIONS


@pytest.mark.parametrize(
    ("status", "act", "design", "deployed"),
    [
        (P, Act.DISPATCH, -1, -1),  # pending -> processing releases the reservation (§6.4)
        (P, Act.SUCCEED, -1, -1),  # a bulk row finished from pending
        (P, Act.STRAY, -1, -1),  # an unrelated pending row hit by aids-as-ids
        (P, Act.CLEANUP, -1, 0),  # only design decrements on delete (§12, §16.11)
        (R, Act.CLEANUP, 0, 0),
        (R, Act.SUCCEED, 0, 0),
        (C, Act.FAIL, 0, 0),
    ],
)
def test_window_delta(status: Status, act: Act, design: int, deployed: int) -> None:
    assert window_delta(status, act, DESIGN) == design
    assert window_delta(status, act, CVSA_2026) == deployed
