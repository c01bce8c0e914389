"""The schedule state machine and the event-log word tables (reference §3, §6.4, §8.3, §12)."""

from __future__ import annotations

from itertools import product

import pytest

from sim.cvsa.lifecycle import (
    CVSA_2026_TRANSITIONS,
    TERMINAL,
    TRANSITIONS,
    Act,
    IllegalTransition,
    advance,
    finish_act,
    status_after,
    transitions_for,
    window_delta,
)
from sim.cvsa.profile import CVSA_2026, DESIGN
from sim.cvsa.vocabulary import ScheduleStatus

P, R, C, F, N, B, D = (
    ScheduleStatus.PENDING,
    ScheduleStatus.PROCESSING,
    ScheduleStatus.COMPLETED,
    ScheduleStatus.FAILED,
    ScheduleStatus.NO_PROXY,
    ScheduleStatus.BILI_ERROR,
    ScheduleStatus.DELETED,
)


def test_status_written_by_each_act() -> None:
    assert [status_after(a) for a in Act] == [R, C, F, N, B, D, R]
    assert [finish_act(s) for s in (C, F, N, B)] == [
        Act.SUCCEED,
        Act.FAIL,
        Act.NO_PROXY,
        Act.BILI_ERROR,
    ]
    with pytest.raises(KeyError):
        finish_act(P)  # pending is no final status


def test_design_lifecycle_is_the_notes_diagram() -> None:
    assert dict(TRANSITIONS) == {
        (P, Act.DISPATCH): R,
        (R, Act.SUCCEED): C,
        (R, Act.FAIL): F,
        (R, Act.NO_PROXY): N,
        (R, Act.BILI_ERROR): B,
        (P, Act.CLEANUP): D,
        (R, Act.CLEANUP): D,
        (C, Act.FAIL): F,  # §9 step 7: the re-ETA throws after the row completed
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
    illegal = {(s, a) for s, a in product(ScheduleStatus, Act) if (s, a) not in table}
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
def test_window_delta(status: ScheduleStatus, act: Act, design: int, deployed: int) -> None:
    assert window_delta(status, act, DESIGN) == design
    assert window_delta(status, act, CVSA_2026) == deployed
